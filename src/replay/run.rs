//! Runs the controller over a series on the simulated cluster's virtual
//! clock: the same embedded sim, fake metrics server (in-process) and
//! controller the Gherkin world uses, one sync per sync period.

use std::sync::Arc;

use fake_metrics_server::script::{
    ContainerSpec, ExternalSpec, MetricSpec as ScriptMetric, ObjectSpec, PodSpec, Script,
    Value as ScriptValue,
};
use hpa_core::clock::{Clock, VirtualClock};
use hpa_sim::{PodDelays, SimConfig};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscaler, MetricSpec};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde::Serialize;

use super::keda::KedaReplay;
use super::manifest::{HpaManifest, Workload};
use super::series::Series;
use crate::testbed::controller::{Driver, Requests};
use crate::testbed::embedded::Embedded;
use hpa_controller::config::ControllerConfig;
use hpa_controller::decisions::DecisionRecord;
use hpa_keda::adapter::Replicas;

use super::error::ReplayError;

/// At most this many syncs (a week of 15 s syncs).
pub const MAX_SYNCS: u64 = 7 * 24 * 60 * 4;

/// How the series' values reach the pods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Spread {
    /// A pod metric's value is the total over the workload, spread evenly
    /// over the ready pods (a CSV of the service's total CPU or requests).
    #[default]
    Total,
    /// A pod metric's value is what each ready pod reports.
    PerPod,
}

/// What a replay does beyond the manifests and the series.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The controller's flags and feature gates.
    pub config: ControllerConfig,
    pub spread: Spread,
    /// How long new pods take to run and to become Ready.
    pub pod_delays: PodDelays,
}

/// Where one HPA metric's values come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Feed {
    /// Index in `spec.metrics`.
    pub index: usize,
    /// The series column feeding it.
    pub column: String,
    #[serde(skip)]
    kind: FeedKind,
}

#[derive(Debug, Clone, PartialEq)]
enum FeedKind {
    /// Pod resource usage on `container` (`None`: the first).
    Resource {
        resource: String,
        container: Option<String>,
    },
    /// A custom metric of each pod.
    Pods { metric: String },
    /// A custom metric of one object.
    Object {
        resource: String,
        name: String,
        metric: String,
    },
    /// An external series.
    External {
        metric: String,
        labels: std::collections::BTreeMap<String, String>,
    },
}

/// What the replay observed: one decision per sync.
#[derive(Debug, Clone)]
pub struct ReplayRun {
    /// `namespace/name` of the HPA.
    pub hpa: String,
    /// The virtual time of the series' start.
    pub start: Timestamp,
    pub sync_period: SignedDuration,
    pub feeds: Vec<Feed>,
    /// The decisions, oldest first.
    pub decisions: Vec<DecisionRecord>,
    /// Ready pods when each decision was taken.
    pub ready: Vec<i32>,
    /// What KEDA did, when a ScaledObject was replayed.
    pub keda: Option<super::keda::KedaRun>,
}

/// Replays `series` against the HPA and its workload.
pub async fn replay(
    hpa: &HpaManifest,
    workload: &Workload,
    series: &Series,
    options: &ReplayOptions,
) -> Result<ReplayRun, ReplayError> {
    let (period, syncs) = span(series, options)?;
    let ns = hpa.namespace.clone();
    let clock = VirtualClock::default();
    let mut namespaces = SimConfig::default().namespaces;
    if !namespaces.contains(&ns) {
        namespaces.push(ns.clone());
    }
    let Embedded { sim, metrics } = Embedded::new(
        Some(clock.clone()),
        SimConfig {
            pod_delays: options.pod_delays,
            namespaces,
            feature_gates: options.config.decision.feature_gates,
            ..SimConfig::default()
        },
    );
    let client = sim.client();
    let kind = workload
        .object
        .get("kind")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("Deployment")
        .to_owned();
    let stored = create_objects(&sim, hpa, workload, &kind).await?;
    // A ScaledObject's triggers are fed through KEDA's adapter instead.
    let mut keda = match &hpa.scaled_object {
        Some(so) => Some(KedaReplay::new(hpa, so, series)?),
        None => None,
    };
    let feeds = if keda.is_some() {
        Vec::new()
    } else {
        feeds(hpa, &stored, series)?
    };
    let start = clock.now();
    let extensions = Requests::default().extensions(&options.config);
    let driver = Driver::start(
        options.config.clone(),
        client.clone(),
        Arc::new(clock.clone()) as Arc<dyn Clock>,
        None,
        extensions,
    )
    .await?;
    let sync = ReplaySync {
        hpa,
        series,
        spread: options.spread,
        scale_api: Api::namespaced_with(client.clone(), &ns, &apps_resource(&kind)),
        pods: Api::namespaced(client, &ns),
        selector: workload.selector(),
        containers: workload.containers(),
        feeds: &feeds,
        metrics: &metrics,
        driver: &driver,
    };
    let mut decisions = Vec::with_capacity(usize::try_from(syncs).unwrap_or(0));
    let mut ready_counts = Vec::with_capacity(decisions.capacity());
    for k in 0..syncs {
        if k > 0 {
            sim.advance(period);
        }
        let t = (period * i32::try_from(k).unwrap_or(i32::MAX)).as_secs_f64();
        if let Some((decision, ready)) = sync.at(t, clock.now(), keda.as_mut()).await? {
            decisions.push(decision);
            ready_counts.push(ready);
        }
    }
    Ok(ReplayRun {
        hpa: format!("{ns}/{}", hpa.name),
        start,
        sync_period: period,
        feeds,
        decisions,
        ready: ready_counts,
        keda: keda.map(|k| k.run),
    })
}

/// The replay's sync period and how many syncs the series spans; a series
/// longer than [`MAX_SYNCS`] is refused.
fn span(series: &Series, options: &ReplayOptions) -> Result<(SignedDuration, u64), ReplayError> {
    let period = SignedDuration::try_from(options.config.sync_period)
        .unwrap_or(SignedDuration::from_secs(15))
        .max(SignedDuration::from_millis(1));
    let syncs = (series.end() / period.as_secs_f64()).floor() as u64 + 1;
    if syncs > MAX_SYNCS {
        return Err(ReplayError::TooLong {
            syncs,
            period: hpa_controller::config::format_go_duration(options.config.sync_period),
            max: MAX_SYNCS,
        });
    }
    Ok((period, syncs))
}

/// Creates the workload, then ages its pods ten minutes (as the Gherkin
/// step "a deployment with N pods" makes them, so that the CPU
/// initialization period is behind them when the series starts), then the
/// HPA; answers the HPA as stored. A refusal names the manifest's file and
/// line.
async fn create_objects(
    sim: &hpa_sim::Sim,
    hpa: &HpaManifest,
    workload: &Workload,
    kind: &str,
) -> Result<HorizontalPodAutoscaler, ReplayError> {
    let client = sim.client();
    let ns = &hpa.namespace;
    let (w_file, w_line) = workload
        .source
        .as_ref()
        .map_or(("(default workload)".to_owned(), 0), |(f, l)| {
            (f.display().to_string(), *l)
        });
    create(&client, ns, &apps_resource(kind), workload.object.clone())
        .await
        .map_err(|e| ReplayError::Create {
            file: w_file,
            line: w_line,
            what: format!("{kind} {ns}/{}", hpa.target_name),
            reason: refusal(&e).1,
        })?;
    sim.advance(SignedDuration::from_mins(10));
    let mut manifest = hpa.doc.value.clone();
    manifest["metadata"]["namespace"] = serde_json::json!(ns);
    create(&client, ns, &hpa_resource(hpa.version), manifest)
        .await
        .map_err(|e| {
            let (field, reason) = refusal(&e);
            ReplayError::Create {
                file: hpa.doc.file.display().to_string(),
                line: field.map_or(hpa.doc.line, |f| hpa.doc.line_of(&f)),
                what: format!("HorizontalPodAutoscaler {ns}/{}", hpa.name),
                reason,
            }
        })?;
    Api::<HorizontalPodAutoscaler>::namespaced(client, ns)
        .get(&hpa.name)
        .await
        .map_err(|source| ReplayError::Kube {
            action: format!("reading HPA {ns}/{} back", hpa.name),
            source,
        })
}

/// What one sync of the replay needs: the objects, the series and how it
/// reaches the pods, the fake metrics server and the controller.
struct ReplaySync<'a> {
    hpa: &'a HpaManifest,
    series: &'a Series,
    spread: Spread,
    scale_api: Api<DynamicObject>,
    pods: Api<Pod>,
    selector: String,
    containers: Vec<String>,
    feeds: &'a [Feed],
    metrics: &'a fake_metrics_server::AppState,
    driver: &'a Driver,
}

impl ReplaySync<'_> {
    /// The sync at `t` seconds into the series (`now` on the clock): KEDA
    /// acts first (when replaying a ScaledObject), the ready pods get the
    /// series' values, the controller syncs; answers its decision and the
    /// ready pods it saw.
    async fn at(
        &self,
        t: f64,
        now: Timestamp,
        mut keda: Option<&mut KedaReplay>,
    ) -> Result<Option<(DecisionRecord, i32)>, ReplayError> {
        let (ns, target) = (&self.hpa.namespace, &self.hpa.target_name);
        if let Some(keda) = keda.as_deref_mut() {
            let current = scale_replicas(&self.scale_api, target).await?;
            if let Some(to) = keda.operate(self.series, t, now, current) {
                self.scale_api
                    .patch_scale(
                        target,
                        &PatchParams::default(),
                        &Patch::Merge(serde_json::json!({"spec": {"replicas": to}})),
                    )
                    .await
                    .map_err(|source| ReplayError::Kube {
                        action: format!("KEDA scaling {ns}/{target} to {to}"),
                        source,
                    })?;
            }
        }
        let list = self
            .pods
            .list(&ListParams::default().labels(&self.selector))
            .await
            .map_err(|source| ReplayError::Kube {
                action: format!("listing the pods of {ns}/{target}"),
                source,
            })?;
        let ready: Vec<&Pod> = list.items.iter().filter(|p| is_ready(p)).collect();
        let ready_count = i32::try_from(ready.len()).unwrap_or(i32::MAX);
        let mut script = script(
            ns,
            &ready,
            &self.containers,
            self.feeds,
            self.series,
            t,
            self.spread,
        );
        if let Some(keda) = keda.as_deref_mut() {
            let current = scale_replicas(&self.scale_api, target).await?;
            let replicas = Replicas {
                current,
                ready: ready_count,
            };
            script
                .external
                .extend(keda.answers(self.series, t, replicas));
        }
        self.metrics
            .load(&script)
            .map_err(|e| ReplayError::Metrics {
                at: crate::plot::svg::duration_label(t),
                reason: e.to_string(),
            })?;
        self.driver.sync_all_now().await?;
        let Some(decision) = self.driver.decisions(ns, &self.hpa.name, 1).pop() else {
            return Ok(None);
        };
        if let Some(keda) = keda {
            keda.record_fallback();
        }
        Ok(Some((decision, ready_count)))
    }
}

/// The scale target's `spec.replicas`, through its scale subresource.
async fn scale_replicas(api: &Api<DynamicObject>, name: &str) -> Result<i32, ReplayError> {
    let scale = api
        .get_scale(name)
        .await
        .map_err(|source| ReplayError::Kube {
            action: format!("reading the scale of {name}"),
            source,
        })?;
    Ok(scale.spec.and_then(|s| s.replicas).unwrap_or(0))
}

async fn create(
    client: &kube::Client,
    ns: &str,
    resource: &ApiResource,
    object: serde_json::Value,
) -> Result<(), kube::Error> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, resource);
    let object: DynamicObject = serde_json::from_value(object).map_err(kube::Error::SerdeError)?;
    api.create(&PostParams::default(), &object).await?;
    Ok(())
}

/// Why the API server refused an object: the first invalid field, and
/// every cause (`spec.maxReplicas: Required value: must be set and greater than 0`).
fn refusal(e: &kube::Error) -> (Option<String>, String) {
    match e {
        kube::Error::Api(status) => {
            let causes = status
                .details
                .as_ref()
                .map(|d| d.causes.as_slice())
                .unwrap_or_default();
            if causes.is_empty() {
                (None, status.message.clone())
            } else {
                (
                    causes.first().map(|c| c.field.clone()),
                    causes
                        .iter()
                        .map(|c| format!("field {}: {}", c.field, c.message))
                        .collect::<Vec<_>>()
                        .join("; "),
                )
            }
        }
        other => (None, other.to_string()),
    }
}

fn apps_resource(kind: &str) -> ApiResource {
    ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        api_version: "apps/v1".into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_ascii_lowercase()),
    }
}

fn hpa_resource(version: &str) -> ApiResource {
    ApiResource {
        group: "autoscaling".into(),
        version: version.into(),
        api_version: format!("autoscaling/{version}"),
        kind: "HorizontalPodAutoscaler".into(),
        plural: "horizontalpodautoscalers".into(),
    }
}

/// Running, Ready and not being deleted.
fn is_ready(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    pod.metadata.deletion_timestamp.is_none()
        && status.and_then(|s| s.phase.as_deref()) == Some("Running")
        && status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Matches every metric of the stored (v2) HPA with a series column: the
/// metric's name (`cpu`, `memory`, `CONTAINER/cpu` or `cpu`, the custom or
/// external metric's name); a series of one column feeds an HPA of one
/// metric whatever the column's name.
fn feeds(
    hpa: &HpaManifest,
    stored: &HorizontalPodAutoscaler,
    series: &Series,
) -> Result<Vec<Feed>, ReplayError> {
    let specs: Vec<MetricSpec> = stored.spec.metrics.clone().unwrap_or_default();
    let mut out = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let field = format!("spec.metrics[{index}]");
        let Some((kind, names)) = feed_kind(spec) else {
            return Err(ReplayError::MetricType {
                hpa_file: hpa.doc.file.display().to_string(),
                line: hpa.doc.line_of(&field),
                field: format!("{field}.type"),
                type_: spec.type_.clone(),
            });
        };
        let column = names
            .iter()
            .find(|n| series.column(n).is_some())
            .cloned()
            .or_else(|| match (specs.len(), series.columns.as_slice()) {
                (1, [only]) => Some(only.name.clone()),
                _ => None,
            });
        let Some(column) = column else {
            return Err(missing_column(hpa, &field, spec, &names, series));
        };
        out.push(Feed {
            index,
            column,
            kind,
        });
    }
    Ok(out)
}

/// What one metric of the HPA is fed with, and the names of the columns
/// that may feed it, best first; `None` for a metric type replays do not
/// know.
fn feed_kind(spec: &MetricSpec) -> Option<(FeedKind, Vec<String>)> {
    Some(match spec.type_.as_str() {
        "Resource" => {
            let r = spec
                .resource
                .as_ref()
                .map(|r| r.name.clone())
                .unwrap_or_default();
            (
                FeedKind::Resource {
                    resource: r.clone(),
                    container: None,
                },
                vec![r],
            )
        }
        "ContainerResource" => {
            let (c, r) = spec
                .container_resource
                .as_ref()
                .map(|c| (c.container.clone(), c.name.clone()))
                .unwrap_or_default();
            (
                FeedKind::Resource {
                    resource: r.clone(),
                    container: Some(c.clone()),
                },
                vec![format!("{c}/{r}"), r],
            )
        }
        "Pods" => {
            let m = spec
                .pods
                .as_ref()
                .map(|p| p.metric.name.clone())
                .unwrap_or_default();
            (FeedKind::Pods { metric: m.clone() }, vec![m])
        }
        "Object" => {
            let o = spec.object.as_ref();
            let m = o.map(|o| o.metric.name.clone()).unwrap_or_default();
            let described = o.map(|o| &o.described_object);
            let resource = described
                .map(|d| {
                    let group = d
                        .api_version
                        .as_deref()
                        .and_then(|v| v.split_once('/'))
                        .map(|(g, _)| g.to_owned());
                    plural(&d.kind, group.as_deref())
                })
                .unwrap_or_default();
            (
                FeedKind::Object {
                    resource,
                    name: described.map(|d| d.name.clone()).unwrap_or_default(),
                    metric: m.clone(),
                },
                vec![m],
            )
        }
        "External" => {
            let e = spec.external.as_ref();
            let m = e.map(|e| e.metric.name.clone()).unwrap_or_default();
            let labels = e
                .and_then(|e| e.metric.selector.as_ref())
                .and_then(|s| s.match_labels.clone())
                .unwrap_or_default();
            (
                FeedKind::External {
                    metric: m.clone(),
                    labels,
                },
                vec![m],
            )
        }
        _ => return None,
    })
}

/// No column feeds the metric at `field`: the error names the metric's
/// name field (file and line) and the columns the series has.
fn missing_column(
    hpa: &HpaManifest,
    field: &str,
    spec: &MetricSpec,
    names: &[String],
    series: &Series,
) -> ReplayError {
    let mut files: Vec<String> = series
        .columns
        .iter()
        .map(|c| c.file.display().to_string())
        .collect();
    files.dedup();
    let field_path = match spec.type_.as_str() {
        "Resource" => format!("{field}.resource.name"),
        "ContainerResource" => format!("{field}.containerResource.name"),
        "Pods" => format!("{field}.pods.metric.name"),
        "Object" => format!("{field}.object.metric.name"),
        _ => format!("{field}.external.metric.name"),
    };
    ReplayError::MissingColumn {
        hpa_file: hpa.doc.file.display().to_string(),
        line: hpa.doc.line_of(&field_path),
        field: field_path,
        metric: names.first().cloned().unwrap_or_default(),
        found: format!(
            "columns of {}: {}",
            files.join(", "),
            series.names().join(", ")
        ),
    }
}

/// The custom metrics API's resource of a kind (`deployments.apps`).
fn plural(kind: &str, group: Option<&str>) -> String {
    let lower = kind.to_ascii_lowercase();
    let plural = if lower.ends_with('s') {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    };
    match group {
        Some(g) if !g.is_empty() => format!("{plural}.{g}"),
        _ => plural,
    }
}

/// A value for the fake metrics server, in milli-units.
fn milli(v: f64) -> ScriptValue {
    ScriptValue(format!("{}m", (v * 1000.0).round().max(0.0) as i64))
}

/// What the fake metrics server serves at `t`: every ready pod's usage and
/// custom metrics, the objects' and the external series' values.
fn script(
    ns: &str,
    ready: &[&Pod],
    containers: &[String],
    feeds: &[Feed],
    series: &Series,
    t: f64,
    spread: Spread,
) -> Script {
    let share = |v: f64| match spread {
        Spread::Total if !ready.is_empty() => v / ready.len() as f64,
        _ => v,
    };
    let value = |f: &Feed| series.column(&f.column).and_then(|c| c.at(t));
    let mut script = Script::default();
    for pod in ready {
        let mut spec = PodSpec {
            namespace: ns.to_owned(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            // Every container reports (0 unless a feed says otherwise), so
            // that pod sums see them all.
            containers: containers
                .iter()
                .map(|c| ContainerSpec {
                    name: c.clone(),
                    cpu: Some(milli(0.0)),
                    memory: Some(milli(0.0)),
                })
                .collect(),
            ..PodSpec::default()
        };
        for feed in feeds {
            let Some(v) = value(feed) else { continue };
            match &feed.kind {
                FeedKind::Resource {
                    resource,
                    container,
                } => {
                    let at = container
                        .as_ref()
                        .and_then(|c| spec.containers.iter().position(|x| &x.name == c))
                        .unwrap_or(0);
                    if let Some(c) = spec.containers.get_mut(at) {
                        match resource.as_str() {
                            "cpu" => c.cpu = Some(milli(share(v))),
                            "memory" => c.memory = Some(milli(share(v))),
                            _ => {}
                        }
                    }
                }
                FeedKind::Pods { metric } => {
                    spec.metrics
                        .insert(metric.clone(), ScriptMetric::Value(milli(share(v))));
                }
                FeedKind::Object { .. } | FeedKind::External { .. } => {}
            }
        }
        script.pods.push(spec);
    }
    for feed in feeds {
        let Some(v) = value(feed) else { continue };
        match &feed.kind {
            FeedKind::Object {
                resource,
                name,
                metric,
            } => script.objects.push(ObjectSpec {
                resource: resource.clone(),
                namespace: Some(ns.to_owned()),
                name: name.clone(),
                kind: None,
                api_version: None,
                labels: Default::default(),
                metrics: [(metric.clone(), ScriptMetric::Value(milli(v)))].into(),
            }),
            FeedKind::External { metric, labels } => script.external.push(ExternalSpec {
                namespace: ns.to_owned(),
                metric: metric.clone(),
                labels: labels.clone(),
                value: milli(v),
                timestamp: None,
                window: None,
            }),
            FeedKind::Resource { .. } | FeedKind::Pods { .. } => {}
        }
    }
    script
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::series::Column;

    fn pod(name: &str) -> Pod {
        serde_json::from_value(
            serde_json::json!({"metadata": {"name": name, "labels": {"app": "web"}}}),
        )
        .unwrap()
    }

    fn cpu_series(v: f64) -> Series {
        Series {
            columns: vec![Column {
                name: "cpu".to_owned(),
                file: "s.csv".into(),
                line: 1,
                samples: vec![(0.0, v)],
            }],
            start: None,
        }
    }

    fn cpu_feed() -> Feed {
        Feed {
            index: 0,
            column: "cpu".to_owned(),
            kind: FeedKind::Resource {
                resource: "cpu".to_owned(),
                container: None,
            },
        }
    }

    #[test]
    fn the_total_is_spread_evenly_over_the_ready_pods() {
        let (a, b) = (pod("web-0"), pod("web-1"));
        let containers = ["app".to_owned(), "sidecar".to_owned()];
        let s = script(
            "default",
            &[&a, &b],
            &containers,
            &[cpu_feed()],
            &cpu_series(0.5),
            0.0,
            Spread::Total,
        );
        assert_eq!(s.pods.len(), 2);
        for p in &s.pods {
            assert_eq!(p.containers[0].cpu, Some(ScriptValue("250m".to_owned())));
            assert_eq!(
                p.containers[1].cpu,
                Some(ScriptValue("0m".to_owned())),
                "other containers report 0"
            );
        }
    }

    #[test]
    fn per_pod_values_go_to_each_ready_pod_as_given() {
        let (a, b) = (pod("web-0"), pod("web-1"));
        let s = script(
            "default",
            &[&a, &b],
            &["app".to_owned()],
            &[cpu_feed()],
            &cpu_series(0.5),
            0.0,
            Spread::PerPod,
        );
        assert!(
            s.pods
                .iter()
                .all(|p| p.containers[0].cpu == Some(ScriptValue("500m".to_owned())))
        );
    }

    #[test]
    fn object_metrics_are_served_as_given_on_their_object() {
        let feed = Feed {
            index: 0,
            column: "cpu".to_owned(),
            kind: FeedKind::Object {
                resource: plural("Ingress", Some("networking.k8s.io")),
                name: "main".to_owned(),
                metric: "rps".to_owned(),
            },
        };
        let a = pod("web-0");
        let s = script(
            "default",
            &[&a],
            &[],
            &[feed],
            &cpu_series(0.5),
            0.0,
            Spread::Total,
        );
        assert_eq!(s.objects[0].resource, "ingresses.networking.k8s.io");
        assert_eq!(
            s.objects[0].metrics["rps"],
            ScriptMetric::Value(ScriptValue("500m".to_owned()))
        );
    }
}
