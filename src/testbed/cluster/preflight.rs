//! Checks before running scenarios on a real cluster, each failure saying how
//! to fix it:
//!
//! - the metrics API groups are served by fake-metrics-server and Available
//!   (only one provider can own each group; a cluster's metrics-server or
//!   prometheus-adapter would answer instead of the scenario's script);
//! - kube-controller-manager's own HPA controller is off (unless the run
//!   checks upstream), found out with a canary HPA whose target does not
//!   exist: any controller that syncs it writes a condition;
//! - the fake-metrics-server image is present when it runs in the cluster.
//!
//! The verdicts are pure functions of the objects read, tested as such; the
//! async functions only read the cluster.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec,
};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, DeleteParams, ListParams, PostParams};

/// The APIServices the harness needs, one per group-version the HPA controller reads.
pub const METRICS_API_SERVICES: [&str; 4] = [
    "v1beta1.metrics.k8s.io",
    "v1beta1.custom.metrics.k8s.io",
    "v1beta2.custom.metrics.k8s.io",
    "v1beta1.external.metrics.k8s.io",
];

/// Where fake-metrics-server runs, as its manifests install it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsServerRef {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub service: String,
}

impl Default for MetricsServerRef {
    fn default() -> Self {
        Self {
            namespace: "fake-metrics".to_string(),
            service: "fake-metrics-server".to_string(),
        }
    }
}

/// One failed check, with how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// What is wrong.
    pub what: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n  fix: {}", self.what, self.fix)
    }
}

/// Preflight failed.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// Checks failed.
    #[error("the cluster is not ready for hpa-harness:\n{}", list(.0))]
    Problems(Vec<Problem>),
    /// Reading the cluster failed.
    #[error("preflight could not {action}")]
    Kube {
        /// What it tried.
        action: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

fn list(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("- {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Who answered behind a metrics APIService, asked through the cluster's
/// aggregator: the fake metrics server's instance header on the group's
/// discovery document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behind {
    /// The fake metrics server at `--metrics-url` (same instance).
    Ours,
    /// Another server: another fake metrics server (its instance), or one
    /// that sends none (metrics-server, an adapter).
    Other(Option<String>),
    /// No answer through the aggregator (the APIService is not Available).
    NoAnswer(String),
}

/// Judges the metrics APIServices: each must exist, be Available, and lead
/// to the fake metrics server at `--metrics-url`. `behind` says who
/// answered through each (by APIService name); where it does not say, the
/// Service the APIService names must be `ours`. A server that answers as
/// ours is ours whatever Service leads there.
pub fn check_api_services(
    found: &[APIService],
    ours: &MetricsServerRef,
    behind: &BTreeMap<String, Behind>,
) -> Vec<Problem> {
    let apply = "kubectl apply -f fake-metrics-server/deploy/ (see fake-metrics-server/README.md)";
    let mut problems = Vec::new();
    for name in METRICS_API_SERVICES {
        let Some(svc) = found
            .iter()
            .find(|s| s.metadata.name.as_deref() == Some(name))
        else {
            problems.push(Problem {
                what: format!("APIService {name} is not registered"),
                fix: apply.to_string(),
            });
            continue;
        };
        let service = svc.spec.as_ref().and_then(|s| s.service.as_ref());
        let owner = service.map(|s| {
            (
                s.namespace.clone().unwrap_or_default(),
                s.name.clone().unwrap_or_default(),
            )
        });
        let answered = behind.get(name);
        let leads_to = |owner: &Option<(String, String)>| {
            owner.as_ref().map_or_else(
                || "the API server itself".to_owned(),
                |(ns, svc)| format!("{ns}/{svc}"),
            )
        };
        match (owner, answered) {
            (_, Some(Behind::Ours)) => {}
            (owner, Some(Behind::Other(Some(instance)))) => problems.push(Problem {
                what: format!(
                    "APIService {name} leads to {}, where a fake metrics server answers that is not the fake metrics server at --metrics-url (another one answered, instance {instance})",
                    leads_to(&owner)
                ),
                fix: "pass as --metrics-url the control URL of the server the cluster reaches (`hpa-harness metrics-server`, `hpa-harness sim` and `hpa-harness control-plane` print it)".to_owned(),
            }),
            (Some((ns, svc_name)), Some(Behind::Other(None)))
                if ns == ours.namespace && svc_name == ours.service =>
            {
                problems.push(Problem {
                    what: format!(
                        "APIService {name} leads to {ns}/{svc_name}, but the server answering there is no fake metrics server (its answer carried no hpa-harness-instance header)"
                    ),
                    fix: format!(
                        "point {ns}/{svc_name} at fake-metrics-server (see fake-metrics-server/README.md), and pass its control URL as --metrics-url"
                    ),
                });
            }
            (Some((ns, svc_name)), _) if ns == ours.namespace && svc_name == ours.service => {}
            (Some((ns, svc_name)), _) => problems.push(Problem {
                what: format!(
                    "APIService {name} is served by {ns}/{svc_name}, not by fake-metrics-server \
                     ({}/{}); only one provider can own a group",
                    ours.namespace, ours.service
                ),
                fix: format!(
                    "remove the other provider (e.g. `kubectl delete apiservice {name}`, or k3s \
                     `--disable=metrics-server`), then {apply}"
                ),
            }),
            (None, _) => problems.push(Problem {
                what: format!("APIService {name} is served locally by the API server, not by fake-metrics-server"),
                fix: apply.to_string(),
            }),
        }
        let available = svc
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Available"));
        match available {
            Some(c) if c.status == "True" => {}
            other => {
                let why = other
                    .map(|c| {
                        format!(
                            "{}: {}",
                            c.reason.clone().unwrap_or_default(),
                            c.message.clone().unwrap_or_default()
                        )
                    })
                    .unwrap_or_else(|| "no Available condition yet".to_string());
                problems.push(Problem {
                    what: format!("APIService {name} is not Available ({why})"),
                    fix: format!(
                        "check that fake-metrics-server runs and its Service {}/{} has endpoints \
                         (`kubectl -n {} get pods,endpointslices`)",
                        ours.namespace, ours.service, ours.namespace
                    ),
                });
            }
        }
    }
    problems
}

/// Judges the canary HPA after one sync period: a condition on it means a
/// controller other than ours synced it.
pub fn check_canary(canary: &HorizontalPodAutoscaler, expect_upstream: bool) -> Vec<Problem> {
    let synced = canary
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| !c.is_empty());
    match (synced, expect_upstream) {
        (true, false) => vec![Problem {
            what: "kube-controller-manager's own HPA controller is running: it would fight ours"
                .to_string(),
            fix: "create the cluster from clusters/kind.yaml or clusters/k3d.yaml (controllers \
                  `*,-horizontal-pod-autoscaler-controller`), or pass `--controller upstream` to \
                  test the built-in controller instead"
                .to_string(),
        }],
        (false, true) => vec![Problem {
            what: "kube-controller-manager's HPA controller is off, but `--controller upstream` \
                   asks to test it"
                .to_string(),
            fix: "use a cluster whose kube-controller-manager runs the \
                  horizontal-pod-autoscaler-controller (drop the `controllers` line from \
                  clusters/kind.yaml)"
                .to_string(),
        }],
        _ => Vec::new(),
    }
}

/// Judges fake-metrics-server's pods when it runs in the cluster: an image
/// that cannot be pulled means it was not loaded into the nodes.
pub fn check_image(pods: &[Pod], image: &str, cluster_hint: &str) -> Vec<Problem> {
    let pulling = pods.iter().flat_map(|p| {
        p.status
            .iter()
            .flat_map(|s| s.container_statuses.iter().flatten())
            .filter_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.clone())
            .filter(|r| r == "ErrImagePull" || r == "ImagePullBackOff" || r == "ErrImageNeverPull")
            .map(move |r| (p.metadata.name.clone().unwrap_or_default(), r))
    });
    pulling
        .map(|(pod, reason)| Problem {
            what: format!("pod {pod} cannot start: {reason} for image {image}"),
            fix: format!("build the image and load it into the cluster: {cluster_hint}"),
        })
        .collect()
}

/// The namespace the canary HPA lives in.
pub const CANARY_NAMESPACE: &str = "hpa-harness-preflight";

/// Reads the APIServices, asks through the aggregator who serves each
/// (when `metrics` says who ours is: its instance), and judges them.
pub async fn api_services(
    client: &kube::Client,
    ours: &MetricsServerRef,
    metrics: Option<&fake_metrics_server::client::ControlClient>,
) -> Result<Vec<Problem>, PreflightError> {
    let api: Api<APIService> = Api::all(client.clone());
    let found = api
        .list(&ListParams::default())
        .await
        .map_err(|source| PreflightError::Kube {
            action: "list APIServices".to_string(),
            source,
        })?;
    let instance = match metrics {
        Some(control) => match control.instance().await {
            Ok(instance) => Some(instance),
            Err(e) => {
                tracing::debug!(error = %e, "the fake metrics server's instance");
                None
            }
        },
        None => None,
    };
    let mut behind = BTreeMap::new();
    if let Some(instance) = &instance {
        for name in METRICS_API_SERVICES {
            if found
                .items
                .iter()
                .any(|s| s.metadata.name.as_deref() == Some(name))
            {
                behind.insert(name.to_owned(), who_answers(client, name, instance).await);
            }
        }
    }
    Ok(check_api_services(&found.items, ours, &behind))
}

/// Who answers the discovery document of APIService `name`
/// (`VERSION.GROUP`) through the aggregator.
async fn who_answers(client: &kube::Client, name: &str, ours: &str) -> Behind {
    let Some((version, group)) = name.split_once('.') else {
        return Behind::NoAnswer(format!("{name} is no VERSION.GROUP"));
    };
    let request = match http::Request::get(format!("/apis/{group}/{version}"))
        .body(kube::client::Body::from(Vec::new()))
    {
        Ok(request) => request,
        Err(e) => return Behind::NoAnswer(e.to_string()),
    };
    match client.send(request).await {
        Ok(response) if response.status().is_success() => {
            let instance = response
                .headers()
                .get(fake_metrics_server::api::INSTANCE_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if instance.as_deref() == Some(ours) {
                Behind::Ours
            } else {
                Behind::Other(instance)
            }
        }
        Ok(response) => Behind::NoAnswer(response.status().to_string()),
        Err(e) => Behind::NoAnswer(e.to_string()),
    }
}

/// Creates a canary HPA for a target that does not exist, waits `wait` (a
/// little more than the cluster's sync period) and judges whether someone
/// synced it. Our controller must not be running meanwhile. Cleans up.
pub async fn builtin_hpa_controller(
    client: &kube::Client,
    expect_upstream: bool,
    wait: Duration,
) -> Result<Vec<Problem>, PreflightError> {
    let kube_err = |action: &str| {
        let action = action.to_string();
        move |source| PreflightError::Kube { action, source }
    };
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(CANARY_NAMESPACE.to_string()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match namespaces.create(&PostParams::default(), &ns).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => return Err(kube_err("create the preflight namespace")(e)),
    }
    let hpas: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), CANARY_NAMESPACE);
    let name = "canary";
    let _ = hpas.delete(name, &DeleteParams::default()).await;
    let canary = HorizontalPodAutoscaler {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        spec: HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some("apps/v1".to_string()),
                kind: "Deployment".to_string(),
                name: "hpa-harness-preflight-does-not-exist".to_string(),
            },
            min_replicas: Some(1),
            max_replicas: 1,
            ..HorizontalPodAutoscalerSpec::default()
        },
        ..HorizontalPodAutoscaler::default()
    };
    hpas.create(&PostParams::default(), &canary)
        .await
        .map_err(kube_err("create the canary HPA"))?;
    tokio::time::sleep(wait).await;
    let seen = hpas
        .get(name)
        .await
        .map_err(kube_err("read the canary HPA"));
    let _ = hpas.delete(name, &DeleteParams::default()).await;
    Ok(check_canary(&seen?, expect_upstream))
}

/// Turns collected problems into a result.
pub fn verdict(problems: Vec<Problem>) -> Result<(), PreflightError> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PreflightError::Problems(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::autoscaling::v2::{
        HorizontalPodAutoscalerCondition, HorizontalPodAutoscalerStatus,
    };
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateWaiting, ContainerStatus, PodStatus,
    };
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{
        APIServiceCondition, APIServiceSpec, APIServiceStatus, ServiceReference,
    };

    fn api_service(name: &str, ns: &str, svc: &str, available: &str) -> APIService {
        APIService {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                ..ObjectMeta::default()
            },
            spec: Some(APIServiceSpec {
                service: Some(ServiceReference {
                    namespace: Some(ns.to_string()),
                    name: Some(svc.to_string()),
                    port: Some(443),
                }),
                insecure_skip_tls_verify: Some(true),
                group_priority_minimum: 100,
                version_priority: 100,
                ..APIServiceSpec::default()
            }),
            status: Some(APIServiceStatus {
                conditions: Some(vec![APIServiceCondition {
                    type_: "Available".to_string(),
                    status: available.to_string(),
                    reason: Some("FailedDiscoveryCheck".to_string()),
                    message: Some("no response".to_string()),
                    ..APIServiceCondition::default()
                }]),
            }),
        }
    }

    fn all_ours(available: &str) -> Vec<APIService> {
        METRICS_API_SERVICES
            .iter()
            .map(|n| api_service(n, "fake-metrics", "fake-metrics-server", available))
            .collect()
    }

    #[test]
    fn our_available_api_services_pass() {
        assert!(
            check_api_services(
                &all_ours("True"),
                &MetricsServerRef::default(),
                &BTreeMap::new()
            )
            .is_empty()
        );
    }

    #[test]
    fn a_missing_api_service_says_to_apply_the_manifests() {
        let mut found = all_ours("True");
        found.remove(3);
        let problems = check_api_services(&found, &MetricsServerRef::default(), &BTreeMap::new());
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0]
                .what
                .contains("v1beta1.external.metrics.k8s.io is not registered")
        );
        assert!(
            problems[0]
                .fix
                .contains("kubectl apply -f fake-metrics-server/deploy/")
        );
    }

    #[test]
    fn metrics_server_owning_the_group_is_named_with_how_to_remove_it() {
        let mut found = all_ours("True");
        found[0] = api_service(
            "v1beta1.metrics.k8s.io",
            "kube-system",
            "metrics-server",
            "True",
        );
        let problems = check_api_services(&found, &MetricsServerRef::default(), &BTreeMap::new());
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0]
                .what
                .contains("served by kube-system/metrics-server")
        );
        assert!(problems[0].fix.contains("--disable=metrics-server"));
    }

    #[test]
    fn a_server_that_answers_as_ours_is_ours_whatever_service_leads_there() {
        // A user's cluster: the APIServices name kube-system/metrics-server,
        // an ExternalName Service to `hpa-harness metrics-server`.
        let found: Vec<APIService> = METRICS_API_SERVICES
            .iter()
            .map(|n| api_service(n, "kube-system", "metrics-server", "True"))
            .collect();
        let ours: BTreeMap<String, Behind> = METRICS_API_SERVICES
            .iter()
            .map(|n| ((*n).to_owned(), Behind::Ours))
            .collect();
        let problems = check_api_services(&found, &MetricsServerRef::default(), &ours);
        assert!(problems.is_empty(), "{problems:?}");
        // The same Services with a real metrics-server behind them: refused,
        // and only then is removing the other provider advised.
        let real: BTreeMap<String, Behind> = METRICS_API_SERVICES
            .iter()
            .map(|n| ((*n).to_owned(), Behind::Other(None)))
            .collect();
        let problems = check_api_services(&found, &MetricsServerRef::default(), &real);
        assert_eq!(problems.len(), 4);
        assert!(problems[0].fix.contains("kubectl delete apiservice"));
    }

    #[test]
    fn our_service_with_another_server_behind_it_names_the_url_not_a_deletion() {
        let mut behind = BTreeMap::new();
        behind.insert(
            "v1beta1.metrics.k8s.io".to_owned(),
            Behind::Other(Some("0123abcd".to_owned())),
        );
        let problems = check_api_services(&all_ours("True"), &MetricsServerRef::default(), &behind);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].what.contains("instance 0123abcd"),
            "{}",
            problems[0].what
        );
        assert!(problems[0].fix.contains("--metrics-url"));
        assert!(!problems[0].fix.contains("delete"));
        // The same, behind another Service's name: still the URL to fix.
        let found: Vec<APIService> = METRICS_API_SERVICES
            .iter()
            .map(|n| api_service(n, "kube-system", "metrics-server", "True"))
            .collect();
        let problems = check_api_services(&found, &MetricsServerRef::default(), &behind);
        assert!(
            problems[0].what.contains("instance 0123abcd"),
            "{}",
            problems[0].what
        );
        assert!(!problems[0].fix.contains("delete"));
    }

    #[test]
    fn an_unavailable_api_service_shows_the_aggregators_reason() {
        let problems = check_api_services(
            &all_ours("False"),
            &MetricsServerRef::default(),
            &BTreeMap::new(),
        );
        assert_eq!(problems.len(), 4);
        assert!(
            problems[0]
                .what
                .contains("not Available (FailedDiscoveryCheck: no response)")
        );
    }

    fn canary(conditions: usize) -> HorizontalPodAutoscaler {
        HorizontalPodAutoscaler {
            status: Some(HorizontalPodAutoscalerStatus {
                conditions: Some(
                    (0..conditions)
                        .map(|_| HorizontalPodAutoscalerCondition {
                            type_: "AbleToScale".to_string(),
                            status: "False".to_string(),
                            reason: Some("FailedGetScale".to_string()),
                            ..HorizontalPodAutoscalerCondition::default()
                        })
                        .collect(),
                ),
                desired_replicas: 0,
                ..HorizontalPodAutoscalerStatus::default()
            }),
            ..HorizontalPodAutoscaler::default()
        }
    }

    #[test]
    fn a_synced_canary_means_the_builtin_controller_is_on() {
        let problems = check_canary(&canary(1), false);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0]
                .fix
                .contains("-horizontal-pod-autoscaler-controller")
        );
        assert!(check_canary(&canary(1), true).is_empty());
    }

    #[test]
    fn an_untouched_canary_means_it_is_off() {
        assert!(check_canary(&canary(0), false).is_empty());
        assert!(check_canary(&HorizontalPodAutoscaler::default(), false).is_empty());
        assert_eq!(check_canary(&canary(0), true).len(), 1);
    }

    #[test]
    fn an_image_that_cannot_be_pulled_says_how_to_load_it() {
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("fake-metrics-server-abc".to_string()),
                ..ObjectMeta::default()
            },
            status: Some(PodStatus {
                container_statuses: Some(vec![ContainerStatus {
                    name: "server".to_string(),
                    state: Some(ContainerState {
                        waiting: Some(ContainerStateWaiting {
                            reason: Some("ImagePullBackOff".to_string()),
                            message: None,
                        }),
                        ..ContainerState::default()
                    }),
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            }),
            ..Pod::default()
        };
        let problems = check_image(
            &[pod],
            "hpa-harness/fake-metrics-server:dev",
            "kind load docker-image hpa-harness/fake-metrics-server:dev --name NAME",
        );
        assert_eq!(problems.len(), 1);
        assert!(problems[0].what.contains("ImagePullBackOff"));
        assert!(problems[0].fix.contains("kind load docker-image"));
        assert!(check_image(&[], "x", "y").is_empty());
    }

    #[test]
    fn problems_are_listed_one_per_line_with_their_fix() {
        let err = verdict(vec![
            Problem {
                what: "a".into(),
                fix: "b".into(),
            },
            Problem {
                what: "c".into(),
                fix: "d".into(),
            },
        ])
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the cluster is not ready for hpa-harness:\n- a\n  fix: b\n- c\n  fix: d"
        );
        assert!(verdict(Vec::new()).is_ok());
    }
}
