//! Everything behind the sim's one lock: the store, the sequences it hands
//! out and the workload simulation's pending pod transitions. Its own
//! module so that the API semantics ([`crate::sim`]) and the workload
//! controllers ([`crate::workloads`]) both work on it without depending on
//! each other's internals.

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};

use crate::resources::Storage;
use crate::store::Store;

/// How long new workload pods take to start and to become Ready.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PodDelays {
    /// From creation to Running (with `startTime`); zero: at once.
    pub running: SignedDuration,
    /// From Running to Ready; zero: at once.
    pub ready: SignedDuration,
    /// Pods of the workload that may run at once (a cluster without room
    /// for more); new pods beyond stay Pending, unschedulable, until one
    /// goes. `None`: no limit.
    pub max_running: Option<u32>,
}

/// The pod transitions the simulation schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodPhase {
    /// Pending -> Running (start).
    Running,
    /// Running and unready -> Ready.
    Ready,
}

/// A pending pod transition of the workload simulation.
#[derive(Debug, Clone)]
pub(crate) struct Transition {
    pub ns: String,
    pub pod: String,
    pub to: PodPhase,
}

/// Everything behind the lock.
#[derive(Debug)]
pub(crate) struct State {
    pub store: Store,
    uid_seq: u64,
    /// Last suffix handed out for `generateName` (reset with the store).
    pub name_seq: u64,
    pub ip_seq: u64,
    /// Next pod index per workload (storage, ns, name).
    pub next_index: HashMap<(Storage, String, String), u64>,
    /// Pod delays per workload (ns, name), whatever its kind.
    pub delays: HashMap<(String, String), PodDelays>,
    /// Transitions due at (nanoseconds since epoch, sequence).
    pub pending: BTreeMap<(i128, u64), Transition>,
    pub pending_seq: u64,
    /// Delays for workloads without their own.
    pub default_delays: PodDelays,
    /// Workloads with pods still to create (see [`crate::limits`]).
    pub unsettled: std::collections::BTreeSet<(Storage, String, String)>,
    /// Pods one workload may have.
    pub max_pods: usize,
    /// Name workload pods as kube-controller-manager does
    /// ([`crate::pod_names`]) instead of `NAME-k`.
    pub generated_names: bool,
    /// Workloads in mid-rollout: pod changes move their rollout on.
    pub rolling: std::collections::BTreeSet<(Storage, String, String)>,
    /// The pod templates of a Deployment's earlier revisions, by (ns,
    /// name, template hash), while it has pods of them (an old ReplicaSet's
    /// template, for a scale in mid-rollout).
    pub old_templates: HashMap<(String, String, String), serde_json::Value>,
    /// A Deployment's replicas and surge when its ReplicaSets were last
    /// sized in a rollout (their `desired-replicas` and `max-replicas`
    /// annotations upstream): a change is a scaling event.
    pub rollout_sizes: HashMap<(String, String), (i64, i64)>,
    /// When each Event expires (`--event-ttl`).
    pub event_expiry: crate::event_ttl::EventExpiry,
    /// How long a workload's controller takes to create the pods it owes
    /// (`SimConfig::pod_creation_delay`); zero: at once.
    pub creation_delay: SignedDuration,
    /// When each workload that owes pods creates them, by (storage, ns,
    /// name).
    pub creation_due: BTreeMap<(Storage, String, String), Timestamp>,
    /// The cluster has its node (`sim-node-0`) and plays its scheduler and
    /// kubelet (`SimConfig::own_node`).
    pub own_node: bool,
}

impl State {
    /// An empty cluster state over `store`.
    pub(crate) fn new(store: Store, default_delays: PodDelays, max_pods: usize) -> Self {
        Self {
            store,
            uid_seq: 0,
            name_seq: 0,
            ip_seq: 0,
            next_index: HashMap::new(),
            delays: HashMap::new(),
            pending: BTreeMap::new(),
            pending_seq: 0,
            default_delays,
            unsettled: Default::default(),
            max_pods,
            generated_names: false,
            rolling: Default::default(),
            old_templates: HashMap::new(),
            rollout_sizes: HashMap::new(),
            event_expiry: Default::default(),
            creation_delay: SignedDuration::ZERO,
            creation_due: BTreeMap::new(),
            own_node: true,
        }
    }

    pub(crate) fn next_uid(&mut self) -> String {
        self.uid_seq += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.uid_seq)
    }
}

/// Truncates to whole seconds, as `metav1.Time` serializes.
pub(crate) fn k8s_time(ts: Timestamp) -> String {
    Timestamp::from_second(ts.as_second())
        .unwrap_or(ts)
        .to_string()
}
