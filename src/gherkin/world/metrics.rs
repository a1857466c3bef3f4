//! The world's side of the fake metrics server: what it is told about each
//! pod (kept whole, so that every change sends the whole pod), pods that
//! went away, failing metrics APIs, and the rules that give the pods a
//! real cluster creates between steps their values.

use fake_metrics_server::script::{RuleSpec, ScriptPatch};

use super::*;
use crate::gherkin::cells::per_container;

impl HpaWorld {
    /// Sends one changed pod to the metrics server.
    pub(crate) async fn push_pod(&mut self, ns: &str, pod: &str) -> StepResult {
        let Some(model) = self.pods.get(&(ns.to_owned(), pod.to_owned())).cloned() else {
            return Ok(());
        };
        let spec = pod_spec(ns, pod, &model)?;
        let client = self.env().await?.metrics.clone();
        client
            .apply(&[Change::Pod(spec)])
            .await
            .map_err(StepError::metrics(format!(
                "setting the metrics of pod {ns}/{pod}"
            )))?;
        Ok(())
    }

    /// The metrics model of a pod, created with the pod's labels on first use.
    pub(crate) async fn pod_model(
        &mut self,
        ns: &str,
        pod: &str,
    ) -> Result<&mut PodMetrics, StepError> {
        let key = (ns.to_owned(), pod.to_owned());
        if !self.pods.contains_key(&key) {
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
            let labels = p.metadata.labels.unwrap_or_default().into_iter().collect();
            self.pods.insert(
                key.clone(),
                PodMetrics {
                    labels,
                    ..PodMetrics::default()
                },
            );
        }
        self.pods
            .get_mut(&key)
            .ok_or_else(|| StepError::State(format!("pod {ns}/{pod} has no metrics model")))
    }

    /// Forgets, in the metrics server too, pods that no longer exist in the
    /// cluster: a deleted pod's values go with it.
    pub(crate) async fn prune_pods(&mut self) -> StepResult {
        let known: Vec<(String, String)> = self.pods.keys().cloned().collect();
        if known.is_empty() {
            return Ok(());
        }
        let env = self.env().await?;
        let client = env.client.clone();
        let metrics = env.metrics.clone();
        let mut existing = BTreeSet::new();
        let namespaces: BTreeSet<&String> = known.iter().map(|(ns, _)| ns).collect();
        for ns in namespaces {
            let api: Api<Pod> = Api::namespaced(client.clone(), ns);
            let list = api
                .list(&ListParams::default())
                .await
                .map_err(StepError::kube(format!(
                    "listing the pods of namespace {ns}"
                )))?;
            for p in list.items {
                existing.insert((ns.clone(), p.metadata.name.unwrap_or_default()));
            }
        }
        for key in known {
            if !existing.contains(&key) {
                self.pods.remove(&key);
                metrics
                    .remove_pod(&key.0, &key.1)
                    .await
                    .map_err(StepError::metrics(format!(
                        "removing the metrics of deleted pod {}/{}",
                        key.0, key.1
                    )))?;
            }
        }
        Ok(())
    }

    /// Makes one metrics API fail (500) or answer again.
    pub async fn set_metrics_api_failing(&mut self, api: MetricsApi, failing: bool) -> StepResult {
        let client = self.env().await?.metrics.clone();
        // Recorded before the request: a fault set by a request that
        // timed out is still cleared when the scenario ends.
        if failing && !self.failing_apis.contains(&api) {
            self.failing_apis.push(api);
        }
        let result = if failing {
            client.fail(api, 500).await
        } else {
            client.clear_fault(api).await
        };
        if !failing && result.is_ok() {
            self.failing_apis.retain(|a| *a != api);
        }
        result.map(|_| ()).map_err(StepError::metrics(format!(
            "making the {api} metrics API {}",
            if failing { "fail" } else { "recover" }
        )))
    }
    /// Whether the cluster's controllers act between steps (a remote
    /// cluster on the wall clock): pods then appear while no step runs.
    fn cluster_acts_between_steps(&self) -> bool {
        matches!(self.target, Target::Remote(_))
            && self.env.as_ref().is_some_and(|e| !e.is_virtual())
    }

    /// "The new pods of W report": where the cluster acts between steps,
    /// also a rule of the fake metrics server for W's pods (namespace and
    /// selector), so that a pod the cluster creates (a scale-up's, a
    /// rollout's, a replacement) has its values when it appears, as on the
    /// simulated cluster, not from the next step on. Pods already there that
    /// are not new and have no values are declared without values, so the
    /// rule passes them by; after a rollout the old revisions are left out.
    pub(crate) async fn new_pod_rules(&mut self) -> StepResult {
        if !self.cluster_acts_between_steps() {
            return Ok(());
        }
        let keys: Vec<(String, String)> = self
            .versions
            .iter()
            .filter(|(_, v)| !v.values.is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        let mut patch = ScriptPatch::default();
        for (ns, workload) in keys {
            for pod in self.pods_of(&ns, &workload).await? {
                let name = pod.metadata.name.clone().unwrap_or_default();
                let key = (ns.clone(), name.clone());
                if self.is_new(&ns, &workload, &pod) || self.pods.contains_key(&key) {
                    continue;
                }
                let model = PodMetrics {
                    labels: pod
                        .metadata
                        .labels
                        .unwrap_or_default()
                        .into_iter()
                        .collect(),
                    missing: true,
                    ..PodMetrics::default()
                };
                patch.pods.push(pod_spec(&ns, &name, &model)?);
                self.pods.insert(key, model);
            }
            let Some(versions) = self.versions.get(&(ns.clone(), workload.clone())) else {
                continue;
            };
            let what = format!("new pods of {ns}/{workload}");
            let values = model_of(&what, &versions.values)?;
            let values = pod_spec(&ns, &what, &values)?;
            let workload_entry = self.workloads.get(&(ns.clone(), workload.clone()));
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
    let parts = value_parts(pod, metric, value)?;
    apply_value(world.pod_model(ns, pod).await?, metric, parts);
    if push {
        world.push_pod(ns, pod).await?;
    }
    Ok(())
}

/// A cell's value as (container, quantity) parts: per container for `cpu`
/// and `memory`, one unnamed part for a pods metric, none for `None`.
fn value_parts(
    pod: &str,
    metric: &str,
    value: Option<&str>,
) -> Result<Vec<(String, String)>, StepError> {
    let resource = matches!(metric, "cpu" | "memory");
    Ok(match value {
        Some(v) if resource => per_container(v, &format!("pod {pod}, {metric}"))?
            .into_iter()
            .filter_map(|(container, q, _)| Some((container, q?)))
            .collect(),
        Some(v) => {
            crate::gherkin::params::parse_quantity(v)
                .map_err(|e| StepError::Input(format!("pod {pod}, {metric}: {e}")))?;
            vec![(String::new(), v.to_owned())]
        }
        None => Vec::new(),
    })
}

/// Sets one metric of a pod's model to `parts` (none: no value).
fn apply_value(model: &mut PodMetrics, metric: &str, parts: Vec<(String, String)>) {
    model.missing = false;
    if matches!(metric, "cpu" | "memory") {
        // Every container loses this resource, then the named ones get it.
        for usage in model.containers.values_mut() {
            if metric == "cpu" {
                usage.0 = None;
            } else {
                usage.1 = None;
            }
        }
        for (container, q) in parts {
            let usage = model.containers.entry(container).or_default();
            if metric == "cpu" {
                usage.0 = Some(q);
            } else {
                usage.1 = Some(q);
            }
        }
        model
            .containers
            .retain(|_, (cpu, memory)| cpu.is_some() || memory.is_some());
    } else {
        match parts.into_iter().next() {
            Some((_, q)) => {
                model.custom.insert(metric.to_owned(), q);
            }
            None => {
                model.custom.remove(metric);
            }
        }
    }
}

/// The model of a pod whose metrics are `values` (by metric name): what a
/// fake-metrics-server rule gives every pod it matches.
pub(crate) fn model_of(
    what: &str,
    values: &std::collections::BTreeMap<String, String>,
) -> Result<PodMetrics, StepError> {
    let mut model = PodMetrics::default();
    for (metric, value) in values {
        let parts = value_parts(what, metric, Some(value))?;
        apply_value(&mut model, metric, parts);
    }
    Ok(model)
}
