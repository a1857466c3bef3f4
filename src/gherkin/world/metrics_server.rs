//! The world's side of the fake metrics server: sending it what the
//! scenario set (kept in [`MetricsMirror`], `metrics_mirror.rs`), pods that
//! went away, failing metrics APIs, and the rules that give the pods a real
//! cluster creates between steps their values.

use fake_metrics_server::script::{RuleSpec, ScriptPatch};

use super::metrics_mirror::{PodMetrics, model_of, pod_spec};
use super::*;

impl HpaWorld {
    /// Sends one changed pod to the metrics server.
    pub(crate) async fn push_pod(&mut self, ns: &str, pod: &str) -> StepResult {
        let key = ObjKey::new(ns, pod);
        if !self.metrics.has_pod(&key) {
            return Ok(());
        }
        let client = self.env().await?.metrics.clone();
        self.metrics.push(&client, &key).await
    }

    /// The metrics model of a pod, created with the pod's labels on first use.
    pub(crate) async fn pod_model(
        &mut self,
        ns: &str,
        pod: &str,
    ) -> Result<&mut PodMetrics, StepError> {
        let key = ObjKey::new(ns, pod);
        let mut labels = BTreeMap::new();
        if !self.metrics.has_pod(&key) {
            let api: Api<Pod> = self.api(ns).await?;
            let p = api
                .get_opt(pod)
                .await
                .map_err(StepError::kube(format!("reading pod {ns}/{pod}")))?
                .ok_or_else(|| {
                    StepError::Input(format!(
                        "pod {ns}/{pod} does not exist, so it cannot report metrics"
                    ))
                })?;
            labels = p.metadata.labels.unwrap_or_default().into_iter().collect();
        }
        Ok(self.metrics.pod_or_new(&key, || labels))
    }

    /// Forgets, in the metrics server too, pods that no longer exist in the
    /// cluster: a deleted pod's values go with it.
    pub(crate) async fn prune_pods(&mut self) -> StepResult {
        if !self.metrics.has_pods() {
            return Ok(());
        }
        let env = self.env().await?;
        let (cluster, client) = (env.client.clone(), env.metrics.clone());
        self.metrics.prune(&cluster, &client).await
    }

    /// Makes one metrics API fail (500) or answer again.
    pub async fn set_metrics_api_failing(&mut self, api: MetricsApi, failing: bool) -> StepResult {
        let client = self.env().await?.metrics.clone();
        // Side by side on a real cluster the scenarios share one fake
        // metrics server: the fault is the scenario's namespace's alone, as
        // every request of its HPAs is (other scenarios are served as
        // before). On the simulated cluster the server is the scenario's.
        let scope = self.cluster.shared().map(|_| self.namespace.clone());
        let key = (api, scope.clone());
        // Recorded before the request: a fault set by a request that
        // timed out is still cleared when the scenario ends.
        if failing {
            self.metrics.note_failing(key.clone());
        }
        let what = format!(
            "making the {api} metrics API {}",
            if failing { "fail" } else { "recover" }
        );
        let faults = match (&scope, failing) {
            (Some(ns), true) => client.fail_in(ns, api, 500).await,
            (Some(ns), false) => client.clear_fault_in(ns, api).await,
            (None, true) => client.fail(api, 500).await,
            (None, false) => client.clear_fault(api).await,
        }
        .map_err(StepError::metrics(what.clone()))?;
        if let (Some(ns), true) = (&scope, failing)
            && faults.namespaces.get(ns).and_then(|f| f.get(api)).is_none()
        {
            // A server that does not know namespace faults failed the API
            // for every scenario of the run: undone at once.
            let _ = client.clear_fault(api).await;
            return Err(StepError::State(format!(
                "{what} in namespace {ns}: the fake metrics server at {} does not scope faults to a namespace (an older release?): run the fake metrics server of this release",
                client.base_url()
            )));
        }
        if !failing {
            self.metrics.note_recovered(&key);
        }
        Ok(())
    }

    /// "The new pods of W report": where the cluster acts between steps,
    /// also a rule of the fake metrics server for W's pods (namespace and
    /// selector), so that a pod the cluster creates (a scale-up's, a
    /// rollout's, a replacement) has its values when it appears, as on the
    /// simulated cluster, not from the next step on. Pods already there that
    /// are not new and have no values are declared without values, so the
    /// rule passes them by; after a rollout the old revisions are left out.
    pub(crate) async fn new_pod_rules(&mut self) -> StepResult {
        if !self.cluster.acts_between_steps() {
            return Ok(());
        }
        let keys = self.new_pods.with_values();
        let mut patch = ScriptPatch::default();
        for ObjKey { ns, name: workload } in keys {
            for pod in self.pods_of(&ns, &workload).await? {
                let name = pod.metadata.name.clone().unwrap_or_default();
                let key = ObjKey::new(ns.clone(), name);
                if self.is_new(&ns, &workload, &pod) || self.metrics.has_pod(&key) {
                    continue;
                }
                let labels = pod
                    .metadata
                    .labels
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                patch
                    .pods
                    .push(self.metrics.declare_without_values(&key, labels)?);
            }
            let Some(versions) = self
                .new_pods
                .versions(&ObjKey::new(ns.clone(), workload.clone()))
            else {
                continue;
            };
            let what = format!("new pods of {ns}/{workload}");
            let values = model_of(&what, &versions.values)?;
            let values = pod_spec(&ns, &what, &values)?;
            let workload_entry = self
                .workloads
                .get(&ObjKey::new(ns.clone(), workload.clone()));
            let mut selector =
                workload_entry.map_or_else(|| format!("app={workload}"), |w| w.selector.clone());
            if versions.rollouts > 0 && !versions.old.is_empty() {
                let label = match workload_entry.map(|w| w.kind) {
                    Some(super::super::params::WorkloadKind::StatefulSet) => {
                        hpa_sim::REVISION_LABEL
                    }
                    _ => hpa_sim::TEMPLATE_HASH_LABEL,
                };
                let old: Vec<&str> = versions.old.iter().map(String::as_str).collect();
                if !selector.is_empty() {
                    selector.push(',');
                }
                selector.push_str(&format!("{label} notin ({})", old.join(",")));
            }
            patch.rules.push(RuleSpec {
                name: format!("new-pods.{ns}.{workload}"),
                namespace: ns.clone(),
                selector,
                containers: values.containers,
                metrics: values.metrics,
                timestamp: None,
                window: None,
            });
        }
        if patch.rules.is_empty() {
            return Ok(());
        }
        let client = self.env().await?.metrics.clone();
        client
            .patch_script(&patch)
            .await
            .map_err(StepError::metrics("setting the rules of new pods"))?;
        Ok(())
    }
}

/// Sets (or, with `None`, clears) one metric of one pod. `cpu` and `memory`
/// cells may be per container (`app=250m, sidecar=50m`). Without `push` the
/// caller sends the pod to the metrics server itself, once per row.
pub(crate) async fn set_value(
    world: &mut HpaWorld,
    ns: &str,
    pod: &str,
    metric: &str,
    value: Option<&str>,
    push: bool,
) -> StepResult {
    world.pod_model(ns, pod).await?.set(pod, metric, value)?;
    if push {
        world.push_pod(ns, pod).await?;
    }
    Ok(())
}
