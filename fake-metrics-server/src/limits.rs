//! What one client may cost the server: body size and type, time to send
//! it, how many large bodies are parsed at once, the YAML budget, and the
//! range of the clock.
//!
//! The documented scale is a script of 100,000 pods: about 15 MiB of YAML
//! (a little more as pretty JSON). Bodies are bounded a few times above
//! that; bodies over [`LARGE_BODY`] are read and parsed one or two at a
//! time, on the blocking pool, so four clients sending big scripts at once
//! neither hold four of them in memory nor stall the metrics APIs.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use jiff::{SignedDuration, Timestamp};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::api_error::ApiError;
use crate::duration::format_go_duration;

/// The largest control request body: room for the documented 100,000-pod
/// script several times over.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// Bodies above this are read and parsed under `LARGE_PARSES`, off the
/// async worker threads.
pub const LARGE_BODY: usize = 1024 * 1024;

/// How many large bodies are read and parsed at once.
static LARGE_PARSES: Semaphore = Semaphore::const_new(2);

/// How long a client has to send a control body once its headers are in.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a client has to send its request headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a client has to complete the TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The YAML budget of control bodies: serde-saphyr's defaults (aliases,
/// anchors, depth, alias-to-anchor ratio: the protection against "billion
/// laughs" bombs) with the node and event counts raised to what the
/// documented 100,000-pod script needs (about 20 nodes a pod), and the
/// input capped at [`MAX_BODY`].
pub fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::budget::Budget::default();
    budget.max_reader_input_bytes = Some(MAX_BODY);
    budget.max_nodes = 5_000_000;
    budget.max_events = 12_000_000;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// A control request's body, checked: a YAML or JSON content type (or
/// none), at most [`MAX_BODY`], UTF-8, sent within [`BODY_TIMEOUT`].
#[derive(Debug)]
pub struct ControlBody {
    /// The text.
    pub text: String,
    /// The content type, when given.
    pub content_type: Option<String>,
    permit: Option<SemaphorePermit<'static>>,
}

/// Whether the control API reads bodies of this content type: JSON or YAML
/// (any `+json`/`+yaml` suffix), or `text/plain` (YAML or JSON by content).
pub fn supported_content_type(ct: &str) -> bool {
    let base = ct
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    matches!(
        base.as_str(),
        "application/json"
            | "application/yaml"
            | "application/x-yaml"
            | "text/yaml"
            | "text/x-yaml"
            | "text/plain"
    ) || base.ends_with("+json")
        || base.ends_with("+yaml")
}

fn refused(status: StatusCode, message: String) -> ApiError {
    ApiError::Refused { status, message }
}

impl<S: Send + Sync> FromRequest<S> for ControlBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let content_type = match req.headers().get(header::CONTENT_TYPE) {
            None => None,
            Some(v) => {
                let ct = v.to_str().unwrap_or_default().to_owned();
                if !supported_content_type(&ct) {
                    return Err(refused(
                        StatusCode::UNSUPPORTED_MEDIA_TYPE,
                        format!(
                            "unsupported Content-Type {ct:?}: send application/yaml or application/json"
                        ),
                    ));
                }
                Some(ct)
            }
        };
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > MAX_BODY) {
            return Err(too_large());
        }
        // A large or unsized body waits for its turn before it is buffered.
        let permit = if declared.is_none_or(|n| n > LARGE_BODY) {
            Some(
                LARGE_PARSES
                    .acquire()
                    .await
                    .map_err(|e| ApiError::BadRequest(format!("the server is stopping: {e}")))?,
            )
        } else {
            None
        };
        let bytes = tokio::time::timeout(BODY_TIMEOUT, Bytes::from_request(req, state))
            .await
            .map_err(|_| {
                refused(
                    StatusCode::REQUEST_TIMEOUT,
                    format!("the body did not arrive within {}s", BODY_TIMEOUT.as_secs()),
                )
            })?
            .map_err(|e| {
                if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    too_large()
                } else {
                    ApiError::BadRequest(e.body_text())
                }
            })?;
        let text = String::from_utf8(bytes.to_vec())
            .map_err(|e| ApiError::BadRequest(format!("the body is not UTF-8: {e}")))?;
        Ok(Self {
            text,
            content_type,
            permit,
        })
    }
}

fn too_large() -> ApiError {
    refused(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the body is larger than {MAX_BODY} bytes"),
    )
}

impl ControlBody {
    /// Whether the body is empty or blank.
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// Runs `parse` on the text: inline for a small body, on the blocking
    /// pool (still holding its turn) for a large one.
    pub async fn parse<T, F>(self, parse: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&str, Option<&str>) -> Result<T, ApiError> + Send + 'static,
    {
        let Self {
            text,
            content_type,
            permit,
        } = self;
        if permit.is_none() {
            return parse(&text, content_type.as_deref());
        }
        let out = tokio::task::spawn_blocking(move || parse(&text, content_type.as_deref()))
            .await
            .map_err(|e| ApiError::BadRequest(format!("parsing the body failed: {e}")))?;
        drop(permit);
        out
    }
}

/// The clock's reach: it counts nanoseconds in an i64, so from 1677 to 2262.
fn fits(at: Timestamp) -> bool {
    i64::try_from(at.as_nanosecond()).is_ok()
}

/// Where advancing `now` by `by` lands, or why the clock cannot go there.
pub fn clock_advance(now: Timestamp, by: SignedDuration) -> Result<Timestamp, String> {
    now.checked_add(by)
        .ok()
        .filter(|t| fits(*t))
        .ok_or_else(|| {
            format!(
                "advancing {now} by {} leaves the clock's range (1677-09-21 to 2262-04-11)",
                format_go_duration(by)
            )
        })
}

/// Checks that the clock can be set to `at`.
pub fn clock_set(at: Timestamp) -> Result<Timestamp, String> {
    if fits(at) {
        Ok(at)
    } else {
        Err(format!(
            "{at} is outside the clock's range (1677-09-21 to 2262-04-11)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_refuses_what_it_cannot_hold() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let hours = SignedDuration::from_hours(2_500_000);
        assert!(clock_advance(now, hours).is_err(), "2026 + 285 years");
        assert!(clock_advance(now, -hours * 2).is_err(), "2026 - 570 years");
        assert!(clock_advance(now, SignedDuration::from_hours(1)).is_ok());
        assert!(clock_set("9000-01-01T00:00:00Z".parse().unwrap()).is_err());
        assert!(clock_set("2200-01-01T00:00:00Z".parse().unwrap()).is_ok());
    }

    #[test]
    fn only_yaml_and_json_bodies_are_read() {
        for ok in [
            "application/json",
            "application/yaml; charset=utf-8",
            "application/merge-patch+json",
            "text/plain",
        ] {
            assert!(supported_content_type(ok), "{ok}");
        }
        for bad in [
            "application/x-www-form-urlencoded",
            "application/octet-stream",
            "image/png",
        ] {
            assert!(!supported_content_type(bad), "{bad}");
        }
    }
}
