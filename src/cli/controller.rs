//! `hpa-harness controller`: the HPA controller against a cluster, with
//! kube-controller-manager's flag names and defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use hpa_core::clock::SystemClock;
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio_util::sync::CancellationToken;

use super::CliResult;
use crate::controller::client::{REQUEST_TIMEOUT, controller_client};
use crate::controller::config::{ControllerConfig, parse_go_duration};
use crate::controller::flags::HpaFlags;
use crate::controller::leader::{LeaseTiming, default_identity};
use crate::controller::server::{self, DEFAULT_BIND_ADDRESS};
use crate::controller::{
    ControllerHandle, ControllerOptions, Extensions, LeaderElection, RunError, SyncMode,
};

/// Errors of starting the controller.
#[derive(Debug, thiserror::Error)]
pub enum ControllerCliError {
    #[error("cannot read kubeconfig {path}")]
    ReadKubeconfig {
        path: PathBuf,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("cannot load kubeconfig {path}")]
    LoadKubeconfig {
        path: PathBuf,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("no kubeconfig and not in a cluster")]
    Infer(#[source] kube::config::InferConfigError),
    #[error("cannot build the Kubernetes client")]
    Client(#[source] kube::Error),
    #[error("cannot listen on --bind-address {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid --feature-gates")]
    FeatureGates(#[source] hpa_core::config::ConfigError),
}

pub(crate) fn duration(s: &str) -> Result<Duration, String> {
    parse_go_duration(s).map_err(|e| e.to_string())
}

/// How long one namespace-wide metrics list serves the HPAs synced after
/// it: a tenth of the sync period, at most a second, far below any metrics
/// pipeline's resolution (metrics-server scrapes every 15 s or more).
pub fn shared_list_window(sync_period: Duration) -> Duration {
    (sync_period / 10).min(Duration::from_secs(1))
}

/// Options of `hpa-harness controller`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kubeconfig to use. Without it: $KUBECONFIG (one or more files),
    /// ~/.kube/config, then the in-cluster service account.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context (default: the current one).
    #[arg(long)]
    pub context: Option<String>,

    /// The HPA controller's own flags.
    #[command(flatten)]
    pub hpa: HpaFlags,

    /// Requests per second to the API server (0: unlimited).
    #[arg(long = "kube-api-qps", default_value_t = 20.0)]
    pub kube_api_qps: f64,

    /// Request burst to the API server.
    #[arg(long = "kube-api-burst", default_value_t = 30)]
    pub kube_api_burst: u32,

    /// Make upstream's requests exactly: a GET of `/scale` per sync and one
    /// metrics list per HPA and metric. Without it the controller reads
    /// Deployment scale targets from a Deployment watch cache and shares
    /// one namespace-wide `metrics.k8s.io` pod list among the HPAs of a
    /// namespace synced within one window (a tenth of the sync period, at
    /// most 1s); neither changes a decision (docs/fidelity.md says why).
    #[arg(long)]
    pub upstream_requests: bool,

    /// Decide and record, never write scales, statuses or events: shadow the
    /// cluster's own HPA controller and compare on /debug/decisions.
    #[arg(long)]
    pub dry_run: bool,

    /// Where to serve /metrics, /healthz, /readyz and /debug/decisions
    /// (plain HTTP and unauthenticated, so on loopback by default;
    /// kube-controller-manager's port).
    #[arg(long, default_value = DEFAULT_BIND_ADDRESS)]
    pub bind_address: SocketAddr,

    /// Also serve /healthz, /livez and /readyz alone here (for the
    /// kubelet's probes, e.g. 0.0.0.0:10258), keeping /metrics and
    /// /debug/decisions on --bind-address.
    #[arg(long)]
    pub health_bind_address: Option<SocketAddr>,

    /// Run only while holding the leader Lease (for several replicas).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,

    /// How long a Lease holds without renewal.
    #[arg(long, default_value = "15s", value_parser = duration)]
    pub leader_elect_lease_duration: Duration,

    /// How long the leader retries renewing before it gives up.
    #[arg(long, default_value = "10s", value_parser = duration)]
    pub leader_elect_renew_deadline: Duration,

    /// Pause between election attempts.
    #[arg(long, default_value = "2s", value_parser = duration)]
    pub leader_elect_retry_period: Duration,

    /// Name of the Lease.
    #[arg(long, default_value = "hpa-harness-controller")]
    pub leader_elect_resource_name: String,

    /// Namespace of the Lease (default: $POD_NAMESPACE, else kube-system).
    #[arg(long, env = "POD_NAMESPACE", default_value = "kube-system")]
    pub leader_elect_resource_namespace: String,

    /// This replica's identity (Lease holder, event reporting instance).
    #[arg(long)]
    pub identity: Option<String>,
}

impl Args {
    /// The controller settings these flags give.
    pub fn config(&self) -> Result<ControllerConfig, ControllerCliError> {
        let mut config = ControllerConfig {
            dry_run: self.dry_run,
            ..ControllerConfig::default()
        };
        self.hpa
            .apply(&mut config)
            .map_err(ControllerCliError::FeatureGates)?;
        Ok(config)
    }

    /// The request-saving caches, unless `--upstream-requests`.
    pub fn extensions(&self) -> Extensions {
        if self.upstream_requests {
            return Extensions::default();
        }
        Extensions {
            observer: None,
            scale_from_cache: true,
            metrics_cache: Some(shared_list_window(self.hpa.sync_period)),
            // Off: an external metrics server may need the selector (KEDA).
            share_external: false,
        }
    }

    /// A kube client from the kubeconfig (or the environment), rate limited,
    /// without hidden retries (see [`crate::controller::client`]).
    pub async fn client(&self) -> Result<kube::Client, ControllerCliError> {
        let options = KubeConfigOptions {
            context: self.context.clone(),
            ..KubeConfigOptions::default()
        };
        let config = match &self.kubeconfig {
            Some(path) => {
                let kubeconfig = Kubeconfig::read_from(path).map_err(|source| {
                    ControllerCliError::ReadKubeconfig {
                        path: path.clone(),
                        source,
                    }
                })?;
                kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                    .await
                    .map_err(|source| ControllerCliError::LoadKubeconfig {
                        path: path.clone(),
                        source,
                    })?
            }
            None if self.context.is_some() => kube::Config::from_kubeconfig(&options)
                .await
                .map_err(|source| ControllerCliError::LoadKubeconfig {
                    path: PathBuf::from("$KUBECONFIG or ~/.kube/config"),
                    source,
                })?,
            None => kube::Config::infer()
                .await
                .map_err(ControllerCliError::Infer)?,
        };
        controller_client(
            config,
            self.kube_api_qps,
            self.kube_api_burst,
            REQUEST_TIMEOUT,
        )
        .map_err(ControllerCliError::Client)
    }
}

/// Resolves on SIGTERM or SIGINT (one definition, the fake metrics server's).
pub use fake_metrics_server::cli::shutdown_signal;

/// Runs `hpa-harness controller`.
pub async fn run(args: Args) -> CliResult {
    let config = args.config()?;
    let client = args.client().await?;
    let identity = args.identity.clone().unwrap_or_else(default_identity);
    let leader_election = args.leader_elect.then(|| LeaderElection {
        namespace: args.leader_elect_resource_namespace.clone(),
        name: args.leader_elect_resource_name.clone(),
        timing: LeaseTiming {
            lease_duration: args.leader_elect_lease_duration,
            renew_deadline: args.leader_elect_renew_deadline,
            retry_period: args.leader_elect_retry_period,
        },
    });
    let listener = tokio::net::TcpListener::bind(args.bind_address)
        .await
        .map_err(|source| ControllerCliError::Bind {
            addr: args.bind_address,
            source,
        })?;
    tracing::info!(
        identity = %identity,
        bind = %args.bind_address,
        dry_run = config.dry_run,
        sync_period = ?config.sync_period,
        workers = config.workers,
        "starting the HPA controller"
    );
    let handle = ControllerHandle::start_with(
        client,
        ControllerOptions {
            config,
            clock: Arc::new(SystemClock),
            mode: SyncMode::Periodic,
            identity,
            leader_election,
            sync_timeout: Duration::from_secs(60),
        },
        args.extensions(),
    );
    let stop_server = CancellationToken::new();
    if let Some(addr) = args.health_bind_address {
        let health = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ControllerCliError::Bind { addr, source })?;
        let router = server::health_app(handle.server_state());
        let stop = stop_server.clone();
        tokio::spawn(async move {
            if let Err(err) = server::serve(health, router, stop).await {
                tracing::warn!(error = %err, "the health server failed");
            }
        });
    }
    let server = tokio::spawn(server::run(
        listener,
        handle.server_state(),
        stop_server.clone(),
    ));
    let result = handle.run_until(shutdown_signal()).await;
    stop_server.cancel();
    match server.await {
        Ok(Err(err)) => tracing::warn!(error = %err, "the HTTP server failed"),
        Err(err) => tracing::warn!(error = %err, "the HTTP server task failed"),
        Ok(Ok(())) => {}
    }
    match result {
        Ok(()) => {
            tracing::info!("stopped");
            Ok(ExitCode::SUCCESS)
        }
        Err(RunError::LostLeadership(lease)) => {
            tracing::error!(%lease, "leader election lost; exiting");
            Ok(ExitCode::FAILURE)
        }
        Err(err) => Err(err.into()),
    }
}
