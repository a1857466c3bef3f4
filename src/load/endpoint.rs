//! Counting an external controller's syncs from its own endpoints
//! (`--controller upstream --controller-metrics-url URL`), for when the
//! fake metrics server's request log cannot: a controller sharing
//! namespace-wide metrics lists makes no request naming most of its syncs.
//!
//! - `/debug/syncs` (our `hpa-controller`; next to `/metrics` on its
//!   `--bind-address`): the time of every kept decision per HPA. Read every
//!   [`syncs_poll`], it gives syncs, HPAs never synced and intervals, as the
//!   request log does for kube-controller-manager.
//! - `/metrics`: `horizontal_pod_autoscaler_controller_reconciliations_total`
//!   (kube-controller-manager's name, which ours keeps), read at the start,
//!   at the end of the warm-up and at the end. It counts every sync, but of
//!   every HPA the controller syncs and not per HPA: syncs per second only.

use std::collections::HashSet;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio_util::sync::CancellationToken;

use super::upstream::Seen;
use hpa_controller::decisions::SyncTimes;

/// The counter of every reconcile, upstream's name.
pub const RECONCILIATIONS: &str = "horizontal_pod_autoscaler_controller_reconciliations_total";

/// How far before the latest decision seen the next read of `/debug/syncs`
/// starts: a decision's time is taken just before it is logged, so one
/// logged late by more than this (a stalled worker) could be missed; the
/// overlap is read twice and counted once.
const SYNCS_OVERLAP: SignedDuration = SignedDuration::from_secs(5);

/// How often `/debug/syncs` is read: a quarter of the sync period, at most
/// a second. With one decision kept per HPA (`--decisions-kept`'s default),
/// two syncs of an HPA between two reads count once, so reads must come
/// well within a period.
pub fn syncs_poll(sync_period: Duration) -> Duration {
    (sync_period / 4).clamp(Duration::from_millis(100), Duration::from_secs(1))
}

/// Errors reading the controller's endpoints.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The URL given is not one.
    #[error("--controller-metrics-url {url}: {message}")]
    Url {
        /// As given.
        url: String,
        /// Why it is not usable.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("building the HTTP client for the controller's endpoints")]
    Build(#[source] reqwest::Error),
    /// The request failed or was refused.
    #[error("GET {url}")]
    Http {
        /// What was read.
        url: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },
}

/// The sum of `name`'s samples over all label sets in Prometheus or
/// OpenMetrics text, `None` when it has none.
pub fn sum_of_samples(text: &str, name: &str) -> Option<f64> {
    let mut found = false;
    let mut sum = 0.0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        // Past the name: the label set (its values may hold spaces), if any.
        let rest = match rest.strip_prefix('{') {
            Some(labels) => match closing_brace(labels) {
                Some(end) => &labels[end + 1..],
                None => continue,
            },
            None if rest.starts_with([' ', '\t']) => rest,
            // Another metric whose name starts with this one's.
            None => continue,
        };
        if let Some(value) = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        {
            found = true;
            sum += value;
        }
    }
    found.then_some(sum)
}

/// The index of the `}` closing a label set, skipping quoted values.
fn closing_brace(labels: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in labels.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// The controller's `/metrics` and, beside it, `/debug/syncs`.
#[derive(Debug, Clone)]
pub struct ControllerEndpoint {
    http: reqwest::Client,
    metrics: reqwest::Url,
    syncs: reqwest::Url,
}

impl ControllerEndpoint {
    /// The endpoints at `metrics_url` (e.g. `http://127.0.0.1:10257/metrics`)
    /// and `/debug/syncs` of the same server. No credentials are sent; a
    /// self-signed certificate is accepted (controllers serve their own).
    pub fn new(metrics_url: &str) -> Result<Self, EndpointError> {
        let bad = |message: String| EndpointError::Url {
            url: metrics_url.to_string(),
            message,
        };
        let metrics = reqwest::Url::parse(metrics_url).map_err(|e| bad(e.to_string()))?;
        if !matches!(metrics.scheme(), "http" | "https") {
            return Err(bad("not an http or https URL".into()));
        }
        let mut syncs = metrics.clone();
        syncs.set_path("/debug/syncs");
        syncs.set_query(None);
        // reqwest is built without a default crypto provider; install ring
        // once (a second install is refused, which is fine).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .tls_danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(EndpointError::Build)?;
        Ok(Self {
            http,
            metrics,
            syncs,
        })
    }

    async fn get(&self, url: reqwest::Url) -> Result<reqwest::Response, EndpointError> {
        let failed = |source| EndpointError::Http {
            url: url.to_string(),
            source,
        };
        self.http
            .get(url.clone())
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(failed)
    }

    /// The controller's reconciliations so far, all HPAs together; `None`
    /// when the counter has no sample. That is how a controller that has
    /// not reconciled yet shows it (a labelled counter appears with its
    /// first label set), and also what another server's metrics look like.
    pub async fn reconciliations(&self) -> Result<Option<f64>, EndpointError> {
        let http = |source| EndpointError::Http {
            url: self.metrics.to_string(),
            source,
        };
        let text = self
            .get(self.metrics.clone())
            .await?
            .text()
            .await
            .map_err(http)?;
        Ok(sum_of_samples(&text, RECONCILIATIONS))
    }

    /// The decision times at or after `since` (all kept, without it), or
    /// those logged after the read that answered `after` as its `next`.
    pub async fn sync_times(
        &self,
        since: Option<Timestamp>,
        after: Option<u64>,
    ) -> Result<SyncTimes, EndpointError> {
        let mut url = self.syncs.clone();
        if let Some(since) = since {
            url.query_pairs_mut()
                .append_pair("since", &since.to_string());
        }
        if let Some(after) = after {
            url.query_pairs_mut()
                .append_pair("after", &after.to_string());
        }
        let http = |source| EndpointError::Http {
            url: url.to_string(),
            source,
        };
        self.get(url.clone()).await?.json().await.map_err(http)
    }
}

/// Counts `times` into `seen`: the load's HPAs only (`hpas`), each decision
/// once (those not after the HPA's last one seen were counted before).
pub fn record_sync_times(
    seen: &mut Seen,
    times: &SyncTimes,
    hpas: &HashSet<String>,
    measure_from: Timestamp,
) {
    for hpa in times.hpas.iter().filter(|h| hpas.contains(&h.key)) {
        let mut at = hpa.at.clone();
        at.sort_unstable();
        for at in at {
            if seen.last_sync(&hpa.key).is_none_or(|last| at > last) {
                seen.record_sync(hpa.key.clone(), at, measure_from);
            }
        }
    }
}

/// Reads `/debug/syncs` until stopped.
pub struct SyncsWatch {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Seen>,
}

impl SyncsWatch {
    /// Starts reading, every `poll`; syncs before `measure_from` are the
    /// warm-up. The first read takes every kept decision: those of the
    /// load's HPAs taken while it was being built are syncs too.
    pub fn start(
        endpoint: ControllerEndpoint,
        hpas: HashSet<String>,
        measure_from: Timestamp,
        poll: Duration,
    ) -> Self {
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let mut seen = Seen::default();
            let mut latest: Option<Timestamp> = None;
            // The cursor of a controller that gives one: each read then
            // gives only what was logged since the last, no overlap needed.
            let mut after: Option<u64> = None;
            loop {
                let done = stopped.is_cancelled();
                let since = match after {
                    Some(_) => None,
                    None => latest.map(|t| t.checked_sub(SYNCS_OVERLAP).unwrap_or(t)),
                };
                match endpoint.sync_times(since, after).await {
                    Ok(times) => {
                        if !times.complete {
                            tracing::warn!(
                                "the controller's /debug/syncs dropped decisions between two reads: syncs may be missed"
                            );
                        }
                        after = times.next;
                        record_sync_times(&mut seen, &times, &hpas, measure_from);
                        latest = times
                            .hpas
                            .iter()
                            .flat_map(|h| h.at.iter().copied())
                            .chain(latest)
                            .max();
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "reading the controller's /debug/syncs: syncs may be missed");
                    }
                }
                if done {
                    return seen;
                }
                tokio::select! {
                    () = stopped.cancelled() => {}
                    () = tokio::time::sleep(poll) => {}
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

/// Reads the reconciliation counter at the start, at `measure_from` and
/// when finished.
pub struct CounterWatch {
    endpoint: ControllerEndpoint,
    at_measure: tokio::task::JoinHandle<Option<f64>>,
}

impl CounterWatch {
    /// Reads the counter now (failing if the server does not answer: the
    /// URL is wrong; no sample yet counts as 0), and again after `warmup`.
    pub async fn start(
        endpoint: ControllerEndpoint,
        warmup: Duration,
    ) -> Result<Self, EndpointError> {
        let first = endpoint.reconciliations().await?.unwrap_or(0.0);
        let later = endpoint.clone();
        let at_measure = tokio::spawn(async move {
            if warmup.is_zero() {
                return Some(first);
            }
            tokio::time::sleep(warmup).await;
            match later.reconciliations().await {
                Ok(n) => Some(n.unwrap_or(0.0)),
                Err(e) => {
                    tracing::warn!(error = %e, "reading the controller's /metrics at the end of the warm-up");
                    None
                }
            }
        });
        Ok(Self {
            endpoint,
            at_measure,
        })
    }

    /// Reconciliations in the measured window, `None` when a read failed
    /// or the counter went back (the controller restarted).
    pub async fn finish(self) -> Option<u64> {
        self.at_measure.abort();
        let at_measure = self.at_measure.await.ok().flatten();
        let at_end = match self.endpoint.reconciliations().await {
            Ok(Some(n)) => n,
            Ok(None) => {
                tracing::warn!(
                    url = %self.endpoint.metrics,
                    "no {RECONCILIATIONS} at the end of the run: no reconcile, or not an HPA controller's /metrics"
                );
                return None;
            }
            Err(e) => {
                tracing::warn!(error = %e, "reading the controller's /metrics at the end");
                return None;
            }
        };
        let counted = at_end - at_measure?;
        if counted < 0.0 {
            tracing::warn!("the controller's reconciliation counter went back: it restarted");
            return None;
        }
        Some(counted.round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_controller::decisions::HpaSyncTimes;

    #[test]
    fn the_counter_is_summed_over_its_label_sets() {
        let ours = "\
# HELP horizontal_pod_autoscaler_controller_reconciliations Number of reconciliations of HPA controller.
# TYPE horizontal_pod_autoscaler_controller_reconciliations counter
horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"none\"} 9500
horizontal_pod_autoscaler_controller_reconciliations_total{action=\"scale_up\",error=\"none\"} 400
horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"internal\"} 100
horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_count{action=\"none\",error=\"none\"} 9500
# EOF
";
        assert_eq!(sum_of_samples(ours, RECONCILIATIONS), Some(10_000.0));
        // Prometheus text as kube-controller-manager writes it: a timestamp
        // after the value, exponent notation, odd label values.
        let upstream = "\
horizontal_pod_autoscaler_controller_reconciliations_total{action=\"none\",error=\"a } b\"} 1.5e+03 1800000000000
horizontal_pod_autoscaler_controller_reconciliations_total 2
";
        assert_eq!(sum_of_samples(upstream, RECONCILIATIONS), Some(1502.0));
        assert_eq!(
            sum_of_samples(
                "workqueue_adds_total{name=\"horizontalpodautoscaler\"} 4\n",
                RECONCILIATIONS
            ),
            None,
            "no counter is not zero syncs"
        );
        assert_eq!(
            sum_of_samples(
                "horizontal_pod_autoscaler_controller_reconciliations_total_other 4\n",
                RECONCILIATIONS
            ),
            None,
            "a longer name is another metric"
        );
    }

    #[test]
    fn decision_times_count_each_sync_once_and_only_the_loads() {
        let at = |s: i64| Timestamp::from_second(1_800_000_000 + s).unwrap();
        let times = |list: &[(&str, &[i64])]| SyncTimes {
            kept: 1,
            hpas: list
                .iter()
                .map(|(key, secs)| HpaSyncTimes {
                    key: (*key).to_string(),
                    at: secs.iter().map(|s| at(*s)).collect(),
                })
                .collect(),
            next: None,
            complete: true,
        };
        let hpas: HashSet<String> = ["load-0/a", "load-0/b"].map(String::from).into();
        let mut seen = Seen::default();
        let measure_from = at(10);
        // Three reads; the overlap repeats a decision, kube-system's HPA is
        // not the load's.
        record_sync_times(
            &mut seen,
            &times(&[("load-0/a", &[0]), ("kube-system/x", &[1])]),
            &hpas,
            measure_from,
        );
        record_sync_times(
            &mut seen,
            &times(&[("load-0/a", &[0, 15]), ("load-0/b", &[12])]),
            &hpas,
            measure_from,
        );
        record_sync_times(
            &mut seen,
            &times(&[("load-0/a", &[30]), ("load-0/b", &[12, 27])]),
            &hpas,
            measure_from,
        );
        assert_eq!(
            seen.syncs, 4,
            "a at 15 and 30, b at 12 and 27; a at 0 is warm-up"
        );
        assert_eq!(seen.intervals, [15.0, 15.0]);
        assert_eq!(seen.synced, hpas);
        assert_eq!(seen.synced_after_warmup, hpas);
    }

    #[test]
    fn the_syncs_endpoint_is_beside_the_metrics() {
        let e = ControllerEndpoint::new("http://127.0.0.1:18258/metrics?x=1").unwrap();
        assert_eq!(e.syncs.as_str(), "http://127.0.0.1:18258/debug/syncs");
        assert!(ControllerEndpoint::new("127.0.0.1:18258/metrics").is_err());
        assert_eq!(syncs_poll(Duration::from_secs(15)), Duration::from_secs(1));
        assert_eq!(
            syncs_poll(Duration::from_secs(2)),
            Duration::from_millis(500)
        );
    }
}
