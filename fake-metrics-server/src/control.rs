//! The control API under `/control/v1`: how tests and the Gherkin runner
//! script the server while it runs.
//!
//! Bodies are YAML or JSON (by `Content-Type`, or by the first character
//! when there is none). A bad body is answered 400 with a `Status` naming
//! the line, column or field, and the data being served is left unchanged.

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use hpa_core::clock::{Clock, ClockMove, ClockState};
use jiff::SignedDuration;
use serde::{Deserialize, Serialize};

use crate::api_error::ApiError;
use crate::limits::ControlBody;
use crate::log::{Counters, LogFilter, LogPage};
use crate::script::{Api, Change, Fault, Faults, Script, ScriptPatch, from_body};
use crate::state::{AppState, StateError};

impl From<StateError> for ApiError {
    fn from(e: StateError) -> Self {
        match e {
            StateError::UnknownPod { .. } => Self::NotFound(e.to_string()),
            StateError::Script(_) => Self::BadRequest(e.to_string()),
        }
    }
}

impl From<crate::script::ScriptError> for ApiError {
    fn from(e: crate::script::ScriptError) -> Self {
        Self::BadRequest(e.to_string())
    }
}

/// What the server reports after a change: how much it now serves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Pods declared.
    pub pods: usize,
    /// Nodes declared.
    pub nodes: usize,
    /// Objects declared.
    pub objects: usize,
    /// External series declared.
    pub external: usize,
    /// Timeline steps not yet applied.
    pub pending_steps: usize,
    /// Rules declared.
    #[serde(default)]
    pub rules: usize,
    /// Pods the rules give values now (of those the server knows exist).
    #[serde(default)]
    pub pods_from_rules: usize,
    /// Pods the server knows exist (from its pod watch), whether declared
    /// or not.
    #[serde(default)]
    pub known_pods: usize,
}

/// Routes under `/control/v1`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/control/v1/script",
            get(get_script).put(put_script).patch(patch_script),
        )
        .route("/control/v1/summary", get(get_summary))
        .route("/control/v1/instance", get(get_instance))
        .route("/control/v1/changes", post(post_changes))
        .route(
            "/control/v1/faults",
            get(get_faults).put(put_faults).delete(delete_faults),
        )
        .route(
            "/control/v1/faults/{api}",
            put(put_fault).delete(delete_fault),
        )
        .route(
            "/control/v1/requests",
            get(get_requests).delete(delete_requests),
        )
        .route("/control/v1/counters", get(get_counters))
        .route("/control/v1/reset", post(post_reset))
        .route("/control/v1/clock", get(get_clock).post(post_clock))
        // A script for a load of 100,000 pods is about 15 MiB of YAML;
        // axum's default limit (2 MiB) would refuse it.
        .layer(axum::extract::DefaultBodyLimit::max(CONTROL_BODY_LIMIT))
}

/// The largest control request body accepted (see [`crate::limits`]).
pub const CONTROL_BODY_LIMIT: usize = crate::limits::MAX_BODY;

fn summary(state: &AppState) -> Summary {
    let script = state.script();
    Summary {
        pods: script.pods.len(),
        nodes: script.nodes.len(),
        objects: script.objects.len(),
        external: script.external.len(),
        pending_steps: script.timeline.len(),
        rules: script.rules.len(),
        pods_from_rules: state.read(|m, _| {
            m.resolved
                .keys()
                .filter(|k| !m.pods.contains_key(*k))
                .count()
        }),
        known_pods: state.inventory().0,
    }
}

#[derive(Debug, Default, Deserialize)]
struct FormatQuery {
    #[serde(default)]
    format: Option<String>,
}

async fn get_summary(State(state): State<AppState>) -> Json<Summary> {
    Json(summary(&state))
}

/// `GET /control/v1/instance`'s answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    /// The server's instance ([`AppState::instance`]).
    pub instance: String,
}

async fn get_instance(State(state): State<AppState>) -> Json<Instance> {
    Json(Instance {
        instance: state.instance().to_owned(),
    })
}

async fn get_script(
    State(state): State<AppState>,
    Query(q): Query<FormatQuery>,
) -> Result<Response, ApiError> {
    let script = state.script();
    if q.format.as_deref() == Some("yaml") {
        let text = serde_saphyr::to_string(&script)
            .map_err(|e| ApiError::BadRequest(format!("cannot render the script as YAML: {e}")))?;
        return Ok(([(header::CONTENT_TYPE, "application/yaml")], text).into_response());
    }
    Ok(Json(script).into_response())
}

async fn put_script(
    State(state): State<AppState>,
    body: ControlBody,
) -> Result<Json<Summary>, ApiError> {
    if body.is_blank() {
        // An empty body would read as an empty script and drop every pod.
        return Err(ApiError::BadRequest(
            "the script body is empty: send `{}` to serve nothing, or POST /control/v1/reset"
                .to_owned(),
        ));
    }
    let script = body
        .parse(|text, ct| Script::parse(text, ct).map_err(ApiError::from))
        .await?;
    state.load(&script)?;
    Ok(Json(summary(&state)))
}

async fn patch_script(
    State(state): State<AppState>,
    body: ControlBody,
) -> Result<Json<Summary>, ApiError> {
    if body.is_blank() {
        return Err(ApiError::BadRequest("the script patch is empty".to_owned()));
    }
    let patch = body
        .parse(|text, ct| ScriptPatch::parse(text, ct).map_err(ApiError::from))
        .await?;
    state.patch(&patch)?;
    Ok(Json(summary(&state)))
}

async fn post_changes(
    State(state): State<AppState>,
    body: ControlBody,
) -> Result<Json<Summary>, ApiError> {
    // A list (JSON `[` or YAML `-`) or a single change.
    let changes = body
        .parse(|body, ct| {
            let trimmed = body.trim_start();
            Ok(if trimmed.starts_with('[') || trimmed.starts_with('-') {
                from_body::<Vec<Change>>(body, ct)?
            } else {
                vec![from_body::<Change>(body, ct)?]
            })
        })
        .await?;
    state.apply(&changes)?;
    Ok(Json(summary(&state)))
}

async fn get_faults(State(state): State<AppState>) -> Json<Faults> {
    Json(state.faults())
}

async fn put_faults(
    State(state): State<AppState>,
    body: ControlBody,
) -> Result<Json<Faults>, ApiError> {
    let faults: Faults = from_body(&body.text, body.content_type.as_deref())?;
    crate::script::check_faults("faults", &faults)?;
    state.set_faults(faults);
    Ok(Json(state.faults()))
}

async fn delete_faults(State(state): State<AppState>) -> Json<Faults> {
    state.set_faults(Faults::default());
    Json(state.faults())
}

fn parse_api(text: &str) -> Result<Api, ApiError> {
    text.parse().map_err(ApiError::BadRequest)
}

/// `?namespace=NS` limits a fault to the requests in one namespace.
#[derive(Debug, Default, Deserialize)]
struct FaultQuery {
    #[serde(default)]
    namespace: Option<String>,
}

impl FaultQuery {
    fn namespace(&self) -> Result<Option<&str>, ApiError> {
        if let Some(ns) = &self.namespace {
            crate::document::check_name("namespace", ns)?;
        }
        Ok(self.namespace.as_deref())
    }
}

async fn put_fault(
    State(state): State<AppState>,
    Path(api): Path<String>,
    Query(query): Query<FaultQuery>,
    body: ControlBody,
) -> Result<Json<Faults>, ApiError> {
    let api = parse_api(&api)?;
    let namespace = query.namespace()?;
    let fault: Fault = from_body(&body.text, body.content_type.as_deref())?;
    crate::script::check_fault("status", fault.status)?;
    state.update_faults(|faults| faults.set_in(namespace, api, Some(fault)));
    Ok(Json(state.faults()))
}

async fn delete_fault(
    State(state): State<AppState>,
    Path(api): Path<String>,
    Query(query): Query<FaultQuery>,
) -> Result<Json<Faults>, ApiError> {
    let api = parse_api(&api)?;
    let namespace = query.namespace()?;
    state.update_faults(|faults| faults.set_in(namespace, api, None));
    Ok(Json(state.faults()))
}

async fn get_requests(
    State(state): State<AppState>,
    Query(filter): Query<LogFilter>,
) -> Json<LogPage> {
    Json(state.log().page(&filter))
}

async fn delete_requests(State(state): State<AppState>) -> StatusCode {
    state.log().clear();
    StatusCode::NO_CONTENT
}

async fn get_counters(State(state): State<AppState>) -> Json<Counters> {
    Json(state.log().counters())
}

/// `?namespace=NS` limits a reset to one namespace's data.
#[derive(Debug, Default, Deserialize)]
struct ResetQuery {
    #[serde(default)]
    namespace: Option<String>,
}

async fn post_reset(State(state): State<AppState>, Query(q): Query<ResetQuery>) -> StatusCode {
    match q.namespace.as_deref() {
        Some(ns) => state.reset_namespace(ns),
        None => state.reset(),
    }
    StatusCode::NO_CONTENT
}

fn clock_state(state: &AppState) -> ClockState {
    let clock = state.clock();
    ClockState {
        now: clock.now(),
        is_virtual: clock.is_virtual(),
        offset: crate::script::format_go_duration(clock.offset()),
    }
}

async fn get_clock(State(state): State<AppState>) -> Json<ClockState> {
    Json(clock_state(&state))
}

async fn post_clock(
    State(state): State<AppState>,
    body: ControlBody,
) -> Result<Json<ClockState>, ApiError> {
    let m: ClockMove = from_body(&body.text, body.content_type.as_deref())?;
    match (&m.advance, m.set) {
        (Some(by), None) => {
            let by: SignedDuration = crate::script::parse_go_duration(by.trim())
                .map_err(|e| ApiError::BadRequest(format!("clock field advance: {e}")))?;
            crate::limits::clock_advance(state.clock().now(), by)
                .map_err(|e| ApiError::BadRequest(format!("clock field advance: {e}")))?;
            state.clock().advance(by);
        }
        (None, Some(at)) => {
            let at = crate::limits::clock_set(at)
                .map_err(|e| ApiError::BadRequest(format!("clock field set: {e}")))?;
            state.clock().set(at);
        }
        _ => {
            return Err(ApiError::BadRequest(
                "clock: give exactly one of advance or set".to_owned(),
            ));
        }
    }
    Ok(Json(clock_state(&state)))
}
