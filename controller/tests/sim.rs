//! The controller against the simulated cluster and the fake metrics server,
//! in-process, on one virtual clock: the worked examples, conflicts, failing
//! metrics APIs, a deleted target, an invalid HPA, an HPA deleted mid-run,
//! dry run and leader hand-over.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::sync::Arc;
use std::time::Duration;

use axum::response::IntoResponse;
use fake_metrics_server::AppState;
use fake_metrics_server::script::{Faults, Script, from_yaml};
use hpa_controller::leader::LeaseTiming;
use hpa_controller::metrics::sample_value;
use hpa_controller::{
    ControllerConfig, ControllerHandle, ControllerOptions, LeaderElection, SyncMode,
};
use hpa_core::clock::{Clock, ScenarioClock, VirtualClock};
use hpa_embedded::Embedded;
use hpa_sim::{Backend, Sim, SimConfig};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, PostParams};

struct Env {
    sim: Sim,
    clock: VirtualClock,
    metrics: AppState,
}

impl Env {
    /// The testbed's embedded sim and fake metrics server on one virtual
    /// clock, as a scenario gets them.
    fn new() -> Self {
        let clock = VirtualClock::default();
        let Embedded { sim, metrics } = Embedded::new(Some(clock.clone()), SimConfig::default());
        Self {
            sim,
            clock,
            metrics,
        }
    }

    fn controller(&self, config: ControllerConfig) -> ControllerHandle {
        ControllerHandle::start(
            self.sim.client(),
            ControllerOptions::manual(config, Arc::new(self.clock.clone())),
        )
    }

    fn client(&self) -> kube::Client {
        self.sim.client()
    }

    async fn deployment(&self, name: &str, replicas: i32) {
        let deployment: Deployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{
                        "name": "app",
                        "image": "app",
                        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}
                    }]}
                }
            }
        }))
        .unwrap();
        Api::<Deployment>::namespaced(self.client(), "default")
            .create(&PostParams::default(), &deployment)
            .await
            .unwrap();
    }

    async fn hpa_on_pods_metric(&self, name: &str, target: &str, api_version: &str) {
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "scaleTargetRef": {"apiVersion": api_version, "kind": "Deployment", "name": target},
                "minReplicas": 1,
                "maxReplicas": 10,
                "metrics": [{
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "http_requests"},
                        "target": {"type": "AverageValue", "averageValue": "60"}
                    }
                }]
            }
        }))
        .unwrap();
        Api::<HorizontalPodAutoscaler>::namespaced(self.client(), "default")
            .create(&PostParams::default(), &hpa)
            .await
            .unwrap();
    }

    /// Scripts `http_requests` per pod of `app` (`None`: the pod reports nothing).
    fn pod_metrics(&self, app: &str, values: &[Option<&str>]) {
        let mut yaml = String::from("pods:\n");
        for (i, value) in values.iter().enumerate() {
            yaml.push_str(&format!(
                "  - name: {app}-{i}\n    labels: {{app: {app}}}\n    containers: [{{name: app, cpu: 100m}}]\n"
            ));
            if let Some(v) = value {
                yaml.push_str(&format!("    metrics: {{http_requests: {v}}}\n"));
            }
        }
        let script: Script = from_yaml(&yaml).unwrap();
        self.metrics.load(&script).unwrap();
    }

    async fn replicas(&self, name: &str) -> i32 {
        Api::<Deployment>::namespaced(self.client(), "default")
            .get(name)
            .await
            .unwrap()
            .spec
            .replicas
            .unwrap()
    }

    async fn hpa(&self, name: &str) -> HorizontalPodAutoscaler {
        Api::<HorizontalPodAutoscaler>::namespaced(self.client(), "default")
            .get(name)
            .await
            .unwrap()
    }

    async fn events(&self, hpa: &str) -> Vec<(String, String)> {
        Api::<Event>::namespaced(self.client(), "default")
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(hpa))
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect()
    }
}

fn condition(hpa: &HorizontalPodAutoscaler, type_: &str) -> (String, String) {
    let c = hpa
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
        .unwrap_or_else(|| panic!("no condition {type_} in {:?}", hpa.status));
    (c.status.clone(), c.reason.clone().unwrap_or_default())
}

#[tokio::test]
async fn a_controller_of_one_namespace_leaves_the_hpas_of_others_alone() {
    let env = Env::new();
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    let elsewhere = ControllerHandle::start(
        env.client(),
        ControllerOptions::manual(ControllerConfig::default(), Arc::new(env.clock.clone()))
            .in_namespace("another-scenario"),
    );
    let report = elsewhere.sync_all_now().await.unwrap();
    assert!(report.reconciled.is_empty(), "{:?}", report.reconciled);
    assert_eq!(env.replicas("web").await, 2);
    assert!(env.hpa("web").await.status.is_none());
    let here = ControllerHandle::start(
        env.client(),
        ControllerOptions::manual(ControllerConfig::default(), Arc::new(env.clock.clone()))
            .in_namespace("default"),
    );
    let report = here.sync_all_now().await.unwrap();
    assert_eq!(report.reconciled, vec!["default/web".to_string()]);
    assert_eq!(env.replicas("web").await, 3);
}

#[tokio::test]
async fn two_pods_at_50_and_100_against_an_average_of_60_scale_to_3() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);

    let report = ctl.sync_all_now().await.unwrap();
    assert_eq!(report.reconciled, vec!["default/web".to_string()]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);

    assert_eq!(env.replicas("web").await, 3);
    let hpa = env.hpa("web").await;
    let status = hpa.status.clone().unwrap();
    assert_eq!(status.desired_replicas, 3);
    assert_eq!(status.last_scale_time.unwrap().0, env.clock.now());
    assert_eq!(
        condition(&hpa, "AbleToScale"),
        ("True".into(), "SucceededRescale".into())
    );
    assert_eq!(
        condition(&hpa, "ScalingActive"),
        ("True".into(), "ValidMetricFound".into())
    );
    assert!(
        env.events("web").await.contains(&(
            "SuccessfulRescale".into(),
            "New size: 3; reason: pods metric http_requests above target".into()
        )),
        "{:?}",
        env.events("web").await
    );
    let text = ctl.metrics_text();
    assert_eq!(
        sample_value(
            &text,
            "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"none\"}"
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample_value(
            &text,
            "horizontal_pod_autoscaler_controller_metric_computation_total{action=\"scale_up\",error=\"none\",metric_type=\"Pods\"}"
        ),
        Some(1.0),
        "{text}"
    );
    let decisions = ctl.decisions("default", "web", 5);
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].desired_replicas, Some(3));
    assert!(decisions[0].rescaled);
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn one_pod_at_2_and_one_missing_against_60_stay_at_2() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("2"), None]);

    ctl.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("web").await, 2);
    let hpa = env.hpa("web").await;
    assert_eq!(hpa.status.clone().unwrap().desired_replicas, 2);
    assert_eq!(
        condition(&hpa, "AbleToScale"),
        ("True".into(), "ReadyForNewScale".into())
    );
    assert!(
        !env.events("web")
            .await
            .iter()
            .any(|(r, _)| r == "SuccessfulRescale")
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_status_conflict_is_written_once_and_reported() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.sim.faults().conflict_hpa_status("default", "web", 1);

    let report = ctl.sync_all_now().await.unwrap();
    assert_eq!(report.errors.len(), 1, "{report:?}");
    assert!(
        env.hpa("web")
            .await
            .status
            .is_none_or(|s| s.desired_replicas == 0),
        "one conflict and no second write"
    );
    assert!(
        env.events("web")
            .await
            .iter()
            .any(|(r, _)| r == "FailedUpdateStatus")
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_scale_conflict_is_retried_within_the_reconcile() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.sim.faults().conflict_update_scale("default", "web", 2);

    let report = ctl.sync_all_now().await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(env.replicas("web").await, 3);
    let events = env.events("web").await;
    assert!(events.iter().any(|(r, _)| r == "SuccessfulRescale"));
    assert!(!events.iter().any(|(r, _)| r == "FailedRescale"));
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_failing_custom_metrics_api_sets_the_condition_and_warns_until_it_recovers() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.metrics
        .set_faults(from_yaml::<Faults>("custom: {status: 500}").unwrap());

    let report = ctl.sync_all_now().await.unwrap();
    assert_eq!(
        report.errors.len(),
        1,
        "upstream returns an error: {report:?}"
    );
    assert_eq!(env.replicas("web").await, 2);
    let hpa = env.hpa("web").await;
    assert_eq!(
        condition(&hpa, "AbleToScale"),
        ("True".into(), "SucceededGetScale".into())
    );
    assert_eq!(
        condition(&hpa, "ScalingActive"),
        ("False".into(), "FailedGetPodsMetric".into())
    );
    let reasons: Vec<String> = env.events("web").await.into_iter().map(|e| e.0).collect();
    assert!(
        reasons.contains(&"FailedGetPodsMetric".to_string()),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&"FailedComputeMetricsReplicas".to_string()),
        "{reasons:?}"
    );
    assert_eq!(
        sample_value(
            &ctl.metrics_text(),
            "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"internal\"}"
        ),
        Some(1.0)
    );

    // Still failing a sync later: the same warnings again, folded into
    // the first event's series as the API's event deduplication does.
    env.sim.advance(jiff::SignedDuration::from_secs(15));
    ctl.sync_all_now().await.unwrap();
    let warnings: Vec<Event> = Api::<Event>::namespaced(env.client(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedGetPodsMetric"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let series = warnings[0]
        .series
        .as_ref()
        .expect("a repeated event has a series");
    assert_eq!(series.count, 2);
    assert_eq!(series.last_observed_time.0, env.clock.now());
    assert_eq!(
        warnings[0].reporting_controller.as_deref(),
        Some("horizontal-pod-autoscaler")
    );

    env.metrics.set_faults(Faults::default());
    env.sim.advance(jiff::SignedDuration::from_secs(15));
    ctl.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("web").await, 3);
    assert_eq!(
        condition(&env.hpa("web").await, "ScalingActive"),
        ("True".into(), "ValidMetricFound".into())
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_deleted_scale_target_gives_failed_get_scale() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("60"), Some("60")]);
    ctl.sync_all_now().await.unwrap();

    Api::<Deployment>::namespaced(env.client(), "default")
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    env.sim.advance(jiff::SignedDuration::from_secs(15));
    let report = ctl.sync_all_now().await.unwrap();
    assert_eq!(report.errors.len(), 1, "{report:?}");
    let hpa = env.hpa("web").await;
    assert_eq!(
        condition(&hpa, "AbleToScale"),
        ("False".into(), "FailedGetScale".into())
    );
    assert!(
        env.events("web")
            .await
            .iter()
            .any(|(r, _)| r == "FailedGetScale")
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_invalid_scale_target_api_version_is_a_spec_error() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    // Refused on create since v1.34; an HPA stored before still syncs.
    env.sim.set_reference_api_version_check(false);
    env.hpa_on_pods_metric("web", "web", "apps/v1/extra").await;
    env.pod_metrics("web", &[Some("60"), Some("60")]);

    let report = ctl.sync_all_now().await.unwrap();
    assert_eq!(report.errors.len(), 1, "{report:?}");
    let hpa = env.hpa("web").await;
    assert_eq!(
        condition(&hpa, "AbleToScale"),
        ("False".into(), "FailedGetScale".into())
    );
    assert_eq!(
        sample_value(
            &ctl.metrics_text(),
            "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"spec\"}"
        ),
        Some(1.0),
        "{}",
        ctl.metrics_text()
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_hpa_deleted_mid_run_loses_its_history() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("60"), Some("60")]);
    ctl.sync_all_now().await.unwrap();
    assert!(ctl.recommendations("default", "web").is_some());

    Api::<HorizontalPodAutoscaler>::namespaced(env.client(), "default")
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    env.sim.advance(jiff::SignedDuration::from_secs(15));
    let report = ctl.sync_all_now().await.unwrap();
    assert!(report.reconciled.is_empty());
    assert_eq!(ctl.recommendations("default", "web"), None);
    assert!(ctl.decisions("default", "web", 5).is_empty());

    // Recreated: a fresh history (nothing from before the deletion, which
    // would be 15s old), seeded by the first sync.
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    ctl.sync_all_now().await.unwrap();
    let recs = ctl.recommendations("default", "web").unwrap();
    assert!(
        recs.iter().all(|r| r.age == jiff::SignedDuration::ZERO),
        "{recs:?}"
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn dry_run_decides_and_records_but_writes_nothing() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig {
        dry_run: true,
        ..ControllerConfig::default()
    });
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);

    ctl.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("web").await, 2);
    assert!(
        env.hpa("web")
            .await
            .status
            .is_none_or(|s| s.desired_replicas == 0)
    );
    assert!(env.events("web").await.is_empty());
    let decision = ctl.decisions("default", "web", 1).pop().unwrap();
    assert_eq!(decision.desired_replicas, Some(3));
    assert!(!decision.rescaled && !decision.status_written && decision.dry_run);
    assert!(
        decision
            .events
            .iter()
            .any(|e| e.reason == "SuccessfulRescale")
    );
    let report = serde_json::to_value(ctl.context().decisions.report()).unwrap();
    assert_eq!(report["hpas"][0]["controllerDesiredReplicas"], 3);
    // The HPA has no status yet (nobody else runs it): agreement is unknown.
    assert_eq!(
        report["hpas"][0]["statusDesiredReplicas"],
        serde_json::Value::Null
    );
    assert_eq!(
        report["hpas"][0]["agreesWithStatus"],
        serde_json::Value::Null
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn seeded_history_is_used_and_read_back() {
    use hpa_controller::AgedRecommendation;
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 4).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("10"), Some("10"), Some("10"), Some("10")]);
    // A recommendation of 4 a minute ago holds the scale-down (5m window).
    ctl.seed_recommendations(
        "default",
        "web",
        &[AgedRecommendation {
            age: jiff::SignedDuration::from_secs(60),
            replicas: 4,
        }],
    );
    ctl.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("web").await, 4);
    assert_eq!(
        condition(&env.hpa("web").await, "AbleToScale"),
        ("True".into(), "ScaleDownStabilized".into())
    );
    let recs = ctl.recommendations("default", "web").unwrap();
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert_eq!(recs[0].age, jiff::SignedDuration::from_secs(60));
    assert_eq!(recs[1].replicas, 1);
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_standby_replica_takes_over_when_the_leader_stops() {
    let env = Env::new();
    let timing = LeaseTiming {
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry_period: Duration::from_millis(50),
    };
    let start = |identity: &str| {
        ControllerHandle::start(
            env.client(),
            ControllerOptions {
                identity: identity.into(),
                leader_election: Some(LeaderElection {
                    namespace: "kube-system".into(),
                    name: "hpa-harness-controller".into(),
                    timing,
                }),
                mode: SyncMode::Manual,
                ..ControllerOptions::manual(
                    ControllerConfig::default(),
                    Arc::new(env.clock.clone()),
                )
            },
        )
    };
    let first = start("first");
    assert!(first.wait_until_leader(Duration::from_secs(5)).await);
    let second = start("second");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!second.is_leader(), "two leaders at once");
    assert!(matches!(
        second.sync_all_now().await,
        Err(hpa_controller::RunError::NotLeader)
    ));

    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    first.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("web").await, 3);

    first.shutdown().await.unwrap();
    assert!(
        second.wait_until_leader(Duration::from_secs(5)).await,
        "the standby did not take over"
    );
    let lease = Api::<Lease>::namespaced(env.client(), "kube-system")
        .get("hpa-harness-controller")
        .await
        .unwrap();
    let spec = lease.spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("second"));
    assert_eq!(spec.lease_transitions, Some(1));

    env.pod_metrics("web", &[Some("100"), Some("100"), Some("100")]);
    env.sim.advance(jiff::SignedDuration::from_secs(15));
    second.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("web").await, 5);
    second.shutdown().await.unwrap();
}

#[tokio::test]
async fn periodic_mode_syncs_on_creation_and_every_period_and_forgets_deleted_hpas() {
    let env = Env::new();
    let ctl = ControllerHandle::start(
        env.client(),
        ControllerOptions {
            mode: SyncMode::Periodic,
            ..ControllerOptions::manual(
                ControllerConfig {
                    sync_period: Duration::from_millis(100),
                    ..ControllerConfig::default()
                },
                Arc::new(env.clock.clone()),
            )
        },
    );
    env.deployment("web", 2).await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;

    // Reconciled on creation (the watch), then again every period.
    let synced = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if ctl.decisions("default", "web", 10).len() >= 3 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(synced.is_ok(), "fewer than 3 syncs in 10s");
    assert_eq!(env.replicas("web").await, 3);

    Api::<HorizontalPodAutoscaler>::namespaced(env.client(), "default")
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    let forgotten = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if ctl.recommendations("default", "web").is_none()
                && ctl.decisions("default", "web", 1).is_empty()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(forgotten.is_ok(), "the deleted HPA's history was kept");
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn custom_metrics_fall_back_to_v1beta1_when_v1beta2_is_not_served() {
    use axum::http::Uri;
    // A metrics backend that only speaks custom.metrics.k8s.io/v1beta1.
    let clock = VirtualClock::default();
    let now = clock.now();
    let backend = axum::Router::new().fallback(move |uri: Uri| async move {
        let path = uri.path();
        if path.starts_with("/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/") {
            let items: Vec<serde_json::Value> = [("web-0", "50"), ("web-1", "100")]
                .iter()
                .map(|(pod, value)| {
                    serde_json::json!({
                        "describedObject": {"kind": "Pod", "namespace": "default", "name": pod, "apiVersion": "/v1"},
                        "metricName": "http_requests",
                        "timestamp": now.to_string(),
                        "value": value,
                    })
                })
                .collect();
            axum::Json(serde_json::json!({
                "kind": "MetricValueList",
                "apiVersion": "custom.metrics.k8s.io/v1beta1",
                "metadata": {},
                "items": items,
            }))
            .into_response()
        } else {
            (
                axum::http::StatusCode::NOT_FOUND,
                axum::Json(serde_json::json!({
                    "kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "NotFound", "code": 404, "message": format!("{path} not found"),
                })),
            )
                .into_response()
        }
    });
    let sim = Sim::new(SimConfig {
        clock: ScenarioClock::Virtual(clock.clone()),
        metrics: Some(Backend::Router(backend)),
        ..SimConfig::default()
    });
    let env = Env {
        sim,
        metrics: AppState::new(ScenarioClock::Virtual(clock.clone())),
        clock,
    };
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    let report = ctl.sync_all_now().await.unwrap();
    assert!(report.errors.is_empty(), "{report:?}");
    assert_eq!(env.replicas("web").await, 3);
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_expired_lease_is_taken_over_and_counts_a_transition() {
    use hpa_controller::leader::LeaderElector;
    let env = Env::new();
    let timing = LeaseTiming {
        lease_duration: Duration::from_secs(1),
        renew_deadline: Duration::from_millis(800),
        retry_period: Duration::from_millis(50),
    };
    let clock: Arc<dyn Clock> = Arc::new(env.clock.clone());
    let mut first = LeaderElector::new(
        env.client(),
        "default",
        "l",
        "first",
        timing,
        Arc::clone(&clock),
    );
    let mut second = LeaderElector::new(env.client(), "default", "l", "second", timing, clock);
    assert!(first.try_acquire_or_renew().await.unwrap());
    assert!(
        first.try_acquire_or_renew().await.unwrap(),
        "the holder renews"
    );
    // The first stops renewing (a crash): the second waits out the lease.
    assert!(!second.try_acquire_or_renew().await.unwrap());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !second.try_acquire_or_renew().await.unwrap(),
        "taken before expiry"
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        second.try_acquire_or_renew().await.unwrap(),
        "not taken after expiry"
    );
    let spec = Api::<Lease>::namespaced(env.client(), "default")
        .get("l")
        .await
        .unwrap()
        .spec
        .unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("second"));
    assert_eq!(spec.lease_transitions, Some(1));
    assert_eq!(spec.acquire_time.unwrap().0, env.clock.now());
    // The old holder, back, sees the new one and does not take over.
    assert!(!first.try_acquire_or_renew().await.unwrap());
}

#[tokio::test]
async fn the_status_is_written_only_when_it_changes() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("60"), Some("60")]);
    ctl.sync_all_now().await.unwrap();
    let first = env.hpa("web").await.metadata.resource_version;
    env.sim.advance(jiff::SignedDuration::from_secs(15));
    ctl.sync_all_now().await.unwrap();
    let decisions = ctl.decisions("default", "web", 2);
    assert!(
        decisions[0].status_written,
        "the first sync writes a status"
    );
    assert!(
        !decisions[1].status_written,
        "nothing changed, nothing written"
    );
    assert_eq!(env.hpa("web").await.metadata.resource_version, first);
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_leader_that_loses_its_lease_stops() {
    let env = Env::new();
    let ctl = ControllerHandle::start(
        env.client(),
        ControllerOptions {
            identity: "leader".into(),
            leader_election: Some(LeaderElection {
                namespace: "default".into(),
                name: "lost".into(),
                timing: LeaseTiming {
                    lease_duration: Duration::from_secs(5),
                    renew_deadline: Duration::from_millis(300),
                    retry_period: Duration::from_millis(50),
                },
            }),
            ..ControllerOptions::manual(ControllerConfig::default(), Arc::new(env.clock.clone()))
        },
    );
    assert!(ctl.wait_until_leader(Duration::from_secs(5)).await);
    // Another replica takes the Lease (as after a network partition).
    let leases = Api::<Lease>::namespaced(env.client(), "default");
    let mut lease = leases.get("lost").await.unwrap();
    let spec = lease.spec.as_mut().unwrap();
    spec.holder_identity = Some("intruder".into());
    spec.renew_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
        env.clock.now() + jiff::SignedDuration::from_secs(1),
    ));
    leases
        .replace("lost", &PostParams::default(), &lease)
        .await
        .unwrap();
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        ctl.run_until(std::future::pending()),
    )
    .await
    .expect("the controller kept running without its lease");
    assert!(
        matches!(result, Err(hpa_controller::RunError::LostLeadership(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_status_that_keeps_conflicting_gives_failed_update_status() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.sim.faults().conflict_hpa_status("default", "web", 100);

    let report = ctl.sync_all_now().await.unwrap();
    assert_eq!(report.errors.len(), 1, "{report:?}");
    assert_eq!(env.replicas("web").await, 3, "the scale was still written");
    assert!(
        env.hpa("web")
            .await
            .status
            .is_none_or(|s| s.desired_replicas == 0)
    );
    assert!(
        env.events("web")
            .await
            .iter()
            .any(|(r, _)| r == "FailedUpdateStatus")
    );
    assert_eq!(
        sample_value(
            &ctl.metrics_text(),
            "horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"internal\"}"
        ),
        Some(1.0)
    );
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_target_at_zero_gets_its_status_written_once_not_every_sync() {
    // The API server omits `currentReplicas: 0` (Go omitempty): the stored
    // status reads back without it, which must compare equal to the
    // computed one, or the status is rewritten at every sync.
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 0).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    ctl.sync_all_now().await.unwrap();
    let stored = env.hpa("web").await.status.unwrap();
    assert_eq!(
        stored.current_replicas, None,
        "omitted as the real server does"
    );
    assert_eq!(
        condition(&env.hpa("web").await, "ScalingActive").1,
        "ScalingDisabled"
    );
    for _ in 0..2 {
        env.sim.advance(jiff::SignedDuration::from_secs(15));
        ctl.sync_all_now().await.unwrap();
    }
    let decisions = ctl.decisions("default", "web", 3);
    assert_eq!(decisions.len(), 3);
    let written: Vec<bool> = decisions.iter().map(|d| d.status_written).collect();
    assert_eq!(written.iter().filter(|w| **w).count(), 1, "{written:?}");
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_quick_delete_and_recreate_keeps_the_stabilization_history() {
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("60"), Some("60")]);
    ctl.sync_all_now().await.unwrap();

    // Deleted and recreated between two syncs: upstream only forgets the
    // queue key's rate limiting on delete, and the next sync finds the HPA.
    Api::<HorizontalPodAutoscaler>::namespaced(env.client(), "default")
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.sim.advance(jiff::SignedDuration::from_secs(15));
    ctl.sync_all_now().await.unwrap();
    let recs = ctl.recommendations("default", "web").unwrap();
    assert!(
        recs.iter()
            .any(|r| r.age == jiff::SignedDuration::from_secs(15)),
        "the recommendation of the first sync is kept: {recs:?}"
    );
    ctl.shutdown().await.unwrap();
}

/// A Deployment `name` of `replicas` pods labelled `labels`.
async fn labelled_deployment(env: &Env, name: &str, replicas: i32, labels: serde_json::Value) {
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "app",
                    "resources": {"requests": {"cpu": "1"}}}]}
            }
        }
    }))
    .unwrap();
    Api::<Deployment>::namespaced(env.client(), "default")
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_hpa_deciding_without_metrics_does_not_make_others_ambiguous() {
    // HPA "a" targets app=web at zero replicas (scaling disabled: no
    // metrics computed, so upstream never registers its selector); HPA "b"
    // targets app=web,tier=y, whose pods "a"'s selector also matches.
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    labelled_deployment(&env, "a", 0, serde_json::json!({"app": "web"})).await;
    labelled_deployment(&env, "b", 2, serde_json::json!({"app": "web", "tier": "y"})).await;
    env.hpa_on_pods_metric("a", "a", "apps/v1").await;
    env.hpa_on_pods_metric("b", "b", "apps/v1").await;
    let script: Script = from_yaml(
        "pods:\n\
         - {name: b-0, labels: {app: web, tier: y}, containers: [{name: app, cpu: 100m}], metrics: {http_requests: 50}}\n\
         - {name: b-1, labels: {app: web, tier: y}, containers: [{name: app, cpu: 100m}], metrics: {http_requests: 100}}\n",
    )
    .unwrap();
    env.metrics.load(&script).unwrap();
    for _ in 0..2 {
        ctl.sync_all_now().await.unwrap();
        env.sim.advance(jiff::SignedDuration::from_secs(15));
    }
    assert_eq!(
        condition(&env.hpa("a").await, "ScalingActive").1,
        "ScalingDisabled"
    );
    assert_eq!(
        condition(&env.hpa("b").await, "ScalingActive").1,
        "ValidMetricFound"
    );
    assert_eq!(env.replicas("b").await, 3);
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn periodic_mode_queues_a_new_hpa_one_sync_period_away_through_1_36() {
    // Upstream's enqueueHPA through 1.36 is AddRateLimited with a fixed
    // interval equal to the sync period: a new HPA waits one period.
    let env = Env::new();
    let ctl = ControllerHandle::start(
        env.client(),
        ControllerOptions {
            mode: SyncMode::Periodic,
            ..ControllerOptions::manual(
                ControllerConfig {
                    sync_period: Duration::from_secs(3600),
                    decision: hpa_core::DecisionConfig::of_version(
                        hpa_core::KubernetesVersion::V1_36,
                    ),
                    ..ControllerConfig::default()
                },
                Arc::new(env.clock.clone()),
            )
        },
    );
    env.deployment("web", 2).await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    let retries = "workqueue_retries_total{name=\"horizontalpodautoscaler\"}";
    let queued = tokio::time::timeout(Duration::from_secs(10), async {
        while sample_value(&ctl.metrics_text(), retries).unwrap_or(0.0) < 1.0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(
        queued.is_ok(),
        "the HPA was not queued: {}",
        ctl.metrics_text()
    );
    assert!(
        ctl.decisions("default", "web", 1).is_empty(),
        "synced at once"
    );
    assert_eq!(env.replicas("web").await, 2);
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn periodic_mode_syncs_a_new_hpa_at_once_from_1_37() {
    // k/k #138294: enqueueHPA uses Add, so a new HPA is synced at once
    // even with an hour-long sync period.
    let env = Env::new();
    let ctl = ControllerHandle::start(
        env.client(),
        ControllerOptions {
            mode: SyncMode::Periodic,
            ..ControllerOptions::manual(
                ControllerConfig {
                    sync_period: Duration::from_secs(3600),
                    decision: hpa_core::DecisionConfig::of_version(
                        hpa_core::KubernetesVersion::V1_37,
                    ),
                    ..ControllerConfig::default()
                },
                Arc::new(env.clock.clone()),
            )
        },
    );
    env.deployment("web", 2).await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    let synced = tokio::time::timeout(Duration::from_secs(10), async {
        while ctl.decisions("default", "web", 1).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(synced.is_ok(), "the new HPA was not synced at once");
    assert_eq!(env.replicas("web").await, 3);
    ctl.shutdown().await.unwrap();
}

#[tokio::test]
async fn repeated_failures_are_counted_on_one_event_and_rate_limited_as_client_go() {
    // Two warnings a sync (FailedGetPodsMetric, FailedComputeMetricsReplicas)
    // for 15 syncs 15 s apart: client-go's correlator counts repeats on one
    // event each and lets 25 events through, then one per 5 minutes.
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.metrics
        .set_faults(from_yaml::<Faults>("custom: {status: 500}").unwrap());
    for _ in 0..15 {
        ctl.sync_all_now().await.unwrap();
        env.sim.advance(jiff::SignedDuration::from_secs(15));
    }
    let mut counts: Vec<(String, i32)> = Api::<Event>::namespaced(env.client(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("web"))
        .map(|e| {
            (
                e.reason.unwrap_or_default(),
                e.series.map_or(1, |s| s.count),
            )
        })
        .collect();
    counts.sort();
    assert_eq!(
        counts,
        vec![
            ("FailedComputeMetricsReplicas".to_string(), 12),
            ("FailedGetPodsMetric".to_string(), 13),
        ]
    );
    ctl.shutdown().await.unwrap();
}

/// At its defaults the controller reads a Deployment's scale from its
/// Deployment watch. A sync on demand waits for that cache as for the HPA
/// and pod caches: a user's scale made just before is what it reads, or
/// the HPA would "scale back" to the replicas it saw last.
#[tokio::test]
async fn a_sync_on_demand_reads_the_scale_a_user_set_just_before_from_the_watch() {
    let env = Env::new();
    let config = ControllerConfig::default();
    let extensions = hpa_controller::Extensions::shipped(config.sync_period);
    assert!(extensions.scale_from_cache);
    // The Deployment watch's events arrive 300 ms late, as a busy API
    // server's may: a sync that did not wait would read the old replicas.
    let lagging = kube::Client::new(
        env.sim
            .router()
            .layer(axum::middleware::from_fn(deployment_watch_lags)),
        "default",
    );
    let ctl = ControllerHandle::start_with(
        lagging,
        ControllerOptions::manual(config, Arc::new(env.clock.clone())),
        extensions,
    );
    env.deployment("web", 2).await;
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    // Cached by now: from here on the cache, not a GET, gives the scale.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let deployments = Api::<Deployment>::namespaced(env.client(), "default");
    // Upward only: a user scaling down would meet the stabilization window.
    for (round, replicas) in [3, 5, 6, 8, 9, 10].into_iter().enumerate() {
        // At the target of 60 per pod: the HPA keeps whatever it reads.
        env.pod_metrics("web", &vec![Some("60"); usize::try_from(replicas).unwrap()]);
        deployments
            .patch(
                "web",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})),
            )
            .await
            .unwrap();
        ctl.sync_all_now().await.unwrap();
        assert_eq!(env.replicas("web").await, replicas, "round {round}");
        assert_eq!(
            env.hpa("web").await.status.unwrap().current_replicas,
            Some(replicas),
            "round {round}: the status's current replicas"
        );
        env.clock.advance(jiff::SignedDuration::from_secs(15));
    }
}

/// Delays every event of a Deployment watch by 300 ms.
async fn deployment_watch_lags(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let watch = request.uri().path().ends_with("/deployments")
        && request
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    let response = next.run(request).await;
    if !watch {
        return response;
    }
    let (parts, body) = response.into_parts();
    let late = futures::StreamExt::then(body.into_data_stream(), |chunk| async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        chunk
    });
    axum::response::Response::from_parts(parts, axum::body::Body::from_stream(late))
}

/// Periodic mode with an hour-long sync period: the new HPA's first sync
/// and then a spec change (a new `metadata.generation`). Returns how many
/// decisions the HPA has a moment after the change.
async fn decisions_after_a_spec_change(version: hpa_core::KubernetesVersion) -> usize {
    let env = Env::new();
    let ctl = ControllerHandle::start(
        env.client(),
        ControllerOptions {
            mode: SyncMode::Periodic,
            ..ControllerOptions::manual(
                ControllerConfig {
                    sync_period: Duration::from_secs(3600),
                    decision: hpa_core::DecisionConfig::of_version(version),
                    decisions_kept: 10,
                    ..ControllerConfig::default()
                },
                Arc::new(env.clock.clone()),
            )
        },
    );
    env.deployment("web", 2).await;
    env.pod_metrics("web", &[Some("50"), Some("100")]);
    env.hpa_on_pods_metric("web", "web", "apps/v1").await;
    // The first sync: at once from 1.37, else a sync period away, which a
    // sync on demand stands in for here.
    if version < hpa_core::KubernetesVersion::V1_37 {
        ctl.sync_all_now().await.unwrap();
    }
    let first = tokio::time::timeout(Duration::from_secs(10), async {
        while ctl.decisions("default", "web", 10).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(first.is_ok(), "never synced");
    let hpas = Api::<HorizontalPodAutoscaler>::namespaced(env.client(), "default");
    let before = hpas.get("web").await.unwrap().metadata.generation;
    hpas.patch(
        "web",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(serde_json::json!({"spec": {"maxReplicas": 8}})),
    )
    .await
    .unwrap();
    let after = hpas.get("web").await.unwrap().metadata.generation;
    assert_ne!(before, after, "the spec change made no new generation");
    let _ = tokio::time::timeout(Duration::from_secs(3), async {
        while ctl.decisions("default", "web", 10).len() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let n = ctl.decisions("default", "web", 10).len();
    ctl.shutdown().await.unwrap();
    n
}

#[tokio::test]
async fn periodic_mode_syncs_a_spec_change_at_once_from_1_37() {
    // k/k #138294 with HPAGeneration (beta, on in 1.37): the informer's
    // update handler adds the key at once when the generation grew.
    assert_eq!(
        decisions_after_a_spec_change(hpa_core::KubernetesVersion::V1_37).await,
        2
    );
}

#[tokio::test]
async fn periodic_mode_leaves_a_spec_change_to_the_next_period_through_1_36() {
    assert_eq!(
        decisions_after_a_spec_change(hpa_core::KubernetesVersion::V1_36).await,
        1
    );
}

/// Upstream's `TestStoreScaleEvents`, case "replace one entry, use policies
/// with different periods", through the controller: policies `Pods 10 /
/// 60s` and `Percent 100 / 30s` in both directions, events 8 (29 s ago),
/// 6 (59 s), 7 and 9 (61 s). A scale from 10 to 5, then (a user having set
/// 10 again) from 10 to 15, each mark the two 61 s events outdated and
/// reuse the last one: 7 stays, outdated, in both directions.
#[tokio::test]
async fn outdated_scale_events_are_kept_and_the_last_one_reused_as_upstream_stores_them() {
    use hpa_controller::{AgedScaleEvent, Direction};
    use jiff::SignedDuration;
    let env = Env::new();
    let ctl = env.controller(ControllerConfig::default());
    env.deployment("worker", 10).await;
    let rules = serde_json::json!({
        "stabilizationWindowSeconds": 0,
        "policies": [
            {"type": "Pods", "value": 10, "periodSeconds": 60},
            {"type": "Percent", "value": 100, "periodSeconds": 30}
        ]
    });
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "worker", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "worker"},
            "minReplicas": 1,
            "maxReplicas": 20,
            "metrics": [{
                "type": "External",
                "external": {
                    "metric": {"name": "queue_messages"},
                    "target": {"type": "AverageValue", "averageValue": "10"}
                }
            }],
            "behavior": {"scaleUp": rules.clone(), "scaleDown": rules}
        }
    }))
    .unwrap();
    Api::<HorizontalPodAutoscaler>::namespaced(env.client(), "default")
        .create(&PostParams::default(), &hpa)
        .await
        .unwrap();
    let queue = |value: u32| {
        let script: Script = from_yaml(&format!(
            "external:\n  - metric: queue_messages\n    value: {value}\n"
        ))
        .unwrap();
        env.metrics.load(&script).unwrap();
    };
    let seeded = |direction, age: i64, pods| AgedScaleEvent {
        age: SignedDuration::from_secs(age),
        direction,
        pods,
        outdated: false,
    };
    let mut seeds = Vec::new();
    for direction in [Direction::Up, Direction::Down] {
        for (age, pods) in [(29, 8), (59, 6), (61, 7), (61, 9)] {
            seeds.push(seeded(direction, age, pods));
        }
    }
    ctl.seed_scale_events("default", "worker", &seeds);

    queue(50);
    ctl.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("worker").await, 5);
    Api::<Deployment>::namespaced(env.client(), "default")
        .patch(
            "worker",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"spec": {"replicas": 10}})),
        )
        .await
        .unwrap();
    queue(150);
    ctl.sync_all_now().await.unwrap();
    assert_eq!(env.replicas("worker").await, 15);

    let kept = |direction| {
        ctl.scale_events("default", "worker")
            .into_iter()
            .filter(|e| e.direction == direction)
            .map(|e| (e.age.as_secs(), e.pods, e.outdated))
            .collect::<Vec<_>>()
    };
    let upstream = vec![(29, 8, false), (59, 6, false), (61, 7, true), (0, 5, false)];
    assert_eq!(kept(Direction::Up), upstream, "scale-up events");
    assert_eq!(kept(Direction::Down), upstream, "scale-down events");
    ctl.shutdown().await.unwrap();
}
