//! Which HPAs the release queues at once: each HPA's object UID and
//! `metadata.generation` as the controller last queued it, and upstream's
//! rule for a new or changed one ([`queued_at_once`]).
//!
//! One record serves both ways of syncing. Periodically, the HPA watch
//! notes each HPA as it brings it and queues the changed ones, at once or a
//! sync period away. On demand (the harness's virtual clock), the watch
//! only records that an HPA exists; a sync notes the HPAs it syncs, and
//! [`ControllerHandle::sync_queued_now`] syncs those whose state the
//! release would have queued at once. Either way the record holds every
//! HPA the watch knows, so that it also counts them and finds the ones a
//! relist no longer lists.
//!
//! [`ControllerHandle::sync_queued_now`]: crate::ControllerHandle::sync_queued_now

use std::collections::HashMap;

use hpa_core::{FeatureGates, KubernetesVersion};

/// An HPA's object UID and `metadata.generation`.
type Noted = (Option<String>, Option<i64>);

/// Each HPA's UID and generation as last noted (`None`: known, never
/// queued yet), by `namespace/name`.
#[derive(Debug, Default)]
pub struct Generations {
    noted: HashMap<String, Option<Noted>>,
}

impl Generations {
    /// Notes `key` as it is now. `None`: as noted before. Otherwise whether
    /// the release queues it at once (rather than a sync period away): a
    /// new HPA (or one recreated under the same name, a new UID) counts as
    /// new.
    pub fn note(
        &mut self,
        gates: &FeatureGates,
        key: &str,
        uid: Option<&str>,
        generation: Option<i64>,
    ) -> Option<bool> {
        let before = match self.noted.get(key) {
            Some(Some((noted_uid, noted))) if noted_uid.as_deref() == uid => {
                if *noted == generation {
                    return None;
                }
                Some(*noted)
            }
            _ => None,
        };
        let at_once = queued_at_once(gates, before, generation);
        let now = Some((uid.map(str::to_owned), generation));
        match self.noted.get_mut(key) {
            Some(entry) => *entry = now,
            None => {
                self.noted.insert(key.to_owned(), now);
            }
        }
        Some(at_once)
    }

    /// Records that the HPA `key` exists, as the watch brought it, leaving
    /// what was noted of it as it is.
    pub fn saw(&mut self, key: &str) {
        if !self.noted.contains_key(key) {
            self.noted.insert(key.to_owned(), None);
        }
    }

    /// Forgets a deleted HPA.
    pub fn forget(&mut self, key: &str) {
        self.noted.remove(key);
    }

    /// The keys noted.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.noted.keys()
    }

    /// How many HPAs are noted.
    pub fn len(&self) -> usize {
        self.noted.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.noted.is_empty()
    }
}

/// Whether an HPA event queues its key at once rather than a sync period
/// away. Through 1.36 upstream's `enqueueHPA` always used `AddRateLimited`,
/// so a new HPA waited a sync period and an edit never brought a waiting
/// sync forward. From 1.37 (k/k #138294) a new HPA is queued at once, and so
/// is a spec change (a new `metadata.generation`) when `HPAGeneration` is on;
/// status-only updates stay rate-limited. `before`: the generation noted
/// before (`None`: a new HPA).
pub fn queued_at_once(
    gates: &FeatureGates,
    before: Option<Option<i64>>,
    generation: Option<i64>,
) -> bool {
    if gates.version() < KubernetesVersion::V1_37 {
        return false;
    }
    match before {
        None => true,
        Some(old) => gates.generation() && generation.is_some() && generation > old,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_core::KubernetesVersion::*;

    #[test]
    fn new_hpas_and_spec_changes_are_queued_at_once_from_1_37() {
        let v36 = FeatureGates::of(V1_36);
        let v37 = FeatureGates::of(V1_37);
        let v37_no_generation = FeatureGates::parse(V1_37, "HPAGeneration=false").unwrap();
        // (gates, generation before (None: new), generation now, at once)
        let cases = [
            (&v36, None, None, false),
            (&v36, Some(None), None, false),
            (&v37, None, Some(1), true),
            (&v37, Some(Some(1)), Some(2), true),
            (&v37, Some(Some(2)), Some(2), false),
            (&v37_no_generation, None, None, true),
            (&v37_no_generation, Some(Some(1)), Some(2), false),
        ];
        for (gates, before, now, want) in cases {
            assert_eq!(
                queued_at_once(gates, before, now),
                want,
                "{} {before:?} -> {now:?}",
                gates.version()
            );
        }
    }

    /// What the watch (periodic) and a sync on demand both see: a new HPA,
    /// an unchanged one, a spec change, a status-only update (same
    /// generation) and a recreated one.
    #[test]
    fn noting_tells_new_changed_and_recreated_hpas_from_unchanged_ones() {
        let gates = FeatureGates::of(V1_37);
        let mut g = Generations::default();
        assert_eq!(g.note(&gates, "ns/web", Some("u1"), Some(1)), Some(true));
        assert_eq!(g.note(&gates, "ns/web", Some("u1"), Some(1)), None);
        assert_eq!(g.note(&gates, "ns/web", Some("u1"), Some(2)), Some(true));
        assert_eq!(g.note(&gates, "ns/web", Some("u1"), Some(2)), None);
        assert_eq!(
            g.note(&gates, "ns/web", Some("u2"), Some(1)),
            Some(true),
            "recreated under the same name"
        );
        g.forget("ns/web");
        assert!(g.is_empty());
        g.saw("ns/web");
        assert_eq!(
            g.note(&gates, "ns/web", Some("u1"), Some(1)),
            Some(true),
            "seen by the watch, never queued"
        );
        g.saw("ns/web");
        assert_eq!(g.note(&gates, "ns/web", Some("u1"), Some(1)), None);
        g.forget("ns/web");
        let v36 = FeatureGates::of(V1_36);
        assert_eq!(g.note(&v36, "ns/web", Some("u1"), None), Some(false));
        assert_eq!(g.note(&v36, "ns/web", Some("u1"), None), None);
        assert_eq!(g.len(), 1);
    }
}
