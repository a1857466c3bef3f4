//! The steps' way to objects in the scenario's cluster: names qualified in
//! the scenario's namespace and the cluster started on first use; the
//! reading and writing itself is [`ScenarioCluster`]'s.

use super::*;

impl HpaWorld {
    /// The HPA as the API serves it in autoscaling/v2.
    pub async fn hpa(&mut self, name: &str) -> Result<HorizontalPodAutoscaler, StepError> {
        let (ns, n) = self.qualify(name);
        self.env().await?;
        self.cluster.hpa(&ns, &n).await
    }

    /// `spec.replicas` of a scale target (the workload object itself, not
    /// what an overridden `/scale` reports).
    pub async fn spec_replicas(
        &mut self,
        kind: crate::gherkin::params::WorkloadKind,
        name: &str,
    ) -> Result<i32, StepError> {
        let (ns, n) = self.qualify(name);
        self.env().await?;
        self.cluster.spec_replicas(kind, &ns, &n).await
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
        self.env().await?;
        self.cluster.scale_replicas(kind, &ns, &n).await
    }

    /// Creates an object given as JSON in a namespace.
    pub async fn create_dynamic(
        &mut self,
        ns: &str,
        resource: &ApiResource,
        obj: Value,
    ) -> Result<DynamicObject, StepError> {
        self.env().await?;
        self.cluster.create_dynamic(ns, resource, obj).await
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
        self.env().await?;
        self.cluster
            .merge_patch(ns, resource, name, patch, status)
            .await
    }
}
