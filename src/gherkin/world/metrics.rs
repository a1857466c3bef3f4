//! The world's side of the fake metrics server: what it is told about each
//! pod (kept whole, so that every change sends the whole pod), pods that
//! went away, and failing metrics APIs.

use super::*;

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
        let result = if failing {
            client.fail(api, 500).await
        } else {
            client.clear_fault(api).await
        };
        result.map(|_| ()).map_err(StepError::metrics(format!(
            "making the {api} metrics API {}",
            if failing { "fail" } else { "recover" }
        )))
    }
}
