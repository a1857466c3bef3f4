//! The cluster side of a load run, from the testbed: the simulated cluster
//! and fake metrics server in this process (no sockets), `hpa-harness sim`
//! in a child process, or a kubeconfig's cluster (our sim or a real one)
//! with a fake metrics server reached through its control API. A simulated
//! cluster counts the requests through its admin side, the same for all.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use fake_metrics_server::AppState;
use fake_metrics_server::client::ControlClient;
use fake_metrics_server::control::Summary;
use fake_metrics_server::script::{Change, RuleSpec, Script, ScriptPatch};
use hpa_sim::admin::SimAdmin;
use hpa_sim::{Sim, SimConfig};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};

use super::run::{LoadError, LoadOptions};
use crate::testbed::cluster::fake_node::FakeNode;
use crate::testbed::connect::{self, ConnectError, ConnectOptions, Connected};
use crate::testbed::embedded::Embedded;
use crate::testbed::kubeconfig::{self, KubeconfigError};
use crate::testbed::process::{SimProcess, SpawnError};
use crate::testbed::{BackendKind, ControllerKind};

/// Errors reaching or starting a cluster outside this process.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// `hpa-harness sim` could not be started or did not announce itself.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The kubeconfig could not be read or used.
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
    /// The cluster could not be used.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A real cluster needs the fake metrics server's control URL.
    #[error(
        "--backend kubeconfig needs --metrics-control-url (the fake metrics server the cluster's metrics APIs point at) unless the cluster is hpa-harness sim"
    )]
    NoMetricsUrl,
    /// The fake metrics server's control API failed.
    #[error("fake metrics server at {url}: {message}")]
    Metrics {
        /// Its control URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// Creating a namespace or reading the sim's counters failed.
    #[error("cannot {action}: {message}")]
    Setup {
        /// What was being done.
        action: String,
        /// What failed.
        message: String,
    },
}

/// Changes per control request: well under the server's body limit.
const CHANGES_PER_REQUEST: usize = 2_000;

/// Where the fake metrics server's script goes.
enum Metrics {
    /// Its state, in this process.
    InProcess(AppState),
    /// Its control API.
    Control(ControlClient),
}

/// The cluster and fake metrics server of a load run.
pub struct LoadCluster {
    client: kube::Client,
    /// A simulated cluster's admin side (counts requests); `None` on a real
    /// cluster.
    admin: Option<Arc<dyn SimAdmin>>,
    metrics: Metrics,
    /// The in-process sim, ticked so that pod transitions happen on time.
    sim: Option<Sim>,
    /// The `hpa-harness sim` child.
    process: Option<SimProcess>,
    /// On a real cluster: the node the load's pods are placed on.
    fake_node: Option<FakeNode>,
    /// The kubeconfig the clients come from (a cluster outside this process).
    kubeconfig: Option<PathBuf>,
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
        match options.backend {
            BackendKind::Sim => Ok(Self::in_process(namespaces)),
            BackendKind::SimProcess => {
                let process = SimProcess::spawn().await.map_err(RemoteError::from)?;
                let kubeconfig = process.kubeconfig.clone();
                let metrics_url = process.metrics_url.clone();
                let mut cluster = Self::connect(kubeconfig, Some(&metrics_url)).await?;
                cluster.process = Some(process);
                Ok(cluster)
            }
            BackendKind::Kubeconfig => {
                let path = options.kubeconfig.clone().ok_or_else(|| {
                    LoadError::Invalid("--backend kubeconfig needs --kubeconfig".into())
                })?;
                Ok(Self::connect(path, options.metrics_control_url.as_deref()).await?)
            }
            other => Err(LoadError::Unsupported(format!(
                "--backend {} makes a cluster for scenarios; give a load run its cluster with --backend kubeconfig",
                other.name()
            ))),
        }
    }

    fn in_process(namespaces: &[String]) -> Self {
        let bed = Embedded::new(
            None,
            SimConfig {
                namespaces: ["default", "kube-system"]
                    .into_iter()
                    .map(String::from)
                    .chain(namespaces.iter().cloned())
                    .collect(),
                ..SimConfig::default()
            },
        );
        Self {
            client: bed.sim.client(),
            admin: Some(Arc::new(bed.sim.clone())),
            metrics: Metrics::InProcess(bed.metrics),
            sim: Some(bed.sim),
            process: None,
            fake_node: None,
            kubeconfig: None,
        }
    }

    /// Connects to the cluster of `kubeconfig`. When it is our sim (its
    /// admin API answers), its requests are counted; on a real cluster the
    /// harness's fake node is registered and the load's pods go on it.
    async fn connect(kubeconfig: PathBuf, metrics_url: Option<&str>) -> Result<Self, RemoteError> {
        let metrics_url = metrics_url.ok_or(RemoteError::NoMetricsUrl)?;
        let connected: Connected = connect::connect(ConnectOptions {
            kubeconfig: Some(&kubeconfig),
            context: None,
            metrics_url,
            controller: ControllerKind::Ours,
            upstream_sync_period: std::time::Duration::ZERO,
            preflight: None,
            assume_real: false,
        })
        .await?;
        let admin = connected.shared_admin();
        Ok(Self {
            client: connected.client,
            admin,
            metrics: Metrics::Control(connected.metrics),
            sim: None,
            process: None,
            fake_node: connected.fake_node,
            kubeconfig: Some(kubeconfig),
        })
    }

    /// A client of the cluster.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A client for the controller under test with a `qps`/`burst` bucket
    /// per clientset, as `hpa-harness controller` builds its own; needs a
    /// cluster in its own process.
    pub async fn controller_client(&self, qps: f64, burst: u32) -> Result<kube::Client, LoadError> {
        let Some(path) = &self.kubeconfig else {
            return Err(LoadError::Unsupported(
                "--kube-api-qps needs a cluster in its own process (--backend sim-process or kubeconfig)".into(),
            ));
        };
        Ok(kubeconfig::controller_client(path, qps, burst)
            .await
            .map_err(RemoteError::from)?)
    }

    /// The fake metrics server's control client (a cluster outside this
    /// process).
    pub fn control(&self) -> Option<&ControlClient> {
        match &self.metrics {
            Metrics::Control(c) => Some(c),
            Metrics::InProcess(_) => None,
        }
    }

    /// Whether the cluster is a real one (pods go on the fake node).
    pub fn is_real(&self) -> bool {
        self.fake_node.is_some()
    }

    /// Whether the cluster outlives the run (a kubeconfig's): the load then
    /// deletes what it made ([`super::cleanup`]).
    pub fn outlives_the_run(&self) -> bool {
        self.sim.is_none() && self.process.is_none()
    }

    /// Whether the load's pods get their metrics from rules: a fake metrics
    /// server outside this process learns the cluster's pods itself, so
    /// pods its Deployments create later, under names the cluster picks,
    /// get values at once. In this process the load names them.
    pub fn uses_rules(&self) -> bool {
        matches!(self.metrics, Metrics::Control(_))
    }

    /// Upserts rules in the fake metrics server's script.
    pub async fn set_rules(&self, rules: Vec<RuleSpec>) -> Result<Summary, LoadError> {
        let Metrics::Control(control) = &self.metrics else {
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
            Metrics::Control(control) => control
                .summary()
                .await
                .map(Some)
                .map_err(|e| Self::metrics_error(control, e)),
            Metrics::InProcess(_) => Ok(None),
        }
    }

    /// Empties the fake metrics server's script (the load's rules and
    /// series), outside this process.
    pub async fn clear_script(&self) -> Result<(), LoadError> {
        if let Metrics::Control(control) = &self.metrics {
            control
                .put_script(&Script::default())
                .await
                .map_err(|e| Self::metrics_error(control, e))?;
        }
        Ok(())
    }

    /// The child process's id, when the sim runs as one.
    pub fn child_pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(SimProcess::pid)
    }

    /// Creates the namespaces, labelled as the load's (one of an earlier
    /// load is fine; anyone else's is refused); the in-process sim serves
    /// them from the start.
    pub async fn create_namespaces(&self, names: &[String]) -> Result<(), LoadError> {
        if self.sim.is_some() {
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
                    let existing = api.get_opt(name).await.map_err(|e| RemoteError::Setup {
                        action: format!("read namespace {name}"),
                        message: e.to_string(),
                    })?;
                    if !existing.is_some_and(|n| super::cleanup::is_load_namespace(&n)) {
                        return Err(LoadError::Invalid(super::cleanup::foreign_namespace(name)));
                    }
                }
                Err(e) => {
                    return Err(RemoteError::Setup {
                        action: format!("create namespace {name}"),
                        message: e.to_string(),
                    }
                    .into());
                }
            }
        }
        Ok(())
    }

    fn metrics_error(control: &ControlClient, e: impl std::fmt::Display) -> LoadError {
        RemoteError::Metrics {
            url: control.base_url().to_string(),
            message: e.to_string(),
        }
        .into()
    }

    /// Replaces the fake metrics server's script: everything but the pods
    /// at once, then the pods in chunks (the control API takes bodies of a
    /// few MiB; 100,000 pods are more).
    pub async fn load_script(&self, script: &Script) -> Result<(), LoadError> {
        match &self.metrics {
            Metrics::InProcess(state) => state.load(script).map_err(LoadError::Metrics),
            Metrics::Control(control) => {
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
            Metrics::InProcess(state) => {
                state.apply(changes).map(|_| ()).map_err(LoadError::Metrics)
            }
            Metrics::Control(control) => {
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
                .map_err(|e| RemoteError::Setup {
                    action: "reset the sim's request counters".into(),
                    message: e.to_string(),
                })?;
        }
        if let Metrics::InProcess(state) = &self.metrics {
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
        let counts = admin.requests().await.map_err(|e| RemoteError::Setup {
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
        if let Some(sim) = &self.sim {
            sim.process_due();
        }
    }

    /// Stops the child (if any), removes the fake node (if any).
    pub async fn stop(mut self) {
        if let Some(process) = self.process.take() {
            process.stop().await;
        }
        Connected::remove_fake_node(self.fake_node.take()).await;
    }
}
