//! The arithmetic of kube-controller-manager's deployment rolling updater
//! (`pkg/controller/deployment/rolling.go`, `sync.go` and
//! `util/deployment_util.go`), pure, so that tables pin it: how far the new
//! ReplicaSet may surge, how far the old ones may shrink, and how a scale of
//! the Deployment in mid-rollout is shared among its ReplicaSets.
//!
//! A "ReplicaSet" here is the sim's group of a Deployment's pods with one
//! `pod-template-hash` ([`Rs`]); its `spec.replicas` is its pod count, as the
//! sim creates and deletes pods at once.

/// `maxSurge` or `maxUnavailable`: a count or a percentage of the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntOrPercent {
    Int(i64),
    Percent(i64),
}

impl IntOrPercent {
    /// The Deployment default of both fields.
    pub(crate) const DEFAULT: Self = Self::Percent(25);

    /// Reads `3` or `"25%"` (`"3"` too, as the API server's intstr does).
    pub(crate) fn parse(v: &serde_json::Value) -> Option<Self> {
        if let Some(n) = v.as_i64() {
            return Some(Self::Int(n));
        }
        let s = v.as_str()?.trim();
        match s.strip_suffix('%') {
            Some(p) => p.parse().ok().map(Self::Percent),
            None => s.parse().ok().map(Self::Int),
        }
    }

    /// intstr `GetScaledValueFromIntOrPercent`: a percentage of `total`,
    /// rounded up or down.
    fn scaled(self, total: i64, round_up: bool) -> i64 {
        match self {
            Self::Int(n) => n,
            Self::Percent(p) => {
                let product = p * total;
                if round_up {
                    (product + 99).div_euclid(100)
                } else {
                    product.div_euclid(100)
                }
            }
        }
    }
}

/// A Deployment's rolling update parameters, resolved for its replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rolling {
    /// `spec.replicas`.
    pub replicas: i64,
    /// Pods above `replicas` the rollout may add.
    pub max_surge: i64,
    /// Pods below `replicas` that may be unavailable.
    pub max_unavailable: i64,
}

impl Rolling {
    /// `ResolveFenceposts`: surge rounds up, unavailability down, and when
    /// both come to 0 one pod may be unavailable (else nothing could move).
    pub(crate) fn resolve(replicas: i64, surge: IntOrPercent, unavailable: IntOrPercent) -> Self {
        let max_surge = surge.scaled(replicas, true).max(0);
        let mut max_unavailable = unavailable.scaled(replicas, false).max(0);
        if max_surge == 0 && max_unavailable == 0 {
            max_unavailable = 1;
        }
        Self {
            replicas,
            max_surge,
            max_unavailable: max_unavailable.min(replicas),
        }
    }
}

/// One ReplicaSet of a Deployment: its pods and how many are available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rs {
    pub replicas: i64,
    pub available: i64,
}

/// `NewRSNewReplicas`: how many pods the new ReplicaSet may have now.
pub(crate) fn new_rs_replicas(d: Rolling, all_pods: i64, new: Rs) -> i64 {
    let max_total = d.replicas + d.max_surge;
    if all_pods >= max_total {
        return new.replicas;
    }
    let scale_up = (max_total - all_pods).min(d.replicas - new.replicas);
    new.replicas + scale_up.max(0)
}

/// `reconcileOldReplicaSets` with `cleanupUnhealthyReplicas` and
/// `scaleDownOldReplicaSetsForRollingUpdate`: the new sizes of the old
/// ReplicaSets (oldest first), unhealthy pods going first.
pub(crate) fn old_rs_replicas(d: Rolling, new: Rs, old: &[Rs]) -> Vec<i64> {
    let mut sizes: Vec<i64> = old.iter().map(|r| r.replicas).collect();
    let old_pods: i64 = sizes.iter().sum();
    if old_pods == 0 {
        return sizes;
    }
    let all_pods = old_pods + new.replicas;
    let min_available = d.replicas - d.max_unavailable;
    let new_unavailable = new.replicas - new.available;
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return sizes;
    }
    // Unhealthy pods can go without making anything less available.
    let mut cleaned = 0;
    for (size, rs) in sizes.iter_mut().zip(old) {
        if cleaned >= max_scaled_down {
            break;
        }
        let unhealthy = (*size - rs.available).max(0);
        let down = (max_scaled_down - cleaned).min(unhealthy);
        *size -= down;
        cleaned += down;
    }
    // Then available pods, while more than `min_available` stay.
    let available: i64 = old.iter().map(|r| r.available).sum::<i64>() + new.available;
    if available <= min_available {
        return sizes;
    }
    let mut to_go = available - min_available;
    for size in &mut sizes {
        if to_go == 0 {
            break;
        }
        let down = (*size).min(to_go);
        *size -= down;
        to_go -= down;
    }
    sizes
}

/// `DeploymentController.scale` for a rolling Deployment whose replicas
/// changed in mid-rollout: the change is shared among the ReplicaSets with
/// pods in proportion to their sizes, and the rounding leftover goes to the
/// largest. `sets` are oldest first, the new one last; `before` is the
/// Deployment's replicas plus surge when the sets were last sized (their
/// `max-replicas` annotation). Returns the new sizes in the same order.
pub(crate) fn proportional(d: Rolling, before: i64, sets: &[i64]) -> Vec<i64> {
    let mut sizes = sets.to_vec();
    let active: Vec<usize> = (0..sets.len()).filter(|&i| sets[i] > 0).collect();
    if active.len() == 1 {
        // One active ReplicaSet: it simply becomes the Deployment's size.
        sizes[active[0]] = d.replicas;
        return sizes;
    }
    if active.is_empty() {
        if let Some(last) = sizes.last_mut() {
            *last = d.replicas;
        }
        return sizes;
    }
    let allowed = d.replicas + d.max_surge;
    let current: i64 = sets.iter().sum();
    let to_add = allowed - current;
    if to_add == 0 {
        return sizes;
    }
    // Larger first; on ties newer first when adding, older first when removing.
    let mut order = active;
    order.sort_by(|&a, &b| {
        sets[b]
            .cmp(&sets[a])
            .then(if to_add > 0 { b.cmp(&a) } else { a.cmp(&b) })
    });
    let mut added = 0;
    for &i in &order {
        if to_add == added {
            break;
        }
        let fraction = if d.replicas == 0 {
            -sets[i]
        } else if before > 0 {
            ((sets[i] * allowed) as f64 / before as f64).round() as i64 - sets[i]
        } else {
            0
        };
        let allowed_left = to_add - added;
        let proportion = if to_add > 0 {
            fraction.min(allowed_left)
        } else {
            fraction.max(allowed_left)
        };
        sizes[i] += proportion;
        added += proportion;
    }
    if to_add != added {
        let first = order[0];
        sizes[first] = (sizes[first] + to_add - added).max(0);
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(replicas: i64, available: i64) -> Rs {
        Rs {
            replicas,
            available,
        }
    }

    #[test]
    fn fenceposts_round_surge_up_and_unavailability_down() {
        use IntOrPercent::*;
        let cases = [
            // replicas, surge, unavailable, resolved surge, resolved unavailable
            (4, Percent(25), Percent(25), 1, 1),
            (5, Percent(25), Percent(25), 2, 1),
            (3, Percent(25), Percent(25), 1, 0),
            (10, Int(3), Int(2), 3, 2),
            (4, Int(0), Percent(25), 0, 1),
            // both zero after rounding: one pod may be unavailable
            (4, Int(0), Percent(10), 0, 1),
            (1, Int(0), Int(0), 0, 1),
        ];
        for (replicas, surge, unavailable, want_surge, want_unavailable) in cases {
            let r = Rolling::resolve(replicas, surge, unavailable);
            assert_eq!(
                (r.max_surge, r.max_unavailable),
                (want_surge, want_unavailable),
                "{replicas} replicas, {surge:?}, {unavailable:?}"
            );
        }
    }

    #[test]
    fn int_or_percent_reads_numbers_and_percentages() {
        use serde_json::json;
        assert_eq!(IntOrPercent::parse(&json!(2)), Some(IntOrPercent::Int(2)));
        assert_eq!(
            IntOrPercent::parse(&json!("30%")),
            Some(IntOrPercent::Percent(30))
        );
        assert_eq!(IntOrPercent::parse(&json!("1")), Some(IntOrPercent::Int(1)));
        assert_eq!(IntOrPercent::parse(&json!("x%")), None);
    }

    #[test]
    fn the_new_replicaset_surges_up_to_max_surge() {
        let d = Rolling::resolve(4, IntOrPercent::DEFAULT, IntOrPercent::DEFAULT);
        // (all pods, new rs) -> new size
        let cases = [
            (4, rs(0, 0), 1),
            (4, rs(1, 0), 2),
            (5, rs(2, 0), 2),
            (3, rs(2, 2), 4),
            (4, rs(4, 4), 4),
        ];
        for (all, new, want) in cases {
            assert_eq!(
                new_rs_replicas(d, all, new),
                want,
                "{all} pods, new {new:?}"
            );
        }
    }

    #[test]
    fn old_replicasets_shrink_within_max_unavailable() {
        let d = Rolling::resolve(4, IntOrPercent::DEFAULT, IntOrPercent::DEFAULT);
        // 4 old ready, 1 new unready: one old pod may go (3 stay available)
        assert_eq!(old_rs_replicas(d, rs(1, 0), &[rs(4, 4)]), vec![3]);
        // 3 old, 2 new unready: nothing more may go
        assert_eq!(old_rs_replicas(d, rs(2, 0), &[rs(3, 3)]), vec![3]);
        // the 2 new became ready: two old go
        assert_eq!(old_rs_replicas(d, rs(2, 2), &[rs(3, 3)]), vec![1]);
        // unhealthy old pods go first, within 5 - 3 available - 1 new unready
        assert_eq!(old_rs_replicas(d, rs(1, 0), &[rs(4, 2)]), vec![3]);
        assert_eq!(old_rs_replicas(d, rs(1, 1), &[rs(4, 2)]), vec![2]);
        // maxSurge 0: old pods make room first
        let no_surge = Rolling::resolve(4, IntOrPercent::Int(0), IntOrPercent::DEFAULT);
        assert_eq!(old_rs_replicas(no_surge, rs(0, 0), &[rs(4, 4)]), vec![3]);
        // oldest first
        assert_eq!(
            old_rs_replicas(d, rs(2, 2), &[rs(1, 1), rs(2, 2)]),
            vec![0, 1]
        );
    }

    #[test]
    fn a_scale_in_mid_rollout_is_shared_in_proportion() {
        // 4 -> 5 with 3 old and 2 new: allowed 5 + 2 = 7, before 4 + 1 = 5;
        // round(3 * 7 / 5) = 4 and round(2 * 7 / 5) = 3: one more each.
        let d = Rolling::resolve(5, IntOrPercent::DEFAULT, IntOrPercent::DEFAULT);
        assert_eq!(proportional(d, 5, &[3, 2]), vec![4, 3]);
        // one active set simply becomes the Deployment's size
        assert_eq!(proportional(d, 5, &[0, 4]), vec![0, 5]);
        // scaling down takes from the larger first
        let down = Rolling::resolve(2, IntOrPercent::DEFAULT, IntOrPercent::DEFAULT);
        assert_eq!(proportional(down, 5, &[3, 2]), vec![2, 1]);
    }
}
