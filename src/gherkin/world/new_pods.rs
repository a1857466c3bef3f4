//! What the scenario said about the pods a workload makes from now on: the
//! values they report ("the new pods of W report"), which pods are new
//! (after a rollout, those of a newer revision; before, those made since
//! the values were given), and the delays they start with.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::core::v1::Pod;

use super::key::ObjKey;

/// The label of a pod's revision: a Deployment's template hash, a
/// StatefulSet's revision.
pub(crate) fn revision_of(pod: &Pod) -> Option<String> {
    let labels = pod.metadata.labels.as_ref()?;
    labels
        .get(hpa_sim::TEMPLATE_HASH_LABEL)
        .or_else(|| labels.get(hpa_sim::REVISION_LABEL))
        .cloned()
}

/// What the scenario knows about one workload's versions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Versions {
    /// Revisions its pods had before the last rollout: after one, pods of
    /// other revisions are new.
    pub old: BTreeSet<String>,
    /// Before any rollout, the pods (by uid) it had when new-pod values
    /// were given: pods it makes later (a scale-up's) are new.
    pub existing: BTreeSet<String>,
    /// Rollouts so far (the version annotation's value).
    pub rollouts: u32,
    /// Metric values the new pods report, by metric name.
    pub values: BTreeMap<String, String>,
    /// New pods already given those values, by uid.
    pub given: BTreeSet<String>,
}

impl Versions {
    /// Whether `pod` is new: of a revision newer than the old once the
    /// workload rolled out, else made since new-pod values were given.
    pub fn is_new(&self, pod: &Pod) -> bool {
        if self.rollouts == 0 {
            return pod
                .metadata
                .uid
                .as_ref()
                .is_some_and(|u| !self.existing.contains(u));
        }
        revision_of(pod).is_some_and(|r| !self.old.contains(&r))
    }
}

/// The scenario's new pods, by workload.
#[derive(Debug, Default)]
pub struct NewPods {
    versions: HashMap<ObjKey, Versions>,
    /// The pod delays steps gave, by workload.
    delays: HashMap<ObjKey, hpa_sim::PodDelays>,
}

impl NewPods {
    /// Whether any workload rolled out or has values for its new pods.
    pub fn any(&self) -> bool {
        !self.versions.is_empty()
    }

    /// Whether the scenario said anything of this workload's new pods.
    pub fn knows(&self, workload: &ObjKey) -> bool {
        self.versions.contains_key(workload)
    }

    /// The workloads whose new pods have values to report.
    pub fn with_values(&self) -> Vec<ObjKey> {
        let mut keys: Vec<ObjKey> = self
            .versions
            .iter()
            .filter(|(_, v)| !v.values.is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys
    }

    /// What the scenario knows of a workload's versions.
    pub(crate) fn versions(&self, workload: &ObjKey) -> Option<&Versions> {
        self.versions.get(workload)
    }

    /// Whether a pod of the workload is new (none is before the scenario
    /// spoke of the workload's new pods or rolled it out).
    pub fn is_new(&self, workload: &ObjKey, pod: &Pod) -> bool {
        self.versions.get(workload).is_some_and(|v| v.is_new(pod))
    }

    /// A rollout of the workload, whose live pods had revisions `old`: the
    /// version it rolls out to.
    pub fn rolled_out(&mut self, workload: &ObjKey, old: BTreeSet<String>) -> u32 {
        let versions = self.versions.entry(workload.clone()).or_default();
        versions.old = old;
        versions.rollouts += 1;
        versions.rollouts + 1
    }

    /// "the new pods of W report M of V". `before`, the first time: the
    /// revisions and pod uids the workload has now (its pods are not new).
    /// New pods given values before get this one too.
    pub fn report(
        &mut self,
        workload: &ObjKey,
        metric: &str,
        value: &str,
        before: Option<(BTreeSet<String>, BTreeSet<String>)>,
    ) {
        let versions = self.versions.entry(workload.clone()).or_default();
        if let Some((old, existing)) = before {
            versions.old = old;
            versions.existing = existing;
        }
        versions.values.insert(metric.to_owned(), value.to_owned());
        versions.given.clear();
    }

    /// The values a pod of the workload is due: a new, live pod not given
    /// them yet.
    pub fn due(&self, workload: &ObjKey, pod: &Pod) -> Option<BTreeMap<String, String>> {
        let versions = self.versions.get(workload)?;
        let uid = pod.metadata.uid.as_deref().unwrap_or_default();
        (pod.metadata.deletion_timestamp.is_none()
            && versions.is_new(pod)
            && !versions.given.contains(uid))
        .then(|| versions.values.clone())
    }

    /// The pod (by uid) has its values.
    pub fn given(&mut self, workload: &ObjKey, uid: String) {
        if let Some(v) = self.versions.get_mut(workload) {
            v.given.insert(uid);
        }
    }

    /// Changes the delays of a workload's new pods, keeping what earlier
    /// steps set; the delays now.
    pub fn change_delays(
        &mut self,
        workload: &ObjKey,
        change: impl FnOnce(&mut hpa_sim::PodDelays),
    ) -> hpa_sim::PodDelays {
        let delays = self.delays.entry(workload.clone()).or_default();
        change(delays);
        *delays
    }

    /// The namespaces of the workloads given delays.
    pub fn delayed_namespaces(&self) -> BTreeSet<&str> {
        self.delays.keys().map(|k| k.ns.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn web() -> ObjKey {
        ObjKey::new("default", "web")
    }

    fn pod(uid: &str, revision: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata.uid = Some(uid.to_owned());
        p.metadata.labels = Some(BTreeMap::from([(
            hpa_sim::TEMPLATE_HASH_LABEL.to_owned(),
            revision.to_owned(),
        )]));
        p
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn no_pod_is_new_before_the_scenario_speaks_of_new_pods() {
        let new = NewPods::default();
        assert!(!new.is_new(&web(), &pod("a", "r1")));
        assert!(!new.any());
    }

    #[test]
    fn before_a_rollout_the_pods_made_after_the_values_are_new() {
        let mut new = NewPods::default();
        new.report(
            &web(),
            "cpu",
            "500m",
            Some((set(&["r1"]), set(&["a", "b"]))),
        );
        assert!(!new.is_new(&web(), &pod("a", "r1")));
        assert!(new.is_new(&web(), &pod("c", "r1")));
    }

    #[test]
    fn after_a_rollout_the_pods_of_a_newer_revision_are_new() {
        let mut new = NewPods::default();
        new.report(&web(), "cpu", "500m", Some((set(&["r1"]), set(&["a"]))));
        assert_eq!(new.rolled_out(&web(), set(&["r1"])), 2);
        // A pod made since the values, but of the old revision, is old now.
        assert!(!new.is_new(&web(), &pod("c", "r1")));
        assert!(new.is_new(&web(), &pod("a", "r2")));
        assert_eq!(new.rolled_out(&web(), set(&["r1", "r2"])), 3);
        assert!(!new.is_new(&web(), &pod("a", "r2")));
    }

    #[test]
    fn a_new_pod_is_due_its_values_once_and_again_after_another_value() {
        let mut new = NewPods::default();
        new.report(&web(), "cpu", "500m", Some((set(&[]), set(&[]))));
        let fresh = pod("c", "r1");
        let due = new
            .due(&web(), &fresh)
            .expect("a new pod is due its values");
        assert_eq!(due.get("cpu").map(String::as_str), Some("500m"));
        new.given(&web(), "c".to_owned());
        assert_eq!(new.due(&web(), &fresh), None);
        new.report(&web(), "memory", "64Mi", None);
        let due = new.due(&web(), &fresh).expect("a new value is due again");
        assert_eq!(due.len(), 2);
    }

    #[test]
    fn a_terminating_pod_is_due_nothing() {
        let mut new = NewPods::default();
        new.report(&web(), "cpu", "500m", Some((set(&[]), set(&[]))));
        let mut going = pod("c", "r1");
        going.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        assert_eq!(new.due(&web(), &going), None);
    }

    #[test]
    fn only_workloads_with_values_have_new_pods_to_report() {
        let mut new = NewPods::default();
        new.rolled_out(&web(), set(&["r1"]));
        assert!(new.any() && new.with_values().is_empty());
        let api = ObjKey::new("default", "api");
        new.report(&api, "rps", "5", Some((set(&[]), set(&[]))));
        assert_eq!(new.with_values(), [api]);
    }

    #[test]
    fn delays_add_up_across_steps() {
        let mut new = NewPods::default();
        new.change_delays(&web(), |d| d.max_running = Some(2));
        let both = new.change_delays(&web(), |d| d.max_running = d.max_running.map(|m| m + 1));
        assert_eq!(both.max_running, Some(3));
        new.change_delays(&ObjKey::new("prod", "api"), |_| {});
        assert_eq!(
            new.delayed_namespaces().into_iter().collect::<Vec<_>>(),
            ["default", "prod"]
        );
    }
}
