//! The world's side of rollouts: which revisions of a workload's pods are
//! old (those it had when the scenario last rolled it out), the values the
//! new version's pods report as they appear, and the pod delays a scenario
//! gave (kept here so that "become ready after" and "stay pending" add up).

use super::*;

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

/// The annotation whose change makes a new version of a pod template.
pub const VERSION_ANNOTATION: &str = "hpa-harness.io/version";

impl HpaWorld {
    /// The uids of the pods of a workload now.
    async fn uids_now(&mut self, ns: &str, workload: &str) -> Result<BTreeSet<String>, StepError> {
        Ok(self
            .pods_of(ns, workload)
            .await?
            .iter()
            .filter_map(|p| p.metadata.uid.clone())
            .collect())
    }

    /// The revisions the live pods of a workload have now.
    async fn revisions_now(
        &mut self,
        ns: &str,
        workload: &str,
    ) -> Result<BTreeSet<String>, StepError> {
        Ok(self
            .pods_of(ns, workload)
            .await?
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter_map(revision_of)
            .collect())
    }

    /// Rolls a workload out to a new version: a new annotation on its pod
    /// template, which its controller (the sim's or a real one) rolls out.
    pub async fn roll_out(
        &mut self,
        kind: super::super::params::WorkloadKind,
        name: &str,
    ) -> StepResult {
        let (ns, n) = self.qualify(name);
        let old = self.revisions_now(&ns, &n).await?;
        let versions = self
            .versions
            .entry(ObjKey::new(ns.clone(), n.clone()))
            .or_default();
        versions.old = old;
        versions.rollouts += 1;
        let version = (versions.rollouts + 1).to_string();
        let api = workload_api(&self.env().await?.client, &ns, kind);
        let patch = serde_json::json!({"spec": {"template": {"metadata": {"annotations": {VERSION_ANNOTATION: version}}}}});
        api.patch(&n, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(StepError::kube(format!(
                "rolling out version {version} of {kind} {ns}/{n}"
            )))?;
        // The pods the rollout removed take their metrics along.
        self.prune_pods().await?;
        self.report_new_pods().await?;
        self.new_pod_rules().await
    }

    /// "the new pods of W report M of V": once W rolled out, the pods of
    /// its new version report V as they appear; before, the pods it makes
    /// from now on.
    pub async fn new_pods_report(
        &mut self,
        workload: &str,
        metric: &str,
        value: &str,
    ) -> StepResult {
        let (ns, n) = self.qualify(workload);
        let key = ObjKey::new(ns.clone(), n.clone());
        let first = !self.versions.contains_key(&key);
        let (old, existing) = if first {
            (
                self.revisions_now(&ns, &n).await?,
                self.uids_now(&ns, &n).await?,
            )
        } else {
            (BTreeSet::new(), BTreeSet::new())
        };
        let versions = self.versions.entry(key).or_default();
        if first {
            versions.old = old;
            versions.existing = existing;
        }
        versions.values.insert(metric.to_owned(), value.to_owned());
        // Pods given values before get this one too.
        versions.given.clear();
        self.report_new_pods().await?;
        self.new_pod_rules().await
    }

    /// Whether a pod of workload `ns/name` is new: of a version newer than
    /// the old once it rolled out, else made since new-pod values were given.
    pub(crate) fn is_new(&self, ns: &str, workload: &str, pod: &Pod) -> bool {
        let Some(versions) = self.versions.get(&ObjKey::new(ns, workload)) else {
            return false;
        };
        if versions.rollouts == 0 {
            return pod
                .metadata
                .uid
                .as_ref()
                .is_some_and(|u| !versions.existing.contains(u));
        }
        revision_of(pod).is_some_and(|r| !versions.old.contains(&r))
    }

    /// Gives the new pods that appeared since the last look their values
    /// (before every sync and after time passes).
    pub(crate) async fn report_new_pods(&mut self) -> StepResult {
        let keys: Vec<ObjKey> = self
            .versions
            .iter()
            .filter(|(_, v)| !v.values.is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        for ObjKey { ns, name: workload } in keys {
            let pods = self.pods_of(&ns, &workload).await?;
            for pod in pods {
                if pod.metadata.deletion_timestamp.is_some() || !self.is_new(&ns, &workload, &pod) {
                    continue;
                }
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                let name = pod.metadata.name.clone().unwrap_or_default();
                let Some(versions) = self
                    .versions
                    .get(&ObjKey::new(ns.clone(), workload.clone()))
                else {
                    continue;
                };
                if versions.given.contains(&uid) {
                    continue;
                }
                let values = versions.values.clone();
                // A pod made anew under an old name (a StatefulSet's) starts
                // without the old one's values.
                self.metrics
                    .forget_pod(&ObjKey::new(ns.clone(), name.clone()));
                for (metric, value) in &values {
                    super::metrics::set_value(self, &ns, &name, metric, Some(value), false).await?;
                }
                self.push_pod(&ns, &name).await?;
                if let Some(v) = self
                    .versions
                    .get_mut(&ObjKey::new(ns.clone(), workload.clone()))
                {
                    v.given.insert(uid);
                }
            }
        }
        Ok(())
    }

    /// Changes the delays of a workload's new pods, keeping what earlier
    /// steps set.
    pub async fn change_pod_delays(
        &mut self,
        workload: &str,
        change: impl FnOnce(&mut hpa_sim::PodDelays),
    ) -> StepResult {
        let (ns, n) = self.qualify(workload);
        let delays = self
            .pod_delays
            .entry(ObjKey::new(ns.clone(), n.clone()))
            .or_default();
        change(delays);
        let delays = *delays;
        if let Some(node) = self.cluster.fake_node(self.real_node) {
            // On a real cluster the harness's fake node is the pods' kubelet.
            return node.set_pod_delays(&ns, &n, delays).await.map_err(|e| {
                crate::gherkin::pods::fake_node_error(
                    &format!("delaying the new pods of {ns}/{n}"),
                    e,
                )
            });
        }
        self.env().await?.set_pod_delays(&ns, &n, delays).await?;
        Ok(())
    }

    /// When the scenario ends: the fake node forgets the pod delays it
    /// gave, so that a later scenario in the same namespace starts without.
    pub(crate) fn forget_pod_delays(&self) {
        if let Some(node) = self.cluster.fake_node(self.real_node) {
            let namespaces: BTreeSet<&String> = self.pod_delays.keys().map(|k| &k.ns).collect();
            for ns in namespaces {
                node.forget_namespace(ns);
            }
        }
    }
}
