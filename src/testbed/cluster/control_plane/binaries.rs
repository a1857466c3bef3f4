//! Where the control plane's binaries come from: `--control-plane-bin DIR`,
//! else `$KUBEBUILDER_ASSETS` (controller-runtime envtest's layout: `etcd`
//! and `kube-apiserver`, here with `kube-controller-manager` beside them).
//! Each is checked before anything starts: present, executable, and
//! answering `--version`, so that a wrong folder is named with how to fill
//! it rather than found out from a process that died.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable envtest reads its binaries' folder from.
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";

/// The three binaries, in the order they start.
pub const NAMES: [&str; 3] = ["etcd", "kube-apiserver", "kube-controller-manager"];

/// How users get the binaries, in the words of an error.
const HOW_TO_GET: &str = "get etcd and kube-apiserver with `setup-envtest use 1.36 -p path` \
     (controller-runtime's envtest), and kube-controller-manager from the \
     kubernetes-server release tarball (kubernetes-server-linux-amd64.tar.gz, \
     server/bin/), all in one folder; pass it as --control-plane-bin DIR or \
     KUBEBUILDER_ASSETS=DIR";

/// Why the binaries cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BinariesError {
    #[error(
        "no control-plane binaries: pass --control-plane-bin DIR or set {ASSETS_ENV}; {HOW_TO_GET}"
    )]
    NoFolder,
    #[error("the control-plane folder {dir} does not exist; {HOW_TO_GET}", dir = .0.display())]
    NoSuchFolder(PathBuf),
    #[error("{file} is missing from the control-plane folder {dir}; {HOW_TO_GET}", dir = .dir.display())]
    Missing { dir: PathBuf, file: &'static str },
    #[error("{path} cannot run ({reason}); {HOW_TO_GET}", path = .path.display())]
    Unrunnable { path: PathBuf, reason: String },
}

/// The three binaries and what each says of its version.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub dir: PathBuf,
    pub etcd: PathBuf,
    pub api_server: PathBuf,
    pub controller_manager: PathBuf,
    /// `kube-apiserver --version`, e.g. `Kubernetes v1.36.2`.
    pub api_server_version: String,
}

/// The folder of `flag`, else of `$KUBEBUILDER_ASSETS` (`env`).
pub fn folder(
    flag: Option<&Path>,
    env: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, BinariesError> {
    flag.map(Path::to_path_buf)
        .or_else(|| env.filter(|v| !v.is_empty()).map(PathBuf::from))
        .ok_or(BinariesError::NoFolder)
}

/// Finds and checks the binaries in `dir`.
pub fn check(dir: &Path) -> Result<Binaries, BinariesError> {
    if !dir.is_dir() {
        return Err(BinariesError::NoSuchFolder(dir.to_path_buf()));
    }
    let mut versions = Vec::new();
    for file in NAMES {
        let path = dir.join(file);
        if !path.exists() {
            return Err(BinariesError::Missing {
                dir: dir.to_path_buf(),
                file,
            });
        }
        versions.push(version(&path)?);
    }
    Ok(Binaries {
        dir: dir.to_path_buf(),
        etcd: dir.join(NAMES[0]),
        api_server: dir.join(NAMES[1]),
        controller_manager: dir.join(NAMES[2]),
        api_server_version: versions.swap_remove(1),
    })
}

/// The first line `path --version` prints.
fn version(path: &Path) -> Result<String, BinariesError> {
    let unrunnable = |reason: String| BinariesError::Unrunnable {
        path: path.to_path_buf(),
        reason,
    };
    let output = Command::new(path)
        .arg("--version")
        .output()
        .map_err(|e| unrunnable(e.to_string()))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(unrunnable(format!(
            "`--version` exited with {}: {}",
            output.status,
            said.lines().next().unwrap_or_default()
        )));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text.lines().next().unwrap_or_default().trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, body: &str) {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_flag_wins_over_the_environment_and_neither_is_an_error() {
        let env = std::ffi::OsStr::new("/from-env");
        assert_eq!(
            folder(Some(Path::new("/flag")), Some(env)).unwrap(),
            PathBuf::from("/flag")
        );
        assert_eq!(folder(None, Some(env)).unwrap(), PathBuf::from("/from-env"));
        let none = folder(None, Some(std::ffi::OsStr::new(""))).unwrap_err();
        let text = none.to_string();
        assert!(text.contains("--control-plane-bin DIR"), "{text}");
        assert!(text.contains("setup-envtest use 1.36 -p path"), "{text}");
        assert!(text.contains("kubernetes-server"), "{text}");
    }

    #[test]
    fn a_missing_binary_is_named_with_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "etcd", "echo 'etcd Version: 3.6.13'");
        script(dir.path(), "kube-apiserver", "echo 'Kubernetes v1.36.2'");
        let err = check(dir.path()).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "kube-controller-manager is missing from the control-plane folder {}",
                dir.path().display()
            )),
            "{err}"
        );
    }

    #[test]
    fn a_binary_that_cannot_run_is_named_with_why() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "etcd", "echo 'etcd Version: 3.6.13'");
        script(
            dir.path(),
            "kube-apiserver",
            "echo 'exec format error' >&2; exit 126",
        );
        script(
            dir.path(),
            "kube-controller-manager",
            "echo 'Kubernetes v1.36.2'",
        );
        let err = check(dir.path()).unwrap_err().to_string();
        assert!(err.contains("kube-apiserver cannot run"), "{err}");
        assert!(err.contains("exec format error"), "{err}");
        // Not executable at all.
        std::fs::set_permissions(
            dir.path().join("etcd"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let err = check(dir.path()).unwrap_err().to_string();
        assert!(err.contains("etcd cannot run"), "{err}");
    }

    #[test]
    fn working_binaries_give_the_api_servers_version() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "etcd", "echo 'etcd Version: 3.6.13'");
        script(dir.path(), "kube-apiserver", "echo 'Kubernetes v1.36.2'");
        script(
            dir.path(),
            "kube-controller-manager",
            "echo 'Kubernetes v1.36.2'",
        );
        let found = check(dir.path()).unwrap();
        assert_eq!(found.api_server_version, "Kubernetes v1.36.2");
        assert_eq!(
            found.controller_manager,
            dir.path().join("kube-controller-manager")
        );
        let err = check(&dir.path().join("nope")).unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
    }
}
