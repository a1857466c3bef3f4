//! The testbed of one scenario, from its first step to its last: the
//! running cluster and metrics server, the controller once started (with
//! what [`ControllerSetup`] holds), and on a real cluster the namespace it
//! holds and its own namespace.
//!
//! Everything starts lazily, at the first step that needs it, so that
//! "the HPA controller runs with:" may come after workloads are declared
//! but before the controller is first asked to act.

use std::sync::Arc;

use super::metrics_mirror::FailingApi;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::Value;

use super::{ControllerSetup, StepError, StepResult, workload_api};
use crate::gherkin::kinds::{self, KindRef, Served};
use crate::gherkin::params::WorkloadKind;
use crate::gherkin::target::{ControllerKind, Target};
use crate::testbed::controller::Driver;
use crate::testbed::env::Env;
use crate::testbed::shared::{NamespaceTurn, RunShared};
use hpa_controller::config::ControllerConfig;
use hpa_core::FeatureGates;

/// One scenario's testbed.
#[derive(Debug)]
pub struct ScenarioCluster {
    /// Where this scenario runs.
    target: Target,
    env: Option<Env>,
    driver: Option<Driver>,
    /// On a real cluster: the namespace the scenario named, held until it
    /// ends.
    named_turn: Option<NamespaceTurn>,
    /// The namespace made for this scenario on a real cluster (deleted when
    /// it ends), so that nothing of an earlier scenario is seen.
    own_namespace: Option<String>,
    /// What the cluster serves, for the kinds steps name (refreshed when a
    /// name is not found: a CRD may have come since).
    served_kinds: Option<Vec<Served>>,
    /// What the scenario's tags say it needs (`@virtual-clock`,
    /// `@simulated-workloads`).
    needs: Vec<Needs>,
}

/// What a scenario may need of the cluster beyond its steps, by its tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// `@virtual-clock`: its expectations are exact to the second.
    VirtualClock,
    /// `@simulated-workloads`: it counts on the pods the simulated
    /// cluster's workload controllers keep.
    SimulatedWorkloads,
}

impl Needs {
    /// Why the scenario cannot run on `env`, if it cannot.
    fn unmet(self, env: &Env) -> Option<String> {
        use crate::gherkin::selection::{SIMULATED_WORKLOADS_TAG, VIRTUAL_CLOCK_TAG};
        match self {
            Self::VirtualClock if !env.is_virtual() => Some(format!(
                "the scenario is tagged @{VIRTUAL_CLOCK_TAG}: its expectations are exact to the second, which only a virtual clock keeps (here time is the wall clock)"
            )),
            Self::SimulatedWorkloads if env.is_real() => Some(format!(
                "the scenario is tagged @{SIMULATED_WORKLOADS_TAG}: it counts on the pods the simulated cluster's workload controllers keep, and a real ReplicaSet replaces a failed or deleted pod at once and picks its own pods to remove on a scale-down or a rollout"
            )),
            _ => None,
        }
    }
}

impl ScenarioCluster {
    pub fn new(target: Target) -> Self {
        Self {
            target,
            env: None,
            driver: None,
            named_turn: None,
            own_namespace: None,
            served_kinds: None,
            needs: Vec::new(),
        }
    }

    /// The scenario needs `what` (by its tags): where the cluster does not
    /// offer it, its first step that needs the cluster is not runnable, and
    /// says why.
    pub fn require(&mut self, what: Needs) {
        self.needs.push(what);
    }

    /// Where this scenario runs.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// What the run's scenarios share, on a real cluster.
    pub fn shared(&self) -> Option<Arc<RunShared>> {
        match &self.target {
            Target::Remote(r) if r.is_real() => Some(r.shared.clone()),
            _ => None,
        }
    }

    /// On a real cluster: waits until no other scenario of the run uses
    /// namespace `name`, and holds it until the scenario ends.
    pub async fn hold_namespace(&mut self, name: &str) {
        if let Some(shared) = self.shared() {
            self.named_turn = Some(shared.namespace_turn(name).await);
        }
    }

    /// Where the run knows its API server's gates (a control plane it
    /// started): a scenario that turns on a gate the API server consults
    /// (HPAScaleToZero admits `minReplicas: 0`, HPAConfigurableTolerance
    /// keeps `tolerance`) while the API server runs without it cannot run.
    fn check_server_gates(&self, gates: &FeatureGates) -> StepResult {
        let Target::Remote(remote) = &self.target else {
            return Ok(());
        };
        let Some(server) = &remote.server_gates else {
            return Ok(());
        };
        for (name, wanted, has) in [
            (
                "HPAScaleToZero",
                gates.scale_to_zero(),
                server.scale_to_zero(),
            ),
            (
                "HPAConfigurableTolerance",
                gates.configurable_tolerance(),
                server.configurable_tolerance(),
            ),
        ] {
            if wanted && !has {
                return Err(StepError::unsupported(format!(
                    "the scenario turns on {name}, which this cluster's API server runs without (start the control plane with --control-plane-feature-gates {name}=true)"
                )));
            }
        }
        Ok(())
    }

    /// Starts the cluster unless it runs, with the scenario's feature
    /// gates; on a real cluster, unless the scenario named a namespace, the
    /// namespace made for it (which unqualified names then mean).
    pub async fn start(
        &mut self,
        gates: &FeatureGates,
        namespace_named: bool,
    ) -> Result<Option<String>, StepError> {
        if self.env.is_some() {
            return Ok(None);
        }
        if let Target::Remote(remote) = &self.target
            && let Some(release) = remote.release
            && release != gates.version()
        {
            return Err(StepError::unsupported(format!(
                "the scenario is for Kubernetes {}, and this cluster runs {release} (its /version): on a real cluster scenarios run under the cluster's own release",
                gates.version()
            )));
        }
        self.check_server_gates(gates)?;
        let env = Env::start(&self.target).await?;
        if let Some(why) = self.needs.iter().find_map(|n| n.unmet(&env)) {
            return Err(StepError::unsupported(why));
        }
        // One cluster, one set of gates: the API server validates
        // `minReplicas: 0` only with HPAScaleToZero, as the controller decides.
        env.set_feature_gates(gates).await?;
        let made = if env.is_real() && !namespace_named && self.own_namespace.is_none() {
            let name = scenario_namespace();
            self.make_own_namespace(&env, &name).await?;
            self.own_namespace = Some(name.clone());
            Some(name)
        } else {
            None
        };
        self.env = Some(env);
        Ok(made)
    }

    /// Creates this scenario's own namespace on a real cluster.
    async fn make_own_namespace(&self, env: &Env, name: &str) -> StepResult {
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(env.client.clone());
        let ns = serde_json::from_value(serde_json::json!({"metadata": {"name": name,
            "labels": {crate::testbed::cleanup::SCENARIO_LABEL: "true"}}}))
        .map_err(|e| StepError::start(format!("namespace {name}: {e}")))?;
        // Tracked before it exists: a run interrupted meanwhile deletes it.
        let shared = self.shared();
        if let Some(shared) = &shared {
            shared.track(name);
        }
        if let Err(e) = api.create(&PostParams::default(), &ns).await {
            if let Some(shared) = &shared {
                shared.untrack(name);
            }
            return Err(StepError::kube(format!(
                "creating the scenario's namespace {name}"
            ))(e));
        }
        Ok(())
    }

    /// The running cluster (after [`Self::start`]).
    pub fn env(&self) -> Result<&Env, StepError> {
        self.env
            .as_ref()
            .ok_or_else(|| StepError::start("the cluster did not start"))
    }

    /// The cluster if it started (for failure reports).
    pub fn env_if_started(&self) -> Option<&Env> {
        self.env.as_ref()
    }

    /// The HPA `ns/name` as the API serves it in autoscaling/v2 (after
    /// [`Self::start`], as every object method here).
    pub async fn hpa(&self, ns: &str, name: &str) -> Result<HorizontalPodAutoscaler, StepError> {
        let api: Api<HorizontalPodAutoscaler> = Api::namespaced(self.env()?.client.clone(), ns);
        api.get(name)
            .await
            .map_err(StepError::kube(format!("reading HPA {ns}/{name}")))
    }

    /// The pods in `ns` that `selector` picks, in the cluster's order.
    pub async fn pods(
        &self,
        ns: &str,
        workload: &str,
        selector: &str,
    ) -> Result<Vec<Pod>, StepError> {
        let api: Api<Pod> = Api::namespaced(self.env()?.client.clone(), ns);
        let list = api
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(StepError::kube(format!(
                "listing the pods of {ns}/{workload}"
            )))?;
        Ok(list.items)
    }

    /// `spec.replicas` of a scale target (the workload object itself, not
    /// what an overridden `/scale` reports).
    pub async fn spec_replicas(
        &self,
        kind: WorkloadKind,
        ns: &str,
        name: &str,
    ) -> Result<i32, StepError> {
        let api = workload_api(&self.env()?.client, ns, kind);
        let obj = api.get(name).await.map_err(StepError::kube(format!(
            "reading {} {ns}/{name}",
            kind.word()
        )))?;
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
        &self,
        kind: WorkloadKind,
        ns: &str,
        name: &str,
    ) -> Result<i32, StepError> {
        let api = workload_api(&self.env()?.client, ns, kind);
        match api.get_scale(name).await {
            Ok(scale) => Ok(scale.spec.and_then(|s| s.replicas).unwrap_or(0)),
            Err(kube::Error::Api(e)) if e.code >= 500 => self.spec_replicas(kind, ns, name).await,
            Err(e) => Err(StepError::kube(format!(
                "reading the scale of {} {ns}/{name}",
                kind.word()
            ))(e)),
        }
    }

    /// Creates an object given as JSON in a namespace, marked as the
    /// scenario's.
    pub async fn create_dynamic(
        &self,
        ns: &str,
        resource: &ApiResource,
        obj: Value,
    ) -> Result<DynamicObject, StepError> {
        let mut obj = obj;
        // Marked so that a shared cluster can be cleared for the next scenario.
        obj["metadata"]["labels"][crate::testbed::cleanup::SCENARIO_LABEL] = Value::from("true");
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.env()?.client.clone(), ns, resource);
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
        &self,
        ns: &str,
        resource: &ApiResource,
        name: &str,
        patch: Value,
        status: bool,
    ) -> StepResult {
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.env()?.client.clone(), ns, resource);
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

    /// The controller if it started.
    pub fn driver_if_started(&self) -> Option<&Driver> {
        self.driver.as_ref()
    }

    /// The controller, started on first use (after [`Self::start`]) as
    /// `setup` says so far, watching `namespace` alone on a real cluster;
    /// seeds given so far are handed over.
    pub async fn driver(
        &mut self,
        setup: &mut ControllerSetup,
        namespace: &str,
    ) -> Result<&Driver, StepError> {
        if self.driver.is_none() {
            let (client, clock, scope) = {
                let env = self.env()?;
                if env.controller_kind() == ControllerKind::Upstream {
                    return Err(StepError::unsupported(
                        "this step needs our controller (its flags, memory or metrics); the cluster's own HPA controller acts in this run".to_owned(),
                    ));
                }
                // On a real cluster other scenarios of the run have HPAs of
                // their own: this scenario's controller keeps to its namespace.
                let scope = env.is_real().then(|| namespace.to_owned());
                (env.client.clone(), env.clock(), scope)
            };
            let binary = match &self.target {
                Target::Remote(r) => r.controller_binary.clone(),
                Target::Embedded => None,
            };
            let driver = match binary {
                Some(binary) => Driver::start_process(
                    &binary.path,
                    binary.kubeconfig.as_deref(),
                    binary.context.as_deref(),
                    &setup.process_flags(scope.as_deref()),
                    clock,
                )
                .await
                .map_err(StepError::controller("starting the hpa-controller process"))?,
                None => Driver::start(
                    setup.config.clone(),
                    client,
                    clock,
                    scope,
                    setup.extensions(),
                )
                .await
                .map_err(StepError::controller("starting the HPA controller"))?,
            };
            self.driver = Some(driver);
        }
        let seeds = setup.take_seeds();
        let driver = self
            .driver
            .as_ref()
            .ok_or_else(|| StepError::start("the controller did not start"))?;
        for seed in seeds {
            driver
                .seed(&seed)
                .await
                .map_err(StepError::controller("seeding the controller's history"))?;
        }
        Ok(driver)
    }

    /// What the cluster shows of its own HPA controller's flags, in a
    /// sentence (why a step cannot give ours).
    pub async fn upstream_flags(&self) -> String {
        match &self.target {
            Target::Remote(r) => match &r.manager_flags {
                Some(flags) => format!("it runs with {}", flags.join(" ")),
                None => crate::testbed::controller_manager::describe(&r.client).await,
            },
            _ => "its flags are not visible here".to_owned(),
        }
    }

    /// Once started, the cluster takes the gates the controller's flags now
    /// imply (refused where its API server runs without one the scenario
    /// turns on); before, it starts with them.
    pub async fn apply_gates(&self, gates: &FeatureGates) -> StepResult {
        if let Some(env) = &self.env {
            self.check_server_gates(gates)?;
            env.set_feature_gates(gates).await?;
        }
        Ok(())
    }

    /// Whose controller acts in this scenario.
    pub fn controller(&self) -> ControllerKind {
        self.target.controller()
    }

    /// The fake node scenario pods go to, on a real cluster, unless they
    /// run on a real node.
    pub fn fake_node(
        &self,
        real_node: bool,
    ) -> Option<Arc<crate::testbed::cluster::fake_node::FakeNode>> {
        match &self.target {
            Target::Remote(r) if !real_node => r.fake_node.clone(),
            _ => None,
        }
    }

    /// Whether the cluster is a real one (once started).
    pub fn is_real(&self) -> bool {
        self.env.as_ref().is_some_and(Env::is_real)
    }

    /// Whether the cluster runs on a virtual clock (once started).
    pub fn is_virtual(&self) -> Option<bool> {
        self.env.as_ref().map(Env::is_virtual)
    }

    /// Whether the cluster's controllers act between steps (a remote
    /// cluster on the wall clock): pods then appear while no step runs.
    pub fn acts_between_steps(&self) -> bool {
        matches!(self.target, Target::Remote(_)) && self.is_virtual() == Some(false)
    }

    /// The sync period of the controller acting in the scenario: the
    /// cluster's own, or ours as `config` says.
    pub fn sync_period(&self, config: &ControllerConfig) -> std::time::Duration {
        match &self.target {
            Target::Remote(r) if r.controller == ControllerKind::Upstream => r.upstream_sync_period,
            _ => config.sync_period,
        }
    }

    /// The kind a step names (`deployment`, `Ingress`, `ingresses`,
    /// `ingress.networking.k8s.io`, a custom resource's kind), after
    /// [`Self::start`].
    pub async fn resolve_kind(&mut self, word: &str) -> Result<KindRef, StepError> {
        if let Some(served) = &self.served_kinds
            && let Ok(k) = kinds::resolve_in(word, served)
        {
            return Ok(k);
        }
        let client = self.env()?.client.clone();
        let served = kinds::served(&client).await?;
        let found = kinds::resolve_in(word, &served);
        self.served_kinds = Some(served);
        found
    }

    /// Forgets what the cluster serves (a CRD came), so the next kind a
    /// step names is looked up again.
    pub fn forget_served_kinds(&mut self) {
        self.served_kinds = None;
    }

    /// After the last step: the metrics APIs the scenario made fail answer
    /// again and, on a real cluster, its own namespace goes with everything
    /// in it and its metrics.
    pub async fn clean_up(&mut self, failing: Vec<FailingApi>) {
        let Some(env) = &self.env else {
            return;
        };
        for (api, namespace) in failing {
            let cleared = match &namespace {
                Some(ns) => env.metrics.clear_fault_in(ns, api).await,
                None => env.metrics.clear_fault(api).await,
            };
            if let Err(e) = cleared {
                tracing::warn!(%api, ?namespace, error = %e, "clearing the scenario's metrics API fault");
            }
        }
        let Some(ns) = self.own_namespace.take() else {
            return;
        };
        // Pods the scenario held terminating would hold its namespace.
        if let Err(e) = crate::testbed::cleanup::release_held_pods(&env.client, Some(&ns)).await {
            tracing::warn!(namespace = %ns, error = %e, "letting go of the scenario's held pods");
        }
        let api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(env.client.clone());
        match api.delete(&ns, &Default::default()).await {
            Ok(_) => {
                if let Some(shared) = self.shared() {
                    shared.untrack(&ns);
                }
            }
            Err(e) => {
                tracing::warn!(namespace = %ns, error = %e, "deleting the scenario's namespace");
            }
        }
        if let Err(e) = env.metrics.reset_namespace(&ns).await {
            tracing::warn!(namespace = %ns, error = %e, "clearing the scenario's metrics");
        }
    }

    /// The namespace the scenario named passes to the next scenario.
    pub fn pass_turn(&mut self) {
        self.named_turn = None;
    }
}

/// A fresh namespace name for one scenario on a real cluster.
fn scenario_namespace() -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() % 1_000_000_000)
        .unwrap_or(0);
    format!("hpa-scenario-{}-{millis}-{seq}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_namespaces_are_never_the_same_twice() {
        assert_ne!(scenario_namespace(), scenario_namespace());
        assert!(scenario_namespace().starts_with("hpa-scenario-"));
    }
}
