//! The controller's settings: kube-controller-manager's HPA flags with their
//! upstream names and defaults, parsed from the command line (or built in
//! code by the harness).

use std::time::Duration;

use hpa_core::go_duration::{self, GoDurationError};

/// Errors of parsing a setting.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A Go-style duration (`15s`, `1m30s`, `1.5h`) that does not parse
    /// (Go's message, which names the text).
    #[error("{0} (expected e.g. 15s, 5m, 1m30s)")]
    Duration(GoDurationError),
    /// A negative duration: a setting is a span of time.
    #[error("invalid duration {input:?}: negative (expected e.g. 15s, 5m, 1m30s)")]
    NegativeDuration { input: String },
}

/// Parses a Go `time.ParseDuration` string (surrounding whitespace ignored)
/// that is not negative: a sequence of decimal numbers, each with a unit
/// (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`); `0` alone too.
pub fn parse_go_duration(input: &str) -> Result<Duration, ConfigError> {
    let d = go_duration::parse(input.trim()).map_err(ConfigError::Duration)?;
    if d.is_negative() {
        return Err(ConfigError::NegativeDuration {
            input: input.to_owned(),
        });
    }
    Ok(d.unsigned_abs())
}

/// Formats a duration as Go's `Duration.String()` (`15s`, `5m0s`, `1m30s`),
/// for `--help` and logs.
pub fn format_go_duration(d: Duration) -> String {
    go_duration::format_std(d)
}

use hpa_core::config::{DecisionConfig, defaults};
/// Feature gates: the pure core's, parsed from `--feature-gates` with
/// upstream names and the chosen release's defaults.
pub use hpa_core::config::{FeatureGates, Gate, GateError, KubernetesVersion};

/// The HPA controller's settings, as kube-controller-manager's flags set
/// them ([`crate::flags::HpaFlags`]). What the decision depends on is kept
/// as the core takes it ([`DecisionConfig`]), built once with the settings
/// and handed to every reconcile.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerConfig {
    /// How often each HPA is reconciled.
    pub sync_period: Duration,
    /// Reconcile workers.
    pub workers: usize,
    /// Decide and record, never write scale or status.
    pub dry_run: bool,
    /// Decision traces kept per HPA for `/debug/decisions` and the harness.
    /// 10 here, where scenarios and replays read recent traces; the deployed
    /// binary's `--decisions-kept` keeps 1 unless told otherwise, since
    /// traces were most of its memory at 10,000 HPAs.
    pub decisions_kept: usize,
    /// The decision core's settings: tolerance, stabilization, the pods'
    /// initialization periods and the release's feature gates.
    pub decision: DecisionConfig,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            sync_period: defaults::SYNC_PERIOD.unsigned_abs(),
            workers: defaults::WORKERS as usize,
            dry_run: false,
            decisions_kept: 10,
            decision: DecisionConfig::default(),
        }
    }
}

impl ControllerConfig {
    /// The upstream feature gates (of the decision's release).
    pub fn feature_gates(&self) -> FeatureGates {
        self.decision.feature_gates
    }
}

/// Errors of [`ControllerConfig::set_flag`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FlagError {
    #[error("unknown controller flag --{0}")]
    Unknown(String),
    #[error("invalid value {value:?} for --{flag}: {reason}")]
    Value {
        flag: String,
        value: String,
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse_like_go() {
        for (input, secs) in [
            ("15s", 15.0),
            ("5m", 300.0),
            ("1m30s", 90.0),
            ("1h", 3600.0),
            ("1.5h", 5400.0),
            ("300ms", 0.3),
            ("0", 0.0),
            ("2h45m10s", 9910.0),
        ] {
            let d = parse_go_duration(input).unwrap();
            assert!((d.as_secs_f64() - secs).abs() < 1e-9, "{input}: {d:?}");
        }
        for bad in ["", "15", "s", "5x", "-1s", "1..5s"] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?} must not parse");
        }
    }

    #[test]
    fn durations_format_like_go() {
        assert_eq!(format_go_duration(Duration::from_secs(15)), "15s");
        assert_eq!(format_go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(format_go_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_go_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn a_flag_duration_is_gos_and_never_negative() {
        // Go's values: "-0" is zero, sub-nanosecond fractions are truncated.
        assert_eq!(parse_go_duration(" -0s "), Ok(Duration::ZERO));
        assert_eq!(parse_go_duration("1.9ns"), Ok(Duration::from_nanos(1)));
        assert_eq!(
            parse_go_duration("-1s").unwrap_err().to_string(),
            r#"invalid duration "-1s": negative (expected e.g. 15s, 5m, 1m30s)"#
        );
        assert_eq!(
            parse_go_duration("5x").unwrap_err().to_string(),
            r#"time: unknown unit "x" in duration "5x" (expected e.g. 15s, 5m, 1m30s)"#
        );
        // Beyond Go's range (about 292 years) is an error, as in Go.
        assert!(parse_go_duration("3000000h").is_err());
    }

    #[test]
    fn defaults_are_upstreams() {
        let c = ControllerConfig::default();
        assert_eq!(c.sync_period, Duration::from_secs(15));
        assert!((c.decision.tolerance - 0.1).abs() < f64::EPSILON);
        let secs = |d: jiff::SignedDuration| d.as_secs();
        assert_eq!(secs(c.decision.downscale_stabilization), 300);
        assert_eq!(secs(c.decision.cpu_initialization_period), 300);
        assert_eq!(secs(c.decision.initial_readiness_delay), 30);
        assert_eq!(c.workers, 5);
        assert_eq!(c.feature_gates().version(), KubernetesVersion::V1_37);
        assert!(c.feature_gates().enabled("HPAConfigurableTolerance"));
        assert!(c.feature_gates().enabled("HPAScaleToZero"));
    }

    #[test]
    fn flags_set_by_upstream_name() {
        let mut c = ControllerConfig::default();
        c.set_flag("horizontal-pod-autoscaler-sync-period", "30s")
            .unwrap();
        c.set_flag("--horizontal-pod-autoscaler-tolerance", "0.2")
            .unwrap();
        c.set_flag("concurrent-horizontal-pod-autoscaler-syncs", "2")
            .unwrap();
        c.set_flag("kubernetes-version", "1.36").unwrap();
        c.set_flag(
            "feature-gates",
            "HPAScaleToZero=true,HPAConfigurableTolerance=false",
        )
        .unwrap();
        assert_eq!(c.sync_period, Duration::from_secs(30));
        assert!((c.decision.tolerance - 0.2).abs() < f64::EPSILON);
        assert_eq!(c.workers, 2);
        assert!(c.feature_gates().enabled("HPAScaleToZero"));
        assert!(!c.feature_gates().enabled("HPAConfigurableTolerance"));
        assert_eq!(
            c.set_flag("no-such-flag", "1"),
            Err(FlagError::Unknown("no-such-flag".into()))
        );
        assert!(c.set_flag("feature-gates", "Bogus=true").is_err());
        assert!(
            c.set_flag("concurrent-horizontal-pod-autoscaler-syncs", "0")
                .is_err()
        );
    }
}
