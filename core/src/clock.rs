//! Where "now" comes from.
//!
//! The decision functions of this crate take `now` as an argument; the async
//! shells (controller, simulated cluster, fake metrics server) ask a [`Clock`]
//! for it. Production uses [`SystemClock`]; scenarios and load runs share one
//! [`VirtualClock`] that the harness moves forward, so "wait five minutes"
//! costs no wall time.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use jiff::{SignedDuration, Timestamp};

/// A source of the current instant.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to. Clones share the same instant.
///
/// Kept as nanoseconds since the Unix epoch in an atomic so that reading it
/// from many tasks is cheap and never blocks.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    nanos: Arc<AtomicI64>,
}

impl VirtualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            nanos: Arc::new(AtomicI64::new(to_nanos(start))),
        }
    }

    /// Moves the clock forward (or backward, for a negative duration).
    pub fn advance(&self, by: SignedDuration) {
        let delta = i64::try_from(by.as_nanos()).unwrap_or(if by.is_negative() {
            i64::MIN
        } else {
            i64::MAX
        });
        self.nanos.fetch_add(delta, Ordering::SeqCst);
    }

    /// Puts the clock at `at`.
    pub fn set(&self, at: Timestamp) {
        self.nanos.store(to_nanos(at), Ordering::SeqCst);
    }
}

impl Default for VirtualClock {
    /// A clock at 2026-01-01T00:00:00Z: a fixed, recognisable start so that
    /// runs are reproducible.
    fn default() -> Self {
        Self::new(Timestamp::constant(1_767_225_600, 0))
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Timestamp {
        let nanos = self.nanos.load(Ordering::SeqCst);
        Timestamp::from_nanosecond(i128::from(nanos)).unwrap_or(Timestamp::UNIX_EPOCH)
    }
}

fn to_nanos(at: Timestamp) -> i64 {
    i64::try_from(at.as_nanosecond()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_clock_moves_only_when_advanced_and_clones_share_it() {
        let clock = VirtualClock::default();
        let other = clock.clone();
        let start = clock.now();
        assert_eq!(clock.now(), start);
        other.advance(SignedDuration::from_secs(300));
        assert_eq!(clock.now(), start + SignedDuration::from_secs(300));
    }
}
