//! A replay's series straight from a Prometheus server: its HTTP API's
//! `query_range` (`GET /api/v1/query_range`), with the authentication and
//! TLS options Prometheus clients take (a bearer token or basic auth, a CA
//! file, skipping verification). The answers are read by the same parser
//! as an exported `query_range` file ([`super::series`]); a range longer
//! than the server answers at once (11,000 steps) is asked in chunks.

use std::path::PathBuf;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::series::QueryRangeText;

/// The most steps asked in one request (Prometheus refuses more than
/// 11,000 points per series).
const MAX_STEPS: u64 = 10_000;

/// Why the server's series could not be had. One line each.
#[derive(Debug, thiserror::Error)]
pub enum PrometheusError {
    /// A file the options name could not be read.
    #[error("{what} {path}: {detail}")]
    File {
        what: &'static str,
        path: PathBuf,
        detail: String,
    },
    /// The CA file holds no usable certificate.
    #[error("--ca-file {path}: {detail}")]
    Ca { path: PathBuf, detail: String },
    /// The HTTP client could not be built.
    #[error("the HTTP client for {url}: {detail}")]
    Client { url: String, detail: String },
    /// The server could not be reached.
    #[error("Prometheus at {url} did not answer: {detail}")]
    Unreachable { url: String, detail: String },
    /// The server answered with an error.
    #[error("Prometheus at {url} refused the query {query:?}: HTTP {status}: {detail}")]
    Refused {
        url: String,
        query: String,
        status: u16,
        detail: String,
    },
    /// The query matched nothing over the range.
    #[error(
        "the query {query:?} returned no samples from Prometheus at {url} between {start} and {end}"
    )]
    Empty {
        url: String,
        query: String,
        start: Timestamp,
        end: Timestamp,
    },
}

/// How to authenticate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Auth {
    #[default]
    None,
    /// `Authorization: Bearer TOKEN`.
    Bearer(String),
    /// HTTP basic authentication.
    Basic { user: String, password: String },
}

/// A Prometheus server and how to talk to it.
#[derive(Debug, Clone, Default)]
pub struct Server {
    /// Its base URL (`http://prometheus:9090`, or under a path prefix).
    pub url: String,
    pub auth: Auth,
    /// PEM certificates to trust (besides none: the client trusts only these).
    pub ca_file: Option<PathBuf>,
    /// Accept any certificate.
    pub insecure_skip_verify: bool,
}

/// One query and the column it feeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub promql: String,
    pub name: Option<String>,
}

/// The range asked: `[end - since, end]` every `step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub end: Timestamp,
    pub since: Duration,
    pub step: Duration,
}

impl Server {
    fn client(&self) -> Result<reqwest::Client, PrometheusError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .tls_danger_accept_invalid_certs(self.insecure_skip_verify);
        if let Some(path) = &self.ca_file {
            let pem = std::fs::read(path).map_err(|e| PrometheusError::File {
                what: "--ca-file",
                path: path.clone(),
                detail: e.to_string(),
            })?;
            let certs =
                reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| PrometheusError::Ca {
                    path: path.clone(),
                    detail: e.to_string(),
                })?;
            if certs.is_empty() {
                return Err(PrometheusError::Ca {
                    path: path.clone(),
                    detail: "no PEM certificate in it".to_owned(),
                });
            }
            builder = builder.tls_certs_only(certs);
        }
        builder.build().map_err(|e| PrometheusError::Client {
            url: self.url.clone(),
            detail: e.to_string(),
        })
    }

    /// The answers of `queries` over `range`, one per query and chunk.
    pub async fn query_range(
        &self,
        queries: &[Query],
        range: Range,
    ) -> Result<Vec<QueryRangeText>, PrometheusError> {
        let client = self.client()?;
        let step = range.step.max(Duration::from_millis(1));
        let since = SignedDuration::try_from(range.since).unwrap_or(SignedDuration::MAX);
        let start = range
            .end
            .checked_sub(since)
            .unwrap_or(Timestamp::UNIX_EPOCH);
        let chunk = SignedDuration::try_from(
            step.saturating_mul(u32::try_from(MAX_STEPS).unwrap_or(u32::MAX)),
        )
        .unwrap_or(SignedDuration::MAX);
        let endpoint = format!("{}/api/v1/query_range", self.url.trim_end_matches('/'));
        let mut answers = Vec::new();
        for query in queries {
            let mut from = start;
            let mut samples = 0usize;
            loop {
                let to = from.checked_add(chunk).unwrap_or(range.end).min(range.end);
                let url = reqwest::Url::parse_with_params(
                    &endpoint,
                    &[
                        ("query", query.promql.as_str()),
                        ("start", &seconds(from)),
                        ("end", &seconds(to)),
                        ("step", &format!("{}", step.as_secs_f64())),
                    ],
                )
                .map_err(|e| PrometheusError::Client {
                    url: self.url.clone(),
                    detail: e.to_string(),
                })?;
                let mut request = client.get(url);
                request = match &self.auth {
                    Auth::None => request,
                    Auth::Bearer(token) => request.bearer_auth(token),
                    Auth::Basic { user, password } => request.basic_auth(user, Some(password)),
                };
                let response = request
                    .send()
                    .await
                    .map_err(|e| PrometheusError::Unreachable {
                        url: self.url.clone(),
                        detail: error_chain(&e),
                    })?;
                let status = response.status();
                let text = response
                    .text()
                    .await
                    .map_err(|e| PrometheusError::Unreachable {
                        url: self.url.clone(),
                        detail: error_chain(&e),
                    })?;
                if !status.is_success() {
                    return Err(PrometheusError::Refused {
                        url: self.url.clone(),
                        query: query.promql.clone(),
                        status: status.as_u16(),
                        detail: error_text(&text),
                    });
                }
                samples += count_samples(&text);
                answers.push(QueryRangeText {
                    source: PathBuf::from(format!("{} query {:?}", self.url, query.promql)),
                    text,
                    name: query.name.clone(),
                });
                if to >= range.end {
                    break;
                }
                from = to;
            }
            if samples == 0 {
                return Err(PrometheusError::Empty {
                    url: self.url.clone(),
                    query: query.promql.clone(),
                    start,
                    end: range.end,
                });
            }
        }
        Ok(answers)
    }
}

/// Unix seconds, as the API takes them.
fn seconds(t: Timestamp) -> String {
    format!("{:.3}", t.as_millisecond() as f64 / 1000.0)
}

/// The samples of an answer (0 when it is not a success).
fn count_samples(text: &str) -> usize {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| {
            v.pointer("/data/result")?.as_array().map(|series| {
                series
                    .iter()
                    .map(|s| s["values"].as_array().map_or(0, Vec::len))
                    .sum()
            })
        })
        .unwrap_or(0)
}

/// The `error` of an API error answer, else the body's first line.
fn error_text(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_owned))
        .unwrap_or_else(|| body.lines().next().unwrap_or_default().trim().to_owned())
}

/// An error with its causes, on one line.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_error_answer_gives_its_error_text() {
        assert_eq!(
            error_text(
                r#"{"status":"error","errorType":"bad_data","error":"parse error at char 4"}"#
            ),
            "parse error at char 4"
        );
        assert_eq!(error_text("Unauthorized\n"), "Unauthorized");
    }

    /// A server that answers only `Bearer t0ken`, with one sample.
    async fn bearer_server() -> String {
        use axum::http::{HeaderMap, StatusCode};
        let app = axum::Router::new().route(
            "/api/v1/query_range",
            axum::routing::get(|headers: HeaderMap| async move {
                if headers.get("authorization").and_then(|v| v.to_str().ok())
                    == Some("Bearer t0ken")
                {
                    (
                        StatusCode::OK,
                        r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1700000000,"1"]]}]}}"#,
                    )
                } else {
                    (StatusCode::UNAUTHORIZED, "Unauthorized")
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    }

    #[tokio::test]
    async fn a_bearer_token_is_sent_and_its_absence_is_refused() {
        let url = bearer_server().await;
        let query = [Query {
            promql: "up".to_owned(),
            name: None,
        }];
        let range = Range {
            end: Timestamp::from_second(1_700_000_000).unwrap(),
            since: Duration::from_secs(60),
            step: Duration::from_secs(15),
        };
        let server = Server {
            url: url.clone(),
            auth: Auth::Bearer("t0ken".to_owned()),
            ..Server::default()
        };
        let answers = server.query_range(&query, range).await.unwrap();
        assert_eq!(answers.len(), 1);
        assert_eq!(count_samples(&answers[0].text), 1);
        let anonymous = Server {
            url: url.clone(),
            ..Server::default()
        };
        let err = anonymous
            .query_range(&query, range)
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("Prometheus at {url} refused the query \"up\": HTTP 401: Unauthorized")
        );
    }

    #[test]
    fn samples_are_counted_over_every_series() {
        let text = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{},"values":[[1,"1"],[2,"2"]]},{"metric":{},"values":[[1,"3"]]}]}}"#;
        assert_eq!(count_samples(text), 3);
        assert_eq!(
            count_samples(r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#),
            0
        );
    }
}
