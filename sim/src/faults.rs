//! Faults and scale overrides the harness injects into the simulated cluster
//! (the "Faults of the simulated cluster" steps). Keyed by namespace and
//! target name, whatever the target's kind.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use jiff::SignedDuration;

type Key = (String, String);

fn key(ns: &str, name: &str) -> Key {
    (ns.to_owned(), name.to_owned())
}

/// What the scale subresource of a target reports instead of the truth.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScaleOverride {
    /// `spec.replicas` to report (cleared by a successful scale update, which
    /// sets the real value).
    pub spec_replicas: Option<i32>,
    /// `status.replicas` to report.
    pub status_replicas: Option<i32>,
    /// `status.selector` to report; `Some("")` reports none.
    pub selector: Option<String>,
}

#[derive(Debug, Default)]
struct FaultState {
    get_scale_fails: HashSet<Key>,
    update_scale_fails: HashSet<Key>,
    hpa_status_conflicts: HashMap<Key, u32>,
    scale_conflicts: HashMap<Key, u32>,
    overrides: HashMap<Key, ScaleOverride>,
    /// (verb, resource) pairs answered 403 Forbidden, as RBAC would.
    forbidden: HashSet<(String, String)>,
    /// The lag, and the resourceVersion when it began: earlier writes are
    /// not held back.
    hpa_watch_lag: Option<(SignedDuration, u64)>,
}

/// Injected faults. Cheap to consult: one uncontended mutex per scale or HPA
/// status request.
#[derive(Debug, Default)]
pub struct Faults {
    state: Mutex<FaultState>,
}

impl Faults {
    fn with<R>(&self, f: impl FnOnce(&mut FaultState) -> R) -> R {
        let mut guard = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    /// "reading the scale of X fails": GET `/scale` answers 500.
    pub fn fail_get_scale(&self, ns: &str, name: &str, fail: bool) {
        self.with(|s| toggle(&mut s.get_scale_fails, key(ns, name), fail));
    }

    /// "updating the scale of X fails": PUT/PATCH `/scale` answer 500.
    pub fn fail_update_scale(&self, ns: &str, name: &str, fail: bool) {
        self.with(|s| toggle(&mut s.update_scale_fails, key(ns, name), fail));
    }

    /// "updating the status of HPA X conflicts N times": the next N status
    /// writes of that HPA answer 409 Conflict.
    pub fn conflict_hpa_status(&self, ns: &str, name: &str, times: u32) {
        self.with(|s| s.hpa_status_conflicts.insert(key(ns, name), times));
    }

    /// "updating the scale of X conflicts N times".
    pub fn conflict_update_scale(&self, ns: &str, name: &str, times: u32) {
        self.with(|s| s.scale_conflicts.insert(key(ns, name), times));
    }

    /// "the scale of X reports N spec replicas and M status replicas".
    pub fn override_scale_replicas(&self, ns: &str, name: &str, spec: i32, status: i32) {
        self.with(|s| {
            let o = s.overrides.entry(key(ns, name)).or_default();
            o.spec_replicas = Some(spec);
            o.status_replicas = Some(status);
        });
    }

    /// "the scale of X reports selector S" (`""` for none).
    pub fn override_scale_selector(&self, ns: &str, name: &str, selector: &str) {
        self.with(|s| {
            s.overrides.entry(key(ns, name)).or_default().selector = Some(selector.to_owned());
        });
    }

    /// "RBAC denies VERB on RESOURCE": every request with that verb (as the
    /// request counters name it: `get`, `list`, `watch`, ...) on that
    /// resource (`horizontalpodautoscalers.autoscaling`,
    /// `deployments.apps/scale`, `pods`, `pods.metrics.k8s.io`) answers 403
    /// Forbidden with the API server's message, whatever the namespace.
    pub fn forbid(&self, verb: &str, resource: &str, forbid: bool) {
        self.with(|s| {
            toggle(
                &mut s.forbidden,
                (verb.to_owned(), resource.to_owned()),
                forbid,
            );
        });
    }

    /// Removes every fault and override.
    /// "the HPA watch lags N": HPA watches deliver each change written
    /// after resourceVersion `from` N after it was written, and HPA lists
    /// answer as of then, as from a watch cache that far behind (zero:
    /// caught up). See [`crate::Sim::lag_hpa_watch`], which also wakes the
    /// watches.
    pub(crate) fn set_hpa_watch_lag(&self, lag: SignedDuration, from: u64) {
        self.with(|s| s.hpa_watch_lag = lag.is_positive().then_some((lag, from)));
    }

    /// How far HPA watches lag, and from which resourceVersion, if they do.
    pub fn hpa_watch_lag(&self) -> Option<(SignedDuration, u64)> {
        self.with(|s| s.hpa_watch_lag)
    }

    /// Clears every fault; see [`crate::Sim::clear_faults`], which also
    /// wakes the watches a lag held.
    pub fn clear(&self) {
        self.with(|s| *s = FaultState::default());
    }

    pub(crate) fn is_forbidden(&self, verb: &str, resource: &str) -> bool {
        self.with(|s| {
            !s.forbidden.is_empty()
                && s.forbidden
                    .contains(&(verb.to_owned(), resource.to_owned()))
        })
    }

    pub(crate) fn get_scale_fails(&self, ns: &str, name: &str) -> bool {
        self.with(|s| s.get_scale_fails.contains(&key(ns, name)))
    }

    pub(crate) fn update_scale_fails(&self, ns: &str, name: &str) -> bool {
        self.with(|s| s.update_scale_fails.contains(&key(ns, name)))
    }

    pub(crate) fn take_hpa_status_conflict(&self, ns: &str, name: &str) -> bool {
        self.with(|s| take(&mut s.hpa_status_conflicts, key(ns, name)))
    }

    pub(crate) fn take_scale_conflict(&self, ns: &str, name: &str) -> bool {
        self.with(|s| take(&mut s.scale_conflicts, key(ns, name)))
    }

    pub(crate) fn scale_override(&self, ns: &str, name: &str) -> Option<ScaleOverride> {
        self.with(|s| s.overrides.get(&key(ns, name)).cloned())
    }

    pub(crate) fn scale_updated(&self, ns: &str, name: &str) {
        self.with(|s| {
            if let Some(o) = s.overrides.get_mut(&key(ns, name)) {
                o.spec_replicas = None;
            }
        });
    }
}

fn toggle<K: std::hash::Hash + Eq>(set: &mut HashSet<K>, k: K, on: bool) {
    if on {
        set.insert(k);
    } else {
        set.remove(&k);
    }
}

fn take(map: &mut HashMap<Key, u32>, k: Key) -> bool {
    match map.get_mut(&k) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_are_counted_down() {
        let f = Faults::default();
        f.conflict_hpa_status("default", "web", 2);
        assert!(f.take_hpa_status_conflict("default", "web"));
        assert!(f.take_hpa_status_conflict("default", "web"));
        assert!(!f.take_hpa_status_conflict("default", "web"));
    }
}
