//! `hpa-harness sim`: the simulated API server on a socket with a
//! kubeconfig, plus a fake metrics server of its own (plain HTTP on
//! `--metrics-listen`, scriptable through its `/control/v1` API) unless
//! `--metrics-url` names one. The controller binary, kubectl or any client
//! can then use the kubeconfig.
//!
//! With `--controller`, our HPA controller runs in the process on the sim's
//! clock, and each workload's load (set on the metrics server's
//! `/control/v1/loads`) is shared among its running pods: the HPA
//! walkthrough (docs/walkthrough.md) works with kubectl alone.
//!
//! `--kubernetes-version` and `--feature-gates` make the API server (and the
//! in-process controller) one release, which `/version` reports; the admin
//! API (`PUT /admin/v1/feature-gates`) changes it later.
//!
//! With `--controller`, the API server's address also serves the
//! controller's `/debug/decisions` and `/debug/syncs`.
//!
//! Prints, one per line on stdout: `api-server: URL`, `kubeconfig: PATH`,
//! `metrics-server: URL` (and `controller: in-process`) so that scripts and
//! tests can pick them up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use fake_metrics_server::script::{Script, from_yaml};
use fake_metrics_server::server::ServerError;
use fake_metrics_server::{AppState, Transport};
use hpa_core::DecisionConfig;
use hpa_core::clock::ScenarioClock;
use hpa_sim::Sim;
use hpa_sim::standalone;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::CliResult;
use super::controller::shutdown_signal;
use crate::sim_service::controller::{InProcess, clock_layer};
use crate::sim_service::loads::{Loads, Mirror};
use crate::testbed::controller::Requests;
use hpa_controller::ControllerConfig;

/// Errors of `hpa-harness sim`.
#[derive(Debug, thiserror::Error)]
pub enum SimCliError {
    #[error("cannot listen on --metrics-listen {addr}")]
    BindMetrics {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read --metrics-script {path}")]
    ReadScript {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--controller needs the built-in metrics server: leave out --metrics-url")]
    ControllerWithMetricsUrl,
    #[error("the in-process controller failed to stop")]
    Controller(#[source] hpa_controller::RunError),
    #[error("invalid --metrics-script {path}")]
    Script {
        path: PathBuf,
        #[source]
        source: fake_metrics_server::script::ScriptError,
    },
}

/// Options of `hpa-harness sim`.
#[derive(Debug, clap::Args)]
#[group(id = "sim_command")]
pub struct Args {
    #[command(flatten)]
    pub sim: standalone::Args,

    /// Where the built-in fake metrics server listens (plain HTTP); unused
    /// with --metrics-url.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub metrics_listen: SocketAddr,

    /// Script (YAML or JSON) the built-in fake metrics server starts with.
    #[arg(long)]
    pub metrics_script: Option<PathBuf>,

    /// Run our HPA controller in this process, on the sim's clock (with
    /// --virtual-clock: it syncs every 15 s of each `POST /admin/v1/clock`
    /// advance), and report every running pod to the built-in metrics
    /// server with its share of its workload's load
    /// (`PUT /control/v1/loads/NAMESPACE/WORKLOAD` `{"cpu": "350m"}`).
    /// Its decisions are served on the API server's address at
    /// `/debug/decisions`.
    #[arg(long)]
    pub controller: bool,

    /// With --controller: run it as `hpa-controller --upstream-requests`
    /// (a GET of `/scale` and one metrics list per HPA and metric) rather
    /// than at the binary's defaults.
    #[arg(long, requires = "controller")]
    pub upstream_requests: bool,
}

fn load_script(path: &PathBuf) -> Result<Script, SimCliError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimCliError::ReadScript {
        path: path.clone(),
        source,
    })?;
    from_yaml(&text).map_err(|source| SimCliError::Script {
        path: path.clone(),
        source,
    })
}

/// Runs `hpa-harness sim`.
pub async fn run(args: Args) -> CliResult {
    let mut sim_args = args.sim.clone();
    let stop_metrics = CancellationToken::new();
    let own_metrics = if sim_args.metrics_url.is_none() {
        let (listener, url) = bind_metrics(args.metrics_listen).await?;
        sim_args.metrics_url = Some(url.clone());
        Some((listener, url))
    } else {
        None
    };
    if args.controller && own_metrics.is_none() {
        return Err(SimCliError::ControllerWithMetricsUrl.into());
    }
    let sim = Sim::new(standalone::config_from_args(&sim_args)?);
    let mut beside = Beside::default();
    if let Some((listener, url)) = own_metrics {
        beside = serve_metrics(&sim, listener, &args, &stop_metrics)?;
        println!("metrics-server: {url}");
    } else if let Some(url) = &sim_args.metrics_url {
        println!("metrics-server: {url}");
    }
    let kubeconfig = sim_args.kubeconfig.clone();
    let mut router = sim.router();
    if let Some(c) = &beside.controller {
        println!("controller: in-process");
        // The controller's decisions beside the API, as `hpa-controller`
        // serves them on its --bind-address.
        router = router.merge(hpa_controller::server::debug_app(c.server_state()));
        if sim.virtual_clock().is_some() {
            router = router.layer(axum::middleware::from_fn_with_state(
                Arc::clone(c),
                clock_layer,
            ));
        }
    }
    let result = standalone::run_router(
        sim,
        router,
        &sim_args,
        |addr| {
            println!("api-server: http://{addr}");
            println!("kubeconfig: {}", kubeconfig.display());
        },
        shutdown_signal(),
    )
    .await;
    stop_metrics.cancel();
    beside.stop().await?;
    result?;
    Ok(ExitCode::SUCCESS)
}

/// Binds the built-in metrics server's listener; it and its URL.
async fn bind_metrics(addr: SocketAddr) -> Result<(tokio::net::TcpListener, String), SimCliError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| SimCliError::BindMetrics { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| SimCliError::BindMetrics { addr, source })?;
    Ok((listener, format!("http://{local}")))
}

/// What runs beside the API server: the built-in metrics server and, with
/// --controller, our controller and the task sharing loads among pods.
#[derive(Default)]
struct Beside {
    metrics_server: Option<JoinHandle<Result<(), ServerError>>>,
    controller: Option<Arc<InProcess>>,
    mirror_task: Option<JoinHandle<()>>,
}

impl Beside {
    /// Waits for each to stop (their token cancelled): the mirror, then the
    /// controller, then the metrics server, whose failure is only logged.
    async fn stop(self) -> Result<(), SimCliError> {
        if let Some(task) = self.mirror_task {
            let _ = task.await;
        }
        if let Some(c) = self.controller.and_then(Arc::into_inner) {
            c.shutdown().await.map_err(SimCliError::Controller)?;
        }
        if let Some(server) = self.metrics_server {
            match server.await {
                Ok(Err(err)) => tracing::warn!(error = %err, "the fake metrics server failed"),
                Err(err) => tracing::warn!(error = %err, "the fake metrics server task failed"),
                Ok(Ok(())) => {}
            }
        }
        Ok(())
    }
}

/// Serves the built-in metrics server on `listener` until `stop_metrics`
/// is cancelled, on the sim's clock, with `--metrics-script`'s rules and
/// the sim's pods; with --controller, our controller beside it.
fn serve_metrics(
    sim: &Sim,
    listener: tokio::net::TcpListener,
    args: &Args,
    stop_metrics: &CancellationToken,
) -> Result<Beside, SimCliError> {
    let clock = match sim.virtual_clock() {
        Some(clock) => ScenarioClock::Virtual(clock),
        None => ScenarioClock::wall(),
    };
    let script = match &args.metrics_script {
        Some(path) => load_script(path)?,
        None => Script::default(),
    };
    let state = AppState::with_script(clock, &script);
    // The built-in server knows the sim's pods (as metrics-server knows
    // a cluster's), so that its script's rules give values to pods
    // created later under names nobody chose in advance.
    let watch_stop = stop_metrics.clone();
    tokio::spawn(fake_metrics_server::watch::watch_pods(
        sim.client(),
        state.clone(),
        async move { watch_stop.cancelled().await },
    ));
    if args.controller {
        return Ok(serve_with_controller(
            sim,
            listener,
            state,
            args.upstream_requests,
            stop_metrics,
        ));
    }
    let stop = stop_metrics.clone();
    Ok(Beside {
        metrics_server: Some(tokio::spawn(fake_metrics_server::run(
            listener,
            state,
            Transport::Plain,
            async move { stop.cancelled().await },
        ))),
        ..Beside::default()
    })
}

/// The metrics server with the loads API (`/control/v1/loads`), the task
/// sharing each workload's load among its running pods, and our controller
/// on the sim's clock, of the sim's release.
fn serve_with_controller(
    sim: &Sim,
    listener: tokio::net::TcpListener,
    state: AppState,
    upstream_requests: bool,
    stop_metrics: &CancellationToken,
) -> Beside {
    let stop = stop_metrics.clone();
    let loads = Loads::default();
    let mirror = Arc::new(Mirror::new(sim.client(), state.clone(), loads.clone()));
    let mirror_task = Some(tokio::spawn(Arc::clone(&mirror).run(stop_metrics.clone())));
    let router = fake_metrics_server::app(state).merge(crate::sim_service::loads::routes(loads));
    let metrics_server = Some(tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .map_err(ServerError::Io)
    }));
    let controller = Some(Arc::new(InProcess::start(
        sim,
        // One release for the API server and the controller.
        ControllerConfig {
            decision: DecisionConfig {
                feature_gates: sim.feature_gates(),
                ..DecisionConfig::default()
            },
            ..ControllerConfig::default()
        },
        mirror,
        if upstream_requests {
            Requests::Upstream
        } else {
            Requests::Shipped
        },
    )));
    Beside {
        metrics_server,
        controller,
        mirror_task,
    }
}
