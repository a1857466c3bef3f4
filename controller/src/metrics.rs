//! The controller's Prometheus metrics.
//!
//! Names and labels are upstream's (`pkg/controller/podautoscaler/monitor`,
//! subsystem `horizontal_pod_autoscaler_controller`) so that dashboards built
//! for kube-controller-manager work unchanged; the queue metrics follow
//! client-go's `workqueue_*` names with `name="horizontalpodautoscaler"`.
//! prometheus-client appends `_total` to counter names itself.

use std::sync::Arc;

use prometheus_client::encoding::{EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The `action` and `error` labels: the core's, which decides them
/// (`hpa_core::decide::{ActionLabel, ErrorLabel}`), the one definition.
pub use hpa_core::decide::{ActionLabel, ErrorLabel};

/// Labels of the reconciliation metrics.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReconcileLabels {
    pub action: ActionLabel,
    pub error: ErrorLabel,
}

// By hand: the label enums are the core's, which knows nothing of
// prometheus-client (so no derive on their fields); the same pairs in the
// same order as the derive would write.
impl EncodeLabelSet for ReconcileLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder<'_>) -> Result<(), std::fmt::Error> {
        [
            ("action", self.action.as_str()),
            ("error", self.error.as_str()),
        ]
        .encode(encoder)
    }
}

/// Labels of the metric computation metrics; `metric_type` is the spec's
/// source type (`Resource`, `Pods`, `Object`, `External`, `ContainerResource`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ComputationLabels {
    pub action: ActionLabel,
    pub error: ErrorLabel,
    pub metric_type: String,
}

impl EncodeLabelSet for ComputationLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder<'_>) -> Result<(), std::fmt::Error> {
        [
            ("action", self.action.as_str()),
            ("error", self.error.as_str()),
            ("metric_type", self.metric_type.as_str()),
        ]
        .encode(encoder)
    }
}

/// Labels of the per-HPA desired replicas gauge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct HpaLabels {
    pub namespace: String,
    pub hpa_name: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Upstream's buckets: 1 ms doubling, 15 buckets.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Queue metrics, registered with client-go's names.
#[derive(Debug, Clone)]
pub struct QueueMetrics {
    pub depth: Gauge,
    pub adds: Counter,
    pub retries: Counter,
    pub queue_duration: Histogram,
    pub work_duration: Histogram,
}

impl Default for QueueMetrics {
    fn default() -> Self {
        Self {
            depth: Gauge::default(),
            adds: Counter::default(),
            retries: Counter::default(),
            queue_duration: Histogram::new(exponential_buckets(1e-8, 10.0, 10)),
            work_duration: Histogram::new(exponential_buckets(1e-8, 10.0, 10)),
        }
    }
}

/// All metrics of the controller, registered into one registry.
#[derive(Debug, Clone)]
pub struct ControllerMetrics {
    pub reconciliations: Family<ReconcileLabels, Counter>,
    pub reconciliation_duration: HistogramFamily<ReconcileLabels>,
    pub metric_computations: Family<ComputationLabels, Counter>,
    pub metric_computation_duration: HistogramFamily<ComputationLabels>,
    pub num_hpas: Gauge,
    pub desired_replicas: Family<HpaLabels, Gauge>,
    pub queue: QueueMetrics,
    pub is_leader: Gauge,
    registry: Arc<Registry>,
}

impl Default for ControllerMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ControllerMetrics {
    /// Fresh metrics in a fresh registry.
    pub fn new() -> Self {
        Self::register(Registry::default())
    }

    /// Fresh metrics registered into `registry`, which the caller built
    /// (and may have registered its own metrics in); `/metrics` serves it
    /// whole.
    pub fn register(mut registry: Registry) -> Self {
        let reconciliations = Family::<ReconcileLabels, Counter>::default();
        let reconciliation_duration: HistogramFamily<ReconcileLabels> =
            Family::new_with_constructor(duration_histogram);
        let metric_computations = Family::<ComputationLabels, Counter>::default();
        let metric_computation_duration: HistogramFamily<ComputationLabels> =
            Family::new_with_constructor(duration_histogram);
        let num_hpas = Gauge::default();
        let desired_replicas = Family::<HpaLabels, Gauge>::default();
        let queue = QueueMetrics::default();
        let is_leader = Gauge::default();

        {
            let hpa = registry.sub_registry_with_prefix("horizontal_pod_autoscaler_controller");
            hpa.register(
                "reconciliations",
                "Number of reconciliations of HPA controller. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. Note that if both spec and internal errors happen during a reconciliation, the first one to occur is reported in `error` label",
                reconciliations.clone(),
            );
            hpa.register(
                "reconciliation_duration_seconds",
                "The time(seconds) that the HPA controller takes to reconcile once. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. Note that if both spec and internal errors happen during a reconciliation, the first one to occur is reported in `error` label",
                reconciliation_duration.clone(),
            );
            hpa.register(
                "metric_computation",
                "Number of metric computations. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type",
                metric_computations.clone(),
            );
            hpa.register(
                "metric_computation_duration_seconds",
                "The time(seconds) that the HPA controller takes to calculate one metric. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. The label 'error' should be either 'spec', 'internal', or 'none'. The label 'metric_type' corresponds to HPA.spec.metrics[*].type",
                metric_computation_duration.clone(),
            );
            hpa.register(
                "num_horizontal_pod_autoscalers",
                "Current number of controlled HPA objects",
                num_hpas.clone(),
            );
            hpa.register(
                "desired_replicas",
                "Current desired replica count for HPA objects",
                desired_replicas.clone(),
            );
        }
        {
            let wq = registry
                .sub_registry_with_prefix("workqueue")
                .sub_registry_with_label(("name".into(), "horizontalpodautoscaler".into()));
            wq.register("depth", "Current depth of workqueue", queue.depth.clone());
            wq.register(
                "adds",
                "Total number of adds handled by workqueue",
                queue.adds.clone(),
            );
            wq.register(
                "retries",
                "Total number of retries handled by workqueue",
                queue.retries.clone(),
            );
            wq.register(
                "queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                queue.queue_duration.clone(),
            );
            wq.register(
                "work_duration_seconds",
                "How long in seconds processing an item from workqueue takes",
                queue.work_duration.clone(),
            );
        }
        registry.register(
            "hpa_harness_leader",
            "1 while this replica holds the leader lease",
            is_leader.clone(),
        );
        Self {
            reconciliations,
            reconciliation_duration,
            metric_computations,
            metric_computation_duration,
            num_hpas,
            desired_replicas,
            queue,
            is_leader,
            registry: Arc::new(registry),
        }
    }

    /// Counts one reconciliation and its duration.
    pub fn record_reconciliation(&self, action: ActionLabel, error: ErrorLabel, seconds: f64) {
        let labels = ReconcileLabels { action, error };
        self.reconciliations.get_or_create(&labels).inc();
        self.reconciliation_duration
            .get_or_create(&labels)
            .observe(seconds);
    }

    /// Counts one metric computation and its duration.
    pub fn record_metric_computation(
        &self,
        action: ActionLabel,
        error: ErrorLabel,
        metric_type: &str,
        seconds: f64,
    ) {
        let labels = ComputationLabels {
            action,
            error,
            metric_type: metric_type.to_string(),
        };
        self.metric_computations.get_or_create(&labels).inc();
        self.metric_computation_duration
            .get_or_create(&labels)
            .observe(seconds);
    }

    /// The registry, in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The value of one sample in Prometheus text, e.g.
/// `horizontal_pod_autoscaler_controller_reconciliations_total{action="scale_up",error="none"}`.
/// Labels may be given in any order; `None` if no such sample exists.
pub fn sample_value(text: &str, sample: &str) -> Option<f64> {
    let (want_name, want_labels) = split_sample(sample.trim());
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (name, labels) = split_sample(series);
            (name == want_name && labels == want_labels)
                .then(|| value.trim().parse::<f64>().ok())
                .flatten()
        })
}

fn split_sample(series: &str) -> (&str, Vec<(String, String)>) {
    let Some((name, rest)) = series.split_once('{') else {
        return (series, Vec::new());
    };
    let body = rest.trim_end_matches('}');
    let mut labels: Vec<(String, String)> = body
        .split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        })
        .collect();
    labels.sort();
    (name, labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_are_upstreams() {
        let metrics = ControllerMetrics::new();
        metrics.record_reconciliation(ActionLabel::ScaleUp, ErrorLabel::None, 0.002);
        metrics.record_metric_computation(
            ActionLabel::ScaleUp,
            ErrorLabel::None,
            "Resource",
            0.001,
        );
        metrics.queue.depth.set(3);
        let text = metrics.encode();
        for name in [
            "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"none\"} 1",
            "horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_count{action=\"scale_up\",error=\"none\"} 1",
            "horizontal_pod_autoscaler_controller_metric_computation_total{action=\"scale_up\",error=\"none\",metric_type=\"Resource\"} 1",
            "horizontal_pod_autoscaler_controller_metric_computation_duration_seconds_count{action=\"scale_up\",error=\"none\",metric_type=\"Resource\"} 1",
            "workqueue_depth{name=\"horizontalpodautoscaler\"} 3",
        ] {
            assert!(text.contains(name), "missing {name} in\n{text}");
        }
    }

    /// prometheus-client ends every HELP text with a period itself: the
    /// texts given must not, or `/metrics` shows "objects..".
    #[test]
    fn help_texts_end_in_one_period() {
        let metrics = ControllerMetrics::new();
        metrics.record_reconciliation(ActionLabel::None, ErrorLabel::None, 0.001);
        let text = metrics.encode();
        let helps: Vec<&str> = text.lines().filter(|l| l.starts_with("# HELP ")).collect();
        assert!(helps.len() >= 9, "{text}");
        for help in helps {
            assert!(help.ends_with('.') && !help.ends_with(".."), "{help}");
        }
        assert!(
            text.contains("# HELP horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers Current number of controlled HPA objects.\n"),
            "{text}"
        );
    }

    #[test]
    fn metrics_register_into_the_callers_registry_beside_its_own() {
        let mut registry = Registry::default();
        let own = Counter::<u64>::default();
        registry.register("callers_own", "A metric of the caller", own.clone());
        own.inc();
        let metrics = ControllerMetrics::register(registry);
        metrics.record_reconciliation(ActionLabel::None, ErrorLabel::None, 0.001);
        let text = metrics.encode();
        assert_eq!(sample_value(&text, "callers_own_total"), Some(1.0));
        assert_eq!(
            sample_value(
                &text,
                "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"none\"}"
            ),
            Some(1.0)
        );
    }

    #[test]
    fn a_sample_is_found_whatever_the_label_order() {
        let metrics = ControllerMetrics::new();
        metrics.record_reconciliation(ActionLabel::ScaleDown, ErrorLabel::Internal, 0.5);
        metrics.record_reconciliation(ActionLabel::ScaleDown, ErrorLabel::Internal, 0.5);
        let text = metrics.encode();
        assert_eq!(
            sample_value(
                &text,
                "horizontal_pod_autoscaler_controller_reconciliations_total{error=\"internal\",action=\"scale_down\"}"
            ),
            Some(2.0)
        );
        assert_eq!(
            sample_value(
                &text,
                "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"none\"}"
            ),
            None
        );
    }
}
