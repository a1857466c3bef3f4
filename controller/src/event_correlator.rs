//! client-go's `EventCorrelator` (tools/record/events_cache.go), which
//! upstream's HPA controller records its core/v1 events through: pure, the
//! time passed in. In order, for each event:
//!
//! 1. aggregation: the 10th distinct message with the same type and reason
//!    about an object within 10 minutes of the previous one becomes one
//!    event "(combined from similar events): MESSAGE", which later similar
//!    events update;
//! 2. deduplication: a repeat of an event (same type, reason and message)
//!    updates the first one's count instead of creating another; the count
//!    is kept even for repeats the spam filter drops;
//! 3. spam filter: per object, a token bucket of 25 events refilled at one
//!    per 5 minutes; events without a token are dropped.
//!
//! So `kubectl describe hpa` shows the counts a kube-controller-manager
//! shows after the same failures. client-go's caches are LRUs of 4096
//! entries; these maps are bounded the same way by dropping the stalest.
//! The name of the event written for an observation lives in it
//! (client-go's `eventLog.name`), bounded with it.
//!
//! A deleted HPA's entries go with it ([`EventCorrelator::forget`], when
//! the watch sees it deleted and when a sync finds it gone):
//! every key holds the object's uid, so no event of another object, nor of
//! an HPA created again under the same name, can reach them. client-go
//! keeps them until 4096 newer keys push them out; under a churn of HPAs
//! that was about 2.7 KB held per deleted HPA that had events, for as many
//! minutes as 4096 newer keys take to come (docs/load-report.md, "Memory
//! under churn"). Letting them go changes no event: it only leaves the
//! live objects' entries more room.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};

/// `maxLruCacheEntries`.
const CACHE_ENTRIES: usize = 4096;
/// `defaultAggregateMaxEvents`.
const AGGREGATE_MAX_EVENTS: usize = 10;
/// `defaultAggregateIntervalInSeconds`.
const AGGREGATE_INTERVAL: SignedDuration = SignedDuration::from_secs(600);
/// `defaultSpamBurst`.
const SPAM_BURST: f64 = 25.0;
/// `defaultSpamQPS`: one token every 5 minutes.
const SPAM_QPS: f64 = 1.0 / 300.0;
/// `EventAggregatorByReasonMessageFunc`'s prefix.
pub const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// An event as the correlator sees it: the object it is about
/// ([`object_key`]), type, reason, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming<'a> {
    pub object: &'a str,
    pub type_: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
}

/// What to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Correlated {
    /// Dropped by the spam filter.
    Skip,
    /// Write the event with this message and count: the first of its key
    /// when `count` is 1, else an update of the event recorded under `key`
    /// (created if there is none, as client-go does when its patch finds no
    /// event).
    Write {
        key: String,
        message: String,
        count: i32,
        first_seen: Timestamp,
        /// The event written for `key` before ([`EventCorrelator::written`]).
        name: Option<String>,
    },
}

#[derive(Debug, Clone)]
struct AggregateRecord {
    messages: BTreeSet<String>,
    last: Timestamp,
}

#[derive(Debug, Clone)]
struct Observation {
    count: i32,
    first_seen: Timestamp,
    name: Option<String>,
}

#[derive(Debug, Clone)]
struct Bucket {
    tokens: f64,
    last: Timestamp,
}

/// The correlator's caches.
#[derive(Debug, Default)]
pub struct EventCorrelator {
    aggregates: Lru<AggregateRecord>,
    observations: Lru<Observation>,
    buckets: Lru<Bucket>,
}

/// The object an event is about, as the correlator keys it: its kind,
/// namespace, name, uid and apiVersion joined by `/` (client-go joins the
/// same fields). Every key of an object starts with [`object_prefix`].
pub fn object_key(kind: &str, namespace: &str, name: &str, uid: &str, api_version: &str) -> String {
    format!(
        "{}{uid}/{api_version}",
        object_prefix(kind, namespace, name)
    )
}

/// What every key of the object `kind` `namespace/name` starts with,
/// whatever its uid: a name holds no `/`.
pub fn object_prefix(kind: &str, namespace: &str, name: &str) -> String {
    format!("{kind}/{namespace}/{name}/")
}

/// At most [`CACHE_ENTRIES`] entries, the least recently used dropped
/// first, as client-go's `lru.Cache`; O(log n) a use. Sorted by key, so
/// that an object's entries are found together ([`Lru::forget`]).
#[derive(Debug)]
struct Lru<V> {
    /// Each entry with its last use.
    entries: BTreeMap<String, (u64, V)>,
    /// Keys by last use.
    order: BTreeMap<u64, String>,
    uses: u64,
}

impl<V> Default for Lru<V> {
    fn default() -> Self {
        Self {
            entries: BTreeMap::new(),
            order: BTreeMap::new(),
            uses: 0,
        }
    }
}

impl<V> Lru<V> {
    /// The entry of `key`, now the most recently used; made by `new` when
    /// missing (the least recently used leaves when the cache is full).
    fn use_or_insert(&mut self, key: &str, new: impl FnOnce() -> V) -> &mut V {
        self.uses += 1;
        let now = self.uses;
        if self.entries.len() >= CACHE_ENTRIES
            && !self.entries.contains_key(key)
            && let Some((_, oldest)) = self.order.pop_first()
        {
            self.entries.remove(&oldest);
        }
        let entry = self
            .entries
            .entry(key.to_owned())
            .or_insert_with(|| (now, new()));
        if entry.0 != now {
            self.order.remove(&entry.0);
            entry.0 = now;
        }
        self.order.insert(now, key.to_owned());
        &mut entry.1
    }

    /// The entry of `key`, if cached, now the most recently used.
    fn use_existing(&mut self, key: &str) -> Option<&mut V> {
        let entry = self.entries.get_mut(key)?;
        self.uses += 1;
        self.order.remove(&entry.0);
        entry.0 = self.uses;
        self.order.insert(self.uses, key.to_owned());
        Some(&mut entry.1)
    }

    /// Drops every entry whose key starts with `prefix`.
    fn forget(&mut self, prefix: &str) {
        let keys: Vec<String> = self
            .entries
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(key, _)| key.clone())
            .collect();
        for key in keys {
            if let Some((used, _)) = self.entries.remove(&key) {
                self.order.remove(&used);
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

impl<V: Clone> Lru<V> {
    /// The bytes the cache holds ([`crate::memory`]).
    fn footprint(&self, meter: &super::memory::Meter) -> u64 {
        meter.heap(&self.entries) + meter.heap(&self.order)
    }
}

impl EventCorrelator {
    /// What the correlator's caches hold ([`crate::memory`]): at most
    /// 4,096 entries each; its entries are the objects (HPAs) it holds
    /// a spam filter's bucket of.
    pub fn footprint(&self, meter: &super::memory::Meter) -> super::memory::Footprint {
        super::memory::Footprint {
            structure: std::borrow::Cow::Borrowed("event correlator"),
            entries: self.buckets.entries.len(),
            bytes: self.aggregates.footprint(meter)
                + self.observations.footprint(meter)
                + self.buckets.footprint(meter),
        }
    }

    /// Correlates `event` observed at `now`.
    pub fn correlate(&mut self, event: &Incoming<'_>, now: Timestamp) -> Correlated {
        let aggregate_key = format!("{}\u{0}{}\u{0}{}", event.object, event.type_, event.reason);
        let event_key = format!("{aggregate_key}\u{0}{}", event.message);

        // 1. Aggregation (EventAggregate).
        let record = self
            .aggregates
            .use_or_insert(&aggregate_key, || AggregateRecord {
                messages: BTreeSet::new(),
                last: now,
            });
        if now.duration_since(record.last) > AGGREGATE_INTERVAL {
            record.messages.clear();
        }
        record.messages.insert(event.message.to_owned());
        record.last = now;
        let (key, message) = if record.messages.len() < AGGREGATE_MAX_EVENTS {
            (event_key, event.message.to_owned())
        } else {
            // Do not grow the set past the threshold (client-go's PopAny).
            if let Some(any) = record.messages.iter().next().cloned() {
                record.messages.remove(&any);
            }
            (aggregate_key, format!("{COMBINED_PREFIX}{}", event.message))
        };

        // 2. Deduplication (eventObserve), recorded before the filter.
        let observation = self.observations.use_or_insert(&key, || Observation {
            count: 0,
            first_seen: now,
            name: None,
        });
        observation.count = observation.count.saturating_add(1);
        let observation = observation.clone();

        // 3. Spam filter (EventSourceObjectSpamFilter).
        let bucket = self.buckets.use_or_insert(event.object, || Bucket {
            tokens: SPAM_BURST,
            last: now,
        });
        let elapsed = now.duration_since(bucket.last).as_secs_f64().max(0.0);
        bucket.tokens = (bucket.tokens + elapsed * SPAM_QPS).min(SPAM_BURST);
        bucket.last = now;
        let accepted = bucket.tokens >= 1.0;
        if accepted {
            bucket.tokens -= 1.0;
        }
        if !accepted {
            return Correlated::Skip;
        }
        Correlated::Write {
            key,
            message,
            count: observation.count,
            first_seen: observation.first_seen,
            name: observation.name,
        }
    }

    /// Remembers that the event for `key` (of a [`Correlated::Write`]) was
    /// written as `name`, for later repeats to update it.
    pub fn written(&mut self, key: &str, name: &str) {
        if let Some(observation) = self.observations.use_existing(key) {
            observation.name = Some(name.to_owned());
        }
    }

    /// Forgets the object whose keys start with `prefix` ([`object_prefix`]):
    /// a deleted HPA.
    pub fn forget(&mut self, prefix: &str) {
        self.aggregates.forget(prefix);
        self.observations.forget(prefix);
        self.buckets.forget(prefix);
    }

    /// The entries of the largest cache.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.aggregates
            .len()
            .max(self.observations.len())
            .max(self.buckets.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    fn event<'a>(reason: &'a str, message: &'a str) -> Incoming<'a> {
        Incoming {
            object: "HorizontalPodAutoscaler/default/web",
            type_: "Warning",
            reason,
            message,
        }
    }

    fn written(c: &Correlated) -> (String, i32) {
        match c {
            Correlated::Write { message, count, .. } => (message.clone(), *count),
            Correlated::Skip => ("<skipped>".into(), 0),
        }
    }

    /// A churn of HPAs (a new uid each) fills the caches up to client-go's
    /// 4096 entries and no further; the newest HPAs' names are kept, so
    /// their repeats still update their events.
    #[test]
    fn a_churn_of_hpas_stays_within_the_cache_bound_and_keeps_recent_names() {
        let mut c = EventCorrelator::default();
        let mut now = 0;
        for uid in 0..10_000 {
            let object = format!("HorizontalPodAutoscaler/default/web/{uid}/autoscaling/v2");
            let event = Incoming {
                object: &object,
                type_: "Normal",
                reason: "SuccessfulRescale",
                message: "New size: 3; reason: cpu resource utilization",
            };
            now += 1;
            if let Correlated::Write { key, .. } = c.correlate(&event, t(now)) {
                c.written(&key, &format!("web.{uid}"));
            }
            assert!(c.len() <= CACHE_ENTRIES, "{uid}: {}", c.len());
            // Within the last 4096 HPAs, a repeat updates the event written.
            if uid >= 5_000 {
                let early = format!(
                    "HorizontalPodAutoscaler/default/web/{}/autoscaling/v2",
                    uid - 1_000
                );
                now += 1;
                let repeat = c.correlate(
                    &Incoming {
                        object: &early,
                        ..event.clone()
                    },
                    t(now),
                );
                let Correlated::Write { name, .. } = repeat else {
                    panic!("{uid}: skipped");
                };
                assert_eq!(name, Some(format!("web.{}", uid - 1_000)), "{uid}");
            }
        }
        assert_eq!(c.len(), CACHE_ENTRIES);
    }

    /// A deleted HPA's entries leave every cache, whatever its uid; those
    /// of an HPA whose name it prefixes, or of another namespace, stay.
    #[test]
    fn forgetting_an_hpa_drops_its_entries_and_no_other() {
        let mut c = EventCorrelator::default();
        let objects = [
            object_key(
                "HorizontalPodAutoscaler",
                "ns",
                "web",
                "u1",
                "autoscaling/v2",
            ),
            object_key(
                "HorizontalPodAutoscaler",
                "ns",
                "web",
                "u2",
                "autoscaling/v2",
            ),
            object_key(
                "HorizontalPodAutoscaler",
                "ns",
                "web-2",
                "u3",
                "autoscaling/v2",
            ),
            object_key(
                "HorizontalPodAutoscaler",
                "other",
                "web",
                "u4",
                "autoscaling/v2",
            ),
        ];
        for (i, object) in objects.iter().enumerate() {
            for reason in ["FailedGetExternalMetric", "FailedComputeMetricsReplicas"] {
                let event = Incoming {
                    object,
                    type_: "Warning",
                    reason,
                    message: "boom",
                };
                if let Correlated::Write { key, .. } = c.correlate(&event, t(i as i64)) {
                    c.written(&key, &format!("web.{i}"));
                }
            }
        }
        assert_eq!(
            (c.aggregates.len(), c.observations.len(), c.buckets.len()),
            (8, 8, 4)
        );
        c.forget(&object_prefix("HorizontalPodAutoscaler", "ns", "web"));
        assert_eq!(
            (c.aggregates.len(), c.observations.len(), c.buckets.len()),
            (4, 4, 2)
        );
        assert_eq!(c.aggregates.order.len(), 4);
        assert!(
            c.buckets
                .entries
                .keys()
                .all(|k| *k == objects[2] || *k == objects[3]),
            "{:?}",
            c.buckets.entries.keys()
        );
        // What stays still counts: a repeat updates the event written.
        let repeat = c.correlate(
            &Incoming {
                object: &objects[2],
                type_: "Warning",
                reason: "FailedGetExternalMetric",
                message: "boom",
            },
            t(10),
        );
        assert!(matches!(
            repeat,
            Correlated::Write { count: 2, name: Some(name), .. } if name == "web.2"
        ));
    }

    /// Forgetting one uid of a name (the watch saw that HPA deleted) keeps
    /// the entries of the HPA created again under the same name.
    #[test]
    fn forgetting_a_deleted_uid_keeps_the_hpa_that_replaced_it() {
        let mut c = EventCorrelator::default();
        let old = object_key(
            "HorizontalPodAutoscaler",
            "ns",
            "web",
            "u1",
            "autoscaling/v2",
        );
        let new = object_key(
            "HorizontalPodAutoscaler",
            "ns",
            "web",
            "u2",
            "autoscaling/v2",
        );
        for (i, object) in [&old, &new].into_iter().enumerate() {
            let event = Incoming {
                object,
                type_: "Warning",
                reason: "FailedGetExternalMetric",
                message: "boom",
            };
            c.correlate(&event, t(i as i64));
        }
        c.forget(&object_key(
            "HorizontalPodAutoscaler",
            "ns",
            "web",
            "u1",
            "",
        ));
        assert_eq!(
            (c.aggregates.len(), c.observations.len(), c.buckets.len()),
            (1, 1, 1)
        );
        assert!(c.buckets.entries.contains_key(&new));
    }

    #[test]
    fn repeats_count_on_the_first_event() {
        let mut c = EventCorrelator::default();
        let got: Vec<_> = (0..3)
            .map(|i| written(&c.correlate(&event("FailedGetScale", "boom"), t(15 * i))))
            .collect();
        assert_eq!(
            got,
            vec![("boom".into(), 1), ("boom".into(), 2), ("boom".into(), 3)]
        );
    }

    #[test]
    fn the_tenth_distinct_message_is_combined_and_later_ones_update_it() {
        let mut c = EventCorrelator::default();
        let messages: Vec<String> = (0..12).map(|i| format!("error {i}")).collect();
        let got: Vec<_> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| written(&c.correlate(&event("FailedRescale", m), t(i as i64))))
            .collect();
        assert_eq!(got[8], ("error 8".into(), 1));
        assert_eq!(
            got[9],
            ("(combined from similar events): error 9".into(), 1)
        );
        assert_eq!(
            got[11],
            ("(combined from similar events): error 11".into(), 3)
        );
        // Ten minutes of quiet start a fresh record.
        let later = written(&c.correlate(&event("FailedRescale", "error 99"), t(11 + 601)));
        assert_eq!(later, ("error 99".into(), 1));
    }

    #[test]
    fn a_burst_beyond_25_events_is_dropped_but_still_counted() {
        let mut c = EventCorrelator::default();
        let mut last = Correlated::Skip;
        for i in 0..25 {
            last = c.correlate(&event("FailedGetScale", "boom"), t(i));
        }
        assert_eq!(written(&last), ("boom".into(), 25));
        assert_eq!(
            c.correlate(&event("FailedGetScale", "boom"), t(25)),
            Correlated::Skip
        );
        // Another reason about the same object shares the bucket.
        assert_eq!(
            c.correlate(&event("FailedComputeMetricsReplicas", "x"), t(26)),
            Correlated::Skip
        );
        // One token every 5 minutes; the count includes the dropped repeat.
        assert_eq!(
            written(&c.correlate(&event("FailedGetScale", "boom"), t(24 + 300))),
            ("boom".into(), 27)
        );
    }
}
