//! What both readers of a list body give (the scanner, [`scan`](super::scan),
//! and the slim serde types, [`slim`](super::slim)): an entry's parts as
//! their text, decoded into the core's values by one decoder. A module of
//! its own so that the two readers depend on it, not on each other.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, Visitor};
use serde_json::value::RawValue;

/// A quantity's text, decoded as k8s-openapi decodes a `Quantity` (a
/// string, or a JSON number as its text; anything else fails expecting
/// "Quantity"), borrowed from the body when it can be.
#[derive(Debug, PartialEq)]
pub struct QuantityText<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for QuantityText<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct QuantityVisitor<'a>(PhantomData<QuantityText<'a>>);

        impl<'de: 'a, 'a> Visitor<'de> for QuantityVisitor<'a> {
            type Value = QuantityText<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("Quantity")
            }

            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<Self::Value, D::Error> {
                deserializer.deserialize_any(self)
            }

            fn visit_i32<E: serde::de::Error>(self, v: i32) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Owned(v.to_string())))
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Owned(v.to_string())))
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Owned(v.to_string())))
            }

            fn visit_f32<E: serde::de::Error>(self, v: f32) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Owned(v.to_string())))
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Owned(v.to_string())))
            }

            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Borrowed(v)))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Owned(v.to_owned())))
            }

            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(QuantityText(Cow::Owned(v)))
            }
        }

        deserializer.deserialize_newtype_struct("Quantity", QuantityVisitor(PhantomData))
    }
}

/// Which custom metrics API version to speak (their values' keys differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomVersion {
    /// `metric: {name}`, `windowSeconds`.
    V1Beta2,
    /// `metricName`, `window`.
    V1Beta1,
}

impl CustomVersion {
    /// The version as the API path names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1Beta2 => "v1beta2",
            Self::V1Beta1 => "v1beta1",
        }
    }
}

/// A custom metrics value as the controller reads it, whichever version's
/// list it came from.
#[derive(Debug, PartialEq)]
pub struct CustomValue<'a, S> {
    /// The described object's name.
    pub name: Cow<'a, str>,
    /// The value's text.
    pub value: QuantityText<'a>,
    /// End of the sampling window.
    pub timestamp: S,
    /// Length of the window in seconds.
    pub window_seconds: Option<i64>,
}

impl<'a> CustomValue<'a, &'a RawValue> {
    /// The same value, its timestamp's text as a `&str`.
    pub fn raw_text(self) -> CustomValue<'a, &'a str> {
        CustomValue {
            name: self.name,
            value: self.value,
            timestamp: self.timestamp.get(),
            window_seconds: self.window_seconds,
        }
    }
}

/// One `metrics.k8s.io` PodMetrics entry as the controller reads it: the
/// parts [`RawPodMetrics`](super::slim::RawPodMetrics) holds, texts as `&str`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawPod<'a> {
    /// `metadata.name`.
    pub name: Option<Cow<'a, str>>,
    /// `metadata.namespace`.
    pub namespace: Option<Cow<'a, str>>,
    /// The text of `metadata.labels`; `None` when absent or `null`.
    pub labels: Option<&'a str>,
    /// `metadata.labels` was given more than once.
    pub labels_repeated: bool,
    /// The text of `timestamp`.
    pub timestamp: &'a str,
    /// `window`.
    pub window: Cow<'a, str>,
    /// The text of `containers` (`null` included); `None` when absent.
    pub containers: Option<&'a str>,
}
