//! A typed client for the control API, used by tests and the Gherkin runner.
//!
//! Values are sent as text and checked by the server, so a bad quantity
//! comes back as [`ClientError::Rejected`] carrying the server's own 400
//! message, exactly what a scenario author should see.

use std::collections::BTreeMap;

use hpa_control_client::CallError;
use hpa_core::clock::{ClockMove, ClockState};
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value as Json, json};

use crate::control::Summary;
use crate::log::{Counters, LogFilter, LogPage};
use crate::script::{Api, Change, Fault, Faults, PodSpec, Script, ScriptPatch};

/// Errors from the control client.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The HTTP client could not be built.
    #[error("building the HTTP client")]
    Build(#[source] reqwest::Error),
    /// The request did not reach the server or the answer was unreadable.
    #[error("{method} {url}: {source}")]
    Http {
        /// Method.
        method: String,
        /// URL.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered success with a body that is not what was expected.
    #[error("{url}: {message}")]
    Unexpected {
        /// URL.
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The request body could not be serialized.
    #[error("encoding the body for {path}: {source}")]
    Encode {
        /// Control path.
        path: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The server refused the request; `message` is its own explanation.
    #[error("{method} {url}: server answered {status}: {message}")]
    Rejected {
        /// Method.
        method: String,
        /// URL.
        url: String,
        /// HTTP status.
        status: u16,
        /// The `message` of the server's Status body (or the raw body).
        message: String,
    },
}

/// Talks to `/control/v1` of one server.
#[derive(Clone, Debug)]
pub struct ControlClient {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl ControlClient {
    /// A client for the server at `base_url` (e.g. `https://127.0.0.1:8443`).
    /// Self-signed certificates are accepted: the server makes its own.
    pub fn new(base_url: impl Into<String>) -> Result<Self, ClientError> {
        let http = hpa_control_client::http_client(true).map_err(ClientError::Build)?;
        Ok(Self::with_http(http, base_url))
    }

    /// A client using an existing reqwest client. It sends the control
    /// token of `FMS_CONTROL_TOKEN` when that is set (see [`Self::with_token`]).
    pub fn with_http(http: reqwest::Client, base_url: impl Into<String>) -> Self {
        let base = base_url.into().trim_end_matches('/').to_owned();
        let token = std::env::var(crate::auth::TOKEN_ENV)
            .ok()
            .filter(|t| !t.trim().is_empty());
        Self { http, base, token }
    }

    /// Sends `token` as the control API's token (none: send nothing).
    #[must_use]
    pub fn with_token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    async fn send<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<reqwest::Body>,
        content_type: &str,
    ) -> Result<Option<T>, ClientError> {
        let url = format!("{}/control/v1/{path}", self.base);
        let mut request = self.http.request(method.clone(), &url);
        if let Some(token) = &self.token {
            request = request.header(crate::auth::TOKEN_HEADER, token);
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body);
        }
        hpa_control_client::exchange(request)
            .await
            .map_err(|e| match e {
                CallError::Http(source) => ClientError::Http {
                    method: method.to_string(),
                    url,
                    source,
                },
                CallError::Rejected { status, message } => ClientError::Rejected {
                    method: method.to_string(),
                    url,
                    status,
                    message,
                },
                CallError::Decode(e) => ClientError::Unexpected {
                    url,
                    message: format!("unreadable answer: {e}"),
                },
            })
    }

    async fn json<T: DeserializeOwned, B: Serialize>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        let body = serde_json::to_vec(body).map_err(|e| ClientError::Encode {
            path: path.to_owned(),
            source: e,
        })?;
        self.send(method.clone(), path, Some(body.into()), "application/json")
            .await?
            .ok_or_else(|| ClientError::Unexpected {
                url: format!("{}/control/v1/{path}", self.base),
                message: "empty answer".to_owned(),
            })
    }

    async fn no_body(&self, method: reqwest::Method, path: &str) -> Result<(), ClientError> {
        self.send::<Json>(method, path, None, "").await.map(|_| ())
    }

    async fn get<T: DeserializeOwned + Default>(&self, path: &str) -> Result<T, ClientError> {
        Ok(self
            .send(reqwest::Method::GET, path, None, "")
            .await?
            .unwrap_or_default())
    }

    /// Replaces the script.
    pub async fn put_script(&self, script: &Script) -> Result<Summary, ClientError> {
        self.json(reqwest::Method::PUT, "script", script).await
    }

    /// Replaces the script with YAML text (checked by the server).
    pub async fn put_script_yaml(&self, yaml: &str) -> Result<Summary, ClientError> {
        self.send(
            reqwest::Method::PUT,
            "script",
            Some(yaml.to_owned().into()),
            "application/yaml",
        )
        .await
        .map(Option::unwrap_or_default)
    }

    /// Patches the script (upserts, removals, appended timeline).
    pub async fn patch_script(&self, patch: &ScriptPatch) -> Result<Summary, ClientError> {
        self.json(reqwest::Method::PATCH, "script", patch).await
    }

    /// How much the server serves now: pods, rules and the pods they give
    /// values, the pods it knows exist.
    pub async fn summary(&self) -> Result<Summary, ClientError> {
        self.get("summary").await
    }

    /// The server's instance: what it sends with every answer in
    /// [`crate::api::INSTANCE_HEADER`].
    pub async fn instance(&self) -> Result<String, ClientError> {
        let found: crate::control::Instance = self.get("instance").await?;
        Ok(found.instance)
    }

    /// The data served now, with the pending timeline.
    pub async fn script(&self) -> Result<Script, ClientError> {
        self.get("script").await
    }

    /// Applies changes in order, all or nothing.
    pub async fn apply(&self, changes: &[Change]) -> Result<Summary, ClientError> {
        self.json(reqwest::Method::POST, "changes", &changes).await
    }

    /// Sends one change written as JSON (checked by the server).
    pub async fn apply_json(&self, change: Json) -> Result<Summary, ClientError> {
        self.json(reqwest::Method::POST, "changes", &change).await
    }

    /// Adds or replaces a pod. Quantities in `pod` are checked by the
    /// server, so a bad one comes back as [`ClientError::Rejected`].
    pub async fn set_pod(&self, pod: &PodSpec) -> Result<Summary, ClientError> {
        self.apply(&[Change::Pod(pod.clone())]).await
    }

    /// Removes a pod and its metrics.
    pub async fn remove_pod(&self, namespace: &str, name: &str) -> Result<Summary, ClientError> {
        self.apply_json(json!({"removePod": {"namespace": namespace, "name": name}}))
            .await
    }

    /// Sets the usage of one container of a pod; `None` leaves that
    /// resource as it is.
    pub async fn set_container_usage(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        cpu: Option<&str>,
        memory: Option<&str>,
    ) -> Result<Summary, ClientError> {
        let mut usage = json!({"namespace": namespace, "pod": pod, "container": container});
        if let Some(cpu) = cpu {
            usage["cpu"] = json!(cpu);
        }
        if let Some(memory) = memory {
            usage["memory"] = json!(memory);
        }
        self.apply_json(json!({ "podUsage": usage })).await
    }

    /// Leaves a pod out of metrics.k8s.io (`true`) or puts it back.
    pub async fn set_pod_missing(
        &self,
        namespace: &str,
        pod: &str,
        missing: bool,
    ) -> Result<Summary, ClientError> {
        self.apply_json(
            json!({"podMissing": {"namespace": namespace, "pod": pod, "missing": missing}}),
        )
        .await
    }

    /// Sets a custom metric of a pod; `None` removes it (the pod then has
    /// no value for that metric).
    pub async fn set_pod_metric(
        &self,
        namespace: &str,
        pod: &str,
        metric: &str,
        value: Option<&str>,
    ) -> Result<Summary, ClientError> {
        self.apply_json(json!({"podMetric": {
            "namespace": namespace, "pod": pod, "metric": metric, "value": value}}))
            .await
    }

    /// Sets a metric of an object (`resource` plural, e.g. `services`);
    /// `namespace` `None` for a root-scoped object; `value` `None` removes.
    pub async fn set_object_metric(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
        metric: &str,
        value: Option<&str>,
    ) -> Result<Summary, ClientError> {
        let mut m = json!({"resource": resource, "name": name, "metric": metric, "value": value});
        if let Some(ns) = namespace {
            m["namespace"] = json!(ns);
        }
        self.apply_json(json!({ "objectMetric": m })).await
    }

    /// Sets an external series; `value` `None` removes it.
    pub async fn set_external_metric(
        &self,
        namespace: &str,
        metric: &str,
        labels: &BTreeMap<String, String>,
        value: Option<&str>,
    ) -> Result<Summary, ClientError> {
        self.apply_json(json!({"externalMetric": {
            "namespace": namespace, "metric": metric, "labels": labels, "value": value}}))
            .await
    }

    /// The faults now.
    pub async fn faults(&self) -> Result<Faults, ClientError> {
        self.get("faults").await
    }

    /// Replaces all faults.
    pub async fn set_faults(&self, faults: &Faults) -> Result<Faults, ClientError> {
        self.json(reqwest::Method::PUT, "faults", faults).await
    }

    /// Sets the fault of one API.
    pub async fn set_fault(&self, api: Api, fault: &Fault) -> Result<Faults, ClientError> {
        self.json(reqwest::Method::PUT, &format!("faults/{api}"), fault)
            .await
    }

    /// Makes one API answer `status` (e.g. 500) until cleared.
    pub async fn fail(&self, api: Api, status: u16) -> Result<Faults, ClientError> {
        self.set_fault(
            api,
            &Fault {
                status: Some(status),
                ..Fault::default()
            },
        )
        .await
    }

    /// Clears the fault of one API.
    pub async fn clear_fault(&self, api: Api) -> Result<Faults, ClientError> {
        self.send(reqwest::Method::DELETE, &format!("faults/{api}"), None, "")
            .await
            .map(Option::unwrap_or_default)
    }

    /// Makes one API answer `status` to the requests in `namespace` only,
    /// until cleared (other namespaces are served as before).
    pub async fn fail_in(
        &self,
        namespace: &str,
        api: Api,
        status: u16,
    ) -> Result<Faults, ClientError> {
        let fault = Fault {
            status: Some(status),
            ..Fault::default()
        };
        self.json(
            reqwest::Method::PUT,
            &format!("faults/{api}?namespace={namespace}"),
            &fault,
        )
        .await
    }

    /// Clears the fault of one API in `namespace`.
    pub async fn clear_fault_in(&self, namespace: &str, api: Api) -> Result<Faults, ClientError> {
        self.send(
            reqwest::Method::DELETE,
            &format!("faults/{api}?namespace={namespace}"),
            None,
            "",
        )
        .await
        .map(Option::unwrap_or_default)
    }

    /// Clears all faults.
    pub async fn clear_faults(&self) -> Result<Faults, ClientError> {
        self.send(reqwest::Method::DELETE, "faults", None, "")
            .await
            .map(Option::unwrap_or_default)
    }

    /// Request log entries matching `filter`, with the counters.
    pub async fn requests(&self, filter: &LogFilter) -> Result<LogPage, ClientError> {
        let mut query: Vec<(&str, String)> = Vec::new();
        if let Some(g) = filter.group {
            let g = serde_json::to_value(g)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            query.push(("group", g));
        }
        if let Some(s) = filter.since {
            query.push(("since", s.to_string()));
        }
        if let Some(p) = &filter.path {
            query.push(("path", p.clone()));
        }
        if let Some(l) = filter.limit {
            query.push(("limit", l.to_string()));
        }
        let encoded: Vec<String> = query
            .iter()
            .map(|(k, v)| format!("{k}={}", percent_encode(v)))
            .collect();
        let path = if encoded.is_empty() {
            "requests".to_owned()
        } else {
            format!("requests?{}", encoded.join("&"))
        };
        self.get(&path).await
    }

    /// Request counters per group.
    pub async fn counters(&self) -> Result<Counters, ClientError> {
        self.get("counters").await
    }

    /// Clears the request log and counters.
    pub async fn clear_requests(&self) -> Result<(), ClientError> {
        self.no_body(reqwest::Method::DELETE, "requests").await
    }

    /// Empty script, no faults, empty log, wall-clock offset zero.
    pub async fn reset(&self) -> Result<(), ClientError> {
        self.no_body(reqwest::Method::POST, "reset").await
    }

    /// Forgets the pods, objects and external series of `namespace` only
    /// (a namespace name needs no escaping in a query).
    pub async fn reset_namespace(&self, namespace: &str) -> Result<(), ClientError> {
        self.no_body(
            reqwest::Method::POST,
            &format!("reset?namespace={namespace}"),
        )
        .await
    }

    /// The server's clock.
    pub async fn clock(&self) -> Result<ClockState, ClientError> {
        self.send(reqwest::Method::GET, "clock", None, "")
            .await?
            .ok_or_else(|| ClientError::Unexpected {
                url: format!("{}/control/v1/clock", self.base),
                message: "empty answer".to_owned(),
            })
    }

    /// Moves the server's clock (or its wall-clock offset) by `by`.
    pub async fn advance_clock(&self, by: SignedDuration) -> Result<ClockState, ClientError> {
        let body = ClockMove {
            advance: Some(crate::script::format_go_duration(by)),
            set: None,
        };
        self.json(reqwest::Method::POST, "clock", &body).await
    }

    /// Puts the server's clock at `at`.
    pub async fn set_clock(&self, at: Timestamp) -> Result<ClockState, ClientError> {
        let body = ClockMove {
            advance: None,
            set: Some(at),
        };
        self.json(reqwest::Method::POST, "clock", &body).await
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters pass).
fn percent_encode(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
