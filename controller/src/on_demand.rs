//! Syncs on demand, over HTTP: how `hpa-harness test --controller-binary`
//! drives this binary through a scenario (`hpa-controller
//! --sync-on-demand`, a hidden flag).
//!
//! Everything else is the binary as deployed: its flags and defaults, its
//! client and rate limits, its caches, its leader election. Only when it
//! syncs and what time it is come from the harness: a scenario runs on a
//! virtual clock, and a process cannot follow that clock by itself. Each
//! request carries the scenario's `now`; the controller's clock moves to it
//! (never back) and stands there until the next request.
//!
//! - `POST /debug/sync` `{"now": T, "queuedOnly": false}`: reconciles every
//!   HPA once (`queuedOnly`: those the release queues at once, see
//!   [`ControllerHandle::sync_queued_now`]) and answers the [`SyncReport`];
//! - `POST /debug/seed` `{"now": T, "namespace", "name", "recommendations"
//!   | "scaleEvents": [...]}`: hands history to the controller;
//! - `GET /debug/history?namespace=N&name=H&now=T`: its history of an HPA.
//!
//! Like the other debug endpoints these are plain HTTP and unauthenticated:
//! the flag is for a harness on the same host, never for a cluster.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use hpa_core::clock::{Clock, VirtualClock};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::history::{AgedRecommendation, AgedScaleEvent};
use crate::runtime::{ControllerHandle, SyncReport};

/// What the routes share.
#[derive(Clone)]
struct OnDemand {
    handle: Arc<ControllerHandle>,
    clock: VirtualClock,
}

/// `POST /debug/sync`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncRequest {
    /// The scenario's time.
    pub now: Timestamp,
    /// Only the HPAs the release queues at once.
    #[serde(default)]
    pub queued_only: bool,
}

/// `POST /debug/seed`: one HPA's history, ages as of `now`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedRequest {
    pub now: Timestamp,
    pub namespace: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendations: Option<Vec<AgedRecommendation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_events: Option<Vec<AgedScaleEvent>>,
}

/// `GET /debug/history`'s query.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryQuery {
    pub namespace: String,
    pub name: String,
    pub now: Timestamp,
}

/// `GET /debug/history`'s answer: what the controller keeps of an HPA.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct History {
    /// `None`: none kept yet.
    pub recommendations: Option<Vec<AgedRecommendation>>,
    pub scale_events: Vec<AgedScaleEvent>,
}

/// The routes, over the running controller `handle` whose clock is `clock`.
pub fn routes(handle: Arc<ControllerHandle>, clock: VirtualClock) -> Router {
    Router::new()
        .route("/debug/sync", post(sync))
        .route("/debug/seed", post(seed))
        .route("/debug/history", get(history))
        .with_state(OnDemand { handle, clock })
}

/// A refusal or a failed sync, as plain text.
fn failure(status: StatusCode, message: String) -> Response {
    (status, message).into_response()
}

/// Moves the clock to `now`; a time before the clock's is refused (the
/// refusal's text).
fn move_to(clock: &VirtualClock, now: Timestamp) -> Result<(), String> {
    let by = now.duration_since(clock.now());
    if by.is_negative() {
        return Err(format!(
            "now {now} is before the controller's clock {}: time only moves forward",
            clock.now()
        ));
    }
    clock.advance(by);
    Ok(())
}

async fn sync(State(s): State<OnDemand>, Json(request): Json<SyncRequest>) -> Response {
    if let Err(refused) = move_to(&s.clock, request.now) {
        return failure(StatusCode::CONFLICT, refused);
    }
    let result = if request.queued_only {
        s.handle.sync_queued_now().await
    } else {
        s.handle.sync_all_now().await
    };
    match result {
        Ok(report) => Json::<SyncReport>(report).into_response(),
        Err(e) => failure(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    }
}

async fn seed(State(s): State<OnDemand>, Json(request): Json<SeedRequest>) -> Response {
    if let Err(refused) = move_to(&s.clock, request.now) {
        return failure(StatusCode::CONFLICT, refused);
    }
    if let Some(entries) = &request.recommendations {
        s.handle
            .seed_recommendations(&request.namespace, &request.name, entries);
    }
    if let Some(events) = &request.scale_events {
        s.handle
            .seed_scale_events(&request.namespace, &request.name, events);
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn history(State(s): State<OnDemand>, Query(q): Query<HistoryQuery>) -> Response {
    if let Err(refused) = move_to(&s.clock, q.now) {
        return failure(StatusCode::CONFLICT, refused);
    }
    Json(History {
        recommendations: s.handle.recommendations(&q.namespace, &q.name),
        scale_events: s.handle.scale_events(&q.namespace, &q.name),
    })
    .into_response()
}
