//! How the controller's memory is measured: the allocator's totals, and
//! the [`Meter`] each structure measures its [`Footprint`] with. A leaf:
//! the structures measure themselves through it, and `memory_report` puts
//! their footprints together (`/debug/memory`, the load report's breakdown).
//!
//! A structure's bytes are measured, not guessed: jemalloc counts the bytes
//! each thread allocates, so the bytes a copy of an entry allocates are the
//! bytes that entry holds, size classes included. Each structure copies its
//! entries one at a time (never a whole cache at once) and adds what a copy
//! does not allocate: the hash tables' slots and shared values once. Where
//! the binary's allocator is not jemalloc (a library user's, the unit
//! tests') nothing can be measured and the report says so.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The allocator's own totals (jemalloc's `stats.*`), in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocatorStats {
    /// Bytes the program holds (`stats.allocated`).
    pub allocated: u64,
    /// Bytes in the pages those allocations occupy (`stats.active`).
    pub active: u64,
    /// Bytes of the allocator's own bookkeeping (`stats.metadata`).
    pub metadata: u64,
    /// Bytes in physical memory (`stats.resident`): what RSS counts of the
    /// heap, freed pages not yet returned included.
    pub resident: u64,
    /// Bytes mapped (`stats.mapped`).
    pub mapped: u64,
    /// Bytes unmapped but kept as address space (`stats.retained`).
    pub retained: u64,
}

/// The allocator's totals now; `None` where jemalloc is not the allocator.
pub fn allocator_stats() -> Option<AllocatorStats> {
    imp::allocator_stats()
}

/// jemalloc's own statistics as text (`malloc_stats_print`: per size
/// class, how many regions and slabs are in use, and how full the slabs
/// are): where the allocator's overhead sits. `None` where jemalloc is not
/// the allocator.
pub fn allocator_report() -> Option<String> {
    imp::allocator_report()
}

/// Measures what values hold on the heap, through the calling thread's
/// allocation counter. Bound to the thread that made it (not `Send`): use
/// it in one synchronous stretch, with no `.await` in between.
#[derive(Debug)]
pub struct Meter {
    counters: imp::Counters,
}

impl Meter {
    /// A meter on this thread; `None` where jemalloc is not the allocator.
    pub fn on_this_thread() -> Option<Self> {
        let counters = imp::Counters::on_this_thread()?;
        let before = counters.allocated();
        let probe = std::hint::black_box(Vec::<u8>::with_capacity(64));
        let counted = counters.allocated() > before;
        drop(probe);
        counted.then_some(Self { counters })
    }

    /// Bytes this thread has allocated, less those it has freed, since it
    /// started (what it holds, when nothing it allocates is freed elsewhere).
    pub fn net(&self) -> i64 {
        let held = i128::from(self.counters.allocated()) - i128::from(self.counters.deallocated());
        i64::try_from(held).unwrap_or(i64::MAX)
    }

    /// The heap bytes `value` holds: what a copy of it allocates. Shared
    /// parts (`Arc`) are not copied, so not counted: count them once where
    /// they are owned.
    pub fn heap<T: Clone>(&self, value: &T) -> u64 {
        let before = self.counters.allocated();
        let copy = std::hint::black_box(value.clone());
        let bytes = self.counters.allocated().saturating_sub(before);
        drop(copy);
        bytes
    }

    /// The bytes of an `Arc<T>` of `value`: its allocation (the value and
    /// two counters) and what the value holds.
    pub fn arc<T: Clone>(&self, value: &T) -> u64 {
        let before = self.counters.allocated();
        let copy = std::hint::black_box(Arc::new(value.clone()));
        let bytes = self.counters.allocated().saturating_sub(before);
        drop(copy);
        bytes
    }

    /// The bytes one allocation of `size` bytes takes (its size class).
    pub fn block(&self, size: usize) -> u64 {
        if size == 0 {
            return 0;
        }
        let before = self.counters.allocated();
        let block = std::hint::black_box(Vec::<u8>::with_capacity(size));
        let bytes = self.counters.allocated().saturating_sub(before);
        drop(block);
        bytes
    }

    /// The bytes of a `Vec<T>`'s buffer (its capacity, not its length).
    pub fn buffer<T>(&self, capacity: usize) -> u64 {
        self.block(capacity.saturating_mul(std::mem::size_of::<T>()))
    }

    /// The bytes of an `Arc<str>` of `text`: two counters and the text.
    pub fn arc_str(&self, text: &str) -> u64 {
        self.block(2 * std::mem::size_of::<usize>() + text.len())
    }
}

/// The slots of a hash table (std's and foldhash's maps and sets: both
/// hashbrown) of `capacity` entries of `entry` bytes each: the buckets and
/// their control bytes, allocated together.
pub fn table_bytes(capacity: usize, entry: usize) -> u64 {
    if capacity == 0 {
        return 0;
    }
    // hashbrown keeps 7/8 of its buckets usable (all but one below 8).
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity / 7 * 8).next_power_of_two()
    };
    let bytes = buckets * entry + buckets + 16;
    u64::try_from(bytes).unwrap_or(u64::MAX)
}

/// [`table_bytes`] for a table of `len` entries grown by inserts (its
/// capacity unknown): the smallest table holding them.
pub fn table_bytes_for_len(len: usize, entry: usize) -> u64 {
    if len == 0 {
        return 0;
    }
    let buckets = if len < 8 {
        (len + 1).next_power_of_two()
    } else {
        (len * 8).div_ceil(7).next_power_of_two()
    };
    let capacity = if buckets < 8 {
        buckets - 1
    } else {
        buckets / 8 * 7
    };
    table_bytes(capacity, entry)
}

/// What one structure holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Footprint {
    /// The structure, as the report names it.
    pub structure: Cow<'static, str>,
    /// Its entries (HPAs, pods, keys: what it is keyed by).
    pub entries: usize,
    /// The heap bytes it holds.
    pub bytes: u64,
}

impl Footprint {
    /// A structure with nothing counted yet.
    pub fn new(structure: &'static str) -> Self {
        Self {
            structure: Cow::Borrowed(structure),
            entries: 0,
            bytes: 0,
        }
    }
}

#[cfg(unix)]
mod imp {
    use tikv_jemalloc_ctl::{epoch, stats, thread};

    use super::AllocatorStats;

    pub(super) fn allocator_report() -> Option<String> {
        allocator_stats()?;
        let mut text = Vec::new();
        let mut options = tikv_jemalloc_ctl::stats_print::Options::default();
        options.skip_constants = true;
        options.skip_per_arena = true;
        options.skip_mutex_statistics = true;
        tikv_jemalloc_ctl::stats_print::stats_print(&mut text, options).ok()?;
        Some(String::from_utf8_lossy(&text).into_owned())
    }

    pub(super) fn allocator_stats() -> Option<AllocatorStats> {
        // The totals are cached until the epoch advances.
        epoch::advance().ok()?;
        let read = |r: Result<usize, tikv_jemalloc_ctl::Error>| {
            r.ok().map(|v| u64::try_from(v).unwrap_or(u64::MAX))
        };
        let stats = AllocatorStats {
            allocated: read(stats::allocated::read())?,
            active: read(stats::active::read())?,
            metadata: read(stats::metadata::read())?,
            resident: read(stats::resident::read())?,
            mapped: read(stats::mapped::read())?,
            retained: read(stats::retained::read())?,
        };
        // Linked but not the allocator: it holds next to nothing.
        (stats.allocated > 0 && Counters::on_this_thread().is_some_and(|c| c.counts()))
            .then_some(stats)
    }

    /// This thread's allocation counters.
    pub(super) struct Counters {
        allocated: thread::ThreadLocal<u64>,
        deallocated: thread::ThreadLocal<u64>,
    }

    impl std::fmt::Debug for Counters {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Counters")
                .field("allocated", &self.allocated())
                .field("deallocated", &self.deallocated())
                .finish()
        }
    }

    impl Counters {
        pub(super) fn on_this_thread() -> Option<Self> {
            Some(Self {
                allocated: thread::allocatedp::read().ok()?,
                deallocated: thread::deallocatedp::read().ok()?,
            })
        }

        pub(super) fn allocated(&self) -> u64 {
            self.allocated.get()
        }

        pub(super) fn deallocated(&self) -> u64 {
            self.deallocated.get()
        }

        /// Whether jemalloc counts this thread's allocations (it is the
        /// allocator).
        fn counts(&self) -> bool {
            let before = self.allocated();
            let probe = std::hint::black_box(Vec::<u8>::with_capacity(64));
            let counted = self.allocated() > before;
            drop(probe);
            counted
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use super::AllocatorStats;

    pub(super) fn allocator_report() -> Option<String> {
        None
    }

    pub(super) fn allocator_stats() -> Option<AllocatorStats> {
        None
    }

    #[derive(Debug)]
    pub(super) struct Counters;

    impl Counters {
        pub(super) fn on_this_thread() -> Option<Self> {
            None
        }
        pub(super) fn allocated(&self) -> u64 {
            0
        }
        pub(super) fn deallocated(&self) -> u64 {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_of_n_entries_has_room_for_them() {
        assert_eq!(table_bytes(0, 8), 0);
        // 3 usable of 4 buckets; 7 of 8; 14 of 16.
        assert_eq!(table_bytes(3, 8), 4 * 8 + 4 + 16);
        assert_eq!(table_bytes(7, 8), 8 * 8 + 8 + 16);
        assert_eq!(table_bytes(14, 8), 16 * 8 + 16 + 16);
        assert_eq!(table_bytes_for_len(3, 8), table_bytes(3, 8));
        assert_eq!(table_bytes_for_len(8, 8), table_bytes(14, 8));
        assert_eq!(table_bytes_for_len(100_000, 1), table_bytes(114_688, 1));
    }
}
