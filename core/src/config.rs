//! Controller knobs and feature gates.
//!
//! Defaults are those of kube-controller-manager v1.36
//! (`pkg/controller/podautoscaler/config/v1alpha1/defaults.go`); the gate
//! defaults are the v1.36 ones: `HPAScaleToZero` off (alpha),
//! `HPAConfigurableTolerance` on (beta since 1.35), `PodLevelResources` on
//! (beta, on by default since 1.34).

use std::fmt;
use std::str::FromStr;

use jiff::SignedDuration;
use serde::{Deserialize, Serialize};

/// Why a feature-gate string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A gate name this controller does not know.
    #[error(
        "unknown feature gate {name:?} in {input:?} (known: HPAScaleToZero, HPAConfigurableTolerance, PodLevelResources)"
    )]
    UnknownGate {
        /// The unknown name.
        name: String,
        /// The whole input.
        input: String,
    },
    /// A `name=value` pair whose value is not a boolean, or with no `=`.
    #[error("feature gate entry {entry:?} in {input:?} must be NAME=true or NAME=false")]
    BadEntry {
        /// The offending entry.
        entry: String,
        /// The whole input.
        input: String,
    },
}

/// The feature gates that change HPA controller behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGates {
    /// `HPAScaleToZero`: an HPA may scale an Object/External-metric workload to
    /// zero and back (condition `ScaledToZero`). Alpha in 1.36, default off.
    pub hpa_scale_to_zero: bool,
    /// `HPAConfigurableTolerance`: honour `behavior.scaleUp/scaleDown.tolerance`.
    /// Beta in 1.35+, default on.
    pub hpa_configurable_tolerance: bool,
    /// `PodLevelResources`: use pod-level `spec.resources.requests` for
    /// utilization when set. Beta, default on since 1.34.
    pub pod_level_resources: bool,
    /// `HPASelectionStrategy` (KEP-5325, alpha in 1.36, default off).
    /// Accepted so that a kube-controller-manager flag line starts ours; it
    /// changes nothing: v1.36's autoscaling/v2 API has no
    /// `spec.selectionStrategy` (docs/fidelity.md).
    #[serde(default)]
    pub hpa_selection_strategy: bool,
    /// `HPAExternalMetricFallback` (KEP-5679, alpha in 1.36, default off).
    /// Accepted, no behaviour: v1.36's API has no `external.fallback`.
    #[serde(default)]
    pub hpa_external_metric_fallback: bool,
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self {
            hpa_scale_to_zero: false,
            hpa_configurable_tolerance: true,
            pod_level_resources: true,
            hpa_selection_strategy: false,
            hpa_external_metric_fallback: false,
        }
    }
}

/// The gates of the pinned upstream version (v1.36) that change HPA
/// behaviour, with their defaults there.
pub const KNOWN_FEATURE_GATES: [(&str, bool); 5] = [
    ("HPAConfigurableTolerance", true),
    ("HPAExternalMetricFallback", false),
    ("HPAScaleToZero", false),
    ("HPASelectionStrategy", false),
    ("PodLevelResources", true),
];

impl FeatureGates {
    /// Applies `"A=true,B=false"` (the `--feature-gates` syntax) on top of the
    /// v1.36 defaults. Values are read as Go's `strconv.ParseBool` reads them
    /// (`true`, `True`, `TRUE`, `t`, `1`, ...). Unknown names are errors, so
    /// typos cannot pass silently.
    pub fn parse(input: &str) -> Result<Self, ConfigError> {
        let mut gates = Self::default();
        for entry in input.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let bad = || ConfigError::BadEntry {
                entry: entry.to_owned(),
                input: input.to_owned(),
            };
            let (name, value) = entry.split_once('=').ok_or_else(bad)?;
            let value = match value.trim() {
                "1" | "t" | "T" | "true" | "TRUE" | "True" => true,
                "0" | "f" | "F" | "false" | "FALSE" | "False" => false,
                _ => return Err(bad()),
            };
            gates
                .set(name.trim(), value)
                .map_err(|_| ConfigError::UnknownGate {
                    name: name.trim().to_owned(),
                    input: input.to_owned(),
                })?;
        }
        Ok(gates)
    }

    /// A gate's value by its upstream name (`None`: not a gate we know).
    pub fn get(&self, name: &str) -> Option<bool> {
        match name {
            "HPAScaleToZero" => Some(self.hpa_scale_to_zero),
            "HPAConfigurableTolerance" => Some(self.hpa_configurable_tolerance),
            "PodLevelResources" => Some(self.pod_level_resources),
            "HPASelectionStrategy" => Some(self.hpa_selection_strategy),
            "HPAExternalMetricFallback" => Some(self.hpa_external_metric_fallback),
            _ => None,
        }
    }

    /// Whether the gate `name` is on (unknown gates are off).
    pub fn enabled(&self, name: &str) -> bool {
        self.get(name).unwrap_or(false)
    }

    /// Sets one gate by its upstream name; unknown names are refused.
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), ConfigError> {
        let slot = match name {
            "HPAScaleToZero" => &mut self.hpa_scale_to_zero,
            "HPAConfigurableTolerance" => &mut self.hpa_configurable_tolerance,
            "PodLevelResources" => &mut self.pod_level_resources,
            "HPASelectionStrategy" => &mut self.hpa_selection_strategy,
            "HPAExternalMetricFallback" => &mut self.hpa_external_metric_fallback,
            other => {
                return Err(ConfigError::UnknownGate {
                    name: other.to_owned(),
                    input: other.to_owned(),
                });
            }
        };
        *slot = on;
        Ok(())
    }

    /// Every gate by name, with its value.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        KNOWN_FEATURE_GATES
            .iter()
            .map(|&(name, _)| (name, self.enabled(name)))
    }
}

impl FromStr for FeatureGates {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for FeatureGates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, on) in self.iter() {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{name}={on}")?;
        }
        Ok(())
    }
}

/// Everything the decision depends on besides the HPA, the cluster and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerConfig {
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

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            tolerance: 0.1,
            downscale_stabilization: SignedDuration::from_secs(300),
            cpu_initialization_period: SignedDuration::from_secs(300),
            initial_readiness_delay: SignedDuration::from_secs(30),
            scale_up_limit_factor: 2.0,
            scale_up_limit_minimum: 4.0,
            feature_gates: FeatureGates::default(),
        }
    }
}

impl ControllerConfig {
    /// The settings of upstream's controller unit tests (`horizontal_test.go`):
    /// init period 120 s, readiness delay 10 s, scale-up factor 8.
    pub fn upstream_test() -> Self {
        Self {
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
    fn defaults_are_the_v1_36_production_ones() {
        let c = ControllerConfig::default();
        assert_eq!(c.tolerance, 0.1);
        assert_eq!(c.downscale_stabilization, SignedDuration::from_mins(5));
        assert_eq!(c.cpu_initialization_period, SignedDuration::from_mins(5));
        assert_eq!(c.initial_readiness_delay, SignedDuration::from_secs(30));
        assert_eq!(c.scale_up_limit_factor, 2.0);
        let g = c.feature_gates;
        assert!(!g.hpa_scale_to_zero && g.hpa_configurable_tolerance && g.pod_level_resources);
    }

    #[test]
    fn gate_strings_override_defaults_and_reject_unknown_names() {
        let g = FeatureGates::parse("HPAScaleToZero=true, PodLevelResources=false").unwrap();
        assert!(g.hpa_scale_to_zero && !g.pod_level_resources && g.hpa_configurable_tolerance);
        assert_eq!(FeatureGates::parse(&g.to_string()).unwrap(), g);
        let err = FeatureGates::parse("HPAScaleToZer0=true").unwrap_err();
        assert!(err.to_string().contains("HPAScaleToZer0"), "{err}");
        assert!(FeatureGates::parse("HPAScaleToZero=yes").is_err());
        assert!(FeatureGates::parse("HPAScaleToZero").is_err());
    }

    #[test]
    fn every_hpa_gate_of_v1_36_is_accepted() {
        // A flag line copied from a v1.36 kube-controller-manager.
        let g = FeatureGates::parse(
            "HPASelectionStrategy=true,HPAExternalMetricFallback=true,HPAScaleToZero=true",
        )
        .unwrap();
        assert!(g.hpa_selection_strategy && g.hpa_external_metric_fallback && g.hpa_scale_to_zero);
        let defaults = FeatureGates::default();
        assert!(!defaults.hpa_selection_strategy && !defaults.hpa_external_metric_fallback);
        assert_eq!(FeatureGates::parse(&g.to_string()).unwrap(), g);
    }

    #[test]
    fn gate_values_are_read_as_go_parse_bool_reads_them() {
        for on in ["1", "t", "T", "true", "TRUE", "True"] {
            let g = FeatureGates::parse(&format!("HPAScaleToZero={on}")).unwrap();
            assert!(g.hpa_scale_to_zero, "{on}");
        }
        for off in ["0", "f", "F", "false", "FALSE", "False"] {
            let g = FeatureGates::parse(&format!("PodLevelResources={off}")).unwrap();
            assert!(!g.pod_level_resources, "{off}");
        }
    }

    #[test]
    fn gates_are_read_and_set_by_their_upstream_names() {
        let mut g = FeatureGates::default();
        let defaults: Vec<(&str, bool)> = g.iter().collect();
        assert_eq!(defaults, KNOWN_FEATURE_GATES);
        g.set("HPAScaleToZero", true).unwrap();
        assert_eq!(g.get("HPAScaleToZero"), Some(true));
        assert!(g.enabled("HPAScaleToZero"));
        assert_eq!(g.get("NoSuchGate"), None);
        assert!(!g.enabled("NoSuchGate"));
        let err = g.set("NoSuchGate", true).unwrap_err();
        assert!(err.to_string().contains("NoSuchGate"), "{err}");
    }
}
