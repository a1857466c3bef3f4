//! The decision log: the latest decisions per HPA, with what the HPA's
//! status showed when each was taken. `/debug/decisions` serves it so that a
//! dry-run controller shadowing the cluster's own shows where the two
//! disagree; the harness reads it for `explain`.
//!
//! Every HPA has its latest decision here, so a record is kept compact
//! (`Kept`): the observed HPA as the cache's entry (shared with the
//! cache while the HPA has not changed), a computed status equal to the
//! observed one not copied, the trace packed as bytes ([`PackedTrace`]: a
//! typed trace is about 2 KB at 10 pods, packed 200 bytes), the rest
//! boxed and without spare room; a [`DecisionRecord`] is made again when
//! read.

use std::collections::VecDeque;

use foldhash::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus;
use serde::{Deserialize, Serialize};

use hpa_core::DecisionTrace;

use super::compact_text::CompactText;
use super::events::HpaEvent;
use super::hpa_cache::CachedHpa;
use super::memory::{Footprint, Meter, table_bytes};
use super::packed_trace::PackedTrace;

/// One reconciliation's outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    /// When (the controller's clock).
    pub at: jiff::Timestamp,
    /// `scale.spec.replicas` when deciding, if the scale could be read.
    pub current_replicas: Option<i32>,
    /// What the controller wants.
    pub desired_replicas: Option<i32>,
    /// Whether the scale was written (false in dry run or when unchanged).
    pub rescaled: bool,
    /// Whether the status was written.
    pub status_written: bool,
    /// Whether the controller runs with `--dry-run`.
    pub dry_run: bool,
    /// The HPA as the controller read it (the watch cache's entry, shared,
    /// not copied); the document shows its status as `observedStatus`.
    #[serde(rename = "observedStatus", serialize_with = "observed_status")]
    pub observed: Option<Arc<CachedHpa>>,
    /// The status the controller computed (written unless dry run).
    pub computed_status: Option<HorizontalPodAutoscalerStatus>,
    /// Events emitted (or, in dry run, that would have been).
    pub events: Vec<HpaEvent>,
    /// The reconciliation's error, if any.
    pub error: Option<String>,
    /// The core's decision trace: inputs, per-metric proposals, the
    /// stabilization and policy steps (absent when no decision was reached,
    /// e.g. the scale could not be read).
    pub trace: Option<DecisionTrace>,
}

/// Serializes the observed HPA as its status only.
fn observed_status<S: serde::Serializer>(
    observed: &Option<Arc<CachedHpa>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    status_of(observed.as_deref()).serialize(serializer)
}

/// The status of an observed HPA (`None` when it has none, or when its
/// text does not decode, which would be a bug: it was encoded here).
fn status_of(observed: Option<&CachedHpa>) -> Option<HorizontalPodAutoscalerStatus> {
    observed?.status().ok().flatten()
}

impl DecisionRecord {
    /// The status the HPA showed when the controller read it.
    pub fn observed_status(&self) -> Option<HorizontalPodAutoscalerStatus> {
        status_of(self.observed.as_deref())
    }

    /// Whether this decision's desired replicas equals the one the HPA's
    /// observed status shows (`None` when either is unknown).
    pub fn agrees_with_status(&self) -> Option<bool> {
        let seen = self.observed_status()?.desired_replicas;
        Some(self.desired_replicas? == seen)
    }
}

/// Latest decisions per HPA key (`namespace/name`), newest last. Hashed,
/// not ordered: every sync pushes here, reports (rare) sort.
#[derive(Debug, Clone)]
pub struct DecisionLog {
    keep: usize,
    entries: Arc<Mutex<Entries>>,
}

/// The pushes the journal keeps at least (more with more HPAs: twice their
/// number, two sync periods' worth, which is what a reader polling within
/// a period needs).
const JOURNAL_MIN: usize = 4_096;

/// A [`DecisionRecord`] as the log keeps it (see the module documentation).
#[derive(Debug, Clone)]
struct Kept {
    at: jiff::Timestamp,
    current_replicas: Option<i32>,
    desired_replicas: Option<i32>,
    rescaled: bool,
    status_written: bool,
    dry_run: bool,
    observed: KeptObserved,
    computed: Computed,
    events: Box<[HpaEvent]>,
    error: Option<Box<str>>,
    trace: Option<PackedTrace>,
}

/// The computed status of a kept decision.
#[derive(Debug, Clone)]
enum Computed {
    None,
    /// The same as the observed one (the status did not change): not copied.
    Observed,
    /// A new status, as its JSON text shortened: what the API server was
    /// sent (a typed status is about 1.4 KB, its text a fifth of that; in
    /// the first pass every HPA's decision holds one).
    Text(CompactText),
    /// A new status whose text could not be made (never expected).
    Own(Box<HorizontalPodAutoscalerStatus>),
}

impl Computed {
    fn own(status: HorizontalPodAutoscalerStatus) -> Self {
        match serde_json::to_string(&status) {
            Ok(text) => Self::Text(CompactText::new(&text)),
            Err(_) => Self::Own(Box::new(status)),
        }
    }
}

/// The observed HPA of a kept decision.
#[derive(Debug, Clone)]
enum KeptObserved {
    None,
    /// The cache's entry, shared: the status was not written, so the entry
    /// stays the cache's until the HPA changes.
    Shared(Arc<CachedHpa>),
    /// Only its status, as text: the decision wrote a new status, so the
    /// cache's entry is about to be replaced, and holding it would keep a
    /// whole stale HPA per decision (all of them, after the first pass).
    Status(Option<CompactText>),
}

impl KeptObserved {
    fn new(observed: Option<Arc<CachedHpa>>, status_written: bool) -> Self {
        match observed {
            None => Self::None,
            Some(hpa) if status_written => match hpa.status() {
                Ok(status) => Self::Status(
                    status
                        .and_then(|s| serde_json::to_string(&s).ok())
                        .map(|text| CompactText::new(&text)),
                ),
                Err(_) => Self::Shared(hpa),
            },
            Some(hpa) => Self::Shared(hpa),
        }
    }

    fn status(&self) -> Option<HorizontalPodAutoscalerStatus> {
        match self {
            Self::None => None,
            Self::Shared(hpa) => status_of(Some(hpa)),
            Self::Status(text) => decode_status(text.as_ref()?),
        }
    }

    /// The observed HPA again: the cache's entry, or one holding only the
    /// status that was kept of it.
    fn hpa(&self) -> Option<Arc<CachedHpa>> {
        match self {
            Self::None => None,
            Self::Shared(hpa) => Some(Arc::clone(hpa)),
            Self::Status(text) => Some(Arc::new(CachedHpa::new(
                &k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler {
                    status: text.as_ref().and_then(decode_status),
                    ..Default::default()
                },
            ))),
        }
    }
}

fn decode_status(text: &CompactText) -> Option<HorizontalPodAutoscalerStatus> {
    serde_json::from_str(&text.text()).ok()
}

impl Kept {
    /// `record`, kept; `unchanged`: its computed status is the observed one.
    fn new(record: DecisionRecord, unchanged: bool) -> Self {
        let computed = match record.computed_status {
            Some(_) if unchanged && record.observed.is_some() => Computed::Observed,
            Some(status) => Computed::own(status),
            None => Computed::None,
        };
        // A status written replaces the cache's entry when the watch
        // brings it back.
        let observed = KeptObserved::new(record.observed, record.status_written);
        let trace = record.trace.as_ref().map(PackedTrace::new);
        Self {
            at: record.at,
            current_replicas: record.current_replicas,
            desired_replicas: record.desired_replicas,
            rescaled: record.rescaled,
            status_written: record.status_written,
            dry_run: record.dry_run,
            observed,
            computed,
            events: record.events.into_boxed_slice(),
            error: record.error.map(String::into_boxed_str),
            trace,
        }
    }

    /// The record again.
    fn record(&self) -> DecisionRecord {
        DecisionRecord {
            at: self.at,
            current_replicas: self.current_replicas,
            desired_replicas: self.desired_replicas,
            rescaled: self.rescaled,
            status_written: self.status_written,
            dry_run: self.dry_run,
            observed: self.observed.hpa(),
            computed_status: match &self.computed {
                Computed::None => None,
                Computed::Observed => self.observed.status(),
                Computed::Text(text) => decode_status(text),
                Computed::Own(status) => Some((**status).clone()),
            },
            events: self.events.to_vec(),
            error: self.error.as_deref().map(str::to_owned),
            trace: self.trace.as_ref().and_then(PackedTrace::trace),
        }
    }
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<Arc<str>, VecDeque<Kept>>,
    /// Every push, oldest first: its sequence number (from 1), its
    /// decision's time and its key. `/debug/syncs?after=N` reads the pushes
    /// after the N-th here, without visiting every HPA's decisions.
    journal: VecDeque<(u64, jiff::Timestamp, Arc<str>)>,
    /// The sequence number of the latest push (0: none yet).
    last: u64,
}

impl DecisionLog {
    /// A log keeping `keep` decisions per HPA (at least one).
    pub fn new(keep: usize) -> Self {
        Self {
            keep: keep.max(1),
            entries: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a decision for `key`, dropping the oldest beyond the limit.
    pub fn push(&self, key: &str, record: DecisionRecord) {
        self.keep(key, Kept::new(record, false));
    }

    /// [`push`](Self::push) for a decision whose computed status is the
    /// status observed (the core found it unchanged, so it was not written):
    /// kept as the observed HPA's, not copied. A status the core calls
    /// unchanged is semantically equal to the observed one; read back, the
    /// record shows the observed one, as the API server holds it.
    pub fn push_unchanged(&self, key: &str, record: DecisionRecord) {
        self.keep(key, Kept::new(record, true));
    }

    fn keep(&self, key: &str, record: Kept) {
        let mut guard = self.lock();
        let entries = &mut *guard;
        // The key is allocated once per HPA, not once per sync.
        let key = match entries.by_key.get_key_value(key) {
            Some((known, _)) => Arc::clone(known),
            None => Arc::from(key),
        };
        entries.last += 1;
        let bound = JOURNAL_MIN.max(2 * entries.by_key.len());
        while entries.journal.len() >= bound {
            entries.journal.pop_front();
        }
        entries
            .journal
            .push_back((entries.last, record.at, Arc::clone(&key)));
        // Room for the decisions kept, no more (a deque grows by four).
        let list = entries
            .by_key
            .entry(key)
            .or_insert_with(|| VecDeque::with_capacity(self.keep.min(16)));
        while list.len() >= self.keep {
            list.pop_front();
        }
        list.push_back(record);
    }

    /// The latest `n` decisions for `key`, oldest first.
    pub fn latest(&self, key: &str, n: usize) -> Vec<DecisionRecord> {
        self.lock()
            .by_key
            .get(key)
            .map(|list| {
                list.iter()
                    .skip(list.len().saturating_sub(n))
                    .map(Kept::record)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Forgets a deleted HPA.
    pub fn remove(&self, key: &str) {
        self.lock().by_key.remove(key);
    }

    /// Every key with at least one decision, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.lock().by_key.keys().map(|k| k.to_string()).collect();
        keys.sort_unstable();
        keys
    }

    /// The `/debug/syncs` document: per HPA, when its decisions were taken.
    /// A load run reads it to count every sync of every HPA (`hpa-harness
    /// load --controller upstream --controller-metrics-url`): the fake
    /// metrics server's request log cannot, once namespace-wide metrics
    /// lists are shared, and `/metrics` counts reconciliations only in
    /// aggregate.
    ///
    /// With `after` (the `next` of an earlier read), the decisions logged
    /// since that read, from the journal: a reader polling every second
    /// then costs the controller what it reads, not a visit of every HPA
    /// (at 10,000 HPAs that was an eighth of the controller's CPU). Without
    /// it, the kept decisions of every HPA, those taken at or after `since`
    /// only (all without it). Times only, where `/debug/decisions` would
    /// serialize every trace.
    pub fn sync_times(&self, since: Option<jiff::Timestamp>, after: Option<u64>) -> SyncTimes {
        let entries = self.lock();
        let recent = |at: &jiff::Timestamp| since.is_none_or(|s| *at >= s);
        let (mut hpas, complete) = match after {
            Some(after) => {
                let first = entries.journal.front().map_or(entries.last + 1, |j| j.0);
                let start = entries.journal.partition_point(|j| j.0 <= after);
                let mut by_key: HashMap<&str, Vec<jiff::Timestamp>> = HashMap::default();
                for (_, at, key) in entries.journal.range(start..) {
                    if recent(at) {
                        by_key.entry(key).or_default().push(*at);
                    }
                }
                let hpas: Vec<HpaSyncTimes> = by_key
                    .into_iter()
                    .map(|(key, at)| HpaSyncTimes {
                        key: key.to_owned(),
                        at,
                    })
                    .collect();
                (hpas, after.saturating_add(1) >= first)
            }
            None => {
                let hpas = entries
                    .by_key
                    .iter()
                    .filter_map(|(key, list)| {
                        let at: Vec<jiff::Timestamp> =
                            list.iter().map(|r| r.at).filter(recent).collect();
                        (!at.is_empty()).then(|| HpaSyncTimes {
                            key: key.to_string(),
                            at,
                        })
                    })
                    .collect();
                (hpas, true)
            }
        };
        let next = entries.last;
        drop(entries);
        hpas.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        SyncTimes {
            kept: self.keep,
            hpas,
            next: Some(next),
            complete,
        }
    }

    /// The `/debug/decisions` document.
    pub fn report(&self) -> DecisionReport {
        let entries = self.lock();
        let mut sorted: Vec<_> = entries.by_key.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        DecisionReport {
            hpas: sorted
                .into_iter()
                .map(|(key, list)| {
                    let latest = list.back().map(Kept::record);
                    HpaDecisions {
                        key: key.to_string(),
                        agrees_with_status: latest.as_ref().and_then(|r| r.agrees_with_status()),
                        status_desired_replicas: latest
                            .as_ref()
                            .and_then(DecisionRecord::observed_status)
                            .map(|s| s.desired_replicas),
                        controller_desired_replicas: latest
                            .as_ref()
                            .and_then(|r| r.desired_replicas),
                        decisions: list.iter().map(Kept::record).collect(),
                    }
                })
                .collect(),
        }
    }
}

impl DecisionLog {
    /// What the log holds ([`crate::memory`]): the records, their keys and
    /// the journal. An observed HPA counts here only when the HPA cache no
    /// longer holds it (`cached` says whether it does).
    pub fn footprint(
        &self,
        meter: &Meter,
        cached: impl Fn(&str, &Arc<CachedHpa>) -> bool,
    ) -> Footprint {
        let entries = self.lock();
        let mut bytes = table_bytes(
            entries.by_key.capacity(),
            std::mem::size_of::<(Arc<str>, VecDeque<Kept>)>(),
        ) + meter
            .buffer::<(u64, jiff::Timestamp, Arc<str>)>(entries.journal.capacity());
        for (key, records) in &entries.by_key {
            bytes += meter.arc_str(key) + meter.buffer::<Kept>(records.capacity());
            for record in records {
                bytes += meter.heap(record);
                if let KeptObserved::Shared(observed) = &record.observed
                    && !cached(key, observed)
                {
                    bytes += observed.footprint(meter);
                }
            }
        }
        // Journal keys of HPAs no longer in the log (deleted ones).
        let mut gone: Vec<&Arc<str>> = entries
            .journal
            .iter()
            .map(|(_, _, key)| key)
            .filter(|key| !entries.by_key.contains_key(&***key))
            .collect();
        gone.sort_unstable_by_key(|key| Arc::as_ptr(key));
        gone.dedup_by_key(|key| Arc::as_ptr(key));
        bytes += gone.iter().map(|key| meter.arc_str(key)).sum::<u64>();
        Footprint {
            structure: std::borrow::Cow::Borrowed("decision log (statuses, events, traces)"),
            entries: entries.by_key.len(),
            bytes,
        }
    }
}

/// The `/debug/decisions` document.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionReport {
    pub hpas: Vec<HpaDecisions>,
}

/// The `/debug/syncs` document ([`DecisionLog::sync_times`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncTimes {
    /// Decisions kept per HPA (`--decisions-kept`): a reader polling less
    /// often than this many sync periods misses syncs.
    pub kept: usize,
    /// HPAs with a decision in the window, sorted by key.
    pub hpas: Vec<HpaSyncTimes>,
    /// The sequence number of the latest decision logged: passed as
    /// `after`, the next read gives only the decisions logged since.
    /// (Absent from controllers before it.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
    /// False when some decisions logged after `after` were dropped from
    /// the journal before this read (the reader polled too seldom).
    #[serde(default = "yes")]
    pub complete: bool,
}

fn yes() -> bool {
    true
}

/// When one HPA's kept decisions were taken, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaSyncTimes {
    /// `namespace/name`.
    pub key: String,
    /// The decisions' `at` (the controller's clock, at the end of the sync).
    pub at: Vec<jiff::Timestamp>,
}

/// One HPA in the report: the latest decision next to what the status shows.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaDecisions {
    pub key: String,
    /// What this controller wants now.
    pub controller_desired_replicas: Option<i32>,
    /// What the HPA's status showed (written by whichever controller runs it).
    pub status_desired_replicas: Option<i32>,
    /// Whether the two agree.
    pub agrees_with_status: Option<bool>,
    /// Latest decisions, oldest first.
    pub decisions: Vec<DecisionRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(desired: i32, status_desired: i32) -> DecisionRecord {
        DecisionRecord {
            at: jiff::Timestamp::UNIX_EPOCH,
            current_replicas: Some(2),
            desired_replicas: Some(desired),
            rescaled: false,
            status_written: false,
            dry_run: true,
            observed: Some(Arc::new(CachedHpa::new(
                &k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler {
                    status: Some(HorizontalPodAutoscalerStatus {
                        desired_replicas: status_desired,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ))),
            computed_status: None,
            events: vec![],
            error: None,
            trace: None,
        }
    }

    /// A trace as a pod-based sync makes it, every field set.
    fn trace() -> DecisionTrace {
        serde_json::from_value(serde_json::json!({
            "hpa": "ns/web", "now": "2026-01-01T00:01:45.123456789Z",
            "scale": {"spec_replicas": 3, "status_replicas": 2, "selector": "app=web"},
            "min_replicas": 1, "max_replicas": 10,
            "tolerances": {"scale_down": 0.1, "scale_up": 0.05},
            "rule": "",
            "metrics": [{"index": 0, "type_": "Resource",
                "name": "cpu resource utilization (percentage of request)",
                "target": "50% utilization", "current": "61% (122m)",
                "ratio": 1.2222222222222223, "new_ratio": 0.3333333333333333,
                "ready_pods": 2, "proposal": 4, "error": "none \u{1} here",
                "pods": [{"pod": "web-0", "class": "ready", "sample": 100, "assumed": null},
                         {"pod": "web-1", "class": "unready", "sample": null, "assumed": 0},
                         {"pod": "web-2", "class": "missing", "sample": null, "assumed": 200},
                         {"pod": "web-3", "class": "ignored", "sample": 7, "assumed": null}]}],
            "chosen_metric": "cpu resource utilization (percentage of request)",
            "prenormalized": 4, "stabilized": 4, "stabilization": "ScaleUpStabilized",
            "limited": 3, "limit_reason": "ScaleUpLimit", "desired": 3, "rescale": true,
            "reason": "cpu resource utilization (percentage of request) above target"
        }))
        .unwrap()
    }

    /// A kept trace reads back as it was, a ratio that is not a number
    /// included.
    #[test]
    fn a_kept_trace_reads_back_as_it_was() {
        let log = DecisionLog::new(1);
        let mut odd = trace();
        odd.metrics[0].ratio = Some(f64::NAN);
        for trace in [trace(), odd] {
            let record = DecisionRecord {
                trace: Some(trace.clone()),
                ..record(3, 2)
            };
            log.push("ns/web", record);
            let read = log.latest("ns/web", 1).remove(0).trace.unwrap();
            // NaN is not equal to itself: compare what it prints.
            assert_eq!(format!("{read:?}"), format!("{trace:?}"));
        }
    }

    /// A status the core found unchanged is kept as the observed one: read
    /// back, the record holds the observed status as computed status.
    /// A decision that wrote a new status keeps that status and the
    /// observed one as text, not the cache's entry: the watch replaces that
    /// entry, and a log holding it would keep one stale HPA per decision.
    #[test]
    fn a_written_status_is_kept_as_text_and_the_cache_entry_is_let_go() {
        use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerCondition;
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        let log = DecisionLog::new(1);
        let record = record(5, 3);
        let observed = record.observed.clone().expect("observed");
        let computed = HorizontalPodAutoscalerStatus {
            current_replicas: Some(3),
            desired_replicas: 5,
            conditions: Some(vec![HorizontalPodAutoscalerCondition {
                type_: "AbleToScale".into(),
                status: "True".into(),
                reason: Some("SucceededRescale".into()),
                message: Some("the HPA controller was able to update the target scale to 5".into()),
                last_transition_time: Some(Time("2026-11-28T07:00:00Z".parse().expect("time"))),
                ..Default::default()
            }]),
            ..Default::default()
        };
        log.push(
            "ns/web",
            DecisionRecord {
                status_written: true,
                computed_status: Some(computed.clone()),
                ..record
            },
        );
        assert_eq!(
            Arc::strong_count(&observed),
            1,
            "the log let go of the entry"
        );
        {
            let entries = log.lock();
            let kept = &entries.by_key["ns/web"][0];
            assert!(matches!(kept.computed, Computed::Text(_)));
            assert!(matches!(kept.observed, KeptObserved::Status(Some(_))));
        }
        let read = log.latest("ns/web", 1).remove(0);
        assert_eq!(read.computed_status, Some(computed));
        assert_eq!(read.observed_status().map(|s| s.desired_replicas), Some(3));
    }

    /// An unchanged status keeps the cache's entry itself, shared.
    #[test]
    fn an_unwritten_status_shares_the_cache_entry() {
        let log = DecisionLog::new(1);
        let record = record(3, 3);
        let observed = record.observed.clone().expect("observed");
        log.push_unchanged("ns/web", record);
        assert_eq!(Arc::strong_count(&observed), 2, "held by the log too");
    }

    #[test]
    fn an_unchanged_status_is_read_back_as_the_observed_one() {
        let log = DecisionLog::new(1);
        let record = record(3, 3);
        let observed = record.observed_status();
        log.push_unchanged(
            "ns/web",
            DecisionRecord {
                computed_status: observed.clone(),
                ..record
            },
        );
        let read = log.latest("ns/web", 1).remove(0);
        assert_eq!(read.computed_status, observed);
        assert!(matches!(
            log.lock().by_key["ns/web"][0].computed,
            Computed::Observed
        ));
    }

    #[test]
    fn the_log_keeps_the_latest_decisions_per_hpa() {
        let log = DecisionLog::new(2);
        log.push("ns/a", record(1, 1));
        log.push("ns/a", record(2, 1));
        log.push("ns/a", record(3, 1));
        let latest = log.latest("ns/a", 10);
        assert_eq!(
            latest
                .iter()
                .map(|r| r.desired_replicas)
                .collect::<Vec<_>>(),
            vec![Some(2), Some(3)]
        );
        assert_eq!(log.latest("ns/a", 1)[0].desired_replicas, Some(3));
        log.remove("ns/a");
        assert!(log.latest("ns/a", 10).is_empty());
    }

    #[test]
    fn sync_times_list_the_kept_decisions_at_or_after_since() {
        let at = |s: i64| jiff::Timestamp::from_second(1_800_000_000 + s).unwrap();
        let log = DecisionLog::new(2);
        for (key, s) in [("ns/b", 0), ("ns/a", 5), ("ns/b", 15), ("ns/b", 30)] {
            log.push(
                key,
                DecisionRecord {
                    at: at(s),
                    ..record(1, 1)
                },
            );
        }
        let all = log.sync_times(None, None);
        assert_eq!(all.kept, 2);
        assert_eq!(
            all.hpas,
            vec![
                HpaSyncTimes {
                    key: "ns/a".into(),
                    at: vec![at(5)]
                },
                HpaSyncTimes {
                    key: "ns/b".into(),
                    at: vec![at(15), at(30)]
                },
            ],
            "sorted by key; b's sync at 0 s is no longer kept"
        );
        let recent = log.sync_times(Some(at(15)), None);
        assert_eq!(
            recent.hpas,
            vec![HpaSyncTimes {
                key: "ns/b".into(),
                at: vec![at(15), at(30)]
            }],
            "since is inclusive; a has nothing that recent"
        );
        let doc = serde_json::to_value(&recent).unwrap();
        assert_eq!(doc["hpas"][0]["key"], "ns/b");
        assert_eq!(doc["hpas"][0]["at"][0], "2027-01-15T08:00:15Z");
        assert_eq!(doc["next"], 4);
    }

    /// Read with `after`, the decisions logged since that read, each once,
    /// whether or not still kept per HPA; a reader that fell behind the
    /// journal is told so.
    #[test]
    fn sync_times_after_a_read_give_the_decisions_logged_since() {
        let at = |s: i64| jiff::Timestamp::from_second(1_800_000_000 + s).unwrap();
        let log = DecisionLog::new(1);
        let push = |key: &str, s: i64| {
            log.push(
                key,
                DecisionRecord {
                    at: at(s),
                    ..record(1, 1)
                },
            );
        };
        let empty = log.sync_times(None, Some(0));
        assert!(empty.hpas.is_empty() && empty.complete);
        assert_eq!(empty.next, Some(0));
        push("ns/b", 0);
        push("ns/a", 5);
        let first = log.sync_times(None, Some(0));
        assert_eq!(first.next, Some(2));
        assert_eq!(first.hpas.len(), 2);
        push("ns/b", 15);
        push("ns/b", 30);
        let second = log.sync_times(None, first.next);
        assert_eq!(
            second.hpas,
            vec![HpaSyncTimes {
                key: "ns/b".into(),
                at: vec![at(15), at(30)]
            }],
            "both of b's, though one decision is kept per HPA"
        );
        assert!(second.complete);
        assert!(log.sync_times(None, second.next).hpas.is_empty());
        assert_eq!(
            log.sync_times(Some(at(30)), first.next).hpas[0].at,
            [at(30)],
            "since still applies"
        );
        // A reader behind the journal's start is told it missed some.
        for s in 0..=i64::try_from(JOURNAL_MIN).unwrap() {
            push("ns/c", 100 + s);
        }
        let late = log.sync_times(None, second.next);
        assert!(!late.complete);
        assert!(log.sync_times(None, late.next).complete);
    }

    #[test]
    fn the_report_shows_where_the_controller_and_the_status_disagree() {
        let log = DecisionLog::new(5);
        log.push("ns/same", record(3, 3));
        log.push("ns/differs", record(4, 2));
        let report = serde_json::to_value(log.report()).unwrap();
        let hpas = report["hpas"].as_array().unwrap();
        let differs = hpas.iter().find(|h| h["key"] == "ns/differs").unwrap();
        assert_eq!(differs["agreesWithStatus"], false);
        assert_eq!(differs["controllerDesiredReplicas"], 4);
        assert_eq!(differs["statusDesiredReplicas"], 2);
        let same = hpas.iter().find(|h| h["key"] == "ns/same").unwrap();
        assert_eq!(same["agreesWithStatus"], true);
    }
}
