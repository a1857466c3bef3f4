//! Pod names as kube-controller-manager makes them, for a sim that should
//! behave as a real cluster does (`SimConfig::generated_pod_names`): a
//! Deployment's pods are `<deployment>-<pod-template-hash>-<5 random>`
//! (its ReplicaSet is `<deployment>-<hash>`), a ReplicaSet's
//! `<replicaset>-<5 random>`. Clients then cannot guess a pod's name, as on
//! a real cluster. The "random" part is drawn from a sequence, so a run is
//! reproducible.

use serde_json::Value;

/// apimachinery's `rand.SafeEncodeString` alphabet: no vowels (no words),
/// no look-alikes (0, 1, 3).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The label kube-controller-manager puts on a Deployment's pods.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

fn safe_encode(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// 32-bit FNV-1a, the hash `controller.ComputeHash` uses.
fn fnv32a(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// The `pod-template-hash` of a pod template: FNV-1a of the template, its
/// decimal digits safe-encoded, as `controller.ComputeHash` renders it.
pub fn template_hash(template: &Value) -> String {
    let hash = fnv32a(template.to_string().as_bytes());
    safe_encode(hash.to_string().as_bytes())
}

/// Five characters of the safe alphabet for sequence number `seq`
/// (splitmix64, so neighbouring numbers look unrelated).
pub fn random_suffix(seq: u64) -> String {
    let mut z = seq.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let bytes: Vec<u8> = z.to_le_bytes()[..5].to_vec();
    safe_encode(&bytes)
}

/// The name of a new pod of workload `name` of `kind` (`Deployment`,
/// `ReplicaSet`), and the `pod-template-hash` label it carries (a
/// Deployment's pods only). `None` for kinds that name pods by ordinal
/// (StatefulSet).
pub fn generated(
    kind: &str,
    name: &str,
    template: &Value,
    seq: u64,
) -> Option<(String, Option<String>)> {
    match kind {
        "Deployment" => {
            let hash = template_hash(template);
            Some((format!("{name}-{hash}-{}", random_suffix(seq)), Some(hash)))
        }
        "ReplicaSet" => Some((format!("{name}-{}", random_suffix(seq)), None)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deployment_pods_are_named_as_kube_controller_manager_names_them() {
        let template = json!({"metadata": {"labels": {"app": "w0"}}, "spec": {"containers": []}});
        let (name, hash) = generated("Deployment", "w0", &template, 1).unwrap();
        let hash = hash.unwrap();
        let parts: Vec<&str> = name.split('-').collect();
        assert_eq!(parts.len(), 3, "{name}");
        assert_eq!(parts[0], "w0");
        assert_eq!(parts[1], hash);
        assert_eq!(parts[2].len(), 5);
        let safe = |s: &str| s.bytes().all(|b| ALPHABET.contains(&b));
        assert!(safe(parts[1]) && safe(parts[2]), "{name}");
        assert!((1..=10).contains(&hash.len()));
        // One template, one hash; another template, another hash.
        assert_eq!(
            generated("Deployment", "w0", &template, 2).unwrap().1,
            Some(hash.clone())
        );
        let other = json!({"metadata": {"labels": {"app": "w1"}}, "spec": {"containers": []}});
        assert_ne!(template_hash(&other), hash);
    }

    #[test]
    fn suffixes_differ_and_kinds_that_count_keep_their_ordinals() {
        let suffixes: std::collections::BTreeSet<String> = (0..1000).map(random_suffix).collect();
        assert!(suffixes.len() > 990, "{} distinct of 1000", suffixes.len());
        let (rs_pod, hash) = generated("ReplicaSet", "web-7d9c5b", &json!({}), 7).unwrap();
        assert!(rs_pod.starts_with("web-7d9c5b-") && rs_pod.len() == "web-7d9c5b-".len() + 5);
        assert_eq!(hash, None);
        assert_eq!(generated("StatefulSet", "db", &json!({}), 7), None);
    }

    #[test]
    fn fnv32a_matches_the_reference_vectors() {
        assert_eq!(fnv32a(b""), 0x811c_9dc5);
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(b"foobar"), 0xbf9c_f968);
    }
}
