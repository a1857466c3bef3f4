//! The HorizontalPodAutoscaler decision core.
//!
//! Pure and deterministic: no IO, no global clock (`now` is an argument), no
//! kube or tokio dependency, so every decision can be replayed and tested as a
//! value. The shell (controller) reads the HPA, the scale, pods and metrics,
//! calls [`decide::plan`], [`decide::decide`] and [`decide::finish`], and
//! applies what they return.
//!
//! Semantics follow `pkg/controller/podautoscaler` (`horizontal.go`,
//! `replica_calculator.go`, `metrics/utilization.go`) and the API defaulting
//! of `autoscaling/v2` of the Kubernetes release the configuration names
//! ([`version::KubernetesVersion`]: 1.35, 1.36, 1.37 by default, or
//! 1.38-alpha);
//! the release decides the feature gates' defaults and locks
//! ([`gates::FeatureGates`]) and the behaviours that changed without a gate.
//!
//! Modules:
//! - [`quantity`]: exact Kubernetes quantities (shared with the fake metrics server);
//! - [`selector`]: label selectors (shared with the simulated cluster);
//! - [`version`]: the Kubernetes release whose semantics apply;
//! - [`gates`]: the feature gates of each release;
//! - [`config`]: controller flags;
//! - [`pod`]: the pod as the core reads it, built once per pod change;
//! - [`grouping`]: upstream's `groupPods`, pod by pod, with the rule and times;
//! - [`calc`]: the replica calculator, one proposal per metric;
//! - [`normalize`]: stabilization, limits, behavior policies and defaulting;
//! - [`status`]: conditions and the semantic status comparison;
//! - [`input`]: what the shell reads (scale, pods, fetched metrics);
//! - [`decide`](mod@decide): one reconcile, in phases around the shell's IO;
//! - [`trace`]: the explanation of a decision;
//! - [`go_duration`]: Go's duration syntax, parsed and printed as Go does.

pub mod calc;
pub mod clock;
pub mod config;
pub mod decide;
pub mod gates;
pub mod go_duration;
pub mod grouping;
pub mod input;
pub mod labels;
pub mod normalize;
pub mod pod;
pub mod quantity;
pub mod selector;
pub mod status;
pub mod trace;
pub mod version;

pub use config::{DecisionConfig, FeatureGates};
pub use decide::{
    Decision, DecisionInput, Fetched, MetricQuery, Outcome, Plan, RescaleOutcome, ScaleInfo,
    decide, finish, get_scale_failed, plan,
};
pub use normalize::{HpaHistory, default_behavior, default_hpa};
pub use pod::CorePod;
pub use quantity::Quantity;
pub use selector::Selector;
pub use trace::DecisionTrace;
pub use version::KubernetesVersion;
