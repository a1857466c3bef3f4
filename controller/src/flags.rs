//! The HPA controller's flags, declared once with kube-controller-manager's
//! names and defaults ([`hpa_core::config::defaults`]): `hpa-harness
//! controller` and `hpa-harness load` take them on their command line, and
//! the Gherkin step "the HPA controller runs with:" and `hpa-harness replay
//! --flag` set them one at a time through the same declarations
//! ([`ControllerConfig::set_flag`]). [`HpaFlags::apply`] is the one way from
//! flags to settings.

use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Args, FromArgMatches};
use jiff::SignedDuration;

use hpa_core::config::{GateError, defaults};
use hpa_core::version::KubernetesVersion;

use crate::config::{ControllerConfig, FeatureGates, FlagError, parse_go_duration};

fn duration(s: &str) -> Result<Duration, String> {
    parse_go_duration(s).map_err(|e| e.to_string())
}

/// A duration default as `--help` shows it (Go's `5m0s`), formatted once.
macro_rules! go_default {
    ($d:expr) => {{
        static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        TEXT.get_or_init(|| hpa_core::go_duration::format($d))
            .as_str()
    }};
}

/// A flag's duration as the core takes it (a flag's never overflows: Go's
/// range is far below `SignedDuration`'s).
fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

fn version(s: &str) -> Result<KubernetesVersion, String> {
    s.parse()
        .map_err(|e: hpa_core::version::VersionError| e.to_string())
}

/// The flags that tune the HPA controller.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct HpaFlags {
    /// How often each HPA is synced.
    #[arg(long = "horizontal-pod-autoscaler-sync-period", default_value = go_default!(defaults::SYNC_PERIOD), value_parser = duration)]
    pub sync_period: Duration,

    /// Minimum change (from 1.0) in the desired-to-actual metrics ratio for
    /// the autoscaler to consider scaling.
    #[arg(long = "horizontal-pod-autoscaler-tolerance", default_value_t = defaults::TOLERANCE)]
    pub tolerance: f64,

    /// How far back a scale-down looks for the highest recommendation (HPAs
    /// without behavior, and behavior without a scale-down window).
    #[arg(long = "horizontal-pod-autoscaler-downscale-stabilization", default_value = go_default!(defaults::DOWNSCALE_STABILIZATION), value_parser = duration)]
    pub downscale_stabilization: Duration,

    /// After a pod starts, how long its CPU samples may be skipped.
    #[arg(long = "horizontal-pod-autoscaler-cpu-initialization-period", default_value = go_default!(defaults::CPU_INITIALIZATION_PERIOD), value_parser = duration)]
    pub cpu_initialization_period: Duration,

    /// After a pod starts, how long a readiness change still counts as its
    /// initial readiness.
    #[arg(long = "horizontal-pod-autoscaler-initial-readiness-delay", default_value = go_default!(defaults::INITIAL_READINESS_DELAY), value_parser = duration)]
    pub initial_readiness_delay: Duration,

    /// HPAs synced at once (workers).
    #[arg(long = "concurrent-horizontal-pod-autoscaler-syncs", default_value_t = defaults::WORKERS, value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: u32,

    /// Deprecated upstream no-op, accepted for compatibility.
    #[arg(long = "horizontal-pod-autoscaler-upscale-delay", hide = true, value_parser = duration)]
    pub upscale_delay: Option<Duration>,

    /// Deprecated upstream no-op, accepted for compatibility.
    #[arg(long = "horizontal-pod-autoscaler-downscale-delay", hide = true, value_parser = duration)]
    pub downscale_delay: Option<Duration>,

    /// The Kubernetes release whose HPA semantics apply: 1.35, 1.36, 1.37 or 1.38
    /// (alpha). It decides the feature gates' defaults and locks and the
    /// behaviours that changed between releases. Default: the cluster's own
    /// release where there is a cluster to ask, else 1.37.
    #[arg(long = "kubernetes-version", value_parser = version, env = "HPA_KUBERNETES_VERSION")]
    pub kubernetes_version: Option<KubernetesVersion>,

    /// Feature gates, `Name=true,Name=false`, over the release's defaults.
    /// A gate the release does not register is refused, and a gate locked
    /// at GA can only be set to its default. The HPA's gates by release:
    /// HPAConfigurableTolerance (1.36 beta on; 1.37 and 1.38 GA, locked),
    /// HPAGeneration (1.37 beta on; 1.38 GA, locked),
    /// HPAOptimizedSelectorStore (1.37, 1.38 beta on), HPAScaleToZero (1.36
    /// alpha off; 1.37, 1.38 beta on), PodLevelResources (beta on),
    /// StaleControllerConsistencyHPA (1.37, 1.38 beta on).
    #[arg(long = "feature-gates", default_value = "")]
    pub feature_gates: String,
}

impl HpaFlags {
    /// The flags that give `config`.
    pub fn of(config: &ControllerConfig) -> Self {
        let decision = &config.decision;
        Self {
            sync_period: config.sync_period,
            tolerance: decision.tolerance,
            downscale_stabilization: decision.downscale_stabilization.unsigned_abs(),
            cpu_initialization_period: decision.cpu_initialization_period.unsigned_abs(),
            initial_readiness_delay: decision.initial_readiness_delay.unsigned_abs(),
            workers: u32::try_from(config.workers).unwrap_or(u32::MAX),
            upscale_delay: None,
            downscale_delay: None,
            kubernetes_version: Some(decision.feature_gates.version()),
            feature_gates: decision.feature_gates.to_string(),
        }
    }

    /// The settings these flags give, over the defaults of the others.
    pub fn config(&self) -> Result<ControllerConfig, GateError> {
        let mut config = ControllerConfig::default();
        self.apply(&mut config)?;
        Ok(config)
    }

    /// Sets the settings of `config` these flags give; the others stay.
    /// Without `--kubernetes-version`, the release stays `config`'s.
    pub fn apply(&self, config: &mut ControllerConfig) -> Result<(), GateError> {
        let decision = &mut config.decision;
        let version = self
            .kubernetes_version
            .unwrap_or(decision.feature_gates.version());
        decision.feature_gates = FeatureGates::parse(version, &self.feature_gates)?;
        decision.tolerance = self.tolerance;
        decision.downscale_stabilization = signed(self.downscale_stabilization);
        decision.cpu_initialization_period = signed(self.cpu_initialization_period);
        decision.initial_readiness_delay = signed(self.initial_readiness_delay);
        config.sync_period = self.sync_period;
        config.workers = usize::try_from(self.workers).unwrap_or(1);
        Ok(())
    }
}

impl ControllerConfig {
    /// Sets one setting by its upstream flag name (with or without `--`), as
    /// the Gherkin step "the HPA controller runs with:" gives them, parsed
    /// by the declarations of [`HpaFlags`].
    pub fn set_flag(&mut self, flag: &str, value: &str) -> Result<(), FlagError> {
        let flag = flag.trim().trim_start_matches("--");
        let bad = |reason: String| FlagError::Value {
            flag: flag.to_owned(),
            value: value.to_owned(),
            reason,
        };
        // Without defaults, the matches hold only the flag given, and only
        // its field is updated.
        let command = HpaFlags::augment_args(
            clap::Command::new("flags")
                .no_binary_name(true)
                .disable_help_flag(true),
        )
        .mut_args(|arg| arg.default_value(None));
        let matches = command
            .try_get_matches_from([format!("--{flag}={value}")])
            .map_err(|e| match e.kind() {
                ErrorKind::UnknownArgument => FlagError::Unknown(flag.to_owned()),
                _ => bad(clap_reason(&e)),
            })?;
        let mut flags = HpaFlags::of(self);
        flags
            .update_from_arg_matches(&matches)
            .map_err(|e| bad(clap_reason(&e)))?;
        flags.apply(self).map_err(|e| bad(e.to_string()))
    }
}

/// What clap found wrong with a value, without its usage text.
fn clap_reason(e: &clap::Error) -> String {
    use std::error::Error as _;
    match e.source() {
        Some(source) => source.to_string(),
        None => e
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_decides_which_gates_exist_and_which_are_locked() {
        let mut c = ControllerConfig::default();
        assert_eq!(c.feature_gates().version(), KubernetesVersion::V1_37);
        let err = c
            .set_flag("feature-gates", "HPAConfigurableTolerance=false")
            .unwrap_err()
            .to_string();
        assert!(err.contains("locked to true"), "{err}");
        c.set_flag("feature-gates", "HPAGeneration=false").unwrap();
        // 1.36 has no HPAGeneration: the gate set so far is refused there.
        let err = c
            .set_flag("kubernetes-version", "1.36")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unrecognized feature gate: HPAGeneration"),
            "{err}"
        );
        c.set_flag("feature-gates", "").unwrap();
        c.set_flag("kubernetes-version", "v1.36.2").unwrap();
        assert!(!c.feature_gates().scale_to_zero());
        let err = c
            .set_flag("kubernetes-version", "1.30")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not supported"), "{err}");
    }

    #[test]
    fn a_flag_changes_only_its_setting() {
        let mut c = ControllerConfig {
            decisions_kept: 50,
            ..ControllerConfig::default()
        };
        c.set_flag("kubernetes-version", "1.36").unwrap();
        c.set_flag("feature-gates", "HPAScaleToZero=true").unwrap();
        c.set_flag("horizontal-pod-autoscaler-tolerance", "0.05")
            .unwrap();
        assert!(c.feature_gates().enabled("HPAScaleToZero"));
        assert_eq!(c.feature_gates().version(), KubernetesVersion::V1_36);
        assert!((c.decision.tolerance - 0.05).abs() < f64::EPSILON);
        assert_eq!(c.sync_period, Duration::from_secs(15));
        assert_eq!(c.decisions_kept, 50);
    }

    #[test]
    fn a_bad_value_names_the_flag_and_the_value() {
        let mut c = ControllerConfig::default();
        let err = c
            .set_flag("horizontal-pod-autoscaler-sync-period", "soon")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--horizontal-pod-autoscaler-sync-period"),
            "{err}"
        );
        assert!(err.contains("soon"), "{err}");
        assert_eq!(
            c.set_flag("kube-api-qps", "5"),
            Err(FlagError::Unknown("kube-api-qps".into()))
        );
    }

    #[test]
    fn the_defaults_are_the_config_defaults() {
        let flags = HpaFlags::from_arg_matches(
            &HpaFlags::augment_args(clap::Command::new("t").no_binary_name(true))
                .get_matches_from(Vec::<String>::new()),
        )
        .unwrap();
        let mut c = ControllerConfig {
            sync_period: Duration::ZERO,
            ..ControllerConfig::default()
        };
        flags.apply(&mut c).unwrap();
        assert_eq!(c, ControllerConfig::default());
        assert_eq!(
            HpaFlags::of(&ControllerConfig::default()).sync_period,
            flags.sync_period
        );
        assert_eq!(flags.config().unwrap(), ControllerConfig::default());
    }

    #[test]
    fn help_shows_the_defaults_as_go_prints_them() {
        let help = HpaFlags::augment_args(clap::Command::new("t"))
            .render_long_help()
            .to_string();
        for default in [
            "[default: 15s]",
            "[default: 0.1]",
            "[default: 5m0s]",
            "[default: 30s]",
            "[default: 5]",
        ] {
            assert!(help.contains(default), "{default} in {help}");
        }
    }
}
