//! The Kubernetes release whose HPA semantics apply.
//!
//! One setting decides the feature-gate defaults and locks
//! ([`crate::config::FeatureGates`]) and the behaviours that changed between
//! releases without a gate (error texts, overflow handling, pod overhead).
//! The default is the newest stable release.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A supported Kubernetes minor release.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub enum KubernetesVersion {
    /// v1.35 (December 2025), the oldest release upstream still supports.
    #[serde(rename = "1.35")]
    V1_35,
    /// v1.36 (April 2026).
    #[serde(rename = "1.36")]
    V1_36,
    /// v1.37 (August 2026), the newest stable release.
    #[default]
    #[serde(rename = "1.37")]
    V1_37,
    /// v1.38, in alpha: what `master` does now.
    #[serde(rename = "1.38")]
    V1_38,
}

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not a `MAJOR.MINOR[.PATCH][-PRE]` version.
    #[error("Kubernetes version {0:?} does not parse (expected e.g. 1.37, v1.36.2)")]
    Syntax(String),
    /// A well-formed version this project does not model.
    #[error(
        "Kubernetes version {input:?} is not supported (supported: {})",
        KubernetesVersion::SUPPORTED_TEXT
    )]
    Unsupported {
        /// What was given.
        input: String,
        /// Its major and minor numbers.
        major: u32,
        minor: u32,
    },
}

impl KubernetesVersion {
    /// Every supported release, oldest first.
    pub const ALL: [KubernetesVersion; 4] = [Self::V1_35, Self::V1_36, Self::V1_37, Self::V1_38];

    /// The supported releases as help and errors list them.
    pub const SUPPORTED_TEXT: &'static str = "1.35, 1.36, 1.37, 1.38";

    /// The newest stable release (the default everywhere).
    pub const LATEST_STABLE: KubernetesVersion = Self::V1_37;

    /// `1.35`, `1.36`, `1.37`, `1.38`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1_35 => "1.35",
            Self::V1_36 => "1.36",
            Self::V1_37 => "1.37",
            Self::V1_38 => "1.38",
        }
    }

    /// The minor number.
    pub fn minor(self) -> u32 {
        match self {
            Self::V1_35 => 35,
            Self::V1_36 => 36,
            Self::V1_37 => 37,
            Self::V1_38 => 38,
        }
    }

    /// Whether this release is still a pre-release (alpha or beta).
    pub fn is_prerelease(self) -> bool {
        self == Self::V1_38
    }

    /// The tag that pins a scenario to this release (`k8s-1.36`, without `@`).
    pub fn tag(self) -> String {
        format!("k8s-{}", self.as_str())
    }

    /// The release a tag pins (`k8s-1.36` or `@k8s-1.36`), if it is one.
    pub fn from_tag(tag: &str) -> Option<Result<Self, VersionError>> {
        let rest = tag.trim_start_matches('@').strip_prefix("k8s-")?;
        Some(rest.parse())
    }

    /// Reads the major and minor numbers of a version as an API server's
    /// `/version` or a user gives it: `1.37`, `v1.36.2`, `1.38.0-alpha.2`,
    /// `v1.36.2+k3s1`; anything else is a syntax error.
    pub fn parse_numbers(input: &str) -> Result<(u32, u32), VersionError> {
        let syntax = || VersionError::Syntax(input.to_owned());
        let text = input.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        // Pre-release and build suffixes do not change the minor release.
        let core = text.split(['-', '+']).next().unwrap_or_default();
        let mut parts = core.split('.');
        let number = |part: Option<&str>| -> Result<u32, VersionError> {
            let part = part.ok_or_else(syntax)?;
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            part.parse().map_err(|_| syntax())
        };
        let major = number(parts.next())?;
        let minor = number(parts.next())?;
        if let Some(patch) = parts.next() {
            number(Some(patch))?;
        }
        if parts.next().is_some() {
            return Err(syntax());
        }
        Ok((major, minor))
    }

    /// The supported release of `major.minor`, if there is one.
    pub fn of_numbers(major: u32, minor: u32) -> Option<Self> {
        if major != 1 {
            return None;
        }
        Self::ALL.into_iter().find(|v| v.minor() == minor)
    }

    /// The semantics to use for a server reporting `major.minor`: its own
    /// release when supported, else the nearest supported one, with a warning
    /// that says so.
    pub fn for_server(major: u32, minor: u32) -> (Self, Option<String>) {
        if let Some(v) = Self::of_numbers(major, minor) {
            return (v, None);
        }
        let (nearest, side) = if major < 1 || (major == 1 && minor < Self::V1_35.minor()) {
            (Self::V1_35, "older than")
        } else {
            (Self::V1_38, "newer than")
        };
        (
            nearest,
            Some(format!(
                "the cluster runs Kubernetes {major}.{minor}, {side} every supported release ({}); using {} semantics (pass --kubernetes-version to choose)",
                Self::SUPPORTED_TEXT,
                nearest.as_str()
            )),
        )
    }
}

/// Behaviours that changed between releases without a feature gate. Each
/// names the upstream change; where the Go code of the change was not seen,
/// the release follows issue 28's table and the doc says so.
impl KubernetesVersion {
    /// Object-metric fetch errors read `unable to get metric <name> on <Kind>
    /// <namespace>/<name>: <err>` (1.37, k/k #139029); earlier releases pass
    /// `fmt.Errorf`'s arguments out of order. The fixed Go line was not
    /// found (every stored `replica_calculator.go` has the old one): the
    /// release follows issue 28.
    pub fn object_metric_error_in_order(self) -> bool {
        self >= Self::V1_37
    }

    /// `Quantity.MilliValue()` saturates at the int64 bounds (1.38, k/k
    /// #141305); earlier releases return what Go's int64 arithmetic gives,
    /// 0 for KEDA's `100E` ([`Quantity::go_milli_value_through_1_37`](crate::quantity::Quantity::go_milli_value_through_1_37)).
    pub fn saturating_milli_value(self) -> bool {
        self >= Self::V1_38
    }

    /// A metric value in thousandths, as this release's `MilliValue`
    /// reads it.
    pub fn milli_value(self, q: &crate::quantity::Quantity) -> i64 {
        if self.saturating_milli_value() {
            q.milli_value()
        } else {
            q.go_milli_value_through_1_37()
        }
    }

    /// Every float-to-int32 replica conversion saturates at `MaxInt32` on
    /// every architecture (1.38, k/k #141397, one `ceilToInt32` helper);
    /// earlier releases convert as Go on amd64 (out of range or NaN:
    /// `MinInt32`) except where upstream had its own cap.
    pub fn saturating_int32(self) -> bool {
        self >= Self::V1_38
    }

    /// Utilization saturates at the int32 bounds instead of failing the
    /// metric (1.38, issue 28 after k/k #142192, a PR still open when last
    /// seen: unverified in merged code).
    pub fn saturating_utilization(self) -> bool {
        self >= Self::V1_38
    }

    /// Under `HPAScaleToZero`, the `ScaledToZero` condition decides
    /// scaling at zero replicas (1.36, k/k #135118, merged; its diff seen in
    /// the pull request): a scale to zero sets it True, every other rescale
    /// False, and only a target the HPA itself scaled to zero is autoscaled
    /// again; a target a person set to zero stays disabled, and turning the
    /// gate off removes the condition. Through 1.35 no condition exists: a
    /// target at zero replicas is autoscaled whenever `minReplicas` is 0,
    /// whoever set it to zero (upstream's earlier rule `scale.Spec.Replicas
    /// == 0 && minReplicas != 0` disables it otherwise, read in the code
    /// before that pull request).
    pub fn scaled_to_zero_condition(self) -> bool {
        self >= Self::V1_36
    }

    /// An HPA written through autoscaling/v1 keeps an Object metric's
    /// AverageValue target as it is (1.36, k/k #137856: the fix's diff of
    /// `Convert_v1_ObjectMetricSource_To_autoscaling_ObjectMetricSource`
    /// read). Through 1.35 the conversion also sets the target's `value` to
    /// v1's `targetValue`, which v1 always writes ("0" when unset), and
    /// validation refuses it: an autoscaling/v2 HPA with such a metric
    /// cannot be created or updated through v1.
    pub fn v1_keeps_object_average_value_targets(self) -> bool {
        self >= Self::V1_36
    }

    /// Pod-level requests leave `spec.overhead` out (1.38, k/k #142154; the
    /// merged code was not seen, the release follows issue 28); earlier
    /// releases add it, as component-helpers' `PodRequests` with default
    /// options does.
    pub fn pod_level_requests_exclude_overhead(self) -> bool {
        self >= Self::V1_38
    }

    /// An AverageValue Object or External metric at 0 status replicas
    /// reports the raw total instead of dividing by zero (1.38, k/k
    /// #140958, the fix issue #140956 proposes; the merged code was not
    /// seen). Earlier releases show `-9223372036854775808m` (Go's
    /// `int64(+Inf)` on amd64).
    pub fn per_pod_average_at_zero_replicas_is_the_total(self) -> bool {
        self >= Self::V1_38
    }
}

impl FromStr for KubernetesVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (major, minor) = Self::parse_numbers(s)?;
        Self::of_numbers(major, minor).ok_or_else(|| VersionError::Unsupported {
            input: s.to_owned(),
            major,
            minor,
        })
    }
}

impl fmt::Display for KubernetesVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a comma-separated list of versions (`1.36,1.37`), in the order
/// given, without repeats.
pub fn parse_list(input: &str) -> Result<Vec<KubernetesVersion>, VersionError> {
    let mut out = Vec::new();
    for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v: KubernetesVersion = part.parse()?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        return Err(VersionError::Syntax(input.to_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_newest_stable_release() {
        assert_eq!(KubernetesVersion::default(), KubernetesVersion::V1_37);
        assert_eq!(KubernetesVersion::LATEST_STABLE, KubernetesVersion::V1_37);
        assert!(!KubernetesVersion::V1_37.is_prerelease());
        assert!(KubernetesVersion::V1_38.is_prerelease());
    }

    #[test]
    fn versions_parse_as_users_and_servers_write_them() {
        use KubernetesVersion::*;
        for (text, v) in [
            ("1.35", V1_35),
            ("v1.35.3", V1_35),
            ("1.36", V1_36),
            ("v1.36", V1_36),
            ("1.36.2", V1_36),
            ("v1.37.0", V1_37),
            (" 1.37 ", V1_37),
            ("v1.38.0-alpha.2", V1_38),
            ("v1.36.2+k3s1", V1_36),
        ] {
            assert_eq!(text.parse::<KubernetesVersion>(), Ok(v), "{text}");
        }
        for bad in ["", "1", "1.", "x.y", "1.36.x", "1.36.2.1", "v", "1.-36"] {
            assert!(
                matches!(
                    bad.parse::<KubernetesVersion>(),
                    Err(VersionError::Syntax(_))
                ),
                "{bad:?}"
            );
        }
        let err = "1.34".parse::<KubernetesVersion>().unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"Kubernetes version "1.34" is not supported (supported: 1.35, 1.36, 1.37, 1.38)"#
        );
    }

    #[test]
    fn a_server_outside_the_range_gets_the_nearest_release_and_a_warning() {
        use KubernetesVersion::*;
        assert_eq!(KubernetesVersion::for_server(1, 37), (V1_37, None));
        assert_eq!(KubernetesVersion::for_server(1, 35), (V1_35, None));
        let (v, warning) = KubernetesVersion::for_server(1, 34);
        assert_eq!(v, V1_35);
        let warning = warning.unwrap();
        assert!(
            warning.contains("1.34") && warning.contains("older"),
            "{warning}"
        );
        let (v, warning) = KubernetesVersion::for_server(1, 40);
        assert_eq!(v, V1_38);
        assert!(warning.unwrap().contains("newer"));
    }

    #[test]
    fn tags_pin_versions() {
        assert_eq!(
            KubernetesVersion::from_tag("@k8s-1.36"),
            Some(Ok(KubernetesVersion::V1_36))
        );
        assert_eq!(
            KubernetesVersion::from_tag("k8s-1.38").unwrap(),
            Ok(KubernetesVersion::V1_38)
        );
        assert!(KubernetesVersion::from_tag("@k8s-2.0").unwrap().is_err());
        assert_eq!(KubernetesVersion::from_tag("@slow"), None);
        assert_eq!(KubernetesVersion::V1_36.tag(), "k8s-1.36");
    }

    #[test]
    fn each_ungated_change_starts_in_the_release_that_made_it() {
        use KubernetesVersion::*;
        // (release, the ScaledToZero condition, object-metric text in
        // order, the 1.38 arithmetic)
        for (v, zero_condition, in_order, v1_38) in [
            (V1_35, false, false, false),
            (V1_36, true, false, false),
            (V1_37, true, true, false),
            (V1_38, true, true, true),
        ] {
            assert_eq!(v.scaled_to_zero_condition(), zero_condition, "{v}");
            assert_eq!(v.object_metric_error_in_order(), in_order, "{v}");
            assert_eq!(v.saturating_int32(), v1_38, "{v}");
            assert_eq!(v.saturating_utilization(), v1_38, "{v}");
            assert_eq!(v.pod_level_requests_exclude_overhead(), v1_38, "{v}");
            assert_eq!(
                v.per_pod_average_at_zero_replicas_is_the_total(),
                v1_38,
                "{v}"
            );
        }
    }

    #[test]
    fn lists_keep_order_and_drop_repeats() {
        use KubernetesVersion::*;
        assert_eq!(parse_list("1.36, 1.37,1.36"), Ok(vec![V1_36, V1_37]));
        assert_eq!(parse_list("1.35,1.36"), Ok(vec![V1_35, V1_36]));
        assert!(parse_list("").is_err());
        assert!(parse_list("1.36,1.99").is_err());
    }
}
