//! The admin API under `/admin/v1/`: everything the in-process scenario
//! world does through [`Sim`] methods, over HTTP, so the same scenarios can
//! drive a separate `hpa-harness sim` process (and a load run can count the
//! API calls it caused).
//!
//! Bodies and answers are JSON with camelCase keys; durations are Go-style
//! (`90s`, `1m30s`, `500ms`). A bad body is answered 400 with
//! `{"message": ...}` naming the field; asking to move a wall clock is
//! answered 409.
//!
//! | endpoint | body | effect |
//! | --- | --- | --- |
//! | `GET /admin/v1/clock` | | [`ClockState`] |
//! | `POST /admin/v1/clock` | `{"advance": "90s"}` or `{"set": RFC 3339}` | [`Sim::advance`], or puts the clock there; answers [`ClockState`] |
//! | `POST /admin/v1/faults` | one [`FaultAction`], e.g. `{"failGetScale": {"namespace": "default", "name": "web", "fail": true}}` | sets it; 204 |
//! | `POST /admin/v1/faults` | `{"forbid": {"verb": "get", "resource": "deployments.apps/scale"}}` | that verb on that resource answers 403 Forbidden, as RBAC would; 204 |
//! | `DELETE /admin/v1/faults` | | clears every fault and override; 204 |
//!
//! Faults also include `{"lagHpaWatch": {"lag": "20s"}}`: HPA watches and
//! lists lag that far behind the writes (`"0s"`: caught up).
//! | `PUT /admin/v1/pod-delays/{namespace}/{name}` | [`PodDelaysBody`] `{"running": "0s", "ready": "30s", "maxRunning": 2}` | [`Sim::set_pod_delays`]; 204 |
//! | `GET /admin/v1/feature-gates` | | [`FeatureGatesState`]: the release and every gate it registers |
//! | `PUT /admin/v1/feature-gates` | [`FeatureGatesBody`] `{"kubernetesVersion": "1.36", "featureGates": "HPAScaleToZero=true"}` | [`Sim::set_feature_gates`]; answers [`FeatureGatesState`] |
//! | `POST /admin/v1/reset` | | [`Sim::reset`]; answers [`ResetSummary`] |
//! | `GET /admin/v1/requests` | | [`RequestCounts`] |
//! | `DELETE /admin/v1/requests` | | zeroes the counters; 204 |
//!
//! `PUT /admin/v1/feature-gates` also takes the older body, a map of gate
//! names to values (`{"HPAScaleToZero": true}`), set on top of the sim's
//! current gates under its release. Either way a refused gate (unknown to
//! the release, or locked) is a 400 and changes nothing.
//!
//! Admin requests are not counted in the request counters: they are the
//! harness talking, not a Kubernetes client.

mod client;
mod control;

pub use client::{AdminClient, AdminError};
pub use control::SimAdmin;
/// The clock's wire types, shared with the fake metrics server's control API.
pub use hpa_core::clock::{ClockMove, ClockState};

use std::collections::BTreeMap;

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use bytes::Bytes;
use http::StatusCode;
use jiff::{SignedDuration, Timestamp};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use hpa_core::gates::{FeatureGates, GateError};
use hpa_core::version::KubernetesVersion;

use crate::sim::Sim;
use crate::state::PodDelays;

/// Why an admin request was refused (the server side).
#[derive(Debug, thiserror::Error)]
pub enum AdminRejection {
    /// The body or a path part is not what the endpoint takes.
    #[error("{0}")]
    BadRequest(String),
    /// The request does not fit the sim's state (a clock change on a wall clock).
    #[error("{0}")]
    Conflict(String),
}

/// The JSON body of an admin error answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What was wrong, naming the field.
    pub message: String,
}

impl IntoResponse for AdminRejection {
    fn into_response(self) -> Response {
        let code = match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Conflict(_) => StatusCode::CONFLICT,
        };
        (
            code,
            axum::Json(ErrorBody {
                message: self.to_string(),
            }),
        )
            .into_response()
    }
}

/// One fault action: the body of `POST /admin/v1/faults`, a JSON object with
/// exactly one key naming the action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum FaultAction {
    /// GET `/scale` of the target answers 500 (or not, with `fail: false`).
    FailGetScale(ToggleFault),
    /// PUT/PATCH `/scale` of the target answer 500 (or not).
    FailUpdateScale(ToggleFault),
    /// The next `times` status writes of the HPA answer 409.
    ConflictHpaStatus(CountedFault),
    /// The next `times` scale updates of the target answer 409.
    ConflictUpdateScale(CountedFault),
    /// The target's `/scale` reports these replica counts.
    OverrideScaleReplicas(ReplicasOverride),
    /// The target's `/scale` reports this selector (`""`: none).
    OverrideScaleSelector(SelectorOverride),
    /// Requests with this verb on this resource answer 403 Forbidden, as
    /// when RBAC denies them (or not, with `forbid: false`).
    Forbid(ForbidFault),
    /// HPA watches and lists lag this far behind the writes
    /// ([`Sim::lag_hpa_watch`]; `"0s"`: caught up).
    LagHpaWatch(WatchLag),
}

/// How far a watch lags: a Go duration (`20s`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WatchLag {
    /// The lag (`0s`: none).
    pub lag: String,
}

fn default_namespace() -> String {
    "default".to_owned()
}

fn yes() -> bool {
    true
}

/// A fault that is on or off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToggleFault {
    /// Namespace of the target (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Name of the target.
    pub name: String,
    /// On (default) or off.
    #[serde(default = "yes")]
    pub fail: bool,
}

/// A verb on a resource that RBAC denies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForbidFault {
    /// The verb as the request counters name it: `get`, `list`, `watch`,
    /// `create`, `update`, `patch`, `delete`.
    pub verb: String,
    /// The resource as the request counters name it, with its group and
    /// subresource: `horizontalpodautoscalers.autoscaling`,
    /// `deployments.apps/scale`, `pods`; an aggregated API's as
    /// `RESOURCE.GROUP` (`pods.metrics.k8s.io`).
    pub resource: String,
    /// Denied (default) or allowed again.
    #[serde(default = "yes")]
    pub forbid: bool,
}

/// A fault for the next `times` requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CountedFault {
    /// Namespace of the object (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Name of the object.
    pub name: String,
    /// How many requests fail.
    pub times: u32,
}

/// Replica counts a `/scale` reports instead of the truth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplicasOverride {
    /// Namespace of the target (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Name of the target.
    pub name: String,
    /// `spec.replicas` to report.
    pub spec: i32,
    /// `status.replicas` to report.
    pub status: i32,
}

/// A selector a `/scale` reports instead of the truth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectorOverride {
    /// Namespace of the target (default `default`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Name of the target.
    pub name: String,
    /// The selector (`""` reports none).
    pub selector: String,
}

/// Body of `PUT /admin/v1/pod-delays/{namespace}/{name}`: Go durations,
/// each `0s` when absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodDelaysBody {
    /// From creation to Running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<String>,
    /// From Running to Ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
    /// Pods of the workload that may run at once; the rest stay Pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_running: Option<u32>,
}

/// Body of `PUT /admin/v1/feature-gates`: the API server's release and its
/// `--feature-gates`. The sim's gates become the release's defaults with
/// these overrides (those of an earlier PUT do not carry over).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureGatesBody {
    /// `1.35`, `1.36`, `1.37` or `1.38` (`v1.36.2` reads as 1.36); absent: the
    /// sim's current release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// Overrides in the `--feature-gates` syntax (`A=true,B=false`), under
    /// upstream's rules; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_gates: Option<String>,
}

impl FeatureGatesBody {
    /// The body that makes a sim's gates `gates`.
    pub fn of(gates: &FeatureGates) -> Self {
        Self {
            kubernetes_version: Some(gates.version().to_string()),
            feature_gates: Some(gates.to_string()),
        }
    }

    /// The gates this body asks for, the release defaulting to `current`;
    /// the error names the field.
    pub fn gates(&self, current: KubernetesVersion) -> Result<FeatureGates, AdminRejection> {
        let version = match &self.kubernetes_version {
            Some(text) => text
                .parse()
                .map_err(|e| AdminRejection::BadRequest(format!("field kubernetesVersion: {e}")))?,
            None => current,
        };
        let overrides = self.feature_gates.as_deref().unwrap_or_default();
        FeatureGates::parse(version, overrides)
            .map_err(|e| AdminRejection::BadRequest(format!("field featureGates: {e}")))
    }
}

/// Answer of `GET` and `PUT /admin/v1/feature-gates`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGatesState {
    /// The release the sim's API server is (what `/version` reports).
    pub kubernetes_version: KubernetesVersion,
    /// The overrides, in the `--feature-gates` syntax (`""`: none).
    pub feature_gates: String,
    /// Every gate the release registers, with its value.
    pub gates: BTreeMap<String, bool>,
}

impl FeatureGatesState {
    /// The state of `gates`.
    pub fn of(gates: &FeatureGates) -> Self {
        Self {
            kubernetes_version: gates.version(),
            feature_gates: gates.to_string(),
            gates: gates
                .iter()
                .map(|(gate, on, _)| (gate.name().to_owned(), on))
                .collect(),
        }
    }

    /// The gates this state describes.
    pub fn to_gates(&self) -> Result<FeatureGates, GateError> {
        FeatureGates::parse(self.kubernetes_version, &self.feature_gates)
    }
}

/// Answer of `POST /admin/v1/reset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetSummary {
    /// Objects removed.
    pub removed: usize,
    /// The resourceVersion after the reset (it never goes back).
    pub resource_version: u64,
}

/// One request counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestCount {
    /// Kubernetes audit verb (`get`, `list`, `watch`, `update`, ...).
    pub verb: String,
    /// `plural[/sub]`, with the group when not core (`deployments.apps/scale`).
    pub resource: String,
    /// Requests served.
    pub count: u64,
}

/// Answer of `GET /admin/v1/requests`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestCounts {
    /// Sum of all counts.
    pub total: u64,
    /// Counts by verb and resource, sorted.
    pub requests: Vec<RequestCount>,
}

/// Parses a Go duration (`90s`, `1m30s`, `500ms`, `-1m`) as Go's
/// `time.ParseDuration` does.
pub fn parse_duration(field: &str, text: &str) -> Result<SignedDuration, AdminRejection> {
    hpa_core::go_duration::parse(text.trim()).map_err(|e| {
        AdminRejection::BadRequest(format!(
            "field {field}: {text:?} is not a duration like 90s or 1m30s: {e}"
        ))
    })
}

/// Decodes a JSON body; the error names the endpoint and the field path.
fn decode<T: DeserializeOwned>(endpoint: &str, body: &[u8]) -> Result<T, AdminRejection> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            AdminRejection::BadRequest(format!("body of {endpoint}: {inner}"))
        } else {
            AdminRejection::BadRequest(format!("body of {endpoint}: field {path}: {inner}"))
        }
    })
}

/// The admin routes (absolute paths under `/admin/v1/`), to merge into the
/// sim's router.
pub fn router(sim: Sim) -> Router {
    Router::new()
        .route("/admin/v1/clock", get(get_clock).post(post_clock))
        .route("/admin/v1/faults", post(post_fault).delete(delete_faults))
        .route(
            "/admin/v1/pod-delays/{namespace}/{name}",
            put(put_pod_delays),
        )
        .route("/admin/v1/feature-gates", get(get_gates).put(put_gates))
        .route("/admin/v1/reset", post(post_reset))
        .route(
            "/admin/v1/requests",
            get(get_requests).delete(delete_requests),
        )
        .with_state(sim)
}

enum ClockChange {
    Advance(SignedDuration),
    Set(Timestamp),
}

pub(crate) fn clock_state(sim: &Sim) -> ClockState {
    ClockState {
        now: sim.clock().now(),
        is_virtual: sim.virtual_clock().is_some(),
        offset: String::new(),
    }
}

async fn get_clock(State(sim): State<Sim>) -> axum::Json<ClockState> {
    axum::Json(clock_state(&sim))
}

async fn post_clock(
    State(sim): State<Sim>,
    body: Bytes,
) -> Result<axum::Json<ClockState>, AdminRejection> {
    let m: ClockMove = decode("POST /admin/v1/clock", &body)?;
    let change = match (&m.advance, m.set) {
        (Some(text), None) => {
            let by = parse_duration("advance", text)?;
            if by.is_negative() {
                return Err(AdminRejection::BadRequest(format!(
                    "field advance: {text:?} is negative; the sim's clock only moves forward (use set)"
                )));
            }
            ClockChange::Advance(by)
        }
        (None, Some(at)) => ClockChange::Set(at),
        _ => {
            return Err(AdminRejection::BadRequest(
                "body of POST /admin/v1/clock: give exactly one of the fields advance or set"
                    .to_owned(),
            ));
        }
    };
    let Some(clock) = sim.virtual_clock() else {
        return Err(AdminRejection::Conflict(
            "the sim runs on the wall clock, which cannot be moved; start it with --virtual-clock"
                .to_owned(),
        ));
    };
    match change {
        ClockChange::Advance(by) => sim.advance(by),
        ClockChange::Set(at) => {
            clock.set(at);
            sim.process_due();
        }
    }
    Ok(axum::Json(clock_state(&sim)))
}

/// Applies one fault action to `sim`; refuses (with why) a value that does
/// not parse.
pub fn apply_fault(sim: &Sim, action: &FaultAction) -> Result<(), String> {
    let f = sim.faults();
    match action {
        FaultAction::FailGetScale(t) => f.fail_get_scale(&t.namespace, &t.name, t.fail),
        FaultAction::FailUpdateScale(t) => f.fail_update_scale(&t.namespace, &t.name, t.fail),
        FaultAction::ConflictHpaStatus(c) => f.conflict_hpa_status(&c.namespace, &c.name, c.times),
        FaultAction::ConflictUpdateScale(c) => {
            f.conflict_update_scale(&c.namespace, &c.name, c.times);
        }
        FaultAction::OverrideScaleReplicas(o) => {
            f.override_scale_replicas(&o.namespace, &o.name, o.spec, o.status);
        }
        FaultAction::OverrideScaleSelector(o) => {
            f.override_scale_selector(&o.namespace, &o.name, &o.selector);
        }
        FaultAction::Forbid(d) => f.forbid(&d.verb, &d.resource, d.forbid),
        FaultAction::LagHpaWatch(w) => {
            let lag = parse_duration("lagHpaWatch.lag", &w.lag).map_err(|e| e.to_string())?;
            if lag.is_negative() {
                return Err(format!("field lagHpaWatch.lag: {:?} is negative", w.lag));
            }
            sim.lag_hpa_watch(lag);
        }
    }
    Ok(())
}

async fn post_fault(State(sim): State<Sim>, body: Bytes) -> Result<StatusCode, AdminRejection> {
    const ENDPOINT: &str = "POST /admin/v1/faults";
    let raw: serde_json::Value = decode(ENDPOINT, &body)?;
    if let Some(map) = raw.as_object()
        && map.len() != 1
    {
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        return Err(AdminRejection::BadRequest(format!(
            "body of {ENDPOINT}: give exactly one action (a key such as failGetScale), got {}: {}",
            keys.len(),
            keys.join(", ")
        )));
    }
    let action: FaultAction = decode(ENDPOINT, &body)?;
    apply_fault(&sim, &action).map_err(AdminRejection::BadRequest)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn delete_faults(State(sim): State<Sim>) -> StatusCode {
    sim.clear_faults();
    StatusCode::NO_CONTENT
}

async fn put_pod_delays(
    State(sim): State<Sim>,
    Path((namespace, name)): Path<(String, String)>,
    body: Bytes,
) -> Result<StatusCode, AdminRejection> {
    let b: PodDelaysBody = decode("PUT /admin/v1/pod-delays", &body)?;
    let delay = |field: &str, v: &Option<String>| match v {
        Some(text) => {
            let d = parse_duration(field, text)?;
            if d.is_negative() {
                return Err(AdminRejection::BadRequest(format!(
                    "field {field}: {text:?} is negative"
                )));
            }
            Ok(d)
        }
        None => Ok(SignedDuration::ZERO),
    };
    let delays = PodDelays {
        running: delay("running", &b.running)?,
        ready: delay("ready", &b.ready)?,
        max_running: b.max_running,
    };
    sim.set_pod_delays(&namespace, &name, delays);
    Ok(StatusCode::NO_CONTENT)
}

async fn get_gates(State(sim): State<Sim>) -> axum::Json<FeatureGatesState> {
    axum::Json(FeatureGatesState::of(&sim.feature_gates()))
}

/// Whether a `PUT /admin/v1/feature-gates` body is a [`FeatureGatesBody`]
/// rather than the older map of gate names (no gate is named like its fields).
fn is_gates_body(raw: &serde_json::Value) -> bool {
    raw.as_object().is_some_and(|m| {
        m.keys()
            .all(|k| k == "kubernetesVersion" || k == "featureGates")
    })
}

async fn put_gates(
    State(sim): State<Sim>,
    body: Bytes,
) -> Result<axum::Json<FeatureGatesState>, AdminRejection> {
    const ENDPOINT: &str = "PUT /admin/v1/feature-gates";
    let raw: serde_json::Value = decode(ENDPOINT, &body)?;
    let current = sim.feature_gates();
    // Every check passes before anything changes.
    let gates = if is_gates_body(&raw) {
        decode::<FeatureGatesBody>(ENDPOINT, &body)?.gates(current.version())?
    } else {
        let asked: BTreeMap<String, bool> = decode(ENDPOINT, &body)?;
        let mut gates = current;
        for (name, on) in &asked {
            gates
                .set(name, *on)
                .map_err(|e| AdminRejection::BadRequest(format!("field {name}: {e}")))?;
        }
        gates
    };
    sim.set_feature_gates(&gates);
    Ok(axum::Json(FeatureGatesState::of(&gates)))
}

async fn post_reset(State(sim): State<Sim>) -> axum::Json<ResetSummary> {
    let removed = sim.reset();
    axum::Json(ResetSummary {
        removed,
        resource_version: sim.resource_version(),
    })
}

/// The sim's request counters as the admin API reports them.
pub fn request_counts(sim: &Sim) -> RequestCounts {
    let requests: Vec<RequestCount> = sim
        .requests()
        .snapshot()
        .into_iter()
        .map(|((verb, resource), count)| RequestCount {
            verb,
            resource,
            count,
        })
        .collect();
    RequestCounts {
        total: requests.iter().map(|r| r.count).sum(),
        requests,
    }
}

async fn get_requests(State(sim): State<Sim>) -> axum::Json<RequestCounts> {
    axum::Json(request_counts(&sim))
}

async fn delete_requests(State(sim): State<Sim>) -> StatusCode {
    sim.requests().reset();
    StatusCode::NO_CONTENT
}
