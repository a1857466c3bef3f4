//! The flags the cluster's own HPA controller runs with, where the cluster
//! shows them: kubeadm's control planes (kind's among them) run
//! kube-controller-manager as a static pod in `kube-system` (labelled
//! `component=kube-controller-manager`), its flags on its command line.
//! k3s and managed control planes run it out of sight.
//!
//! A scenario that gives the HPA controller flags cannot run where the
//! cluster's controller acts; the refusal then says which flags that
//! controller has, so that a user can tell whether the scenario's premise
//! holds there anyway.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

/// The label kubeadm gives kube-controller-manager's static pod.
const SELECTOR: &str = "component=kube-controller-manager";

/// The flags of a kube-controller-manager command line that shape its HPA
/// controller: the HPA's own, the feature gates, the worker count and the
/// client budget. Others (leader election, certificates) are left out.
pub fn hpa_flags(command_line: &[String]) -> Vec<String> {
    const PREFIXES: [&str; 5] = [
        "--horizontal-pod-autoscaler-",
        "--concurrent-horizontal-pod-autoscaler-syncs",
        "--feature-gates",
        "--kube-api-qps",
        "--kube-api-burst",
    ];
    let mut flags = Vec::new();
    let mut args = command_line.iter().peekable();
    while let Some(arg) = args.next() {
        if !PREFIXES.iter().any(|p| arg.starts_with(p)) {
            continue;
        }
        if arg.contains('=') {
            flags.push(arg.clone());
        } else if let Some(value) = args.next_if(|next| !next.starts_with('-')) {
            flags.push(format!("{arg}={value}"));
        } else {
            flags.push(arg.clone());
        }
    }
    flags
}

/// kube-controller-manager's pod as the cluster shows it: its
/// `namespace/name` and the HPA flags of its command line ([`hpa_flags`]);
/// `None` when `kube-system` holds none (k3s, managed control planes).
pub async fn read(client: &kube::Client) -> Result<Option<(String, Vec<String>)>, kube::Error> {
    let pods = Api::<Pod>::namespaced(client.clone(), "kube-system");
    let listed = pods.list(&ListParams::default().labels(SELECTOR)).await?;
    let Some((pod, container)) = listed
        .items
        .iter()
        .find_map(|p| Some((p, p.spec.as_ref()?.containers.first()?)))
    else {
        return Ok(None);
    };
    let command_line: Vec<String> = container
        .command
        .iter()
        .flatten()
        .chain(container.args.iter().flatten())
        .cloned()
        .collect();
    let name = format!(
        "kube-system/{}",
        pod.metadata.name.as_deref().unwrap_or_default()
    );
    Ok(Some((name, hpa_flags(&command_line))))
}

/// What the cluster shows of its HPA controller's flags, in a sentence.
pub async fn describe(client: &kube::Client) -> String {
    match read(client).await {
        Err(e) => format!(
            "its flags could not be read ({})",
            super::env::kube_error_text(&e)
        ),
        Ok(None) => "its flags are not visible here (no kube-controller-manager pod in kube-system: k3s and managed control planes run it out of sight)".to_owned(),
        Ok(Some((_, flags))) if flags.is_empty() => {
            "it runs with kube-controller-manager's HPA defaults (no HPA flag on its command line)"
                .to_owned()
        }
        Ok(Some((_, flags))) => format!("it runs with {}", flags.join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn the_hpa_flags_are_picked_out_of_a_kubeadm_command_line() {
        let command = line(&[
            "kube-controller-manager",
            "--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf",
            "--horizontal-pod-autoscaler-sync-period=5s",
            "--leader-elect=true",
            "--feature-gates",
            "HPAScaleToZero=true",
            "--concurrent-horizontal-pod-autoscaler-syncs=10",
            "--horizontal-pod-autoscaler-tolerance",
            "0.05",
            "--kube-api-qps=40",
        ]);
        assert_eq!(
            hpa_flags(&command),
            line(&[
                "--horizontal-pod-autoscaler-sync-period=5s",
                "--feature-gates=HPAScaleToZero=true",
                "--concurrent-horizontal-pod-autoscaler-syncs=10",
                "--horizontal-pod-autoscaler-tolerance=0.05",
                "--kube-api-qps=40",
            ])
        );
    }

    #[test]
    fn a_flag_without_a_value_is_kept_as_given() {
        assert_eq!(
            hpa_flags(&line(&["--feature-gates", "--leader-elect"])),
            line(&["--feature-gates"])
        );
        assert!(hpa_flags(&line(&["kube-controller-manager", "--v=2"])).is_empty());
    }
}
