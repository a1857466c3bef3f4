//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go's
//! `leaderelection` package does it, so that two replicas can run and only
//! one reconciles.
//!
//! Written here rather than taken from a crate because the crates found
//! (`kube-lease-manager`, `kube-leader-election`) target older kube releases,
//! and because the lease's timestamps must come from the injected clock.
//!
//! Expiry is judged the client-go way: not from the lease's `renewTime`
//! (another node's clock) but from when *this* process last saw the lease
//! record change, on the local monotonic clock.

use std::sync::Arc;
use std::time::Duration;

use hpa_core::clock::Clock;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Errors of talking to the Lease.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    #[error("cannot read lease {namespace}/{name}")]
    Get {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot create lease {namespace}/{name}")]
    Create {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot update lease {namespace}/{name}")]
    Update {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// Timing of the election (kube-controller-manager's `--leader-elect-*` flags).
#[derive(Debug, Clone, Copy)]
pub struct LeaseTiming {
    /// How long a lease holds without renewal before others may take it.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it gives up.
    pub renew_deadline: Duration,
    /// Pause between attempts.
    pub retry_period: Duration,
}

impl Default for LeaseTiming {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// The record as last seen, and when it was seen.
#[derive(Debug, Clone)]
struct Observed {
    holder: Option<String>,
    renew_time: Option<jiff::Timestamp>,
    transitions: i32,
    duration: Duration,
    seen_at: Instant,
}

/// One contender for one Lease.
pub struct LeaderElector {
    api: Api<Lease>,
    namespace: String,
    name: String,
    identity: String,
    timing: LeaseTiming,
    clock: Arc<dyn Clock>,
    observed: Option<Observed>,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("lease", &format!("{}/{}", self.namespace, self.name))
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl LeaderElector {
    /// A contender named `identity` for the Lease `namespace/name`.
    pub fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        identity: &str,
        timing: LeaseTiming,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity: identity.to_string(),
            timing,
            clock,
            observed: None,
        }
    }

    /// This contender's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    fn observe(&mut self, lease: &Lease) {
        let spec = lease.spec.clone().unwrap_or_default();
        let renew_time = spec.renew_time.map(|t| t.0);
        let transitions = spec.lease_transitions.unwrap_or(0);
        let changed = self.observed.as_ref().is_none_or(|o| {
            o.holder != spec.holder_identity
                || o.renew_time != renew_time
                || o.transitions != transitions
        });
        if changed {
            self.observed = Some(Observed {
                holder: spec.holder_identity.clone(),
                renew_time,
                transitions,
                duration: Duration::from_secs(
                    u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0),
                ),
                seen_at: Instant::now(),
            });
        }
    }

    /// `leaseDurationSeconds`: whole seconds, rounded up, at least 1 (a
    /// sub-second lease must not be written as 0, which others read as expired).
    fn lease_seconds(&self) -> i32 {
        let d = self.timing.lease_duration;
        let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
        i32::try_from(secs.max(1)).unwrap_or(i32::MAX)
    }

    /// One attempt: acquires the Lease if free or expired, renews it if held.
    /// `Ok(true)` while this contender leads.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, LeaderError> {
        let now = MicroTime(self.clock.now());
        let existing = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|source| LeaderError::Get {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                source,
            })?;
        let Some(mut lease) = existing else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    namespace: Some(self.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(self.lease_seconds()),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(&created);
                    Ok(true)
                }
                // Someone else created it first.
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(source) => Err(LeaderError::Create {
                    namespace: self.namespace.clone(),
                    name: self.name.clone(),
                    source,
                }),
            };
        };
        self.observe(&lease);
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let held_by_me = holder.as_deref() == Some(self.identity.as_str());
        if let (Some(_), false) = (&holder, held_by_me)
            && let Some(o) = &self.observed
            && o.seen_at + o.duration > Instant::now()
        {
            return Ok(false);
        }
        let mut new_spec = spec.clone();
        new_spec.holder_identity = Some(self.identity.clone());
        new_spec.lease_duration_seconds = Some(self.lease_seconds());
        new_spec.renew_time = Some(now.clone());
        if !held_by_me {
            new_spec.acquire_time = Some(now);
            new_spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        lease.spec = Some(new_spec);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(updated) => {
                self.observe(&updated);
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(source) => Err(LeaderError::Update {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                source,
            }),
        }
    }

    /// Gives the Lease up if held, so that a standby takes over at once.
    pub async fn release(&mut self) -> Result<(), LeaderError> {
        let Some(mut lease) =
            self.api
                .get_opt(&self.name)
                .await
                .map_err(|source| LeaderError::Get {
                    namespace: self.namespace.clone(),
                    name: self.name.clone(),
                    source,
                })?
        else {
            return Ok(());
        };
        let mut spec = lease.spec.clone().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(self.clock.now()));
        lease.spec = Some(spec);
        self.api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
            .map_err(|source| LeaderError::Update {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                source,
            })?;
        Ok(())
    }

    /// Campaigns until `shutdown`, publishing whether this contender leads.
    /// Once it has led and then fails to renew within the renew deadline it
    /// publishes `false` and returns (upstream exits the process then; the
    /// caller decides). Releases the Lease on shutdown.
    pub async fn run(mut self, leading: watch::Sender<bool>, shutdown: CancellationToken) {
        let mut last_renew: Option<Instant> = None;
        loop {
            let result = self.try_acquire_or_renew().await;
            match result {
                Ok(true) => {
                    if last_renew.is_none() {
                        tracing::info!(identity = %self.identity, lease = %self.name, "became leader");
                    }
                    last_renew = Some(Instant::now());
                    leading.send_replace(true);
                }
                Ok(false) | Err(_) => {
                    if let Err(err) = &result {
                        tracing::warn!(error = %err, "leader election attempt failed");
                    }
                    if let Some(at) = last_renew
                        && at.elapsed() >= self.timing.renew_deadline
                    {
                        tracing::error!(identity = %self.identity, "lost the leader lease");
                        leading.send_replace(false);
                        return;
                    }
                }
            }
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(self.timing.retry_period) => {}
            }
        }
        if last_renew.is_some() {
            if let Err(err) = self.release().await {
                tracing::warn!(error = %err, "cannot release the leader lease");
            }
            leading.send_replace(false);
        }
    }
}

/// A default identity: the host name plus the process id, as client-go's
/// `hostname_uuid` is unique per process.
pub fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "hpa-harness".to_string());
    let nanos = jiff::Timestamp::now().subsec_nanosecond();
    format!("{host}_{}_{nanos:x}", std::process::id())
}
