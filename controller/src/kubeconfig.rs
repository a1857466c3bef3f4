//! Reading a kubeconfig into a client configuration: the one loader of the
//! controller's command line (`--kubeconfig`, `--context`) and of the
//! harness's testbed (every place that reaches a cluster through one).

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

/// Why a kubeconfig gives no client configuration.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read or parsed.
    #[error("cannot read kubeconfig {}", shown(.path.as_deref()))]
    Read {
        /// The file; `None`: `$KUBECONFIG` or `~/.kube/config`.
        path: Option<PathBuf>,
        #[source]
        source: KubeconfigError,
    },
    /// It was read, but its context, cluster or user is not usable.
    #[error("cannot load kubeconfig {}", shown(.path.as_deref()))]
    Load {
        /// The file; `None`: `$KUBECONFIG` or `~/.kube/config`.
        path: Option<PathBuf>,
        #[source]
        source: KubeconfigError,
    },
}

/// How a kubeconfig read from the default places is named in messages.
pub const DEFAULT_PLACES: &str = "$KUBECONFIG or ~/.kube/config";

fn shown(path: Option<&Path>) -> String {
    path.map_or_else(|| DEFAULT_PLACES.to_owned(), |p| p.display().to_string())
}

impl LoadError {
    /// kube's own error: what exactly was wrong.
    pub fn kube_error(&self) -> &KubeconfigError {
        match self {
            Self::Read { source, .. } | Self::Load { source, .. } => source,
        }
    }
}

/// The client configuration of `path` (`None`: `$KUBECONFIG`, one or more
/// files, or `~/.kube/config`) and `context` (`None`: its current one).
pub async fn load(path: Option<&Path>, context: Option<&str>) -> Result<kube::Config, LoadError> {
    let kubeconfig = match path {
        Some(path) => Kubeconfig::read_from(path),
        None => Kubeconfig::read(),
    }
    .map_err(|source| LoadError::Read {
        path: path.map(Path::to_path_buf),
        source,
    })?;
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|source| LoadError::Load {
            path: path.map(Path::to_path_buf),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_file_is_a_read_error_naming_it() {
        let path = Path::new("/nonexistent/hpa-controller-kubeconfig-test");
        let err = load(Some(path), None).await.unwrap_err();
        assert!(matches!(err, LoadError::Read { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "cannot read kubeconfig /nonexistent/hpa-controller-kubeconfig-test"
        );
    }
}
