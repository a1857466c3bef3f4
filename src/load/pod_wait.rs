//! Waiting for a cluster to create the load's pods: a real cluster's
//! controllers create them at their own pace (kube-controller-manager's
//! ReplicaSet controller, at its default 20 QPS, about 20 a second), and a
//! pod has metrics once the fake metrics server has learned it. The load
//! waits as long as pods keep appearing, and gives up only when none has
//! for [`STALL`], saying how fast they came.

use std::time::{Duration, Instant};

/// How long the load waits for the next pod to get values before it gives
/// up (and for the first: a cluster's controllers may take a while to
/// start).
pub const STALL: Duration = Duration::from_secs(120);

/// Where a wait for pods stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PodProgress {
    /// Every pod has values.
    Done,
    /// Pods are still coming (or none has come for less than [`STALL`]).
    Waiting,
    /// None came for [`STALL`].
    Stalled,
}

/// A wait for `want` pods: how many have values and since when.
#[derive(Debug, Clone)]
pub struct PodWait {
    want: usize,
    started: Instant,
    have: usize,
    /// When `have` last grew (the start, before any pod).
    last_gain: Instant,
}

impl PodWait {
    /// A wait for `want` pods from `now`.
    pub fn new(want: usize, now: Instant) -> Self {
        Self {
            want,
            started: now,
            have: 0,
            last_gain: now,
        }
    }

    /// Counts `have` pods with values at `now`.
    pub fn observe(&mut self, have: usize, now: Instant) -> PodProgress {
        if have > self.have {
            self.have = have;
            self.last_gain = now;
        }
        if self.have >= self.want {
            PodProgress::Done
        } else if now.saturating_duration_since(self.last_gain) >= STALL {
            PodProgress::Stalled
        } else {
            PodProgress::Waiting
        }
    }

    /// Pods a second from the start to the last one that came; `None`
    /// before any came, and when they all came within the first second
    /// (there at the first look: no pace to tell).
    pub fn rate(&self) -> Option<f64> {
        let took = self.last_gain.saturating_duration_since(self.started);
        (self.have > 0 && took >= Duration::from_secs(1))
            .then(|| self.have as f64 / took.as_secs_f64())
    }

    /// What a stalled wait says: how many pods came, how fast, and since
    /// when none has; `known` is how many pods of the cluster the fake
    /// metrics server knows.
    pub fn stalled(&self, now: Instant, known: usize) -> String {
        let secs = |d: Duration| d.as_secs();
        let pace = match self.rate() {
            Some(rate) => format!(
                "; the cluster created them at {rate:.1} pods/s, the last {}s after the wait began",
                secs(self.last_gain.saturating_duration_since(self.started))
            ),
            None => String::new(),
        };
        let hint = if known == 0 {
            ": the cluster created none, or the server learns no pods (start it with --watch-pods and the RBAC of fake-metrics-server/deploy/rbac.yaml)"
        } else {
            ""
        };
        format!(
            "after {}s the fake metrics server gives values to {} of the load's {} pods, none more in the last {}s (it knows {known} pods of the cluster){pace}{hint}",
            secs(now.saturating_duration_since(self.started)),
            self.have,
            self.want,
            secs(STALL),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, secs: u64) -> Instant {
        start + Duration::from_secs(secs)
    }

    /// (seconds from the start, pods with values, what the wait says)
    fn run(want: usize, steps: &[(u64, usize, PodProgress)]) -> PodWait {
        let start = Instant::now();
        let mut wait = PodWait::new(want, start);
        for &(secs, have, expected) in steps {
            assert_eq!(
                wait.observe(have, at(start, secs)),
                expected,
                "{have} pods at {secs}s"
            );
        }
        wait
    }

    #[test]
    fn a_cluster_creating_pods_slowly_is_waited_for_past_any_fixed_time() {
        use PodProgress::*;
        // 20 pods a second, 3,000 pods: 150 s, longer than one stall.
        let mut steps: Vec<(u64, usize, PodProgress)> =
            (0..150).map(|s| (s, s as usize * 20, Waiting)).collect();
        steps.push((150, 3_000, Done));
        let wait = run(3_000, &steps);
        assert!((wait.rate().unwrap() - 20.0).abs() < 0.01);
    }

    #[test]
    fn the_wait_ends_when_no_pod_came_for_a_stall() {
        use PodProgress::*;
        let wait = run(
            1_000,
            &[
                (0, 0, Waiting),
                (60, 0, Waiting),
                (100, 500, Waiting),
                (219, 500, Waiting),
                (220, 695, Waiting),
                (339, 695, Waiting),
                (340, 695, Stalled),
            ],
        );
        let text = wait.stalled(wait.started + Duration::from_secs(340), 700);
        assert_eq!(
            text,
            "after 340s the fake metrics server gives values to 695 of the load's 1000 pods, none more in the last 120s (it knows 700 pods of the cluster); the cluster created them at 3.2 pods/s, the last 220s after the wait began"
        );
    }

    #[test]
    fn a_cluster_without_pods_names_both_causes() {
        use PodProgress::*;
        let wait = run(10, &[(0, 0, Waiting), (119, 0, Waiting), (120, 0, Stalled)]);
        assert_eq!(wait.rate(), None);
        let text = wait.stalled(wait.started + Duration::from_secs(120), 0);
        assert!(text.starts_with("after 120s the fake metrics server gives values to 0 of the load's 10 pods, none more in the last 120s (it knows 0 pods of the cluster): the cluster created none, or the server learns no pods (start it with --watch-pods"), "{text}");
    }

    #[test]
    fn pods_there_at_the_first_look_have_no_pace() {
        let wait = run(3_000, &[(0, 3_000, PodProgress::Done)]);
        assert_eq!(wait.rate(), None);
    }

    #[test]
    fn fewer_pods_than_seen_before_do_not_restart_the_stall() {
        use PodProgress::*;
        // A pod deleted and recreated: the count dips, then comes back.
        run(
            10,
            &[
                (0, 5, Waiting),
                (60, 4, Waiting),
                (119, 5, Waiting),
                (120, 5, Stalled),
            ],
        );
    }
}
