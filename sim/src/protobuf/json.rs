//! Kubernetes JSON for k8s-pb's prost messages, both ways.
//!
//! k8s-pb carries the protobuf types but no serde, so each message gets a
//! [`PbJson`] impl from the `messages!` lines of `types.rs` (generated from
//! k8s-pb and k8s-openapi by `sim/codegen/pbjson.py`). The few types whose
//! JSON is not their fields (times, quantities, int-or-string, raw JSON)
//! are written here.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1::{Duration, FieldsV1, MicroTime, Time};
use k8s_pb::apimachinery::pkg::runtime::RawExtension;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

/// A value with a Kubernetes JSON form.
pub trait PbJson: Sized {
    /// The JSON, `None` when the value is absent (unset or empty list/map).
    fn to_json(&self) -> Option<Value>;
    /// Reads the JSON at `path` (for error messages); `null` is "absent".
    fn from_json(v: &Value, path: &str) -> Result<Self, String>;

    /// A repeated field of these: a JSON list (bytes override: base64).
    fn list_to_json(items: &[Self]) -> Option<Value> {
        if items.is_empty() {
            return None;
        }
        Some(Value::Array(
            items
                .iter()
                .map(|x| x.to_json().unwrap_or(Value::Null))
                .collect(),
        ))
    }

    /// Reads a repeated field of these.
    fn list_from_json(v: &Value, path: &str) -> Result<Vec<Self>, String> {
        match v {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, x)| Self::from_json(x, &format!("{path}[{i}]")))
                .collect(),
            _ => Err(format!("{path}: expected a list")),
        }
    }
}

/// One `PbJson` impl per message, from its fields' JSON names.
macro_rules! messages {
    ($( $ty:path { $($field:ident => $json:literal),* $(,)? } )*) => {
        $(
        impl $crate::protobuf::json::PbJson for $ty {
            fn to_json(&self) -> Option<serde_json::Value> {
                #[allow(unused_mut)]
                let mut m = serde_json::Map::new();
                $(
                if let Some(v) = $crate::protobuf::json::PbJson::to_json(&self.$field) {
                    m.insert($json.into(), v);
                }
                )*
                Some(serde_json::Value::Object(m))
            }
            fn from_json(v: &serde_json::Value, path: &str) -> Result<Self, String> {
                #[allow(unused_variables)]
                let obj = v
                    .as_object()
                    .ok_or_else(|| format!("{path}: expected an object"))?;
                Ok(Self {
                    $(
                    $field: $crate::protobuf::json::PbJson::from_json(
                        obj.get($json).unwrap_or(&serde_json::Value::Null),
                        &format!("{path}.{}", $json),
                    )?,
                    )*
                })
            }
        }
        )*
    };
}
pub(crate) use messages;

impl<T: PbJson> PbJson for Option<T> {
    fn to_json(&self) -> Option<Value> {
        self.as_ref().and_then(T::to_json)
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        if v.is_null() {
            Ok(None)
        } else {
            T::from_json(v, path).map(Some)
        }
    }
}

impl<T: PbJson> PbJson for Box<T> {
    fn to_json(&self) -> Option<Value> {
        T::to_json(self)
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        T::from_json(v, path).map(Box::new)
    }
}

impl<T: PbJson> PbJson for Vec<T> {
    fn to_json(&self) -> Option<Value> {
        T::list_to_json(self)
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        T::list_from_json(v, path)
    }
}

/// Bytes travel as base64 strings in JSON (`caBundle`).
impl PbJson for u8 {
    fn to_json(&self) -> Option<Value> {
        Some(Value::from(*self))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        v.as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .ok_or_else(|| format!("{path}: expected a byte"))
    }
    fn list_to_json(items: &[Self]) -> Option<Value> {
        use base64::Engine as _;
        (!items.is_empty())
            .then(|| Value::String(base64::engine::general_purpose::STANDARD.encode(items)))
    }
    fn list_from_json(v: &Value, path: &str) -> Result<Vec<Self>, String> {
        use base64::Engine as _;
        match v {
            Value::Null => Ok(Vec::new()),
            Value::String(s) => base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| format!("{path}: not base64: {e}")),
            _ => Err(format!("{path}: expected a base64 string")),
        }
    }
}

impl<T: PbJson> PbJson for BTreeMap<String, T> {
    fn to_json(&self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        Some(Value::Object(
            self.iter()
                .map(|(k, x)| (k.clone(), x.to_json().unwrap_or(Value::Null)))
                .collect(),
        ))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        match v {
            Value::Null => Ok(BTreeMap::new()),
            Value::Object(m) => m
                .iter()
                .map(|(k, x)| Ok((k.clone(), T::from_json(x, &format!("{path}.{k}"))?)))
                .collect(),
            _ => Err(format!("{path}: expected an object")),
        }
    }
}

impl PbJson for String {
    fn to_json(&self) -> Option<Value> {
        Some(Value::String(self.clone()))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("{path}: expected a string"))
    }
}

impl PbJson for bool {
    fn to_json(&self) -> Option<Value> {
        Some(Value::Bool(*self))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        v.as_bool()
            .ok_or_else(|| format!("{path}: expected true or false"))
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl PbJson for $t {
            fn to_json(&self) -> Option<Value> {
                Some(Value::from(*self))
            }
            fn from_json(v: &Value, path: &str) -> Result<Self, String> {
                v.as_i64()
                    .and_then(|n| <$t>::try_from(n).ok())
                    .ok_or_else(|| format!("{path}: expected an integer"))
            }
        }
    )*};
}
integers!(i32, i64);

impl PbJson for u32 {
    fn to_json(&self) -> Option<Value> {
        Some(Value::from(*self))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{path}: expected a non-negative integer"))
    }
}

impl PbJson for f64 {
    fn to_json(&self) -> Option<Value> {
        serde_json::Number::from_f64(*self).map(Value::Number)
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        v.as_f64()
            .ok_or_else(|| format!("{path}: expected a number"))
    }
}

fn timestamp(seconds: Option<i64>, nanos: Option<i32>) -> Option<Timestamp> {
    Timestamp::new(seconds.unwrap_or(0), nanos.unwrap_or(0)).ok()
}

fn parse_time(v: &Value, path: &str) -> Result<Timestamp, String> {
    v.as_str()
        .and_then(|s| s.parse::<Timestamp>().ok())
        .ok_or_else(|| format!("{path}: expected an RFC 3339 time"))
}

impl PbJson for Time {
    fn to_json(&self) -> Option<Value> {
        // Go's zero time (no seconds) is how an unset metav1.Time travels.
        self.seconds?;
        let t = timestamp(self.seconds, None)?;
        Some(Value::String(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        let t = parse_time(v, path)?;
        Ok(Self {
            seconds: Some(t.as_second()),
            nanos: Some(0),
        })
    }
}

impl PbJson for MicroTime {
    fn to_json(&self) -> Option<Value> {
        self.seconds?;
        let t = timestamp(self.seconds, self.nanos)?;
        Some(Value::String(
            t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string(),
        ))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        let t = parse_time(v, path)?;
        Ok(Self {
            seconds: Some(t.as_second()),
            nanos: Some(t.subsec_nanosecond() / 1000 * 1000),
        })
    }
}

impl PbJson for Duration {
    fn to_json(&self) -> Option<Value> {
        let nanos = self.duration?;
        let d = jiff::SignedDuration::from_nanos(nanos);
        Some(Value::String(format!("{}s", d.as_secs_f64())))
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        let text = v
            .as_str()
            .ok_or_else(|| format!("{path}: expected a duration"))?;
        let d: jiff::SignedDuration = text
            .parse()
            .map_err(|e| format!("{path}: bad duration {text:?}: {e}"))?;
        Ok(Self {
            duration: Some(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)),
        })
    }
}

impl PbJson for Quantity {
    fn to_json(&self) -> Option<Value> {
        self.string.clone().map(Value::String)
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        let string = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return Err(format!("{path}: expected a quantity")),
        };
        Ok(Self {
            string: Some(string),
        })
    }
}

impl PbJson for IntOrString {
    fn to_json(&self) -> Option<Value> {
        match self.r#type {
            Some(1) => self.str_val.clone().map(Value::String),
            _ => Some(Value::from(self.int_val.unwrap_or(0))),
        }
    }
    fn from_json(v: &Value, path: &str) -> Result<Self, String> {
        match v {
            Value::String(s) => Ok(Self {
                r#type: Some(1),
                int_val: None,
                str_val: Some(s.clone()),
            }),
            _ => Ok(Self {
                r#type: Some(0),
                int_val: Some(i32::from_json(v, path)?),
                str_val: None,
            }),
        }
    }
}

fn raw_json(raw: Option<&Vec<u8>>) -> Option<Value> {
    raw.and_then(|r| serde_json::from_slice(r).ok())
}

fn to_raw(v: &Value) -> Option<Vec<u8>> {
    serde_json::to_vec(v).ok()
}

impl PbJson for FieldsV1 {
    fn to_json(&self) -> Option<Value> {
        raw_json(self.raw.as_ref())
    }
    fn from_json(v: &Value, _path: &str) -> Result<Self, String> {
        Ok(Self { raw: to_raw(v) })
    }
}

impl PbJson for RawExtension {
    fn to_json(&self) -> Option<Value> {
        raw_json(self.raw.as_ref())
    }
    fn from_json(v: &Value, _path: &str) -> Result<Self, String> {
        Ok(Self { raw: to_raw(v) })
    }
}
