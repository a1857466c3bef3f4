//! The running parts of one scenario: a cluster, a fake metrics server and
//! the scenario's clock.
//!
//! On the embedded target each scenario gets its own simulated cluster and
//! fake metrics server (on `127.0.0.1:0`, scripted only through its HTTP
//! control API), all on one virtual clock. On a remote target the scenarios
//! share one cluster and one fake metrics server: a simulated cluster in
//! another process is reset, with the metrics server, before each scenario
//! (so one at a time) and its virtual clock moved with the scenario's; on a
//! real cluster, on the wall clock, scenarios run side by side, each in a
//! namespace of its own whose metrics it alone sets and clears (the run
//! clears what earlier runs left once, before the first). Either simulated cluster is driven
//! through the same [`SimAdmin`] interface.

use std::sync::Arc;

use fake_metrics_server::client::{ClientError, ControlClient};
use hpa_core::clock::{Clock, SystemClock, VirtualClock};
use hpa_sim::admin::{FaultAction, SimAdmin};
use hpa_sim::{FeatureGates, PodDelays, SimConfig};
use jiff::{SignedDuration, Timestamp};
use tokio_util::sync::DropGuard;

use super::embedded::Embedded;
use super::kind::ControllerKind;
use super::target::{RemoteTarget, Target};

/// Why a part of the scenario's testbed failed; the Gherkin world reports
/// each as the step error of the same name.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// The cluster or the metrics server could not start.
    #[error("cannot start the scenario's cluster: {0}")]
    Start(String),
    /// A Kubernetes API call failed. An API status prints as its message,
    /// code and reason, as kubectl does, not as kube's debug dump.
    /// The kube error is in the message and so not also a `source`, which
    /// reports would print a second time.
    #[error("{action}: {}", kube_error_text(error))]
    Kube { action: String, error: kube::Error },
    /// The fake metrics server refused or failed a control request.
    #[error("{action}: {source}")]
    Metrics {
        action: String,
        #[source]
        source: ClientError,
    },
    /// The simulated cluster refused or failed an admin request.
    #[error("{0}")]
    State(String),
    /// The cluster cannot do this (a real one injects no faults).
    #[error("[unsupported here] {0}")]
    Unsupported(String),
}

/// A kube error as a user reads it: an API status's message with its code
/// and reason (`... is invalid: ... (422 Invalid)`), anything else as kube
/// prints it.
pub fn kube_error_text(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) if !status.message.is_empty() => {
            format!("{} ({} {})", status.message, status.code, status.reason)
        }
        other => other.to_string(),
    }
}

fn metrics_err(action: impl Into<String>) -> impl FnOnce(ClientError) -> EnvError {
    let action = action.into();
    move |source| EnvError::Metrics { action, source }
}

/// How the scenario's time moves.
#[derive(Debug, Clone)]
enum Time {
    /// The wall clock: by waiting.
    Wall,
    /// One virtual clock shared by the cluster, the metrics server and the
    /// controller (embedded): moving the cluster's moves all.
    Shared(VirtualClock),
    /// A sim process's virtual clock, the metrics server's, and a mirror of
    /// them here (for the controller), moved together.
    Mirrored(VirtualClock),
}

/// The running parts of a scenario.
pub struct Env {
    clock: Arc<dyn Clock>,
    time: Time,
    /// The simulated cluster's admin side; `None` on a real cluster.
    admin: Option<Arc<dyn SimAdmin>>,
    pub client: kube::Client,
    pub metrics: ControlClient,
    /// The remote target, if the scenario is not embedded.
    pub remote: Option<RemoteTarget>,
    /// Wall-clock instant of the virtual start (for "ages").
    pub started_at: Timestamp,
    _metrics_server: Option<DropGuard>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("metrics", &self.metrics.base_url())
            .finish_non_exhaustive()
    }
}

impl Env {
    /// Starts (embedded) or reaches (remote) the scenario's cluster.
    pub async fn start(target: &Target) -> Result<Self, EnvError> {
        match target {
            Target::Embedded => Self::start_embedded().await,
            Target::Remote(remote) => Self::start_remote(remote).await,
        }
    }

    async fn start_embedded() -> Result<Self, EnvError> {
        let clock = VirtualClock::default();
        let bed = Embedded::new(Some(clock.clone()), SimConfig::default());
        let (url, guard) = bed
            .serve_metrics()
            .await
            .map_err(|e| EnvError::Start(format!("binding the metrics server: {e}")))?;
        let metrics = ControlClient::new(url)
            .map_err(|e| EnvError::Start(format!("metrics control client: {e}")))?;
        let client = bed.sim.client();
        Ok(Self {
            started_at: clock.now(),
            clock: Arc::new(clock.clone()),
            time: Time::Shared(clock),
            admin: Some(Arc::new(bed.sim)),
            client,
            metrics,
            remote: None,
            _metrics_server: Some(guard),
        })
    }

    /// Reaches the target's cluster and metrics server; a simulated cluster
    /// and the metrics server are cleared of what earlier scenarios left.
    async fn start_remote(remote: &RemoteTarget) -> Result<Self, EnvError> {
        let metrics = remote.metrics.clone();
        let time = match &remote.admin {
            Some(admin) => {
                metrics.reset().await.map_err(metrics_err(format!(
                    "resetting the fake metrics server at {}",
                    metrics.base_url()
                )))?;
                let state = admin.clock().await.map_err(|e| {
                    EnvError::Start(format!("reading the simulated cluster's clock: {e}"))
                })?;
                admin.reset().await.map_err(|e| {
                    EnvError::Start(format!("resetting the simulated cluster: {e}"))
                })?;
                if state.is_virtual {
                    metrics.set_clock(state.now).await.map_err(metrics_err(
                        "putting the fake metrics server's clock at the cluster's",
                    ))?;
                    Time::Mirrored(VirtualClock::new(state.now))
                } else {
                    Time::Wall
                }
            }
            None => Time::Wall,
        };
        let clock: Arc<dyn Clock> = match &time {
            Time::Shared(c) | Time::Mirrored(c) => Arc::new(c.clone()),
            Time::Wall => Arc::new(SystemClock),
        };
        Ok(Self {
            started_at: clock.now(),
            clock,
            time,
            admin: remote.admin.clone(),
            client: remote.client.clone(),
            metrics,
            remote: Some(remote.clone()),
            _metrics_server: None,
        })
    }

    /// Now, on the scenario's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The scenario's clock (for the controller).
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Whether time is virtual (moves only when a step says so).
    pub fn is_virtual(&self) -> bool {
        !matches!(self.time, Time::Wall)
    }

    /// Whether the cluster is a real one (no fault injection, wall clock).
    pub fn is_real(&self) -> bool {
        self.admin.is_none()
    }

    /// Whose controller acts.
    pub fn controller_kind(&self) -> ControllerKind {
        self.remote
            .as_ref()
            .map_or(ControllerKind::Ours, |r| r.controller)
    }

    /// Moves the scenario's time on: the virtual clocks of the cluster, the
    /// metrics server and the controller together, or the wall clock by
    /// waiting.
    pub async fn advance(&self, by: SignedDuration) -> Result<(), EnvError> {
        let moved = |e| EnvError::State(format!("moving the cluster's clock: {e}"));
        match (&self.time, &self.admin) {
            (Time::Shared(_), Some(admin)) => admin.advance(by).await.map_err(moved)?,
            (Time::Mirrored(mirror), Some(admin)) => {
                admin.advance(by).await.map_err(moved)?;
                self.metrics
                    .advance_clock(by)
                    .await
                    .map_err(metrics_err("moving the metrics server's clock"))?;
                mirror.advance(by);
            }
            _ => tokio::time::sleep(by.unsigned_abs()).await,
        }
        Ok(())
    }

    /// Makes the simulated API server inject a fault.
    pub async fn fault(&self, action: FaultAction) -> Result<(), EnvError> {
        let (what, target) = describe(&action);
        match &self.admin {
            Some(admin) => admin
                .set_fault(&action)
                .await
                .map_err(|e| EnvError::State(format!("injecting {what} for {target}: {e}"))),
            None => Err(EnvError::Unsupported(format!(
                "injecting {what} for {target} needs the simulated API server; a real one cannot be told to fail"
            ))),
        }
    }

    /// How long new pods of workload `ns/name` stay Pending and unready, on
    /// a simulated cluster (on a real one the fake node has them:
    /// `FakeNode::set_pod_delays`).
    pub async fn set_pod_delays(
        &self,
        ns: &str,
        name: &str,
        delays: PodDelays,
    ) -> Result<(), EnvError> {
        match &self.admin {
            Some(admin) => admin
                .set_pod_delays(ns, name, delays)
                .await
                .map_err(|e| EnvError::State(format!("pod delays of {ns}/{name}: {e}"))),
            None => Err(EnvError::Unsupported(format!(
                "delaying or holding the new pods of {ns}/{name} needs the simulated cluster's kubelet or the harness's fake node, not a real node's kubelet"
            ))),
        }
    }

    /// Makes the simulated API server the release of `gates`, with their
    /// overrides, so it stores and validates HPAs as the controller expects
    /// (a real one runs its own release and gates: nothing to do).
    pub async fn set_feature_gates(&self, gates: &FeatureGates) -> Result<(), EnvError> {
        if let Some(admin) = &self.admin {
            admin.set_feature_gates(gates).await.map_err(|e| {
                EnvError::State(format!(
                    "the cluster's release {} and feature gates {:?}: {e}",
                    gates.version(),
                    gates.to_string()
                ))
            })?;
        }
        Ok(())
    }
}

/// A fault's short description and what it applies to (`namespace/name`).
fn describe(action: &FaultAction) -> (String, String) {
    let (what, ns, name) = match action {
        FaultAction::FailGetScale(t) => {
            (format!("FailGetScale({})", t.fail), &t.namespace, &t.name)
        }
        FaultAction::FailUpdateScale(t) => (
            format!("FailUpdateScale({})", t.fail),
            &t.namespace,
            &t.name,
        ),
        FaultAction::ConflictHpaStatus(c) => (
            format!("ConflictHpaStatus({})", c.times),
            &c.namespace,
            &c.name,
        ),
        FaultAction::ConflictUpdateScale(c) => (
            format!("ConflictUpdateScale({})", c.times),
            &c.namespace,
            &c.name,
        ),
        FaultAction::OverrideScaleReplicas(o) => (
            format!(
                "OverrideScaleReplicas {{ spec: {}, status: {} }}",
                o.spec, o.status
            ),
            &o.namespace,
            &o.name,
        ),
        FaultAction::Forbid(d) => {
            return (
                format!("Forbid({}, {})", d.verb, d.forbid),
                d.resource.clone(),
            );
        }
        FaultAction::OverrideScaleSelector(o) => (
            format!("OverrideScaleSelector({:?})", o.selector),
            &o.namespace,
            &o.name,
        ),
        FaultAction::LagHpaWatch(w) => {
            return (
                format!("LagHpaWatch({})", w.lag),
                "the HPA watch".to_owned(),
            );
        }
    };
    (what, format!("{ns}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_status_prints_its_message_code_and_reason_once() {
        let status = kube::core::Status::failure(
            r#"HorizontalPodAutoscaler "web" is invalid: spec.maxReplicas: Required value"#,
            "Invalid",
        )
        .with_code(422);
        let err = EnvError::Kube {
            action: "creating HorizontalPodAutoscaler default/web".to_owned(),
            error: kube::Error::Api(status.boxed()),
        };
        assert_eq!(
            err.to_string(),
            r#"creating HorizontalPodAutoscaler default/web: HorizontalPodAutoscaler "web" is invalid: spec.maxReplicas: Required value (422 Invalid)"#
        );
        // The text is the whole report: no source repeats it.
        assert!(std::error::Error::source(&err).is_none());
    }
}
