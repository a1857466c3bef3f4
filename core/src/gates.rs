//! The feature gates that change HPA behaviour, per Kubernetes release.
//!
//! Each release registers its own set of gates with a default, a stage and
//! possibly a lock (`LockToDefault`, for gates that reached GA), as
//! `pkg/features/kube_features.go` does; `--feature-gates` then overrides
//! single gates under component-base's rules: an unknown name is refused, and
//! a locked gate can only be set to its default.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::version::KubernetesVersion;

/// One HPA-relevant gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gate {
    /// `HPAScaleToZero`: `minReplicas: 0` with Object/External metrics, the
    /// `ScaledToZero` condition.
    HpaScaleToZero,
    /// `HPAConfigurableTolerance`: per-HPA `behavior.scaleUp/scaleDown.tolerance`.
    HpaConfigurableTolerance,
    /// `PodLevelResources`: pod-level `spec.resources.requests` for utilization.
    PodLevelResources,
    /// `HPAGeneration`: `metadata.generation` on HPAs, `status.observedGeneration`
    /// and per-condition `observedGeneration`.
    HpaGeneration,
    /// `StaleControllerConsistencyHPA`: a sync waits until the controller's
    /// cache holds its own last status write.
    StaleControllerConsistencyHpa,
    /// `HPAOptimizedSelectorStore`: the selector store indexed by namespace
    /// (same answers, fewer comparisons).
    HpaOptimizedSelectorStore,
}

/// A gate's maturity in a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Alpha,
    Beta,
    Ga,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Alpha => "ALPHA",
            Stage::Beta => "BETA",
            Stage::Ga => "GA",
        })
    }
}

/// A gate as one release registers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateSpec {
    /// On unless `--feature-gates` says otherwise.
    pub default: bool,
    /// Maturity.
    pub stage: Stage,
    /// Locked to its default: `--feature-gates` may only repeat it.
    pub locked: bool,
}

const fn spec(stage: Stage, default: bool, locked: bool) -> Option<GateSpec> {
    Some(GateSpec {
        default,
        stage,
        locked,
    })
}

impl Gate {
    /// Every gate, in the order `--feature-gates` help lists them.
    pub const ALL: [Gate; 6] = [
        Gate::HpaConfigurableTolerance,
        Gate::HpaGeneration,
        Gate::HpaOptimizedSelectorStore,
        Gate::HpaScaleToZero,
        Gate::PodLevelResources,
        Gate::StaleControllerConsistencyHpa,
    ];

    /// The upstream name.
    pub fn name(self) -> &'static str {
        match self {
            Gate::HpaScaleToZero => "HPAScaleToZero",
            Gate::HpaConfigurableTolerance => "HPAConfigurableTolerance",
            Gate::PodLevelResources => "PodLevelResources",
            Gate::HpaGeneration => "HPAGeneration",
            Gate::StaleControllerConsistencyHpa => "StaleControllerConsistencyHPA",
            Gate::HpaOptimizedSelectorStore => "HPAOptimizedSelectorStore",
        }
    }

    /// The gate of an upstream name.
    pub fn by_name(name: &str) -> Option<Gate> {
        Self::ALL.into_iter().find(|g| g.name() == name)
    }

    fn index(self) -> usize {
        match self {
            Gate::HpaScaleToZero => 0,
            Gate::HpaConfigurableTolerance => 1,
            Gate::PodLevelResources => 2,
            Gate::HpaGeneration => 3,
            Gate::StaleControllerConsistencyHpa => 4,
            Gate::HpaOptimizedSelectorStore => 5,
        }
    }

    /// How `version` registers this gate (`None`: the release does not know it).
    pub fn spec(self, version: KubernetesVersion) -> Option<GateSpec> {
        use KubernetesVersion::*;
        use Stage::*;
        // 1.35 from its kube_features.go (HPAConfigurableTolerance beta and
        // on since 1.35, PodLevelResources beta since 1.34, HPAScaleToZero
        // alpha since 1.16); the later gates were added in 1.37.
        match (self, version) {
            (Gate::HpaScaleToZero, V1_35 | V1_36) => spec(Alpha, false, false),
            (Gate::HpaScaleToZero, V1_37 | V1_38) => spec(Beta, true, false),
            (Gate::HpaConfigurableTolerance, V1_35 | V1_36) => spec(Beta, true, false),
            (Gate::HpaConfigurableTolerance, V1_37 | V1_38) => spec(Ga, true, true),
            (Gate::PodLevelResources, _) => spec(Beta, true, false),
            (Gate::HpaGeneration, V1_35 | V1_36) => None,
            (Gate::HpaGeneration, V1_37) => spec(Beta, true, false),
            (Gate::HpaGeneration, V1_38) => spec(Ga, true, true),
            (
                Gate::StaleControllerConsistencyHpa | Gate::HpaOptimizedSelectorStore,
                V1_35 | V1_36,
            ) => None,
            (Gate::StaleControllerConsistencyHpa | Gate::HpaOptimizedSelectorStore, _) => {
                spec(Beta, true, false)
            }
        }
    }
}

/// Why a `--feature-gates` value was refused. The quoted parts are
/// component-base's own texts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// A name this release does not register.
    #[error("unrecognized feature gate: {name} (Kubernetes {version} knows: {})", known_names(*.version))]
    Unknown {
        name: String,
        version: KubernetesVersion,
    },
    /// An entry without `=`.
    #[error("missing bool value for {0}")]
    MissingValue(String),
    /// A value `strconv.ParseBool` refuses.
    #[error(
        "invalid value of {name}={value}, err: strconv.ParseBool: parsing {value:?}: invalid syntax"
    )]
    BadValue { name: String, value: String },
    /// A locked gate set away from its default.
    #[error(
        "cannot set feature gate {name} to {value}, feature is locked to {locked} (GA in Kubernetes {version})"
    )]
    Locked {
        name: &'static str,
        value: bool,
        locked: bool,
        version: KubernetesVersion,
    },
}

fn known_names(version: KubernetesVersion) -> String {
    Gate::ALL
        .into_iter()
        .filter(|g| g.spec(version).is_some())
        .map(Gate::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The gates of one release, with the overrides `--feature-gates` gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGates {
    version: KubernetesVersion,
    /// Overrides by [`Gate::index`]; `None`: the release's default.
    overrides: [Option<bool>; 6],
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self::of(KubernetesVersion::default())
    }
}

impl FeatureGates {
    /// The defaults of `version`.
    pub fn of(version: KubernetesVersion) -> Self {
        Self {
            version,
            overrides: [None; 6],
        }
    }

    /// The release whose gates these are.
    pub fn version(&self) -> KubernetesVersion {
        self.version
    }

    /// Applies `"A=true,B=false"` (the `--feature-gates` syntax) on top of
    /// the defaults of `version`. Values are read as Go's `strconv.ParseBool`
    /// reads them (`true`, `True`, `TRUE`, `t`, `1`, ...).
    pub fn parse(version: KubernetesVersion, input: &str) -> Result<Self, GateError> {
        let mut gates = Self::of(version);
        for entry in input.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, value) = entry
                .split_once('=')
                .ok_or_else(|| GateError::MissingValue(entry.to_owned()))?;
            let (name, value) = (name.trim(), value.trim());
            let on = match value {
                "1" | "t" | "T" | "true" | "TRUE" | "True" => true,
                "0" | "f" | "F" | "false" | "FALSE" | "False" => false,
                _ => {
                    return Err(GateError::BadValue {
                        name: name.to_owned(),
                        value: value.to_owned(),
                    });
                }
            };
            gates.set(name, on)?;
        }
        Ok(gates)
    }

    /// The same overrides under another release's gates (refused where that
    /// release does not know or locks an overridden gate).
    pub fn with_version(&self, version: KubernetesVersion) -> Result<Self, GateError> {
        Self::parse(version, &self.to_string())
    }

    /// Sets one gate by its upstream name, under this release's rules.
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), GateError> {
        let unknown = || GateError::Unknown {
            name: name.to_owned(),
            version: self.version,
        };
        let gate = Gate::by_name(name).ok_or_else(unknown)?;
        let spec = gate.spec(self.version).ok_or_else(unknown)?;
        if spec.locked && on != spec.default {
            return Err(GateError::Locked {
                name: gate.name(),
                value: on,
                locked: spec.default,
                version: self.version,
            });
        }
        self.overrides[gate.index()] = Some(on);
        Ok(())
    }

    /// Whether `gate` is on (a gate the release does not know is off).
    pub fn on(&self, gate: Gate) -> bool {
        match gate.spec(self.version) {
            Some(spec) => self.overrides[gate.index()].unwrap_or(spec.default),
            None => false,
        }
    }

    /// Forces a gate on or off, ignoring locks and the release's set: for
    /// tests that explore what a combination would do.
    pub fn force(&mut self, gate: Gate, on: bool) {
        self.overrides[gate.index()] = Some(on);
    }

    /// A gate's value by its upstream name (`None`: not a gate of this release).
    pub fn get(&self, name: &str) -> Option<bool> {
        let gate = Gate::by_name(name)?;
        gate.spec(self.version).map(|_| self.on(gate))
    }

    /// Whether the gate `name` is on (unknown gates are off).
    pub fn enabled(&self, name: &str) -> bool {
        self.get(name).unwrap_or(false)
    }

    /// `HPAScaleToZero`.
    pub fn scale_to_zero(&self) -> bool {
        self.on(Gate::HpaScaleToZero)
    }

    /// `HPAConfigurableTolerance`.
    pub fn configurable_tolerance(&self) -> bool {
        self.on(Gate::HpaConfigurableTolerance)
    }

    /// `PodLevelResources`.
    pub fn pod_level_resources(&self) -> bool {
        self.on(Gate::PodLevelResources)
    }

    /// `HPAGeneration`.
    pub fn generation(&self) -> bool {
        self.on(Gate::HpaGeneration)
    }

    /// `StaleControllerConsistencyHPA`.
    pub fn stale_controller_consistency(&self) -> bool {
        self.on(Gate::StaleControllerConsistencyHpa)
    }

    /// Every gate this release registers, with its value and spec.
    pub fn iter(&self) -> impl Iterator<Item = (Gate, bool, GateSpec)> + '_ {
        Gate::ALL
            .into_iter()
            .filter_map(|g| g.spec(self.version).map(|s| (g, self.on(g), s)))
    }

    /// The gates `--feature-gates` changed, in `Name=value` form.
    pub fn overrides(&self) -> impl Iterator<Item = (Gate, bool)> + '_ {
        Gate::ALL
            .into_iter()
            .filter_map(|g| self.overrides[g.index()].map(|on| (g, on)))
    }

    /// Every gate with its value, `A=true,B=false` (for logs and traces).
    pub fn effective(&self) -> String {
        self.iter()
            .map(|(g, on, _)| format!("{}={on}", g.name()))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `--feature-gates` help: every gate of every release.
    pub fn help() -> String {
        let mut lines = Vec::new();
        for gate in Gate::ALL {
            let per: Vec<String> = KubernetesVersion::ALL
                .into_iter()
                .map(|v| match gate.spec(v) {
                    None => format!("{v}: absent"),
                    Some(s) => format!(
                        "{v}: {} {}{}",
                        s.stage,
                        if s.default { "on" } else { "off" },
                        if s.locked { ", locked" } else { "" }
                    ),
                })
                .collect();
            lines.push(format!("{} ({})", gate.name(), per.join("; ")));
        }
        lines.join("\n")
    }
}

/// The overrides, in the `--feature-gates` syntax (parses back to the same
/// gates under the same release).
impl fmt::Display for FeatureGates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (gate, on) in self.overrides() {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{}={on}", gate.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use KubernetesVersion::*;

    #[test]
    fn each_release_has_its_own_defaults() {
        // 1.35 registers what 1.36 does, with the same stages and defaults.
        for gate in Gate::ALL {
            assert_eq!(gate.spec(V1_35), gate.spec(V1_36), "{}", gate.name());
        }
        let g35 = FeatureGates::of(V1_35);
        assert!(!g35.scale_to_zero() && g35.configurable_tolerance() && g35.pod_level_resources());
        assert_eq!(
            Gate::HpaConfigurableTolerance.spec(V1_35),
            Some(GateSpec {
                default: true,
                stage: Stage::Beta,
                locked: false
            })
        );
        let g36 = FeatureGates::of(V1_36);
        assert!(!g36.scale_to_zero() && g36.configurable_tolerance() && g36.pod_level_resources());
        assert!(!g36.generation() && !g36.stale_controller_consistency());
        let g37 = FeatureGates::of(V1_37);
        assert!(g37.scale_to_zero() && g37.configurable_tolerance() && g37.generation());
        assert!(g37.stale_controller_consistency() && g37.on(Gate::HpaOptimizedSelectorStore));
        assert_eq!(FeatureGates::default(), g37);
        let g38 = FeatureGates::of(V1_38);
        assert_eq!(
            Gate::HpaGeneration.spec(V1_38).map(|s| s.locked),
            Some(true)
        );
        assert!(g38.generation());
    }

    #[test]
    fn a_locked_gate_can_only_repeat_its_default() {
        let err = FeatureGates::parse(V1_37, "HPAConfigurableTolerance=false").unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot set feature gate HPAConfigurableTolerance to false, feature is locked to true (GA in Kubernetes 1.37)"
        );
        assert!(FeatureGates::parse(V1_37, "HPAConfigurableTolerance=true").is_ok());
        let g = FeatureGates::parse(V1_36, "HPAConfigurableTolerance=false").unwrap();
        assert!(!g.configurable_tolerance());
        assert!(FeatureGates::parse(V1_38, "HPAGeneration=false").is_err());
        assert!(FeatureGates::parse(V1_37, "HPAGeneration=false").is_ok());
    }

    #[test]
    fn a_gate_unknown_to_the_release_is_refused() {
        let err = FeatureGates::parse(V1_36, "HPAGeneration=true").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unrecognized feature gate: HPAGeneration (Kubernetes 1.36 knows: "),
            "{err}"
        );
        // Never registered upstream in any release.
        for name in [
            "HPASelectionStrategy",
            "HPAExternalMetricFallback",
            "HPAScaleToZer0",
        ] {
            for v in KubernetesVersion::ALL {
                let err = FeatureGates::parse(v, &format!("{name}=true")).unwrap_err();
                assert!(matches!(err, GateError::Unknown { .. }), "{name} {v}");
            }
        }
    }

    #[test]
    fn gate_values_are_read_as_go_parse_bool_reads_them() {
        for on in ["1", "t", "T", "true", "TRUE", "True"] {
            let g = FeatureGates::parse(V1_36, &format!("HPAScaleToZero={on}")).unwrap();
            assert!(g.scale_to_zero(), "{on}");
        }
        for off in ["0", "f", "F", "false", "FALSE", "False"] {
            let g = FeatureGates::parse(V1_37, &format!("PodLevelResources={off}")).unwrap();
            assert!(!g.pod_level_resources(), "{off}");
        }
        assert_eq!(
            FeatureGates::parse(V1_37, "HPAScaleToZero=yes")
                .unwrap_err()
                .to_string(),
            r#"invalid value of HPAScaleToZero=yes, err: strconv.ParseBool: parsing "yes": invalid syntax"#
        );
        assert_eq!(
            FeatureGates::parse(V1_37, "HPAScaleToZero").unwrap_err(),
            GateError::MissingValue("HPAScaleToZero".into())
        );
    }

    #[test]
    fn overrides_print_in_flag_form_and_survive_a_change_of_release() {
        let g = FeatureGates::parse(V1_36, "HPAScaleToZero=true, PodLevelResources=false").unwrap();
        assert_eq!(g.to_string(), "HPAScaleToZero=true,PodLevelResources=false");
        assert_eq!(FeatureGates::parse(V1_36, &g.to_string()).unwrap(), g);
        let moved = g.with_version(V1_37).unwrap();
        assert!(moved.scale_to_zero() && !moved.pod_level_resources() && moved.generation());
        let g37 = FeatureGates::parse(V1_37, "HPAGeneration=false").unwrap();
        assert!(
            g37.with_version(V1_36).is_err(),
            "1.36 has no HPAGeneration"
        );
        assert_eq!(FeatureGates::of(V1_37).to_string(), "");
    }

    #[test]
    fn gates_are_read_by_their_upstream_names() {
        let g = FeatureGates::of(V1_36);
        assert_eq!(g.get("HPAScaleToZero"), Some(false));
        assert_eq!(g.get("HPAGeneration"), None, "absent in 1.36");
        assert!(!g.enabled("NoSuchGate"));
        let listed: Vec<&str> = g.iter().map(|(gate, _, _)| gate.name()).collect();
        assert_eq!(
            listed,
            [
                "HPAConfigurableTolerance",
                "HPAScaleToZero",
                "PodLevelResources"
            ]
        );
        assert!(FeatureGates::help().contains(
            "HPAGeneration (1.35: absent; 1.36: absent; 1.37: BETA on; 1.38: GA on, locked)"
        ));
    }
}
