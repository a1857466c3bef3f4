//! Kubernetes `Status` errors.
//!
//! Every failure the sim reports over HTTP is one [`ApiError`], rendered as the
//! `Status` object the real API server sends (reason, code, details, causes),
//! so kube-rs clients see the same `ErrorResponse` they would in a cluster.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};

/// One invalid field, as listed in `Status.details.causes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// `FieldValueInvalid`, `FieldValueRequired`, `FieldValueNotSupported`, `FieldValueForbidden`.
    pub reason: &'static str,
    /// The field path, e.g. `spec.maxReplicas`.
    pub field: String,
    /// What is wrong, with the value when there is one.
    pub message: String,
}

impl FieldError {
    /// `Invalid value: V: MSG`.
    pub fn invalid(field: impl Into<String>, value: impl std::fmt::Display, msg: &str) -> Self {
        Self {
            reason: "FieldValueInvalid",
            field: field.into(),
            message: format!("Invalid value: {value}: {msg}"),
        }
    }

    /// `Required value: MSG`.
    pub fn required(field: impl Into<String>, msg: &str) -> Self {
        let message = if msg.is_empty() {
            "Required value".to_owned()
        } else {
            format!("Required value: {msg}")
        };
        Self {
            reason: "FieldValueRequired",
            field: field.into(),
            message,
        }
    }

    /// `Unsupported value: V: supported values: ...`.
    pub fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> Self {
        let list = supported
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ");
        Self {
            reason: "FieldValueNotSupported",
            field: field.into(),
            message: format!("Unsupported value: \"{value}\": supported values: {list}"),
        }
    }

    /// `Forbidden: MSG`.
    pub fn forbidden(field: impl Into<String>, msg: &str) -> Self {
        Self {
            reason: "FieldValueForbidden",
            field: field.into(),
            message: format!("Forbidden: {msg}"),
        }
    }
}

/// A failed API request, one variant per `Status.reason`.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 404 NotFound.
    #[error("{resource} \"{name}\" not found")]
    NotFound {
        /// `pods`, `deployments.apps`, ...
        resource: String,
        /// Object name.
        name: String,
    },
    /// 409 AlreadyExists.
    #[error("{resource} \"{name}\" already exists")]
    AlreadyExists {
        /// Resource (plural, with group).
        resource: String,
        /// Object name.
        name: String,
    },
    /// 409 Conflict (stale resourceVersion or an injected conflict).
    #[error(
        "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
    )]
    Conflict {
        /// Resource (plural, with group).
        resource: String,
        /// Object name.
        name: String,
    },
    /// 409 Conflict for a reason of the API server's own (a pod already
    /// bound to a node: `pods/binding`).
    #[error("Operation cannot be fulfilled on {resource} \"{name}\": {reason}")]
    Refused {
        /// Resource (plural, with group and subresource).
        resource: String,
        /// Object name.
        name: String,
        /// Why, in the API server's words.
        reason: String,
    },
    /// 422 Invalid, with the failing fields.
    #[error("{kind} \"{name}\" is invalid: {}", summary(.causes))]
    Invalid {
        /// Object kind.
        kind: String,
        /// Object name.
        name: String,
        /// Group of the resource (for details).
        group: String,
        /// The invalid fields.
        causes: Vec<FieldError>,
    },
    /// 410 Gone / Expired: a watch or list from a resourceVersion no longer kept.
    #[error("too old resource version: {requested} ({oldest})")]
    Gone {
        /// The resourceVersion asked for.
        requested: u64,
        /// The oldest one still kept.
        oldest: u64,
    },
    /// 400 BadRequest.
    #[error("{0}")]
    BadRequest(String),
    /// 413 RequestEntityTooLarge: a body over the API server's limit.
    #[error("Request entity too large: limit is {limit}")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// 504 Timeout: a watch or list from a resourceVersion the server has
    /// not reached (the API server gives up waiting and asks for a retry).
    #[error("Timeout: Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The resourceVersion asked for.
        requested: u64,
        /// The server's latest.
        current: u64,
    },
    /// 405 MethodNotAllowed.
    #[error("the server does not allow this method on the requested resource")]
    MethodNotAllowed,
    /// 415 UnsupportedMediaType.
    #[error("the body of the request was in an unknown format - accepted media types include: {0}")]
    UnsupportedMediaType(String),
    /// 403 Forbidden: RBAC denies the request (an injected fault; the
    /// message is the API server's, naming the user, verb and resource).
    #[error("{0}")]
    Forbidden(String),
    /// 500 InternalError (also used for injected faults).
    #[error("Internal error occurred: {0}")]
    Internal(String),
    /// 503 ServiceUnavailable (an aggregated API without a reachable backend).
    #[error("{0}")]
    ServiceUnavailable(String),
}

fn summary(causes: &[FieldError]) -> String {
    let parts: Vec<String> = causes
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    if parts.len() == 1 {
        parts.join("")
    } else {
        format!("[{}]", parts.join(", "))
    }
}

impl ApiError {
    /// HTTP status code of this error.
    pub fn code(&self) -> StatusCode {
        match self {
            Self::NotFound { .. } => StatusCode::NOT_FOUND,
            Self::AlreadyExists { .. } | Self::Conflict { .. } | Self::Refused { .. } => {
                StatusCode::CONFLICT
            }
            Self::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Gone { .. } => StatusCode::GONE,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::TooLargeResourceVersion { .. } => StatusCode::GATEWAY_TIMEOUT,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::ServiceUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The `Status.reason` string.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "NotFound",
            Self::AlreadyExists { .. } => "AlreadyExists",
            Self::Conflict { .. } | Self::Refused { .. } => "Conflict",
            Self::Invalid { .. } => "Invalid",
            Self::Gone { .. } => "Expired",
            Self::BadRequest(_) => "BadRequest",
            Self::TooLarge { .. } => "RequestEntityTooLarge",
            Self::TooLargeResourceVersion { .. } => "Timeout",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::UnsupportedMediaType(_) => "UnsupportedMediaType",
            Self::Forbidden(_) => "Forbidden",
            Self::Internal(_) => "InternalError",
            Self::ServiceUnavailable(_) => "ServiceUnavailable",
        }
    }

    /// Seconds the client should wait before retrying, when the server says
    /// (also sent as `Retry-After`).
    pub fn retry_after_seconds(&self) -> Option<i32> {
        matches!(self, Self::TooLargeResourceVersion { .. }).then_some(1)
    }

    /// The `Status` object the real API server sends for this error.
    pub fn to_status(&self) -> Status {
        let details = match self {
            Self::NotFound { resource, name }
            | Self::AlreadyExists { resource, name }
            | Self::Conflict { resource, name }
            | Self::Refused { resource, name, .. } => {
                let (kind, group) = split_resource(resource);
                Some(StatusDetails {
                    name: Some(name.clone()),
                    kind: Some(kind),
                    group,
                    ..StatusDetails::default()
                })
            }
            Self::Invalid {
                kind,
                name,
                group,
                causes,
            } => Some(StatusDetails {
                name: Some(name.clone()),
                kind: Some(kind.clone()),
                group: (!group.is_empty()).then(|| group.clone()),
                causes: Some(
                    causes
                        .iter()
                        .map(|c| StatusCause {
                            field: Some(c.field.clone()),
                            message: Some(c.message.clone()),
                            reason: Some(c.reason.to_owned()),
                        })
                        .collect(),
                ),
                ..StatusDetails::default()
            }),
            Self::TooLargeResourceVersion { .. } => Some(StatusDetails {
                causes: Some(vec![StatusCause {
                    field: None,
                    message: Some("Too large resource version".to_owned()),
                    reason: Some("ResourceVersionTooLarge".to_owned()),
                }]),
                retry_after_seconds: self.retry_after_seconds(),
                ..StatusDetails::default()
            }),
            _ => None,
        };
        Status {
            code: Some(i32::from(self.code().as_u16())),
            details,
            message: Some(self.to_string()),
            metadata: Default::default(),
            reason: Some(self.reason().to_owned()),
            status: Some("Failure".to_owned()),
        }
    }

    /// The `Status` as JSON with `kind` and `apiVersion` (k8s-openapi leaves them out).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self.to_status()).unwrap_or_default();
        if let Some(map) = v.as_object_mut() {
            map.insert("kind".into(), "Status".into());
            map.insert("apiVersion".into(), "v1".into());
        }
        v
    }
}

/// `deployments.apps` -> (`deployments`, Some(`apps`)).
fn split_resource(resource: &str) -> (String, Option<String>) {
    match resource.split_once('.') {
        Some((kind, group)) => (kind.to_owned(), Some(group.to_owned())),
        None => (resource.to_owned(), None),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.to_json().to_string();
        let mut response = (
            self.code(),
            [(http::header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        if let Some(secs) = self.retry_after_seconds() {
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, http::HeaderValue::from(secs));
        }
        response
    }
}
