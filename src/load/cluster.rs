//! The cluster side of a load run, on the run's [`Testbed`]: what a load
//! needs of the cluster and the fake metrics server (its namespaces, its
//! script or rules, the sim's request counters), whichever backend the
//! testbed started.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use fake_metrics_server::client::ControlClient;
use fake_metrics_server::control::Summary;
use fake_metrics_server::script::{Change, RuleSpec, Script, ScriptPatch};
use hpa_sim::admin::SimAdmin;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};

use super::options::{LoadError, LoadOptions};
use crate::testbed::BackendKind;
use crate::testbed::start::{MetricsHandle, Purpose, Testbed};

/// Changes per control request: well under the server's body limit.
const CHANGES_PER_REQUEST: usize = 2_000;

/// The cluster and fake metrics server of a load run.
pub struct LoadCluster {
    testbed: Testbed,
    client: kube::Client,
    /// A simulated cluster's admin side (counts requests); `None` on a real
    /// cluster.
    admin: Option<Arc<dyn SimAdmin>>,
    metrics: MetricsHandle,
}

impl std::fmt::Debug for LoadCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadCluster")
            .field("sim", &self.admin.is_some())
            .field("child", &self.child_pid())
            .finish_non_exhaustive()
    }
}

impl LoadCluster {
    /// Starts or reaches the cluster of `options.backend`; the in-process
    /// sim serves `namespaces` from the start.
    pub async fn start(options: &LoadOptions, namespaces: &[String]) -> Result<Self, LoadError> {
        if !BackendKind::LOAD.contains(&options.backend) {
            return Err(LoadError::Unsupported(format!(
                "--backend {} makes a cluster for scenarios; give a load run its cluster with --backend kubeconfig",
                options.backend.name()
            )));
        }
        let purpose = Purpose::Load {
            namespaces: namespaces.to_vec(),
            gates: options.run_release(),
        };
        let testbed = Testbed::start(options.backend, &options.testbed, &purpose).await?;
        let (Some(client), Some(metrics)) = (testbed.client(), testbed.metrics()) else {
            testbed.stop().await;
            return Err(LoadError::Unsupported(
                "the testbed gave the load run no cluster".into(),
            ));
        };
        Ok(Self {
            admin: testbed.admin(),
            client,
            metrics,
            testbed,
        })
    }

    /// The run's clock, the testbed's.
    pub fn clock(&self) -> std::sync::Arc<dyn hpa_core::clock::Clock> {
        self.testbed.clock()
    }

    /// A client of the cluster.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A client for the controller under test with a `qps`/`burst` bucket
    /// per clientset, as `hpa-harness controller` builds its own; needs a
    /// cluster in its own process.
    pub async fn controller_client(&self, qps: f64, burst: u32) -> Result<kube::Client, LoadError> {
        self.testbed
            .controller_client(qps, burst)
            .await?
            .ok_or_else(|| {
                LoadError::Unsupported(
                    "--kube-api-qps needs a cluster in its own process (--backend sim-process or kubeconfig)".into(),
                )
            })
    }

    /// The fake metrics server's control client (a cluster outside this
    /// process).
    pub fn control(&self) -> Option<&ControlClient> {
        match &self.metrics {
            MetricsHandle::Control(c) => Some(c),
            MetricsHandle::InProcess(_) => None,
        }
    }

    /// Whether the cluster is the simulated one in this process.
    pub fn is_in_process(&self) -> bool {
        self.testbed.sim().is_some()
    }

    /// Whether the cluster is a real one (pods go on the fake node).
    pub fn is_real(&self) -> bool {
        self.testbed.is_real()
    }

    /// Whether the cluster outlives the run (a kubeconfig's): the load then
    /// deletes what it made ([`super::cleanup`]).
    pub fn outlives_the_run(&self) -> bool {
        self.testbed.outlives_the_run()
    }

    /// Whether the load's pods get their metrics from rules: a fake metrics
    /// server outside this process learns the cluster's pods itself, so
    /// pods its Deployments create later, under names the cluster picks,
    /// get values at once. In this process the load names them.
    pub fn uses_rules(&self) -> bool {
        matches!(self.metrics, MetricsHandle::Control(_))
    }

    /// Upserts rules in the fake metrics server's script.
    pub async fn set_rules(&self, rules: Vec<RuleSpec>) -> Result<Summary, LoadError> {
        let MetricsHandle::Control(control) = &self.metrics else {
            return Err(LoadError::Unsupported(
                "rules need a fake metrics server that learns the cluster's pods".into(),
            ));
        };
        control
            .patch_script(&ScriptPatch {
                rules,
                ..ScriptPatch::default()
            })
            .await
            .map_err(|e| Self::metrics_error(control, e))
    }

    /// How much the fake metrics server serves (outside this process).
    pub async fn metrics_summary(&self) -> Result<Option<Summary>, LoadError> {
        match &self.metrics {
            MetricsHandle::Control(control) => control
                .summary()
                .await
                .map(Some)
                .map_err(|e| Self::metrics_error(control, e)),
            MetricsHandle::InProcess(_) => Ok(None),
        }
    }

    /// Empties the fake metrics server's script (the load's rules and
    /// series), outside this process.
    pub async fn clear_script(&self) -> Result<(), LoadError> {
        if let MetricsHandle::Control(control) = &self.metrics {
            control
                .put_script(&Script::default())
                .await
                .map_err(|e| Self::metrics_error(control, e))?;
        }
        Ok(())
    }

    /// The child process's id, when the sim runs as one.
    pub fn child_pid(&self) -> Option<u32> {
        self.testbed.child_pid()
    }

    /// Creates the namespaces, labelled as the load's (one of an earlier
    /// load is fine; anyone else's is refused); the in-process sim serves
    /// them from the start.
    pub async fn create_namespaces(&self, names: &[String]) -> Result<(), LoadError> {
        if self.testbed.sim().is_some() {
            return Ok(());
        }
        let api: Api<Namespace> = Api::all(self.client.clone());
        let mut seen = HashSet::new();
        for name in names.iter().filter(|n| seen.insert(n.as_str())) {
            let ns = Namespace {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.clone()),
                    labels: Some(super::cleanup::labels()),
                    ..Default::default()
                },
                ..Default::default()
            };
            match api.create(&PostParams::default(), &ns).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    let existing = api.get_opt(name).await.map_err(|e| LoadError::Cluster {
                        action: format!("read namespace {name}"),
                        message: e.to_string(),
                    })?;
                    if !existing.is_some_and(|n| super::cleanup::is_load_namespace(&n)) {
                        return Err(LoadError::Invalid(super::cleanup::foreign_namespace(name)));
                    }
                }
                Err(e) => {
                    return Err(LoadError::Cluster {
                        action: format!("create namespace {name}"),
                        message: e.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    fn metrics_error(control: &ControlClient, e: impl std::fmt::Display) -> LoadError {
        LoadError::MetricsServer {
            url: control.base_url().to_string(),
            message: e.to_string(),
        }
    }

    /// Replaces the fake metrics server's script: everything but the pods
    /// at once, then the pods in chunks (the control API takes bodies of a
    /// few MiB; 100,000 pods are more).
    pub async fn load_script(&self, script: &Script) -> Result<(), LoadError> {
        match &self.metrics {
            MetricsHandle::InProcess(state) => state.load(script).map_err(LoadError::Metrics),
            MetricsHandle::Control(control) => {
                let without_pods = Script {
                    pods: Vec::new(),
                    ..script.clone()
                };
                control
                    .put_script(&without_pods)
                    .await
                    .map_err(|e| Self::metrics_error(control, e))?;
                let pods: Vec<Change> = script.pods.iter().cloned().map(Change::Pod).collect();
                self.apply(&pods).await
            }
        }
    }

    /// Applies changes to the fake metrics server's script, in chunks.
    pub async fn apply(&self, changes: &[Change]) -> Result<(), LoadError> {
        match &self.metrics {
            MetricsHandle::InProcess(state) => {
                state.apply(changes).map(|_| ()).map_err(LoadError::Metrics)
            }
            MetricsHandle::Control(control) => {
                for chunk in changes.chunks(CHANGES_PER_REQUEST) {
                    control
                        .apply(chunk)
                        .await
                        .map_err(|e| Self::metrics_error(control, e))?;
                }
                Ok(())
            }
        }
    }

    /// Zeroes the sim's request counters (nothing on a real cluster) and,
    /// in this process, the metrics server's request log.
    pub async fn reset_requests(&self) -> Result<(), LoadError> {
        if let Some(admin) = &self.admin {
            admin
                .reset_requests()
                .await
                .map_err(|e| LoadError::Cluster {
                    action: "reset the sim's request counters".into(),
                    message: e.to_string(),
                })?;
        }
        if let MetricsHandle::InProcess(state) = &self.metrics {
            state.log().clear();
        }
        Ok(())
    }

    /// The sim's request counters by (verb, resource); `None` on a real
    /// cluster, where nothing counts them.
    pub async fn request_counts(
        &self,
    ) -> Result<Option<BTreeMap<(String, String), u64>>, LoadError> {
        let Some(admin) = &self.admin else {
            return Ok(None);
        };
        let counts = admin.requests().await.map_err(|e| LoadError::Cluster {
            action: "read the sim's request counters".into(),
            message: e.to_string(),
        })?;
        Ok(Some(
            counts
                .requests
                .into_iter()
                .map(|c| ((c.verb, c.resource), c.count))
                .collect(),
        ))
    }

    /// Applies the in-process sim's pod transitions that fell due.
    pub fn tick(&self) {
        if let Some(sim) = self.testbed.sim() {
            sim.process_due();
        }
    }

    /// Takes the testbed down: the child (if any), the fake node (if any).
    pub async fn stop(self) {
        self.testbed.stop().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_core::{FeatureGates, KubernetesVersion};

    /// The release of the cluster `options` make, as its `/version` says.
    async fn release_of(options: &LoadOptions) -> KubernetesVersion {
        let cluster = LoadCluster::start(options, &["load-0".to_owned()])
            .await
            .unwrap();
        let release = crate::testbed::start::cluster_release(&cluster.client()).await;
        cluster.stop().await;
        release
    }

    #[tokio::test]
    async fn a_release_named_for_the_run_is_the_in_process_sim_s_too() {
        let mut named = LoadOptions::default();
        named.settings.decision.feature_gates = FeatureGates::of(KubernetesVersion::V1_36);
        assert_eq!(release_of(&named).await, KubernetesVersion::V1_36);
        // None named: the sim's own release, the newest stable one, which
        // the controller then reads from it.
        let unnamed = LoadOptions {
            gates_under_cluster_release: Some(String::new()),
            ..LoadOptions::default()
        };
        assert_eq!(release_of(&unnamed).await, KubernetesVersion::LATEST_STABLE);
    }
}
