//! What the shell reads for a reconcile and hands to `decide`: the scale,
//! the pods, the other HPAs' selectors and the fetched metrics. A module of
//! its own so that both `decide` and `trace` use it, neither the other.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use serde::Serialize;

use crate::calc::{PodCustomSample, PodResourceSample};
use crate::pod::CorePod;
use crate::quantity::Quantity;
use crate::selector::Selector;

/// What the shell read from the target's `/scale` subresource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScaleInfo {
    /// `spec.replicas`: upstream's "current replicas".
    pub spec_replicas: i32,
    /// `status.replicas`: feeds the AverageValue formulas of Object/External metrics.
    pub status_replicas: i32,
    /// `status.selector` (string form; empty = none).
    pub selector: String,
}

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
