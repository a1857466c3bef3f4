//! The decision's settings, and the feature gates of the chosen Kubernetes
//! release.
//!
//! Defaults are those of kube-controller-manager
//! (`pkg/controller/podautoscaler/config/v1alpha1/defaults.go`), unchanged
//! from v1.36 to v1.38, written once in [`defaults`]: the controller's flags
//! and settings take theirs from there. The gates and their defaults depend
//! on the release ([`crate::gates`]).

use jiff::SignedDuration;
use serde::{Deserialize, Serialize};

pub use crate::gates::{FeatureGates, Gate, GateError, GateSpec, Stage};
pub use crate::version::KubernetesVersion;

/// kube-controller-manager's HPA defaults, each written once: the core's
/// [`DecisionConfig::default`], the controller's settings and the clap
/// defaults of its flags all read them.
pub mod defaults {
    use jiff::SignedDuration;

    /// `--horizontal-pod-autoscaler-sync-period`.
    pub const SYNC_PERIOD: SignedDuration = SignedDuration::from_secs(15);
    /// `--horizontal-pod-autoscaler-tolerance`.
    pub const TOLERANCE: f64 = 0.1;
    /// `--horizontal-pod-autoscaler-downscale-stabilization`.
    pub const DOWNSCALE_STABILIZATION: SignedDuration = SignedDuration::from_mins(5);
    /// `--horizontal-pod-autoscaler-cpu-initialization-period`.
    pub const CPU_INITIALIZATION_PERIOD: SignedDuration = SignedDuration::from_mins(5);
    /// `--horizontal-pod-autoscaler-initial-readiness-delay`.
    pub const INITIAL_READINESS_DELAY: SignedDuration = SignedDuration::from_secs(30);
    /// `--concurrent-horizontal-pod-autoscaler-syncs`.
    pub const WORKERS: u32 = 5;
    /// Legacy (behavior-less) scale-up cap factor (`scaleUpLimitFactor`).
    pub const SCALE_UP_LIMIT_FACTOR: f64 = 2.0;
    /// Legacy scale-up cap minimum (`scaleUpLimitMinimum`).
    pub const SCALE_UP_LIMIT_MINIMUM: f64 = 4.0;
}

/// Everything the decision depends on besides the HPA, the cluster and time.
/// The controller builds it once from its flags and hands it to every
/// reconcile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionConfig {
    /// `--horizontal-pod-autoscaler-tolerance`: ratio band around 1.0 inside
    /// which nothing changes (both directions, unless the HPA overrides it).
    pub tolerance: f64,
    /// `--horizontal-pod-autoscaler-downscale-stabilization`: legacy-path
    /// scale-down window, and the fill-in for a behavior without
    /// `scaleDown.stabilizationWindowSeconds`.
    pub downscale_stabilization: SignedDuration,
    /// `--horizontal-pod-autoscaler-cpu-initialization-period`: how long after
    /// start a pod's CPU samples are distrusted.
    pub cpu_initialization_period: SignedDuration,
    /// `--horizontal-pod-autoscaler-initial-readiness-delay`: after the init
    /// period, a pod not-ready since within this delay of start counts unready.
    pub initial_readiness_delay: SignedDuration,
    /// Legacy (behavior-less) scale-up cap factor: `max(factor × current,
    /// minimum)`. 2.0 in production; upstream unit tests use 8.
    pub scale_up_limit_factor: f64,
    /// Legacy scale-up cap minimum (4).
    pub scale_up_limit_minimum: f64,
    /// Feature gates.
    pub feature_gates: FeatureGates,
}

impl Default for DecisionConfig {
    fn default() -> Self {
        Self {
            tolerance: defaults::TOLERANCE,
            downscale_stabilization: defaults::DOWNSCALE_STABILIZATION,
            cpu_initialization_period: defaults::CPU_INITIALIZATION_PERIOD,
            initial_readiness_delay: defaults::INITIAL_READINESS_DELAY,
            scale_up_limit_factor: defaults::SCALE_UP_LIMIT_FACTOR,
            scale_up_limit_minimum: defaults::SCALE_UP_LIMIT_MINIMUM,
            feature_gates: FeatureGates::default(),
        }
    }
}

impl DecisionConfig {
    /// The Kubernetes release whose semantics apply (its gates' release).
    pub fn version(&self) -> KubernetesVersion {
        self.feature_gates.version()
    }

    /// The defaults under `version`'s gates.
    pub fn of_version(version: KubernetesVersion) -> Self {
        Self {
            feature_gates: FeatureGates::of(version),
            ..Self::default()
        }
    }

    /// The settings of upstream's controller unit tests (`horizontal_test.go`
    /// as of v1.36, where the cases come from): init period 120 s, readiness
    /// delay 10 s, scale-up factor 8, v1.36's gates.
    pub fn upstream_test() -> Self {
        Self {
            feature_gates: FeatureGates::of(KubernetesVersion::V1_36),
            cpu_initialization_period: SignedDuration::from_secs(120),
            initial_readiness_delay: SignedDuration::from_secs(10),
            scale_up_limit_factor: 8.0,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_production_ones_of_the_newest_stable_release() {
        let c = DecisionConfig::default();
        assert_eq!(c.tolerance, 0.1);
        assert_eq!(c.downscale_stabilization, SignedDuration::from_mins(5));
        assert_eq!(c.cpu_initialization_period, SignedDuration::from_mins(5));
        assert_eq!(c.initial_readiness_delay, SignedDuration::from_secs(30));
        assert_eq!(c.scale_up_limit_factor, 2.0);
        assert_eq!(c.version(), KubernetesVersion::V1_37);
        let g = c.feature_gates;
        assert!(g.scale_to_zero() && g.configurable_tolerance() && g.pod_level_resources());
    }
}
