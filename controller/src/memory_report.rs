//! Where the controller's memory goes (`/debug/memory`, and the load
//! report's breakdown): each structure's [`Footprint`], measured with one
//! [`Meter`], and the allocator's totals. A module apart from `memory`:
//! it walks the whole controller (the context, the queue, the metrics),
//! and the structures it measures import `memory`, so one module would
//! tie every structure to the whole controller.

use std::sync::Arc;

use prometheus_client::metrics::gauge::Gauge;
use serde::{Deserialize, Serialize};

use crate::memory::{AllocatorStats, Footprint, Meter, allocator_stats, table_bytes_for_len};

/// The `/debug/memory` document: each structure's bytes and the
/// allocator's totals, from which the rest follows (what no structure
/// holds: buffers, tasks, the runtime; what the allocator holds beyond the
/// program's bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryReport {
    /// HPAs in the cache.
    pub hpas: usize,
    /// Each structure, largest first; empty when nothing could be measured.
    pub structures: Vec<Footprint>,
    /// The structures' bytes added up.
    pub structures_bytes: u64,
    /// The allocator's totals, when it is jemalloc.
    pub allocator: Option<AllocatorStats>,
}

impl MemoryReport {
    /// A report of `structures` (sorted here) and the allocator's totals.
    pub fn new(hpas: usize, mut structures: Vec<Footprint>) -> Self {
        structures.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.structure.cmp(&b.structure)));
        Self {
            hpas,
            structures_bytes: structures.iter().map(|s| s.bytes).sum(),
            structures,
            allocator: allocator_stats(),
        }
    }

    /// The structures' bytes per HPA.
    pub fn bytes_per_hpa(&self) -> Option<f64> {
        (self.hpas > 0).then(|| self.structures_bytes as f64 / self.hpas as f64)
    }

    /// A table for people: each structure, its share per HPA, and the
    /// allocator's totals.
    pub fn table(&self) -> String {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        let per = |b: u64| {
            if self.hpas == 0 {
                "-".to_string()
            } else {
                format!("{:.0}", b as f64 / self.hpas as f64)
            }
        };
        let mut out = format!(
            "{:<34} {:>10} {:>10} {:>10}\n",
            "structure", "entries", "MiB", "bytes/HPA"
        );
        for s in &self.structures {
            out.push_str(&format!(
                "{:<34} {:>10} {:>10.1} {:>10}\n",
                s.structure,
                s.entries,
                mib(s.bytes),
                per(s.bytes)
            ));
        }
        out.push_str(&format!(
            "{:<34} {:>10} {:>10.1} {:>10}\n",
            "structures, in all",
            self.hpas,
            mib(self.structures_bytes),
            per(self.structures_bytes)
        ));
        if let Some(a) = &self.allocator {
            let rows = [
                (
                    "rest of the heap (buffers, tasks)",
                    a.allocated.saturating_sub(self.structures_bytes),
                ),
                ("allocated (jemalloc)", a.allocated),
                (
                    "allocator overhead (resident - allocated)",
                    a.resident.saturating_sub(a.allocated),
                ),
                ("resident (jemalloc)", a.resident),
            ];
            for (name, bytes) in rows {
                out.push_str(&format!(
                    "{:<34} {:>10} {:>10.1} {:>10}\n",
                    name,
                    "",
                    mib(bytes),
                    per(bytes)
                ));
            }
        }
        out
    }
}

/// Makes a [`MemoryReport`] on demand (what `/debug/memory` serves); each
/// call measures on the thread it runs on.
#[derive(Clone)]
pub struct MemorySource(Arc<dyn Fn() -> Option<MemoryReport> + Send + Sync>);

impl MemorySource {
    /// A source of reports on the controller of `ctx` and `queue`.
    pub fn new(ctx: crate::Context, queue: crate::queue::WorkQueue<String>) -> Self {
        Self(Arc::new(move || {
            Meter::on_this_thread().map(|meter| measure(&ctx, &queue, &meter))
        }))
    }

    /// A report now; `None` where jemalloc is not the allocator.
    pub fn report(&self) -> Option<MemoryReport> {
        (self.0)()
    }
}

impl std::fmt::Debug for MemorySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemorySource")
    }
}

/// The controller's structures as `meter` measures them, and the
/// allocator's totals: what [`crate::ControllerHandle::memory_report`]
/// and `/debug/memory` give. `queue` is the controller's work queue.
pub fn measure(
    ctx: &crate::Context,
    queue: &crate::queue::WorkQueue<String>,
    meter: &Meter,
) -> MemoryReport {
    let keys = ctx.hpas.keys();
    // The per-HPA gauge: its label set's two texts and its shared counter,
    // in the family's table.
    let mut gauges = Footprint::new("metrics (desired replicas per HPA)");
    for key in &keys {
        let (namespace, name) = crate::keys::split_key(key).unwrap_or_default();
        let labels = crate::metrics::HpaLabels {
            namespace: namespace.to_owned(),
            hpa_name: name.to_owned(),
        };
        if ctx.metrics.desired_replicas.get(&labels).is_some() {
            gauges.entries += 1;
            gauges.bytes += meter.heap(&labels)
                + meter.block(2 * std::mem::size_of::<usize>() + std::mem::size_of::<i64>());
        }
    }
    gauges.bytes += table_bytes_for_len(
        gauges.entries,
        std::mem::size_of::<(crate::metrics::HpaLabels, Gauge)>(),
    );
    let cached = |key: &str, observed: &Arc<crate::hpa_cache::CachedHpa>| {
        ctx.hpas
            .get(key)
            .is_some_and(|current| Arc::ptr_eq(&current, observed))
    };
    let mut structures = vec![
        ctx.hpas.footprint(meter),
        ctx.pod_index.footprint(meter),
        ctx.history.footprint(meter),
        ctx.decisions.footprint(meter, cached),
        ctx.selectors.footprint(meter),
        ctx.consistency.footprint(meter),
        ctx.recorder.footprint(meter),
        queue.footprint(meter),
        gauges,
    ];
    if let Some(scales) = &ctx.deployments {
        structures.push(scales.footprint(meter));
    }
    structures.extend(ctx.metrics_client.footprint(meter));
    MemoryReport::new(keys.len(), structures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_lists_its_largest_structures_first_and_adds_them_up() {
        let report = MemoryReport::new(
            10,
            vec![
                Footprint {
                    entries: 10,
                    bytes: 100,
                    ..Footprint::new("small")
                },
                Footprint {
                    entries: 10,
                    bytes: 1_000,
                    ..Footprint::new("large")
                },
            ],
        );
        assert_eq!(report.structures[0].structure, "large");
        assert_eq!(report.structures_bytes, 1_100);
        assert_eq!(report.bytes_per_hpa(), Some(110.0));
        assert!(
            report.table().contains("structures, in all"),
            "{}",
            report.table()
        );
    }
}
