//! Finding the command-line tools real-cluster backends drive (`kind`, `k3d`,
//! `docker`), with messages that tell a user how to get what is missing.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A tool the real-cluster backends need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// Kubernetes in Docker.
    Kind,
    /// k3s in Docker.
    K3d,
    /// The Docker CLI (and, through it, an engine).
    Docker,
    /// The Kubernetes CLI (optional: used only for diagnostics).
    Kubectl,
}

impl Tool {
    /// The executable's name.
    pub fn binary(self) -> &'static str {
        match self {
            Tool::Kind => "kind",
            Tool::K3d => "k3d",
            Tool::Docker => "docker",
            Tool::Kubectl => "kubectl",
        }
    }

    /// How to install it.
    pub fn install_hint(self) -> &'static str {
        match self {
            Tool::Kind => {
                "install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation, \
                 e.g. `go install sigs.k8s.io/kind@latest`), or use `--backend k3d`, \
                 `--backend k3s` or `--backend kubeconfig`"
            }
            Tool::K3d => {
                "install k3d (https://k3d.io/#installation), or use `--backend kind`, \
                 `--backend k3s` or `--backend kubeconfig`"
            }
            Tool::Docker => {
                "install Docker (https://docs.docker.com/engine/install/) and start its \
                 engine, or use `--backend kubeconfig` with an existing cluster"
            }
            Tool::Kubectl => "install kubectl (https://kubernetes.io/docs/tasks/tools/)",
        }
    }
}

/// A tool is missing or unusable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ToolError {
    /// Not found on `PATH`.
    #[error("`{binary}` was not found on PATH: {hint}", binary = tool.binary(), hint = tool.install_hint())]
    Missing {
        /// Which tool.
        tool: Tool,
    },
    /// Found, but the Docker engine does not answer.
    #[error(
        "`docker` is installed but no Docker engine answers (`docker info` failed: {detail}): \
         start the engine, or use `--backend kubeconfig` with an existing cluster"
    )]
    EngineDown {
        /// What `docker info` said.
        detail: String,
    },
}

/// Finds `name` in the directories of `path_var` (a `PATH`-style list).
pub fn find_in(name: &str, path_var: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path_var)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The path of `tool` on this process's `PATH`, or why it can't be used.
pub fn require(tool: Tool) -> Result<PathBuf, ToolError> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    require_in(tool, &path_var)
}

/// [`require`] with an explicit `PATH`, for tests.
pub fn require_in(tool: Tool, path_var: &OsStr) -> Result<PathBuf, ToolError> {
    find_in(tool.binary(), path_var).ok_or(ToolError::Missing { tool })
}

/// Checks that `docker` is on `path_var` and its engine answers.
pub fn require_docker_engine_in(path_var: &OsStr) -> Result<PathBuf, ToolError> {
    let docker = require_in(Tool::Docker, path_var)?;
    let output = duct::cmd!(&docker, "info", "--format", "{{.ServerVersion}}")
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run()
        .map_err(|e| ToolError::EngineDown {
            detail: e.to_string(),
        })?;
    if output.status.success() {
        Ok(docker)
    } else {
        let detail = String::from_utf8_lossy(&output.stderr)
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim()
            .to_string();
        Err(ToolError::EngineDown { detail })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_kind_says_how_to_install_it_and_what_else_to_use() {
        let empty = std::env::temp_dir().join(format!("hpa-empty-path-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let err = require_in(Tool::Kind, empty.as_os_str()).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("`kind` was not found on PATH"),
            "{message}"
        );
        assert!(message.contains("kind.sigs.k8s.io"), "{message}");
        assert!(message.contains("--backend kubeconfig"), "{message}");
        std::fs::remove_dir_all(&empty).unwrap();
    }

    #[test]
    fn a_missing_k3d_and_docker_are_named() {
        let nowhere = OsStr::new("/nonexistent-dir-for-hpa-harness");
        assert!(
            require_in(Tool::K3d, nowhere)
                .unwrap_err()
                .to_string()
                .contains("k3d.io")
        );
        assert!(
            require_in(Tool::Docker, nowhere)
                .unwrap_err()
                .to_string()
                .contains("start its engine")
        );
    }

    #[test]
    fn an_executable_on_path_is_found_and_a_plain_file_is_not() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("hpa-fake-path-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kind = dir.join("kind");
        std::fs::write(&kind, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&kind, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("k3d"), "not executable").unwrap();
        assert_eq!(require_in(Tool::Kind, dir.as_os_str()).unwrap(), kind);
        assert!(require_in(Tool::K3d, dir.as_os_str()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
