//! A live HPA as a scenario: what `explain` read (the HPA as stored, its
//! target's replicas, the pods with their phase, readiness, start and
//! ready times and requests, the metric values now), written in the stable
//! step language of docs/steps.md, ending with the replicas the
//! computation gives. `hpa-harness test` runs it on the simulated cluster
//! with a controller that starts with no memory, as the computation does.
//!
//! Also the replay series of `capture --series`: each metric's total over
//! the pods, sampled at intervals, as a CSV `hpa-harness replay` reads.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use hpa_core::calc::{PodCustomSample, PodResourceSample};
use hpa_core::decide::{ExternalSample, Fetched, ObjectSample};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscaler, MetricSpec};
use k8s_openapi::api::core::v1::{Container, Pod};
use serde_json::{Value, json};

use super::error::LiveError;
use super::explain::Explanation;
use super::read::Snapshot;

/// The HPA's manifest as stored, without its status and the fields the API
/// server owns (managed fields, uid, resourceVersion, ...), namespace-free
/// so that a scenario puts it in its own.
pub fn manifest(hpa: &HorizontalPodAutoscaler) -> Value {
    let mut value = serde_json::to_value(hpa).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.remove("status");
    }
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "managedFields",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "namespace",
            "selfLink",
        ] {
            meta.remove(field);
        }
        meta.retain(|_, v| !matches!(v, Value::String(s) if s.is_empty()));
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
            if annotations.is_empty() {
                meta.remove("annotations");
            }
        }
    }
    value
}

/// Whole seconds from `then` to `now` (never negative), as a Go duration.
fn age(now: Timestamp, then: Timestamp) -> String {
    let secs = (now.as_second() - then.as_second()).max(0);
    hpa_core::go_duration::format(SignedDuration::from_secs(secs))
}

/// A YAML document indented under a doc string.
fn yaml_block(value: &Value, indent: &str) -> String {
    let text = serde_saphyr::to_string(value).unwrap_or_else(|_| value.to_string());
    text.lines()
        .map(|l| format!("{indent}{l}\n"))
        .collect::<String>()
}

/// The scenario's word for a scale target kind.
fn workload_word(kind: &str) -> Option<&'static str> {
    match kind {
        "Deployment" => Some("deployment"),
        "StatefulSet" => Some("statefulset"),
        "ReplicaSet" => Some("replicaset"),
        _ => None,
    }
}

/// `a=1, b=2` of per-container quantities (`+name` for sidecars), `name=`
/// for a container without one.
fn per_container(pod: &Pod, resource: &str) -> String {
    let spec = pod.spec.as_ref();
    let cell = |c: &Container, sidecar: bool| {
        let q = c
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get(resource))
            .map(|q| q.0.clone())
            .unwrap_or_default();
        format!("{}{}={q}", if sidecar { "+" } else { "" }, c.name)
    };
    let mut cells: Vec<String> = spec
        .map(|s| s.containers.iter().map(|c| cell(c, false)).collect())
        .unwrap_or_default();
    cells.extend(
        spec.and_then(|s| s.init_containers.as_ref())
            .into_iter()
            .flatten()
            .filter(|c| c.restart_policy.as_deref() == Some("Always"))
            .map(|c| cell(c, true)),
    );
    cells.join(", ")
}

fn pod_level(pod: &Pod, resource: &str, overhead: bool) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    let list = if overhead {
        spec.overhead.as_ref()
    } else {
        spec.resources.as_ref().and_then(|r| r.requests.as_ref())
    };
    list.and_then(|l| l.get(resource)).map(|q| q.0.clone())
}

fn table(rows: &[Vec<String>], indent: &str) -> String {
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            format!("{indent}| {} |\n", cells.join(" | "))
        })
        .collect()
}

/// `10`, `10 and 20`, `10, 20 and 30`.
fn values(list: &[String]) -> String {
    match list {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The name of a metric as its column or step names it, and which API
/// serves it.
fn metric_name(spec: &MetricSpec) -> Option<(String, &'static str)> {
    match spec.type_.as_str() {
        "Resource" => spec.resource.as_ref().map(|r| (r.name.clone(), "resource")),
        "ContainerResource" => spec
            .container_resource
            .as_ref()
            .map(|r| (r.name.clone(), "resource")),
        "Pods" => spec
            .pods
            .as_ref()
            .map(|p| (p.metric.name.clone(), "custom")),
        "Object" => spec
            .object
            .as_ref()
            .map(|o| (o.metric.name.clone(), "custom")),
        "External" => spec
            .external
            .as_ref()
            .map(|e| (e.metric.name.clone(), "external")),
        _ => None,
    }
}

/// The scenario reproducing `snapshot`, whose `Then` is `explanation`'s
/// desired replicas; `flags` are the controller flags it was decided with
/// (`NAME=VALUE`: read from the cluster, then `--flag`'s).
pub fn scenario(
    snapshot: &Snapshot,
    explanation: &Explanation,
    flags: &[String],
) -> Result<String, LiveError> {
    let key = &snapshot.key;
    let refuse = |reason: String| LiveError::Capture {
        hpa: key.clone(),
        reason,
    };
    let kind = snapshot.target.kind.as_str();
    let word = workload_word(kind).ok_or_else(|| {
        refuse(format!(
            "its scale target is a {kind}; scenarios make Deployments, StatefulSets and ReplicaSets"
        ))
    })?;
    let mut out = String::new();
    write_preamble(&mut out, snapshot, explanation, flags);
    write_workload(&mut out, snapshot, word).map_err(refuse)?;

    // The HPA as stored.
    let _ = writeln!(out, "    And the HPA:");
    let _ = writeln!(out, "      \"\"\"yaml");
    out.push_str(&yaml_block(&manifest(&snapshot.hpa), "      "));
    let _ = writeln!(out, "      \"\"\"");

    // The metrics, as read now.
    let pod_names: BTreeSet<String> = snapshot
        .pods
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    out.push_str(&metric_steps(snapshot, &pod_names).map_err(refuse)?);

    let (_, name) = key.split_once('/').unwrap_or(("default", key));
    let target = &snapshot.target.name;
    let _ = writeln!(out, "    When the HPA controller syncs");
    let _ = writeln!(
        out,
        "    Then the {word} \"{target}\" has {} replicas",
        explanation.desired_replicas
    );
    let _ = writeln!(
        out,
        "    And the HPA \"{name}\" wants {} replicas",
        explanation.desired_replicas
    );
    Ok(out)
}

/// The scenario's opening: a comment on where it comes from and what it
/// cannot know, its `Feature` and `Scenario` lines, then the release, the
/// controller's flags and the namespace.
fn write_preamble(
    out: &mut String,
    snapshot: &Snapshot,
    explanation: &Explanation,
    flags: &[String],
) {
    let (key, now) = (&snapshot.key, snapshot.now);
    let (namespace, _) = key.split_once('/').unwrap_or(("default", key));
    let _ = writeln!(
        out,
        "# Captured by `hpa-harness capture` from HPA {key} at {now}, decided as"
    );
    let _ = writeln!(
        out,
        "# Kubernetes {} ({}). The controller's memory (stabilization windows,",
        explanation.release.version, explanation.release.source
    );
    let _ = writeln!(
        out,
        "# scale events) is not in the API: the scenario starts with a controller that"
    );
    let _ = writeln!(out, "# has none, as the computation does.");
    let _ = writeln!(out, "Feature: HPA {key} as captured at {now}\n");
    let _ = writeln!(
        out,
        "  Scenario: {key} wants {} replicas with the metrics read at {now}",
        explanation.desired_replicas
    );
    let _ = writeln!(out, "    Given Kubernetes {}", explanation.release.version);
    if !flags.is_empty() {
        let _ = writeln!(out, "    And the HPA controller runs with:");
        let mut rows = vec![vec!["flag".to_owned(), "value".to_owned()]];
        for f in flags {
            let (n, v) = f.split_once('=').unwrap_or((f, ""));
            rows.push(vec![n.trim_start_matches("--").to_owned(), v.to_owned()]);
        }
        out.push_str(&table(&rows, "      "));
    }
    if namespace != "default" {
        let _ = writeln!(out, "    And a namespace \"{namespace}\"");
    }
}

/// The workload and its pods, then its scale where the scale counts other
/// than the pods; a pod in a phase no scenario can give is refused.
fn write_workload(out: &mut String, snapshot: &Snapshot, word: &str) -> Result<(), String> {
    let target = &snapshot.target.name;
    if snapshot.pods.is_empty() {
        let _ = writeln!(out, "    And a {word} \"{target}\" with 0 pods");
    } else {
        let _ = writeln!(out, "    And a {word} \"{target}\" with pods:");
        out.push_str(&pod_table(snapshot)?);
    }
    let (spec, status) = (snapshot.scale.spec_replicas, snapshot.scale.status_replicas);
    let pods = i32::try_from(snapshot.pods.len()).unwrap_or(i32::MAX);
    if spec != pods || status != pods {
        let _ = writeln!(
            out,
            "    And the scale of \"{target}\" reports {spec} spec replicas and {status} status replicas"
        );
    }
    Ok(())
}

/// The pods' table: each pod's phase, readiness, times and per-container
/// requests, plus the pod-level request and overhead columns some pod has.
fn pod_table(snapshot: &Snapshot) -> Result<String, String> {
    let optional = [
        ("pod cpu request", "cpu", false),
        ("pod memory request", "memory", false),
        ("pod cpu overhead", "cpu", true),
        ("pod memory overhead", "memory", true),
    ];
    let used: Vec<_> = optional
        .iter()
        .filter(|(_, r, o)| snapshot.pods.iter().any(|p| pod_level(p, r, *o).is_some()))
        .collect();
    let mut header: Vec<String> = [
        "pod",
        "phase",
        "ready",
        "started",
        "ready since",
        "deleted",
        "cpu request",
        "memory request",
    ]
    .map(str::to_owned)
    .to_vec();
    header.extend(used.iter().map(|(c, _, _)| (*c).to_owned()));
    let mut rows = vec![header];
    for pod in &snapshot.pods {
        let mut row = pod_row(pod, snapshot.now)?;
        row.extend(
            used.iter()
                .map(|(_, r, o)| pod_level(pod, r, *o).unwrap_or_default()),
        );
        rows.push(row);
    }
    Ok(table(&rows, "      "))
}

/// One pod's cells up to its per-container requests; a phase a scenario
/// cannot give a pod is refused.
fn pod_row(pod: &Pod, now: Timestamp) -> Result<Vec<String>, String> {
    let status = pod.status.as_ref();
    let phase = status
        .and_then(|s| s.phase.clone())
        .unwrap_or_else(|| "Pending".to_owned());
    if !matches!(
        phase.as_str(),
        "Running" | "Pending" | "Succeeded" | "Failed"
    ) {
        return Err(format!(
            "pod {} is in phase {phase}, which a scenario cannot give a pod",
            pod.metadata.name.as_deref().unwrap_or_default()
        ));
    }
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    let started = status
        .and_then(|s| s.start_time.as_ref())
        .map_or_else(|| "never".to_owned(), |t| age(now, t.0));
    Ok(vec![
        pod.metadata.name.clone().unwrap_or_default(),
        phase,
        match ready.map(|c| c.status.as_str()) {
            Some("True") => "true".to_owned(),
            Some(_) => "false".to_owned(),
            None => "none".to_owned(),
        },
        started,
        ready
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| age(now, t.0))
            .unwrap_or_default(),
        pod.metadata.deletion_timestamp.is_some().to_string(),
        per_container(pod, "cpu"),
        per_container(pod, "memory"),
    ])
}

/// The metric steps: one `the pods report:` table for the pods' values
/// (resource metrics per container, Pods metrics per pod, with each pod's
/// sample time and window), then the object and external metrics; a
/// failed read is its metrics API failing.
fn metric_steps(snapshot: &Snapshot, pods: &BTreeSet<String>) -> Result<String, String> {
    let specs = snapshot.hpa.spec.metrics.clone().unwrap_or_default();
    let mut report = PodReport::default();
    let mut steps = String::new();
    let mut failed: BTreeMap<&'static str, bool> = BTreeMap::new();
    for (spec, fetched) in specs.iter().zip(&snapshot.metrics) {
        let Some((metric, api)) = metric_name(spec) else {
            continue;
        };
        let Some(fetched) = fetched else { continue };
        let ok = !matches!(
            fetched,
            Fetched::PodResource(Err(_))
                | Fetched::PodsCustom(Err(_))
                | Fetched::Object(Err(_))
                | Fetched::External(Err(_))
        );
        let all_failed = failed.entry(api).or_insert(true);
        *all_failed &= !ok;
        match fetched {
            Fetched::PodResource(Ok(samples)) => report.add_resource(&metric, samples, pods),
            Fetched::PodsCustom(Ok(samples)) => report.add_pods(&metric, samples, pods)?,
            Fetched::Object(Ok(sample)) => object_step(&mut steps, spec, &metric, sample)?,
            Fetched::External(Ok(sample)) => external_step(&mut steps, spec, &metric, sample)?,
            _ => {}
        }
    }
    for (api, all_failed) in &failed {
        if *all_failed {
            let _ = writeln!(steps, "    And the {api} metrics API fails");
        }
    }
    let mut out = String::new();
    report.write(&mut out, pods, snapshot.now);
    out.push_str(&steps);
    Ok(out)
}

/// The pods' values for `the pods report:`, one column per pod metric.
#[derive(Default)]
struct PodReport {
    columns: Vec<String>,
    /// pod -> column -> cell.
    cells: BTreeMap<String, BTreeMap<String, String>>,
    /// pod -> (timestamp, window, whether a resource sample set them).
    times: BTreeMap<String, (Timestamp, Option<SignedDuration>, bool)>,
}

impl PodReport {
    fn add_column(&mut self, metric: &str) {
        if !self.columns.iter().any(|c| c == metric) {
            self.columns.push(metric.to_owned());
        }
    }

    /// A resource metric: each pod's usage per container; its sample's
    /// time and window are the pod's.
    fn add_resource(
        &mut self,
        metric: &str,
        samples: &[PodResourceSample],
        pods: &BTreeSet<String>,
    ) {
        self.add_column(metric);
        for s in samples.iter().filter(|s| pods.contains(&*s.pod)) {
            let cell = s
                .containers
                .iter()
                .filter_map(|c| c.usage.get(metric).map(|q| format!("{}={q}", c.name)))
                .collect::<Vec<_>>()
                .join(", ");
            self.cells
                .entry(s.pod.to_string())
                .or_default()
                .insert(metric.to_owned(), cell);
            self.times
                .insert(s.pod.to_string(), (s.timestamp, Some(s.window), true));
        }
    }

    /// A Pods metric: each pod's value; its sample's time and window are
    /// the pod's unless another metric set them. A Pods metric named as a
    /// resource is refused: the step reads that column as the resource.
    fn add_pods(
        &mut self,
        metric: &str,
        samples: &[PodCustomSample],
        pods: &BTreeSet<String>,
    ) -> Result<(), String> {
        if matches!(metric, "cpu" | "memory") {
            return Err(format!(
                "its Pods metric is named {metric:?}, which a scenario reads as the resource"
            ));
        }
        self.add_column(metric);
        for s in samples.iter().filter(|s| pods.contains(&*s.pod)) {
            self.cells
                .entry(s.pod.to_string())
                .or_default()
                .insert(metric.to_owned(), s.value.to_string());
            self.times
                .entry(s.pod.to_string())
                .or_insert((s.timestamp, s.window, false));
        }
        Ok(())
    }

    /// The `the pods report:` step and its table, pods in `pods` order;
    /// nothing when no pod has a value.
    fn write(&self, out: &mut String, pods: &BTreeSet<String>, now: Timestamp) {
        if self.columns.is_empty() || self.cells.is_empty() {
            return;
        }
        let _ = writeln!(out, "    And the pods report:");
        let mut header = vec!["pod".to_owned()];
        header.extend(self.columns.iter().cloned());
        header.extend(["timestamp".to_owned(), "window".to_owned()]);
        let mut rows = vec![header];
        for pod in pods {
            let Some(values) = self.cells.get(pod) else {
                continue;
            };
            let mut row = vec![pod.clone()];
            row.extend(
                self.columns
                    .iter()
                    .map(|c| values.get(c).cloned().unwrap_or_default()),
            );
            let (ts, window) = self
                .times
                .get(pod)
                .map(|(t, w, _)| (age(now, *t), w.map(hpa_core::go_duration::format)))
                .unwrap_or_default();
            row.push(ts);
            row.push(window.unwrap_or_default());
            rows.push(row);
        }
        out.push_str(&table(&rows, "      "));
    }
}

/// `object metric "M" of KIND "NAME" is V`, the kind qualified by its
/// group where it has one.
fn object_step(
    steps: &mut String,
    spec: &MetricSpec,
    metric: &str,
    sample: &ObjectSample,
) -> Result<(), String> {
    let object = spec
        .object
        .as_ref()
        .map(|o| &o.described_object)
        .ok_or("an Object metric without its object")?;
    let group = object
        .api_version
        .as_deref()
        .and_then(|v| v.split_once('/').map(|(g, _)| g))
        .unwrap_or_default();
    let word = if group.is_empty() {
        object.kind.clone()
    } else {
        format!("{}.{group}", object.kind.to_lowercase())
    };
    let _ = writeln!(
        steps,
        "    And object metric \"{metric}\" of {word} \"{}\" is {}",
        object.name, sample.value
    );
    Ok(())
}

/// `external metric "M" with selector "a=b" is V`, none for an empty
/// answer; a selector with matchExpressions is refused (the step has only
/// labels).
fn external_step(
    steps: &mut String,
    spec: &MetricSpec,
    metric: &str,
    sample: &ExternalSample,
) -> Result<(), String> {
    let selector = spec
        .external
        .as_ref()
        .and_then(|e| e.metric.selector.as_ref());
    if selector
        .and_then(|s| s.match_expressions.as_ref())
        .is_some_and(|e| !e.is_empty())
    {
        return Err(format!(
            "external metric {metric:?} selects its series with matchExpressions, which the step \"external metric ... with selector ...\" cannot write"
        ));
    }
    let labels = selector
        .and_then(|s| s.match_labels.as_ref())
        .map(|l| {
            l.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let list: Vec<String> = sample.values.iter().map(ToString::to_string).collect();
    if !list.is_empty() {
        let _ = writeln!(
            steps,
            "    And external metric \"{metric}\" with selector \"{labels}\" is {}",
            values(&list)
        );
    }
    Ok(())
}

/// The header of a capture's replay series: `timestamp` and one column per
/// metric of the HPA, named as a replay names it.
pub fn series_header(hpa: &HorizontalPodAutoscaler) -> Vec<String> {
    let mut header = vec!["timestamp".to_owned()];
    for spec in hpa.spec.metrics.iter().flatten() {
        if let Some((name, _)) = metric_name(spec)
            && !header.contains(&name)
        {
            header.push(name);
        }
    }
    header
}

/// One row of the replay series: each metric's total over the pods (its
/// value, for Object and External metrics), at `offset`; a failed read is
/// an empty cell (the replay keeps the previous value).
pub fn series_row(snapshot: &Snapshot, header: &[String], offset: SignedDuration) -> Vec<String> {
    let specs = snapshot.hpa.spec.metrics.clone().unwrap_or_default();
    let mut totals: BTreeMap<String, f64> = BTreeMap::new();
    for (spec, fetched) in specs.iter().zip(&snapshot.metrics) {
        let (Some((name, _)), Some(fetched)) = (metric_name(spec), fetched) else {
            continue;
        };
        let container = spec
            .container_resource
            .as_ref()
            .map(|c| c.container.clone());
        let total = match fetched {
            Fetched::PodResource(Ok(samples)) => samples
                .iter()
                .flat_map(|s| s.containers.iter())
                .filter(|c| container.as_ref().is_none_or(|n| *n == c.name))
                .filter_map(|c| c.usage.get(&name))
                .map(hpa_core::Quantity::as_f64)
                .sum(),
            Fetched::PodsCustom(Ok(samples)) => samples.iter().map(|s| s.value.as_f64()).sum(),
            Fetched::Object(Ok(sample)) => sample.value.as_f64(),
            Fetched::External(Ok(sample)) => sample.values.iter().map(|v| v.as_f64()).sum(),
            _ => continue,
        };
        totals.entry(name).or_insert(total);
    }
    let mut row = vec![hpa_core::go_duration::format(offset)];
    row.extend(header.iter().skip(1).map(|name| {
        totals
            .get(name)
            .map(|v| format!("{}", (v * 1e6).round() / 1e6))
            .unwrap_or_default()
    }));
    row
}

/// The manifests a replay of the captured series reads: the HPA as stored
/// and its workload (the current replicas, the first pod's containers and
/// requests).
pub fn replay_manifests(snapshot: &Snapshot) -> String {
    let (namespace, _) = snapshot.key.split_once('/').unwrap_or(("default", ""));
    let spec = snapshot
        .pods
        .first()
        .and_then(|p| p.spec.as_ref())
        .map(|s| {
            let keep = |list: &[Container]| -> Value {
                list.iter()
                    .map(|c| {
                        let mut v = json!({"name": c.name, "image": "registry.k8s.io/pause:3.10"});
                        if let Some(r) = c.resources.as_ref().and_then(|r| r.requests.as_ref()) {
                            v["resources"] = json!({"requests": r});
                        }
                        if let Some(p) = &c.restart_policy {
                            v["restartPolicy"] = json!(p);
                        }
                        v
                    })
                    .collect()
            };
            let mut v = json!({"containers": keep(&s.containers)});
            if let Some(init) = &s.init_containers {
                let sidecars: Vec<Container> = init
                    .iter()
                    .filter(|c| c.restart_policy.as_deref() == Some("Always"))
                    .cloned()
                    .collect();
                if !sidecars.is_empty() {
                    v["initContainers"] = keep(&sidecars);
                }
            }
            v
        })
        .unwrap_or_else(
            || json!({"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}),
        );
    let workload = crate::testbed::workload::workload(
        &snapshot.target.kind,
        namespace,
        &snapshot.target.name,
        i64::from(snapshot.scale.spec_replicas),
        spec,
    );
    let mut hpa = manifest(&snapshot.hpa);
    hpa["metadata"]["namespace"] = json!(namespace);
    format!(
        "{}---\n{}",
        serde_saphyr::to_string(&hpa).unwrap_or_default(),
        serde_saphyr::to_string(&workload).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot of every kind of metric the steps can write: cpu per
    /// container with a sidecar, a Pods metric, an Object and an External
    /// metric of two series, pods of every readiness.
    fn snapshot() -> Snapshot {
        use hpa_core::calc::{ContainerUsage, PodCustomSample, PodResourceSample};
        use hpa_core::decide::{ExternalSample, ObjectSample};
        use std::sync::Arc;
        let now: Timestamp = "2026-03-01T12:00:00Z".parse().unwrap();
        let at = |secs: i64| (now - SignedDuration::from_secs(secs)).to_string();
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "9"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 20,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50}}},
                    {"type": "Pods", "pods": {"metric": {"name": "http_requests"},
                        "target": {"type": "AverageValue", "averageValue": "10"}}},
                    {"type": "Object", "object": {"metric": {"name": "requests"},
                        "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "front"},
                        "target": {"type": "Value", "value": "100"}}},
                    {"type": "External", "external": {"metric": {"name": "queue_messages",
                        "selector": {"matchLabels": {"queue": "jobs"}}},
                        "target": {"type": "AverageValue", "averageValue": "30"}}}
                ]
            },
            "status": {"desiredReplicas": 3, "currentReplicas": 3}
        }))
        .unwrap();
        let pod = |name: &str, ready: &str, started: i64| -> Pod {
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "app", "image": "x",
                        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
                    "initContainers": [{"name": "proxy", "image": "x", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "100m"}}}]
                },
                "status": {"phase": "Running", "startTime": at(started),
                    "conditions": [{"type": "Ready", "status": ready,
                        "lastTransitionTime": at(started - 5)}]}
            }))
            .unwrap()
        };
        let pods = vec![
            pod("web-0", "True", 600),
            pod("web-1", "True", 600),
            pod("web-2", "False", 20),
        ];
        let sample = |name: &str, app: &str| PodResourceSample {
            pod: Arc::from(name),
            namespace: Arc::from("shop"),
            timestamp: now - SignedDuration::from_secs(10),
            window: SignedDuration::from_secs(30),
            containers: Arc::from(vec![
                ContainerUsage {
                    name: "app".to_owned(),
                    usage: [("cpu".to_owned(), hpa_core::Quantity::parse(app).unwrap())].into(),
                },
                ContainerUsage {
                    name: "proxy".to_owned(),
                    usage: [("cpu".to_owned(), hpa_core::Quantity::parse("50m").unwrap())].into(),
                },
            ]),
        };
        let custom = |name: &str, v: &str| PodCustomSample {
            pod: Arc::from(name),
            value: hpa_core::Quantity::parse(v).unwrap(),
            timestamp: now,
            window: Some(SignedDuration::from_secs(60)),
        };
        let q = |v: &str| hpa_core::Quantity::parse(v).unwrap();
        Snapshot {
            key: "shop/web".to_owned(),
            now,
            target: hpa.spec.scale_target_ref.clone(),
            hpa: Arc::new(hpa),
            target_resource: "deployments.apps".to_owned(),
            scale: hpa_core::ScaleInfo::new(3, 3, "app=web"),
            pods,
            others: Vec::new(),
            early: None,
            metrics: vec![
                Some(Fetched::PodResource(Ok(vec![
                    sample("web-0", "400m"),
                    sample("web-1", "450m"),
                    sample("web-2", "100m"),
                ]))),
                Some(Fetched::PodsCustom(Ok(vec![
                    custom("web-0", "20"),
                    custom("web-1", "25"),
                    custom("web-2", "5"),
                ]))),
                Some(Fetched::Object(Ok(ObjectSample {
                    value: q("150"),
                    timestamp: now,
                }))),
                Some(Fetched::External(Ok(ExternalSample {
                    values: vec![q("40"), q("50")],
                    timestamp: now,
                }))),
            ],
            metrics_apis: Vec::new(),
        }
    }

    /// The capture of every kind of metric passes as a scenario on the
    /// simulated cluster: the scenario's controller decides from the
    /// written steps what the core decided from the reads.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_capture_of_every_metric_kind_passes_as_a_scenario() {
        let snapshot = snapshot();
        let release = super::super::read::Release {
            version: hpa_core::KubernetesVersion::V1_37,
            source: "test".to_owned(),
            warning: None,
        };
        let config = hpa_controller::ControllerConfig::default();
        let explanation = super::super::explain::explain(&snapshot, &config, &release);
        assert_eq!(explanation.error, None);
        assert_eq!(explanation.current_replicas, 3);
        assert!(
            explanation.desired_replicas > 3,
            "the metrics scale up: {}",
            explanation.desired_replicas
        );
        let text = scenario(&snapshot, &explanation, &[]).unwrap();
        for line in [
            "And a namespace \"shop\"",
            "| web-2 | Running | false | 20s     | 15s         | false   | app=500m, +proxy=100m | app=1Gi, +proxy= |",
            "And object metric \"requests\" of Service \"front\" is 150",
            "And external metric \"queue_messages\" with selector \"queue=jobs\" is 40 and 50",
            "| web-0 | app=400m, proxy=50m | 20            | 10s       | 30s    |",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("captured.feature");
        std::fs::write(&file, &text).unwrap();
        let summary = crate::gherkin::runner::run(&crate::gherkin::RunOptions {
            paths: vec![file],
            concurrency: 1,
            ..crate::gherkin::RunOptions::default()
        })
        .await
        .unwrap();
        assert!(!summary.failed(), "the captured scenario passes:\n{text}");
    }

    #[test]
    fn value_lists_read_as_the_steps_write_them() {
        let v = |l: &[&str]| values(&l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(v(&["10"]), "10");
        assert_eq!(v(&["10", "20"]), "10 and 20");
        assert_eq!(v(&["10", "20", "30"]), "10, 20 and 30");
    }

    #[test]
    fn ages_are_whole_seconds_and_never_negative() {
        let now: Timestamp = "2026-01-01T00:10:00.7Z".parse().unwrap();
        assert_eq!(age(now, "2026-01-01T00:00:00Z".parse().unwrap()), "10m0s");
        assert_eq!(age(now, "2026-01-01T00:10:30Z".parse().unwrap()), "0s");
    }

    #[test]
    fn the_manifest_loses_its_status_and_server_fields() {
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u", "resourceVersion": "7",
                "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
                "managedFields": [{"manager": "kubectl"}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "labels": {"team": "a"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 5},
            "status": {"desiredReplicas": 3}
        }))
        .unwrap();
        let m = manifest(&hpa);
        assert_eq!(
            m,
            json!({
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web", "labels": {"team": "a"}},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "maxReplicas": 5}
            })
        );
    }
}
