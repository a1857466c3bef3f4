//! The error every endpoint answers as a Kubernetes `Status` body: the
//! metrics APIs, the control API and the body limits share it, so it sits
//! below all of them.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status};

use crate::labels::SelectorError;

/// An error answered as a Kubernetes `Status` body.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed (a bad selector, script or value).
    #[error("{0}")]
    BadRequest(String),
    /// The thing asked for is not there.
    #[error("{0}")]
    NotFound(String),
    /// A request the server refuses before reading it as a script: too
    /// large (413), of an unsupported type (415), unauthorized (401), too
    /// slow (408).
    #[error("{message}")]
    Refused {
        /// Status to answer.
        status: StatusCode,
        /// Message.
        message: String,
    },
    /// A scripted fault.
    #[error("{message}")]
    Fault {
        /// Status to answer.
        status: StatusCode,
        /// Message.
        message: String,
    },
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Fault { status, .. } | Self::Refused { status, .. } => *status,
        }
    }
}

/// Renders a Kubernetes `Status` body for `code`.
pub fn status_body(code: StatusCode, message: String) -> Status {
    let reason = match code.as_u16() {
        400 => "BadRequest",
        404 => "NotFound",
        409 => "Conflict",
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ if code.is_server_error() => "InternalError",
        _ => "Unknown",
    };
    Status {
        code: Some(i32::from(code.as_u16())),
        message: Some(message),
        reason: Some(reason.to_owned()),
        status: Some("Failure".to_owned()),
        metadata: ListMeta::default(),
        ..Status::default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = self.status();
        (code, Json(status_body(code, self.to_string()))).into_response()
    }
}

impl From<SelectorError> for ApiError {
    fn from(e: SelectorError) -> Self {
        Self::BadRequest(e.to_string())
    }
}
