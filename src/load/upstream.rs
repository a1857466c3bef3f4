//! Measuring an HPA controller the harness does not run (`--controller
//! upstream`). kube-controller-manager's sync of a load HPA asks the fake
//! metrics server for its one metric with a selector naming the HPA, so the
//! server's request log says which HPA synced when. The log is read every
//! half second; syncs and the intervals between two syncs of an HPA come
//! from it. A controller that shares namespace-wide metrics lists (ours, at
//! its defaults) leaves no request naming most of its syncs: the log then
//! shows shared lists, and the syncs are counted from the controller's own
//! endpoints instead ([`super::endpoint`]), or, without them, the log's
//! count is reported as the lower bound it is ([`SyncSource`]). Reconcile
//! latency and agreement with the core cannot be seen from outside and are
//! not reported.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use fake_metrics_server::log::{Group, LogEntry, LogFilter};

use super::failures::Failures;
use super::metric_kind::MetricKind;
use jiff::Timestamp;
use tokio_util::sync::CancellationToken;

/// How often the request log is read.
const POLL: Duration = Duration::from_millis(500);

/// The HPA (`namespace/name`) whose sync sent this metrics request: the
/// load's HPAs select their pods by `app=NAME` and their external series by
/// `queue=NAME`, each in its own namespace.
pub fn hpa_of_request(path: &str, query: Option<&str>) -> Option<String> {
    let namespace = path.split('/').skip_while(|s| *s != "namespaces").nth(1)?;
    let url = reqwest::Url::parse(&format!("http://log{path}?{}", query.unwrap_or(""))).ok()?;
    let selector = url
        .query_pairs()
        .find(|(k, _)| k == "labelSelector")
        .map(|(_, v)| v.into_owned())?;
    let name = selector.split(',').find_map(|term| {
        let (key, value) = term.split_once('=')?;
        matches!(key.trim(), "app" | "queue").then(|| value.trim().trim_start_matches('='))
    })?;
    Some(format!("{namespace}/{name}"))
}

/// Whether this request is a metrics list that names no single HPA (a
/// whole namespace's pods, a metric's every series): the list a controller
/// sharing lists across HPAs makes, which kube-controller-manager never does.
pub fn is_shared_list(entry: &LogEntry) -> bool {
    matches!(
        entry.group,
        Group::Resource | Group::Custom | Group::External
    ) && entry.path.contains("/namespaces/")
        && hpa_of_request(&entry.path, entry.query.as_deref()).is_none()
}

/// Why the server's answer fails the sync that asked, if it does: an
/// error status, or a list of no items (upstream: "no metrics returned").
pub fn failed_answer(entry: &LogEntry) -> Option<String> {
    let api = match entry.group {
        Group::Resource => "resource metrics API",
        Group::Custom => "custom metrics API",
        Group::External => "external metrics API",
        _ => "metrics server",
    };
    if entry.status >= 400 {
        return Some(format!("the {api} answered {}", entry.status));
    }
    (entry.items == Some(0)).then(|| format!("the {api} answered an empty list"))
}

/// Which source counted a run's syncs (the report's `syncs_counted_by`):
/// only a source that sees every sync of every HPA can say that an HPA was
/// never synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncSource {
    /// Our controller in this process: every reconcile observed.
    Observer,
    /// The fake metrics server's request log, every request naming its HPA
    /// (kube-controller-manager: one request per HPA per metric and sync).
    RequestLog,
    /// The request log, which showed shared metrics lists: the syncs served
    /// from them are not seen, so the count is a lower bound and per-HPA
    /// coverage is unknown.
    RequestLogLowerBound,
    /// The controller's `/debug/syncs` (our `hpa-controller`): the time of
    /// every decision, per HPA.
    DecisionLog,
    /// The controller's `/metrics`
    /// (`horizontal_pod_autoscaler_controller_reconciliations_total`): every
    /// sync, but not per HPA (and of every HPA it syncs, not only the
    /// load's), so no intervals and per-HPA coverage unknown.
    ControllerMetrics,
}

impl SyncSource {
    /// Every source.
    pub const ALL: [Self; 5] = [
        Self::Observer,
        Self::RequestLog,
        Self::RequestLogLowerBound,
        Self::DecisionLog,
        Self::ControllerMetrics,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Observer => "observer",
            Self::RequestLog => "request-log",
            Self::RequestLogLowerBound => "request-log-lower-bound",
            Self::DecisionLog => "decision-log",
            Self::ControllerMetrics => "controller-metrics",
        }
    }

    /// The source of a report's `syncs_counted_by`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// What the table says about it.
    pub fn description(self) -> &'static str {
        match self {
            Self::Observer => "every reconcile observed in this process",
            Self::RequestLog => {
                "the fake metrics server's request log, one request naming its HPA per sync"
            }
            Self::RequestLogLowerBound => {
                "the fake metrics server's request log, which showed shared metrics lists: a lower bound (API requests per sync an upper bound), per-HPA coverage and intervals unknown (give --controller-metrics-url)"
            }
            Self::DecisionLog => "the controller's /debug/syncs, per HPA",
            Self::ControllerMetrics => {
                "the controller's reconciliations counter (/metrics), all its HPAs: per-HPA coverage and intervals unknown"
            }
        }
    }

    /// Whether it tells every HPA's syncs apart, so that "never synced"
    /// can be counted.
    pub fn per_hpa(self) -> bool {
        matches!(self, Self::Observer | Self::RequestLog | Self::DecisionLog)
    }

    /// Whether it counts every sync (not a lower bound).
    pub fn counts_every_sync(self) -> bool {
        self != Self::RequestLogLowerBound
    }
}

/// Syncs seen in the log.
#[derive(Debug, Default)]
pub struct Seen {
    /// Syncs at or after the start of measurement.
    pub syncs: u64,
    /// Seconds between two syncs of one HPA (both measured).
    pub intervals: Vec<f64>,
    /// The same, by the metric of the load's HPA (`cpu`, `external`, ...).
    pub intervals_by_metric: BTreeMap<&'static str, Vec<f64>>,
    /// HPAs synced at all.
    pub synced: HashSet<String>,
    /// HPAs synced after the warm-up.
    pub synced_after_warmup: HashSet<String>,
    /// Log entries lost to the server's ring buffer between two reads.
    pub dropped: u64,
    /// Metrics lists naming no single HPA ([`is_shared_list`]): when there
    /// are any, the log does not see every sync.
    pub shared_lists: u64,
    /// Syncs in the measured window the server failed (an error status, or
    /// an empty list): not in `syncs`.
    pub failures: Failures,
    last: HashMap<String, Timestamp>,
}

impl Seen {
    /// `syncs` syncs in the measured window, of no HPA in particular (an
    /// aggregate count).
    pub fn counted(syncs: u64) -> Self {
        Self {
            syncs,
            ..Self::default()
        }
    }

    /// Counts one request of the log: a sync of the HPA it names when the
    /// server answered values, a failed sync when it did not.
    pub fn record(&mut self, entry: &LogEntry, measure_from: Timestamp) {
        match hpa_of_request(&entry.path, entry.query.as_deref()) {
            Some(_) if failed_answer(entry).is_some() => {
                if entry.time >= measure_from
                    && let Some(reason) = failed_answer(entry)
                {
                    self.failures.record(&reason);
                }
            }
            Some(key) => self.record_sync(key, entry.time, measure_from),
            None if is_shared_list(entry) => self.shared_lists += 1,
            None => {}
        }
    }

    /// Counts one sync of the HPA `key` at `time`.
    pub fn record_sync(&mut self, key: String, time: Timestamp, measure_from: Timestamp) {
        let prev = self.last.insert(key.clone(), time);
        if time < measure_from {
            self.synced.insert(key);
            return;
        }
        self.syncs += 1;
        if let Some(prev) = prev.filter(|p| *p >= measure_from) {
            let interval = time.duration_since(prev).as_secs_f64();
            self.intervals.push(interval);
            if let Some(metric) = MetricKind::name_of_key(&key) {
                self.intervals_by_metric
                    .entry(metric)
                    .or_default()
                    .push(interval);
            }
        }
        self.synced_after_warmup.insert(key.clone());
        self.synced.insert(key);
    }

    /// When `key` was last seen syncing.
    pub fn last_sync(&self, key: &str) -> Option<Timestamp> {
        self.last.get(key).copied()
    }
}

/// Reads the log until stopped.
pub struct LogWatch {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Seen>,
}

impl LogWatch {
    /// Starts reading `control`'s log from now; syncs before `measure_from`
    /// are the warm-up.
    pub fn start(control: ControlClient, measure_from: Timestamp) -> Self {
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let mut seen = Seen::default();
            let mut since = Timestamp::now();
            let mut last_page_end: Option<(Timestamp, String, Option<String>)> = None;
            loop {
                let done = stopped.is_cancelled();
                match control
                    .requests(&LogFilter {
                        since: Some(since),
                        ..LogFilter::default()
                    })
                    .await
                {
                    Ok(page) => {
                        seen.dropped = page.dropped;
                        for entry in &page.entries {
                            // `since` is inclusive: skip what the last read ended with.
                            let id = (entry.time, entry.path.clone(), entry.query.clone());
                            if last_page_end
                                .as_ref()
                                .is_some_and(|l| entry.time < l.0 || *l == id)
                            {
                                continue;
                            }
                            seen.record(entry, measure_from);
                        }
                        if let Some(e) = page.entries.last() {
                            since = e.time;
                            last_page_end = Some((e.time, e.path.clone(), e.query.clone()));
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "reading the fake metrics server's log"),
                }
                if done {
                    return seen;
                }
                tokio::select! {
                    () = stopped.cancelled() => {}
                    () = tokio::time::sleep(POLL) => {}
                }
            }
        });
        Self { stop, task }
    }

    /// Reads once more and returns what was seen.
    pub async fn finish(self) -> Seen {
        self.stop.cancel();
        self.task.await.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_name_the_hpa_of_their_selector() {
        assert_eq!(
            hpa_of_request(
                "/apis/metrics.k8s.io/v1beta1/namespaces/load-0/pods",
                Some("labelSelector=app%3Dw12")
            )
            .as_deref(),
            Some("load-0/w12")
        );
        assert_eq!(
            hpa_of_request(
                "/apis/custom.metrics.k8s.io/v1beta2/namespaces/load-1/pods/*/http_requests",
                Some("labelSelector=app%3D%3Dw7&metricLabelSelector=")
            )
            .as_deref(),
            Some("load-1/w7")
        );
        assert_eq!(
            hpa_of_request(
                "/apis/external.metrics.k8s.io/v1beta1/namespaces/load-2/queue_depth",
                Some("labelSelector=queue%3Dw9")
            )
            .as_deref(),
            Some("load-2/w9")
        );
        assert_eq!(
            hpa_of_request("/apis/metrics.k8s.io/v1beta1", None),
            None,
            "discovery is no sync"
        );
    }

    fn log_entry(path: &str, query: Option<&str>, group: Group) -> LogEntry {
        LogEntry {
            time: Timestamp::from_second(1_800_000_000).unwrap(),
            method: "GET".into(),
            path: path.into(),
            query: query.map(Into::into),
            group,
            status: 200,
            items: Some(1),
            duration_micros: 10,
        }
    }

    #[test]
    fn namespace_wide_lists_are_shared_and_count_no_sync() {
        let shared = [
            log_entry(
                "/apis/metrics.k8s.io/v1beta1/namespaces/load-0/pods",
                None,
                Group::Resource,
            ),
            log_entry(
                "/apis/custom.metrics.k8s.io/v1beta2/namespaces/load-0/pods/*/http_requests",
                Some("metricLabelSelector="),
                Group::Custom,
            ),
            log_entry(
                "/apis/external.metrics.k8s.io/v1beta1/namespaces/load-0/queue_depth",
                None,
                Group::External,
            ),
        ];
        let named = log_entry(
            "/apis/metrics.k8s.io/v1beta1/namespaces/load-0/pods",
            Some("labelSelector=app%3Dw1"),
            Group::Resource,
        );
        let discovery = log_entry("/apis/metrics.k8s.io/v1beta1", None, Group::Discovery);
        let control = log_entry("/control/v1/namespaces/load-0/pods", None, Group::Control);
        for e in &shared {
            assert!(is_shared_list(e), "{}", e.path);
        }
        for e in [&named, &discovery, &control] {
            assert!(!is_shared_list(e), "{}", e.path);
        }
        let mut seen = Seen::default();
        for e in shared.iter().chain([&named, &discovery, &control]) {
            seen.record(e, Timestamp::UNIX_EPOCH);
        }
        assert_eq!(seen.shared_lists, 3);
        assert_eq!(seen.syncs, 1, "only the request naming w1 is a sync");
        assert_eq!(
            seen.synced.iter().collect::<Vec<_>>(),
            [&"load-0/w1".to_string()]
        );
    }

    #[test]
    fn answers_without_values_are_failed_syncs_not_syncs() {
        let at = |s: i64| Timestamp::from_second(1_800_000_000 + s).unwrap();
        let entry = |s: i64, status: u16, items: Option<u64>| LogEntry {
            time: at(s),
            method: "GET".into(),
            path:
                "/apis/custom.metrics.k8s.io/v1beta2/namespaces/load-0/pods/*/requests_per_second"
                    .into(),
            query: Some("labelSelector=app%3Dw2".into()),
            group: Group::Custom,
            status,
            items,
            duration_micros: 10,
        };
        let mut seen = Seen::default();
        for e in [
            entry(0, 404, None),
            entry(10, 404, None),
            entry(11, 200, Some(0)),
            entry(12, 200, Some(3)),
            entry(13, 503, None),
        ] {
            seen.record(&e, at(10));
        }
        assert_eq!(seen.syncs, 1);
        assert_eq!(seen.failures.total, 3, "the 404 at 0 s is warm-up");
        assert_eq!(
            seen.failures.by_reason.keys().cloned().collect::<Vec<_>>(),
            [
                "the custom metrics API answered 404",
                "the custom metrics API answered 503",
                "the custom metrics API answered an empty list"
            ]
        );
    }

    #[test]
    fn sources_say_what_they_can_count() {
        for source in SyncSource::ALL {
            assert_eq!(SyncSource::from_name(source.name()), Some(source));
        }
        assert!(SyncSource::RequestLog.per_hpa());
        assert!(SyncSource::DecisionLog.per_hpa());
        assert!(!SyncSource::ControllerMetrics.per_hpa());
        assert!(SyncSource::ControllerMetrics.counts_every_sync());
        assert!(!SyncSource::RequestLogLowerBound.per_hpa());
        assert!(!SyncSource::RequestLogLowerBound.counts_every_sync());
    }

    #[test]
    fn syncs_and_intervals_count_from_the_start_of_measurement() {
        let at = |s: i64| Timestamp::from_second(1_800_000_000 + s).unwrap();
        let entry = |s: i64, name: &str| LogEntry {
            time: at(s),
            method: "GET".into(),
            path: "/apis/metrics.k8s.io/v1beta1/namespaces/load-0/pods".into(),
            query: Some(format!("labelSelector=app%3D{name}")),
            group: Group::Resource,
            status: 200,
            items: Some(1),
            duration_micros: 10,
        };
        let mut seen = Seen::default();
        for (s, n) in [(0, "a"), (10, "a"), (15, "b"), (25, "a"), (30, "b")] {
            seen.record(&entry(s, n), at(10));
        }
        assert_eq!(seen.syncs, 4, "the sync at 0 s is warm-up");
        assert_eq!(seen.intervals, [15.0, 15.0], "a: 10->25, b: 15->30");
        assert_eq!(seen.synced.len(), 2);
        assert_eq!(seen.synced_after_warmup.len(), 2);
    }
}
