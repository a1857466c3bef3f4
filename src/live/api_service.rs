//! What serves a metrics API. The API server serves `metrics.k8s.io`,
//! `custom.metrics.k8s.io` and `external.metrics.k8s.io` only through an
//! APIService that registers the group with its aggregator, backed by a
//! Service (metrics-server, an adapter). When a metrics request fails,
//! `explain` reads the APIServices and names the one at fault: none
//! registered (the API server answers 404), or one whose `Available`
//! condition is not True (`FailedDiscoveryCheck`, `ServiceNotFound`,
//! `MissingEndpoints`), with its message and what usually serves that API.

use hpa_core::decide::MetricQuery;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use serde::Serialize;

/// The aggregated metrics APIs an HPA reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MetricsGroup {
    /// `metrics.k8s.io`: Resource and ContainerResource metrics.
    Resource,
    /// `custom.metrics.k8s.io`: Pods and Object metrics.
    Custom,
    /// `external.metrics.k8s.io`: External metrics.
    External,
}

impl MetricsGroup {
    /// The API group an HPA's metric query reads.
    pub fn of(query: &MetricQuery) -> Self {
        match query {
            MetricQuery::PodResource { .. } => Self::Resource,
            MetricQuery::PodsCustom { .. } | MetricQuery::Object { .. } => Self::Custom,
            MetricQuery::External { .. } => Self::External,
        }
    }

    /// `metrics.k8s.io`, ...
    pub fn group(self) -> &'static str {
        match self {
            Self::Resource => "metrics.k8s.io",
            Self::Custom => "custom.metrics.k8s.io",
            Self::External => "external.metrics.k8s.io",
        }
    }

    /// What serves the API in common setups.
    fn served_by(self) -> &'static str {
        match self {
            Self::Resource => {
                "metrics-server serves it in most clusters (kubectl -n kube-system get deployment,pods -l k8s-app=metrics-server)"
            }
            Self::Custom => {
                "a custom metrics adapter serves it (prometheus-adapter, the Datadog or Stackdriver adapter)"
            }
            Self::External => {
                "an external metrics adapter serves it (KEDA's metrics server, prometheus-adapter, a cloud provider's adapter)"
            }
        }
    }
}

/// An APIService that keeps a metrics API from answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricsApiProblem {
    /// The API group (`metrics.k8s.io`).
    pub group: String,
    /// The APIService at fault (`v1beta1.metrics.k8s.io`); `None`: none
    /// registers the group.
    pub api_service: Option<String>,
    /// Its Service, `namespace/name`.
    pub service: Option<String>,
    /// Its `Available` condition: status, reason, message.
    pub available: Option<(String, String, String)>,
    /// All of it in words.
    pub text: String,
}

impl std::fmt::Display for MetricsApiProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether a metrics client's error says the API server does not serve
/// the path at all (the group is not registered).
fn not_served(error: &str) -> bool {
    error.contains("could not find the requested resource") || error.contains("404")
}

/// The APIService problem behind `error`, a failed request to `group`,
/// given the cluster's APIServices: one of the group's that is not
/// Available, or none registered when the API server answered 404.
/// `None` when the group's APIServices are Available (the failure is the
/// backend's own answer) or when nothing points at them.
pub fn diagnose(
    group: MetricsGroup,
    error: &str,
    services: &[APIService],
) -> Option<MetricsApiProblem> {
    let of_group: Vec<&APIService> = services
        .iter()
        .filter(|s| s.spec.as_ref().and_then(|s| s.group.as_deref()) == Some(group.group()))
        .collect();
    if of_group.is_empty() {
        if !not_served(error) {
            return None;
        }
        return Some(MetricsApiProblem {
            group: group.group().to_owned(),
            api_service: None,
            service: None,
            available: None,
            text: format!(
                "no APIService registers {} (kubectl get apiservices), so the API server answers 404 for it: nothing is installed to serve it; {}",
                group.group(),
                group.served_by()
            ),
        });
    }
    of_group.into_iter().find_map(|s| {
        let available = s
            .status
            .as_ref()
            .and_then(|st| st.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Available"));
        if available.is_some_and(|c| c.status == "True") {
            return None;
        }
        let name = s.metadata.name.clone().unwrap_or_default();
        let service = s
            .spec
            .as_ref()
            .and_then(|sp| sp.service.as_ref())
            .map(|svc| {
                format!(
                    "{}/{}",
                    svc.namespace.as_deref().unwrap_or_default(),
                    svc.name.as_deref().unwrap_or_default()
                )
            });
        let condition = available.map(|c| {
            (
                c.status.clone(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            )
        });
        let state = match &condition {
            Some((status, reason, message)) => {
                format!("Available={status} {reason}: {message}")
            }
            None => "no Available condition yet".to_owned(),
        };
        let backing = service
            .as_deref()
            .map_or_else(String::new, |svc| format!(" (service {svc})"));
        Some(MetricsApiProblem {
            group: group.group().to_owned(),
            api_service: Some(name.clone()),
            service,
            available: condition,
            text: format!(
                "APIService {name}{backing} is not available ({state}), so the API server cannot reach what serves {}: {}",
                group.group(),
                group.served_by()
            ),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn api_service(group: &str, available: Option<(&str, &str, &str)>) -> APIService {
        let mut value = json!({
            "metadata": {"name": format!("v1beta1.{group}")},
            "spec": {"group": group, "version": "v1beta1", "groupPriorityMinimum": 100,
                "versionPriority": 100,
                "service": {"namespace": "kube-system", "name": "metrics-server"}}
        });
        if let Some((status, reason, message)) = available {
            value["status"] = json!({"conditions": [{"type": "Available", "status": status,
                "reason": reason, "message": message}]});
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn an_unavailable_api_service_is_named_with_its_condition_and_service() {
        let services = [api_service(
            "metrics.k8s.io",
            Some((
                "False",
                "FailedDiscoveryCheck",
                "failing or missing response from https://10.96.0.10:443/apis/metrics.k8s.io/v1beta1",
            )),
        )];
        let problem = diagnose(MetricsGroup::Resource, "service unavailable", &services).unwrap();
        assert_eq!(
            problem.api_service.as_deref(),
            Some("v1beta1.metrics.k8s.io")
        );
        assert_eq!(
            problem.text,
            "APIService v1beta1.metrics.k8s.io (service kube-system/metrics-server) is not available (Available=False FailedDiscoveryCheck: failing or missing response from https://10.96.0.10:443/apis/metrics.k8s.io/v1beta1), so the API server cannot reach what serves metrics.k8s.io: metrics-server serves it in most clusters (kubectl -n kube-system get deployment,pods -l k8s-app=metrics-server)"
        );
    }

    #[test]
    fn a_missing_api_service_is_named_only_when_the_server_does_not_serve_the_group() {
        let problem = diagnose(
            MetricsGroup::External,
            "the server could not find the requested resource",
            &[api_service("metrics.k8s.io", Some(("True", "Passed", "")))],
        )
        .unwrap();
        assert_eq!(problem.api_service, None);
        assert!(
            problem
                .text
                .starts_with("no APIService registers external.metrics.k8s.io"),
            "{}",
            problem.text
        );
        assert!(problem.text.contains("KEDA"), "{}", problem.text);
        // A backend's own error behind an Available APIService, or an
        // error that is not a 404 without one: nothing to name.
        assert_eq!(
            diagnose(
                MetricsGroup::Resource,
                "internal error",
                &[api_service("metrics.k8s.io", Some(("True", "Passed", "")))]
            ),
            None
        );
        assert_eq!(diagnose(MetricsGroup::Resource, "timeout", &[]), None);
    }
}
