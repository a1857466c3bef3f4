//! `hpa-harness sim`: the sim on a loopback socket with a kubeconfig, so
//! kubectl, the controller binary or any client can use it.
//!
//! The root crate's subcommand flattens [`Args`], starts a fake metrics server
//! beside it unless `--metrics-url` names one, and calls [`run`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use hpa_core::clock::ScenarioClock;
use hpa_core::gates::{FeatureGates, GateError};
use hpa_core::version::{KubernetesVersion, VersionError};
use jiff::{SignedDuration, Timestamp};

use crate::backend::Backend;
use crate::sim::{Sim, SimConfig};
use crate::state::PodDelays;

/// Failures of the standalone server.
#[derive(Debug, thiserror::Error)]
pub enum StandaloneError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The kubeconfig file exists and `--force` was not given.
    #[error("the kubeconfig {path} exists; pass --force to replace it")]
    KubeconfigExists {
        /// The file.
        path: PathBuf,
    },
    /// The kubeconfig could not be written.
    #[error("cannot write the kubeconfig {path}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The server failed.
    #[error("the sim server failed")]
    Serve(#[source] std::io::Error),
    /// `--feature-gates` does not fit `--kubernetes-version`.
    #[error("invalid --feature-gates for Kubernetes {version}")]
    FeatureGates {
        /// The release the gates were read under.
        version: KubernetesVersion,
        /// Which gate, and why.
        #[source]
        source: GateError,
    },
}

fn version(s: &str) -> Result<KubernetesVersion, String> {
    s.parse().map_err(|e: VersionError| e.to_string())
}

/// Options of `hpa-harness sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Address to listen on (loopback; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:0", env = "HPA_SIM_LISTEN")]
    pub listen: SocketAddr,
    /// Where to write a kubeconfig pointing at the sim.
    #[arg(long, default_value = "hpa-sim.kubeconfig", env = "HPA_SIM_KUBECONFIG")]
    pub kubeconfig: PathBuf,
    /// Replace the --kubeconfig file if it exists (a symlink there is
    /// replaced by the file, never followed).
    #[arg(long)]
    pub force: bool,
    /// Base URL of the metrics APIs backend (metrics.k8s.io, custom and
    /// external metrics). Without it, the caller starts its own. An https
    /// backend's certificate is not verified, as for an APIService with
    /// `insecureSkipTLSVerify` (the fake metrics server's is self-signed).
    #[arg(long, env = "HPA_SIM_METRICS_URL")]
    pub metrics_url: Option<String>,
    /// Run on a virtual clock starting at this instant (RFC 3339) instead of
    /// the wall clock. The clock then only moves when the harness advances it.
    #[arg(long)]
    pub virtual_clock: Option<Timestamp>,
    /// How long new workload pods stay Pending before Running (e.g. `2s`).
    #[arg(long, default_value = "0s")]
    pub pod_start_delay: SignedDuration,
    /// How long new workload pods stay unready after starting (e.g. `30s`).
    #[arg(long, default_value = "0s")]
    pub pod_ready_delay: SignedDuration,
    /// Watch events kept per resource for resumption (older: 410 Gone).
    #[arg(long, default_value_t = 10_000)]
    pub watch_history: usize,
    /// The Kubernetes release the sim's API server is: 1.35, 1.36, 1.37 or 1.38
    /// (alpha). `/version` reports it, and it decides how HPAs are stored
    /// and validated: `metadata.generation` (HPAGeneration, 1.37 and
    /// later), the status fields a release drops (1.35 and 1.36 have no
    /// `conditions[].observedGeneration`), and whether `minReplicas: 0` is
    /// accepted (HPAScaleToZero, on from 1.37).
    #[arg(long = "kubernetes-version", value_parser = version, default_value = "1.37",
        env = "HPA_KUBERNETES_VERSION")]
    pub kubernetes_version: KubernetesVersion,
    /// The API server's feature gates, `Name=true,Name=false`, over the
    /// release's defaults, with upstream's rules: a gate the release does
    /// not register is refused, and a gate locked at GA can only be set to
    /// its default. The sim's API server reads HPAScaleToZero (minReplicas
    /// 0), HPAConfigurableTolerance (behavior tolerances kept) and
    /// HPAGeneration (generation and observedGeneration stored).
    #[arg(long = "feature-gates", default_value = "")]
    pub feature_gates: String,
    /// Name the pods of Deployments and ReplicaSets as a real cluster's
    /// kube-controller-manager does (`web-7d9c5b8f4-xk2zq`) instead of
    /// `web-0`, `web-1`, so that clients must learn pod names from the API.
    #[arg(long)]
    pub generated_pod_names: bool,
    /// How long Deployments and ReplicaSets take to create the pods they
    /// owe (e.g. `500ms`), on the sim's clock: a real cluster's controllers
    /// create a new or scaled workload's pods a moment later, and clients
    /// must wait for them.
    #[arg(long, default_value = "0s")]
    pub pod_creation_delay: SignedDuration,
    /// How long an Event is kept after its last write, as kube-apiserver's
    /// `--event-ttl` (on the sim's clock, virtual or wall); `0s` keeps
    /// Events forever.
    #[arg(long, default_value = "1h")]
    pub event_ttl: SignedDuration,
    /// A cluster without a node (or scheduler) of its own, as an API server
    /// with kube-controller-manager alone: every pod stays Pending and
    /// unscheduled until another scheduler binds it and its node's kubelet
    /// runs it, as the harness's fake node does on a real cluster. For
    /// testing that path without one.
    #[arg(long)]
    pub without_node: bool,
}

/// The sim configuration `args` describe (metrics backend from
/// `--metrics-url`, if given); refused when `--feature-gates` does not fit
/// the release.
pub fn config_from_args(args: &Args) -> Result<SimConfig, StandaloneError> {
    let feature_gates =
        FeatureGates::parse(args.kubernetes_version, &args.feature_gates).map_err(|source| {
            StandaloneError::FeatureGates {
                version: args.kubernetes_version,
                source,
            }
        })?;
    Ok(SimConfig {
        clock: match args.virtual_clock {
            Some(start) => ScenarioClock::Virtual(hpa_core::clock::VirtualClock::new(start)),
            None => ScenarioClock::wall(),
        },
        watch_history: args.watch_history,
        pod_delays: PodDelays {
            running: args.pod_start_delay,
            ready: args.pod_ready_delay,
            max_running: None,
        },
        metrics: args.metrics_url.clone().map(Backend::Url),
        feature_gates,
        generated_pod_names: args.generated_pod_names,
        pod_creation_delay: args.pod_creation_delay.max(SignedDuration::ZERO),
        event_ttl: (args.event_ttl > SignedDuration::ZERO).then_some(args.event_ttl),
        own_node: !args.without_node,
        ..SimConfig::default()
    })
}

/// A kubeconfig for a plain-HTTP server at `server` (`http://host:port`).
pub fn kubeconfig_yaml(server: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: hpa-sim
  cluster:
    server: {server}
contexts:
- name: hpa-sim
  context:
    cluster: hpa-sim
    user: hpa-sim
    namespace: default
current-context: hpa-sim
users:
- name: hpa-sim
  user: {{}}
"
    )
}

/// Writes the kubeconfig for `server` to `path`, readable by its owner only
/// (0600). An existing file (or symlink, even a dangling one) is an error
/// unless `force`; then it is replaced by renaming a fresh file over it, so
/// a symlink is replaced, never followed.
pub fn write_kubeconfig(path: &Path, server: &str, force: bool) -> Result<(), StandaloneError> {
    write_kubeconfig_text(path, &kubeconfig_yaml(server), force)
}

/// Writes the kubeconfig `text` to `path` as [`write_kubeconfig`] does
/// (0600, never through a symlink, an existing file only with `force`).
pub fn write_kubeconfig_text(path: &Path, text: &str, force: bool) -> Result<(), StandaloneError> {
    use std::io::Write as _;
    let io_err = |source| StandaloneError::Kubeconfig {
        path: path.to_owned(),
        source,
    };
    let exists = std::fs::symlink_metadata(path).is_ok();
    if exists && !force {
        return Err(StandaloneError::KubeconfigExists {
            path: path.to_owned(),
        });
    }
    let target = if exists {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
    } else {
        path.to_owned()
    };
    let mut options = std::fs::OpenOptions::new();
    // create_new is O_CREAT|O_EXCL: it fails on any existing path, symlinks
    // included, so nothing is written through a link.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&target).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    if let Err(e) = written {
        if target != path {
            let _ = std::fs::remove_file(&target);
        }
        return Err(io_err(e));
    }
    if target != path {
        std::fs::rename(&target, path).map_err(|e| {
            let _ = std::fs::remove_file(&target);
            io_err(e)
        })?;
    }
    Ok(())
}

/// Binds `args.listen`, writes the kubeconfig and serves `sim` until
/// `shutdown`. `on_ready` gets the bound address (useful with port 0).
pub async fn run(
    sim: Sim,
    args: &Args,
    on_ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StandaloneError> {
    let router = sim.router();
    run_router(sim, router, args, on_ready, shutdown).await
}

/// [`run`] serving `router` (built from [`Sim::router`] by the caller).
pub async fn run_router(
    sim: Sim,
    router: axum::Router,
    args: &Args,
    on_ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), StandaloneError> {
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|source| StandaloneError::Bind {
            addr: args.listen,
            source,
        })?;
    let addr = listener
        .local_addr()
        .map_err(|source| StandaloneError::Bind {
            addr: args.listen,
            source,
        })?;
    write_kubeconfig(&args.kubeconfig, &format!("http://{addr}"), args.force)?;
    tracing::info!(%addr, kubeconfig = %args.kubeconfig.display(), "hpa-sim listening");
    on_ready(addr);
    crate::serve_router(sim, router, listener, shutdown)
        .await
        .map_err(StandaloneError::Serve)
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

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hpa-sim-kubeconfig-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_existing_kubeconfig_is_kept_unless_forced() {
        let dir = scratch("exists");
        let path = dir.join("k");
        std::fs::write(&path, "mine").unwrap();
        let err = write_kubeconfig(&path, "http://127.0.0.1:1", false).unwrap_err();
        assert!(
            matches!(err, StandaloneError::KubeconfigExists { .. }),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
        write_kubeconfig(&path, "http://127.0.0.1:1", true).unwrap();
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("127.0.0.1:1")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_kubeconfig_is_private_and_a_symlink_is_never_followed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("symlink");
        let fresh = dir.join("fresh");
        write_kubeconfig(&fresh, "http://127.0.0.1:1", false).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(write_kubeconfig(&link, "http://127.0.0.1:1", false).is_err());
        let dangling = dir.join("dangling");
        std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
        assert!(write_kubeconfig(&dangling, "http://127.0.0.1:1", false).is_err());
        assert!(
            !dir.join("nowhere").exists(),
            "nothing written through the link"
        );
        write_kubeconfig(&link, "http://127.0.0.1:1", true).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            !std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn arguments_parse_and_the_command_is_well_formed() {
        Cli::command().debug_assert();
        let cli = Cli::parse_from([
            "sim",
            "--listen",
            "127.0.0.1:8080",
            "--pod-ready-delay",
            "30s",
            "--virtual-clock",
            "2026-01-01T00:00:00Z",
        ]);
        let config = config_from_args(&cli.args).unwrap();
        assert_eq!(config.pod_delays.ready, SignedDuration::from_secs(30));
        assert!(matches!(config.clock, ScenarioClock::Virtual(_)));
        assert_eq!(config.feature_gates, FeatureGates::default());
    }

    #[test]
    fn the_release_and_its_gates_come_from_the_flags() {
        let cli = Cli::parse_from([
            "sim",
            "--kubernetes-version",
            "1.36",
            "--feature-gates",
            "HPAScaleToZero=true",
        ]);
        let gates = config_from_args(&cli.args).unwrap().feature_gates;
        assert_eq!(gates.version(), KubernetesVersion::V1_36);
        assert!(gates.scale_to_zero() && !gates.generation());

        let locked = Cli::parse_from(["sim", "--feature-gates", "HPAConfigurableTolerance=false"]);
        let err = config_from_args(&locked.args).unwrap_err();
        assert!(
            matches!(
                &err,
                StandaloneError::FeatureGates {
                    source: GateError::Locked { .. },
                    ..
                }
            ),
            "{err:?}"
        );
        let oldest = Cli::parse_from(["sim", "--kubernetes-version", "1.35"]);
        let gates = config_from_args(&oldest.args).unwrap().feature_gates;
        assert_eq!(gates.version(), KubernetesVersion::V1_35);
        assert!(Cli::try_parse_from(["sim", "--kubernetes-version", "1.34"]).is_err());
    }
}
