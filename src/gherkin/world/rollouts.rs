//! The world's side of rollouts: rolling a workload out, giving its new
//! pods (as [`NewPods`] tells them) their values as they appear, and the
//! pod delays a scenario gave, sent to the cluster.

use super::new_pods::revision_of;
use super::*;

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
        let version = self
            .new_pods
            .rolled_out(&ObjKey::new(ns.clone(), n.clone()), old)
            .to_string();
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
        let before = if self.new_pods.knows(&key) {
            None
        } else {
            Some((
                self.revisions_now(&ns, &n).await?,
                self.uids_now(&ns, &n).await?,
            ))
        };
        self.new_pods.report(&key, metric, value, before);
        self.report_new_pods().await?;
        self.new_pod_rules().await
    }

    /// Whether a pod of workload `ns/name` is new: of a version newer than
    /// the old once it rolled out, else made since new-pod values were given.
    pub(crate) fn is_new(&self, ns: &str, workload: &str, pod: &Pod) -> bool {
        self.new_pods.is_new(&ObjKey::new(ns, workload), pod)
    }

    /// Gives the new pods that appeared since the last look their values
    /// (before every sync and after time passes).
    pub(crate) async fn report_new_pods(&mut self) -> StepResult {
        for key in self.new_pods.with_values() {
            for pod in self.pods_of(&key.ns, &key.name).await? {
                let Some(values) = self.new_pods.due(&key, &pod) else {
                    continue;
                };
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                let name = pod.metadata.name.clone().unwrap_or_default();
                // A pod made anew under an old name (a StatefulSet's) starts
                // without the old one's values.
                self.metrics.forget_pod(&key.sibling(name.clone()));
                for (metric, value) in &values {
                    super::metrics_server::set_value(
                        self,
                        &key.ns,
                        &name,
                        metric,
                        Some(value),
                        false,
                    )
                    .await?;
                }
                self.push_pod(&key.ns, &name).await?;
                self.new_pods.given(&key, uid);
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
            .new_pods
            .change_delays(&ObjKey::new(ns.clone(), n.clone()), change);
        if let Some(node) = self.cluster.fake_node(self.real_node) {
            // On a real cluster the harness's fake node is the pods' kubelet.
            return node
                .set_pod_delays(&ns, &n, delays)
                .await
                .map_err(StepError::fake_node(format!(
                    "delaying the new pods of {ns}/{n}"
                )));
        }
        self.env().await?.set_pod_delays(&ns, &n, delays).await?;
        Ok(())
    }

    /// When the scenario ends: the fake node forgets the pod delays it
    /// gave, so that a later scenario in the same namespace starts without.
    pub(crate) fn forget_pod_delays(&self) {
        if let Some(node) = self.cluster.fake_node(self.real_node) {
            for ns in self.new_pods.delayed_namespaces() {
                node.forget_namespace(ns);
            }
        }
    }
}
