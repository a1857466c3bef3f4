//! Content negotiation: protobuf and YAML request bodies, protobuf answers.
//!
//! kubectl and client-go send typed objects as
//! `application/vnd.kubernetes.protobuf` (`kubectl create deployment`,
//! `kubectl autoscale`) and ask for protobuf first. The wire form is the
//! 4-byte magic `k8s\0` and a `runtime.Unknown` holding the type and the
//! message's bytes; the messages are k8s-pb's (autoscaling/v2's HPA as
//! 1.37 numbers it: `autoscaling_v2.rs`), read and written as Kubernetes
//! JSON ([`json`](mod@json)) so the rest of the sim stays JSON. A message
//! with fields k8s-pb does not know is refused rather than silently cut.

mod autoscaling_v2;
pub mod json;
mod types;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode, Uri};
use http_body_util::BodyExt as _;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message as _;
use serde_json::{Value, json};

use self::json::PbJson;
use crate::error::ApiError;
use crate::resources::ResourceDef;

/// The protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// The envelope's magic prefix.
pub const MAGIC: [u8; 4] = *b"k8s\0";

const ACCEPTED_BODIES: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// A Kubernetes JSON object -> protobuf message bytes, or back.
type Codec = (
    fn(&[u8]) -> Result<Value, String>,
    fn(&Value) -> Result<Vec<u8>, String>,
);

fn decode<T: PbJson + prost::Message + Default>(raw: &[u8]) -> Result<Value, String> {
    let msg = T::decode(raw).map_err(|e| format!("not a valid message: {e}"))?;
    // Fields newer than k8s-pb are dropped by prost: the re-encoding is then
    // shorter, and the object is refused instead of stored cut.
    if msg.encoded_len() != raw.len() {
        return Err("it has fields this server cannot read in protobuf; send it as JSON".into());
    }
    Ok(msg.to_json().unwrap_or_else(|| json!({})))
}

fn encode<T: PbJson + prost::Message + Default>(v: &Value) -> Result<Vec<u8>, String> {
    Ok(T::from_json(v, "object")?.encode_to_vec())
}

macro_rules! codecs {
    ($($api:literal, $kind:literal => $ty:path;)*) => {
        fn codec(api_version: &str, kind: &str) -> Option<Codec> {
            match (api_version, kind) {
                $(($api, $kind) => Some((decode::<$ty>, encode::<$ty>)),)*
                _ => None,
            }
        }
    };
}

codecs! {
    "apps/v1", "Deployment" => k8s_pb::api::apps::v1::Deployment;
    "apps/v1", "DeploymentList" => k8s_pb::api::apps::v1::DeploymentList;
    "apps/v1", "ReplicaSet" => k8s_pb::api::apps::v1::ReplicaSet;
    "apps/v1", "ReplicaSetList" => k8s_pb::api::apps::v1::ReplicaSetList;
    "apps/v1", "StatefulSet" => k8s_pb::api::apps::v1::StatefulSet;
    "apps/v1", "StatefulSetList" => k8s_pb::api::apps::v1::StatefulSetList;
    "v1", "Pod" => k8s_pb::api::core::v1::Pod;
    "v1", "PodList" => k8s_pb::api::core::v1::PodList;
    "v1", "Namespace" => k8s_pb::api::core::v1::Namespace;
    "v1", "NamespaceList" => k8s_pb::api::core::v1::NamespaceList;
    "v1", "Service" => k8s_pb::api::core::v1::Service;
    "v1", "ServiceList" => k8s_pb::api::core::v1::ServiceList;
    "v1", "Node" => k8s_pb::api::core::v1::Node;
    "v1", "NodeList" => k8s_pb::api::core::v1::NodeList;
    "v1", "Event" => k8s_pb::api::core::v1::Event;
    "v1", "EventList" => k8s_pb::api::core::v1::EventList;
    "v1", "Status" => k8s_pb::apimachinery::pkg::apis::meta::v1::Status;
    "v1", "DeleteOptions" => k8s_pb::apimachinery::pkg::apis::meta::v1::DeleteOptions;
    "meta.k8s.io/v1", "DeleteOptions" => k8s_pb::apimachinery::pkg::apis::meta::v1::DeleteOptions;
    "events.k8s.io/v1", "Event" => k8s_pb::api::events::v1::Event;
    "events.k8s.io/v1", "EventList" => k8s_pb::api::events::v1::EventList;
    "autoscaling/v1", "HorizontalPodAutoscaler" => k8s_pb::api::autoscaling::v1::HorizontalPodAutoscaler;
    "autoscaling/v1", "HorizontalPodAutoscalerList" => k8s_pb::api::autoscaling::v1::HorizontalPodAutoscalerList;
    "autoscaling/v1", "Scale" => k8s_pb::api::autoscaling::v1::Scale;
    "autoscaling/v2", "HorizontalPodAutoscaler" => autoscaling_v2::HorizontalPodAutoscaler;
    "autoscaling/v2", "HorizontalPodAutoscalerList" => autoscaling_v2::HorizontalPodAutoscalerList;
    "coordination.k8s.io/v1", "Lease" => k8s_pb::api::coordination::v1::Lease;
    "coordination.k8s.io/v1", "LeaseList" => k8s_pb::api::coordination::v1::LeaseList;
    "apiregistration.k8s.io/v1", "APIService" => k8s_pb::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    "apiregistration.k8s.io/v1", "APIServiceList" => k8s_pb::kube_aggregator::pkg::apis::apiregistration::v1::APIServiceList;
}

/// Failures of reading a protobuf body.
#[derive(Debug, thiserror::Error)]
pub enum ProtobufError {
    /// The body does not start with `k8s\0`.
    #[error("the protobuf body does not start with the Kubernetes magic k8s\\0")]
    Magic,
    /// The envelope is not a `runtime.Unknown`.
    #[error("the protobuf envelope is not a runtime.Unknown: {0}")]
    Envelope(String),
    /// The type is not one this server takes in protobuf.
    #[error("{api_version} {kind} is not taken in protobuf by this server; send it as JSON")]
    UnknownType {
        /// `apiVersion` of the envelope.
        api_version: String,
        /// `kind` of the envelope.
        kind: String,
    },
    /// The message did not convert.
    #[error("the protobuf {kind} cannot be read: {message}")]
    Message {
        /// Its kind.
        kind: String,
        /// What went wrong.
        message: String,
    },
}

/// Protobuf envelope bytes -> the object as Kubernetes JSON.
pub fn to_json(body: &[u8]) -> Result<Value, ProtobufError> {
    let rest = body.strip_prefix(&MAGIC).ok_or(ProtobufError::Magic)?;
    let unknown = Unknown::decode(rest).map_err(|e| ProtobufError::Envelope(e.to_string()))?;
    let meta = unknown.type_meta.unwrap_or_default();
    let api_version = meta.api_version.unwrap_or_default();
    let kind = meta.kind.unwrap_or_default();
    let Some((read, _)) = codec(&api_version, &kind) else {
        return Err(ProtobufError::UnknownType { api_version, kind });
    };
    let mut v = read(unknown.raw.as_deref().unwrap_or_default()).map_err(|message| {
        ProtobufError::Message {
            kind: kind.clone(),
            message,
        }
    })?;
    if let Some(o) = v.as_object_mut() {
        o.insert("apiVersion".into(), json!(api_version));
        o.insert("kind".into(), json!(kind));
    }
    Ok(v)
}

/// A Kubernetes JSON object -> protobuf envelope bytes; `None` when its
/// type is not one this server writes in protobuf.
pub fn from_json(v: &Value) -> Option<Vec<u8>> {
    let api_version = v.get("apiVersion")?.as_str()?;
    let kind = v.get("kind")?.as_str()?;
    let (_, write) = codec(api_version, kind)?;
    let raw = write(v).ok()?;
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&unknown.encode_to_vec());
    Some(out)
}

fn media_type(value: &str) -> &str {
    value.split(';').next().unwrap_or("").trim()
}

/// The body of a create, update or delete as JSON bytes: protobuf and YAML
/// are converted, JSON passes; anything else is a 415 naming what is taken.
pub fn request_body(
    def: &ResourceDef,
    method: &Method,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Bytes, ApiError> {
    if !matches!(*method, Method::POST | Method::PUT | Method::DELETE) || body.is_empty() {
        return Ok(body);
    }
    let ct = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(media_type)
        .unwrap_or("");
    match ct {
        "" | "application/json" | "*/*" => Ok(body),
        PROTOBUF => {
            let v = to_json(&body).map_err(|e| {
                ApiError::BadRequest(format!("{} {}: {e}", method, def.qualified()))
            })?;
            Ok(Bytes::from(serde_json::to_vec(&v).unwrap_or_default()))
        }
        "application/yaml" => {
            let text = std::str::from_utf8(&body)
                .map_err(|_| ApiError::BadRequest("the YAML body is not UTF-8".into()))?;
            let v: Value = serde_saphyr::from_str(text)
                .map_err(|e| ApiError::BadRequest(format!("the YAML body is not valid: {e}")))?;
            Ok(Bytes::from(serde_json::to_vec(&v).unwrap_or_default()))
        }
        _ => Err(ApiError::UnsupportedMediaType(ACCEPTED_BODIES.into())),
    }
}

/// What the client's `Accept` allows, in its order of preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Json,
    Protobuf,
}

fn choices(headers: &HeaderMap) -> Option<Vec<Choice>> {
    let values: Vec<&str> = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for choice in values.iter().flat_map(|v| v.split(',')) {
        let mut parts = choice.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        // `as=Table` and discovery's `as=APIGroupDiscoveryList` are handled
        // (or declined) by the handlers; a plain choice decides the encoding.
        let plain = !parts.any(|p| p.starts_with("as="));
        match media {
            "application/json" | "application/*" | "*/*" | "" => out.push(Choice::Json),
            PROTOBUF if plain => out.push(Choice::Protobuf),
            _ => {}
        }
    }
    Some(out)
}

fn not_acceptable(headers: &HeaderMap) -> Response {
    let accept = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "reason": "NotAcceptable", "code": 406,
        "message": format!("only the following media types are accepted: application/json, {PROTOBUF} (asked for {accept:?})")});
    (
        StatusCode::NOT_ACCEPTABLE,
        [(http::header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&status).unwrap_or_default(),
    )
        .into_response()
}

/// Re-encodes a JSON answer as the client's `Accept` asks: protobuf when it
/// prefers it and the object's type has a protobuf form, JSON when it takes
/// JSON, 406 when it takes neither. Watches stay JSON streams.
pub async fn negotiate(uri: &Uri, headers: &HeaderMap, response: Response) -> Response {
    let Some(choices) = choices(headers) else {
        return response;
    };
    let is_json = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| media_type(ct) == "application/json");
    let takes_json = choices.contains(&Choice::Json);
    let wants_pb = choices.first() == Some(&Choice::Protobuf)
        || (!takes_json && choices.contains(&Choice::Protobuf));
    if !is_json || !wants_pb {
        return if is_json && !takes_json && !wants_pb {
            not_acceptable(headers)
        } else {
            response
        };
    }
    let watch = uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    if watch {
        return if takes_json {
            response
        } else {
            not_acceptable(headers)
        };
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = body.collect().await.map(|c| c.to_bytes()) else {
        return ApiError::Internal("reading the answer failed".into()).into_response();
    };
    let encoded = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| from_json(&v));
    match encoded {
        Some(pb) => {
            parts.headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(PROTOBUF),
            );
            parts.headers.remove(http::header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(pb))
        }
        None if takes_json => Response::from_parts(parts, Body::from(bytes)),
        None => not_acceptable(headers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_round_trips_through_the_envelope() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"},
                "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx",
                        "ports": [{"containerPort": 80}],
                        "resources": {"requests": {"cpu": "200m"}}}]}}}});
        let pb = from_json(&d).unwrap();
        assert_eq!(&pb[..4], b"k8s\0");
        assert_eq!(to_json(&pb).unwrap(), d);
    }

    #[test]
    fn an_hpa_v2_keeps_its_metrics_and_json_names() {
        let h = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 10,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50}}}]},
            "status": {"currentReplicas": 1, "desiredReplicas": 1}});
        assert_eq!(to_json(&from_json(&h).unwrap()).unwrap(), h);
        let p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "status": {"podIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.2"}]}});
        assert_eq!(to_json(&from_json(&p).unwrap()).unwrap(), p);
    }

    /// 1.37's field 6 of HorizontalPodAutoscalerCondition: served to
    /// protobuf clients and read from their writes (a status update of
    /// kube-controller-manager), in an HPA and in a list.
    #[test]
    fn an_hpa_v2_condition_keeps_its_observed_generation_both_ways() {
        let h = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "generation": 3},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 10},
            "status": {"observedGeneration": 3, "desiredReplicas": 2,
                "conditions": [{"type": "AbleToScale", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "reason": "ReadyForNewScale", "message": "recommended size matches current size",
                    "observedGeneration": 3}]}});
        let pb = from_json(&h).unwrap();
        assert_eq!(to_json(&pb).unwrap(), h);
        let list = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscalerList",
            "metadata": {"resourceVersion": "7"},
            "items": [{"metadata": {"name": "web"}, "status": h["status"].clone()}]});
        assert_eq!(to_json(&from_json(&list).unwrap()).unwrap(), list);
        // The condition on the wire: field 6, varint 3 (tag 0x30).
        let condition = autoscaling_v2::HorizontalPodAutoscalerCondition {
            observed_generation: Some(3),
            ..Default::default()
        };
        assert_eq!(condition.encode_to_vec(), [0x30, 0x03]);
    }

    #[test]
    fn bad_envelopes_and_unknown_types_are_named() {
        assert!(matches!(to_json(b"{}"), Err(ProtobufError::Magic)));
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("batch/v1".into()),
                kind: Some("Job".into()),
            }),
            raw: Some(Vec::new()),
            content_encoding: None,
            content_type: None,
        };
        let mut body = MAGIC.to_vec();
        body.extend(unknown.encode_to_vec());
        let err = to_json(&body).unwrap_err().to_string();
        assert!(
            err.contains("batch/v1 Job is not taken in protobuf"),
            "{err}"
        );
    }

    #[test]
    fn fields_k8s_pb_does_not_know_are_refused_and_zero_times_are_absent() {
        // Go writes an unset metav1.Time as an empty message.
        let d = k8s_pb::api::apps::v1::Deployment {
            metadata: Some(k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("web".into()),
                creation_timestamp: Some(Default::default()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let v = decode::<k8s_pb::api::apps::v1::Deployment>(&d.encode_to_vec()).unwrap();
        assert_eq!(v, json!({"metadata": {"name": "web"}}));
        // Field 99 of a Deployment is unknown to k8s-pb: prost drops it.
        let mut raw = k8s_pb::api::apps::v1::Deployment::default().encode_to_vec();
        raw.extend_from_slice(&[0x98, 0x06, 0x01]);
        let err = decode::<k8s_pb::api::apps::v1::Deployment>(&raw).unwrap_err();
        assert!(err.contains("send it as JSON"), "{err}");
    }

    #[test]
    fn accept_headers_pick_the_encoding() {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::ACCEPT,
            "application/vnd.kubernetes.protobuf,application/json"
                .parse()
                .unwrap(),
        );
        assert_eq!(choices(&h).unwrap(), vec![Choice::Protobuf, Choice::Json]);
        h.insert(
            http::header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
                .parse()
                .unwrap(),
        );
        assert_eq!(choices(&h).unwrap(), vec![Choice::Json, Choice::Json]);
        h.insert(http::header::ACCEPT, "application/cbor".parse().unwrap());
        assert!(choices(&h).unwrap().is_empty());
    }
}
