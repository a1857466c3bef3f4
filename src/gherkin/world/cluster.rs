//! Reading and writing the scenario's cluster: HPAs, scale targets and any
//! object as JSON.

use super::*;

impl HpaWorld {
    /// The HPA as the API serves it in autoscaling/v2.
    pub async fn hpa(&mut self, name: &str) -> Result<HorizontalPodAutoscaler, StepError> {
        let (ns, n) = self.qualify(name);
        let api: Api<HorizontalPodAutoscaler> = self.api(&ns).await?;
        api.get(&n)
            .await
            .map_err(StepError::kube(format!("reading HPA {ns}/{n}")))
    }

    /// `spec.replicas` of a scale target (the workload object itself, not
    /// what an overridden `/scale` reports).
    pub async fn spec_replicas(
        &mut self,
        kind: crate::gherkin::params::WorkloadKind,
        name: &str,
    ) -> Result<i32, StepError> {
        let (ns, n) = self.qualify(name);
        let env = self.env().await?;
        let api = workload_api(&env.client, &ns, kind);
        let obj = api
            .get(&n)
            .await
            .map_err(StepError::kube(format!("reading {} {ns}/{n}", kind.word())))?;
        Ok(obj
            .data
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .unwrap_or(1))
    }

    /// `spec.replicas` as the target's scale subresource reports it (what
    /// the HPA sees, an overridden scale included). Where reading the scale
    /// is made to fail, the workload object's own count.
    pub async fn scale_replicas(
        &mut self,
        kind: crate::gherkin::params::WorkloadKind,
        name: &str,
    ) -> Result<i32, StepError> {
        let (ns, n) = self.qualify(name);
        let env = self.env().await?;
        let api = workload_api(&env.client, &ns, kind);
        match api.get_scale(&n).await {
            Ok(scale) => Ok(scale.spec.and_then(|s| s.replicas).unwrap_or(0)),
            Err(kube::Error::Api(e)) if e.code >= 500 => self.spec_replicas(kind, name).await,
            Err(e) => Err(StepError::kube(format!(
                "reading the scale of {} {ns}/{n}",
                kind.word()
            ))(e)),
        }
    }

    /// Creates or replaces an object given as JSON in a namespace.
    pub async fn create_dynamic(
        &mut self,
        ns: &str,
        resource: &ApiResource,
        obj: Value,
    ) -> Result<DynamicObject, StepError> {
        let mut obj = obj;
        // Marked so that a shared cluster can be cleared for the next scenario.
        obj["metadata"]["labels"][crate::testbed::cleanup::SCENARIO_LABEL] = Value::from("true");
        let env = self.env().await?;
        let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), ns, resource);
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let dynamic: DynamicObject = serde_json::from_value(obj)
            .map_err(|e| StepError::Input(format!("{} {name}: {e}", resource.kind)))?;
        api.create(&PostParams::default(), &dynamic)
            .await
            .map_err(StepError::kube(format!(
                "creating {} {ns}/{name}",
                resource.kind
            )))
    }

    /// Merge-patches an object's main part or status.
    pub async fn merge_patch(
        &mut self,
        ns: &str,
        resource: &ApiResource,
        name: &str,
        patch: Value,
        status: bool,
    ) -> StepResult {
        let env = self.env().await?;
        let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), ns, resource);
        let what = format!(
            "updating {} {ns}/{name}{}",
            resource.kind,
            if status { " status" } else { "" }
        );
        let params = PatchParams::default();
        let patch = Patch::Merge(&patch);
        if status {
            api.patch_status(name, &params, &patch).await
        } else {
            api.patch(name, &params, &patch).await
        }
        .map(|_| ())
        .map_err(StepError::kube(what))
    }
}
