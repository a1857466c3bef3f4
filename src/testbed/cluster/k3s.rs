//! k3s in a container through `testcontainers` (feature `e2e`).
//!
//! The container runs a pinned k3s release with metrics-server and traefik
//! disabled (fake-metrics-server owns the metrics groups) and, unless the
//! upstream controller is under test, without kube-controller-manager's HPA
//! controller. It is removed when the handle drops.

use std::path::{Path, PathBuf};

use testcontainers_modules::k3s::{K3s, KUBE_SECURE_PORT};
use testcontainers_modules::testcontainers::runners::AsyncRunner;
use testcontainers_modules::testcontainers::{ContainerAsync, ImageExt};

use super::ephemeral::ClusterError;
use super::tools;

/// The k3s image tag: the Kubernetes version hpa-harness follows.
pub const K3S_IMAGE_TAG: &str = "v1.36.0-k3s1";

/// A running k3s container and its kubeconfig.
pub struct K3sCluster {
    container: ContainerAsync<K3s>,
    kubeconfig: PathBuf,
}

impl std::fmt::Debug for K3sCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("K3sCluster")
            .field("id", &self.container.id())
            .field("kubeconfig", &self.kubeconfig)
            .finish()
    }
}

/// The k3s server arguments.
pub fn server_args(with_upstream_hpa_controller: bool) -> Vec<String> {
    let mut args = vec![
        "server".to_string(),
        "--snapshotter=native".to_string(),
        "--disable=metrics-server".to_string(),
        "--disable=traefik".to_string(),
        "--kube-apiserver-arg=feature-gates=HPAScaleToZero=true".to_string(),
    ];
    if !with_upstream_hpa_controller {
        args.push(
            "--kube-controller-manager-arg=controllers=*,-horizontal-pod-autoscaler-controller"
                .to_string(),
        );
    }
    args
}

/// Points the kubeconfig k3s wrote at the port Docker mapped on the host.
pub fn rewrite_server_port(kubeconfig: &str, host_port: u16) -> String {
    kubeconfig.replace(
        "https://127.0.0.1:6443",
        &format!("https://127.0.0.1:{host_port}"),
    )
}

impl K3sCluster {
    /// Starts k3s and waits until its node controller has synced. `workdir`
    /// receives the kubeconfig (`k3s.yaml` from the container, rewritten).
    pub async fn start(
        workdir: &Path,
        with_upstream_hpa_controller: bool,
    ) -> Result<Self, ClusterError> {
        tools::require_docker_engine_in(&std::env::var_os("PATH").unwrap_or_default())?;
        let conf_dir = workdir.join("k3s-conf");
        std::fs::create_dir_all(&conf_dir).map_err(|source| ClusterError::Kubeconfig {
            path: conf_dir.clone(),
            source,
        })?;
        let image = K3s::default().with_conf_mount(&conf_dir);
        let container = image
            .with_tag(K3S_IMAGE_TAG)
            .with_cmd(server_args(with_upstream_hpa_controller))
            .with_privileged(true)
            .with_userns_mode("host")
            .start()
            .await
            .map_err(|e| ClusterError::Command {
                command: format!("start rancher/k3s:{K3S_IMAGE_TAG}"),
                detail: e.to_string(),
            })?;
        let port = container
            .get_host_port_ipv4(KUBE_SECURE_PORT)
            .await
            .map_err(|e| ClusterError::Command {
                command: "find the k3s API port".to_string(),
                detail: e.to_string(),
            })?;
        let raw =
            container
                .image()
                .read_kube_config()
                .map_err(|source| ClusterError::Kubeconfig {
                    path: conf_dir.join("k3s.yaml"),
                    source,
                })?;
        let kubeconfig = workdir.join("k3s.kubeconfig");
        std::fs::write(&kubeconfig, rewrite_server_port(&raw, port)).map_err(|source| {
            ClusterError::Kubeconfig {
                path: kubeconfig.clone(),
                source,
            }
        })?;
        Ok(Self {
            container,
            kubeconfig,
        })
    }

    /// The kubeconfig file for the cluster.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Stops and removes the container now.
    pub async fn delete(self) -> Result<(), ClusterError> {
        self.container
            .rm()
            .await
            .map_err(|e| ClusterError::Command {
                command: "remove the k3s container".to_string(),
                detail: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_args_drop_metrics_server_and_our_rival_controller() {
        let ours = server_args(false);
        assert!(ours.contains(&"--disable=metrics-server".to_string()));
        assert!(
            ours.iter()
                .any(|a| a.ends_with("-horizontal-pod-autoscaler-controller"))
        );
        let upstream = server_args(true);
        assert!(
            !upstream
                .iter()
                .any(|a| a.contains("horizontal-pod-autoscaler-controller"))
        );
    }

    #[test]
    fn kubeconfig_points_at_the_mapped_port() {
        let text = "clusters:\n- cluster:\n    server: https://127.0.0.1:6443\n";
        assert!(rewrite_server_port(text, 32768).contains("https://127.0.0.1:32768"));
    }
}
