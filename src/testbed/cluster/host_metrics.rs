//! The fake metrics server on the host, registered as a cluster's metrics
//! APIs: it listens with a self-signed certificate, and the four
//! APIServices point at a Service that leads the API server to it
//! ([`Route`]): for a cluster in Docker, a selector-less Service with an
//! EndpointSlice holding the host's address on the cluster's network; for
//! a control plane on this host, an `ExternalName` Service to `localhost`.
//! The harness scripts it through its control API on 127.0.0.1.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::preflight::{self, METRICS_API_SERVICES, MetricsServerRef};

const MANAGER: &str = "hpa-harness";

/// Why the host metrics server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum HostMetricsError {
    /// The listener or the certificate failed.
    #[error("starting the fake metrics server on the host: {0}")]
    Start(String),
    /// The Docker network's gateway (the host, seen from the cluster) is unknown.
    #[error("finding the host's address on Docker network {network}: {detail}")]
    Gateway { network: String, detail: String },
    /// Writing the Service, EndpointSlice or APIServices failed.
    #[error("registering the fake metrics server: {action}")]
    Register {
        action: String,
        #[source]
        source: kube::Error,
    },
    /// The APIServices did not become Available.
    #[error("the metrics APIServices did not become Available within {0:?}: {1}")]
    NotAvailable(Duration, String),
}

/// A fake metrics server running on the host for a cluster; stops on drop.
pub struct HostMetricsServer {
    /// The control URL (`https://127.0.0.1:PORT`, a loopback-only listener).
    pub control_url: String,
    /// The port it listens on (all interfaces).
    pub port: u16,
    _stop: DropGuard,
}

impl std::fmt::Debug for HostMetricsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostMetricsServer")
            .field("control_url", &self.control_url)
            .finish()
    }
}

impl HostMetricsServer {
    /// Starts it on `bind` (a free port; all interfaces for a cluster in
    /// Docker, loopback for one on this host), its certificate naming
    /// `host_ip`; it learns the pods of `cluster` (list/watch), so that its
    /// script's rules give values to the pods the cluster names.
    pub async fn start(
        bind: IpAddr,
        host_ip: IpAddr,
        cluster: kube::Client,
    ) -> Result<Self, HostMetricsError> {
        let tls = fake_metrics_server::server::self_signed_tls(&[
            host_ip.to_string(),
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
        ])
        .map_err(|e| HostMetricsError::Start(e.to_string()))?;
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((bind, 0)))
            .await
            .map_err(|e| HostMetricsError::Start(e.to_string()))?;
        let port = listener
            .local_addr()
            .map_err(|e| HostMetricsError::Start(e.to_string()))?
            .port();
        // The network listener serves the aggregator; its control API takes
        // a token nobody is told, so only the loopback listener (the
        // harness's own) can script the server.
        let control = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .map_err(|e| HostMetricsError::Start(e.to_string()))?;
        let control_port = control
            .local_addr()
            .map_err(|e| HostMetricsError::Start(e.to_string()))?
            .port();
        let locked = fake_metrics_server::auth::ControlToken::generate()
            .map_err(|e| HostMetricsError::Start(e.to_string()))?;
        let state = fake_metrics_server::AppState::new(hpa_core::clock::ScenarioClock::wall());
        let stop = CancellationToken::new();
        let watch_stop = stop.clone();
        tokio::spawn(fake_metrics_server::watch::watch_pods(
            cluster,
            state.clone(),
            async move { watch_stop.cancelled().await },
        ));
        for (listener, token) in [
            (listener, locked),
            (control, fake_metrics_server::auth::ControlToken::none()),
        ] {
            let stopped = stop.clone();
            let (state, tls) = (state.clone(), tls.clone());
            tokio::spawn(async move {
                let shutdown = async move { stopped.cancelled().await };
                if let Err(e) = fake_metrics_server::run_with_token(
                    listener,
                    state,
                    fake_metrics_server::Transport::Tls(tls),
                    token,
                    shutdown,
                )
                .await
                {
                    tracing::warn!(error = %e, "the host's fake metrics server stopped");
                }
            });
        }
        Ok(Self {
            control_url: format!("https://127.0.0.1:{control_port}"),
            port,
            _stop: stop.drop_guard(),
        })
    }
}

/// The host's address on a Docker network (its gateway), as containers on
/// that network reach the host.
pub fn docker_gateway(network: &str) -> Result<IpAddr, HostMetricsError> {
    let err = |detail: String| HostMetricsError::Gateway {
        network: network.to_owned(),
        detail,
    };
    let out = duct::cmd!(
        "docker",
        "network",
        "inspect",
        network,
        "--format",
        "{{range .IPAM.Config}}{{.Gateway}} {{end}}"
    )
    .stderr_to_stdout()
    .read()
    .map_err(|e| err(e.to_string()))?;
    first_ipv4(&out).ok_or_else(|| err(format!("no IPv4 gateway in {out:?}")))
}

/// The first IPv4 address among whitespace-separated words.
fn first_ipv4(text: &str) -> Option<IpAddr> {
    text.split_whitespace()
        .filter_map(|w| w.parse::<Ipv4Addr>().ok())
        .map(IpAddr::V4)
        .next()
}

/// How the API server reaches the fake metrics server on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The host's address on the cluster's network, in an EndpointSlice of
    /// a selector-less Service (port 443 to the server's port): a cluster
    /// in Docker, whose aggregator routes to endpoints.
    Endpoint(IpAddr),
    /// An `ExternalName` Service to this host name, dialled at the
    /// APIService's port: a control plane on this host whose aggregator
    /// does not route to endpoints (`--enable-aggregator-routing=false`).
    ExternalName(String),
}

/// The objects that route the metrics APIs to the server.
#[derive(Debug, Clone)]
pub struct Registration {
    pub namespace: Namespace,
    pub service: Service,
    /// Only for [`Route::Endpoint`].
    pub slice: Option<EndpointSlice>,
    pub api_services: Vec<APIService>,
}

/// The Service, EndpointSlice and APIServices that route the metrics APIs
/// by `route` to the server's `port`.
pub fn registration(at: &MetricsServerRef, route: &Route, port: u16) -> Registration {
    let ns = &at.namespace;
    let name = &at.service;
    let namespace = serde_json::from_value(json!({"metadata": {"name": ns}}));
    let (service, slice, api_port) = match route {
        Route::Endpoint(host_ip) => (
            json!({
                "metadata": {"name": name, "namespace": ns},
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
            }),
            serde_json::from_value(json!({
                "metadata": {"name": format!("{name}-host"), "namespace": ns,
                    "labels": {"kubernetes.io/service-name": name,
                        "endpointslice.kubernetes.io/managed-by": "hpa-harness"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [host_ip.to_string()], "conditions": {"ready": true}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            }))
            .ok(),
            443,
        ),
        Route::ExternalName(host) => (
            json!({
                "metadata": {"name": name, "namespace": ns},
                "spec": {"type": "ExternalName", "externalName": host,
                    "ports": [{"name": "https", "port": port}]},
            }),
            None,
            port,
        ),
    };
    let api_services = METRICS_API_SERVICES
        .iter()
        .filter_map(|full| {
            let (version, group) = full.split_once('.')?;
            serde_json::from_value(json!({
                "metadata": {"name": full},
                "spec": {
                    "group": group,
                    "version": version,
                    "service": {"namespace": ns, "name": name, "port": api_port},
                    "insecureSkipTLSVerify": true,
                    "groupPriorityMinimum": 100,
                    "versionPriority": if version == "v1beta2" { 200 } else { 100 },
                },
            }))
            .ok()
        })
        .collect();
    Registration {
        namespace: namespace.unwrap_or_default(),
        service: serde_json::from_value(service).unwrap_or_default(),
        slice,
        api_services,
    }
}

/// Applies [`registration`] and waits until the APIServices are Available.
pub async fn register(
    client: &kube::Client,
    at: &MetricsServerRef,
    route: &Route,
    port: u16,
    timeout: Duration,
) -> Result<(), HostMetricsError> {
    let Registration {
        namespace,
        service,
        slice,
        api_services,
    } = registration(at, route, port);
    let pp = PatchParams::apply(MANAGER).force();
    let reg = |action: String| move |source| HostMetricsError::Register { action, source };
    Api::<Namespace>::all(client.clone())
        .patch(&at.namespace, &pp, &Patch::Apply(&namespace))
        .await
        .map_err(reg(format!("namespace {}", at.namespace)))?;
    Api::<Service>::namespaced(client.clone(), &at.namespace)
        .patch(&at.service, &pp, &Patch::Apply(&service))
        .await
        .map_err(reg(format!("service {}/{}", at.namespace, at.service)))?;
    if let Some(slice) = &slice {
        let slice_name = slice.metadata.name.clone().unwrap_or_default();
        Api::<EndpointSlice>::namespaced(client.clone(), &at.namespace)
            .patch(&slice_name, &pp, &Patch::Apply(slice))
            .await
            .map_err(reg(format!("endpointslice {}/{slice_name}", at.namespace)))?;
    }
    let apis: Api<APIService> = Api::all(client.clone());
    for svc in &api_services {
        let name = svc.metadata.name.clone().unwrap_or_default();
        apis.patch(&name, &pp, &Patch::Apply(svc))
            .await
            .map_err(reg(format!("apiservice {name}")))?;
    }
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let problems = preflight::api_services(client, at, None)
            .await
            .map_err(|e| HostMetricsError::NotAvailable(timeout, e.to_string()))?;
        if problems.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            let text = problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            return Err(HostMetricsError::NotAvailable(timeout, text));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gateway_is_the_first_ipv4_word() {
        assert_eq!(
            first_ipv4("fc00:f853:ccd:e793::1 172.18.0.1 "),
            Some(IpAddr::V4(Ipv4Addr::new(172, 18, 0, 1)))
        );
        assert_eq!(first_ipv4(""), None);
    }

    #[test]
    fn the_registration_routes_every_metrics_api_to_the_host() {
        let at = MetricsServerRef::default();
        let ip = IpAddr::V4(Ipv4Addr::new(172, 18, 0, 1));
        let Registration {
            namespace: ns,
            service: svc,
            slice,
            api_services: apis,
        } = registration(&at, &Route::Endpoint(ip), 34567);
        let slice = slice.unwrap();
        assert_eq!(ns.metadata.name.as_deref(), Some("fake-metrics"));
        let spec = svc.spec.unwrap();
        assert!(
            spec.selector.is_none(),
            "selector-less: the slice says where"
        );
        assert_eq!(spec.ports.unwrap()[0].port, 443);
        assert_eq!(
            slice
                .metadata
                .labels
                .unwrap()
                .get("kubernetes.io/service-name")
                .map(String::as_str),
            Some("fake-metrics-server")
        );
        assert_eq!(slice.endpoints.unwrap()[0].addresses, ["172.18.0.1"]);
        assert_eq!(slice.ports.unwrap()[0].port, Some(34567));
        assert_eq!(apis.len(), METRICS_API_SERVICES.len());
        // What preflight accepts as "ours" once the aggregator marks them Available.
        let mut available = apis.clone();
        for a in &mut available {
            a.status = serde_json::from_value(
                json!({"conditions": [{"type": "Available", "status": "True"}]}),
            )
            .unwrap();
        }
        assert!(preflight::check_api_services(&available, &at, &Default::default()).is_empty());
    }

    #[test]
    fn an_external_name_route_leads_the_aggregator_to_the_port_on_this_host() {
        let at = MetricsServerRef::default();
        let reg = registration(&at, &Route::ExternalName("localhost".into()), 41234);
        assert!(reg.slice.is_none());
        let spec = reg.service.spec.unwrap();
        assert_eq!(spec.type_.as_deref(), Some("ExternalName"));
        assert_eq!(spec.external_name.as_deref(), Some("localhost"));
        // The aggregator dials externalName at the APIService's port.
        for api in &reg.api_services {
            let svc = api.spec.as_ref().unwrap().service.as_ref().unwrap();
            assert_eq!(svc.port, Some(41234));
            assert_eq!(svc.name.as_deref(), Some("fake-metrics-server"));
        }
    }
}
