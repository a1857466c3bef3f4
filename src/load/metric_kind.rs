//! The metric kind of each of the load's HPAs: round-robin over CPU,
//! memory, a Pods metric and an External metric, so an HPA's kind follows
//! from its name alone (what the measuring side reads it from).

/// The metric kinds, assigned round-robin to the HPAs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MetricKind {
    Cpu,
    Memory,
    PodsCustom,
    External,
}

impl MetricKind {
    /// The metric of the load's HPA `key` (`load-N/wI`, see [`super::workload::targets`]),
    /// as reports name it: `cpu`, `memory`, `pods` or `external`.
    pub(super) fn name_of_key(key: &str) -> Option<&'static str> {
        let (_, name) = key.split_once('/')?;
        let index: usize = name.strip_prefix('w')?.parse().ok()?;
        Some(Self::of(index).name())
    }

    /// How reports name the kind.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Memory => "memory",
            Self::PodsCustom => "pods",
            Self::External => "external",
        }
    }

    pub(super) fn of(index: usize) -> Self {
        match index % 4 {
            0 => Self::Cpu,
            1 => Self::Memory,
            2 => Self::PodsCustom,
            _ => Self::External,
        }
    }

    /// The HPA's `metrics` entry for this kind (`name`: its External
    /// series' `queue` label).
    pub(super) fn spec(self, name: &str) -> serde_json::Value {
        use serde_json::json;
        match self {
            Self::Cpu => json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}),
            Self::Memory => json!({"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "64Mi"}}}),
            Self::PodsCustom => json!({"type": "Pods", "pods": {
                "metric": {"name": "requests_per_second"},
                "target": {"type": "AverageValue", "averageValue": "10"}}}),
            Self::External => json!({"type": "External", "external": {
                "metric": {"name": "queue_depth", "selector": {"matchLabels": {"queue": name}}},
                "target": {"type": "AverageValue", "averageValue": "5"}}}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_kinds_are_mixed_round_robin() {
        assert_eq!(MetricKind::name_of_key("load-3/w307"), Some("external"));
        assert_eq!(MetricKind::name_of_key("load-0/w4"), Some("cpu"));
        assert_eq!(MetricKind::name_of_key("default/web"), None);
        let kinds: Vec<MetricKind> = (0..8).map(MetricKind::of).collect();
        assert_eq!(kinds[0], MetricKind::Cpu);
        assert_eq!(kinds[3], MetricKind::External);
        assert_eq!(kinds[4], MetricKind::Cpu);
    }
}
