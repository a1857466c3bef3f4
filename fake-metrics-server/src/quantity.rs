//! Quantities as scripts write them.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A non-negative Kubernetes quantity, checked with `hpa_core::quantity`
/// and kept as written so the server answers exactly what the script says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value(pub String);

impl Value {
    /// Checks `text` as a non-negative quantity.
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        hpa_core::quantity::Quantity::parse_non_negative(trimmed)
            .map_err(|e| format!("bad quantity {text:?}: {e}"))?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The quantity for the wire.
    pub fn to_quantity(&self) -> k8s_openapi::apimachinery::pkg::api::resource::Quantity {
        k8s_openapi::apimachinery::pkg::api::resource::Quantity(self.0.clone())
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a quantity such as 250m, 64Mi or 100")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
                Value::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
                Value::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
                Value::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
                Value::parse(&v.to_string()).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}
