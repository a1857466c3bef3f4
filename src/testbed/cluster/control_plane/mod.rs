//! A genuine Kubernetes control plane from its binaries, for one run:
//! etcd, kube-apiserver and kube-controller-manager as child processes on
//! free loopback ports, with certificates made in this process and all
//! state in a temporary directory; controller-runtime envtest's model, plus
//! the real controller manager (with or without its HPA controller).
//!
//! No kubelet runs: the harness's fake node plays the pods. The metrics
//! APIs reach the fake metrics server on loopback through the aggregation
//! layer (an `ExternalName` Service to `localhost`, which the aggregator
//! dials when `--enable-aggregator-routing` is off).
//!
//! Everything started stops when the run ends, fails or panics
//! ([`ControlPlane::stop`], else `Drop`), and when the harness is
//! interrupted or killed (the [`guard`]); two runs side by side share
//! nothing.

pub mod binaries;
pub mod guard;
pub mod pki;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ServiceAccount;
use kube::Api;
use tokio::process::{Child, Command};

pub use binaries::{Binaries, BinariesError};

/// How long the API server may take to serve (`/readyz`); it takes about
/// 5 s on 2 cores.
const API_READY_TIMEOUT: Duration = Duration::from_secs(90);
/// How long etcd may take to answer `/health`.
const ETCD_READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the controller manager may take to make the `default`
/// ServiceAccount (its first visible work).
const MANAGER_READY_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a component may take to stop after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// How the control plane runs.
#[derive(Debug, Clone)]
pub struct ControlPlaneOptions {
    /// Its binaries, checked.
    pub binaries: Binaries,
    /// Whether kube-controller-manager's own HPA controller runs
    /// (`--controller upstream`); off, ours is the only one that writes
    /// HPAs (`--controllers=*,-horizontalpodautoscaling`).
    pub upstream_hpa: bool,
    /// `--horizontal-pod-autoscaler-sync-period` of the controller manager.
    pub sync_period: Duration,
    /// The controller manager's client budget (`--kube-api-qps`,
    /// `--kube-api-burst`): upstream's 20/30 unless a load needs its pods
    /// made faster.
    pub manager_qps: f64,
    pub manager_burst: u32,
    /// `--feature-gates` of the API server and the controller manager
    /// (`Name=true,...`), empty for the release's defaults.
    pub feature_gates: String,
}

impl ControlPlaneOptions {
    /// Upstream's defaults around `binaries`.
    pub fn new(binaries: Binaries) -> Self {
        Self {
            binaries,
            upstream_hpa: false,
            sync_period: Duration::from_secs(15),
            manager_qps: 20.0,
            manager_burst: 30,
            feature_gates: String::new(),
        }
    }
}

/// Why the control plane could not start.
#[derive(Debug, thiserror::Error)]
pub enum ControlPlaneError {
    #[error(transparent)]
    Binaries(#[from] BinariesError),
    #[error("the control plane's directory: {0}")]
    Directory(#[source] std::io::Error),
    #[error(transparent)]
    Pki(#[from] pki::PkiError),
    #[error("no free loopback port: {0}")]
    Port(#[source] std::io::Error),
    #[error("cannot start {name} ({path}): {source}", path = .path.display())]
    Spawn {
        name: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{name} exited while starting ({status}); the end of its log:\n{log}")]
    Exited {
        name: &'static str,
        status: String,
        log: String,
    },
    #[error("{name} was not ready within {timeout:?} ({last}); the end of its log:\n{log}")]
    NotReady {
        name: &'static str,
        timeout: Duration,
        last: String,
        log: String,
    },
    #[error("the control plane's kubeconfig: {0}")]
    Kubeconfig(String),
}

/// One component: its name, process and log file.
#[derive(Debug)]
struct Component {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

/// A running control plane; stopped by [`ControlPlane::stop`] or on drop.
#[derive(Debug)]
pub struct ControlPlane {
    /// Stopped in reverse: the controller manager, the API server, etcd.
    components: Vec<Component>,
    guard: Option<guard::Guard>,
    dir: Option<tempfile::TempDir>,
    kubeconfig: PathBuf,
    server: String,
    version: String,
    /// kube-controller-manager's command line.
    manager_args: Vec<String>,
}

/// A free port on 127.0.0.1, released for the process that binds it next.
fn free_port() -> Result<u16, ControlPlaneError> {
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .map_err(ControlPlaneError::Port)?;
    Ok(listener
        .local_addr()
        .map_err(ControlPlaneError::Port)?
        .port())
}

/// The last `n` lines of a log file.
fn log_tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A kubeconfig (JSON, which kubectl and kube-rs read as YAML) for a
/// client-certificate user of the API server at `server`.
pub fn kubeconfig_text(server: &str, ca_pem: &str, user: &pki::Pem, name: &str) -> String {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {
            "server": server,
            "certificate-authority-data": b64(ca_pem),
        }}],
        "users": [{"name": name, "user": {
            "client-certificate-data": b64(&user.cert),
            "client-key-data": b64(&user.key),
        }}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
        "current-context": name,
    });
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

/// kube-apiserver's command line: on loopback at `api_port`, over etcd at
/// `etcd_url`, with the aggregation layer the metrics APIs go through.
fn api_server_args(
    api_port: u16,
    etcd_url: &str,
    pki: &pki::Pki,
    pki_dir: &Path,
    options: &ControlPlaneOptions,
) -> Vec<String> {
    let p = |path: &Path| path.display().to_string();
    let mut api_args = vec![
        format!("--etcd-servers={etcd_url}"),
        "--bind-address=127.0.0.1".to_owned(),
        "--advertise-address=127.0.0.1".to_owned(),
        format!("--secure-port={api_port}"),
        format!("--service-cluster-ip-range={}", pki::SERVICE_RANGE),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_owned(),
        format!("--service-account-key-file={}", p(&pki.service_account_pub)),
        format!(
            "--service-account-signing-key-file={}",
            p(&pki.service_account_key)
        ),
        format!("--client-ca-file={}", p(&pki.ca_cert)),
        format!("--tls-cert-file={}", p(&pki.api_server_cert)),
        format!("--tls-private-key-file={}", p(&pki.api_server_key)),
        format!("--cert-dir={}", p(pki_dir)),
        "--authorization-mode=Node,RBAC".to_owned(),
        // The aggregation layer: the metrics APIs are served through it.
        format!(
            "--requestheader-client-ca-file={}",
            p(&pki.front_proxy_ca_cert)
        ),
        format!("--requestheader-allowed-names={}", pki::FRONT_PROXY_CLIENT),
        "--requestheader-username-headers=X-Remote-User".to_owned(),
        "--requestheader-group-headers=X-Remote-Group".to_owned(),
        "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_owned(),
        format!(
            "--proxy-client-cert-file={}",
            p(&pki.front_proxy_client_cert)
        ),
        format!("--proxy-client-key-file={}", p(&pki.front_proxy_client_key)),
        // A loopback advertise address makes the `kubernetes` Endpoints
        // invalid; nothing here needs them.
        "--endpoint-reconciler-type=none".to_owned(),
        // The aggregator then dials an ExternalName Service's name,
        // which is how it reaches the fake metrics server on loopback.
        "--enable-aggregator-routing=false".to_owned(),
    ];
    if !options.feature_gates.is_empty() {
        api_args.push(format!("--feature-gates={}", options.feature_gates));
    }
    api_args
}

/// kube-controller-manager's command line: through `kubeconfig`, without
/// leader election, with or without its HPA controller as `options` say,
/// serving on a free loopback port.
fn controller_manager_args(
    kubeconfig: &Path,
    pki: &pki::Pki,
    pki_dir: &Path,
    options: &ControlPlaneOptions,
) -> Result<Vec<String>, ControlPlaneError> {
    let p = |path: &Path| path.display().to_string();
    let controllers = if options.upstream_hpa {
        "*"
    } else {
        "*,-horizontalpodautoscaling"
    };
    let mut manager_args = vec![
        format!("--kubeconfig={}", p(kubeconfig)),
        format!("--authentication-kubeconfig={}", p(kubeconfig)),
        format!("--authorization-kubeconfig={}", p(kubeconfig)),
        format!(
            "--service-account-private-key-file={}",
            p(&pki.service_account_key)
        ),
        format!("--root-ca-file={}", p(&pki.ca_cert)),
        format!("--cluster-signing-cert-file={}", p(&pki.ca_cert)),
        format!("--cluster-signing-key-file={}", p(&pki.ca_key)),
        "--use-service-account-credentials=true".to_owned(),
        "--leader-elect=false".to_owned(),
        format!("--controllers={controllers}"),
        format!(
            "--horizontal-pod-autoscaler-sync-period={}s",
            options.sync_period.as_secs_f64()
        ),
        format!("--kube-api-qps={}", options.manager_qps),
        format!("--kube-api-burst={}", options.manager_burst),
        "--bind-address=127.0.0.1".to_owned(),
        format!("--secure-port={}", free_port()?),
        format!("--cert-dir={}", p(pki_dir)),
    ];
    if !options.feature_gates.is_empty() {
        manager_args.push(format!("--feature-gates={}", options.feature_gates));
    }
    Ok(manager_args)
}

impl ControlPlane {
    /// Starts etcd, the API server and the controller manager, and waits
    /// until the API server serves and the controller manager works.
    pub async fn start(options: &ControlPlaneOptions) -> Result<Self, ControlPlaneError> {
        let dir = tempfile::Builder::new()
            .prefix("hpa-harness-control-plane-")
            .tempdir()
            .map_err(ControlPlaneError::Directory)?;
        let guard = guard::Guard::start(dir.path()).map_err(ControlPlaneError::Directory)?;
        let mut plane = Self {
            components: Vec::new(),
            guard: Some(guard),
            dir: Some(dir),
            kubeconfig: PathBuf::new(),
            server: String::new(),
            version: options.binaries.api_server_version.clone(),
            manager_args: Vec::new(),
        };
        match plane.start_components(options).await {
            Ok(()) => Ok(plane),
            Err(e) => {
                plane.stop().await;
                Err(e)
            }
        }
    }

    fn dir(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), |d| d.path())
    }

    /// etcd, then the API server once etcd answers, then the controller
    /// manager once the API server serves, each with the certificates made
    /// here and its state under the run's directory.
    async fn start_components(
        &mut self,
        options: &ControlPlaneOptions,
    ) -> Result<(), ControlPlaneError> {
        let dir = self.dir().to_path_buf();
        let pki_dir = dir.join("pki");
        std::fs::create_dir_all(&pki_dir).map_err(ControlPlaneError::Directory)?;
        let pki = pki::make(&pki_dir)?;
        let bins = &options.binaries;

        let etcd_url = self.start_etcd(&bins.etcd, &dir.join("etcd")).await?;

        let api_port = free_port()?;
        self.server = format!("https://127.0.0.1:{api_port}");
        let api_args = api_server_args(api_port, &etcd_url, &pki, &pki_dir, options);
        self.spawn("kube-apiserver", &bins.api_server, &api_args)?;
        let admin_kubeconfig = dir.join("kubeconfig");
        self.write_kubeconfig(
            &admin_kubeconfig,
            &pki.ca_pem,
            &pki.admin,
            "hpa-harness-control-plane",
        )?;
        self.kubeconfig = admin_kubeconfig;
        self.wait_api_server(&pki.ca_pem).await?;
        let client = self.client().await?;

        let manager_kubeconfig = dir.join("kube-controller-manager.kubeconfig");
        self.write_kubeconfig(
            &manager_kubeconfig,
            &pki.ca_pem,
            &pki.controller_manager,
            "kube-controller-manager",
        )?;
        let manager_args = controller_manager_args(&manager_kubeconfig, &pki, &pki_dir, options)?;
        self.spawn(
            "kube-controller-manager",
            &bins.controller_manager,
            &manager_args,
        )?;
        self.manager_args = manager_args;
        self.wait_manager(&client).await
    }

    /// Starts etcd on two free loopback ports with its data in `data`, and
    /// waits until it answers; its client URL.
    async fn start_etcd(&mut self, etcd: &Path, data: &Path) -> Result<String, ControlPlaneError> {
        let (etcd_port, peer_port) = (free_port()?, free_port()?);
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        self.spawn(
            "etcd",
            etcd,
            &[
                format!("--data-dir={}", data.display()),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=default={peer_url}"),
                "--name=default".to_owned(),
                // A test cluster's data need not survive a power cut.
                "--unsafe-no-fsync".to_owned(),
                "--log-level=warn".to_owned(),
            ],
        )?;
        self.wait_etcd(&etcd_url).await?;
        Ok(etcd_url)
    }

    /// Writes a kubeconfig for `user` of this API server to `path`.
    fn write_kubeconfig(
        &self,
        path: &Path,
        ca_pem: &str,
        user: &pki::Pem,
        name: &str,
    ) -> Result<(), ControlPlaneError> {
        std::fs::write(path, kubeconfig_text(&self.server, ca_pem, user, name))
            .map_err(ControlPlaneError::Directory)
    }

    fn spawn(
        &mut self,
        name: &'static str,
        path: &Path,
        args: &[String],
    ) -> Result<(), ControlPlaneError> {
        use std::os::unix::process::CommandExt as _;
        let log = self.dir().join(format!("{name}.log"));
        let spawn_err = |source| ControlPlaneError::Spawn {
            name,
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::create(&log).map_err(spawn_err)?;
        let err_file = file.try_clone().map_err(spawn_err)?;
        let mut command = std::process::Command::new(path);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err_file)
            // A group of its own: the terminal's Ctrl-C reaches the
            // harness, which stops the components in order.
            .process_group(0);
        let child = Command::from(command)
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_err)?;
        if let (Some(guard), Some(pid)) = (self.guard.as_mut(), child.id()) {
            guard.watch(pid).map_err(ControlPlaneError::Directory)?;
        }
        self.components.push(Component { name, child, log });
        Ok(())
    }

    /// Fails when the component started last has exited.
    fn check_alive(&mut self) -> Result<(), ControlPlaneError> {
        let Some(component) = self.components.last_mut() else {
            return Ok(());
        };
        if let Ok(Some(status)) = component.child.try_wait() {
            return Err(ControlPlaneError::Exited {
                name: component.name,
                status: status.to_string(),
                log: log_tail(&component.log, 15),
            });
        }
        Ok(())
    }

    fn not_ready(&self, timeout: Duration, last: String) -> ControlPlaneError {
        let (name, log) = self
            .components
            .last()
            .map_or(("the control plane", String::new()), |c| {
                (c.name, log_tail(&c.log, 15))
            });
        ControlPlaneError::NotReady {
            name,
            timeout,
            last,
            log,
        }
    }

    async fn wait_etcd(&mut self, url: &str) -> Result<(), ControlPlaneError> {
        // reqwest is built without a default crypto provider (etcd here is
        // plain HTTP, but the builder asks for one all the same).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| self.not_ready(ETCD_READY_TIMEOUT, e.to_string()))?;
        let deadline = Instant::now() + ETCD_READY_TIMEOUT;
        loop {
            self.check_alive()?;
            let last = match http.get(format!("{url}/health")).send().await {
                Ok(r) => {
                    let text = r.text().await.unwrap_or_default();
                    if text.contains("\"true\"") {
                        return Ok(());
                    }
                    text
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Err(self.not_ready(ETCD_READY_TIMEOUT, last));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Polls `/readyz` (open to anonymous clients once RBAC's defaults are
    /// in) over TLS checked against the cluster's CA.
    async fn wait_api_server(&mut self, ca_pem: &str) -> Result<(), ControlPlaneError> {
        let deadline = Instant::now() + API_READY_TIMEOUT;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Certificate::from_pem(ca_pem.as_bytes())
            .and_then(|ca| {
                reqwest::Client::builder()
                    .add_root_certificate(ca)
                    .timeout(Duration::from_secs(5))
                    .build()
            })
            .map_err(|e| ControlPlaneError::Kubeconfig(e.to_string()))?;
        let url = format!("{}/readyz", self.server);
        loop {
            self.check_alive()?;
            let last = match http.get(&url).send().await {
                Ok(response) => {
                    let status = response.status();
                    let text = response.text().await.unwrap_or_default();
                    if status.is_success() && text.trim() == "ok" {
                        return Ok(());
                    }
                    format!("{status}: {}", text.lines().last().unwrap_or_default())
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Err(self.not_ready(API_READY_TIMEOUT, last));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The controller manager works once its service-account controller
    /// has made `default/default`, which pods need before they can be made.
    async fn wait_manager(&mut self, client: &kube::Client) -> Result<(), ControlPlaneError> {
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
        let deadline = Instant::now() + MANAGER_READY_TIMEOUT;
        loop {
            self.check_alive()?;
            let last = match accounts.get_opt("default").await {
                Ok(Some(_)) => return Ok(()),
                Ok(None) => "no default ServiceAccount yet".to_owned(),
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Err(self.not_ready(MANAGER_READY_TIMEOUT, last));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A client of the API server, as the admin (`system:masters`).
    pub async fn client(&self) -> Result<kube::Client, ControlPlaneError> {
        crate::testbed::kubeconfig::client(Some(&self.kubeconfig), None)
            .await
            .map_err(|e| ControlPlaneError::Kubeconfig(e.to_string()))
    }

    /// The admin kubeconfig (inside the run's directory).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The API server's URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// kube-controller-manager's command line (its HPA flags:
    /// `testbed::controller_manager::hpa_flags`).
    pub fn manager_args(&self) -> &[String] {
        &self.manager_args
    }

    /// What `kube-apiserver --version` said.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The run's directory (certificates, kubeconfigs, etcd's data, logs).
    pub fn directory(&self) -> &Path {
        self.dir()
    }

    /// The process ids of the components and of the guard.
    pub fn pids(&self) -> Vec<u32> {
        self.components
            .iter()
            .filter_map(|c| c.child.id())
            .chain(self.guard.as_ref().map(guard::Guard::pid))
            .collect()
    }

    /// Stops the components (the controller manager first, etcd last),
    /// each given a short grace after SIGTERM, and removes the directory.
    pub async fn stop(mut self) {
        self.stop_components().await;
        if let Some(guard) = self.guard.take() {
            guard.release();
        }
        if let Some(dir) = self.dir.take()
            && let Err(e) = dir.close()
        {
            tracing::warn!(error = %e, "removing the control plane's directory");
        }
    }

    async fn stop_components(&mut self) {
        while let Some(mut component) = self.components.pop() {
            if let Some(pid) = component.child.id() {
                // SIGTERM through kill(1): std and tokio only send SIGKILL.
                let _ = tokio::process::Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .await;
                if tokio::time::timeout(STOP_GRACE, component.child.wait())
                    .await
                    .is_err()
                {
                    let _ = component.child.kill().await;
                }
            }
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        // Not stopped in order (a panic, an early return): kill_on_drop
        // kills each component; the directory goes with its TempDir.
        for component in &mut self.components {
            let _ = component.child.start_kill();
        }
        if let Some(guard) = self.guard.take() {
            guard.release();
        }
    }
}
