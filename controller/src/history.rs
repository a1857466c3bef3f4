//! The controller's per-HPA memory between reconciles (recommendations for
//! stabilization, scale events for rate limits), in memory only as upstream:
//! lost on restart, dropped when the HPA is deleted.
//!
//! The harness reads and seeds it with ages relative to the controller's
//! clock (the steps "recommendations for X were:" and "scale events for X
//! were:"). Scale events are read back as upstream keeps them: the ones
//! marked outdated stay until their slot is reused, and still count against
//! a policy whose period covers them.

use foldhash::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use hpa_core::HpaHistory;
use hpa_core::normalize::{Recommendation, ScaleEvent};
use jiff::{SignedDuration, Timestamp};

use super::memory::{Footprint, Meter, table_bytes};

/// A recommendation as the harness sees it: how long ago, how many replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgedRecommendation {
    pub age: SignedDuration,
    pub replicas: i32,
}

/// Which way a scale event went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Direction {
    Up,
    Down,
}

/// A scale event as the harness sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgedScaleEvent {
    pub age: SignedDuration,
    pub direction: Direction,
    pub pods: i32,
    /// Marked outdated by a later store (older than the longest policy
    /// period then): kept, and the first candidate for reuse.
    pub outdated: bool,
}

/// Histories by HPA key (`namespace/name`).
#[derive(Debug, Clone, Default)]
pub struct HistoryStore {
    entries: Arc<Mutex<HashMap<Box<str>, Kept>>>,
}

/// A history as the store keeps it: every HPA has one, with a
/// recommendation per sync of the stabilization window (21 with the
/// default 300 s and 15 s syncs), so its lists are kept at their length and
/// its recommendations packed (16 bytes each, not 24).
#[derive(Debug, Clone, Default, PartialEq)]
struct Kept {
    recommendations: Option<Box<[Packed]>>,
    scale_up_events: Box<[ScaleEvent]>,
    scale_down_events: Box<[ScaleEvent]>,
}

/// A recommendation: its time as seconds and nanoseconds, its replicas.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Packed {
    second: i64,
    nanosecond: i32,
    replicas: i32,
}

impl From<&Recommendation> for Packed {
    fn from(r: &Recommendation) -> Self {
        Self {
            second: r.timestamp.as_second(),
            nanosecond: r.timestamp.subsec_nanosecond(),
            replicas: r.replicas,
        }
    }
}

impl Packed {
    fn recommendation(self) -> Recommendation {
        Recommendation {
            replicas: self.replicas,
            // The parts of a timestamp make it again.
            timestamp: Timestamp::new(self.second, self.nanosecond).unwrap_or_default(),
        }
    }
}

impl From<HpaHistory> for Kept {
    fn from(history: HpaHistory) -> Self {
        Self {
            recommendations: history
                .recommendations
                .map(|list| list.iter().map(Packed::from).collect()),
            scale_up_events: history.scale_up_events.into_boxed_slice(),
            scale_down_events: history.scale_down_events.into_boxed_slice(),
        }
    }
}

impl Kept {
    fn history(&self) -> HpaHistory {
        HpaHistory {
            recommendations: self
                .recommendations
                .as_ref()
                .map(|list| list.iter().map(|p| p.recommendation()).collect()),
            scale_up_events: self.scale_up_events.to_vec(),
            scale_down_events: self.scale_down_events.to_vec(),
        }
    }
}

impl HistoryStore {
    fn lock(&self) -> MutexGuard<'_, HashMap<Box<str>, Kept>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The history of `key` (empty, with no recommendation entry, if unknown).
    pub fn get(&self, key: &str) -> HpaHistory {
        self.lock().get(key).map(Kept::history).unwrap_or_default()
    }

    /// Whether `key` has any history.
    pub fn contains(&self, key: &str) -> bool {
        self.lock().contains_key(key)
    }

    /// Replaces the history of `key`.
    pub fn set(&self, key: &str, history: HpaHistory) {
        let kept = Kept::from(history);
        let mut entries = self.lock();
        match entries.get_mut(key) {
            Some(held) => *held = kept,
            None => {
                entries.insert(Box::from(key), kept);
            }
        }
    }

    /// Drops the history of a deleted HPA.
    pub fn remove(&self, key: &str) {
        self.lock().remove(key);
    }

    /// Every key with a history.
    pub fn keys(&self) -> Vec<String> {
        self.lock().keys().map(|k| k.to_string()).collect()
    }

    /// Seeds the recommendations of `key`; an empty list means an existing,
    /// empty history (the next sync adds no entry for the current replicas).
    pub fn seed_recommendations(&self, key: &str, now: Timestamp, seeds: &[AgedRecommendation]) {
        let mut entries = self.lock();
        let history = entries.entry(Box::from(key)).or_default();
        history.recommendations = Some(
            seeds
                .iter()
                .map(|s| {
                    Packed::from(&Recommendation {
                        replicas: s.replicas,
                        timestamp: now - s.age,
                    })
                })
                .collect(),
        );
    }

    /// Seeds the scale events of `key` (both directions are replaced).
    pub fn seed_scale_events(&self, key: &str, now: Timestamp, seeds: &[AgedScaleEvent]) {
        let mut entries = self.lock();
        let history = entries.entry(Box::from(key)).or_default();
        let event = |s: &AgedScaleEvent| ScaleEvent {
            replica_change: s.pods,
            timestamp: now - s.age,
            outdated: s.outdated,
        };
        history.scale_up_events = seeds
            .iter()
            .filter(|s| s.direction == Direction::Up)
            .map(event)
            .collect();
        history.scale_down_events = seeds
            .iter()
            .filter(|s| s.direction == Direction::Down)
            .map(event)
            .collect();
    }

    /// The recommendations of `key` with ages as of `now`, oldest first;
    /// `None` when the controller has no entry for it.
    pub fn recommendations(&self, key: &str, now: Timestamp) -> Option<Vec<AgedRecommendation>> {
        let entries = self.lock();
        let mut list: Vec<AgedRecommendation> = entries
            .get(key)?
            .recommendations
            .as_ref()?
            .iter()
            .map(|p| {
                let r = p.recommendation();
                AgedRecommendation {
                    age: now.duration_since(r.timestamp),
                    replicas: r.replicas,
                }
            })
            .collect();
        list.sort_by_key(|r| std::cmp::Reverse(r.age));
        Some(list)
    }

    /// Every scale event the controller keeps for `key`, outdated ones
    /// included (upstream keeps them too), with ages as of `now`: the
    /// scale-ups then the scale-downs, each in the order they are kept.
    pub fn scale_events(&self, key: &str, now: Timestamp) -> Vec<AgedScaleEvent> {
        let entries = self.lock();
        let Some(history) = entries.get(key) else {
            return Vec::new();
        };
        let aged = |direction| {
            move |e: &ScaleEvent| AgedScaleEvent {
                age: now.duration_since(e.timestamp),
                direction,
                pods: e.replica_change,
                outdated: e.outdated,
            }
        };
        history
            .scale_up_events
            .iter()
            .map(aged(Direction::Up))
            .chain(history.scale_down_events.iter().map(aged(Direction::Down)))
            .collect()
    }

    /// What the histories hold ([`crate::memory`]): the table, the keys,
    /// each history's lists at their capacity.
    pub fn footprint(&self, meter: &Meter) -> Footprint {
        let entries = self.lock();
        let lists = |h: &Kept| {
            meter.buffer::<Packed>(h.recommendations.as_ref().map_or(0, |r| r.len()))
                + meter.buffer::<ScaleEvent>(h.scale_up_events.len())
                + meter.buffer::<ScaleEvent>(h.scale_down_events.len())
        };
        Footprint {
            structure: std::borrow::Cow::Borrowed("histories"),
            entries: entries.len(),
            bytes: table_bytes(entries.capacity(), std::mem::size_of::<(Box<str>, Kept)>())
                + entries
                    .iter()
                    .map(|(key, history)| meter.block(key.len()) + lists(history))
                    .sum::<u64>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is set is what is got, to the nanosecond, though kept packed.
    #[test]
    fn a_history_reads_back_as_it_was_set() {
        let store = HistoryStore::default();
        assert_eq!(store.get("ns/web"), HpaHistory::default());
        let at = |s: i64, ns: i32| Timestamp::new(s, ns).unwrap();
        let history = HpaHistory {
            recommendations: Some(vec![
                Recommendation {
                    replicas: 3,
                    timestamp: at(1_767_225_600, 123_456_789),
                },
                Recommendation {
                    replicas: 0,
                    timestamp: at(-5, -999_999_999),
                },
            ]),
            scale_up_events: vec![ScaleEvent {
                replica_change: 2,
                timestamp: at(1_767_225_615, 1),
                outdated: true,
            }],
            scale_down_events: vec![],
        };
        store.set("ns/web", history.clone());
        assert_eq!(store.get("ns/web"), history);
        let empty = HpaHistory {
            recommendations: Some(vec![]),
            ..HpaHistory::default()
        };
        store.set("ns/web", empty.clone());
        assert_eq!(
            store.get("ns/web"),
            empty,
            "an existing, empty entry stays one"
        );
    }

    #[test]
    fn seeded_recommendations_read_back_with_their_ages() {
        let store = HistoryStore::default();
        let now = Timestamp::constant(1_767_225_600, 0);
        store.seed_recommendations(
            "ns/web",
            now,
            &[
                AgedRecommendation {
                    age: SignedDuration::from_secs(60),
                    replicas: 3,
                },
                AgedRecommendation {
                    age: SignedDuration::from_secs(240),
                    replicas: 5,
                },
            ],
        );
        let later = now + SignedDuration::from_secs(30);
        let read = store.recommendations("ns/web", later).unwrap();
        assert_eq!(
            read,
            vec![
                AgedRecommendation {
                    age: SignedDuration::from_secs(270),
                    replicas: 5
                },
                AgedRecommendation {
                    age: SignedDuration::from_secs(90),
                    replicas: 3
                },
            ]
        );
    }

    #[test]
    fn an_empty_seed_is_an_existing_empty_history() {
        let store = HistoryStore::default();
        let now = Timestamp::UNIX_EPOCH;
        assert_eq!(store.recommendations("ns/web", now), None);
        store.seed_recommendations("ns/web", now, &[]);
        assert_eq!(store.get("ns/web").recommendations, Some(vec![]));
    }

    #[test]
    fn scale_events_are_split_by_direction_and_removed_with_the_hpa() {
        let store = HistoryStore::default();
        let now = Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1000);
        store.seed_scale_events(
            "ns/web",
            now,
            &[
                AgedScaleEvent {
                    age: SignedDuration::from_secs(20),
                    direction: Direction::Down,
                    pods: 1,
                    outdated: false,
                },
                AgedScaleEvent {
                    age: SignedDuration::from_secs(10),
                    direction: Direction::Up,
                    pods: 2,
                    outdated: true,
                },
            ],
        );
        let h = store.get("ns/web");
        assert_eq!(h.scale_up_events.len(), 1);
        assert!(h.scale_up_events[0].outdated);
        assert_eq!(h.scale_down_events[0].replica_change, 1);
        let read: Vec<(Direction, i32, bool)> = store
            .scale_events("ns/web", now)
            .iter()
            .map(|e| (e.direction, e.pods, e.outdated))
            .collect();
        assert_eq!(
            read,
            [(Direction::Up, 2, true), (Direction::Down, 1, false)]
        );
        store.remove("ns/web");
        assert!(!store.contains("ns/web"));
    }

    /// Seeded events go through upstream's bookkeeping on the next store:
    /// events older than the longest policy period are marked outdated and
    /// kept, the last one is reused, and the harness reads back every event
    /// kept, the outdated one included (upstream's `TestStoreScaleEvents`,
    /// "replace one entry, use policies with different periods").
    #[test]
    fn seeded_scale_events_are_marked_outdated_kept_and_read_back_with_the_reused_slot() {
        use k8s_openapi::api::autoscaling::v2::{
            HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscalerBehavior,
        };
        let store = HistoryStore::default();
        let now = Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1000);
        let up = |age: i64, pods: i32| AgedScaleEvent {
            age: SignedDuration::from_secs(age),
            direction: Direction::Up,
            pods,
            outdated: false,
        };
        store.seed_scale_events("ns/web", now, &[up(29, 8), up(59, 6), up(61, 7), up(61, 9)]);
        let policy = |type_: &str, value, period_seconds| HPAScalingPolicy {
            type_: type_.to_owned(),
            value,
            period_seconds,
        };
        let behavior = HorizontalPodAutoscalerBehavior {
            scale_up: Some(HPAScalingRules {
                policies: Some(vec![policy("Pods", 10, 60), policy("Percent", 100, 30)]),
                ..HPAScalingRules::default()
            }),
            scale_down: None,
        };
        let mut history = store.get("ns/web");
        hpa_core::normalize::store_scale_event(Some(&behavior), &mut history, 10, 15, now);
        store.set("ns/web", history);
        let kept: Vec<(i32, bool)> = store
            .get("ns/web")
            .scale_up_events
            .iter()
            .map(|e| (e.replica_change, e.outdated))
            .collect();
        assert_eq!(kept, vec![(8, false), (6, false), (7, true), (5, false)]);
        let read: Vec<(i64, i32, bool)> = store
            .scale_events("ns/web", now)
            .iter()
            .map(|e| (e.age.as_secs(), e.pods, e.outdated))
            .collect();
        assert_eq!(
            read,
            [(29, 8, false), (59, 6, false), (61, 7, true), (0, 5, false)]
        );
    }
}
