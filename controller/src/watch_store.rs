//! The store behind each watch cache (the HPA cache, the pod index, the
//! Deployment scales): the live map readers see, the map a relist fills
//! aside until its `InitDone` replaces the live one, and the signal that
//! the first list is in.
//!
//! One store, so that the three caches follow a watch's events alike.
//! kube's reflector (`reflector::store::Writer::apply_watcher_event`) is the
//! model, but its store holds whole objects; ours hold compact values of
//! their own (an HPA's text, the core's pods, a `/scale`'s parts), so each
//! cache says how an object enters and leaves its map.
//!
//! A [`WatchStore`] sits under its cache's own lock, which also guards what
//! a cache keeps beside its map (the pod index's change counter). [`Ready`]
//! sits beside the lock, not under it: a waiter subscribes without locking,
//! and a cache signals a list's end once it has let the lock go.

use std::sync::Arc;

use kube::runtime::watcher;
use tokio::sync::watch;

/// What one watch event asks of the map it lands in.
#[derive(Debug)]
pub enum Change<'a, K> {
    /// Insert or replace the object (`Apply`, `InitApply`).
    Apply(&'a K),
    /// Remove the object (`Delete`).
    Delete(&'a K),
}

/// A watch cache's maps (see the module documentation).
#[derive(Debug, Default)]
pub struct WatchStore<M> {
    live: M,
    /// A relist in progress: replaces `live` when done.
    relisting: Option<M>,
}

impl<M: Default> WatchStore<M> {
    /// Applies one watch event through `change`, which puts an object into
    /// or takes it out of the map it is given: `Apply` and `Delete` change
    /// the live map, `Init` starts a relist, `InitApply` fills it (the live
    /// map when none was started), and `InitDone` makes it the live map, so
    /// that objects deleted while the watch was down leave then. Returns
    /// whether the event completed a list (`InitDone`): the cache is ready
    /// from then on.
    #[must_use = "a completed list makes the cache ready"]
    pub fn apply<K>(
        &mut self,
        event: &watcher::Event<K>,
        change: impl FnOnce(&mut M, Change<'_, K>),
    ) -> bool {
        match event {
            watcher::Event::Apply(object) => change(&mut self.live, Change::Apply(object)),
            watcher::Event::Delete(object) => change(&mut self.live, Change::Delete(object)),
            watcher::Event::Init => self.relisting = Some(M::default()),
            watcher::Event::InitApply(object) => change(
                self.relisting.as_mut().unwrap_or(&mut self.live),
                Change::Apply(object),
            ),
            watcher::Event::InitDone => {
                if let Some(relisted) = self.relisting.take() {
                    self.live = relisted;
                }
                return true;
            }
        }
        false
    }
}

impl<M> WatchStore<M> {
    /// The map readers see (a relist in progress is not in it yet).
    pub fn live(&self) -> &M {
        &self.live
    }

    /// The live map, then the relist in progress if any: what the cache
    /// holds ([`crate::memory`]).
    pub fn maps(&self) -> impl Iterator<Item = &M> {
        std::iter::once(&self.live).chain(self.relisting.as_ref())
    }
}

/// Whether a cache's first list is complete. Cloning shares it.
#[derive(Debug, Clone)]
pub struct Ready(Arc<watch::Sender<bool>>);

impl Default for Ready {
    fn default() -> Self {
        Self(Arc::new(watch::Sender::new(false)))
    }
}

impl Ready {
    /// Marks the first list complete (again, after a relist: a no-op).
    pub fn set(&self) {
        self.0.send_replace(true);
    }

    /// Whether the first list is complete.
    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until the first list is complete.
    pub async fn wait(&self) {
        let mut ready = self.0.subscribe();
        // The sender lives as long as `self`: `wait_for` cannot fail here.
        let _ = ready.wait_for(|ready| *ready).await;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};

    /// An object as the tests' watch delivers it: its key and a version.
    type Object = (&'static str, u32);

    /// A store of versions by key, and whether it has become ready.
    #[derive(Default)]
    struct Fed {
        store: WatchStore<BTreeMap<&'static str, u32>>,
        ready: Ready,
    }

    impl Fed {
        fn apply(&mut self, event: &watcher::Event<Object>) {
            let listed = self.store.apply(event, |map, change| match change {
                Change::Apply(&(key, version)) => {
                    map.insert(key, version);
                }
                Change::Delete(&(key, _)) => {
                    map.remove(key);
                }
            });
            if listed {
                self.ready.set();
            }
        }

        fn live(&self) -> Vec<Object> {
            self.store.live().iter().map(|(k, v)| (*k, *v)).collect()
        }
    }

    #[test]
    fn the_live_map_is_what_the_events_leave_it() {
        // What each case shows, its events, and the live map they leave.
        type Case = (&'static str, Vec<watcher::Event<Object>>, Vec<Object>);
        let table: [Case; 7] = [
            (
                "applies and deletes change the live map",
                vec![
                    Apply(("a", 1)),
                    Apply(("b", 1)),
                    Apply(("a", 2)),
                    Delete(("b", 3)),
                ],
                vec![("a", 2)],
            ),
            (
                "a relist drops a key deleted while the watch was down",
                vec![
                    Apply(("a", 1)),
                    Apply(("b", 1)),
                    Init,
                    InitApply(("a", 2)),
                    InitDone,
                ],
                vec![("a", 2)],
            ),
            (
                "a relist is not seen before it is done",
                vec![Apply(("a", 1)), Init, InitApply(("b", 1))],
                vec![("a", 1)],
            ),
            (
                "an apply during a relist changes the live map, replaced at InitDone",
                vec![Init, InitApply(("a", 1)), Apply(("b", 1)), InitDone],
                vec![("a", 1)],
            ),
            (
                "a delete during a relist changes the live map, replaced at InitDone",
                vec![
                    Apply(("a", 1)),
                    Init,
                    InitApply(("a", 2)),
                    Delete(("a", 3)),
                    InitDone,
                ],
                vec![("a", 2)],
            ),
            (
                "a second Init restarts the relist",
                vec![
                    Init,
                    InitApply(("a", 1)),
                    Init,
                    InitApply(("b", 1)),
                    InitDone,
                ],
                vec![("b", 1)],
            ),
            (
                "without an Init, InitApply fills the live map and InitDone keeps it",
                vec![Apply(("a", 1)), InitApply(("b", 1)), InitDone],
                vec![("a", 1), ("b", 1)],
            ),
        ];
        for (case, events, live) in table {
            let mut fed = Fed::default();
            for event in &events {
                fed.apply(event);
            }
            assert_eq!(fed.live(), live, "{case}");
        }
    }

    #[test]
    fn mid_relist_applies_and_deletes_reach_the_live_map_at_once() {
        let mut fed = Fed::default();
        fed.apply(&Apply(("a", 1)));
        fed.apply(&Init);
        fed.apply(&Apply(("b", 1)));
        fed.apply(&Delete(("a", 2)));
        assert_eq!(fed.live(), [("b", 1)]);
        fed.apply(&InitApply(("c", 1)));
        assert_eq!(fed.live(), [("b", 1)]);
        fed.apply(&InitDone);
        assert_eq!(fed.live(), [("c", 1)]);
    }

    #[test]
    fn both_maps_are_held_until_the_relist_is_done() {
        let mut fed = Fed::default();
        fed.apply(&Apply(("a", 1)));
        fed.apply(&Init);
        fed.apply(&InitApply(("b", 1)));
        let sizes = |fed: &Fed| fed.store.maps().map(BTreeMap::len).collect::<Vec<_>>();
        assert_eq!(sizes(&fed), [1, 1]);
        fed.apply(&InitDone);
        assert_eq!(sizes(&fed), [1]);
    }

    #[test]
    fn ready_after_the_first_full_list_and_across_later_relists() {
        // Each event, and whether the store is ready after it.
        let table = [
            (Apply(("a", 1)), false),
            (Init, false),
            (InitApply(("a", 2)), false),
            (InitDone, true),
            (Delete(("a", 3)), true),
            (Init, true),
            (InitApply(("b", 1)), true),
            (InitDone, true),
        ];
        let mut fed = Fed::default();
        for (at, (event, ready)) in table.into_iter().enumerate() {
            fed.apply(&event);
            assert_eq!(fed.ready.is_set(), ready, "after event {at}");
        }
    }

    #[tokio::test]
    async fn a_waiter_is_released_by_the_first_list() {
        let mut fed = Fed::default();
        let waiting = tokio::spawn({
            let ready = fed.ready.clone();
            async move { ready.wait().await }
        });
        fed.apply(&Init);
        fed.apply(&InitApply(("a", 1)));
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        fed.apply(&InitDone);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .unwrap()
            .unwrap();
    }
}
