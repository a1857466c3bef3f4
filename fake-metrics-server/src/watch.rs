//! The pods that exist, learned from the API server: a metadata-only
//! list/watch of every pod (as metrics-server learns pods from the
//! kubelets), fed to [`AppState::observe_pods`] so that rules
//! ([`crate::rules`]) give values to pods the moment they appear.

use std::future::Future;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};

use crate::rules::PodEvent;
use crate::script::Labels;
use crate::state::AppState;

/// One pod's key and labels, from its metadata.
fn pod_of(meta: &PartialObjectMeta<Pod>) -> Option<(String, String, Labels)> {
    let m = &meta.metadata;
    Some((
        m.namespace.clone()?,
        m.name.clone()?,
        m.labels.clone().unwrap_or_default(),
    ))
}

/// Turns watch events into inventory reports; `pending` gathers a
/// (re)list, reported whole when it is done so that a restarted watch
/// forgets the pods deleted meanwhile.
pub fn translate(
    event: Event<PartialObjectMeta<Pod>>,
    pending: &mut Vec<(String, String, Labels)>,
) -> Option<PodEvent> {
    match event {
        Event::Init => {
            pending.clear();
            None
        }
        Event::InitApply(p) => {
            pending.extend(pod_of(&p));
            None
        }
        Event::InitDone => Some(PodEvent::Replaced(std::mem::take(pending))),
        Event::Apply(p) => pod_of(&p).map(|(namespace, name, labels)| PodEvent::Applied {
            namespace,
            name,
            labels,
        }),
        Event::Delete(p) => {
            pod_of(&p).map(|(namespace, name, _)| PodEvent::Deleted { namespace, name })
        }
    }
}

/// Watches every pod of `client`'s cluster into `state` until `stop`;
/// errors are logged and the watch retried with backoff.
pub async fn watch_pods(client: kube::Client, state: AppState, stop: impl Future<Output = ()>) {
    // Metadata only: the labels are all a rule needs.
    let api: Api<PartialObjectMeta<Pod>> = Api::all(client);
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    let mut stream = std::pin::pin!(stream);
    let mut stop = std::pin::pin!(stop);
    let mut pending = Vec::new();
    loop {
        tokio::select! {
            () = &mut stop => return,
            next = stream.next() => match next {
                Some(Ok(event)) => {
                    if let Some(report) = translate(event, &mut pending) {
                        state.observe_pods(report);
                    }
                }
                Some(Err(e)) => tracing::warn!(error = %e, "watching pods for the rules"),
                None => return,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    fn meta(ns: &str, name: &str, app: &str) -> PartialObjectMeta<Pod> {
        PartialObjectMeta {
            types: None,
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                labels: Some([("app".to_owned(), app.to_owned())].into()),
                ..ObjectMeta::default()
            },
            _phantom: std::marker::PhantomData,
        }
    }

    #[test]
    fn a_relist_is_reported_whole_and_changes_one_by_one() {
        let mut pending = Vec::new();
        assert_eq!(translate(Event::Init, &mut pending), None);
        assert_eq!(
            translate(Event::InitApply(meta("a", "w-1", "w")), &mut pending),
            None
        );
        let Some(PodEvent::Replaced(all)) = translate(Event::InitDone, &mut pending) else {
            panic!("no replacement");
        };
        assert_eq!(all.len(), 1);
        assert!(pending.is_empty());
        assert!(matches!(
            translate(Event::Apply(meta("a", "w-2", "w")), &mut pending),
            Some(PodEvent::Applied { name, .. }) if name == "w-2"
        ));
        assert!(matches!(
            translate(Event::Delete(meta("a", "w-1", "w")), &mut pending),
            Some(PodEvent::Deleted { name, .. }) if name == "w-1"
        ));
    }
}
