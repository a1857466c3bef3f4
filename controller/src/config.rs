//! The controller's settings: kube-controller-manager's HPA flags with their
//! upstream names and defaults, parsed from the command line (or built in
//! code by the harness).

use std::time::Duration;

/// Errors of parsing a setting.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A Go-style duration (`15s`, `1m30s`, `1.5h`) that does not parse.
    #[error("invalid duration {input:?}: {reason} (expected e.g. 15s, 5m, 1m30s)")]
    Duration { input: String, reason: &'static str },
}

/// Parses a Go `time.ParseDuration` string: a sequence of decimal numbers,
/// each with a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`); `0` alone too.
pub fn parse_go_duration(input: &str) -> Result<Duration, ConfigError> {
    let err = |reason| ConfigError::Duration {
        input: input.to_string(),
        reason,
    };
    let s = input.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(err("empty"));
    }
    if s.starts_with('-') {
        return Err(err("negative"));
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| err("missing unit"))?;
        if number_len == 0 {
            return Err(err("expected a number"));
        }
        let number: f64 = rest[..number_len].parse().map_err(|_| err("bad number"))?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(err("unknown unit")),
        };
        total += number * seconds_per_unit;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).map_err(|_| err("out of range"))
}

/// Formats a duration the Go way (`15s`, `5m0s`, `1m30s`), for `--help` and logs.
pub fn format_go_duration(d: Duration) -> String {
    let secs = d.as_secs();
    let millis = d.subsec_millis();
    if secs == 0 && millis == 0 {
        return "0s".into();
    }
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let sec = if millis > 0 {
        let frac = format!("{millis:03}");
        format!("{s}.{}s", frac.trim_end_matches('0'))
    } else {
        format!("{s}s")
    };
    match (h, m) {
        (0, 0) => sec,
        (0, m) => format!("{m}m{sec}"),
        (h, m) => format!("{h}h{m}m{sec}"),
    }
}

/// Feature gates: the pure core's, parsed from `--feature-gates` with
/// upstream names and v1.36 defaults.
pub use hpa_core::config::{FeatureGates, KNOWN_FEATURE_GATES};

/// The HPA controller's tuning, as kube-controller-manager's flags set it.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerConfig {
    /// How often each HPA is reconciled.
    pub sync_period: Duration,
    /// Ratio band around 1.0 inside which nothing scales.
    pub tolerance: f64,
    /// How far back the legacy (no `behavior`) scale-down looks for the
    /// highest recommendation.
    pub downscale_stabilization: Duration,
    /// After a pod starts, how long its CPU samples are doubted.
    pub cpu_initialization_period: Duration,
    /// After a pod starts, how long a readiness flip still counts as "never ready".
    pub initial_readiness_delay: Duration,
    /// Reconcile workers.
    pub workers: usize,
    /// Decide and record, never write scale or status.
    pub dry_run: bool,
    /// Upstream feature gates.
    pub feature_gates: FeatureGates,
    /// Decision traces kept per HPA for `/debug/decisions` and the harness.
    pub decisions_kept: usize,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            sync_period: Duration::from_secs(15),
            tolerance: 0.1,
            downscale_stabilization: Duration::from_secs(300),
            cpu_initialization_period: Duration::from_secs(300),
            initial_readiness_delay: Duration::from_secs(30),
            workers: 5,
            dry_run: false,
            feature_gates: FeatureGates::default(),
            decisions_kept: 10,
        }
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
    fn defaults_are_upstreams() {
        let c = ControllerConfig::default();
        assert_eq!(c.sync_period, Duration::from_secs(15));
        assert!((c.tolerance - 0.1).abs() < f64::EPSILON);
        assert_eq!(c.downscale_stabilization, Duration::from_secs(300));
        assert_eq!(c.cpu_initialization_period, Duration::from_secs(300));
        assert_eq!(c.initial_readiness_delay, Duration::from_secs(30));
        assert_eq!(c.workers, 5);
        assert!(c.feature_gates.enabled("HPAConfigurableTolerance"));
        assert!(!c.feature_gates.enabled("HPAScaleToZero"));
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
        c.set_flag(
            "feature-gates",
            "HPAScaleToZero=true,HPAConfigurableTolerance=false",
        )
        .unwrap();
        assert_eq!(c.sync_period, Duration::from_secs(30));
        assert!((c.tolerance - 0.2).abs() < f64::EPSILON);
        assert_eq!(c.workers, 2);
        assert!(c.feature_gates.enabled("HPAScaleToZero"));
        assert!(!c.feature_gates.enabled("HPAConfigurableTolerance"));
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
