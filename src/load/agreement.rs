//! Do the request-saving caches change a decision? The load's HPAs,
//! Deployments and metrics on the embedded simulated cluster, on a virtual
//! clock, synced period by period twice from the same start: once as
//! `hpa-controller` ships (scale targets from the Deployment watch, shared
//! metrics lists) and once with upstream's requests. Each HPA's sequence of
//! what the core was given (scale, pods, metrics) and what it decided must
//! be the same in both. A cache that handed the core a stale scale or an
//! old list shows up as the first sync where the two differ.
//!
//! The live load's "disagree" column checks something else: that the shell
//! applies the core's decision on the inputs it gathered. It cannot see a
//! stale input, since it replays the core on that same input.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use hpa_controller::{ControllerConfig, ReconcileObservation, ReconcileObserver};
use hpa_core::clock::{Clock, VirtualClock};
use hpa_core::decide::{Decision, Fetched, ScaleInfo};
use hpa_core::pod::CorePod;
use hpa_sim::SimConfig;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};

use super::options::{LoadError, LoadOptions, MetricProfile};
use super::workload::{
    CREATE_CONCURRENCY, LoadPod, MetricKind, Target, deployment, hpa, invalid, list_pods,
    metric_changes, pod_churn, setup, targets,
};
use crate::testbed::controller::{Driver, Requests};
use crate::testbed::embedded::Embedded;

/// Where every run of the check starts, so both see the same timestamps.
const START: Timestamp = Timestamp::constant(1_800_000_000, 0);

/// How long the cluster runs before the first sync: every pod Ready for
/// longer than a metrics window and the CPU initialization period's start.
const SETTLE: SignedDuration = SignedDuration::from_secs(60);

/// What one sync gave the core and what it decided.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    now: Timestamp,
    scale: ScaleInfo,
    pods: Vec<Arc<CorePod>>,
    metrics: Vec<Option<Fetched>>,
    decision: Decision,
}

/// Each HPA's steps, by `namespace/name`.
type Sequences = BTreeMap<String, Vec<Step>>;

/// Keeps every observed reconcile's inputs and decision.
#[derive(Default)]
struct Recorder(Mutex<Sequences>);

impl ReconcileObserver for Recorder {
    fn observe(&self, o: ReconcileObservation) {
        let step = Step {
            now: o.now,
            scale: o.input.scale,
            pods: o.input.pods,
            metrics: o.input.metrics,
            decision: o.decision,
        };
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(o.key)
            .or_default()
            .push(step);
    }
}

/// Divergences listed in full; the rest are counted.
const SHOWN: usize = 20;

/// One configuration's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigurationRun {
    /// Which configuration.
    pub requests: Requests,
    /// Reconciles that reached the core.
    pub syncs: usize,
    /// Of them, those that scaled the target.
    pub rescales: usize,
    /// Requests the controller sent (the sim's counters).
    pub requests_sent: u64,
}

/// Where the two configurations first part for one HPA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// `namespace/name`.
    pub hpa: String,
    /// The sync (0: the first) where they part.
    pub sync: usize,
    /// What differs there: the scale, the pods, a metric, the decision, or
    /// the number of syncs.
    pub what: String,
}

/// What the check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgreementReport {
    pub hpas: usize,
    pub periods: usize,
    pub profile: MetricProfile,
    /// The shipped configuration's run, then upstream's requests'.
    pub runs: [ConfigurationRun; 2],
    /// The HPAs whose sequences differ.
    pub divergences: Vec<Divergence>,
}

impl AgreementReport {
    /// Whether every HPA's sequence is the same under both.
    pub fn agrees(&self) -> bool {
        self.divergences.is_empty()
    }

    /// Rescales compared: those of the shipped configuration's run, each
    /// checked against the same sync of upstream's requests.
    pub fn rescales_compared(&self) -> usize {
        self.runs[0].rescales
    }

    /// Whether neither run rescaled anything: the check then compared
    /// decisions that never changed, and proves little about the caches.
    pub fn compared_no_rescale(&self) -> bool {
        self.runs.iter().all(|r| r.rescales == 0)
    }
}

impl std::fmt::Display for AgreementReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "caches on and off: {} HPAs, {} sync periods on a virtual clock, metrics {}",
            self.hpas,
            self.periods,
            self.profile.as_str()
        )?;
        writeln!(
            f,
            "{:<18} {:>8} {:>9} {:>13}",
            "configuration", "syncs", "rescales", "API requests"
        )?;
        for run in &self.runs {
            writeln!(
                f,
                "{:<18} {:>8} {:>9} {:>13}",
                run.requests.as_str(),
                run.syncs,
                run.rescales,
                run.requests_sent
            )?;
        }
        writeln!(
            f,
            "compared: {} syncs of {} HPAs, {} of them rescales",
            self.runs[0].syncs,
            self.hpas,
            self.rescales_compared()
        )?;
        if self.agrees() {
            write!(
                f,
                "every HPA was given the same scale, pods and metrics and decided the same at every sync"
            )
        } else {
            writeln!(f, "{} HPAs differ:", self.divergences.len())?;
            for d in self.divergences.iter().take(SHOWN) {
                writeln!(f, "  {} at sync {}: {}", d.hpa, d.sync, d.what)?;
            }
            if self.divergences.len() > SHOWN {
                writeln!(f, "  ... and {} more", self.divergences.len() - SHOWN)?;
            }
            Ok(())
        }
    }
}

/// Runs the load of `options` (its HPAs, pods per HPA, namespaces, metric
/// profile and controller settings) for `periods` sync periods under both
/// configurations, and compares.
pub async fn check(options: &LoadOptions, periods: usize) -> Result<AgreementReport, LoadError> {
    let shipped = run(options, periods, Requests::Shipped).await?;
    let upstream = run(options, periods, Requests::Upstream).await?;
    let divergences = compare(&shipped.1, &upstream.1);
    Ok(AgreementReport {
        hpas: options.hpas,
        periods,
        profile: options.profile,
        runs: [shipped.0, upstream.0],
        divergences,
    })
}

/// One configuration: build the load, let it settle, then one sync on
/// demand per period, the metrics following the profile on virtual time.
async fn run(
    options: &LoadOptions,
    periods: usize,
    requests: Requests,
) -> Result<(ConfigurationRun, Sequences), LoadError> {
    let clock = VirtualClock::new(START);
    let embedded = Embedded::new(
        Some(clock.clone()),
        SimConfig {
            feature_gates: options.settings.decision.feature_gates,
            ..SimConfig::default()
        },
    );
    let client = embedded.sim.client();
    let all = targets(options);
    let namespaces: Vec<String> = {
        let mut ns: Vec<String> = all.iter().map(|t| t.namespace.clone()).collect();
        ns.dedup();
        ns
    };
    create(&client, options, &all, &namespaces).await?;
    let externals: Vec<Target> = all
        .iter()
        .filter(|t| t.kind == MetricKind::External)
        .cloned()
        .collect();
    let period = SignedDuration::try_from(options.settings.sync_period)
        .map_err(|e| LoadError::Invalid(format!("sync period: {e}")))?;
    let total = options.settings.sync_period * u32::try_from(periods).unwrap_or(u32::MAX);

    let mut pods: Vec<LoadPod> = Vec::new();
    let mut factor = options
        .profile
        .factor(Duration::ZERO, total, options.settings.sync_period);
    rescript(
        &embedded,
        &client,
        &namespaces,
        &externals,
        options,
        &mut pods,
        factor,
        true,
    )
    .await?;
    embedded.sim.advance(SETTLE);
    rescript(
        &embedded,
        &client,
        &namespaces,
        &externals,
        options,
        &mut pods,
        factor,
        false,
    )
    .await?;

    let recorder = Arc::new(Recorder::default());
    let config = ControllerConfig {
        decisions_kept: 1,
        ..options.settings.clone()
    };
    let mut extensions = requests.extensions(&config);
    extensions.observer = Some(Arc::clone(&recorder) as Arc<dyn ReconcileObserver>);
    let driver = Driver::start(
        config,
        client.clone(),
        Arc::new(clock.clone()) as Arc<dyn Clock>,
        None,
        extensions,
    )
    .await
    .map_err(|e| LoadError::Invalid(format!("starting the controller: {e}")))?;
    embedded.sim.requests().reset();
    for i in 0..periods {
        let elapsed = options.settings.sync_period * u32::try_from(i).unwrap_or(u32::MAX);
        let want = options
            .profile
            .factor(elapsed, total, options.settings.sync_period);
        let changed = want != factor;
        factor = want;
        rescript(
            &embedded,
            &client,
            &namespaces,
            &externals,
            options,
            &mut pods,
            factor,
            changed,
        )
        .await?;
        driver
            .sync_all_now()
            .await
            .map_err(|e| LoadError::Invalid(format!("sync {i}: {e}")))?;
        embedded.sim.advance(period);
    }
    let requests_sent = embedded.sim.requests().total();
    drop(driver);
    let sequences = std::mem::take(
        &mut *recorder
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let steps = sequences.values().flatten();
    let run = ConfigurationRun {
        requests,
        syncs: steps.clone().count(),
        rescales: steps.filter(|s| s.decision.scale_to.is_some()).count(),
        requests_sent,
    };
    Ok((run, sequences))
}

/// The namespaces, Deployments and HPAs of the load.
async fn create(
    client: &kube::Client,
    options: &LoadOptions,
    all: &[Target],
    namespaces: &[String],
) -> Result<(), LoadError> {
    for ns in namespaces {
        let object: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": ns}
        }))
        .map_err(invalid)?;
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &object)
            .await
            .map_err(setup(format!("create namespace {ns}")))?;
    }
    futures::stream::iter(all.iter().map(|t| {
        let client = client.clone();
        async move {
            let d: Deployment = deployment(t, options.pods_per_hpa, false).map_err(invalid)?;
            Api::<Deployment>::namespaced(client.clone(), &t.namespace)
                .create(&PostParams::default(), &d)
                .await
                .map_err(setup(format!(
                    "create deployment {}/{}",
                    t.namespace, t.name
                )))?;
            let h: HorizontalPodAutoscaler = hpa(t, options.pods_per_hpa).map_err(invalid)?;
            Api::<HorizontalPodAutoscaler>::namespaced(client, &t.namespace)
                .create(&PostParams::default(), &h)
                .await
                .map_err(setup(format!("create HPA {}/{}", t.namespace, t.name)))?;
            Ok::<(), LoadError>(())
        }
    }))
    .buffer_unordered(CREATE_CONCURRENCY)
    .try_collect::<()>()
    .await
}

/// Gives the pods that appeared their values at `factor` and forgets the
/// gone ones; with `everything`, every pod and series again (the factor
/// changed).
#[allow(clippy::too_many_arguments)] // reason: one call site per phase, each naming every part
async fn rescript(
    embedded: &Embedded,
    client: &kube::Client,
    namespaces: &[String],
    externals: &[Target],
    options: &LoadOptions,
    pods: &mut Vec<LoadPod>,
    factor: f64,
    everything: bool,
) -> Result<(), LoadError> {
    let now = list_pods(client, namespaces).await?;
    let changes = if everything {
        metric_changes(&now, externals, options.pods_per_hpa, factor)
    } else {
        pod_churn(pods, &now, factor)
    };
    if !changes.is_empty() {
        embedded
            .metrics
            .apply(&changes)
            .map_err(LoadError::Metrics)?;
    }
    *pods = now;
    Ok(())
}

/// The first difference of each HPA's sequences.
fn compare(shipped: &Sequences, upstream: &Sequences) -> Vec<Divergence> {
    let mut found = Vec::new();
    let keys: std::collections::BTreeSet<&String> = shipped.keys().chain(upstream.keys()).collect();
    for key in keys {
        let empty = Vec::new();
        let a = shipped.get(key).unwrap_or(&empty);
        let b = upstream.get(key).unwrap_or(&empty);
        let first = a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (a, b))| difference(a, b).map(|what| (i, what)));
        let divergence = match first {
            Some((sync, what)) => Some((sync, what)),
            None if a.len() != b.len() => Some((
                a.len().min(b.len()),
                format!("{} syncs with caches, {} without", a.len(), b.len()),
            )),
            None => None,
        };
        if let Some((sync, what)) = divergence {
            found.push(Divergence {
                hpa: key.clone(),
                sync,
                what,
            });
        }
    }
    found
}

/// What differs between two steps, the inputs first.
fn difference(shipped: &Step, upstream: &Step) -> Option<String> {
    if shipped.now != upstream.now {
        return Some(format!(
            "synced at {} with caches, {} without",
            shipped.now, upstream.now
        ));
    }
    if shipped.scale != upstream.scale {
        return Some(format!(
            "scale {:?} with caches, {:?} without",
            shipped.scale, upstream.scale
        ));
    }
    if shipped.pods != upstream.pods {
        return Some(format!(
            "{} pods with caches, {} without (or other states)",
            shipped.pods.len(),
            upstream.pods.len()
        ));
    }
    for (i, (a, b)) in shipped.metrics.iter().zip(&upstream.metrics).enumerate() {
        if a != b {
            return Some(format!(
                "metric {i}: {} with caches, {} without",
                short(&format!("{a:?}")),
                short(&format!("{b:?}"))
            ));
        }
    }
    let (a, b) = (
        comparable(&shipped.decision),
        comparable(&upstream.decision),
    );
    if a != b {
        return Some(format!(
            "the decisions differ at {} (scale to {:?} with caches, {:?} without)",
            first_difference(&a, &b, String::new()),
            shipped.decision.scale_to,
            upstream.decision.scale_to
        ));
    }
    None
}

/// A long debug text cut to a line's worth.
fn short(text: &str) -> String {
    const MAX: usize = 160;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A decision as compared: whole, but for the UID and resourceVersion of
/// the HPA it carries, which the two clusters give in the order objects
/// were created and written (events included); neither is an input of
/// the core.
fn comparable(decision: &Decision) -> serde_json::Value {
    let mut value = serde_json::to_value(decision).unwrap_or_default();
    if let Some(meta) = value.pointer_mut("/state/hpa/metadata")
        && let Some(meta) = meta.as_object_mut()
    {
        meta.remove("resourceVersion");
        meta.remove("uid");
    }
    value
}

/// The JSON pointer of the first place two values differ.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: String) -> String {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, value) in x {
                match y.get(key) {
                    Some(other) if other == value => {}
                    Some(other) => return first_difference(value, other, format!("{at}/{key}")),
                    None => return format!("{at}/{key}"),
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map_or(at.clone(), |k| format!("{at}/{k}"))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find(|(_, (p, q))| p != q)
            .map_or(at.clone(), |(i, (p, q))| {
                first_difference(p, q, format!("{at}/{i}"))
            }),
        _ => at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(profile: MetricProfile) -> LoadOptions {
        LoadOptions {
            hpas: 24,
            pods_per_hpa: 3,
            hpas_per_namespace: 8,
            profile,
            ..LoadOptions::default()
        }
    }

    /// The shipped caches give the core what upstream's requests give it,
    /// sync after sync, while the load rises and the HPAs scale.
    #[tokio::test]
    async fn the_caches_change_no_input_and_no_decision_of_a_rising_load() {
        let report = check(&options(MetricProfile::Ramp), 12).await.unwrap();
        assert!(report.agrees(), "{report}");
        let [shipped, upstream] = &report.runs;
        assert_eq!(shipped.syncs, 24 * 12, "{report}");
        assert_eq!(upstream.syncs, shipped.syncs);
        assert!(shipped.rescales > 0, "nothing scaled: {report}");
        assert!(
            shipped.requests_sent < upstream.requests_sent,
            "the caches saved no request: {report}"
        );
    }

    #[tokio::test]
    async fn the_caches_change_no_decision_of_a_spiky_load() {
        let report = check(&options(MetricProfile::Spiky), 10).await.unwrap();
        assert!(report.agrees(), "{report}");
        assert!(report.runs[0].rescales > 0, "nothing scaled: {report}");
        assert!(!report.compared_no_rescale());
        assert!(
            report.to_string().contains(&format!(
                "compared: 240 syncs of 24 HPAs, {} of them rescales",
                report.runs[0].rescales
            )),
            "{report}"
        );
    }

    /// Under the steady profile nothing rescales: the report says it
    /// compared no rescale (the command then refuses the check).
    #[tokio::test]
    async fn a_steady_load_compares_no_rescale() {
        let report = check(&options(MetricProfile::Steady), 3).await.unwrap();
        assert!(report.compared_no_rescale(), "{report}");
        assert!(
            report
                .to_string()
                .contains("compared: 72 syncs of 24 HPAs, 0 of them rescales"),
            "{report}"
        );
    }

    /// One sync of an HPA on an external metric with an average target of
    /// 10, as the core decides it.
    fn step(replicas: i32, value: &str) -> Step {
        let hpa: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 10,
                     "metrics": [{"type": "External", "external": {
                         "metric": {"name": "queue"},
                         "target": {"type": "AverageValue", "averageValue": "10"}}}]}
        }))
        .unwrap();
        let metrics = vec![Some(Fetched::External(Ok(
            hpa_core::decide::ExternalSample {
                values: vec![hpa_core::Quantity::parse(value).unwrap()],
                timestamp: START,
            },
        )))];
        let input = hpa_core::DecisionInput {
            hpa: hpa.into(),
            scale: ScaleInfo::new(replicas, replicas, "app=web"),
            pods: Vec::new(),
            other_hpas: Vec::new(),
            metrics: metrics.clone(),
        };
        let decision = hpa_core::decide(
            &input,
            &hpa_core::HpaHistory::default(),
            &hpa_core::DecisionConfig::default(),
            START,
        );
        Step {
            now: START,
            scale: input.scale,
            pods: Vec::new(),
            metrics,
            decision,
        }
    }

    /// A stale scale, an old list or a missing sync each show.
    #[test]
    fn a_stale_input_or_a_missing_sync_is_a_divergence() {
        let a = Sequences::from([("ns/web".into(), vec![step(2, "40"), step(4, "40")])]);
        assert!(compare(&a, &a).is_empty());
        let stale_scale = Sequences::from([("ns/web".into(), vec![step(2, "40"), step(2, "40")])]);
        let d = compare(&a, &stale_scale);
        assert_eq!((d.len(), d[0].sync), (1, 1));
        assert!(d[0].what.starts_with("scale"), "{}", d[0].what);
        let old_list = Sequences::from([("ns/web".into(), vec![step(2, "40"), step(4, "20")])]);
        assert!(compare(&a, &old_list)[0].what.starts_with("metric 0"));
        let short = Sequences::from([("ns/web".into(), vec![step(2, "40")])]);
        assert_eq!(
            compare(&a, &short)[0].what,
            "2 syncs with caches, 1 without"
        );
    }
}
