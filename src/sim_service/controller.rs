//! `hpa-harness sim --controller`: our HPA controller inside the sim
//! process, on the sim's clock, talking to it in-process.
//!
//! On the wall clock it syncs every HPA each sync period by itself. On a
//! virtual clock nothing moves until the admin API is told to: a
//! `POST /admin/v1/clock` with `{"advance": "2m"}` is then walked in sync
//! periods, and at each one the metrics server's pods are brought up to date
//! and every HPA is synced, so `kubectl get hpa --watch` sees what a real
//! cluster would have shown over those two minutes.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hpa_sim::Sim;
use hpa_sim::admin::{ClockMove, ClockState, ErrorBody};
use http::{Method, StatusCode};
use jiff::SignedDuration;
use tokio::sync::Mutex;

use super::loads::Mirror;
use crate::testbed::controller::{self, Requests, Role};
use hpa_controller::{ControllerConfig, ControllerHandle, RunError};

/// The largest admin body read when intercepting a clock move.
const MAX_CLOCK_BODY: usize = 64 * 1024;

/// The controller running in the sim process.
pub struct InProcess {
    sim: Sim,
    handle: ControllerHandle,
    mirror: Arc<Mirror>,
    period: SignedDuration,
    /// Virtual time since the last sync (clock moves are serialized by it).
    since_sync: Mutex<SignedDuration>,
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl InProcess {
    /// Starts the controller on `sim`: periodic on a wall clock, driven by
    /// [`advance`](Self::advance) on a virtual one.
    pub fn start(
        sim: &Sim,
        config: ControllerConfig,
        mirror: Arc<Mirror>,
        requests: Requests,
    ) -> Self {
        let period = SignedDuration::try_from(config.sync_period)
            .unwrap_or(SignedDuration::from_secs(15))
            .max(SignedDuration::from_millis(1));
        let role = Role::InSim {
            clock: sim.clock(),
            periodic: sim.virtual_clock().is_none(),
            requests,
        };
        Self {
            sim: sim.clone(),
            handle: controller::start(sim.client(), config, role),
            mirror,
            period,
            since_sync: Mutex::new(SignedDuration::ZERO),
        }
    }

    /// Moves the virtual clock on by `by`, one sync period at a time,
    /// updating the pods' metrics and syncing every HPA at each period.
    pub async fn advance(&self, by: SignedDuration) -> Result<(), RunError> {
        let mut since = self.since_sync.lock().await;
        let mut left = by;
        // Bounded: one iteration per sync period of the requested span.
        while left.is_positive() {
            let until_sync = self.period - *since;
            let step = if left < until_sync { left } else { until_sync };
            self.sim.advance(step);
            left -= step;
            *since += step;
            if *since >= self.period {
                *since = SignedDuration::ZERO;
                if let Err(err) = self.mirror.sync().await {
                    tracing::warn!(error = %err, "mirroring the sim's pods into the metrics server failed");
                }
                let report = self.handle.sync_all_now().await?;
                for (key, err) in report.errors {
                    tracing::info!(hpa = %key, error = %err, "HPA sync reported an error");
                }
            }
        }
        Ok(())
    }

    /// What the controller's debug endpoints read (`/debug/decisions`).
    pub fn server_state(&self) -> hpa_controller::server::ServerState {
        self.handle.server_state()
    }

    /// Stops the controller.
    pub async fn shutdown(self) -> Result<(), RunError> {
        self.handle.shutdown().await
    }
}

fn answer(code: StatusCode, message: String) -> Response {
    (code, axum::Json(ErrorBody { message })).into_response()
}

/// A layer over the sim's router: `POST /admin/v1/clock` with `advance`
/// runs [`InProcess::advance`]; every other request passes.
pub async fn clock_layer(
    State(controller): State<Arc<InProcess>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || request.uri().path() != "/admin/v1/clock" {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_CLOCK_BODY).await {
        Ok(b) => b,
        Err(e) => {
            return answer(
                StatusCode::BAD_REQUEST,
                format!("body of POST /admin/v1/clock: {e}"),
            );
        }
    };
    let advance = match serde_json::from_slice::<ClockMove>(&bytes) {
        Ok(ClockMove {
            advance: Some(text),
            set: None,
        }) => hpa_sim::admin::parse_duration("advance", &text)
            .ok()
            .filter(|d| d.is_positive()),
        _ => None,
    };
    // Anything else (a set, a bad body) is the admin API's to answer.
    let Some(by) = advance else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    if let Err(err) = controller.advance(by).await {
        return answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the clock moved, but the controller failed: {err}"),
        );
    }
    axum::Json(ClockState {
        now: controller.sim.clock().now(),
        is_virtual: true,
        offset: String::new(),
    })
    .into_response()
}
