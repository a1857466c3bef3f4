//! Ephemeral kind and k3d clusters, driven with `duct`.
//!
//! A cluster gets a unique name, is deleted when its handle drops (also when a
//! test panics) and when the process is interrupted (Ctrl-C / SIGTERM), unless
//! `HPA_HARNESS_KEEP_CLUSTER=1` asks to keep it for debugging.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::tools::{self, Tool, ToolError};

/// The environment variable that keeps clusters after a run.
pub const KEEP_CLUSTER_ENV: &str = "HPA_HARNESS_KEEP_CLUSTER";

/// Which tool makes the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// kind (Kubernetes in Docker), configured by `clusters/kind.yaml`.
    Kind,
    /// k3d (k3s in Docker), configured by `clusters/k3d.yaml`.
    K3d,
}

impl Provider {
    fn tool(self) -> Tool {
        match self {
            Provider::Kind => Tool::Kind,
            Provider::K3d => Tool::K3d,
        }
    }

    /// The default config file, relative to the project root.
    pub fn default_config(self) -> &'static str {
        match self {
            Provider::Kind => "clusters/kind.yaml",
            Provider::K3d => "clusters/k3d.yaml",
        }
    }
}

/// Errors of the cluster lifecycle.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A tool is missing.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The cluster config file does not exist.
    #[error("cluster config {0} does not exist")]
    MissingConfig(PathBuf),
    /// A command failed.
    #[error("`{command}` failed: {detail}")]
    Command {
        /// The command line.
        command: String,
        /// The end of what it printed.
        detail: String,
    },
    /// Writing the kubeconfig failed.
    #[error("cannot write the kubeconfig {path}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Clusters this process created and has not deleted yet, for interrupt cleanup.
static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

/// A cluster to delete on interrupt: its provider, name and the tool binary.
type Live = (Provider, String, PathBuf);

/// An ephemeral cluster: deleted when dropped unless kept.
#[derive(Debug)]
pub struct EphemeralCluster {
    provider: Provider,
    binary: PathBuf,
    name: String,
    kubeconfig: PathBuf,
    keep: bool,
    deleted: bool,
}

/// Whether `HPA_HARNESS_KEEP_CLUSTER` asks to keep clusters.
pub fn keep_requested() -> bool {
    std::env::var(KEEP_CLUSTER_ENV)
        .map(|v| matches!(v.as_str(), "1" | "true" | "yes"))
        .unwrap_or(false)
}

/// A name no other run uses: `hpa-harness-<pid>-<millis, base 36>`.
pub fn unique_name() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("hpa-harness-{}-{}", std::process::id(), base36(millis))
}

fn base36(mut n: u128) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

fn run(program: &Path, args: &[&str]) -> Result<String, ClusterError> {
    let command = format!("{} {}", program.display(), args.join(" "));
    tracing::info!(%command, "running");
    let output = duct::cmd(program, args)
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .map_err(|e| ClusterError::Command {
            command: command.clone(),
            detail: e.to_string(),
        })?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        Err(ClusterError::Command {
            command,
            detail: tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
        })
    }
}

impl EphemeralCluster {
    /// Creates a cluster from `config`, waits until its control plane is up,
    /// and writes its kubeconfig into `workdir`.
    pub fn create(provider: Provider, config: &Path, workdir: &Path) -> Result<Self, ClusterError> {
        let path_var = std::env::var_os("PATH").unwrap_or_default();
        Self::create_with_path(provider, config, workdir, &path_var)
    }

    /// [`EphemeralCluster::create`] looking for the tools on `path_var`.
    pub fn create_with_path(
        provider: Provider,
        config: &Path,
        workdir: &Path,
        path_var: &std::ffi::OsStr,
    ) -> Result<Self, ClusterError> {
        let binary = tools::require_in(provider.tool(), path_var)?;
        tools::require_docker_engine_in(path_var)?;
        if !config.is_file() {
            return Err(ClusterError::MissingConfig(config.to_path_buf()));
        }
        let name = unique_name();
        let kubeconfig = workdir.join(format!("{name}.kubeconfig"));
        let config_arg = config.display().to_string();
        let kubeconfig_arg = kubeconfig.display().to_string();
        register(provider, &name, &binary);
        let created = match provider {
            Provider::Kind => run(
                &binary,
                &[
                    "create",
                    "cluster",
                    "--name",
                    &name,
                    "--config",
                    &config_arg,
                    "--kubeconfig",
                    &kubeconfig_arg,
                    "--wait",
                    "3m",
                ],
            )
            .map(|_| ()),
            Provider::K3d => run(
                &binary,
                &[
                    "cluster",
                    "create",
                    &name,
                    "--config",
                    &config_arg,
                    "--wait",
                    "--timeout",
                    "3m",
                    "--kubeconfig-update-default=false",
                    "--kubeconfig-switch-context=false",
                ],
            )
            .and_then(|_| run(&binary, &["kubeconfig", "get", &name]))
            .and_then(|text| {
                std::fs::write(&kubeconfig, text).map_err(|source| ClusterError::Kubeconfig {
                    path: kubeconfig.clone(),
                    source,
                })
            }),
        };
        let cluster = Self {
            provider,
            binary,
            name,
            kubeconfig,
            keep: keep_requested(),
            deleted: false,
        };
        // On failure the handle drops here and deletes what was half made.
        created.map(|()| cluster)
    }

    /// The cluster's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kubeconfig file for the cluster.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Loads a local Docker image into the cluster's nodes.
    pub fn load_image(&self, image: &str) -> Result<(), ClusterError> {
        let binary = self.binary.as_path();
        match self.provider {
            Provider::Kind => run(
                binary,
                &["load", "docker-image", image, "--name", &self.name],
            ),
            Provider::K3d => run(binary, &["image", "import", image, "-c", &self.name]),
        }
        .map(|_| ())
    }

    /// Deletes the cluster now (unless kept), reporting failure.
    pub fn delete(mut self) -> Result<(), ClusterError> {
        self.delete_inner()
    }

    fn delete_inner(&mut self) -> Result<(), ClusterError> {
        if self.deleted {
            return Ok(());
        }
        self.deleted = true;
        if self.keep {
            eprintln!(
                "keeping cluster {} ({KEEP_CLUSTER_ENV} is set); kubeconfig: {}",
                self.name,
                self.kubeconfig.display()
            );
            unregister(&self.name);
            return Ok(());
        }
        let result = delete_cluster(self.provider, &self.name, &self.binary);
        unregister(&self.name);
        let _ = std::fs::remove_file(&self.kubeconfig);
        result
    }
}

impl Drop for EphemeralCluster {
    fn drop(&mut self) {
        if let Err(err) = self.delete_inner() {
            eprintln!("warning: could not delete cluster {}: {err}", self.name);
        }
    }
}

fn delete_cluster(provider: Provider, name: &str, binary: &Path) -> Result<(), ClusterError> {
    match provider {
        Provider::Kind => run(binary, &["delete", "cluster", "--name", name]),
        Provider::K3d => run(binary, &["cluster", "delete", name]),
    }
    .map(|_| ())
}

fn register(provider: Provider, name: &str, binary: &Path) {
    if let Ok(mut live) = LIVE.lock() {
        live.push((provider, name.to_string(), binary.to_path_buf()));
    }
}

fn unregister(name: &str) {
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|(_, n, _)| n != name);
    }
}

/// Deletes every cluster this process still holds when it is interrupted
/// (Ctrl-C or SIGTERM), then exits with 130. Call once, inside a tokio runtime.
pub fn delete_on_interrupt() {
    tokio::spawn(async {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            _ = ctrl_c => {}
            () = term => {}
        }
        let live: Vec<Live> = LIVE.lock().map(|l| l.clone()).unwrap_or_default();
        if !keep_requested() {
            for (provider, name, binary) in live {
                eprintln!("interrupted: deleting cluster {name}");
                if let Err(err) = delete_cluster(provider, &name, &binary) {
                    eprintln!("warning: could not delete cluster {name}: {err}");
                }
            }
        }
        std::process::exit(130);
    });
}

/// How long to wait for a fresh cluster's API to serve nodes.
pub const READY_TIMEOUT: Duration = Duration::from_secs(180);

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A folder with fake `docker` and `kind`/`k3d` scripts that log their
    /// arguments, so the lifecycle runs for real without Docker.
    struct FakeTools {
        dir: PathBuf,
    }

    impl FakeTools {
        fn new(tag: &str, docker_ok: bool) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "hpa-fake-tools-{tag}-{}-{}",
                std::process::id(),
                unique_name()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let log = dir.join("calls.log");
            let script = |name: &str, body: &str| {
                let path = dir.join(name);
                std::fs::write(
                    &path,
                    format!(
                        "#!/bin/sh\necho \"{name} $*\" >> {}\n{body}\n",
                        log.display()
                    ),
                )
                .unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            };
            if docker_ok {
                script("docker", "echo 28.2.2");
            } else {
                script(
                    "docker",
                    "echo 'Cannot connect to the Docker daemon' >&2; exit 1",
                );
            }
            script("kind", "exit 0");
            script(
                "k3d",
                "if [ \"$1\" = kubeconfig ]; then echo 'apiVersion: v1'; fi",
            );
            std::fs::write(dir.join("kind.yaml"), "kind: Cluster\n").unwrap();
            Self { dir }
        }

        fn calls(&self) -> String {
            std::fs::read_to_string(self.dir.join("calls.log")).unwrap_or_default()
        }
    }

    impl Drop for FakeTools {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    #[test]
    fn names_are_unique_valid_dns_labels() {
        let a = unique_name();
        std::thread::sleep(Duration::from_millis(2));
        let b = unique_name();
        assert_ne!(a, b);
        for name in [a, b] {
            assert!(name.len() <= 40, "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{name}"
            );
        }
    }

    #[test]
    fn a_kind_cluster_is_created_with_our_config_and_deleted_on_drop() {
        let tools = FakeTools::new("kind", true);
        let config = tools.dir.join("kind.yaml");
        let cluster = EphemeralCluster::create_with_path(
            Provider::Kind,
            &config,
            &tools.dir,
            tools.dir.as_os_str(),
        )
        .unwrap();
        let name = cluster.name().to_string();
        assert!(cluster.kubeconfig().starts_with(&tools.dir));
        let calls = tools.calls();
        assert!(
            calls.contains(&format!(
                "kind create cluster --name {name} --config {}",
                config.display()
            )),
            "{calls}"
        );
        drop(cluster);
        assert!(
            tools
                .calls()
                .contains(&format!("kind delete cluster --name {name}"))
        );
        assert!(LIVE.lock().unwrap().iter().all(|(_, n, _)| n != &name));
    }

    #[test]
    fn a_k3d_cluster_writes_its_kubeconfig() {
        let tools = FakeTools::new("k3d", true);
        let config = tools.dir.join("kind.yaml");
        let cluster = EphemeralCluster::create_with_path(
            Provider::K3d,
            &config,
            &tools.dir,
            tools.dir.as_os_str(),
        )
        .unwrap();
        let text = std::fs::read_to_string(cluster.kubeconfig()).unwrap();
        assert!(text.contains("apiVersion: v1"));
        let name = cluster.name().to_string();
        cluster.delete().unwrap();
        assert!(
            tools
                .calls()
                .contains(&format!("k3d cluster delete {name}"))
        );
    }

    #[test]
    fn a_stopped_docker_engine_is_reported_before_anything_is_created() {
        let tools = FakeTools::new("nodocker", false);
        let config = tools.dir.join("kind.yaml");
        let err = EphemeralCluster::create_with_path(
            Provider::Kind,
            &config,
            &tools.dir,
            tools.dir.as_os_str(),
        )
        .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("no Docker engine answers"), "{message}");
        assert!(
            message.contains("Cannot connect to the Docker daemon"),
            "{message}"
        );
        assert!(!tools.calls().contains("kind create"));
    }

    #[test]
    fn a_missing_kind_is_reported_with_a_hint() {
        let empty = std::env::temp_dir().join(format!("hpa-no-kind-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let err = EphemeralCluster::create_with_path(
            Provider::Kind,
            Path::new("clusters/kind.yaml"),
            &empty,
            empty.as_os_str(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("`kind` was not found on PATH"));
        std::fs::remove_dir_all(&empty).unwrap();
    }

    #[test]
    fn base36_counts() {
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
    }
}
