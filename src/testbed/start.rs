//! One way to get a testbed for a run: [`Testbed::start`] makes or reaches
//! the cluster of a backend, with its fake metrics server, and
//! [`Testbed::stop`] takes down what it made.
//!
//! - `sim`: for scenarios, nothing yet (each scenario makes its own
//!   embedded cluster, [`super::env::Env`]); for a load run, one simulated
//!   cluster and fake metrics server in this process, on the wall clock;
//! - `sim-process`: `hpa-harness sim` as a child process; scenarios run it
//!   on a virtual clock against a fake metrics server of this process, a
//!   load run on the wall clock with the child's own metrics server;
//! - `kubeconfig`: the cluster of a kubeconfig, our sim or a real one
//!   (checked, with a fake node), and the fake metrics server at
//!   `--metrics-url`;
//! - `kind`, `k3d`, `k3s`: a cluster made for the run, with a fake metrics
//!   server on the host, reached as `kubeconfig` would reach it and deleted
//!   at the end;
//! - `control-plane`: genuine etcd, kube-apiserver and
//!   kube-controller-manager started from their binaries for the run, the
//!   same way.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fake_metrics_server::AppState;
use fake_metrics_server::client::ControlClient;
use hpa_core::clock::{Clock, SystemClock};
use hpa_core::version::KubernetesVersion;
use hpa_sim::admin::SimAdmin;
use hpa_sim::{Sim, SimConfig};
use tokio_util::sync::DropGuard;

use super::cluster::control_plane::{ControlPlaneOptions, binaries};
use super::cluster::fake_node::PodScope;
use super::cluster::session::{ClusterSession, Flavor};
use super::cluster::tools::{self, Tool, ToolError};
use super::connect::{self, ConnectError, ConnectOptions, Connected};
use super::embedded::{Embedded, serve_metrics};
use super::kind::BackendKind;
use super::kubeconfig::{self, KubeconfigError};
use super::options::TestbedOptions;
use super::process::SimProcess;
use super::target::{RemoteTarget, Target};

/// What the testbed is for.
#[derive(Debug, Clone)]
pub enum Purpose {
    /// Gherkin scenarios: virtual time where the cluster is simulated.
    Scenarios,
    /// A load run on the wall clock; an in-process sim serves these
    /// namespaces from the start.
    Load {
        namespaces: Vec<String>,
        /// The release (and `--feature-gates`) of the whole run, when the
        /// run names one: a simulated cluster the testbed makes is that
        /// release too. `None`: the cluster's own release.
        gates: Option<hpa_sim::FeatureGates>,
    },
}

/// Why a testbed could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    /// The backend is not part of this build.
    #[error("backend {} is not available in this build; use --backend sim", .0.name())]
    NotBuilt(BackendKind),
    /// A tool the backend drives is missing or unusable.
    // The tool error's text is the message: not chained as a source too,
    // which would print it twice.
    #[error("backend {}: {problem}", .backend.name())]
    Tool {
        backend: BackendKind,
        problem: ToolError,
    },
    /// The cluster could not be made, started or prepared.
    #[error("backend {}: {reason}", .backend.name())]
    Cluster {
        backend: BackendKind,
        reason: String,
    },
    /// A cluster reached through a kubeconfig needs the fake metrics
    /// server's control URL.
    #[error(
        "backend {}: --metrics-url is needed: the control URL (http://HOST:PORT) of the fake metrics server the cluster's metrics APIServices point at", .0.name()
    )]
    NoMetricsUrl(BackendKind),
    /// The cluster or its fake metrics server cannot be used.
    #[error("backend {}: {error}", .backend.name())]
    Connect {
        backend: BackendKind,
        error: ConnectError,
    },
    /// A client for the controller under test cannot be built.
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
}

/// Where the fake metrics server's data goes.
#[derive(Debug, Clone)]
pub enum MetricsHandle {
    /// Its state, in this process.
    InProcess(AppState),
    /// Its control API.
    Control(ControlClient),
}

/// The cluster side of a run.
enum Parts {
    /// Each scenario makes its own embedded cluster.
    PerScenario,
    /// One simulated cluster and fake metrics server in this process.
    InProcess(Embedded),
    /// A cluster outside this process.
    Remote {
        target: Box<RemoteTarget>,
        metrics: ControlClient,
        /// The kubeconfig and context its clients come from.
        kubeconfig: Option<PathBuf>,
        context: Option<String>,
    },
}

/// A run's cluster and fake metrics server, and what to take down at the
/// end.
pub struct Testbed {
    backend: BackendKind,
    parts: Parts,
    /// The `hpa-harness sim` child.
    process: Option<SimProcess>,
    /// A kind, k3d or k3s cluster made for the run.
    made: Option<ClusterSession>,
    /// A fake metrics server this process serves for a sim child.
    _metrics_server: Option<DropGuard>,
}

impl std::fmt::Debug for Testbed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Testbed")
            .field("backend", &self.backend)
            .field("child", &self.child_pid())
            .finish_non_exhaustive()
    }
}

/// Checks the tools a backend that makes a cluster drives, so that a
/// missing `kind`, `k3d` or Docker engine is named with how to get it
/// before anything runs (`path_var`: the `PATH` to look in).
pub fn check_backend_tools(backend: BackendKind, path_var: &OsStr) -> Result<(), TestbedError> {
    let tool = |problem| TestbedError::Tool { backend, problem };
    match backend {
        BackendKind::Sim
        | BackendKind::SimProcess
        | BackendKind::Kubeconfig
        | BackendKind::ControlPlane => return Ok(()),
        BackendKind::Kind => {
            tools::require_in(Tool::Kind, path_var).map_err(tool)?;
        }
        BackendKind::K3d => {
            tools::require_in(Tool::K3d, path_var).map_err(tool)?;
        }
        BackendKind::K3s => {}
    }
    tools::require_docker_engine_in(path_var).map_err(tool)?;
    Ok(())
}

impl Testbed {
    /// Makes or reaches the cluster of `backend` for `purpose`.
    pub async fn start(
        backend: BackendKind,
        options: &TestbedOptions,
        purpose: &Purpose,
    ) -> Result<Self, TestbedError> {
        if options.controller_binary.is_some()
            && (backend == BackendKind::Sim || !matches!(purpose, Purpose::Scenarios))
        {
            return Err(TestbedError::Cluster {
                backend,
                reason: "--controller-binary runs scenarios' controllers as processes: it needs a cluster they can reach (--backend sim-process, control-plane, or kubeconfig)".to_owned(),
            });
        }
        match (backend, purpose) {
            (BackendKind::Sim, Purpose::Scenarios) => Ok(Self::new(backend, Parts::PerScenario)),
            (BackendKind::Sim, Purpose::Load { namespaces, gates }) => {
                Ok(Self::in_process(namespaces, *gates))
            }
            (BackendKind::SimProcess, Purpose::Scenarios) => {
                Self::sim_process_for_scenarios(options).await
            }
            (BackendKind::SimProcess, Purpose::Load { gates, .. }) => {
                Self::sim_process_for_load(options, gates.as_ref()).await
            }
            (BackendKind::Kubeconfig, _) => {
                let metrics_url = options
                    .metrics_url
                    .as_deref()
                    .ok_or(TestbedError::NoMetricsUrl(backend))?;
                let parts = Self::connect(backend, options, metrics_url).await?;
                Ok(Self::new(backend, parts))
            }
            (BackendKind::Kind | BackendKind::K3d | BackendKind::K3s, _) => {
                check_backend_tools(backend, &std::env::var_os("PATH").unwrap_or_default())?;
                Self::make_cluster(backend, options).await
            }
            (BackendKind::ControlPlane, _) => Self::control_plane(options).await,
        }
    }

    fn new(backend: BackendKind, parts: Parts) -> Self {
        Self {
            backend,
            parts,
            process: None,
            made: None,
            _metrics_server: None,
        }
    }

    fn in_process(namespaces: &[String], gates: Option<hpa_sim::FeatureGates>) -> Self {
        let bed = Embedded::new(
            None,
            SimConfig {
                namespaces: ["default", "kube-system"]
                    .into_iter()
                    .map(String::from)
                    .chain(namespaces.iter().cloned())
                    .collect(),
                feature_gates: gates.unwrap_or_default(),
                ..SimConfig::default()
            },
        );
        Self::new(BackendKind::Sim, Parts::InProcess(bed))
    }

    /// `hpa-harness sim` as a child on a virtual clock, with a fake metrics
    /// server in this process on a virtual clock of its own; each scenario
    /// resets both and moves the two clocks (and the controller's mirror)
    /// together.
    async fn sim_process_for_scenarios(options: &TestbedOptions) -> Result<Self, TestbedError> {
        use hpa_core::clock::{ScenarioClock, VirtualClock};
        let backend = BackendKind::SimProcess;
        let failed = |reason: String| TestbedError::Cluster { backend, reason };
        let clock = VirtualClock::default();
        let metrics = AppState::new(ScenarioClock::Virtual(clock.clone()));
        let (metrics_url, serving) = serve_metrics(metrics)
            .await
            .map_err(|e| failed(format!("cannot serve the fake metrics server: {e}")))?;
        let process = SimProcess::spawn_for_scenarios(clock.now(), &metrics_url)
            .await
            .map_err(|e| failed(e.to_string()))?;
        Self::on_sim_process(options, process, &metrics_url, Some(serving)).await
    }

    /// `hpa-harness sim` as a child on the wall clock with its own fake
    /// metrics server: the load process's memory and CPU are then the
    /// controller's own. With `gates`, the child is that release.
    async fn sim_process_for_load(
        options: &TestbedOptions,
        gates: Option<&hpa_sim::FeatureGates>,
    ) -> Result<Self, TestbedError> {
        let backend = BackendKind::SimProcess;
        let process = SimProcess::spawn(gates)
            .await
            .map_err(|e| TestbedError::Cluster {
                backend,
                reason: e.to_string(),
            })?;
        let metrics_url = process.metrics_url.clone();
        Self::on_sim_process(options, process, &metrics_url, None).await
    }

    /// Reaches the `hpa-harness sim` child (its admin API answers, so it is
    /// never taken for a real cluster) with the fake metrics server at
    /// `metrics_url`; the child stops if it cannot be reached.
    async fn on_sim_process(
        options: &TestbedOptions,
        process: SimProcess,
        metrics_url: &str,
        serving: Option<DropGuard>,
    ) -> Result<Self, TestbedError> {
        let backend = BackendKind::SimProcess;
        let reach = TestbedOptions {
            kubeconfig: Some(process.kubeconfig.clone()),
            context: None,
            assume_real: false,
            ..options.clone()
        };
        let parts = match Self::connect(backend, &reach, metrics_url).await {
            Ok(parts) => parts,
            Err(e) => {
                process.stop().await;
                return Err(e);
            }
        };
        let mut bed = Self::new(backend, parts);
        bed.process = Some(process);
        bed._metrics_server = serving;
        Ok(bed)
    }

    /// Starts a genuine control plane for the run, with the fake metrics
    /// server on loopback, and reaches it as `kubeconfig` would.
    async fn control_plane(options: &TestbedOptions) -> Result<Self, TestbedError> {
        let backend = BackendKind::ControlPlane;
        let plane = control_plane_options(options)?;
        println!(
            "starting a control plane from {} ({})",
            plane.binaries.dir.display(),
            plane.binaries.api_server_version
        );
        let session =
            ClusterSession::control_plane(&plane)
                .await
                .map_err(|e| TestbedError::Cluster {
                    backend,
                    reason: e.to_string(),
                })?;
        Self::on_session(backend, options, session).await
    }

    /// Makes a kind, k3d or k3s cluster for the run, with the fake metrics
    /// server on the host, and reaches it as `kubeconfig` would.
    async fn make_cluster(
        backend: BackendKind,
        options: &TestbedOptions,
    ) -> Result<Self, TestbedError> {
        let flavor = match backend {
            BackendKind::Kind => Flavor::Kind,
            BackendKind::K3d => Flavor::K3d,
            BackendKind::K3s if cfg!(feature = "e2e") => Flavor::K3s,
            other => return Err(TestbedError::NotBuilt(other)),
        };
        let failed = |reason: String| TestbedError::Cluster { backend, reason };
        let upstream = options.controller == super::ControllerKind::Upstream;
        let root = std::env::current_dir().unwrap_or_default();
        let workdir = std::env::temp_dir().join(super::cluster::ephemeral::unique_name());
        std::fs::create_dir_all(&workdir)
            .map_err(|e| failed(format!("work directory {}: {e}", workdir.display())))?;
        let session = ClusterSession::start(flavor, upstream, &root, &workdir)
            .await
            .map_err(|e| failed(e.to_string()))?;
        Self::on_session(backend, options, session).await
    }

    /// Reaches the cluster a session made as `kubeconfig` would; takes it
    /// down when that fails.
    async fn on_session(
        backend: BackendKind,
        options: &TestbedOptions,
        session: ClusterSession,
    ) -> Result<Self, TestbedError> {
        println!(
            "cluster ready: kubeconfig {}, fake metrics server {}",
            session.kubeconfig().display(),
            session.metrics_url()
        );
        let reach = TestbedOptions {
            kubeconfig: Some(session.kubeconfig().to_path_buf()),
            context: None,
            // A control plane the run made is known: its APIServices are
            // Available and its HPA controller is on exactly for
            // `--controller upstream` (no canary needed).
            skip_preflight: options.skip_preflight || backend == BackendKind::ControlPlane,
            ..options.clone()
        };
        let metrics_url = session.metrics_url().to_owned();
        match Self::connect(backend, &reach, &metrics_url).await {
            Ok(mut parts) => {
                if let (Parts::Remote { target, .. }, Some(plane)) =
                    (&mut parts, session.control_plane_handle())
                {
                    target.manager_flags =
                        Some(super::controller_manager::hpa_flags(plane.manager_args()));
                }
                let mut bed = Self::new(backend, parts);
                bed.made = Some(session);
                Ok(bed)
            }
            Err(e) => {
                if let Err(e) = session.finish().await {
                    tracing::warn!(error = %e, "deleting the run's cluster");
                }
                Err(e)
            }
        }
    }

    /// Reaches the cluster of `options` with the fake metrics server at
    /// `metrics_url`: our sim (its admin API answers) or a real cluster,
    /// checked first unless told not to, with the harness's fake node.
    async fn connect(
        backend: BackendKind,
        options: &TestbedOptions,
        metrics_url: &str,
    ) -> Result<Parts, TestbedError> {
        let connected: Connected = connect::connect(ConnectOptions {
            kubeconfig: options.kubeconfig.as_deref(),
            context: options.context.as_deref(),
            metrics_url,
            controller: options.controller,
            upstream_sync_period: options.upstream_sync_period,
            preflight: (!options.skip_preflight).then_some(&options.metrics_service),
            assume_real: options.assume_real,
            pod_scope: options
                .pod_scope
                .unwrap_or(if backend == BackendKind::ControlPlane {
                    PodScope::Cluster
                } else {
                    PodScope::Managed
                }),
        })
        .await
        .map_err(|error| TestbedError::Connect { backend, error })?;
        // On a real cluster each scenario's controller process keeps to the
        // scenario's namespace (`--namespace`), its Lease there too.
        let admin = connected.shared_admin();
        let release = match admin {
            None => Some(cluster_release(&connected.client).await),
            Some(_) => None,
        };
        // Only a control plane the run started tells its API server's gates.
        let server_gates = match release {
            Some(release) if backend == BackendKind::ControlPlane => {
                hpa_core::FeatureGates::parse(release, &options.control_plane_feature_gates).ok()
            }
            _ => None,
        };
        Ok(Parts::Remote {
            target: Box::new(RemoteTarget {
                release,
                server_gates,
                manager_flags: None,
                client: connected.client,
                admin,
                metrics: connected.metrics.clone(),
                controller: options.controller,
                upstream_sync_period: options.upstream_sync_period,
                fake_node: connected.fake_node.map(Arc::new),
                shared: Arc::default(),
                controller_binary: options.controller_binary.as_ref().map(|path| {
                    super::target::ControllerBinary {
                        path: path.clone(),
                        kubeconfig: options.kubeconfig.clone(),
                        context: options.context.clone(),
                    }
                }),
            }),
            metrics: connected.metrics,
            kubeconfig: options.kubeconfig.clone(),
            context: options.context.clone(),
        })
    }

    /// The backend it was started for.
    pub fn backend(&self) -> BackendKind {
        self.backend
    }

    /// The kubeconfig of a cluster outside this process (`None`: the
    /// default places, or an embedded cluster).
    pub fn kubeconfig(&self) -> Option<&Path> {
        match &self.parts {
            Parts::Remote { kubeconfig, .. } => kubeconfig.as_deref(),
            _ => None,
        }
    }

    /// The API server's URL, for a control plane the run started.
    pub fn api_server(&self) -> Option<&str> {
        self.made
            .as_ref()
            .and_then(ClusterSession::control_plane_handle)
            .map(|plane| plane.server())
    }

    /// The fake metrics server's control URL, for a cluster outside this
    /// process.
    pub fn metrics_control_url(&self) -> Option<String> {
        match &self.parts {
            Parts::Remote { metrics, .. } => Some(metrics.base_url().to_string()),
            _ => None,
        }
    }

    /// Where scenarios run on it.
    pub fn target(&self) -> Target {
        match &self.parts {
            Parts::Remote { target, .. } => Target::Remote(target.clone()),
            Parts::PerScenario | Parts::InProcess(_) => Target::Embedded,
        }
    }

    /// A client of the cluster (`None`: each scenario makes its own).
    pub fn client(&self) -> Option<kube::Client> {
        match &self.parts {
            Parts::PerScenario => None,
            Parts::InProcess(bed) => Some(bed.sim.client()),
            Parts::Remote { target, .. } => Some(target.client.clone()),
        }
    }

    /// The simulated cluster's admin side; `None` on a real cluster (or one
    /// treated as real) and before scenarios make theirs.
    pub fn admin(&self) -> Option<Arc<dyn SimAdmin>> {
        match &self.parts {
            Parts::PerScenario => None,
            Parts::InProcess(bed) => Some(Arc::new(bed.sim.clone())),
            Parts::Remote { target, .. } => target.admin.clone(),
        }
    }

    /// The fake metrics server (`None`: each scenario makes its own).
    pub fn metrics(&self) -> Option<MetricsHandle> {
        match &self.parts {
            Parts::PerScenario => None,
            Parts::InProcess(bed) => Some(MetricsHandle::InProcess(bed.metrics.clone())),
            Parts::Remote { metrics, .. } => Some(MetricsHandle::Control(metrics.clone())),
        }
    }

    /// The run's clock: the in-process sim's (the wall clock for a load
    /// run), else the wall clock. A scenario's clock is its own
    /// ([`super::env::Env::clock`]): each scenario moves it.
    pub fn clock(&self) -> Arc<dyn Clock> {
        match &self.parts {
            Parts::InProcess(bed) => bed.sim.clock(),
            Parts::PerScenario | Parts::Remote { .. } => Arc::new(SystemClock),
        }
    }

    /// The simulated cluster in this process, if it is one.
    pub fn sim(&self) -> Option<&Sim> {
        match &self.parts {
            Parts::InProcess(bed) => Some(&bed.sim),
            _ => None,
        }
    }

    /// Whether the cluster is a real one (or treated as one): its pods go
    /// on the harness's fake node.
    pub fn is_real(&self) -> bool {
        matches!(&self.parts, Parts::Remote { target, .. } if target.is_real())
    }

    /// Whether the cluster outlives the run (a kubeconfig's): what the run
    /// makes there must then be deleted by the run.
    pub fn outlives_the_run(&self) -> bool {
        matches!(self.parts, Parts::Remote { .. }) && self.process.is_none()
    }

    /// The `hpa-harness sim` child's process id, when there is one.
    pub fn child_pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(SimProcess::pid)
    }

    /// A client for the controller under test with a `qps`/`burst` bucket
    /// per clientset, as `hpa-harness controller` builds its own; needs a
    /// cluster outside this process.
    pub async fn controller_client(
        &self,
        qps: f64,
        burst: u32,
    ) -> Result<Option<kube::Client>, TestbedError> {
        let Parts::Remote {
            kubeconfig,
            context,
            ..
        } = &self.parts
        else {
            return Ok(None);
        };
        Ok(Some(
            kubeconfig::controller_client(
                kubeconfig.as_deref().map(Path::new),
                context.as_deref(),
                qps,
                burst,
            )
            .await?,
        ))
    }

    /// Takes down what the testbed made: the child, the fake node, the
    /// cluster made for the run.
    pub async fn stop(mut self) {
        if let Some(process) = self.process.take() {
            process.stop().await;
        }
        if let Parts::Remote { target, .. } = std::mem::replace(&mut self.parts, Parts::PerScenario)
            && let Some(node) = target.fake_node
        {
            Connected::remove_fake_node(Arc::try_unwrap(node).ok()).await;
        }
        if let Some(session) = self.made.take()
            && let Err(e) = session.finish().await
        {
            tracing::warn!(error = %e, "deleting the run's cluster");
        }
    }
}

/// The control plane a run of `options` starts: its binaries checked, the
/// controller manager's HPA controller on only for `--controller upstream`.
pub fn control_plane_options(
    options: &TestbedOptions,
) -> Result<ControlPlaneOptions, TestbedError> {
    let backend = BackendKind::ControlPlane;
    let binaries = binaries::folder(
        options.control_plane_bin.as_deref(),
        std::env::var_os(binaries::ASSETS_ENV).as_deref(),
    )
    .and_then(|dir| binaries::check(&dir))
    .map_err(|e| TestbedError::Cluster {
        backend,
        reason: e.to_string(),
    })?;
    let (manager_qps, manager_burst) = options.control_plane_manager_budget;
    Ok(ControlPlaneOptions {
        upstream_hpa: options.controller == super::ControllerKind::Upstream,
        sync_period: options.upstream_sync_period,
        manager_qps,
        manager_burst,
        feature_gates: options.control_plane_feature_gates.clone(),
        ..ControlPlaneOptions::new(binaries)
    })
}

/// The release of the cluster's API server (`/version`), warning when it is
/// outside the supported range or cannot be read.
pub async fn cluster_release(client: &kube::Client) -> KubernetesVersion {
    match hpa_controller::release::of_server(client).await {
        Ok((version, warning)) => {
            if let Some(warning) = warning {
                eprintln!("warning: {warning}");
            }
            version
        }
        Err(e) => {
            let fallback = KubernetesVersion::LATEST_STABLE;
            eprintln!(
                "warning: {e}; the scenarios run under Kubernetes {fallback} (pass --kubernetes-version to choose)"
            );
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_sim_backend_is_one_cluster_for_a_load_and_none_yet_for_scenarios() {
        let options = TestbedOptions::default();
        let load = Purpose::Load {
            namespaces: vec!["load-0".into()],
            gates: None,
        };
        let bed = Testbed::start(BackendKind::Sim, &options, &load)
            .await
            .unwrap();
        assert!(bed.sim().is_some() && bed.admin().is_some());
        assert!(matches!(bed.metrics(), Some(MetricsHandle::InProcess(_))));
        assert!(!bed.is_real() && !bed.outlives_the_run());
        // A load runs on the wall clock.
        let lag = jiff::Timestamp::now().duration_since(bed.clock().now());
        assert!(lag.abs() < jiff::SignedDuration::from_secs(5), "{lag}");
        // The load's namespace is served from the start.
        let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> =
            kube::Api::all(bed.client().unwrap());
        assert!(ns.get_opt("load-0").await.unwrap().is_some());
        // No cluster outside the process: no client of its own for the
        // controller under test.
        assert!(bed.controller_client(20.0, 30).await.unwrap().is_none());
        bed.stop().await;

        let bed = Testbed::start(BackendKind::Sim, &options, &Purpose::Scenarios)
            .await
            .unwrap();
        assert!(matches!(bed.target(), Target::Embedded));
        assert!(bed.client().is_none() && bed.metrics().is_none());
        bed.stop().await;
    }

    #[tokio::test]
    async fn a_kubeconfig_cluster_needs_the_metrics_url_whatever_the_purpose() {
        for purpose in [
            Purpose::Scenarios,
            Purpose::Load {
                namespaces: Vec::new(),
                gates: None,
            },
        ] {
            let err = Testbed::start(
                BackendKind::Kubeconfig,
                &TestbedOptions::default(),
                &purpose,
            )
            .await
            .unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("backend kubeconfig: --metrics-url is needed"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_missing_kind_or_k3d_or_docker_is_named_with_a_hint() {
        let nowhere = OsStr::new("/nonexistent-hpa-harness-path");
        let kind = check_backend_tools(BackendKind::Kind, nowhere).unwrap_err();
        assert!(
            kind.to_string()
                .starts_with("backend kind: `kind` was not found on PATH: install kind"),
            "{kind}"
        );
        let k3d = check_backend_tools(BackendKind::K3d, nowhere).unwrap_err();
        assert!(k3d.to_string().contains("`k3d` was not found"), "{k3d}");
        let k3s = check_backend_tools(BackendKind::K3s, nowhere).unwrap_err();
        assert!(k3s.to_string().contains("`docker` was not found"), "{k3s}");
        assert!(check_backend_tools(BackendKind::Sim, nowhere).is_ok());
    }
}
