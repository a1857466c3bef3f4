//! Rules: values for the pods the server learns exist but was not told
//! about by name, through the metrics APIs and the control API.
#![allow(clippy::unwrap_used, reason = "tests fail loudly on unexpected errors")]

mod support;

use fake_metrics_server::client::ClientError;
use fake_metrics_server::rules::PodEvent;
use fake_metrics_server::script::ScriptPatch;
use fake_metrics_server::types::{MetricValueList, PodMetricsList};
use support::start;

const RULES: &str = r#"
pods:
  - {namespace: shop, name: web-0, labels: {app: web}, containers: [{name: app, cpu: 900m}]}
rules:
  - name: web
    namespace: shop
    selector: app=web
    containers: [{name: app, cpu: 100m, memory: 64Mi}]
    metrics: {requests_per_second: 10}
  - name: rest
    namespace: shop
    containers: [{name: app, cpu: 5m}]
"#;

fn appeared(namespace: &str, name: &str, app: &str) -> PodEvent {
    PodEvent::Applied {
        namespace: namespace.into(),
        name: name.into(),
        labels: [("app".to_owned(), app.to_owned())].into(),
    }
}

fn cpu(list: &PodMetricsList) -> Vec<(String, String)> {
    list.items
        .iter()
        .map(|p| {
            (
                p.metadata.name.clone().unwrap(),
                p.containers[0].usage["cpu"].0.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn pods_created_later_under_generated_names_get_the_values_of_their_rule_at_once() {
    let s = start(RULES).await;
    let pods = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods?labelSelector=app%3Dweb";
    let list: PodMetricsList = s.get_as(pods).await;
    assert_eq!(cpu(&list), [("web-0".into(), "900m".into())]);

    s.state.observe_pods(appeared("shop", "web-0", "web"));
    s.state
        .observe_pods(appeared("shop", "web-7d9c5b-abcde", "web"));
    s.state
        .observe_pods(appeared("shop", "db-7d9c5b-xk2zq", "db"));
    s.state
        .observe_pods(appeared("bank", "web-7d9c5b-qqqqq", "web"));
    let list: PodMetricsList = s.get_as(pods).await;
    assert_eq!(
        cpu(&list),
        [
            ("web-0".into(), "900m".into()),
            ("web-7d9c5b-abcde".into(), "100m".into())
        ],
        "the declared pod keeps its values; the other gets the rule's"
    );
    let all: PodMetricsList = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods")
        .await;
    assert_eq!(all.items.len(), 3, "the db pod gets the catch-all rule");
    let bank: PodMetricsList = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/bank/pods")
        .await;
    assert!(bank.items.is_empty(), "no rule for namespace bank");

    let custom: MetricValueList = s
        .get_as("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/requests_per_second?labelSelector=app%3Dweb")
        .await;
    assert_eq!(custom.items.len(), 1);
    assert_eq!(custom.items[0].described_object.name, "web-7d9c5b-abcde");

    s.state.observe_pods(PodEvent::Deleted {
        namespace: "shop".into(),
        name: "web-7d9c5b-abcde".into(),
    });
    let list: PodMetricsList = s.get_as(pods).await;
    assert_eq!(list.items.len(), 1, "a deleted pod reports nothing");
}

#[tokio::test]
async fn a_patch_replaces_a_rule_by_name_and_the_pods_follow() {
    let s = start(RULES).await;
    s.state
        .observe_pods(appeared("shop", "web-7d9c5b-abcde", "web"));
    let mut patch: ScriptPatch = fake_metrics_server::script::from_yaml(
        "rules: [{name: web, namespace: shop, selector: app=web, containers: [{name: app, cpu: 300m}]}]",
    )
    .unwrap();
    let summary = s.control.patch_script(&patch).await.unwrap();
    assert_eq!((summary.rules, summary.pods_from_rules), (2, 1));
    let one: fake_metrics_server::types::PodMetrics = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/web-7d9c5b-abcde")
        .await;
    assert_eq!(one.containers[0].usage["cpu"].0, "300m");
    patch.rules.clear();
    patch.remove_rules = vec!["web".into()];
    let summary = s.control.patch_script(&patch).await.unwrap();
    assert_eq!(summary.rules, 1);
    let one: fake_metrics_server::types::PodMetrics = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/web-7d9c5b-abcde")
        .await;
    assert_eq!(
        one.containers[0].usage["cpu"].0, "5m",
        "now the catch-all's"
    );
}

#[tokio::test]
async fn a_bad_rule_is_refused_naming_its_field_and_the_previous_script_keeps_serving() {
    let s = start(RULES).await;
    s.state
        .observe_pods(appeared("shop", "web-7d9c5b-abcde", "web"));
    let before = s.control.script().await.unwrap();
    let err = s
        .control
        .put_script_yaml("rules: [{name: web, namespace: shop, selector: 'app in (', containers: [{name: app, cpu: 1m}]}]")
        .await
        .unwrap_err();
    match &err {
        ClientError::Rejected {
            status, message, ..
        } => {
            assert_eq!(*status, 400);
            assert!(message.contains("rules[0].selector"), "{message}");
        }
        other => panic!("unexpected {other}"),
    }
    let err = s
        .control
        .put_script_yaml(
            "rules: [{name: web, namespace: shop, containers: [{name: app, cpu: lots}]}]",
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("lots"), "{err}");
    assert_eq!(s.control.script().await.unwrap(), before);
    let one: fake_metrics_server::types::PodMetrics = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/web-7d9c5b-abcde")
        .await;
    assert_eq!(one.containers[0].usage["cpu"].0, "100m");
}

#[tokio::test]
async fn a_new_script_keeps_the_pods_the_server_knows_exist() {
    let s = start(RULES).await;
    s.state
        .observe_pods(appeared("shop", "web-7d9c5b-abcde", "web"));
    let summary = s
        .control
        .put_script_yaml(
            "rules: [{name: all, namespace: shop, containers: [{name: app, cpu: 42m}]}]",
        )
        .await
        .unwrap();
    assert_eq!((summary.known_pods, summary.pods_from_rules), (1, 1));
    assert_eq!(s.control.summary().await.unwrap(), summary);
    s.control.reset().await.unwrap();
    assert_eq!(
        s.state.inventory().0,
        1,
        "reset forgets the script, not the cluster"
    );
}

#[tokio::test]
async fn the_request_log_counts_the_items_each_list_answered() {
    let s = start(RULES).await;
    let _: PodMetricsList = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods?labelSelector=app%3Dweb")
        .await;
    let _: PodMetricsList = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods?labelSelector=app%3Dnone")
        .await;
    let page = s
        .control
        .requests(&fake_metrics_server::log::LogFilter {
            group: Some(fake_metrics_server::log::Group::Resource),
            ..Default::default()
        })
        .await
        .unwrap();
    let items: Vec<Option<u64>> = page.entries.iter().map(|e| e.items).collect();
    assert_eq!(items, [Some(1), Some(0)]);
}

#[tokio::test]
async fn clearing_a_namespace_drops_its_rules_and_the_pods_they_gave_values() {
    let s = start(RULES).await;
    s.state
        .observe_pods(appeared("shop", "web-7d9c5b-abcde", "web"));
    s.control
        .patch_script(
            &fake_metrics_server::script::from_yaml(
                "rules: [{name: other, namespace: bank, containers: [{name: app, cpu: 1m}]}]",
            )
            .unwrap(),
        )
        .await
        .unwrap();
    s.control.reset_namespace("shop").await.unwrap();
    let summary = s.control.summary().await.unwrap();
    assert_eq!(
        (summary.rules, summary.pods_from_rules),
        (1, 0),
        "bank's rule stays; shop's pods have no values"
    );
    let list: PodMetricsList = s
        .get_as("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods")
        .await;
    assert!(list.items.is_empty(), "{list:?}");
}
