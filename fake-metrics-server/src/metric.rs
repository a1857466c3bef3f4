//! A custom metric value as scripts write it: a bare quantity or a series
//! with labels, timestamp and window.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::duration::{Duration, SampleTime};
use crate::labels::Labels;
use crate::quantity::Value;

/// A custom metric value: either a bare quantity (`30`) or the long form
/// with labels, timestamp and window.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MetricSpec {
    /// Just the value.
    Value(Value),
    /// Value with details.
    Series(MetricSeries),
}

/// The long form of a [`MetricSpec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MetricSeries {
    /// The value.
    pub value: Value,
    /// Labels of the series, matched by `metricLabelSelector`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: Labels,
    /// Sample time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<SampleTime>,
    /// Window (`windowSeconds` on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Duration>,
}

impl MetricSpec {
    /// The long form, with empty details for a bare value.
    pub fn series(&self) -> MetricSeries {
        match self {
            Self::Value(v) => MetricSeries {
                value: v.clone(),
                labels: Labels::new(),
                timestamp: None,
                window: None,
            },
            Self::Series(s) => s.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for MetricSpec {
    // Hand-written rather than `untagged` so that errors inside the long
    // form keep their message and position.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetricSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a quantity, or a map with value, labels, timestamp, window")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MetricSpec, E> {
                Value::parse(v).map(MetricSpec::Value).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MetricSpec, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MetricSpec, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MetricSpec, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MetricSpec, A::Error> {
                MetricSeries::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(MetricSpec::Series)
            }
        }
        d.deserialize_any(V)
    }
}
