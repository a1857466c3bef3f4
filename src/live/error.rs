//! Why a live HPA could not be explained or captured: one line each, the
//! server's own words inside, never a chain of causes.

/// What the needed role grants, for the refusal message.
pub const RBAC_HINT: &str = "explain and capture need get and list on horizontalpodautoscalers, the scale subresource, pods and the metrics APIs, and list on apiservices (deploy/explain-rbac.yaml)";

/// Why reading or explaining a live HPA failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// The kubeconfig could not be read or used.
    #[error("{0}")]
    Kubeconfig(String),
    /// The argument is not `NAMESPACE/NAME` or `NAME`.
    #[error("{0:?} is not NAMESPACE/NAME or NAME of an HPA")]
    BadName(String),
    /// The HPA does not exist.
    #[error("HPA {namespace}/{name} not found")]
    HpaNotFound { namespace: String, name: String },
    /// A list found no HPA.
    #[error("no HPA found {scope}")]
    NoHpas { scope: String },
    /// RBAC denied a request: the verb and resource it denied.
    #[error("RBAC denies {verb} on {resource}{}: {message}; {RBAC_HINT}", in_namespace(.namespace))]
    Forbidden {
        verb: String,
        resource: String,
        namespace: Option<String>,
        message: String,
    },
    /// The HPA's scale target does not exist (or its kind is unknown).
    #[error("HPA {hpa}: its scale target {kind} {name} does not exist ({detail})")]
    TargetNotFound {
        hpa: String,
        kind: String,
        name: String,
        detail: String,
    },
    /// The target exists but its scale could not be read.
    #[error("HPA {hpa}: cannot read the scale of {kind} {name}: {detail}")]
    Scale {
        hpa: String,
        kind: String,
        name: String,
        detail: String,
    },
    /// No metric of the HPA could be read from the metrics APIs; `why`
    /// names the APIService at fault (`; APIService ...`), if one is.
    #[error("HPA {hpa}: the metrics APIs did not answer: {detail}{why}")]
    MetricsUnavailable {
        hpa: String,
        detail: String,
        why: String,
    },
    /// Another request failed (the server unreachable, an error answer).
    #[error("{what}: {detail}")]
    Request { what: String, detail: String },
    /// A controller flag given with `--flag` is refused.
    #[error("--flag {arg:?}: {reason}")]
    Flag { arg: String, reason: String },
    /// The captured scenario or series could not be written.
    #[error("writing {path}: {detail}")]
    Write { path: String, detail: String },
    /// What was read cannot be written with the step language.
    #[error("HPA {hpa}: cannot capture it as a scenario: {reason}")]
    Capture { hpa: String, reason: String },
}

fn in_namespace(namespace: &Option<String>) -> String {
    namespace
        .as_deref()
        .map(|ns| format!(" in namespace {ns}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_verb_the_resource_and_the_role_in_one_line() {
        let err = LiveError::Forbidden {
            verb: "get".into(),
            resource: "deployments.apps/scale".into(),
            namespace: Some("shop".into()),
            message: "forbidden".into(),
        }
        .to_string();
        assert!(
            err.starts_with(
                "RBAC denies get on deployments.apps/scale in namespace shop: forbidden; "
            ),
            "{err}"
        );
        assert!(err.contains("deploy/explain-rbac.yaml"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}
