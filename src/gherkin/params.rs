//! Typed captures of the step language: `{duration}`, `{quantity}`, value
//! lists (`50 and 100`, `10, 20 and 30`) and workload kinds.
//!
//! Parsing happens once, when cucumber matches a step, so a malformed value
//! fails that step with a message naming the text.

use std::fmt;
use std::str::FromStr;

use jiff::SignedDuration;

/// Why a capture did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// Not a duration such as `30s`, `5m`, `1m30s`, `1h`.
    #[error("bad duration {text:?}: {reason}")]
    Duration { text: String, reason: String },
    /// Not a Kubernetes quantity.
    #[error("bad quantity {text:?}: {reason}")]
    Quantity { text: String, reason: String },
    /// Not `deployment`, `statefulset` or `replicaset`.
    #[error("unknown workload kind {text:?} (expected deployment, statefulset or replicaset)")]
    Kind { text: String },
}

/// A span of (virtual) time: `30s`, `5m`, `1m30s`, `1h`, `0s`, or in
/// words, `15 seconds`, `1 minute`, `2 hours`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, cucumber::Parameter)]
#[param(
    name = "duration",
    regex = r"\d+(?:\.\d+)?(?:ns|us|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|us|ms|s|m|h))*|\d+(?:\.\d+)? (?:seconds?|minutes?|hours?)"
)]
pub struct Duration(pub SignedDuration);

impl FromStr for Duration {
    type Err = ParamError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_duration(text).map(Self)
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hpa_core::go_duration::format(self.0))
    }
}

/// Parses a non-negative Go-style duration (`0` alone is accepted too), or
/// one number and a unit in words (`15 seconds`, `1 minute`, `2 hours`).
pub fn parse_duration(text: &str) -> Result<SignedDuration, ParamError> {
    let text = text.trim();
    let go = in_go_units(text);
    let d = hpa_core::go_duration::parse(go.as_deref().unwrap_or(text)).map_err(|e| {
        ParamError::Duration {
            text: text.to_owned(),
            reason: e.to_string(),
        }
    })?;
    if d.is_negative() {
        return Err(ParamError::Duration {
            text: text.to_owned(),
            reason: "a span of time cannot be negative".to_owned(),
        });
    }
    Ok(d)
}

/// `15 seconds` as Go writes it (`15s`); `None` unless the text is one
/// number and a unit in words.
fn in_go_units(text: &str) -> Option<String> {
    let (number, unit) = text.split_once(' ')?;
    let unit = match unit.trim_start() {
        "second" | "seconds" => "s",
        "minute" | "minutes" => "m",
        "hour" | "hours" => "h",
        _ => return None,
    };
    Some(format!("{number}{unit}"))
}

/// A Kubernetes quantity as written (`500m`, `60`, `1k`, `2Gi`, `1.5`),
/// checked on parse.
#[derive(Debug, Clone, PartialEq, Eq, cucumber::Parameter)]
#[param(
    name = "quantity",
    regex = r"[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+|[numkMGTPE]i?|Ki)?"
)]
pub struct Quantity(pub String, pub hpa_core::quantity::Quantity);

impl Quantity {
    /// The checked quantity.
    pub fn value(&self) -> hpa_core::quantity::Quantity {
        self.1
    }
}

impl FromStr for Quantity {
    type Err = ParamError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_quantity(text).map(|q| Self(text.trim().to_owned(), q))
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a quantity string.
pub fn parse_quantity(text: &str) -> Result<hpa_core::quantity::Quantity, ParamError> {
    hpa_core::quantity::Quantity::parse(text.trim()).map_err(|e| ParamError::Quantity {
        text: text.to_owned(),
        reason: e.to_string(),
    })
}

/// A list of quantities: `50`, `50 and 100`, `10, 20 and 30`.
#[derive(Debug, Clone, PartialEq, Eq, cucumber::Parameter)]
#[param(name = "values", regex = r"[^\s,]+(?:(?:, | and )[^\s,]+)*")]
pub struct Values(pub Vec<Quantity>);

impl FromStr for Values {
    type Err = ParamError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        split_list(text)
            .into_iter()
            .map(str::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }
}

/// Splits `a, b and c` into its items.
pub fn split_list(text: &str) -> Vec<&str> {
    text.split(',')
        .flat_map(|part| part.split(" and "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The kinds of scale target a step can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, cucumber::Parameter)]
#[param(name = "kind", regex = "deployment|statefulset|replicaset")]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
    ReplicaSet,
}

impl WorkloadKind {
    /// The Kubernetes kind.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Deployment => "Deployment",
            Self::StatefulSet => "StatefulSet",
            Self::ReplicaSet => "ReplicaSet",
        }
    }

    /// The word used in steps.
    pub fn word(self) -> &'static str {
        match self {
            Self::Deployment => "deployment",
            Self::StatefulSet => "statefulset",
            Self::ReplicaSet => "replicaset",
        }
    }
}

impl FromStr for WorkloadKind {
    type Err = ParamError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "deployment" => Ok(Self::Deployment),
            "statefulset" => Ok(Self::StatefulSet),
            "replicaset" => Ok(Self::ReplicaSet),
            _ => Err(ParamError::Kind {
                text: text.to_owned(),
            }),
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// Undoes the escapes a `{string}` capture may contain (`\"`, `\\`).
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_the_go_way() {
        assert_eq!(
            parse_duration("1m30s").unwrap(),
            SignedDuration::from_secs(90)
        );
        assert_eq!(parse_duration("0s").unwrap(), SignedDuration::ZERO);
        assert_eq!(
            parse_duration("1h").unwrap(),
            SignedDuration::from_secs(3600)
        );
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn durations_parse_in_words_too() {
        for (text, secs) in [
            ("15 seconds", 15),
            ("1 second", 1),
            ("2 minutes", 120),
            ("1 minute", 60),
            ("1 hour", 3600),
            ("0 seconds", 0),
        ] {
            assert_eq!(
                parse_duration(text).unwrap(),
                SignedDuration::from_secs(secs),
                "{text}"
            );
        }
        assert_eq!(
            parse_duration("1.5 minutes").unwrap(),
            SignedDuration::from_secs(90)
        );
        assert!(parse_duration("15 secs").is_err());
        assert!(parse_duration("fifteen seconds").is_err());
        assert!(parse_duration("-1 second").is_err());
    }

    #[test]
    fn a_bad_or_negative_duration_names_the_text_and_why() {
        assert_eq!(
            parse_duration("5").unwrap_err().to_string(),
            r#"bad duration "5": time: missing unit in duration "5""#
        );
        assert_eq!(
            parse_duration("-1s").unwrap_err().to_string(),
            r#"bad duration "-1s": a span of time cannot be negative"#
        );
        assert_eq!(
            Duration(SignedDuration::from_millis(1500)).to_string(),
            "1.5s"
        );
    }

    #[test]
    fn value_lists_split_on_commas_and_and() {
        let v: Values = "10, 20 and 30".parse().unwrap();
        let texts: Vec<_> = v.0.iter().map(|q| q.0.as_str()).collect();
        assert_eq!(texts, ["10", "20", "30"]);
        let one: Values = "500m".parse().unwrap();
        assert_eq!(one.0.len(), 1);
    }

    #[test]
    fn a_bad_quantity_in_a_list_names_the_text() {
        let err = "10 and ten".parse::<Values>().unwrap_err();
        assert!(err.to_string().contains("\"ten\""), "{err}");
    }

    #[test]
    fn escaped_quotes_are_undone() {
        assert_eq!(unescape(r#"a{x=\"1\"}"#), r#"a{x="1"}"#);
    }
}
