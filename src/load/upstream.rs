//! Measuring an HPA controller the harness does not run (`--controller
//! upstream`): each sync of a load HPA asks the fake metrics server for its
//! one metric, so the server's request log says which HPA synced when. The
//! log is read every half second; syncs and the intervals between two syncs
//! of an HPA come from it. Reconcile latency and agreement with the core
//! cannot be seen from outside and are not reported.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use fake_metrics_server::client::ControlClient;
use fake_metrics_server::log::{LogEntry, LogFilter};
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

/// Syncs seen in the log.
#[derive(Debug, Default)]
pub struct Seen {
    /// Syncs at or after the start of measurement.
    pub syncs: u64,
    /// Seconds between two syncs of one HPA (both measured).
    pub intervals: Vec<f64>,
    /// HPAs synced at all.
    pub synced: HashSet<String>,
    /// HPAs synced after the warm-up.
    pub synced_after_warmup: HashSet<String>,
    /// Log entries lost to the server's ring buffer between two reads.
    pub dropped: u64,
    last: HashMap<String, Timestamp>,
}

impl Seen {
    /// Counts one request.
    pub fn record(&mut self, entry: &LogEntry, measure_from: Timestamp) {
        let Some(key) = hpa_of_request(&entry.path, entry.query.as_deref()) else {
            return;
        };
        self.synced.insert(key.clone());
        let prev = self.last.insert(key.clone(), entry.time);
        if entry.time < measure_from {
            return;
        }
        self.syncs += 1;
        self.synced_after_warmup.insert(key);
        if let Some(prev) = prev.filter(|p| *p >= measure_from) {
            self.intervals
                .push(entry.time.duration_since(prev).as_secs_f64());
        }
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
    use fake_metrics_server::log::Group;

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
