//! Serving: the router with its request-log and fault layer, TLS setup, and
//! the accept loop with graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hpa_core::clock::Clock;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulShutdown;
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

use crate::api_error::ApiError;
use crate::auth::ControlToken;
use crate::log::{Group, LogEntry};
use crate::script::Api;
use crate::state::AppState;

/// How long open connections get to finish after shutdown is asked.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Errors from setting up or running the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The self-signed certificate could not be generated.
    #[error("generating the self-signed certificate")]
    Certificate(#[from] rcgen::Error),
    /// A PEM file could not be read.
    #[error("reading {path}: {source}")]
    ReadPem {
        /// The file.
        path: String,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// A PEM file holds no certificate or no key.
    #[error("{path}: {what}")]
    BadPem {
        /// The file.
        path: String,
        /// What is missing.
        what: String,
    },
    /// rustls refused the certificate or key.
    #[error("TLS configuration")]
    Tls(#[from] rustls::Error),
    /// Serving failed.
    #[error("serving")]
    Io(#[from] std::io::Error),
}

/// Plain HTTP or HTTPS.
#[derive(Clone, Debug)]
pub enum Transport {
    /// Plain HTTP.
    Plain,
    /// HTTPS with this configuration.
    Tls(Arc<ServerConfig>),
}

/// The whole application: metrics APIs, discovery, health and control,
/// behind the layer that applies faults and records the request log. The
/// control API is open: for loopback listeners and in-process use.
pub fn app(state: AppState) -> Router {
    app_with_token(state, ControlToken::none())
}

/// [`app`] with the control API behind `token` ([`crate::auth`]).
pub fn app_with_token(state: AppState, token: ControlToken) -> Router {
    crate::api::routes()
        .merge(crate::control::routes())
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(
            token,
            crate::auth::require_token,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .with_state(state)
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::NotFound(format!(
        "the server could not find the requested resource {}",
        uri.path()
    ))
}

fn api_of(group: Group) -> Option<Api> {
    match group {
        Group::Resource => Some(Api::Resource),
        Group::Custom => Some(Api::Custom),
        Group::External => Some(Api::External),
        _ => None,
    }
}

/// The namespace a metrics API path names (`/apis/GROUP/VERSION/namespaces/NS/...`).
fn namespace_of(path: &str) -> Option<&str> {
    let mut segments = path.split('/').filter(|s| !s.is_empty()).skip(3);
    (segments.next()? == "namespaces").then_some(())?;
    segments.next()
}

/// Applies scripted faults to the metrics APIs and records every request.
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let time = state.clock().now();
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    let group = Group::of_path(&path);
    let namespace = namespace_of(&path);
    let fault = api_of(group)
        .and_then(|api| state.read(|m, _| m.faults.hitting(api, namespace).cloned()))
        .filter(|fault| fault.hits(query.as_deref()));
    let mut answer = None;
    if let Some(fault) = fault {
        if let Some(latency) = fault.latency {
            tokio::time::sleep(latency.0.unsigned_abs()).await;
        }
        if let Some(status) = fault.status {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let message = fault
                .message
                .unwrap_or_else(|| format!("scripted fault: {} {}", status.as_u16(), path));
            answer = Some(ApiError::Fault { status, message }.into_response());
        }
    }
    let mut response = match answer {
        Some(r) => r,
        None => next.run(request).await,
    };
    if let Ok(value) = axum::http::HeaderValue::from_str(state.instance()) {
        response
            .headers_mut()
            .insert(crate::api::INSTANCE_HEADER, value);
    }
    state.log().record(LogEntry {
        time,
        method,
        path,
        query,
        group,
        status: response.status().as_u16(),
        items: response
            .extensions()
            .get::<crate::api::ItemCount>()
            .map(|c| c.0),
        duration_micros: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    });
    response
}

fn crypto() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn server_config(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, ServerError> {
    let mut config = ServerConfig::builder_with_provider(crypto())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A TLS configuration with a certificate generated now, valid for
/// `names` (DNS names or IP addresses). The aggregator reaches the server
/// with `insecureSkipTLSVerify`, so nobody needs to trust it.
pub fn self_signed_tls(names: &[String]) -> Result<Arc<ServerConfig>, ServerError> {
    let certified = rcgen::generate_simple_self_signed(names.to_vec())?;
    let cert = certified.cert.der().clone();
    let key = PrivateKeyDer::try_from(certified.signing_key.serialize_der()).map_err(|e| {
        ServerError::BadPem {
            path: "generated key".to_owned(),
            what: e.to_owned(),
        }
    })?;
    server_config(vec![cert], key)
}

/// A TLS configuration from PEM files (certificate chain and private key).
pub fn tls_from_pem(cert_path: &Path, key_path: &Path) -> Result<Arc<ServerConfig>, ServerError> {
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| ServerError::ReadPem {
            path: p.display().to_string(),
            source,
        })
    };
    let cert_pem = read(cert_path)?;
    let key_pem = read(key_path)?;
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut cert_pem.as_slice())
        .collect::<Result<_, _>>()
        .map_err(|source| ServerError::ReadPem {
            path: cert_path.display().to_string(),
            source,
        })?;
    if certs.is_empty() {
        return Err(ServerError::BadPem {
            path: cert_path.display().to_string(),
            what: "no CERTIFICATE block".to_owned(),
        });
    }
    let key = rustls_pemfile::private_key(&mut key_pem.as_slice())
        .map_err(|source| ServerError::ReadPem {
            path: key_path.display().to_string(),
            source,
        })?
        .ok_or_else(|| ServerError::BadPem {
            path: key_path.display().to_string(),
            what: "no PRIVATE KEY block".to_owned(),
        })?;
    server_config(certs, key)
}

/// Serves `state` on `listener` until `shutdown` completes, then lets open
/// connections finish (bounded by a drain timeout). Plain or TLS, every
/// connection gets the slow-client bounds of [`crate::limits`]: a TLS
/// handshake and the request headers each have a deadline.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    transport: Transport,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    run_with_token(listener, state, transport, ControlToken::none(), shutdown).await
}

/// [`run`] with the control API behind `token`.
pub async fn run_with_token(
    listener: TcpListener,
    state: AppState,
    transport: Transport,
    token: ControlToken,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let router = app_with_token(state, token);
    let acceptor = match transport {
        Transport::Plain => None,
        Transport::Tls(config) => Some(tokio_rustls::TlsAcceptor::from(config)),
    };
    serve_loop(listener, router, acceptor, shutdown).await
}

/// Backs off when `accept` fails (out of file descriptors: the error repeats
/// at once, so retrying at once spins a core and floods the log): waits
/// 10 ms doubling to 1 s, and logs the first failure of a run only.
#[derive(Debug, Default)]
pub struct AcceptBackoff {
    failures: u32,
}

impl AcceptBackoff {
    /// After a failed accept: how long to wait, and whether to log it.
    pub fn failed(&mut self) -> (Duration, bool) {
        let log = self.failures == 0;
        let wait = Duration::from_millis(10)
            .saturating_mul(1 << self.failures.min(7))
            .min(Duration::from_secs(1));
        self.failures = self.failures.saturating_add(1);
        (wait, log)
    }

    /// After a successful accept: how many failures the run had (to log
    /// once that it ended), and a fresh start.
    pub fn succeeded(&mut self) -> u32 {
        std::mem::take(&mut self.failures)
    }
}

async fn serve_loop(
    listener: TcpListener,
    router: Router,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let graceful = GracefulShutdown::new();
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(crate::limits::HEADER_TIMEOUT);
    let shutdown = std::pin::pin!(shutdown);
    let mut shutdown = shutdown;
    let mut backoff = AcceptBackoff::default();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => {
                        let failures = backoff.succeeded();
                        if failures > 0 {
                            tracing::info!(failures, "accepting connections again");
                        }
                        a
                    }
                    Err(e) => {
                        let (wait, log) = backoff.failed();
                        if log {
                            tracing::warn!(error = %e, "accept failed; backing off until it works again");
                        }
                        tokio::select! {
                            () = tokio::time::sleep(wait) => {}
                            () = &mut shutdown => break,
                        }
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let router = router.clone();
                let builder = builder.clone();
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    serve_connection(acceptor, stream, peer, router, builder, watcher).await;
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(DRAIN_TIMEOUT) => {
            tracing::warn!("connections still open after the drain timeout");
        }
    }
    Ok(())
}

async fn serve_connection(
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    router: Router,
    builder: hyper_util::server::conn::auto::Builder<TokioExecutor>,
    watcher: hyper_util::server::graceful::Watcher,
) {
    let service = hyper_util::service::TowerToHyperService::new(router);
    let Some(acceptor) = acceptor else {
        let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
        if let Err(e) = watcher.watch(conn.into_owned()).await {
            tracing::debug!(%peer, error = %e, "connection ended with an error");
        }
        return;
    };
    let tls = match tokio::time::timeout(crate::limits::HANDSHAKE_TIMEOUT, acceptor.accept(stream))
        .await
    {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
    if let Err(e) = watcher.watch(conn.into_owned()).await {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_accepts_back_off_to_a_second_and_log_once() {
        let mut b = AcceptBackoff::default();
        let runs: Vec<(Duration, bool)> = (0..12).map(|_| b.failed()).collect();
        assert_eq!(runs.iter().filter(|(_, log)| *log).count(), 1);
        assert_eq!(runs[0].0, Duration::from_millis(10));
        assert!(runs.windows(2).all(|w| w[1].0 >= w[0].0));
        assert_eq!(runs[11].0, Duration::from_secs(1));
        assert_eq!(b.succeeded(), 12);
        assert!(b.failed().1, "a new run of failures is logged again");
    }
}
