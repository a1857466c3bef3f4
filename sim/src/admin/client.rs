//! [`AdminClient`]: the typed client of the admin API, for the Gherkin
//! runner and load runs driving a sim in another process.

use hpa_control_client::CallError;
use hpa_core::gates::FeatureGates;
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{
    ClockMove, ClockState, FaultAction, FeatureGatesBody, FeatureGatesState, PodDelaysBody,
    RequestCounts, ResetSummary,
};
use crate::state::PodDelays;

/// Failures of admin requests; each names the endpoint.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The HTTP client could not be built.
    #[error("building the HTTP client for the sim admin API")]
    Build(#[source] reqwest::Error),
    /// The request did not reach the sim or its answer could not be read.
    #[error("{endpoint}: request failed")]
    Http {
        /// Method and path, e.g. `POST /admin/v1/faults`.
        endpoint: String,
        /// Cause.
        #[source]
        source: reqwest::Error,
    },
    /// The sim refused the request.
    #[error("{endpoint}: the sim answered {status}: {message}")]
    Rejected {
        /// Method and path.
        endpoint: String,
        /// HTTP status.
        status: u16,
        /// The sim's message (or the raw body).
        message: String,
    },
    /// The sim answered success with a body of the wrong shape.
    #[error("{endpoint}: unreadable answer")]
    Decode {
        /// Method and path.
        endpoint: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
}

/// Talks to `/admin/v1/` of one sim.
#[derive(Debug, Clone)]
pub struct AdminClient {
    http: reqwest::Client,
    base: String,
}

impl AdminClient {
    /// A client for the sim whose API server is at `base_url`
    /// (`http://127.0.0.1:PORT`, the kubeconfig's server).
    pub fn new(base_url: impl Into<String>) -> Result<Self, AdminError> {
        let http = hpa_control_client::http_client(false).map_err(AdminError::Build)?;
        Ok(Self::with_http(http, base_url))
    }

    /// A client using an existing reqwest client.
    pub fn with_http(http: reqwest::Client, base_url: impl Into<String>) -> Self {
        let base = base_url.into().trim_end_matches('/').to_owned();
        Self { http, base }
    }

    /// The sim's base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    async fn call<B: Serialize, T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<Option<T>, AdminError> {
        let endpoint = format!("{method} {path}");
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        hpa_control_client::exchange(request)
            .await
            .map_err(|e| match e {
                CallError::Http(source) => AdminError::Http { endpoint, source },
                CallError::Rejected { status, message } => AdminError::Rejected {
                    endpoint,
                    status,
                    message,
                },
                CallError::Decode(source) => AdminError::Decode { endpoint, source },
            })
    }

    async fn call_for<B: Serialize, T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, AdminError> {
        let endpoint = format!("{method} {path}");
        self.call(method, path, body)
            .await?
            .ok_or_else(|| AdminError::Decode {
                endpoint,
                source: <serde_json::Error as serde::de::Error>::custom("empty answer"),
            })
    }

    /// `GET /admin/v1/clock`.
    pub async fn clock(&self) -> Result<ClockState, AdminError> {
        self.call_for::<(), _>(reqwest::Method::GET, "/admin/v1/clock", None)
            .await
    }

    /// `POST /admin/v1/clock`: moves the virtual clock forward by `by` and
    /// applies the pod transitions that fell due.
    pub async fn advance(&self, by: SignedDuration) -> Result<ClockState, AdminError> {
        let body = ClockMove {
            advance: Some(hpa_core::go_duration::format(by)),
            set: None,
        };
        self.call_for(reqwest::Method::POST, "/admin/v1/clock", Some(&body))
            .await
    }

    /// `POST /admin/v1/clock` with `set`: puts the virtual clock at `at`
    /// and applies the pod transitions due by then.
    pub async fn set_clock(&self, at: Timestamp) -> Result<ClockState, AdminError> {
        let body = ClockMove {
            advance: None,
            set: Some(at),
        };
        self.call_for(reqwest::Method::POST, "/admin/v1/clock", Some(&body))
            .await
    }

    /// `POST /admin/v1/faults`: sets one fault or scale override.
    pub async fn set_fault(&self, action: &FaultAction) -> Result<(), AdminError> {
        self.call::<_, serde_json::Value>(reqwest::Method::POST, "/admin/v1/faults", Some(action))
            .await
            .map(drop)
    }

    /// `DELETE /admin/v1/faults`: clears every fault and override.
    pub async fn clear_faults(&self) -> Result<(), AdminError> {
        self.call::<(), serde_json::Value>(reqwest::Method::DELETE, "/admin/v1/faults", None)
            .await
            .map(drop)
    }

    /// `PUT /admin/v1/pod-delays/{namespace}/{name}`.
    pub async fn set_pod_delays(
        &self,
        namespace: &str,
        name: &str,
        delays: PodDelays,
    ) -> Result<(), AdminError> {
        let body = PodDelaysBody {
            running: Some(hpa_core::go_duration::format(delays.running)),
            ready: Some(hpa_core::go_duration::format(delays.ready)),
            max_running: delays.max_running,
        };
        let path = format!("/admin/v1/pod-delays/{namespace}/{name}");
        self.call::<_, serde_json::Value>(reqwest::Method::PUT, &path, Some(&body))
            .await
            .map(drop)
    }

    /// `PUT /admin/v1/feature-gates`: makes the sim's API server `gates`'
    /// release with their overrides; answers the result.
    pub async fn set_feature_gates(
        &self,
        gates: &FeatureGates,
    ) -> Result<FeatureGatesState, AdminError> {
        let body = FeatureGatesBody::of(gates);
        self.call_for(reqwest::Method::PUT, "/admin/v1/feature-gates", Some(&body))
            .await
    }

    /// `GET /admin/v1/feature-gates`: the release and its gates.
    pub async fn feature_gates(&self) -> Result<FeatureGatesState, AdminError> {
        self.call_for::<(), _>(reqwest::Method::GET, "/admin/v1/feature-gates", None)
            .await
    }

    /// `POST /admin/v1/reset`: a fresh cluster for the next scenario.
    pub async fn reset(&self) -> Result<ResetSummary, AdminError> {
        self.call_for::<(), _>(reqwest::Method::POST, "/admin/v1/reset", None)
            .await
    }

    /// `GET /admin/v1/requests`.
    pub async fn requests(&self) -> Result<RequestCounts, AdminError> {
        self.call_for::<(), _>(reqwest::Method::GET, "/admin/v1/requests", None)
            .await
    }

    /// `DELETE /admin/v1/requests`: zeroes the counters.
    pub async fn reset_requests(&self) -> Result<(), AdminError> {
        self.call::<(), serde_json::Value>(reqwest::Method::DELETE, "/admin/v1/requests", None)
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_reads_durations_as_go_does_and_names_the_field() {
        let parse = super::super::parse_duration;
        assert_eq!(parse("advance", "0").unwrap(), SignedDuration::ZERO);
        assert_eq!(
            parse("advance", " -1.5m ").unwrap(),
            SignedDuration::from_secs(-90)
        );
        let err = parse("advance", "PT90S").unwrap_err().to_string();
        assert_eq!(
            err,
            r#"field advance: "PT90S" is not a duration like 90s or 1m30s: time: invalid duration "PT90S""#
        );
    }

    #[test]
    fn durations_are_sent_in_a_form_the_server_reads() {
        for d in [
            SignedDuration::from_secs(90),
            SignedDuration::from_millis(1500),
            SignedDuration::ZERO,
        ] {
            let text = hpa_core::go_duration::format(d);
            assert_eq!(
                super::super::parse_duration("x", &text).unwrap(),
                d,
                "{text}"
            );
        }
    }
}
