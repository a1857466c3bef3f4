//! The control API's token. Whoever reaches `/control/v1` steers every HPA
//! that reads this server's metrics, so on any listener other than loopback
//! it takes a token: the one given (`--control-token`, `FMS_CONTROL_TOKEN`)
//! or one generated at start and printed. Clients send it as
//! `Authorization: Bearer TOKEN` or `X-Control-Token: TOKEN` (the second
//! survives the API server's service proxy, which drops `Authorization`).
//! The metrics APIs, discovery and health need none: the aggregator reaches
//! them over TLS.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api_error::ApiError;

/// The header a client may carry the token in (besides `Authorization`).
pub const TOKEN_HEADER: &str = "x-control-token";

/// The environment variable clients and the server read the token from.
pub const TOKEN_ENV: &str = "FMS_CONTROL_TOKEN";

/// The token the control API requires, if any.
#[derive(Clone, Debug, Default)]
pub struct ControlToken(Option<Arc<str>>);

impl ControlToken {
    /// No token: only for loopback listeners and in-process tests.
    pub fn none() -> Self {
        Self(None)
    }

    /// This token.
    pub fn new(token: impl Into<Arc<str>>) -> Self {
        Self(Some(token.into()))
    }

    /// A fresh random token (32 hex digits from the system's secure random).
    pub fn generate() -> Result<Self, rustls::Error> {
        let mut bytes = [0u8; 16];
        rustls::crypto::ring::default_provider()
            .secure_random
            .fill(&mut bytes)
            .map_err(|_| rustls::Error::FailedToGetRandomBytes)?;
        Ok(Self::new(
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        ))
    }

    /// The token, when one is required.
    pub fn value(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// Whether `headers` carry the token (always, when none is required).
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(want) = self.value() else {
            return true;
        };
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let plain = headers.get(TOKEN_HEADER).and_then(|v| v.to_str().ok());
        [bearer, plain]
            .into_iter()
            .flatten()
            .any(|got| constant_time_eq(got.trim().as_bytes(), want.as_bytes()))
    }
}

/// Compares without an early exit, so the time taken does not tell how
/// much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Refuses control requests without the token (401).
pub async fn require_token(
    State(token): State<ControlToken>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path().starts_with("/control/") && !token.admits(request.headers()) {
        return ApiError::Refused {
            status: StatusCode::UNAUTHORIZED,
            message: format!(
                "the control API needs its token: send `Authorization: Bearer TOKEN` or `X-Control-Token: TOKEN` (the server's --control-token / {TOKEN_ENV})"
            ),
        }
        .into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, value.parse().unwrap());
        h
    }

    #[test]
    fn a_token_is_admitted_in_either_header_and_nothing_else_is() {
        let t = ControlToken::new("s3cret");
        assert!(t.admits(&headers("authorization", "Bearer s3cret")));
        assert!(t.admits(&headers(TOKEN_HEADER, "s3cret")));
        assert!(!t.admits(&headers("authorization", "Bearer s3cre")));
        assert!(!t.admits(&headers(TOKEN_HEADER, "s3cret2")));
        assert!(!t.admits(&HeaderMap::new()));
        assert!(ControlToken::none().admits(&HeaderMap::new()));
    }

    #[test]
    fn generated_tokens_differ() {
        let a = ControlToken::generate().unwrap();
        let b = ControlToken::generate().unwrap();
        assert_eq!(a.value().unwrap().len(), 32);
        assert_ne!(a.value(), b.value());
    }
}
