//! Which Kubernetes release's semantics to use on a cluster: the one its API
//! server reports on `/version`, unless `--kubernetes-version` says.

use hpa_core::version::{KubernetesVersion, VersionError};

/// Why the server's release could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// `/version` did not answer.
    #[error("reading the API server's /version")]
    Request(#[source] kube::Error),
    /// Its `major`/`minor` are not numbers.
    #[error("the API server's /version reports major {major:?}, minor {minor:?}")]
    Numbers {
        major: String,
        minor: String,
        #[source]
        source: VersionError,
    },
}

/// The release of a server reporting `major` and `minor` as `/version` does
/// (`"1"`, `"37"`; managed clusters add a `+`, as in `"37+"`), and a warning
/// when it is outside the supported range.
pub fn of_server_numbers(
    major: &str,
    minor: &str,
) -> Result<(KubernetesVersion, Option<String>), ReleaseError> {
    let digits = |s: &str| s.trim().trim_end_matches('+').to_owned();
    let (major_n, minor_n) =
        KubernetesVersion::parse_numbers(&format!("{}.{}", digits(major), digits(minor))).map_err(
            |source| ReleaseError::Numbers {
                major: major.to_owned(),
                minor: minor.to_owned(),
                source,
            },
        )?;
    Ok(KubernetesVersion::for_server(major_n, minor_n))
}

/// Asks the cluster for its release (see [`of_server_numbers`]).
pub async fn of_server(
    client: &kube::Client,
) -> Result<(KubernetesVersion, Option<String>), ReleaseError> {
    let info = client
        .apiserver_version()
        .await
        .map_err(ReleaseError::Request)?;
    of_server_numbers(&info.major, &info.minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_numbers_pick_the_release() {
        assert_eq!(
            of_server_numbers("1", "36").unwrap(),
            (KubernetesVersion::V1_36, None)
        );
        assert_eq!(
            of_server_numbers("1", "37+").unwrap(),
            (KubernetesVersion::V1_37, None)
        );
        assert_eq!(
            of_server_numbers("1", "35").unwrap(),
            (KubernetesVersion::V1_35, None)
        );
        let (v, warning) = of_server_numbers("1", "33").unwrap();
        assert_eq!(v, KubernetesVersion::V1_35);
        assert!(warning.unwrap().contains("1.33"));
        let err = of_server_numbers("1", "x").unwrap_err().to_string();
        assert!(err.contains("minor \"x\""), "{err}");
    }
}
