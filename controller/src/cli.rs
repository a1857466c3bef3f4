//! The controller's command line (the `hpa-controller` binary, and
//! `hpa-harness controller` which wraps it): the HPA controller against a
//! cluster, with kube-controller-manager's flag names and defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use hpa_core::clock::SystemClock;
use tokio_util::sync::CancellationToken;

use crate::client::{REQUEST_TIMEOUT, controller_client};
use crate::config::{ControllerConfig, parse_go_duration};
use crate::flags::HpaFlags;
use crate::kubeconfig;
use crate::leader::{LeaseTiming, default_identity};
use crate::metrics::ControllerMetrics;
use crate::server::{self, DEFAULT_BIND_ADDRESS};
use crate::{ControllerHandle, ControllerOptions, Extensions, LeaderElection, RunError, SyncMode};

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
    FeatureGates(#[source] hpa_core::config::GateError),
}

impl From<kubeconfig::LoadError> for ControllerCliError {
    /// A named file's read and load errors stay apart; from the default
    /// places, both are "cannot load" (kube reads and loads them in one go).
    fn from(e: kubeconfig::LoadError) -> Self {
        use kubeconfig::LoadError::{Load, Read};
        match e {
            Read {
                path: Some(path),
                source,
            } => Self::ReadKubeconfig { path, source },
            Load {
                path: Some(path),
                source,
            } => Self::LoadKubeconfig { path, source },
            Read { path: None, source } | Load { path: None, source } => Self::LoadKubeconfig {
                path: PathBuf::from(kubeconfig::DEFAULT_PLACES),
                source,
            },
        }
    }
}

/// A clap value parser of Go-style durations (`15s`, `1m30s`).
pub fn duration(s: &str) -> Result<Duration, String> {
    parse_go_duration(s).map_err(|e| e.to_string())
}

pub use crate::observe::shared_list_window;

/// Options of `hpa-controller` (and `hpa-harness controller`).
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
    /// Deployment scale targets from a Deployment watch cache, and within
    /// one window (a tenth of the sync period, at most 1s) the HPAs of a
    /// namespace share one `metrics.k8s.io` pod list, one custom metrics
    /// list per Pods metric (each HPA's pods picked with the pod cache,
    /// else its own request), identical external requests, and one list
    /// per External metric where the server answers it as it answers each
    /// HPA's own request (checked per metric and HPA, so KEDA's adapter,
    /// which refuses that list, gets each HPA's own request); none changes
    /// a decision (docs/fidelity.md says why).
    #[arg(long)]
    pub upstream_requests: bool,

    /// Accepted for old command lines: external lists are shared wherever
    /// the server answers them (see --upstream-requests).
    #[arg(long, hide = true)]
    pub share_external_lists: bool,

    /// Decide and record, never write scales, statuses or events: shadow the
    /// cluster's own HPA controller and compare on /debug/decisions.
    #[arg(long)]
    pub dry_run: bool,

    /// Decisions kept per HPA for /debug/decisions, newest last (at least
    /// 1). Each holds the observed and computed status and the decision's
    /// trace, a few kilobytes: 10 per HPA were most of the memory of a
    /// controller with 10,000 HPAs (docs/load-report.md).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub decisions_kept: u32,

    /// Where to serve /metrics, /healthz, /readyz, /debug/decisions and
    /// /debug/syncs (plain HTTP and unauthenticated, so on loopback by
    /// default; kube-controller-manager's port).
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

    /// Sync only when asked, over --bind-address (`POST /debug/sync`), on
    /// the clock the requests give: how `hpa-harness test
    /// --controller-binary` drives this binary through scenarios on a
    /// virtual clock. Prints `debug-server: URL` on stdout. Not for
    /// clusters.
    #[arg(long, hide = true)]
    pub sync_on_demand: bool,

    /// With --sync-on-demand: where its clock starts (RFC 3339; default:
    /// now), the caller's time when it starts the process.
    #[arg(long, hide = true, requires = "sync_on_demand", value_name = "TIME")]
    pub clock_start: Option<jiff::Timestamp>,

    /// With --sync-on-demand: watch and sync the HPAs (and read the pods
    /// and Deployments) of this namespace only, as a scenario's controller
    /// on a real cluster shared with other scenarios does.
    #[arg(
        long,
        hide = true,
        requires = "sync_on_demand",
        value_name = "NAMESPACE"
    )]
    pub namespace: Option<String>,
}

impl Args {
    /// The controller settings these flags give.
    pub fn config(&self) -> Result<ControllerConfig, ControllerCliError> {
        let mut config = ControllerConfig {
            dry_run: self.dry_run,
            decisions_kept: self.decisions_kept as usize,
            ..ControllerConfig::default()
        };
        self.hpa
            .apply(&mut config)
            .map_err(ControllerCliError::FeatureGates)?;
        Ok(config)
    }

    /// The request-saving caches, unless `--upstream-requests`: see
    /// [`Extensions::shipped`].
    pub fn extensions(&self) -> Extensions {
        if self.upstream_requests {
            return Extensions::default();
        }
        Extensions::shipped(self.hpa.sync_period)
    }

    /// A kube client from the kubeconfig (or the environment), rate limited,
    /// without hidden retries (see [`crate::client`]).
    pub async fn client(&self) -> Result<kube::Client, ControllerCliError> {
        let config = match (&self.kubeconfig, &self.context) {
            (None, None) => kube::Config::infer()
                .await
                .map_err(ControllerCliError::Infer)?,
            (path, context) => kubeconfig::load(path.as_deref(), context.as_deref()).await?,
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

/// Resolves on SIGTERM or SIGINT (one definition, shared with the fake
/// metrics server).
pub use hpa_shutdown::shutdown_signal;

/// What running the controller returns: an exit code, or an error printed
/// with its causes ([`error_report`]).
pub type CliResult = Result<ExitCode, Box<dyn std::error::Error + Send + Sync>>;

/// Logs to stderr; `RUST_LOG` wins over `-v`.
pub fn init_tracing(verbose: u8, format: LogFormat) {
    init_tracing_for(verbose, &["hpa_controller"], format);
}

/// How log lines are written (Kubernetes components' `--logging-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text per event; coloured only when stderr is a
    /// terminal (a file or a pod's log gets plain text).
    #[default]
    Text,
    /// One JSON object per line (timestamp, level, target, fields), for
    /// log pipelines.
    Json,
}

/// Logs to stderr, with `-v` raising the level of `crates` one step above
/// everything else's; `RUST_LOG` wins. Shared with the harness's binary.
pub fn init_tracing_for(verbose: u8, crates: &[&str], format: LogFormat) {
    let (rest, ours) = match verbose {
        0 => ("warn", "info"),
        1 => ("info", "debug"),
        _ => ("debug", "trace"),
    };
    let default = std::iter::once(rest.to_owned())
        .chain(crates.iter().map(|c| format!("{c}={ours}")))
        .collect::<Vec<_>>()
        .join(",");
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    init_subscriber(filter, format);
}

/// Installs the subscriber of `format` with `filter` (once per process).
pub fn init_subscriber(filter: tracing_subscriber::EnvFilter, format: LogFormat) {
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// What a binary prints for an error: `error: ` and the error, then each
/// cause of its [`source`](std::error::Error::source) chain on a line of its
/// own (each layer's message says that layer only, so each cause shows once).
pub fn error_report(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("error: {err}");
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(&format!("\n  caused by: {cause}"));
        source = cause.source();
    }
    text
}

/// The gates of the cluster's own release (`/version`), with the
/// `--feature-gates` overrides; the flag's release when the server cannot
/// say, with a warning.
async fn server_gates(
    client: &kube::Client,
    config: &ControllerConfig,
) -> Result<hpa_core::FeatureGates, ControllerCliError> {
    let version = match crate::release::of_server(client).await {
        Ok((version, warning)) => {
            if let Some(warning) = warning {
                tracing::warn!("{warning}");
            }
            version
        }
        Err(e) => {
            tracing::warn!(
                error = %e,
                version = %config.decision.feature_gates.version(),
                "cannot read the cluster's release; using the default (pass --kubernetes-version to choose)"
            );
            return Ok(config.decision.feature_gates);
        }
    };
    tracing::info!(%version, "HPA semantics of the cluster's Kubernetes release");
    config
        .decision
        .feature_gates
        .with_version(version)
        .map_err(ControllerCliError::FeatureGates)
}

/// Runs the controller until SIGTERM or SIGINT.
pub async fn run(args: Args) -> CliResult {
    let mut config = args.config()?;
    let client = args.client().await?;
    if args.hpa.kubernetes_version.is_none() {
        config.decision.feature_gates = server_gates(&client, &config).await?;
    }
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
        kubernetes_version = %config.decision.feature_gates.version(),
        feature_gates = %config.decision.feature_gates.effective(),
        "starting the HPA controller"
    );
    // The deployable owns the registry: the controller registers into it.
    let metrics = ControllerMetrics::register(prometheus_client::registry::Registry::default());
    // On demand, the clock is the harness's: it starts at the host's time
    // and each request moves it.
    let virtual_clock = args.sync_on_demand.then(|| {
        hpa_core::clock::VirtualClock::new(args.clock_start.unwrap_or_else(jiff::Timestamp::now))
    });
    let clock: Arc<dyn hpa_core::clock::Clock> = match &virtual_clock {
        Some(clock) => Arc::new(clock.clone()),
        None => Arc::new(SystemClock),
    };
    let handle = ControllerHandle::start_with_metrics(
        client,
        ControllerOptions {
            config,
            clock,
            mode: if args.sync_on_demand {
                SyncMode::Manual
            } else {
                SyncMode::Periodic
            },
            identity,
            leader_election,
            sync_timeout: Duration::from_secs(60),
            namespace: args.namespace.clone(),
        },
        args.extensions(),
        metrics,
    );
    if let Some(clock) = virtual_clock {
        return run_on_demand(handle, listener, args.bind_address, clock).await;
    }
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

/// The controller synced on demand ([`crate::on_demand`]) until SIGTERM or
/// SIGINT; the debug server's address goes to stdout.
async fn run_on_demand(
    handle: ControllerHandle,
    listener: tokio::net::TcpListener,
    bind: SocketAddr,
    clock: hpa_core::clock::VirtualClock,
) -> CliResult {
    let handle = Arc::new(handle);
    let router = server::app(handle.server_state())
        .merge(crate::on_demand::routes(Arc::clone(&handle), clock));
    let addr = listener
        .local_addr()
        .map_err(|source| ControllerCliError::Bind { addr: bind, source })?;
    println!("debug-server: http://{addr}");
    let stop = CancellationToken::new();
    let server = tokio::spawn(server::serve(listener, router, stop.clone()));
    shutdown_signal().await;
    stop.cancel();
    let _ = server.await;
    match Arc::into_inner(handle) {
        Some(handle) => handle.shutdown().await?,
        None => tracing::warn!("a request still holds the controller; not waiting for it"),
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// The controller's flags as a command line of their own.
    #[derive(Debug, clap::Parser)]
    struct Command {
        #[command(flatten)]
        args: Args,
    }

    fn args(flags: &[&str]) -> Args {
        let argv = ["hpa-controller"].iter().chain(flags);
        Command::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn one_decision_per_hpa_is_kept_unless_asked_and_zero_is_refused() {
        assert_eq!(args(&[]).config().unwrap().decisions_kept, 1);
        assert_eq!(
            args(&["--decisions-kept", "10"])
                .config()
                .unwrap()
                .decisions_kept,
            10
        );
        let argv = ["hpa-controller", "--decisions-kept", "0"];
        let err = Command::try_parse_from(argv).unwrap_err().to_string();
        assert!(err.contains("--decisions-kept"), "{err}");
    }

    #[test]
    fn the_caches_and_external_lists_are_on_unless_upstreams_requests_are_asked() {
        let default = args(&[]).extensions();
        assert!(default.scale_from_cache);
        assert_eq!(default.metrics_cache, Some(Duration::from_secs(1)));
        assert!(default.share_external);
        // The old flag is still accepted, and changes nothing.
        assert!(
            args(&["--share-external-lists"])
                .extensions()
                .share_external
        );
        let upstream = args(&["--upstream-requests", "--share-external-lists"]).extensions();
        assert!(!upstream.scale_from_cache);
        assert_eq!(upstream.metrics_cache, None);
        assert!(!upstream.share_external);
    }

    /// Counts the lines of `report` that contain `text`.
    fn lines_with(report: &str, text: &str) -> usize {
        report.lines().filter(|l| l.contains(text)).count()
    }

    #[test]
    fn the_error_report_prints_each_cause_once() {
        let path = PathBuf::from("/nonexistent/hpa-controller-test.kubeconfig");
        let source = kube::config::Kubeconfig::read_from(&path).unwrap_err();
        let cause = source.to_string();
        let err = ControllerCliError::ReadKubeconfig { path, source };
        let report = error_report(&err);
        assert!(
            report.starts_with("error: cannot read kubeconfig "),
            "{report}"
        );
        assert_eq!(lines_with(&report, &cause), 1, "{report}");
        assert_eq!(report.matches(&cause).count(), 1, "{report}");
    }
}
