//! Why a decision came out as it did: every proposal, every pod's share, and
//! each normalization step with the rule that limited it. Serializable for
//! machines, and `Display` as a plain-text table for people
//! (`hpa-harness explain`).

use std::fmt;

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscaler, MetricSpec};
use serde::{Deserialize, Serialize};

use crate::calc::{PodShare, Tolerances};
use crate::grouping::TimeStyle;
use crate::input::ScaleInfo;

/// One metric's part in the decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricTrace {
    /// Index in `spec.metrics`.
    pub index: usize,
    /// Metric source type.
    pub type_: String,
    /// Upstream's description of the metric (empty on failure).
    pub name: String,
    /// The target, readably.
    pub target: String,
    /// The current value, readably (as written to status).
    pub current: String,
    /// Usage ratio (first pass).
    pub ratio: Option<f64>,
    /// Usage ratio after substituting missing/unready pods.
    pub new_ratio: Option<f64>,
    /// Ready running pods used by Object/External Value targets.
    pub ready_pods: Option<usize>,
    /// The proposal, if computed.
    pub proposal: Option<i32>,
    /// The error, if not.
    pub error: Option<String>,
    /// Pod-by-pod shares (pod-based metrics).
    pub pods: Vec<PodShare>,
}

impl MetricTrace {
    pub(crate) fn new(index: usize, spec: &MetricSpec) -> Self {
        let name = match spec.type_.as_str() {
            "Resource" => spec.resource.as_ref().map(|r| r.name.clone()),
            "ContainerResource" => spec
                .container_resource
                .as_ref()
                .map(|r| format!("{}/{}", r.container, r.name)),
            "Pods" => spec.pods.as_ref().map(|p| p.metric.name.clone()),
            "Object" => spec.object.as_ref().map(|o| o.metric.name.clone()),
            "External" => spec.external.as_ref().map(|e| e.metric.name.clone()),
            _ => None,
        };
        Self {
            index,
            type_: spec.type_.clone(),
            name: name.unwrap_or_default(),
            target: String::new(),
            current: String::new(),
            ratio: None,
            new_ratio: None,
            ready_pods: None,
            proposal: None,
            error: None,
            pods: Vec::new(),
        }
    }
}

/// The whole explanation of one decision. Read back from its JSON as it
/// was (a controller keeps its latest traces as their text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionTrace {
    /// `namespace/name` of the HPA.
    pub hpa: String,
    /// When the decision was made.
    pub now: Timestamp,
    /// The scale as read.
    pub scale: ScaleInfo,
    /// `minReplicas` (defaulted).
    pub min_replicas: i32,
    /// `maxReplicas`.
    pub max_replicas: i32,
    /// The tolerance band the metrics' ratios were held against: the
    /// `--horizontal-pod-autoscaler-tolerance` flag, or the HPA's own
    /// `behavior.scaleUp.tolerance` / `behavior.scaleDown.tolerance` where
    /// the release's `HPAConfigurableTolerance` gate is on.
    pub tolerances: Tolerances,
    /// A rule that short-circuited the metrics, if any.
    pub rule: String,
    /// Per-metric details, in spec order.
    pub metrics: Vec<MetricTrace>,
    /// The metric whose proposal won.
    pub chosen_metric: String,
    /// The largest proposal, before normalization.
    pub prenormalized: Option<i32>,
    /// After stabilization.
    pub stabilized: Option<i32>,
    /// `ReadyForNewScale`, `ScaleUpStabilized` or `ScaleDownStabilized`.
    pub stabilization: String,
    /// After min/max and rate limits.
    pub limited: Option<i32>,
    /// The ScalingLimited reason (`DesiredWithinRange`, `ScaleUpLimit`, ...).
    pub limit_reason: String,
    /// The final desired replicas.
    pub desired: i32,
    /// Whether the scale is to be updated.
    pub rescale: bool,
    /// The rescale reason text.
    pub reason: String,
}

impl DecisionTrace {
    pub(crate) fn new(
        hpa: &HorizontalPodAutoscaler,
        scale: &ScaleInfo,
        min_replicas: i32,
        max_replicas: i32,
        tolerances: Tolerances,
        now: Timestamp,
    ) -> Self {
        Self {
            hpa: [
                hpa.metadata.namespace.as_deref().unwrap_or(""),
                "/",
                hpa.metadata.name.as_deref().unwrap_or(""),
            ]
            .concat(),
            now,
            scale: scale.clone(),
            min_replicas,
            max_replicas,
            tolerances,
            rule: String::new(),
            metrics: Vec::new(),
            chosen_metric: String::new(),
            prenormalized: None,
            stabilized: None,
            stabilization: String::new(),
            limited: None,
            limit_reason: String::new(),
            desired: scale.spec_replicas,
            rescale: false,
            reason: String::new(),
        }
    }
}

fn opt<T: fmt::Display>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".to_owned())
}

fn ratio(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.3}"))
        .unwrap_or_else(|| "-".to_owned())
}

fn row(f: &mut fmt::Formatter<'_>, cells: &[String], widths: &[usize]) -> fmt::Result {
    let parts: Vec<String> = cells
        .iter()
        .zip(widths)
        .map(|(c, w)| format!("{c:<w$}"))
        .collect();
    writeln!(f, "  {}", parts.join("  ").trim_end())
}

fn table(f: &mut fmt::Formatter<'_>, header: &[&str], rows: &[Vec<String>]) -> fmt::Result {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    row(
        f,
        &header.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>(),
        &widths,
    )?;
    row(
        f,
        &widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>(),
        &widths,
    )?;
    for r in rows {
        row(f, r, &widths)?;
    }
    Ok(())
}

impl fmt::Display for DecisionTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "HPA {} at {}", self.hpa, self.now)?;
        writeln!(
            f,
            "  scale: spec {} / status {} replicas, selector {:?}; bounds [{}, {}]",
            self.scale.spec_replicas,
            self.scale.status_replicas,
            self.scale.selector,
            self.min_replicas,
            self.max_replicas
        )?;
        writeln!(f, "  tolerance: {}", self.tolerances)?;
        if !self.rule.is_empty() {
            writeln!(f, "  rule: {}", self.rule)?;
        }
        if !self.metrics.is_empty() {
            writeln!(f, "metrics:")?;
            let rows: Vec<Vec<String>> = self
                .metrics
                .iter()
                .map(|m| {
                    vec![
                        m.index.to_string(),
                        m.type_.clone(),
                        m.name.clone(),
                        m.target.clone(),
                        m.current.clone(),
                        ratio(m.ratio),
                        ratio(m.new_ratio),
                        opt(m.proposal),
                        m.error.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            table(
                f,
                &[
                    "#", "type", "metric", "target", "current", "ratio", "ratio'", "proposal",
                    "error",
                ],
                &rows,
            )?;
            for m in self.metrics.iter().filter(|m| !m.pods.is_empty()) {
                writeln!(f, "pods of metric #{} ({}):", m.index, m.name)?;
                let rows: Vec<Vec<String>> = m
                    .pods
                    .iter()
                    .map(|p| {
                        vec![
                            p.pod.to_string(),
                            p.class.to_owned(),
                            opt(p.sample.map(|v| format!("{v}m"))),
                            opt(p.assumed.map(|v| format!("{v}m"))),
                            p.why.words(self.now, TimeStyle::Relative),
                        ]
                    })
                    .collect();
                table(f, &["pod", "counted as", "sample", "assumed", "why"], &rows)?;
            }
        }
        writeln!(f, "normalization:")?;
        let steps = vec![
            vec![
                "largest proposal".to_owned(),
                opt(self.prenormalized),
                self.chosen_metric.clone(),
            ],
            vec![
                "stabilized".to_owned(),
                opt(self.stabilized),
                self.stabilization.clone(),
            ],
            vec![
                "limited".to_owned(),
                opt(self.limited),
                self.limit_reason.clone(),
            ],
            vec![
                "desired".to_owned(),
                self.desired.to_string(),
                if self.rescale {
                    format!("rescale: {}", self.reason)
                } else {
                    "no change".to_owned()
                },
            ],
        ];
        table(f, &["step", "replicas", "why"], &steps)
    }
}
