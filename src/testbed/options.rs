//! How a run reaches a cluster other than the embedded one: one set of
//! options ([`TestbedOptions`]) and one group of flags ([`TestbedArgs`]),
//! the same on `test`, `conformance` and `load`.

use std::path::PathBuf;
use std::time::Duration;

use super::cluster::preflight::MetricsServerRef;
use super::kind::ControllerKind;

/// How to reach a cluster and its fake metrics server.
#[derive(Debug, Clone)]
pub struct TestbedOptions {
    /// The kubeconfig file; `None`: `$KUBECONFIG` or `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context; `None`: its current one.
    pub context: Option<String>,
    /// The fake metrics server's control URL (not needed when the testbed
    /// starts the cluster or it is `hpa-harness sim` started by the run).
    pub metrics_url: Option<String>,
    /// Whose HPA controller acts.
    pub controller: ControllerKind,
    /// The sync period of the cluster's own HPA controller.
    pub upstream_sync_period: Duration,
    /// Where fake-metrics-server's Service is, for the APIService check.
    pub metrics_service: MetricsServerRef,
    /// Skip the preflight checks of a real cluster.
    pub skip_preflight: bool,
    /// Treat the cluster as real even when it answers the sim's admin API:
    /// wall clock, fake node, cleanup by label, no fault injection. Lets the
    /// real-cluster path be tested against `hpa-harness sim` (on its wall
    /// clock) where no real cluster is at hand.
    pub assume_real: bool,
    /// Run our controller as this `hpa-controller` binary, one process per
    /// scenario synced on demand, rather than in this process.
    pub controller_binary: Option<PathBuf>,
    /// The control-plane backend's binaries; `None`: `$KUBEBUILDER_ASSETS`.
    pub control_plane_bin: Option<PathBuf>,
    /// The control plane's controller-manager client budget (QPS, burst).
    pub control_plane_manager_budget: (f64, u32),
    /// The control plane's `--feature-gates` (empty: the release's
    /// defaults).
    pub control_plane_feature_gates: String,
    /// Which pods the fake node of a real cluster runs (`None`: the
    /// harness's own; on a control plane the run started, every pod).
    pub pod_scope: Option<super::cluster::fake_node::PodScope>,
}

impl Default for TestbedOptions {
    fn default() -> Self {
        Self {
            kubeconfig: None,
            context: None,
            metrics_url: None,
            controller: ControllerKind::Ours,
            upstream_sync_period: Duration::from_secs(15),
            metrics_service: MetricsServerRef::default(),
            skip_preflight: false,
            assume_real: false,
            controller_binary: None,
            control_plane_bin: None,
            control_plane_manager_budget: (20.0, 30),
            control_plane_feature_gates: String::new(),
            pod_scope: None,
        }
    }
}

/// The flags that reach a cluster other than the embedded one.
#[derive(Debug, Clone, clap::Args)]
pub struct TestbedArgs {
    /// The kubeconfig of `--backend kubeconfig` (default: $KUBECONFIG, then
    /// ~/.kube/config). `hpa-harness sim` writes one for the simulated
    /// cluster.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long)]
    pub context: Option<String>,
    /// With --backend kubeconfig: the control URL of the fake metrics server
    /// that the cluster's metrics APIServices point at (`hpa-harness sim`
    /// prints it as `metrics-server:`). The other backends start their own.
    #[arg(long, value_name = "URL", visible_alias = "metrics-control-url")]
    pub metrics_url: Option<String>,
    /// Whose HPA controller acts: ours (run by the harness) or the
    /// cluster's own kube-controller-manager one (`upstream`: the harness
    /// only drives the cluster and looks, so the same checks apply to
    /// upstream).
    #[arg(long, value_enum, default_value_t = ControllerKind::Ours)]
    pub controller: ControllerKind,
    /// The cluster's `--horizontal-pod-autoscaler-sync-period`, for
    /// `--controller upstream` (Go duration).
    #[arg(long, default_value = "15s", value_parser = hpa_controller::cli::duration)]
    pub upstream_sync_period: Duration,
    /// Namespace/name of fake-metrics-server's Service, which the metrics
    /// APIServices of a real cluster must point at.
    #[arg(
        long,
        default_value = "fake-metrics/fake-metrics-server",
        value_name = "NS/NAME"
    )]
    pub metrics_service: String,
    /// Skip the checks of a real cluster before running (APIServices,
    /// built-in HPA controller).
    #[arg(long)]
    pub skip_preflight: bool,
    /// Treat a simulated cluster (`hpa-harness sim` on its wall clock) as a
    /// real one: namespaces per scenario, concurrency, cleanup by label.
    /// For testing the real-cluster path without one.
    #[arg(long, hide = true)]
    pub assume_real: bool,
    /// Run our controller as the `hpa-controller` binary at PATH, as it is
    /// deployed (its defaults, its client, its caches, its leader
    /// election), one process per scenario, synced on demand on the
    /// scenario's clock through its debug server (`--sync-on-demand`).
    /// With --backend kubeconfig on `hpa-harness sim`, or sim-process.
    #[arg(long, value_name = "PATH")]
    pub controller_binary: Option<PathBuf>,
    /// With --backend control-plane: the folder of `etcd`,
    /// `kube-apiserver` and `kube-controller-manager` (default:
    /// $KUBEBUILDER_ASSETS, envtest's folder, with the controller manager
    /// added).
    #[arg(long, value_name = "DIR")]
    pub control_plane_bin: Option<PathBuf>,
    /// With --backend control-plane: kube-controller-manager's
    /// `--kube-api-qps` (upstream's 20; more only to make a load's pods
    /// faster).
    #[arg(long, default_value_t = 20.0, value_name = "QPS")]
    pub control_plane_manager_qps: f64,
    /// With --backend control-plane: kube-controller-manager's
    /// `--kube-api-burst`.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub control_plane_manager_burst: u32,
    /// With --backend control-plane: `--feature-gates` of its API server
    /// and controller manager (e.g. `HPAScaleToZero=true`; default: the
    /// release's own).
    #[arg(long, default_value = "", value_name = "GATES")]
    pub control_plane_feature_gates: String,
}

impl TestbedArgs {
    /// The testbed's options.
    pub fn options(&self) -> TestbedOptions {
        let (namespace, service) = self
            .metrics_service
            .split_once('/')
            .unwrap_or(("fake-metrics", self.metrics_service.as_str()));
        TestbedOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            metrics_url: self.metrics_url.clone(),
            controller: self.controller,
            upstream_sync_period: self.upstream_sync_period,
            metrics_service: MetricsServerRef {
                namespace: namespace.to_owned(),
                service: service.to_owned(),
            },
            skip_preflight: self.skip_preflight,
            assume_real: self.assume_real,
            controller_binary: self.controller_binary.clone(),
            control_plane_bin: self.control_plane_bin.clone(),
            control_plane_manager_budget: (
                self.control_plane_manager_qps,
                self.control_plane_manager_burst,
            ),
            control_plane_feature_gates: self.control_plane_feature_gates.clone(),
            pod_scope: None,
        }
    }
}
