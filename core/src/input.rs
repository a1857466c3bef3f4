//! What the shell reads for a reconcile and hands to `decide`: the scale,
//! the pods, the other HPAs' selectors and the fetched metrics. A module of
//! its own so that `trace` names what was read without importing `decide`,
//! which imports `trace` to fill in the explanation.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use serde::{Deserialize, Serialize};

use crate::calc::{PodCustomSample, PodResourceSample};
use crate::pod::CorePod;
use crate::quantity::Quantity;
use crate::selector::{Selector, SelectorError};

/// What the shell read from the target's `/scale` subresource.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScaleInfo {
    /// `spec.replicas`: upstream's "current replicas".
    pub spec_replicas: i32,
    /// `status.replicas`: feeds the AverageValue formulas of Object/External metrics.
    pub status_replicas: i32,
    /// `status.selector` (string form; empty = none).
    pub selector: String,
    /// `selector` parsed, when the shell holds it parsed already (a
    /// controller parses an HPA's selector once per change of its text, not
    /// once per sync); `None`: parsed here. Only a copy of `selector`: it
    /// takes no part in equality and is not serialized.
    #[serde(skip)]
    pub parsed_selector: Option<Arc<Selector>>,
}

impl ScaleInfo {
    /// A scale without a parsed selector.
    pub fn new(spec_replicas: i32, status_replicas: i32, selector: impl Into<String>) -> Self {
        Self {
            spec_replicas,
            status_replicas,
            selector: selector.into(),
            parsed_selector: None,
        }
    }

    /// `selector` parsed: the shell's copy when it gave one. An empty text
    /// parses (to everything); callers check for it first.
    pub fn parse_selector(&self) -> Result<Selector, SelectorError> {
        match &self.parsed_selector {
            Some(parsed) => Ok(Selector::clone(parsed)),
            None => Selector::parse(&self.selector),
        }
    }
}

impl PartialEq for ScaleInfo {
    fn eq(&self, other: &Self) -> bool {
        self.spec_replicas == other.spec_replicas
            && self.status_replicas == other.status_replicas
            && self.selector == other.selector
    }
}

impl Eq for ScaleInfo {}

/// A fetched metric, in the shape the metrics APIs return it. `Err` holds the
/// metrics client's error text (e.g. `unable to fetch metrics from resource
/// metrics API: ...`); it ends up in conditions and events as upstream does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Fetched {
    /// PodMetrics items.
    PodResource(Result<Vec<PodResourceSample>, String>),
    /// Custom per-pod values.
    PodsCustom(Result<Vec<PodCustomSample>, String>),
    /// A single object's value.
    Object(Result<ObjectSample, String>),
    /// External series values.
    External(Result<ExternalSample, String>),
}

/// An object metric value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectSample {
    /// The value.
    pub value: Quantity,
    /// Its timestamp.
    pub timestamp: Timestamp,
}

/// External metric values (all series matching the selector).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExternalSample {
    /// One value per series (an empty list is an error upstream).
    pub values: Vec<Quantity>,
    /// The first item's timestamp.
    pub timestamp: Timestamp,
}

/// Another HPA's pod selector, for the ambiguous-selector check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherHpa {
    /// `namespace/name`.
    pub key: String,
    /// Its target's selector (shared: every reconcile in a namespace reads
    /// the same ones).
    pub selector: Arc<Selector>,
}

/// Everything `decide` needs besides history, config and time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionInput {
    /// The HPA as read (API-defaulted; `spec.behavior` is defaulted again
    /// here), shared with the shell's cache: a reconcile copies no HPA.
    pub hpa: Arc<HorizontalPodAutoscaler>,
    /// The target's scale.
    pub scale: ScaleInfo,
    /// Pods of the HPA's namespace (filtered here by the scale selector),
    /// shared: a shell builds each once per pod change.
    pub pods: Vec<Arc<CorePod>>,
    /// Selectors of the other HPAs in the namespace.
    pub other_hpas: Vec<OtherHpa>,
    /// Fetch results aligned with `spec.metrics` (`None` = not fetched).
    pub metrics: Vec<Option<Fetched>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shell's parsed selector is used as given, and is only a copy:
    /// two scales with the same text are equal with or without it.
    #[test]
    fn a_parsed_selector_is_used_and_takes_no_part_in_equality() {
        let plain = ScaleInfo::new(2, 2, "app=web");
        let mut parsed = plain.clone();
        parsed.parsed_selector = Some(Arc::new(Selector::parse("app=web").unwrap()));
        assert_eq!(plain, parsed);
        assert_eq!(plain.parse_selector(), parsed.parse_selector());
        assert!(ScaleInfo::new(2, 2, "app in (").parse_selector().is_err());
        assert_ne!(plain, ScaleInfo::new(2, 2, "app=db"));
    }
}
