//! The control plane's certificates and keys, made in this process (rcgen)
//! for one run: a cluster CA that signs the API server's serving
//! certificate and the clients' certificates, a front-proxy CA for the
//! aggregation layer (the metrics APIs reach the fake metrics server
//! through it), and the service-account signing key. Nothing outlives the
//! run's directory.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// The names the API server's certificate carries: its loopback address
/// and the in-cluster names of the `kubernetes` Service.
const API_SERVER_NAMES: [&str; 7] = [
    "127.0.0.1",
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
    // The first address of the service range (`SERVICE_RANGE`).
    "10.0.0.1",
];

/// The service range the API server is given; its first address is the
/// `kubernetes` Service's.
pub const SERVICE_RANGE: &str = "10.0.0.0/24";

/// The common name the aggregator's client certificate carries (and the
/// API server allows in `--requestheader-allowed-names`).
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";

/// Why the certificates could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    #[error("making the certificate {name}")]
    Make {
        name: &'static str,
        #[source]
        source: rcgen::Error,
    },
    #[error("writing {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A certificate and its key, as PEM.
#[derive(Debug, Clone)]
pub struct Pem {
    pub cert: String,
    pub key: String,
}

/// Where the files are, and the PEM of what kubeconfigs embed.
#[derive(Debug, Clone)]
pub struct Pki {
    pub ca_cert: PathBuf,
    pub ca_key: PathBuf,
    pub api_server_cert: PathBuf,
    pub api_server_key: PathBuf,
    pub front_proxy_ca_cert: PathBuf,
    pub front_proxy_client_cert: PathBuf,
    pub front_proxy_client_key: PathBuf,
    pub service_account_key: PathBuf,
    pub service_account_pub: PathBuf,
    /// The cluster CA's certificate (kubeconfigs embed it).
    pub ca_pem: String,
    /// A `system:masters` client: the harness and the user.
    pub admin: Pem,
    /// `system:kube-controller-manager`.
    pub controller_manager: Pem,
}

/// One certificate to sign: its common name, organisation, names and use.
struct Leaf<'a> {
    name: &'static str,
    common_name: &'a str,
    organization: Option<&'a str>,
    alt_names: &'a [&'a str],
    usage: ExtendedKeyUsagePurpose,
}

fn ca(
    common_name: &str,
    name: &'static str,
) -> Result<(String, KeyPair, CertificateParams), PkiError> {
    let make = |source| PkiError::Make { name, source };
    let key = KeyPair::generate().map_err(make)?;
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(make)?;
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key).map_err(make)?;
    Ok((cert.pem(), key, params))
}

fn leaf(leaf: &Leaf<'_>, issuer: &Issuer<'_, KeyPair>) -> Result<Pem, PkiError> {
    let make = |source| PkiError::Make {
        name: leaf.name,
        source,
    };
    let key = KeyPair::generate().map_err(make)?;
    let names: Vec<String> = leaf.alt_names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = CertificateParams::new(names).map_err(make)?;
    params
        .distinguished_name
        .push(DnType::CommonName, leaf.common_name);
    if let Some(org) = leaf.organization {
        params
            .distinguished_name
            .push(DnType::OrganizationName, org);
    }
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![leaf.usage.clone()];
    params.use_authority_key_identifier_extension = true;
    let cert = params.signed_by(&key, issuer).map_err(make)?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

fn write(dir: &Path, file: &str, text: &str) -> Result<PathBuf, PkiError> {
    let path = dir.join(file);
    std::fs::write(&path, text).map_err(|source| PkiError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Makes every certificate and key of a control plane and writes them
/// into `dir`.
pub fn make(dir: &Path) -> Result<Pki, PkiError> {
    let (ca_pem, ca_key, ca_params) = ca("hpa-harness-ca", "the cluster CA")?;
    let ca_key_pem = ca_key.serialize_pem();
    let ca_issuer = Issuer::new(ca_params, ca_key);
    let api_server = leaf(
        &Leaf {
            name: "kube-apiserver's serving certificate",
            common_name: "kube-apiserver",
            organization: None,
            alt_names: &API_SERVER_NAMES,
            usage: ExtendedKeyUsagePurpose::ServerAuth,
        },
        &ca_issuer,
    )?;
    let admin = leaf(
        &Leaf {
            name: "the admin client",
            common_name: "hpa-harness-admin",
            organization: Some("system:masters"),
            alt_names: &[],
            usage: ExtendedKeyUsagePurpose::ClientAuth,
        },
        &ca_issuer,
    )?;
    let controller_manager = leaf(
        &Leaf {
            name: "kube-controller-manager's client",
            common_name: "system:kube-controller-manager",
            organization: None,
            alt_names: &[],
            usage: ExtendedKeyUsagePurpose::ClientAuth,
        },
        &ca_issuer,
    )?;
    let (proxy_ca_pem, proxy_ca_key, proxy_ca_params) =
        ca("hpa-harness-front-proxy-ca", "the front-proxy CA")?;
    let proxy_issuer = Issuer::new(proxy_ca_params, proxy_ca_key);
    let proxy_client = leaf(
        &Leaf {
            name: "the aggregator's client",
            common_name: FRONT_PROXY_CLIENT,
            organization: None,
            alt_names: &[],
            usage: ExtendedKeyUsagePurpose::ClientAuth,
        },
        &proxy_issuer,
    )?;
    let sa = KeyPair::generate().map_err(|source| PkiError::Make {
        name: "the service-account key",
        source,
    })?;
    Ok(Pki {
        ca_cert: write(dir, "ca.crt", &ca_pem)?,
        ca_key: write(dir, "ca.key", &ca_key_pem)?,
        api_server_cert: write(dir, "apiserver.crt", &api_server.cert)?,
        api_server_key: write(dir, "apiserver.key", &api_server.key)?,
        front_proxy_ca_cert: write(dir, "front-proxy-ca.crt", &proxy_ca_pem)?,
        front_proxy_client_cert: write(dir, "front-proxy-client.crt", &proxy_client.cert)?,
        front_proxy_client_key: write(dir, "front-proxy-client.key", &proxy_client.key)?,
        service_account_key: write(dir, "sa.key", &sa.serialize_pem())?,
        service_account_pub: write(dir, "sa.pub", &sa.public_key_pem())?,
        ca_pem,
        admin,
        controller_manager,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_written_as_pem() {
        let dir = tempfile::tempdir().unwrap();
        let pki = make(dir.path()).unwrap();
        for path in [
            &pki.ca_cert,
            &pki.api_server_cert,
            &pki.front_proxy_ca_cert,
            &pki.front_proxy_client_cert,
        ] {
            let text = std::fs::read_to_string(path).unwrap();
            assert!(
                text.starts_with("-----BEGIN CERTIFICATE-----"),
                "{}",
                path.display()
            );
        }
        for path in [&pki.ca_key, &pki.api_server_key, &pki.service_account_key] {
            let text = std::fs::read_to_string(path).unwrap();
            assert!(
                text.starts_with("-----BEGIN PRIVATE KEY-----"),
                "{}",
                path.display()
            );
        }
        let public = std::fs::read_to_string(&pki.service_account_pub).unwrap();
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
        assert!(pki.admin.cert.contains("BEGIN CERTIFICATE"));
        // Two runs never share a CA.
        let other = make(tempfile::tempdir().unwrap().path()).unwrap();
        assert_ne!(pki.ca_pem, other.ca_pem);
    }
}
