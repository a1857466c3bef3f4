//! What each trigger contributes to the HPA: its metric name (as KEDA's
//! scaler builds it), target, metric type and activation threshold.
//!
//! Only the scalers named in [`SUPPORTED`] are modelled; their value comes
//! from the scenario (`the trigger ... reports`), so only the spec side of
//! each scaler matters here: which metadata field is the target, which the
//! activation, and how the metric is named.

use super::scaled_object::Trigger;

/// Trigger types whose metric spec is modelled.
pub const SUPPORTED: &[&str] = &[
    "rabbitmq",
    "prometheus",
    "kafka",
    "cron",
    "cpu",
    "memory",
    "metrics-api",
    "kubernetes-workload",
];

/// Why a trigger cannot become a metric.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScalerError {
    #[error("trigger {index} ({kind}): type {kind:?} is not modelled (modelled: {})", SUPPORTED.join(", "))]
    Unsupported { index: usize, kind: String },
    #[error("trigger {index} ({kind}): metadata.{field} is missing")]
    Missing {
        index: usize,
        kind: String,
        field: &'static str,
    },
    #[error("trigger {index} ({kind}): metadata.{field} {value:?} is not a number")]
    NotANumber {
        index: usize,
        kind: String,
        field: &'static str,
        value: String,
    },
    #[error("trigger {index} ({kind}): metricType {0:?} {reason}", .metric_type)]
    MetricType {
        index: usize,
        kind: String,
        metric_type: String,
        reason: &'static str,
    },
}

/// The HPA target of a metric.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// `AverageValue` (per pod), as a Kubernetes quantity.
    AverageValue(String),
    /// `Value` (in total), as a Kubernetes quantity.
    Value(String),
    /// `Utilization` in percent (cpu and memory only).
    Utilization(i32),
}

/// The metric one trigger puts in the HPA.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerMetric {
    /// Position in `spec.triggers` (the `sN-` of the name).
    pub index: usize,
    /// The trigger's `name`, if any (formulas use it).
    pub trigger_name: Option<String>,
    pub kind: String,
    /// External metric name, or the resource (`cpu`, `memory`).
    pub metric: String,
    /// Whether this is a Resource metric (cpu, memory) the HPA reads from
    /// metrics.k8s.io, not KEDA's adapter.
    pub resource: bool,
    pub target: Target,
    /// The target as a number (fallback scales it).
    pub target_value: f64,
    /// The trigger is active when its value is above this.
    pub activation: f64,
    /// A cpu/memory trigger's `containerName`: a ContainerResource metric.
    pub container: Option<String>,
}

impl TriggerMetric {
    /// Names a scenario may call the trigger by: its name, its metric name,
    /// its type.
    pub fn answers_to(&self, name: &str) -> bool {
        self.trigger_name.as_deref() == Some(name) || self.metric == name || self.kind == name
    }
}

/// KEDA's `GenerateMetricNameWithIndex`.
pub fn metric_name_with_index(index: usize, name: &str) -> String {
    format!("s{index}-{name}")
}

/// KEDA's `util.NormalizeString`: characters a metric name cannot hold
/// become dashes.
pub fn normalize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if matches!(c, '/' | '.' | ':' | '%' | '(' | ')') {
                '-'
            } else {
                c
            }
        })
        .collect()
}

/// Go's `url.QueryEscape`.
fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The cron scaler's shape of a schedule in a metric name.
fn cron_shape(s: &str) -> String {
    s.replace(' ', "")
        .replace('*', "x")
        .replace('/', "sl")
        .replace('?', "qm")
}

/// A quantity as KEDA writes a float target (`GetMetricTargetMili`): whole
/// numbers plainly, others in milli-units.
pub fn milli_quantity(v: f64) -> String {
    metric_quantity(v)
}

/// A float as KEDA (from v2.20, kedacore/keda#7534) turns it into a
/// quantity, for metric values and targets alike: `fmt.Sprintf("%.3f", v)`
/// parsed as a quantity, so a huge value stays huge (`1e20` is `100E`)
/// where the older `int64(v*1000)` wrapped; NaN and infinities are 0.
/// Canonical form, as the API serializes it.
pub fn metric_quantity(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_owned();
    }
    let text = format!("{v:.3}");
    hpa_core::quantity::Quantity::parse(&text).map_or(text, |q| q.to_string())
}

/// Go's `int64(f)` on amd64: NaN and values out of range become
/// `math.MinInt64` (where Rust's `as` would saturate).
pub fn go_float_to_i64(f: f64) -> i64 {
    // 2^63 as f64 is exact; anything at or above it, or NaN, is out of range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        // In range: truncation toward zero, as Go's conversion does.
        f.trunc() as i64
    }
}

/// The metric of trigger `index` of a ScaledObject in the `default`
/// namespace without scalingModifiers.
pub fn trigger_metric(index: usize, t: &Trigger) -> Result<TriggerMetric, ScalerError> {
    trigger_metric_in(index, t, "default", false)
}

/// The metric of trigger `index` of a ScaledObject in `namespace` (the
/// `kubernetes-workload` scaler names its metric after it).
/// `as_metric_source`: the ScaledObject has scalingModifiers, so KEDA builds
/// its scalers as mere sources for the formula and some targets become
/// optional (`AsMetricSource` in `pkg/scaling/scale_handler.go`).
pub fn trigger_metric_in(
    index: usize,
    t: &Trigger,
    namespace: &str,
    as_metric_source: bool,
) -> Result<TriggerMetric, ScalerError> {
    if matches!(t.kind.as_str(), "cpu" | "memory") {
        return resource_metric(index, t);
    }
    let spec = scaler_spec(&Metadata { index, t }, namespace, as_metric_source)?;
    let target = metric_target(index, t, spec.target, spec.milli)?;
    Ok(TriggerMetric {
        index,
        trigger_name: t.name.clone().filter(|n| !n.is_empty()),
        kind: t.kind.clone(),
        metric: metric_name_with_index(index, &spec.name),
        resource: false,
        target,
        target_value: spec.target,
        activation: spec.activation,
        container: None,
    })
}

/// A trigger's metadata, read as its scaler reads it; errors name the
/// trigger.
struct Metadata<'a> {
    index: usize,
    t: &'a Trigger,
}

impl Metadata<'_> {
    /// A field's value; empty is unset, as KEDA's metadata parsing has it.
    fn get(&self, field: &str) -> Option<&str> {
        self.t
            .metadata
            .get(field)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn missing(&self, field: &'static str) -> ScalerError {
        ScalerError::Missing {
            index: self.index,
            kind: self.t.kind.clone(),
            field,
        }
    }

    /// A numeric field, else `default`; unset without a default is missing.
    fn number(&self, field: &'static str, default: Option<f64>) -> Result<f64, ScalerError> {
        match self.get(field) {
            Some(v) => v
                .trim()
                .parse::<f64>()
                .map_err(|_| ScalerError::NotANumber {
                    index: self.index,
                    kind: self.t.kind.clone(),
                    field,
                    value: v.to_owned(),
                }),
            None => default.ok_or_else(|| self.missing(field)),
        }
    }
}

/// What a non-resource scaler makes of its metadata.
struct ScalerSpec {
    /// The metric name before the `s{index}-` prefix.
    name: String,
    target: f64,
    activation: f64,
    /// The target is written in milli-units (else as Go's `int64`).
    milli: bool,
}

/// Each modelled scaler's metric name, target and activation, from the
/// fields its KEDA scaler reads.
fn scaler_spec(
    m: &Metadata<'_>,
    namespace: &str,
    as_metric_source: bool,
) -> Result<ScalerSpec, ScalerError> {
    let spec = |name, target, activation, milli| ScalerSpec {
        name,
        target,
        activation,
        milli,
    };
    Ok(match m.t.kind.as_str() {
        "rabbitmq" => {
            let queue = m
                .get("metricName")
                .or(m.get("queueName"))
                .ok_or_else(|| m.missing("queueName"))?;
            let target = match m.get("value") {
                Some(_) => m.number("value", None)?,
                // The deprecated field of older ScaledObjects.
                None => m.number("queueLength", Some(20.0))?,
            };
            let name = normalize(&format!("rabbitmq-{}", query_escape(queue)));
            spec(name, target, m.number("activationValue", Some(0.0))?, true)
        }
        "prometheus" => spec(
            normalize("prometheus"),
            m.number("threshold", None)?,
            m.number("activationThreshold", Some(0.0))?,
            true,
        ),
        "kafka" => {
            let name = match m.get("topic") {
                Some(topic) => format!("kafka-{topic}"),
                None => format!(
                    "kafka-{}-topics",
                    m.get("consumerGroup").unwrap_or_default()
                ),
            };
            spec(
                normalize(&name),
                m.number("lagThreshold", Some(10.0))?.trunc(),
                m.number("activationLagThreshold", Some(0.0))?,
                false,
            )
        }
        "cron" => {
            let name = format!(
                "cron-{}-{}-{}",
                m.get("timezone").unwrap_or_default(),
                cron_shape(m.get("start").unwrap_or_default()),
                cron_shape(m.get("end").unwrap_or_default())
            );
            // The cron scaler reports desiredReplicas inside its window
            // against a target of 1 per pod.
            spec(normalize(&name), 1.0, 0.0, false)
        }
        // `metrics_api_scaler.go`: named after the GJSON path of the value.
        "metrics-api" => spec(
            normalize(&format!(
                "metric-api-{}",
                m.get("valueLocation").unwrap_or_default()
            )),
            m.number("targetValue", as_metric_source.then_some(0.0))?,
            m.number("activationTargetValue", Some(0.0))?,
            true,
        ),
        // `kubernetes_workload_scaler.go`: the count of pods matching
        // `podSelector`, named after the ScaledObject's namespace.
        "kubernetes-workload" => spec(
            normalize(&format!("workload-{namespace}")),
            m.number("value", as_metric_source.then_some(0.0))?,
            m.number("activationValue", Some(0.0))?,
            true,
        ),
        _ => {
            return Err(ScalerError::Unsupported {
                index: m.index,
                kind: m.t.kind.clone(),
            });
        }
    })
}

/// The HPA target for a target value, under the trigger's `metricType`
/// (`AverageValue` when unset).
fn metric_target(
    index: usize,
    t: &Trigger,
    target: f64,
    milli: bool,
) -> Result<Target, ScalerError> {
    let quantity = if milli {
        milli_quantity(target)
    } else {
        format!("{}", go_float_to_i64(target))
    };
    match t.metric_type.as_deref().unwrap_or("AverageValue") {
        "AverageValue" => Ok(Target::AverageValue(quantity)),
        "Value" => Ok(Target::Value(quantity)),
        other => Err(ScalerError::MetricType {
            index,
            kind: t.kind.clone(),
            metric_type: other.to_owned(),
            reason: "is not AverageValue or Value (Utilization is for cpu and memory)",
        }),
    }
}

fn resource_metric(index: usize, t: &Trigger) -> Result<TriggerMetric, ScalerError> {
    let kind = t.kind.clone();
    let value = t.metadata.get("value").ok_or(ScalerError::Missing {
        index,
        kind: kind.clone(),
        field: "value",
    })?;
    let not_a_number = || ScalerError::NotANumber {
        index,
        kind: kind.clone(),
        field: "value",
        value: value.clone(),
    };
    let metric_type = t
        .metric_type
        .clone()
        .or_else(|| t.metadata.get("type").cloned())
        .unwrap_or_default();
    let (target, number) = match metric_type.as_str() {
        "Utilization" => {
            let pct: i32 = value.trim().parse().map_err(|_| not_a_number())?;
            (Target::Utilization(pct), f64::from(pct))
        }
        "AverageValue" => {
            let q = hpa_core::quantity::Quantity::parse_non_negative(value.trim())
                .map_err(|_| not_a_number())?;
            (Target::AverageValue(value.trim().to_owned()), q.as_f64())
        }
        other => {
            return Err(ScalerError::MetricType {
                index,
                kind,
                metric_type: other.to_owned(),
                reason: "must be Utilization or AverageValue for cpu and memory",
            });
        }
    };
    Ok(TriggerMetric {
        index,
        trigger_name: t.name.clone().filter(|n| !n.is_empty()),
        kind: t.kind.clone(),
        metric: t.kind.clone(),
        resource: true,
        target,
        target_value: number,
        activation: 0.0,
        // `cpu_memory_scaler.go`: a container name makes a ContainerResource metric.
        container: t
            .metadata
            .get("containerName")
            .filter(|c| !c.is_empty())
            .cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trigger(kind: &str, meta: &[(&str, &str)]) -> Trigger {
        Trigger {
            kind: kind.to_owned(),
            name: None,
            metadata: meta
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            metric_type: None,
        }
    }

    #[test]
    fn metric_names_are_keda_s() {
        let cases = [
            (
                0,
                trigger("rabbitmq", &[("queueName", "orders"), ("value", "20")]),
                "s0-rabbitmq-orders",
            ),
            (
                1,
                trigger("rabbitmq", &[("queueName", "a/b.c"), ("value", "5")]),
                "s1-rabbitmq-a-2Fb-c",
            ),
            (
                0,
                trigger("prometheus", &[("threshold", "100"), ("query", "up")]),
                "s0-prometheus",
            ),
            (
                2,
                trigger("kafka", &[("topic", "events"), ("consumerGroup", "g")]),
                "s2-kafka-events",
            ),
            (
                0,
                trigger("kafka", &[("consumerGroup", "g")]),
                "s0-kafka-g-topics",
            ),
            // From KEDA's scaledobject_controller_test ("cleans up a deleted trigger").
            (
                0,
                trigger(
                    "cron",
                    &[
                        ("timezone", "UTC"),
                        ("start", "0 * * * *"),
                        ("end", "1 * * * *"),
                        ("desiredReplicas", "1"),
                    ],
                ),
                "s0-cron-UTC-0xxxx-1xxxx",
            ),
            (
                1,
                trigger(
                    "cron",
                    &[
                        ("timezone", "UTC"),
                        ("start", "2 * * * *"),
                        ("end", "3 * * * *"),
                        ("desiredReplicas", "2"),
                    ],
                ),
                "s1-cron-UTC-2xxxx-3xxxx",
            ),
        ];
        for (i, t, want) in cases {
            assert_eq!(trigger_metric(i, &t).unwrap().metric, want);
        }
    }

    #[test]
    fn targets_and_activation_come_from_each_scaler_s_fields() {
        let m = trigger_metric(
            0,
            &trigger(
                "rabbitmq",
                &[
                    ("queueName", "q"),
                    ("value", "2.5"),
                    ("activationValue", "3"),
                ],
            ),
        )
        .unwrap();
        assert_eq!(m.target, Target::AverageValue("2500m".to_owned()));
        assert_eq!(m.activation, 3.0);
        let m = trigger_metric(0, &trigger("rabbitmq", &[("queueName", "q")])).unwrap();
        assert_eq!(
            m.target,
            Target::AverageValue("20".to_owned()),
            "queueLength defaults to 20"
        );
        let mut t = trigger("prometheus", &[("threshold", "100")]);
        t.metric_type = Some("Value".to_owned());
        assert_eq!(
            trigger_metric(0, &t).unwrap().target,
            Target::Value("100".to_owned())
        );
        let mut cpu = trigger("cpu", &[("value", "50")]);
        cpu.metric_type = Some("Utilization".to_owned());
        let m = trigger_metric(0, &cpu).unwrap();
        assert!(m.resource);
        assert_eq!(m.target, Target::Utilization(50));
    }

    #[test]
    fn metrics_api_and_workload_triggers_are_named_as_keda_names_them() {
        // The scalingModifiers example of keda.sh's "Scaling Deployments" page.
        let api = trigger(
            "metrics-api",
            &[("valueLocation", "tasks"), ("targetValue", "2")],
        );
        let m = trigger_metric_in(1, &api, "default", false).unwrap();
        assert_eq!(m.metric, "s1-metric-api-tasks");
        assert_eq!(m.target, Target::AverageValue("2".to_owned()));
        let workload = trigger(
            "kubernetes-workload",
            &[("podSelector", "pod=workload-test"), ("value", "1.5")],
        );
        let m = trigger_metric_in(0, &workload, "shop", false).unwrap();
        assert_eq!(m.metric, "s0-workload-shop");
        assert_eq!(m.target, Target::AverageValue("1500m".to_owned()));
        // The page's example has neither targetValue nor value: fine as
        // sources of a formula, refused otherwise.
        let bare = trigger("metrics-api", &[("valueLocation", "x")]);
        assert!(trigger_metric(0, &bare).is_err());
        assert!(trigger_metric_in(0, &bare, "default", true).is_ok());
    }

    #[test]
    fn unsupported_and_broken_triggers_say_which() {
        let err = trigger_metric(3, &trigger("azure-queue", &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("trigger 3 (azure-queue): type \"azure-queue\" is not modelled"),
            "{err}"
        );
        let err = trigger_metric(0, &trigger("prometheus", &[]))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "trigger 0 (prometheus): metadata.threshold is missing");
        let mut t = trigger("prometheus", &[("threshold", "1")]);
        t.metric_type = Some("Utilization".to_owned());
        assert!(trigger_metric(0, &t).is_err());
    }

    #[test]
    fn go_s_float_conversion_is_kept() {
        assert_eq!(go_float_to_i64(1.9), 1);
        assert_eq!(go_float_to_i64(-1.9), -1);
        assert_eq!(go_float_to_i64(1e23), i64::MIN);
        assert_eq!(go_float_to_i64(f64::NAN), i64::MIN);
    }

    #[test]
    fn values_become_quantities_through_a_decimal_string_as_in_keda_2_20() {
        let cases = [
            (20.0, "20"),
            (0.25, "250m"),
            (50.0, "50"),
            (1e20, "100E"),
            (0.0004, "0"),
            (f64::NAN, "0"),
            (f64::INFINITY, "0"),
            (-2.5, "-2500m"),
        ];
        for (v, want) in cases {
            assert_eq!(metric_quantity(v), want, "{v}");
        }
        assert_eq!(milli_quantity(0.1), "100m");
    }
}
