//! The command line of the server, in the library so that both the
//! `fake-metrics-server` binary and `hpa-harness metrics-server` offer the
//! same flags and behaviour.
//!
//! Once bound, [`run`] prints one line on stdout, `listening: URL`
//! (`http://` or `https://` and the bound address), so a process started
//! with `--listen 127.0.0.1:0` tells its parent where it is. Logs go to
//! stderr.

use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use hpa_core::clock::{ScenarioClock, VirtualClock};
use jiff::Timestamp;

use crate::auth::ControlToken;
use crate::script::{Script, ScriptError};
use crate::server::ServerError;
use crate::{AppState, Transport};

/// Failures of the command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The `--script` file could not be read.
    #[error("reading --script {path}")]
    ReadScript {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The `--script` file is not a valid script.
    #[error("invalid --script {path}")]
    Script {
        /// The file.
        path: PathBuf,
        /// Cause (names the line and column or the field).
        #[source]
        source: ScriptError,
    },
    /// The `--listen` address could not be bound.
    #[error("binding --listen {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// `--http` on a listener other than loopback: the metrics APIs stay
    /// on TLS wherever others can reach them.
    #[error(
        "--http serves plain HTTP, which is only allowed on a loopback address, not {addr}; drop --http (a self-signed certificate is made) or listen on 127.0.0.1"
    )]
    PlainOnNetwork {
        /// The address.
        addr: SocketAddr,
    },
    /// The control token could not be generated.
    #[error("generating the control token")]
    Token(#[source] rustls::Error),
    /// `--watch-pods` found no cluster to watch.
    #[error("--watch-pods: no cluster to watch (in-cluster service account or KUBECONFIG)")]
    Kube(#[source] kube::Error),
    /// The TLS setup or the server failed.
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// A scripted server for metrics.k8s.io, custom.metrics.k8s.io and
/// external.metrics.k8s.io, with a control API under /control/v1.
#[derive(Debug, Clone, clap::Args)]
#[group(id = "fake_metrics_server_args")]
pub struct Args {
    /// Address to listen on. Loopback by default; use 0.0.0.0:PORT inside a
    /// cluster, port 0 for any free port (see the `listening:` line).
    #[arg(long, env = "FMS_LISTEN", default_value = "127.0.0.1:8443")]
    pub listen: SocketAddr,

    /// Script to serve from the start (YAML, or JSON for a .json file).
    #[arg(long, env = "FMS_SCRIPT")]
    pub script: Option<PathBuf>,

    /// Serve plain HTTP instead of HTTPS.
    #[arg(long, env = "FMS_HTTP")]
    pub http: bool,

    /// PEM certificate chain; without it a self-signed certificate is made
    /// at start.
    #[arg(
        long,
        env = "FMS_TLS_CERT",
        requires = "tls_key",
        conflicts_with = "http"
    )]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key for --tls-cert.
    #[arg(
        long,
        env = "FMS_TLS_KEY",
        requires = "tls_cert",
        conflicts_with = "http"
    )]
    pub tls_key: Option<PathBuf>,

    /// Extra DNS names or IPs for the self-signed certificate (repeatable).
    #[arg(long = "tls-name", env = "FMS_TLS_NAMES", value_delimiter = ',')]
    pub tls_names: Vec<String>,

    /// Run on a virtual clock starting at this instant (RFC 3339, e.g.
    /// 2026-01-01T00:00:00Z) instead of the wall clock. It then only moves
    /// through POST /control/v1/clock, so sample timestamps follow a
    /// simulated cluster's clock.
    #[arg(long, env = "FMS_VIRTUAL_CLOCK")]
    pub virtual_clock: Option<Timestamp>,

    /// Token the control API (/control/v1) requires, as `Authorization:
    /// Bearer TOKEN` or `X-Control-Token: TOKEN`. On a loopback listener the
    /// control API is open without one; on any other a token is always
    /// required, and one is generated and printed (`control-token: TOKEN`)
    /// when none is given.
    #[arg(long, env = "FMS_CONTROL_TOKEN", hide_env_values = true)]
    pub control_token: Option<String>,

    /// Learn the pods that exist from the API server (list/watch of pod
    /// metadata, with the in-cluster service account or KUBECONFIG), so
    /// that the script's `rules` give values to pods it does not name.
    /// Needs get, list and watch on pods (deploy/rbac.yaml).
    #[arg(long, env = "FMS_WATCH_PODS")]
    pub watch_pods: bool,
}

impl Args {
    /// The script `--script` names, or an empty one.
    pub fn load_script(&self) -> Result<Script, CliError> {
        let Some(path) = &self.script else {
            return Ok(Script::default());
        };
        let text = std::fs::read_to_string(path).map_err(|source| CliError::ReadScript {
            path: path.clone(),
            source,
        })?;
        let content_type = path
            .extension()
            .is_some_and(|e| e == "json")
            .then_some("application/json");
        Script::parse(&text, content_type).map_err(|source| CliError::Script {
            path: path.clone(),
            source,
        })
    }

    /// The clock `--virtual-clock` asks for.
    pub fn clock(&self) -> ScenarioClock {
        match self.virtual_clock {
            Some(start) => ScenarioClock::Virtual(VirtualClock::new(start)),
            None => ScenarioClock::wall(),
        }
    }

    /// The transport: plain, the given certificate, or a self-signed one.
    pub fn transport(&self) -> Result<Transport, CliError> {
        if self.http {
            return Ok(Transport::Plain);
        }
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            return Ok(Transport::Tls(crate::tls_from_pem(cert, key)?));
        }
        let mut names = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            self.listen.ip().to_string(),
        ];
        names.extend(self.tls_names.iter().cloned());
        names.sort();
        names.dedup();
        Ok(Transport::Tls(crate::self_signed_tls(&names)?))
    }

    /// The control token to require, and whether it was generated (and so
    /// must be printed for clients to learn it).
    pub fn control_token(&self) -> Result<(ControlToken, bool), CliError> {
        match self.control_token.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => Ok((ControlToken::new(t), false)),
            _ if self.listen.ip().is_loopback() => Ok((ControlToken::none(), false)),
            _ => Ok((ControlToken::generate().map_err(CliError::Token)?, true)),
        }
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &'static str {
        if self.http { "http" } else { "https" }
    }
}

/// Serves as `args` say until `shutdown`; `on_ready` gets the server's base
/// URL once the socket is bound. `--watch-pods` watches the cluster of the
/// in-cluster service account or `KUBECONFIG`.
pub async fn serve(
    args: &Args,
    on_ready: impl FnOnce(&str),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), CliError> {
    serve_with(args, None, on_ready, shutdown).await
}

/// [`serve`], `--watch-pods` watching through `cluster` when given (a
/// caller that read `--kubeconfig` and `--context` itself).
pub async fn serve_with(
    args: &Args,
    cluster: Option<kube::Client>,
    on_ready: impl FnOnce(&str),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), CliError> {
    let script = args.load_script()?;
    if args.http && !args.listen.ip().is_loopback() {
        return Err(CliError::PlainOnNetwork { addr: args.listen });
    }
    let transport = args.transport()?;
    let (token, generated) = args.control_token()?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|source| CliError::Bind {
            addr: args.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| CliError::Bind {
        addr: args.listen,
        source,
    })?;
    let url = format!("{}://{addr}", args.scheme());
    let clock = args.clock();
    tracing::info!(
        %url,
        pods = script.pods.len(),
        virtual_clock = clock.is_virtual(),
        "serving"
    );
    let state = AppState::with_script(clock, &script);
    let watch = if args.watch_pods {
        let client = match cluster {
            Some(client) => client,
            None => kube::Client::try_default().await.map_err(CliError::Kube)?,
        };
        Some(tokio::spawn(crate::watch::watch_pods(
            client,
            state.clone(),
            std::future::pending(),
        )))
    } else {
        None
    };
    if generated && let Some(t) = token.value() {
        // Printed, not logged at a level someone may turn off: clients
        // cannot reach the control API without it.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "control-token: {t}");
        let _ = out.flush();
    }
    on_ready(&url);
    let served = crate::server::run_with_token(listener, state, transport, token, shutdown).await;
    if let Some(watch) = watch {
        watch.abort();
    }
    served?;
    Ok(())
}

/// The command: serves until SIGINT or SIGTERM, after printing
/// `listening: URL` on stdout.
pub async fn run(args: Args) -> Result<(), CliError> {
    run_with(args, None).await
}

/// [`run`], `--watch-pods` watching through `cluster` when given.
pub async fn run_with(args: Args, cluster: Option<kube::Client>) -> Result<(), CliError> {
    serve_with(
        &args,
        cluster,
        |url| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "listening: {url}");
            let _ = out.flush();
        },
        shutdown_signal(),
    )
    .await
}

/// Resolves on Ctrl-C or SIGTERM (the one definition, shared with the controller).
pub use hpa_shutdown::shutdown_signal;

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
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn virtual_clock_starts_at_the_given_instant() {
        use hpa_core::clock::Clock;
        let cli = Cli::parse_from([
            "fms",
            "--http",
            "--listen",
            "127.0.0.1:0",
            "--virtual-clock",
            "2026-01-01T00:00:00Z",
        ]);
        let clock = cli.args.clock();
        assert!(clock.is_virtual());
        assert_eq!(
            clock.now(),
            "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap()
        );
        assert_eq!(cli.args.scheme(), "http");
    }

    #[test]
    fn a_network_listener_always_has_a_control_token_and_loopback_may_go_without() {
        let cli = Cli::parse_from(["fms", "--listen", "0.0.0.0:8443"]);
        let (token, generated) = cli.args.control_token().unwrap();
        assert!(generated);
        assert_eq!(token.value().map(str::len), Some(32));
        let cli = Cli::parse_from(["fms", "--listen", "0.0.0.0:8443", "--control-token", "t"]);
        let (token, generated) = cli.args.control_token().unwrap();
        assert_eq!((token.value(), generated), (Some("t"), false));
        let cli = Cli::parse_from(["fms", "--listen", "127.0.0.1:0"]);
        assert_eq!(cli.args.control_token().unwrap().0.value(), None);
    }

    #[tokio::test]
    async fn plain_http_on_a_network_address_is_refused() {
        let cli = Cli::parse_from(["fms", "--http", "--listen", "0.0.0.0:0"]);
        let err = serve(&cli.args, |_| {}, async {}).await.unwrap_err();
        assert!(matches!(err, CliError::PlainOnNetwork { .. }), "{err}");
    }

    #[test]
    fn without_virtual_clock_the_wall_clock_is_used() {
        let cli = Cli::parse_from(["fms"]);
        assert!(!cli.args.clock().is_virtual());
        assert_eq!(cli.args.scheme(), "https");
    }
}
