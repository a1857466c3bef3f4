//! `hpa-harness control-plane`: a genuine Kubernetes control plane on this
//! host (etcd, kube-apiserver and kube-controller-manager from their
//! binaries), with the fake metrics server registered as its metrics APIs
//! and the harness's fake node as its kubelet, until Ctrl-C or SIGTERM;
//! then everything it started stops and its directory goes.
//!
//! It prints, one per line on stdout: `api-server: URL`, `kubeconfig:
//! PATH`, `metrics-server: URL` (the fake metrics server's control URL) and
//! `release: VERSION`, so that kubectl, `explain`, `capture` and `test
//! --backend kubeconfig` can be tried on it, as on `hpa-harness sim`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use hpa_core::FeatureGates;
use hpa_core::clock::SystemClock;

use super::CliResult;
use crate::testbed::cluster::fake_node::PodScope;
use crate::testbed::controller::{Requests, Role};
use crate::testbed::{BackendKind, ControllerKind, Purpose, Testbed, TestbedOptions};

/// Which HPA controller acts on the control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum HpaController {
    /// kube-controller-manager's own (upstream's).
    #[default]
    Upstream,
    /// Ours, in this process, at `hpa-controller`'s defaults, every sync
    /// period on the wall clock (kube-controller-manager's is off).
    Ours,
    /// None: kube-controller-manager's is off; bring your own
    /// (`hpa-controller --kubeconfig PATH`).
    None,
}

/// Options of `hpa-harness control-plane`.
#[derive(Debug, clap::Args)]
#[group(id = "control_plane_command")]
#[command(after_long_help = "\
Needs etcd, kube-apiserver and kube-controller-manager in one folder: envtest's
(`setup-envtest use 1.36 -p path` gives etcd and kube-apiserver) with
kube-controller-manager from the kubernetes-server release tarball beside them.

Example:
  hpa-harness control-plane --control-plane-bin ./k8s --kubeconfig cp.kubeconfig
  kubectl --kubeconfig cp.kubeconfig create deployment web --image=nginx
  kubectl --kubeconfig cp.kubeconfig autoscale deployment web --cpu-percent=50 --max=5")]
pub struct Args {
    /// The folder of etcd, kube-apiserver and kube-controller-manager.
    #[arg(long, value_name = "DIR", env = "KUBEBUILDER_ASSETS")]
    pub control_plane_bin: Option<PathBuf>,

    /// Also write the admin kubeconfig here (0600; the printed one lives
    /// in the run's directory and goes with it).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Replace an existing --kubeconfig file.
    #[arg(long)]
    pub force: bool,

    /// Which HPA controller acts.
    #[arg(long, value_enum, default_value_t)]
    pub controller: HpaController,

    /// kube-controller-manager's `--horizontal-pod-autoscaler-sync-period`
    /// (and ours, with --controller ours).
    #[arg(long, default_value = "15s", value_parser = hpa_controller::cli::duration)]
    pub sync_period: Duration,

    /// kube-controller-manager's `--kube-api-qps`.
    #[arg(long, default_value_t = 20.0)]
    pub controller_manager_qps: f64,

    /// kube-controller-manager's `--kube-api-burst`.
    #[arg(long, default_value_t = 30)]
    pub controller_manager_burst: u32,

    /// `--feature-gates` of the API server and the controller manager
    /// (e.g. `HPAScaleToZero=true`).
    #[arg(long, default_value = "")]
    pub feature_gates: String,
}

/// Runs `hpa-harness control-plane` until SIGINT or SIGTERM.
pub async fn run(args: Args) -> CliResult {
    let options = TestbedOptions {
        controller: if args.controller == HpaController::Upstream {
            ControllerKind::Upstream
        } else {
            ControllerKind::Ours
        },
        upstream_sync_period: args.sync_period,
        control_plane_bin: args.control_plane_bin.clone(),
        control_plane_manager_budget: (args.controller_manager_qps, args.controller_manager_burst),
        control_plane_feature_gates: args.feature_gates.clone(),
        // Its node runs what kubectl and charts make; a scenario run on it
        // (`test --backend kubeconfig`) brings a node of its own.
        pod_scope: Some(PodScope::Unmanaged),
        ..TestbedOptions::default()
    };
    let bed = Testbed::start(BackendKind::ControlPlane, &options, &Purpose::Scenarios).await?;
    let served = announce(&bed, &args).await;
    let controller = match (&served, args.controller) {
        (Ok(()), HpaController::Ours) => start_ours(&bed, args.sync_period).await,
        _ => None,
    };
    if served.is_ok() {
        println!("control plane running; Ctrl-C stops it");
        hpa_shutdown::shutdown_signal().await;
    }
    if let Some(controller) = controller
        && let Err(e) = controller.shutdown().await
    {
        tracing::warn!(error = %e, "stopping the HPA controller");
    }
    bed.stop().await;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Prints where everything is, and writes `--kubeconfig`.
async fn announce(
    bed: &Testbed,
    args: &Args,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let kubeconfig = bed
        .kubeconfig()
        .ok_or("the control plane has no kubeconfig")?
        .to_path_buf();
    let text = std::fs::read_to_string(&kubeconfig)?;
    let shown = match &args.kubeconfig {
        Some(path) => {
            hpa_sim::standalone::write_kubeconfig_text(path, &text, args.force)?;
            path.clone()
        }
        None => kubeconfig,
    };
    if let Some(server) = bed.api_server() {
        println!("api-server: {server}");
    }
    println!("kubeconfig: {}", shown.display());
    if let Some(url) = bed.metrics_control_url() {
        println!("metrics-server: {url}");
    }
    if let Some(client) = bed.client() {
        let release = crate::testbed::start::cluster_release(&client).await;
        println!("release: {release}");
    }
    Ok(())
}

/// Our controller in this process, at the binary's defaults, under the
/// cluster's release.
async fn start_ours(
    bed: &Testbed,
    sync_period: Duration,
) -> Option<hpa_controller::ControllerHandle> {
    let client = bed.client()?;
    let release = crate::testbed::start::cluster_release(&client).await;
    let mut config = hpa_controller::ControllerConfig::default();
    config.decision.feature_gates = FeatureGates::of(release);
    config.sync_period = sync_period;
    println!("controller: in-process (Kubernetes {release})");
    Some(crate::testbed::controller::start(
        client,
        config,
        Role::InSim {
            clock: Arc::new(SystemClock),
            periodic: true,
            requests: Requests::Shipped,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn the_flags_parse_with_upstreams_defaults() {
        Cli::command().debug_assert();
        let cli = Cli::parse_from(["control-plane", "--control-plane-bin", "/k8s"]);
        assert_eq!(cli.args.controller, HpaController::Upstream);
        assert_eq!(cli.args.sync_period, Duration::from_secs(15));
        assert_eq!(cli.args.controller_manager_qps, 20.0);
        assert_eq!(cli.args.control_plane_bin, Some(PathBuf::from("/k8s")));
    }
}
