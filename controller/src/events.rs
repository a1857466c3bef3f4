//! Kubernetes events about HPAs (`events.k8s.io/v1`), reported as upstream's
//! `horizontal-pod-autoscaler` component.
//!
//! Like kube-runtime's `Recorder`, but every timestamp comes from the
//! injected clock, so that in the simulated cluster events carry virtual
//! time; and which events are written, merged or dropped is decided by
//! client-go's event correlator ([`super::event_correlator`]), as upstream's
//! recorder does: a repeat updates the first event's count (the API's
//! `series`), similar ones are combined, a burst is rate limited.

use std::sync::{Arc, Mutex};

use hpa_core::clock::Clock;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};

use super::event_correlator::{Correlated, EventCorrelator, Incoming, object_key, object_prefix};

/// Upstream's event source component.
pub const REPORTING_CONTROLLER: &str = "horizontal-pod-autoscaler";

/// The kind of the objects the controller's events are about.
pub const HPA_KIND: &str = "HorizontalPodAutoscaler";

pub use hpa_core::decide::{Event as HpaEvent, EventType};

/// Writes events through a kube client.
#[derive(Clone)]
pub struct EventRecorder {
    client: kube::Client,
    clock: Arc<dyn Clock>,
    instance: String,
    correlator: Arc<Mutex<EventCorrelator>>,
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
            correlator: Arc::default(),
            counter: Arc::default(),
        }
    }

    /// What the event correlator holds ([`crate::memory`]).
    pub fn footprint(&self, meter: &super::memory::Meter) -> super::memory::Footprint {
        self.correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .footprint(meter)
    }

    /// Forgets the HPA `namespace/name` (deleted): what the correlator
    /// holds of its events, whatever its uid.
    pub fn forget(&self, namespace: &str, name: &str) {
        self.correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .forget(&object_prefix(HPA_KIND, namespace, name));
    }

    /// Forgets what the correlator holds of the HPA `namespace/name` whose
    /// uid is `uid`, deleted (the watch saw it go): an HPA created again
    /// under the same name before a sync found the key gone never lets
    /// [`Self::forget`] run for the old one.
    pub fn forget_uid(&self, namespace: &str, name: &str, uid: &str) {
        // The object's key up to its apiVersion: every key of that uid.
        let prefix = object_key(HPA_KIND, namespace, name, uid, "");
        self.correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .forget(&prefix);
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
        let object = object_key(
            regarding.kind.as_deref().unwrap_or_default(),
            &namespace,
            regarding.name.as_deref().unwrap_or_default(),
            regarding.uid.as_deref().unwrap_or_default(),
            regarding.api_version.as_deref().unwrap_or_default(),
        );
        let correlated = self
            .correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .correlate(
                &Incoming {
                    object: &object,
                    type_: event.type_.as_str(),
                    reason: &event.reason,
                    message: &event.message,
                },
                now,
            );
        let Correlated::Write {
            key,
            message,
            count,
            first_seen,
            name: existing,
        } = correlated
        else {
            return Ok(());
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let series = (count > 1).then_some(EventSeries {
            count,
            last_observed_time: MicroTime(now),
        });
        if let (Some(name), Some(series)) = (existing, series.clone()) {
            let patch = Event {
                series: Some(series),
                note: Some(message.clone()),
                ..Event::default()
            };
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return Ok(()),
                // Deleted meanwhile (TTL): create it again, as client-go.
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
            note: Some(message),
            type_: Some(event.type_.as_str().to_string()),
            event_time: Some(MicroTime(first_seen)),
            series,
            regarding: Some(regarding.clone()),
            reporting_controller: Some(REPORTING_CONTROLLER.to_string()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        api.create(&PostParams::default(), &object).await?;
        self.correlator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .written(&key, &name);
        Ok(())
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
