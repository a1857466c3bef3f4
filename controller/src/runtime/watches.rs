//! The watches that keep the caches: HPAs, pods and Deployments, and the
//! check that the caches have caught up with a list.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;

use super::SyncMode;
use crate::consistency::WatchProgress;
use crate::context::Context;
use crate::deployment_scales::DeploymentScales;
use crate::generations::Generations;
use crate::hpa_cache::HpaCache;
use crate::keys::key_of;
use crate::pod_index::PodIndex;
use crate::queue::WorkQueue;
use crate::slim_pod::SlimPod;

pub(super) fn versions<'a>(
    metas: impl Iterator<Item = &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
) -> BTreeMap<String, String> {
    metas
        .map(|m| (key_of(m), m.resource_version.clone().unwrap_or_default()))
        .collect()
}

/// Whether a cache (`have`) reflects at least a list (`want`, taken at
/// `list_rv`). Exact equality always counts. With numeric resourceVersions
/// later states count too: an object changed since the list, created since
/// (newer than the list), or gone while the watch has passed the list.
pub(super) fn caught_up(
    want: &BTreeMap<String, String>,
    list_rv: Option<u64>,
    have: &BTreeMap<String, String>,
    progress: u64,
) -> bool {
    if want == have {
        return true;
    }
    let num = |rv: &str| rv.parse::<u64>().ok();
    let passed_list = list_rv.is_some_and(|l| progress > l);
    let listed_ok = want.iter().all(|(key, rv)| match have.get(key) {
        Some(h) if h == rv => true,
        Some(h) => num(h).zip(num(rv)).is_some_and(|(h, w)| h > w),
        None => passed_list,
    });
    let extra_ok = have
        .iter()
        .filter(|(key, _)| !want.contains_key(*key))
        .all(|(_, h)| num(h).zip(list_rv).is_some_and(|(h, l)| h > l));
    listed_ok && extra_ok
}

/// Watches Deployments into their scales (`--scale-from-cache`): each
/// Deployment becomes its scale as it arrives; none is kept whole, so none
/// needs trimming first.
pub(super) async fn watch_deployments(api: Api<Deployment>, scales: DeploymentScales) {
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => scales.apply(event),
            Err(err) => tracing::warn!(error = %err, "deployment watch failed; retrying"),
        }
    }
}

/// Watches pods, trimmed, into the pod index only: it is the pod cache (no
/// reflector store beside it, see `pod_index`). Notes each event's
/// resourceVersion in `progress`.
pub(super) async fn watch_pods(
    api: Api<SlimPod>,
    pod_index: PodIndex,
    progress: Arc<WatchProgress>,
) {
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(SlimPod::trim);
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        if let Ok(event) = &event {
            pod_index.apply(event);
        }
        match event {
            Ok(
                watcher::Event::Apply(pod)
                | watcher::Event::InitApply(pod)
                | watcher::Event::Delete(pod),
            ) => progress.observe(pod.metadata.resource_version.as_deref()),
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "pod watch failed; retrying"),
        }
    }
}

/// The one waiter on the caches' readiness: kube-runtime's
/// `wait_until_ready` wakes only the last of concurrent waiters, so others
/// (the workers' start) wait on `caches_ready` instead, and `ready` answers
/// the readiness probe.
pub(super) async fn announce_caches_ready(
    hpa_cache: HpaCache,
    pod_index: PodIndex,
    ready: Arc<AtomicBool>,
    caches_ready: watch::Sender<bool>,
) {
    hpa_cache.wait_until_ready().await;
    pod_index.wait_until_ready().await;
    ready.store(true, Ordering::SeqCst);
    let _ = caches_ready.send(true);
}

/// Watches HPAs into the store; queues them on appearance and spec change
/// (periodic mode) and forgets deleted ones.
pub(super) async fn watch_hpas(
    api: Api<HorizontalPodAutoscaler>,
    ctx: Context,
    queue: WorkQueue<String>,
    mode: SyncMode,
    progress: Arc<WatchProgress>,
    generations: Arc<Mutex<Generations>>,
) {
    let generations = || {
        generations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let gates = ctx.config.decision.feature_gates;
    let mut seen_in_init: BTreeSet<String> = BTreeSet::new();
    let mut queued_at_init_done: Vec<(String, bool)> = Vec::new();
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(event) => event,
            Err(err) => {
                tracing::warn!(error = %err, "HPA watch failed; retrying");
                continue;
            }
        };
        if let watcher::Event::Apply(hpa)
        | watcher::Event::InitApply(hpa)
        | watcher::Event::Delete(hpa) = &event
        {
            progress.observe(hpa.metadata.resource_version.as_deref());
        }
        ctx.hpas.apply(&event);
        // The cache holds a (re)list's objects only from
        // InitDone on: an HPA queued at its InitApply could be dequeued
        // before, look deleted, and never be requeued. Queue them at InitDone.
        let initial = matches!(event, watcher::Event::InitApply(_));
        match event {
            watcher::Event::Apply(hpa) | watcher::Event::InitApply(hpa) => {
                let key = key_of(&hpa.metadata);
                if initial {
                    seen_in_init.insert(key.clone());
                }
                // On demand, the syncs note what they queue.
                let changed = match mode {
                    SyncMode::Periodic => generations().note(
                        &gates,
                        &key,
                        hpa.metadata.uid.as_deref(),
                        hpa.metadata.generation,
                    ),
                    SyncMode::Manual => {
                        generations().saw(&key);
                        None
                    }
                };
                if let Some(at_once) = changed {
                    if initial {
                        queued_at_init_done.push((key, at_once));
                    } else if at_once {
                        queue.add(key);
                    } else {
                        queue.add_rate_limited(key);
                    }
                }
            }
            // Upstream's deleteHPA only forgets the key's rate limiting (and
            // its selector); the history goes when a later sync finds the
            // HPA gone, so a quick delete-and-recreate keeps it.
            watcher::Event::Delete(hpa) => {
                let key = key_of(&hpa.metadata);
                let meta = &hpa.metadata;
                if let (Some(namespace), Some(name), Some(uid)) = (
                    meta.namespace.as_deref(),
                    meta.name.as_deref(),
                    meta.uid.as_deref(),
                ) {
                    ctx.recorder.forget_uid(namespace, name, uid);
                }
                generations().forget(&key);
                forget_deleted(&ctx, &queue, &key, mode);
            }
            watcher::Event::Init => {
                seen_in_init.clear();
                queued_at_init_done.clear();
            }
            watcher::Event::InitDone => {
                for (key, at_once) in queued_at_init_done.drain(..) {
                    if at_once {
                        queue.add(key);
                    } else {
                        queue.add_rate_limited(key);
                    }
                }
                // Deletions missed while the watch was down.
                let gone: Vec<String> = generations()
                    .keys()
                    .filter(|k| !seen_in_init.contains(*k))
                    .cloned()
                    .collect();
                for key in gone {
                    generations().forget(&key);
                    forget_deleted(&ctx, &queue, &key, mode);
                }
                // Kept for this check only: a deleted HPA's key must not
                // stay here until the next relist.
                seen_in_init = BTreeSet::new();
                queued_at_init_done = Vec::new();
            }
        }
        ctx.metrics
            .num_hpas
            .set(i64::try_from(generations().len()).unwrap_or(i64::MAX));
    }
}

/// A deleted HPA: its selector leaves the ambiguity check and its failures
/// are forgotten; its key stays queued (periodic mode) so that the next sync
/// finds it gone and drops its history (manual mode: the next
/// [`ControllerHandle::sync_all_now`] does).
pub(super) fn forget_deleted(ctx: &Context, queue: &WorkQueue<String>, key: &str, mode: SyncMode) {
    ctx.selectors.remove(key);
    queue.forget(&key.to_string());
    if mode == SyncMode::Periodic && !queue.is_parked(&key.to_string()) {
        queue.add_rate_limited(key.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn a_cache_equal_to_the_list_has_caught_up() {
        let list = map(&[("ns/a", "5"), ("ns/b", "x")]);
        assert!(caught_up(&list, None, &list.clone(), 0));
    }

    #[test]
    fn a_cache_behind_the_list_has_not_caught_up() {
        let list = map(&[("ns/a", "7")]);
        assert!(!caught_up(&list, Some(9), &map(&[("ns/a", "5")]), 5));
        assert!(
            !caught_up(&list, Some(9), &map(&[]), 5),
            "a listed object is missing"
        );
        assert!(
            !caught_up(&list, Some(9), &map(&[("ns/a", "7"), ("ns/gone", "3")]), 7),
            "an object deleted before the list is still cached"
        );
    }

    #[test]
    fn a_cache_ahead_of_the_list_has_caught_up() {
        let list = map(&[("ns/a", "7"), ("ns/b", "8")]);
        // a changed, b deleted, c created: all after the list at 9.
        let cache = map(&[("ns/a", "12"), ("ns/c", "11")]);
        assert!(caught_up(&list, Some(9), &cache, 13));
        assert!(
            !caught_up(&list, Some(9), &cache, 9),
            "b's deletion is not seen yet"
        );
    }
}
