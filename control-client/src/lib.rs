//! The one JSON exchange with the control APIs of hpa-harness's servers:
//! the fake metrics server's `/control/v1` and the simulated cluster's
//! `/admin/v1`. Both answer JSON, refuse with a body whose `message` says
//! why, and may answer success with no body; each typed client maps
//! [`CallError`] into its own error, which names its endpoint.

use serde::de::DeserializeOwned;

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The request did not reach the server, or its answer could not be read.
    #[error("request failed: {0}")]
    Http(#[source] reqwest::Error),
    /// The server refused the request.
    #[error("the server answered {status}: {message}")]
    Rejected {
        /// HTTP status.
        status: u16,
        /// The `message` of the server's JSON body, else the raw body.
        message: String,
    },
    /// The server answered success with a body of the wrong shape.
    #[error("unreadable answer: {0}")]
    Decode(#[source] serde_json::Error),
}

/// An HTTP client for a control API. `accept_invalid_certs`: the fake
/// metrics server serves a certificate it made itself.
pub fn http_client(accept_invalid_certs: bool) -> Result<reqwest::Client, reqwest::Error> {
    // reqwest is built without a default crypto provider; install ring
    // once (a second install is refused, which is fine).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(accept_invalid_certs)
        .build()
}

/// Sends `request` and reads its answer: `None` for a success without a
/// body, the decoded body otherwise.
pub async fn exchange<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
) -> Result<Option<T>, CallError> {
    let response = request.send().await.map_err(CallError::Http)?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(CallError::Http)?;
    if !status.is_success() {
        return Err(CallError::Rejected {
            status: status.as_u16(),
            message: refusal_message(&bytes),
        });
    }
    if bytes.is_empty() {
        return Ok(None);
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(CallError::Decode)
}

/// The explanation in a refusal's body: its JSON `message`, else the body
/// as text.
pub fn refusal_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;
    use axum::routing::get;

    #[test]
    fn a_refusal_says_its_message_or_its_body() {
        assert_eq!(
            refusal_message(br#"{"kind":"Status","message":"bad quantity \"x\""}"#),
            "bad quantity \"x\""
        );
        assert_eq!(refusal_message(b"plain text"), "plain text");
        assert_eq!(refusal_message(br#"{"message": 3}"#), r#"{"message": 3}"#);
    }

    async fn serve() -> String {
        let app = axum::Router::new()
            .route("/empty", get(|| async { StatusCode::NO_CONTENT }))
            .route("/json", get(|| async { r#"{"a":1}"# }))
            .route("/bad", get(|| async { "not json" }))
            .route(
                "/refused",
                get(|| async { (StatusCode::UNPROCESSABLE_ENTITY, r#"{"message":"no"}"#) }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn answers_are_read_as_each_kind() {
        let base = serve().await;
        let http = http_client(false).unwrap();
        let get = |p: &str| http.get(format!("{base}{p}"));
        let empty: Option<serde_json::Value> = exchange(get("/empty")).await.unwrap();
        assert!(empty.is_none());
        let json: Option<serde_json::Value> = exchange(get("/json")).await.unwrap();
        assert_eq!(json.unwrap()["a"], 1);
        let bad = exchange::<serde_json::Value>(get("/bad"))
            .await
            .unwrap_err();
        assert!(matches!(bad, CallError::Decode(_)), "{bad}");
        match exchange::<serde_json::Value>(get("/refused"))
            .await
            .unwrap_err()
        {
            CallError::Rejected { status, message } => {
                assert_eq!((status, message.as_str()), (422, "no"));
            }
            other => panic!("{other}"),
        }
    }
}
