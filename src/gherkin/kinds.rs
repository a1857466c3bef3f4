//! The object kind a step names: `deployment`, `Deployment`, a resource
//! (`ingresses`), or either with its group (`ingress.networking.k8s.io`),
//! resolved through the cluster's discovery, as `kubectl get` resolves its
//! argument. Custom resources of the cluster's CRDs resolve the same way.

use kube::discovery::{ApiResource, Discovery, Scope};

use super::step_error::StepError;

/// A kind as the HPA and the custom metrics API name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindRef {
    /// `apps/v1`, `v1`, `networking.k8s.io/v1`.
    pub api_version: String,
    /// `Deployment`, `Ingress`.
    pub kind: String,
    /// The custom metrics API's resource: `deployments.apps`, `services`.
    pub resource: String,
    /// The plural in URLs: `deployments`.
    pub plural: String,
    /// Whether objects of the kind live in a namespace.
    pub namespaced: bool,
}

/// One served resource, as discovery lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
}

impl Served {
    fn kind_ref(&self) -> KindRef {
        KindRef {
            api_version: if self.group.is_empty() {
                self.version.clone()
            } else {
                format!("{}/{}", self.group, self.version)
            },
            kind: self.kind.clone(),
            resource: if self.group.is_empty() {
                self.plural.clone()
            } else {
                format!("{}.{}", self.plural, self.group)
            },
            plural: self.plural.clone(),
            namespaced: self.namespaced,
        }
    }
}

/// Matches `word` against what the cluster serves: the kind in any case,
/// the plural, or the kind's lower case (its singular), optionally followed
/// by `.group`. Among several groups, the core group, then `apps`, then
/// the first served wins (as kubectl prefers built-in groups).
pub fn resolve_in(word: &str, served: &[Served]) -> Result<KindRef, StepError> {
    let (name, group) = match word.split_once('.') {
        Some((n, g)) => (n, Some(g)),
        None => (word, None),
    };
    let lower = name.to_ascii_lowercase();
    let matches = |s: &&Served| {
        group.is_none_or(|g| s.group == g)
            && (s.kind.eq_ignore_ascii_case(name)
                || s.plural == lower
                || s.kind.to_ascii_lowercase() == lower)
    };
    let rank = |s: &Served| match s.group.as_str() {
        "" => 0,
        "apps" => 1,
        _ => 2,
    };
    served
        .iter()
        .filter(matches)
        .min_by_key(|s| rank(s))
        .map(Served::kind_ref)
        .ok_or_else(|| {
            StepError::Input(format!(
                "kind {word:?}: the cluster serves no such kind (write a kind such as Deployment or Ingress, a resource such as ingresses, or kind.group such as ingress.networking.k8s.io)"
            ))
        })
}

/// What the cluster serves, in each group's preferred version.
pub async fn served(client: &kube::Client) -> Result<Vec<Served>, StepError> {
    // The metrics groups are the fake metrics server's, behind aggregation;
    // they describe no objects.
    let discovery = Discovery::new(client.clone())
        .exclude(&[
            "metrics.k8s.io",
            "custom.metrics.k8s.io",
            "external.metrics.k8s.io",
        ])
        .run()
        .await
        .map_err(StepError::kube("discovering the cluster's kinds"))?;
    let mut out = Vec::new();
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            let ApiResource {
                group,
                version,
                kind,
                plural,
                ..
            } = ar;
            out.push(Served {
                group,
                version,
                kind,
                plural,
                namespaced: caps.scope == Scope::Namespaced,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(group: &str, kind: &str, plural: &str) -> Served {
        Served {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            namespaced: true,
        }
    }

    fn table() -> Vec<Served> {
        vec![
            s("", "Service", "services"),
            s("apps", "Deployment", "deployments"),
            s("networking.k8s.io", "Ingress", "ingresses"),
            s("", "Event", "events"),
            s("events.k8s.io", "Event", "events"),
            s("argoproj.io", "Rollout", "rollouts"),
        ]
    }

    #[test]
    fn a_kind_in_any_case_a_resource_or_kind_dot_group() {
        for word in ["deployment", "Deployment", "deployments", "deployment.apps"] {
            let k = resolve_in(word, &table()).unwrap();
            assert_eq!(
                (k.api_version.as_str(), k.kind.as_str(), k.resource.as_str()),
                ("apps/v1", "Deployment", "deployments.apps"),
                "{word}"
            );
        }
        for word in [
            "ingress",
            "ingresses",
            "ingress.networking.k8s.io",
            "Ingress",
        ] {
            let k = resolve_in(word, &table()).unwrap();
            assert_eq!(k.resource, "ingresses.networking.k8s.io", "{word}");
            assert_eq!(k.api_version, "networking.k8s.io/v1");
        }
        assert_eq!(resolve_in("rollout", &table()).unwrap().kind, "Rollout");
    }

    #[test]
    fn the_core_group_wins_and_an_unknown_kind_is_named() {
        assert_eq!(resolve_in("event", &table()).unwrap().api_version, "v1");
        assert_eq!(
            resolve_in("event.events.k8s.io", &table())
                .unwrap()
                .api_version,
            "events.k8s.io/v1"
        );
        let err = resolve_in("gizmo", &table()).unwrap_err().to_string();
        assert!(
            err.starts_with("kind \"gizmo\": the cluster serves no such kind"),
            "{err}"
        );
    }
}
