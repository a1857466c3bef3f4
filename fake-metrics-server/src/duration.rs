//! Durations as scripts write them: Go-style spans (`30s`, `1m30s`) and
//! sample times given as an age or an instant.

use std::fmt;

use jiff::{SignedDuration, Timestamp};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A duration written the Go way (`30s`, `1m30s`, `500ms`, `0s`); a bare
/// number means seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Duration(pub SignedDuration);

impl Duration {
    /// Parses a Go-style duration. Negative durations are refused.
    pub fn parse(text: &str) -> Result<Self, String> {
        let d = parse_go_duration(text.trim())?;
        if d.is_negative() {
            return Err(format!("negative duration {text:?}"));
        }
        Ok(Self(d))
    }

    /// Whole seconds, rounded down.
    pub fn whole_seconds(self) -> i64 {
        self.0.as_secs()
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_go_duration(self.0))
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as 30s, 1m30s or 500ms")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                Duration::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
                if v < 0 {
                    return Err(E::custom(format!("negative duration {v}")));
                }
                Ok(Duration(SignedDuration::from_secs(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
                let secs = i64::try_from(v).map_err(|_| E::custom("duration too large"))?;
                Ok(Duration(SignedDuration::from_secs(secs)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses Go's `time.ParseDuration` syntax (units ns, us, µs, ms, s, m, h);
/// the error is Go's message with a hint.
pub fn parse_go_duration(text: &str) -> Result<SignedDuration, String> {
    hpa_core::go_duration::parse(text).map_err(|e| format!("{e} (expected e.g. 30s, 1m30s, 500ms)"))
}

/// Formats a duration as Go's `Duration.String()` does (`30s`, `1m0s`,
/// `1h2m3s`, `500ms`), which is what `window` holds on the wire.
pub fn format_go_duration(d: SignedDuration) -> String {
    hpa_core::go_duration::format(d)
}

/// When a sample was taken: an instant, or a duration before "now" on the
/// server's clock (`0s` is now).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleTime {
    /// That long before the request.
    Ago(Duration),
    /// A fixed instant.
    At(Timestamp),
}

impl SampleTime {
    /// The instant this names, given the server's `now`.
    pub fn resolve(self, now: Timestamp) -> Timestamp {
        match self {
            Self::Ago(d) => now.checked_sub(d.0).unwrap_or(now),
            Self::At(t) => t,
        }
    }
}

impl Serialize for SampleTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Ago(d) => d.serialize(s),
            Self::At(t) => s.serialize_str(&t.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for SampleTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SampleTime;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration ago (10s) or an RFC 3339 instant")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SampleTime, E> {
                if let Ok(t) = v.trim().parse::<Timestamp>() {
                    return Ok(SampleTime::At(t));
                }
                Duration::parse(v).map(SampleTime::Ago).map_err(|_| {
                    E::custom(format!(
                        "bad timestamp {v:?} (expected a duration ago such as 10s, or an RFC 3339 instant)"
                    ))
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SampleTime, E> {
                let secs = i64::try_from(v).map_err(|_| E::custom("timestamp too large"))?;
                Ok(SampleTime::Ago(Duration(SignedDuration::from_secs(secs))))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SampleTime, E> {
                if v < 0 {
                    return Err(E::custom(format!("negative timestamp age {v}")));
                }
                Ok(SampleTime::Ago(Duration(SignedDuration::from_secs(v))))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_durations_name_gos_error_and_refuse_negatives() {
        assert_eq!(
            parse_go_duration("5").unwrap_err(),
            r#"time: missing unit in duration "5" (expected e.g. 30s, 1m30s, 500ms)"#
        );
        assert_eq!(parse_go_duration("-1m"), Ok(SignedDuration::from_secs(-60)));
        assert_eq!(
            Duration::parse("-1m").unwrap_err(),
            r#"negative duration "-1m""#
        );
        assert_eq!(Duration::parse(" 0 "), Ok(Duration(SignedDuration::ZERO)));
    }

    #[test]
    fn go_durations_parse_and_format_like_go() {
        assert_eq!(
            parse_go_duration("1m30s").unwrap(),
            SignedDuration::from_secs(90)
        );
        assert_eq!(
            parse_go_duration("500ms").unwrap(),
            SignedDuration::from_millis(500)
        );
        assert_eq!(
            parse_go_duration("1.5h").unwrap(),
            SignedDuration::from_secs(5400)
        );
        assert!(parse_go_duration("5").is_err());
        assert!(parse_go_duration("5 parsecs").is_err());
        assert_eq!(format_go_duration(SignedDuration::from_secs(30)), "30s");
        assert_eq!(format_go_duration(SignedDuration::from_secs(60)), "1m0s");
        assert_eq!(
            format_go_duration(SignedDuration::from_secs(3723)),
            "1h2m3s"
        );
        assert_eq!(
            format_go_duration(SignedDuration::from_millis(15_011)),
            "15.011s"
        );
        assert_eq!(
            format_go_duration(SignedDuration::from_millis(500)),
            "500ms"
        );
        assert_eq!(format_go_duration(SignedDuration::ZERO), "0s");
    }
}
