//! Kubernetes events about HPAs (`events.k8s.io/v1`), reported as upstream's
//! `horizontal-pod-autoscaler` component.
//!
//! Like kube-runtime's `Recorder`, but every timestamp comes from the
//! injected clock, so that in the simulated cluster events carry virtual
//! time; a repeat of the same event within [`SERIES_WINDOW`] updates the
//! event's series count instead of creating a new object, as the API's
//! event deduplication does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hpa_core::clock::Clock;
use jiff::SignedDuration;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};

/// Upstream's event source component.
pub const REPORTING_CONTROLLER: &str = "horizontal-pod-autoscaler";

/// How long a repeated event is folded into the first one's series.
pub const SERIES_WINDOW: SignedDuration = SignedDuration::from_secs(6 * 60);

pub use hpa_core::decide::{Event as HpaEvent, EventType};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SeriesKey {
    namespace: String,
    regarding: String,
    type_: &'static str,
    reason: String,
    message: String,
}

#[derive(Debug, Clone)]
struct Seen {
    name: String,
    count: i32,
    last: jiff::Timestamp,
}

/// Writes events through a kube client.
#[derive(Clone)]
pub struct EventRecorder {
    client: kube::Client,
    clock: Arc<dyn Clock>,
    instance: String,
    series: Arc<Mutex<HashMap<SeriesKey, Seen>>>,
    counter: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

impl EventRecorder {
    /// A recorder reporting as `instance` of `horizontal-pod-autoscaler`.
    pub fn new(client: kube::Client, clock: Arc<dyn Clock>, instance: &str) -> Self {
        Self {
            client,
            clock,
            instance: instance.to_string(),
            series: Arc::default(),
            counter: Arc::default(),
        }
    }

    /// Records `event` about `regarding`. Failures are logged, never
    /// returned: as upstream's broadcaster, events are best effort.
    pub async fn publish(&self, regarding: &ObjectReference, event: &HpaEvent) {
        if let Err(err) = self.try_publish(regarding, event).await {
            tracing::warn!(
                reason = %event.reason,
                object = ?regarding.name,
                error = %err,
                "cannot record event"
            );
        }
    }

    async fn try_publish(
        &self,
        regarding: &ObjectReference,
        event: &HpaEvent,
    ) -> Result<(), kube::Error> {
        let now = self.clock.now();
        let namespace = regarding
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let key = SeriesKey {
            namespace: namespace.clone(),
            regarding: regarding.name.clone().unwrap_or_default(),
            type_: event.type_.as_str(),
            reason: event.reason.clone(),
            message: event.message.clone(),
        };
        let previous = {
            let mut series = self
                .series
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            series.retain(|_, seen| seen.last + SERIES_WINDOW > now);
            series.get(&key).cloned()
        };
        if let Some(seen) = previous {
            let count = seen.count + 1;
            let patch = Event {
                series: Some(EventSeries {
                    count,
                    last_observed_time: MicroTime(now),
                }),
                ..Event::default()
            };
            let patched = api
                .patch(&seen.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await;
            match patched {
                Ok(_) => {
                    self.remember(key, seen.name, count, now);
                    return Ok(());
                }
                // Deleted meanwhile (TTL): start a new one.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(err) => return Err(err),
            }
        }
        let seq = self
            .counter
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!(
            "{}.{:x}",
            regarding.name.as_deref().unwrap_or(REPORTING_CONTROLLER),
            now.as_nanosecond()
                .unsigned_abs()
                .wrapping_add(u128::from(seq))
        );
        let object = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            action: Some(action_of(&event.reason).to_string()),
            reason: Some(event.reason.clone()),
            note: Some(event.message.clone()),
            type_: Some(event.type_.as_str().to_string()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(REPORTING_CONTROLLER.to_string()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        api.create(&PostParams::default(), &object).await?;
        self.remember(key, name, 1, now);
        Ok(())
    }

    fn remember(&self, key: SeriesKey, name: String, count: i32, last: jiff::Timestamp) {
        self.series
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, Seen { name, count, last });
    }
}

/// events.k8s.io requires an action; upstream's core/v1 events have none,
/// so derive a stable one from the reason.
fn action_of(reason: &str) -> &'static str {
    match reason {
        "SuccessfulRescale" | "FailedRescale" => "Rescale",
        "FailedUpdateStatus" => "UpdateStatus",
        "FailedGetScale" => "GetScale",
        _ => "ComputeMetrics",
    }
}
