//! Upstream's `groupPods`, one pod at a time: the group a pod of a pod-based
//! metric falls in (counted, unready, missing, ignored) and the rule, with
//! its times, that put it there. The replica calculator groups through
//! [`group_pod`] and the decision trace keeps each pod's [`GroupRule`], so
//! an explanation names the rule the calculation applied: the two cannot
//! disagree.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::go_duration;
use crate::pod::CorePod;

/// Readiness timing knobs for CPU samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Readiness {
    /// `--horizontal-pod-autoscaler-cpu-initialization-period`.
    pub cpu_initialization_period: SignedDuration,
    /// `--horizontal-pod-autoscaler-initial-readiness-delay`.
    pub initial_readiness_delay: SignedDuration,
}

/// `t + d`, saturating at the ends of time.
pub fn add(t: Timestamp, d: SignedDuration) -> Timestamp {
    t.checked_add(d).unwrap_or(if d.is_negative() {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// Go's zero `time.Time` (0001-01-01T00:00:00Z): what an unset timestamp means upstream.
pub fn go_zero_time() -> Timestamp {
    Timestamp::from_second(-62_135_596_800).unwrap_or(Timestamp::MIN)
}

/// The groups of upstream's `groupPods`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PodGroup {
    /// The sample counts as reported.
    Ready,
    /// Left out, or taken as 0 on a scale-up.
    Unready,
    /// No sample: taken as 0 on a scale-up, as the target on a scale-down.
    Missing,
    /// Left out.
    Ignored,
}

impl PodGroup {
    /// `ready`, `unready`, `missing` or `ignored`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Unready => "unready",
            Self::Missing => "missing",
            Self::Ignored => "ignored",
        }
    }
}

/// Why [`group_pod`] put a pod in its group, with the times that decided
/// it. Serialized with a `rule` tag (`sampleBeforeReady`, ...) and the
/// times as RFC 3339, the sample window as a Go duration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "rule",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum GroupRule {
    /// Counted as reported: a metric other than cpu (no readiness rule);
    /// for cpu, a pod whose Ready is not False, past its initialization
    /// period or with a sample whose window began after readiness. (No
    /// times: a trace keeps this, the common case, as nothing at all.)
    #[default]
    Counted,
    /// cpu past the initialization period: Ready is False, but it turned
    /// False after the initial readiness delay ended (a pod that was ready
    /// and then failed its probe). Counted, as upstream does.
    TurnedUnready {
        /// When Ready turned False.
        since: Timestamp,
        /// When the initial readiness delay ended (start + delay).
        delay_ends: Timestamp,
    },
    /// Phase Pending. Unready, whatever the metric.
    Pending,
    /// cpu: the pod has no Ready condition. Unready.
    NoReadyCondition,
    /// cpu: the pod has no start time. Unready.
    NoStartTime,
    /// cpu within the initialization period: Ready is False. Unready.
    NotReady {
        /// When Ready turned False (`None`: not recorded).
        since: Option<Timestamp>,
        /// When the initial readiness delay ends (start + delay).
        delay_ends: Timestamp,
        /// When the cpu initialization period ends (start + period).
        initialization_ends: Timestamp,
    },
    /// cpu within the initialization period: Ready, but the sample's window
    /// began before the Ready transition. Unready.
    SampleBeforeReady {
        /// When Ready turned True.
        ready_since: Timestamp,
        /// The sample's timestamp.
        sample_time: Timestamp,
        /// The sample's window.
        #[serde(with = "go_duration::serde_format")]
        window: SignedDuration,
        /// When the cpu initialization period ends (start + period).
        initialization_ends: Timestamp,
    },
    /// cpu past the initialization period: Ready is False since a moment
    /// within the initial readiness delay after the start (it never became
    /// ready). Unready.
    NeverReady {
        /// When Ready turned False (`None`: not recorded).
        since: Option<Timestamp>,
        /// When the pod started.
        started: Timestamp,
        /// When the initial readiness delay ended (start + delay).
        delay_ends: Timestamp,
    },
    /// The metrics API has no sample of the pod. Missing.
    NoSample,
    /// The pod has a deletion timestamp. Ignored.
    Deleting {
        /// `metadata.deletionTimestamp`.
        since: Timestamp,
    },
    /// Phase Failed. Ignored.
    Failed,
    /// The metrics API returned a sample of a pod the scale's selector does
    /// not pick (its labels no longer match, or it is gone and the metrics
    /// source has not caught up). Upstream groups only the selected pods,
    /// so such a sample is in no group: a utilization target finds no
    /// request for it and leaves it out (`counted` false); an average
    /// value target averages every sample it is given, so it counts
    /// (`counted` true).
    NotSelected {
        /// Whether the sample counts in the average.
        counted: bool,
    },
}

/// How [`GroupRule::words`] writes a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeStyle {
    /// `10s ago`, `in 20s`: for tables.
    Relative,
    /// `2026-11-27T12:00:00Z (10s ago)`: for sentences that stand alone.
    Absolute,
}

/// `10s ago` or `in 20s` (`now` for the same instant).
pub fn relative(t: Timestamp, now: Timestamp) -> String {
    let d = now.duration_since(t);
    if d.is_zero() {
        "now".to_owned()
    } else if d.is_negative() {
        format!("in {}", go_duration::format(-d))
    } else {
        format!("{} ago", go_duration::format(d))
    }
}

/// A time as `style` writes it.
pub fn when(t: Timestamp, now: Timestamp, style: TimeStyle) -> String {
    match style {
        TimeStyle::Relative => relative(t, now),
        TimeStyle::Absolute => format!("{t} ({})", relative(t, now)),
    }
}

impl GroupRule {
    /// The group the rule puts a pod in.
    pub fn group(&self) -> PodGroup {
        match self {
            Self::Counted | Self::TurnedUnready { .. } | Self::NotSelected { counted: true } => {
                PodGroup::Ready
            }
            Self::Pending
            | Self::NoReadyCondition
            | Self::NoStartTime
            | Self::NotReady { .. }
            | Self::SampleBeforeReady { .. }
            | Self::NeverReady { .. } => PodGroup::Unready,
            Self::NoSample => PodGroup::Missing,
            Self::Deleting { .. } | Self::Failed | Self::NotSelected { counted: false } => {
                PodGroup::Ignored
            }
        }
    }

    /// Whether the rule is the plain [`GroupRule::Counted`] (a trace leaves
    /// it out, as the default).
    pub fn is_counted(&self) -> bool {
        *self == Self::Counted
    }

    /// When a pod held back by the rule counts, if that is known from the
    /// times alone: a sample whose window begins after readiness (or the
    /// end of the initialization period, whichever is first), or, for a
    /// pod that turned unready after the initial readiness delay, the end
    /// of the initialization period.
    pub fn counts_from(&self) -> Option<Timestamp> {
        match *self {
            Self::SampleBeforeReady {
                ready_since,
                window,
                initialization_ends,
                ..
            } => Some(add(ready_since, window).min(initialization_ends)),
            Self::NotReady {
                since: Some(since),
                delay_ends,
                initialization_ends,
            } if since >= delay_ends => Some(initialization_ends),
            _ => None,
        }
    }

    /// The rule in a user's words, its times written as `style` says.
    pub fn words(&self, now: Timestamp, style: TimeStyle) -> String {
        let at = |t: Timestamp| when(t, now, style);
        // "in 20s" in a table; "at 2026-...Z (in 20s)" in a sentence.
        let moment = |t: Timestamp| match style {
            TimeStyle::Relative => relative(t, now),
            TimeStyle::Absolute => format!("at {}", when(t, now, style)),
        };
        let since =
            |t: Option<Timestamp>| t.map_or_else(String::new, |t| format!(" since {}", at(t)));
        match *self {
            Self::Counted => "counted as reported".to_owned(),
            Self::TurnedUnready { since, delay_ends } => format!(
                "counted: not Ready since {}, but it turned unready after the initial readiness delay (it ended {}), and past the cpu initialization period upstream counts such a pod's cpu",
                at(since),
                at(delay_ends)
            ),
            Self::Pending => "Pending: not running yet".to_owned(),
            Self::NoReadyCondition => {
                "no Ready condition: its cpu is not counted until it has one".to_owned()
            }
            Self::NoStartTime => {
                "no start time: its cpu is not counted until it has one".to_owned()
            }
            Self::NotReady {
                since: not_ready,
                initialization_ends,
                ..
            } => {
                let mut text = format!(
                    "not Ready{}, within the cpu initialization period (it ends {})",
                    since(not_ready),
                    at(initialization_ends)
                );
                if let Some(t) = self.counts_from() {
                    text.push_str(&format!(
                        "; it counts {} even if still not Ready (it turned unready after the initial readiness delay)",
                        moment(t)
                    ));
                }
                text
            }
            Self::SampleBeforeReady {
                ready_since,
                sample_time,
                window,
                initialization_ends,
            } => {
                let after_ready = add(ready_since, window);
                let counts = if after_ready <= initialization_ends {
                    format!("a sample taken {} or later counts", moment(after_ready))
                } else {
                    format!(
                        "it counts {}, when the cpu initialization period ends",
                        moment(initialization_ends)
                    )
                };
                format!(
                    "Ready since {}, within the cpu initialization period, but its sample ({} window, taken {}) began {} before it turned Ready; {counts}",
                    at(ready_since),
                    go_duration::format(window),
                    at(sample_time),
                    go_duration::format(ready_since.duration_since(add(sample_time, -window))),
                )
            }
            Self::NeverReady {
                since: not_ready,
                started,
                delay_ends,
            } => format!(
                "not Ready{}, which was within the initial readiness delay after it started {} (it ended {}): taken for a pod that never became ready; counts once Ready",
                since(not_ready),
                at(started),
                at(delay_ends)
            ),
            Self::NoSample => "no sample from the metrics API".to_owned(),
            Self::Deleting { since } => format!("being deleted (since {})", at(since)),
            Self::Failed => "phase Failed".to_owned(),
            Self::NotSelected { counted: false } => {
                "not picked by the selector (no longer matching, or gone): its sample is left out".to_owned()
            }
            Self::NotSelected { counted: true } => {
                "not picked by the selector (no longer matching, or gone), yet its sample counts: upstream averages every sample the metrics API returns".to_owned()
            }
        }
    }
}

/// The pod's `Ready` condition as (status, last transition).
fn ready_condition(pod: &CorePod) -> Option<(&str, Option<Timestamp>)> {
    pod.ready
        .as_ref()
        .map(|c| (c.status.as_str(), c.last_transition_time))
}

/// Upstream `groupPods` for one pod: `sample` is its sample's (timestamp,
/// window), `None` when the metrics API has none; `resource` the metric's
/// resource name (`""` for Pods metrics), which only for `cpu` brings in the
/// readiness rules. `now` plays the part of Go's `time.Now()`; comparisons
/// are strict as upstream's; a Ready condition without a transition time
/// has Go's zero time.
pub fn group_pod(
    pod: &CorePod,
    sample: Option<(Timestamp, SignedDuration)>,
    resource: &str,
    readiness: Readiness,
    now: Timestamp,
) -> GroupRule {
    if let Some(since) = pod.deletion_timestamp {
        return GroupRule::Deleting { since };
    }
    match pod.phase.as_str() {
        "Failed" => return GroupRule::Failed,
        "Pending" => return GroupRule::Pending,
        _ => {}
    }
    let Some((sample, window)) = sample else {
        return GroupRule::NoSample;
    };
    if resource != "cpu" {
        return GroupRule::Counted;
    }
    let Some((status, transition)) = ready_condition(pod) else {
        return GroupRule::NoReadyCondition;
    };
    let Some(start) = pod.start_time else {
        return GroupRule::NoStartTime;
    };
    let transition_or_zero = transition.unwrap_or_else(go_zero_time);
    let delay_ends = add(start, readiness.initial_readiness_delay);
    let initialization_ends = add(start, readiness.cpu_initialization_period);
    if initialization_ends > now {
        if status == "False" {
            return GroupRule::NotReady {
                since: transition,
                delay_ends,
                initialization_ends,
            };
        }
        if sample < add(transition_or_zero, window) {
            return GroupRule::SampleBeforeReady {
                ready_since: transition_or_zero,
                sample_time: sample,
                window,
                initialization_ends,
            };
        }
        return GroupRule::Counted;
    }
    if status == "False" {
        if delay_ends > transition_or_zero {
            return GroupRule::NeverReady {
                since: transition,
                started: start,
                delay_ends,
            };
        }
        return GroupRule::TurnedUnready {
            since: transition_or_zero,
            delay_ends,
        };
    }
    GroupRule::Counted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::ReadyCondition;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    fn readiness() -> Readiness {
        Readiness {
            cpu_initialization_period: SignedDuration::from_mins(5),
            initial_readiness_delay: SignedDuration::from_secs(30),
        }
    }

    fn pod(phase: &str, started: Option<i64>, ready: Option<(&str, i64)>) -> CorePod {
        CorePod {
            name: "web-0".into(),
            phase: phase.into(),
            start_time: started.map(t),
            ready: ready.map(|(status, at)| ReadyCondition {
                status: status.into(),
                last_transition_time: Some(t(at)),
            }),
            ..CorePod::default()
        }
    }

    fn sample(at: i64, window: i64) -> Option<(Timestamp, SignedDuration)> {
        Some((t(at), SignedDuration::from_secs(window)))
    }

    #[test]
    fn a_young_pods_sample_from_before_readiness_is_unready_until_a_window_after_it() {
        // Started at 0, Ready at 0, a 30s sample taken at 10: it began at -20.
        let rule = group_pod(
            &pod("Running", Some(0), Some(("True", 0))),
            sample(10, 30),
            "cpu",
            readiness(),
            t(10),
        );
        assert_eq!(
            rule,
            GroupRule::SampleBeforeReady {
                ready_since: t(0),
                sample_time: t(10),
                window: SignedDuration::from_secs(30),
                initialization_ends: t(300),
            }
        );
        assert_eq!(rule.group(), PodGroup::Unready);
        assert_eq!(rule.counts_from(), Some(t(30)));
        assert_eq!(
            rule.words(t(10), TimeStyle::Relative),
            "Ready since 10s ago, within the cpu initialization period, but its sample (30s window, taken now) began 20s before it turned Ready; a sample taken in 20s or later counts"
        );
        // The sample taken at 30 began at readiness: counted.
        let later = group_pod(
            &pod("Running", Some(0), Some(("True", 0))),
            sample(30, 30),
            "cpu",
            readiness(),
            t(30),
        );
        assert_eq!(later.group(), PodGroup::Ready);
    }

    #[test]
    fn past_the_initialization_period_only_a_pod_never_ready_is_unready() {
        let never = group_pod(
            &pod("Running", Some(0), Some(("False", 10))),
            sample(400, 30),
            "cpu",
            readiness(),
            t(400),
        );
        assert_eq!(never.group(), PodGroup::Unready);
        assert!(matches!(never, GroupRule::NeverReady { .. }));
        let turned = group_pod(
            &pod("Running", Some(0), Some(("False", 200))),
            sample(400, 30),
            "cpu",
            readiness(),
            t(400),
        );
        assert_eq!(
            turned,
            GroupRule::TurnedUnready {
                since: t(200),
                delay_ends: t(30)
            }
        );
        assert_eq!(turned.group(), PodGroup::Ready);
        let ready = group_pod(
            &pod("Running", Some(0), Some(("True", 10))),
            sample(400, 30),
            "cpu",
            readiness(),
            t(400),
        );
        assert_eq!(ready, GroupRule::Counted);
    }

    #[test]
    fn a_pod_that_turned_unready_after_the_delay_counts_when_the_period_ends() {
        let rule = group_pod(
            &pod("Running", Some(0), Some(("False", 60))),
            sample(100, 30),
            "cpu",
            readiness(),
            t(100),
        );
        assert_eq!(rule.group(), PodGroup::Unready);
        assert_eq!(rule.counts_from(), Some(t(300)));
        let early = group_pod(
            &pod("Running", Some(0), Some(("False", 10))),
            sample(100, 30),
            "cpu",
            readiness(),
            t(100),
        );
        assert_eq!(early.counts_from(), None);
    }

    #[test]
    fn phases_deletion_and_samples_decide_before_readiness() {
        let mut deleting = pod("Running", Some(0), Some(("True", 0)));
        deleting.deletion_timestamp = Some(t(5));
        let cases = [
            (
                deleting,
                sample(10, 30),
                GroupRule::Deleting { since: t(5) },
            ),
            (
                pod("Failed", Some(0), None),
                sample(10, 30),
                GroupRule::Failed,
            ),
            (pod("Pending", None, None), None, GroupRule::Pending),
            (
                pod("Running", Some(0), Some(("True", 0))),
                None,
                GroupRule::NoSample,
            ),
            (
                pod("Running", Some(0), None),
                sample(10, 30),
                GroupRule::NoReadyCondition,
            ),
            (
                pod("Running", None, Some(("True", 0))),
                sample(10, 30),
                GroupRule::NoStartTime,
            ),
        ];
        for (pod, sample, want) in cases {
            assert_eq!(group_pod(&pod, sample, "cpu", readiness(), t(10)), want);
        }
        // Only cpu has readiness rules.
        assert_eq!(
            group_pod(
                &pod("Running", Some(0), None),
                sample(10, 30),
                "memory",
                readiness(),
                t(10)
            ),
            GroupRule::Counted
        );
    }

    #[test]
    fn a_rule_reads_back_from_its_json() {
        let rule = GroupRule::SampleBeforeReady {
            ready_since: t(0),
            sample_time: t(10),
            window: SignedDuration::from_millis(30_500),
            initialization_ends: t(300),
        };
        let json = serde_json::to_value(rule).unwrap();
        assert_eq!(json["rule"], "sampleBeforeReady");
        assert_eq!(json["window"], "30.5s");
        assert_eq!(json["readySince"], "2027-01-15T08:00:00Z");
        assert_eq!(serde_json::from_value::<GroupRule>(json).unwrap(), rule);
    }
}
