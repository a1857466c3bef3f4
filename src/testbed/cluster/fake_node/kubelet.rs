//! What the fake node decides, without IO: the scheduler and kubelet of the
//! pods placed on it, in the manner of kwok's pod stages.
//!
//! Each pod it sees for the first time is placed at once when its workload
//! has room, else waits, unbound and unschedulable, oldest first, until a
//! pod of its workload stops running. A placed pod is bound to the node,
//! starts (Running, with `startTime`) after its workload's start delay and
//! becomes Ready after its ready delay, on the clock the shell passes in.
//! The delays and the room are the simulated cluster's
//! ([`hpa_sim::PodDelays`]): per workload, given by the scenario, and
//! applied to the pods created from then on. A scenario may also give a
//! pod a state of its own, which the node then keeps.
//!
//! Every decision is a list of [`Action`]s (API calls) the shell makes in
//! order.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use hpa_sim::PodDelays;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::status::{Container, PodState, not_started, pod_ip, unschedulable};

/// A pod's namespace and name.
pub type PodKey = (String, String);

/// The label kube-controller-manager gives a Deployment's pods: its
/// ReplicaSet is named after the Deployment and this hash.
const TEMPLATE_HASH_LABEL: &str = "pod-template-hash";

/// What the node reads of one pod.
#[derive(Debug, Clone, PartialEq)]
pub struct PodView {
    pub namespace: String,
    pub name: String,
    /// The node it is bound to.
    pub node_name: Option<String>,
    /// It asks for this node: its scheduler is the node's, or its node
    /// selector picks the node.
    pub wants_this_node: bool,
    /// It has a deletion timestamp.
    pub deleting: bool,
    pub phase: Option<String>,
    /// The workload whose delays it gets ([`workload_of`]).
    pub workload: Option<String>,
    pub created: Option<Timestamp>,
    pub containers: Vec<Container>,
    pub resource_version: Option<String>,
}

impl PodView {
    /// The view of `pod`; `wants` says whether it asks for this node.
    pub fn of(pod: &Pod, wants: impl FnOnce(&Pod) -> bool) -> Option<Self> {
        let meta = &pod.metadata;
        let spec = pod.spec.as_ref();
        Some(Self {
            namespace: meta.namespace.clone()?,
            name: meta.name.clone()?,
            node_name: spec
                .and_then(|s| s.node_name.clone())
                .filter(|n| !n.is_empty()),
            wants_this_node: wants(pod),
            deleting: meta.deletion_timestamp.is_some(),
            phase: pod.status.as_ref().and_then(|s| s.phase.clone()),
            workload: workload_of(pod),
            created: meta.creation_timestamp.as_ref().map(|t| t.0),
            containers: spec
                .map(|s| {
                    s.containers
                        .iter()
                        .map(|c| Container {
                            name: c.name.clone(),
                            image: c.image.clone().unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            resource_version: meta.resource_version.clone(),
        })
    }
}

/// The workload a pod belongs to, for its delays: its controller owner,
/// except that a ReplicaSet named `NAME-HASH`, where HASH is the pod's
/// `pod-template-hash`, is Deployment NAME's.
pub fn workload_of(pod: &Pod) -> Option<String> {
    let owner = pod
        .metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))?;
    if owner.kind == "ReplicaSet"
        && let Some(hash) = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(TEMPLATE_HASH_LABEL))
        && let Some(deployment) = owner.name.strip_suffix(&format!("-{hash}"))
    {
        return Some(deployment.to_owned());
    }
    Some(owner.name.clone())
}

/// An API call a decision needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Bind the pod to the node (`pods/binding`).
    Bind { namespace: String, name: String },
    /// Merge `status` into the pod's (`pods/status`).
    WriteStatus {
        namespace: String,
        name: String,
        status: Value,
    },
    /// Delete the terminating pod for good (grace period 0), as a kubelet
    /// does once its containers stopped.
    ConfirmDeletion { namespace: String, name: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No room yet.
    Waiting,
    /// Placed; its containers start at a due time.
    Starting,
    /// Started, or given a state by the scenario.
    Started,
}

#[derive(Debug, Clone)]
struct Record {
    workload: Option<String>,
    created: Timestamp,
    containers: Vec<Container>,
    bound: bool,
    stage: Stage,
    /// Set once started.
    state: Option<PodState>,
    /// When it was placed on the node.
    scheduled: Option<Timestamp>,
    /// Since when it waits for room.
    waiting_since: Timestamp,
    ip: String,
    /// The delays it was created under.
    delays: PodDelays,
    /// The resourceVersion of the node's last status write.
    written: Option<String>,
    deleting: bool,
}

impl Record {
    fn status(&self) -> Value {
        match (self.stage, &self.state) {
            (Stage::Started, Some(state)) => {
                state.status(&self.containers, self.scheduled, &self.ip)
            }
            (Stage::Waiting, _) if !self.bound => unschedulable(self.waiting_since),
            _ => not_started(self.scheduled.unwrap_or(self.created)),
        }
    }

    /// The phase the node gives it.
    fn phase(&self) -> &str {
        match (self.stage, &self.state) {
            (Stage::Started, Some(state)) => &state.phase,
            _ => "Pending",
        }
    }

    /// Whether it takes some of its workload's room: it runs or will.
    fn takes_room(&self) -> bool {
        !self.deleting
            && match self.stage {
                Stage::Waiting => false,
                Stage::Starting => true,
                Stage::Started => self.state.as_ref().is_some_and(PodState::is_running),
            }
    }
}

/// A workload's delays and when the scenario gave them.
#[derive(Debug, Clone, Copy)]
struct Setting {
    delays: PodDelays,
    since: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transition {
    Start,
    Ready,
}

/// The node's scheduler and kubelet state.
#[derive(Debug)]
pub struct Kubelet {
    node: String,
    settings: HashMap<(String, String), Setting>,
    pods: HashMap<PodKey, Record>,
    /// The pods of each workload, by (namespace, workload): the room and
    /// the queue of one workload are counted without a look at the others.
    members: HashMap<(String, String), BTreeSet<String>>,
    due: BTreeMap<(Timestamp, u64), (PodKey, Transition)>,
    seq: u64,
    ips: u32,
}

impl Kubelet {
    /// The kubelet of node `node`, with no pods.
    pub fn new(node: &str) -> Self {
        Self {
            node: node.to_owned(),
            settings: HashMap::new(),
            pods: HashMap::new(),
            members: HashMap::new(),
            due: BTreeMap::new(),
            seq: 0,
            ips: 0,
        }
    }

    /// A pod seen for the first time, waiting for its place, with the
    /// delays of its workload and an address of its own.
    fn new_record(
        &mut self,
        namespace: &str,
        workload: Option<String>,
        created: Timestamp,
        containers: Vec<Container>,
        bound: bool,
        now: Timestamp,
    ) -> Record {
        self.ips += 1;
        Record {
            delays: self.delays_for(namespace, workload.as_deref(), created),
            workload,
            created,
            containers,
            bound,
            stage: Stage::Waiting,
            state: None,
            scheduled: None,
            waiting_since: now,
            ip: pod_ip(self.ips),
            written: None,
            deleting: false,
        }
    }

    /// The node's name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Whether it has seen the pod.
    pub fn knows(&self, namespace: &str, name: &str) -> bool {
        self.pods
            .contains_key(&(namespace.to_owned(), name.to_owned()))
    }

    /// The pods it has seen.
    pub fn known(&self) -> HashSet<PodKey> {
        self.pods.keys().cloned().collect()
    }

    /// The delays of workload `namespace/workload`'s pods created from
    /// `now` on; more room starts waiting pods now.
    pub fn set_delays(
        &mut self,
        namespace: &str,
        workload: &str,
        delays: PodDelays,
        now: Timestamp,
    ) -> Vec<Action> {
        self.settings.insert(
            (namespace.to_owned(), workload.to_owned()),
            Setting { delays, since: now },
        );
        self.admit(namespace, Some(workload), now)
    }

    /// Forgets the delays given in a namespace (its scenario ended).
    pub fn forget_namespace(&mut self, namespace: &str) {
        self.settings.retain(|(ns, _), _| ns != namespace);
    }

    /// The delays of a pod of `workload` created at `created`: the
    /// workload's if given before it was created (to the second, as
    /// `creationTimestamp` says), else none.
    fn delays_for(&self, namespace: &str, workload: Option<&str>, created: Timestamp) -> PodDelays {
        workload
            .and_then(|w| self.settings.get(&(namespace.to_owned(), w.to_owned())))
            .filter(|s| created.as_second() >= s.since.as_second())
            .map(|s| s.delays)
            .unwrap_or_default()
    }

    /// Counts a pod among its workload's.
    fn enrol(&mut self, key: &PodKey, workload: Option<&str>) {
        if let Some(w) = workload {
            self.members
                .entry((key.0.clone(), w.to_owned()))
                .or_default()
                .insert(key.1.clone());
        }
    }

    /// The pods of workload `namespace/workload` the node knows, by name.
    fn members_of<'a>(
        &'a self,
        namespace: &'a str,
        workload: &str,
    ) -> impl Iterator<Item = (&'a String, &'a Record)> + 'a {
        self.members
            .get(&(namespace.to_owned(), workload.to_owned()))
            .into_iter()
            .flatten()
            .filter_map(move |name| {
                let record = self.pods.get(&(namespace.to_owned(), name.clone()))?;
                Some((name, record))
            })
    }

    /// Whether workload `namespace/workload` has room for one more running
    /// pod.
    fn has_room(&self, namespace: &str, workload: Option<&str>) -> bool {
        let Some(w) = workload else {
            return true;
        };
        let Some(limit) = self
            .settings
            .get(&(namespace.to_owned(), w.to_owned()))
            .and_then(|s| s.delays.max_running)
        else {
            return true;
        };
        let taken = self
            .members_of(namespace, w)
            .filter(|(_, r)| r.takes_room())
            .count();
        taken < usize::try_from(limit).unwrap_or(usize::MAX)
    }

    /// A pod the watch brings (added, changed, or listed anew).
    pub fn observe(&mut self, pod: PodView, now: Timestamp) -> Vec<Action> {
        let key = (pod.namespace.clone(), pod.name.clone());
        let bound_here = pod.node_name.as_deref() == Some(self.node.as_str());
        if pod.deleting {
            return self.terminating(&key, bound_here, now);
        }
        if !bound_here && (pod.node_name.is_some() || !pod.wants_this_node) {
            // Another node's.
            return Vec::new();
        }
        if let Some(record) = self.pods.get_mut(&key) {
            record.bound |= bound_here;
            if record.containers.is_empty() {
                record.containers = pod.containers;
            }
            if record.workload.is_none() && pod.workload.is_some() {
                record.workload.clone_from(&pod.workload);
                self.enrol(&key, pod.workload.as_deref());
            }
            let Some(record) = self.pods.get_mut(&key) else {
                return Vec::new();
            };
            if is_stale(pod.resource_version.as_deref(), record.written.as_deref())
                || pod.phase.as_deref() == Some(record.phase())
            {
                return Vec::new();
            }
            // Someone else changed its phase: the node's state stands.
            return vec![write(&key, record.status())];
        }
        let created = pod.created.unwrap_or(now);
        let record = self.new_record(
            &pod.namespace,
            pod.workload,
            created,
            pod.containers,
            bound_here,
            now,
        );
        let room = self.has_room(&key.0, record.workload.as_deref());
        self.enrol(&key, record.workload.clone().as_deref());
        self.pods.insert(key.clone(), record);
        if room {
            self.place(&key, now)
        } else {
            self.pods
                .get(&key)
                .map(|r| vec![write(&key, r.status())])
                .unwrap_or_default()
        }
    }

    /// A terminating pod: the node confirms its deletion once, and its
    /// room goes to a waiting pod.
    fn terminating(&mut self, key: &PodKey, bound_here: bool, now: Timestamp) -> Vec<Action> {
        let confirm = || Action::ConfirmDeletion {
            namespace: key.0.clone(),
            name: key.1.clone(),
        };
        let Some(record) = self.pods.get_mut(key) else {
            return if bound_here {
                vec![confirm()]
            } else {
                Vec::new()
            };
        };
        if record.deleting {
            return Vec::new();
        }
        record.deleting = true;
        let mut actions = Vec::new();
        if record.bound || bound_here {
            actions.push(confirm());
        }
        let workload = record.workload.clone();
        actions.extend(self.admit(&key.0, workload.as_deref(), now));
        actions
    }

    /// A pod is gone: its room goes to a waiting pod.
    pub fn gone(&mut self, namespace: &str, name: &str, now: Timestamp) -> Vec<Action> {
        let Some(record) = self.pods.remove(&(namespace.to_owned(), name.to_owned())) else {
            return Vec::new();
        };
        if let Some(w) = &record.workload {
            let group = (namespace.to_owned(), w.clone());
            if let Some(names) = self.members.get_mut(&group) {
                names.remove(name);
                if names.is_empty() {
                    self.members.remove(&group);
                }
            }
        }
        self.admit(namespace, record.workload.as_deref(), now)
    }

    /// Gives a pod the state a scenario asks for, from now on; the node
    /// binds it if it has not yet.
    pub fn set_state(
        &mut self,
        namespace: &str,
        name: &str,
        state: PodState,
        now: Timestamp,
    ) -> Vec<Action> {
        let key = (namespace.to_owned(), name.to_owned());
        if !self.pods.contains_key(&key) {
            // Not seen yet (the shell reads a pod before this): a pod of no
            // known workload, created now.
            let record = self.new_record(namespace, None, now, Vec::new(), false, now);
            self.pods.insert(key.clone(), record);
        }
        let Some(record) = self.pods.get_mut(&key) else {
            return Vec::new();
        };
        let mut actions = Vec::new();
        if !record.bound {
            record.bound = true;
            actions.push(bind(&key));
        }
        record.scheduled.get_or_insert(now);
        record.stage = Stage::Started;
        record.state = Some(state);
        actions.push(write(&key, record.status()));
        let workload = record.workload.clone();
        // A pod that stopped running makes room.
        actions.extend(self.admit(namespace, workload.as_deref(), now));
        actions
    }

    /// Notes the resourceVersion the node's status write of a pod got:
    /// watch events up to it bring nothing new.
    pub fn written(&mut self, namespace: &str, name: &str, resource_version: Option<String>) {
        if let Some(record) = self.pods.get_mut(&(namespace.to_owned(), name.to_owned())) {
            record.written = resource_version;
        }
    }

    /// When the next transition is due.
    pub fn next_due(&self) -> Option<Timestamp> {
        self.due.keys().next().map(|(at, _)| *at)
    }

    /// The transitions due by `now`, in due order, each at its due time.
    pub fn due(&mut self, now: Timestamp) -> Vec<Action> {
        let mut actions = Vec::new();
        while let Some(entry) = self.due.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((at, _), (key, transition)) = entry.remove_entry();
            let Some(record) = self.pods.get_mut(&key) else {
                continue;
            };
            if record.deleting {
                continue;
            }
            match transition {
                Transition::Start if record.stage == Stage::Starting => {
                    actions.extend(self.start(&key, at));
                }
                Transition::Ready => {
                    if let Some(state) = record.state.as_mut()
                        && record.stage == Stage::Started
                        && state.is_running()
                        && state.ready != Some(true)
                    {
                        state.ready = Some(true);
                        state.ready_since = Some(at);
                        actions.push(write(&key, record.status()));
                    }
                }
                Transition::Start => {}
            }
        }
        actions
    }

    /// Places waiting pods of a workload while it has room, oldest first.
    fn admit(&mut self, namespace: &str, workload: Option<&str>, now: Timestamp) -> Vec<Action> {
        let Some(w) = workload else {
            return Vec::new();
        };
        let mut waiting: Vec<(Timestamp, String)> = self
            .members_of(namespace, w)
            .filter(|(_, r)| r.stage == Stage::Waiting && !r.deleting)
            .map(|(name, r)| (r.created, name.clone()))
            .collect();
        waiting.sort();
        let mut actions = Vec::new();
        for (_, name) in waiting {
            if !self.has_room(namespace, Some(w)) {
                break;
            }
            actions.extend(self.place(&(namespace.to_owned(), name), now));
        }
        actions
    }

    /// Binds a pod to the node now; it starts now or after its start delay.
    fn place(&mut self, key: &PodKey, now: Timestamp) -> Vec<Action> {
        let Some(record) = self.pods.get_mut(key) else {
            return Vec::new();
        };
        let mut actions = Vec::new();
        if !record.bound {
            record.bound = true;
            actions.push(bind(key));
        }
        record.scheduled = Some(now);
        if record.delays.running.is_positive() {
            record.stage = Stage::Starting;
            actions.push(write(key, record.status()));
            let at = now + record.delays.running;
            self.schedule(at, key, Transition::Start);
        } else {
            actions.extend(self.start(key, now));
        }
        actions
    }

    /// Starts a placed pod at `at`: Running, Ready now or after its ready
    /// delay.
    fn start(&mut self, key: &PodKey, at: Timestamp) -> Vec<Action> {
        let Some(record) = self.pods.get_mut(key) else {
            return Vec::new();
        };
        let later = record.delays.ready.is_positive();
        record.stage = Stage::Started;
        record.state = Some(PodState {
            ready: Some(!later),
            ..PodState::running_since(at)
        });
        let action = write(key, record.status());
        if later {
            let ready_at = at + record.delays.ready;
            self.schedule(ready_at, key, Transition::Ready);
        }
        vec![action]
    }

    fn schedule(&mut self, at: Timestamp, key: &PodKey, transition: Transition) {
        self.seq += 1;
        self.due.insert((at, self.seq), (key.clone(), transition));
    }
}

fn bind(key: &PodKey) -> Action {
    Action::Bind {
        namespace: key.0.clone(),
        name: key.1.clone(),
    }
}

fn write(key: &PodKey, status: Value) -> Action {
    Action::WriteStatus {
        namespace: key.0.clone(),
        name: key.1.clone(),
        status,
    }
}

/// Whether a watched version is no newer than the node's last write (its
/// own write's echo, or an older one). resourceVersions are opaque, but
/// numbers in practice; others only compare equal.
fn is_stale(seen: Option<&str>, written: Option<&str>) -> bool {
    let (Some(seen), Some(written)) = (seen, written) else {
        return false;
    };
    match (seen.parse::<u64>(), written.parse::<u64>()) {
        (Ok(s), Ok(w)) => s <= w,
        _ => seen == written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::SignedDuration;
    use serde_json::json;

    const NODE: &str = "fake";

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    fn pod(name: &str, created: i64) -> PodView {
        PodView {
            namespace: "ns".into(),
            name: name.into(),
            node_name: None,
            wants_this_node: true,
            deleting: false,
            phase: Some("Pending".into()),
            workload: Some("web".into()),
            created: Some(at(created)),
            containers: vec![Container {
                name: "app".into(),
                image: "pause".into(),
            }],
            resource_version: None,
        }
    }

    fn delays(ready: i64, max_running: Option<u32>) -> PodDelays {
        PodDelays {
            running: SignedDuration::ZERO,
            ready: SignedDuration::from_secs(ready),
            max_running,
        }
    }

    /// Each action as `bind NAME`, `write NAME PHASE ready=READY`, `delete NAME`.
    fn brief(actions: &[Action]) -> Vec<String> {
        actions
            .iter()
            .map(|a| match a {
                Action::Bind { name, .. } => format!("bind {name}"),
                Action::ConfirmDeletion { name, .. } => format!("delete {name}"),
                Action::WriteStatus { name, status, .. } => {
                    let ready = status["conditions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|c| c["type"] == "Ready" || c["type"] == "PodScheduled")
                        .map(|c| {
                            format!(
                                "{}={}{}",
                                c["type"].as_str().unwrap(),
                                c["status"].as_str().unwrap(),
                                c.get("reason")
                                    .and_then(Value::as_str)
                                    .map(|r| format!("({r})"))
                                    .unwrap_or_default()
                            )
                        })
                        .unwrap_or_default();
                    format!("write {name} {} {ready}", status["phase"].as_str().unwrap())
                }
            })
            .collect()
    }

    fn status_of<'a>(actions: &'a [Action], pod: &str) -> &'a Value {
        actions
            .iter()
            .rev()
            .find_map(|a| match a {
                Action::WriteStatus { name, status, .. } if name == pod => Some(status),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn a_new_pod_is_bound_and_runs_ready_at_once() {
        let mut k = Kubelet::new(NODE);
        let actions = k.observe(pod("web-a", 0), at(1));
        assert_eq!(
            brief(&actions),
            ["bind web-a", "write web-a Running Ready=True"]
        );
        let status = status_of(&actions, "web-a");
        assert_eq!(status["startTime"], "2026-01-01T00:00:01Z");
        assert!(k.next_due().is_none());
    }

    #[test]
    fn new_pods_become_ready_after_their_workloads_delay_and_older_pods_keep_none() {
        let mut k = Kubelet::new(NODE);
        k.set_delays("ns", "web", delays(30, None), at(10));
        // Made before the delay was given (an earlier second), seen late.
        let old = k.observe(pod("web-old", 9), at(10));
        assert_eq!(brief(&old)[1], "write web-old Running Ready=True");
        let new = k.observe(pod("web-new", 10), at(11));
        assert_eq!(
            brief(&new),
            ["bind web-new", "write web-new Running Ready=False"]
        );
        // Another workload's pods are not delayed.
        let other = k.observe(
            PodView {
                workload: Some("api".into()),
                ..pod("api-a", 10)
            },
            at(11),
        );
        assert_eq!(brief(&other)[1], "write api-a Running Ready=True");
        assert_eq!(k.next_due(), Some(at(41)));
        assert!(k.due(at(40)).is_empty());
        let ready = k.due(at(43));
        assert_eq!(brief(&ready), ["write web-new Running Ready=True"]);
        let status = status_of(&ready, "web-new");
        // Ready at its due time, started when it was placed.
        let cond = status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap();
        assert_eq!(cond["lastTransitionTime"], "2026-01-01T00:00:41Z");
        assert_eq!(status["startTime"], "2026-01-01T00:00:11Z");
        assert!(k.next_due().is_none());
    }

    #[test]
    fn without_room_new_pods_stay_pending_unschedulable_and_unbound() {
        let mut k = Kubelet::new(NODE);
        k.observe(pod("web-a", 0), at(0));
        k.set_delays("ns", "web", delays(0, Some(0)), at(5));
        let actions = k.observe(pod("web-b", 6), at(6));
        assert_eq!(
            brief(&actions),
            ["write web-b Pending PodScheduled=False(Unschedulable)"]
        );
        let status = status_of(&actions, "web-b");
        assert!(status["startTime"].is_null());
        // Time alone does not start it.
        assert!(k.due(at(600)).is_empty());
    }

    #[test]
    fn pending_pods_start_oldest_first_as_room_comes() {
        let mut k = Kubelet::new(NODE);
        k.observe(pod("web-a", 0), at(0));
        k.observe(pod("web-b", 0), at(0));
        k.set_delays("ns", "web", delays(0, Some(3)), at(5));
        let c = k.observe(pod("web-c", 6), at(6));
        assert_eq!(brief(&c), ["bind web-c", "write web-c Running Ready=True"]);
        // Seen in another order than made: the older waits in front.
        let e = k.observe(pod("web-e", 8), at(8));
        let d = k.observe(pod("web-d", 7), at(8));
        assert_eq!(
            brief(&e),
            ["write web-e Pending PodScheduled=False(Unschedulable)"]
        );
        assert_eq!(
            brief(&d),
            ["write web-d Pending PodScheduled=False(Unschedulable)"]
        );
        // A running pod fails (a scenario's state): room for one.
        let failed = PodState {
            phase: "Failed".into(),
            ready: Some(false),
            ..PodState::running_since(at(0))
        };
        let actions = k.set_state("ns", "web-a", failed, at(20));
        assert_eq!(
            brief(&actions),
            [
                "write web-a Failed Ready=False",
                "bind web-d",
                "write web-d Running Ready=True"
            ]
        );
        // A running pod goes: room for the next.
        let actions = k.gone("ns", "web-b", at(30));
        assert_eq!(
            brief(&actions),
            ["bind web-e", "write web-e Running Ready=True"]
        );
        assert_eq!(
            status_of(&actions, "web-e")["startTime"],
            "2026-01-01T00:00:30Z"
        );
        // More room given later starts waiting pods at once.
        k.set_delays("ns", "web", delays(0, Some(3)), at(31));
        let f = k.observe(pod("web-f", 32), at(32));
        assert_eq!(
            brief(&f)[0],
            "write web-f Pending PodScheduled=False(Unschedulable)"
        );
        let actions = k.set_delays("ns", "web", delays(0, None), at(40));
        assert_eq!(
            brief(&actions),
            ["bind web-f", "write web-f Running Ready=True"]
        );
    }

    #[test]
    fn a_terminating_pod_is_confirmed_once_and_frees_its_room() {
        let mut k = Kubelet::new(NODE);
        k.set_delays("ns", "web", delays(0, Some(1)), at(0));
        k.observe(pod("web-a", 0), at(0));
        k.observe(pod("web-b", 1), at(1));
        let terminating = PodView {
            deleting: true,
            node_name: Some(NODE.into()),
            ..pod("web-a", 0)
        };
        let actions = k.observe(terminating.clone(), at(5));
        assert_eq!(
            brief(&actions),
            [
                "delete web-a",
                "bind web-b",
                "write web-b Running Ready=True"
            ]
        );
        assert!(k.observe(terminating, at(6)).is_empty());
    }

    #[test]
    fn a_start_delay_keeps_a_placed_pod_pending_until_it_starts() {
        let mut k = Kubelet::new(NODE);
        k.set_delays(
            "ns",
            "web",
            PodDelays {
                running: SignedDuration::from_secs(5),
                ..delays(10, None)
            },
            at(0),
        );
        let placed = k.observe(pod("web-a", 0), at(0));
        assert_eq!(
            brief(&placed),
            ["bind web-a", "write web-a Pending PodScheduled=True"]
        );
        assert_eq!(brief(&k.due(at(5))), ["write web-a Running Ready=False"]);
        assert_eq!(brief(&k.due(at(15))), ["write web-a Running Ready=True"]);
    }

    #[test]
    fn the_nodes_state_stands_against_newer_changes_and_ignores_stale_events() {
        let mut k = Kubelet::new(NODE);
        k.observe(pod("web-a", 0), at(0));
        k.written("ns", "web-a", Some("12".into()));
        let bound = |rv: &str, phase: &str| PodView {
            node_name: Some(NODE.into()),
            phase: Some(phase.into()),
            resource_version: Some(rv.into()),
            ..pod("web-a", 0)
        };
        // The binding's echo, older than the node's write.
        assert!(k.observe(bound("11", "Pending"), at(1)).is_empty());
        // Its own write's echo.
        assert!(k.observe(bound("12", "Running"), at(1)).is_empty());
        // Someone else set the phase since: written back.
        assert_eq!(
            brief(&k.observe(bound("14", "Succeeded"), at(2))),
            ["write web-a Running Ready=True"]
        );
    }

    #[test]
    fn pods_of_other_nodes_and_schedulers_are_left_alone() {
        let mut k = Kubelet::new(NODE);
        let elsewhere = PodView {
            node_name: Some("node-1".into()),
            ..pod("web-a", 0)
        };
        assert!(k.observe(elsewhere, at(0)).is_empty());
        let not_ours = PodView {
            wants_this_node: false,
            ..pod("web-b", 0)
        };
        assert!(k.observe(not_ours, at(0)).is_empty());
        // Bound here by another scheduler: run, not bound again.
        let here = PodView {
            node_name: Some(NODE.into()),
            wants_this_node: false,
            ..pod("web-c", 0)
        };
        assert_eq!(
            brief(&k.observe(here, at(0))),
            ["write web-c Running Ready=True"]
        );
    }

    #[test]
    fn a_scenario_state_for_a_pod_not_yet_bound_binds_it_and_is_kept() {
        let mut k = Kubelet::new(NODE);
        let state = PodState {
            ready: Some(false),
            ..PodState::running_since(at(-600))
        };
        let actions = k.set_state("ns", "web-a", state, at(0));
        assert_eq!(
            brief(&actions),
            ["bind web-a", "write web-a Running Ready=False"]
        );
        assert_eq!(
            status_of(&actions, "web-a")["startTime"],
            "2025-12-31T23:50:00Z"
        );
        // The watch brings it bound: nothing to change.
        let seen = PodView {
            node_name: Some(NODE.into()),
            phase: Some("Running".into()),
            ..pod("web-a", 0)
        };
        assert!(k.observe(seen, at(1)).is_empty());
    }

    #[test]
    fn a_pod_gone_leaves_nothing_behind() {
        let mut k = Kubelet::new(NODE);
        k.set_delays("ns", "web", delays(30, None), at(0));
        k.observe(pod("web-a", 0), at(0));
        k.observe(pod("web-b", 0), at(0));
        k.gone("ns", "web-a", at(1));
        k.gone("ns", "web-b", at(1));
        k.forget_namespace("ns");
        assert!(k.pods.is_empty() && k.members.is_empty() && k.settings.is_empty());
        // Their due transitions find no pod and go.
        assert!(k.due(at(60)).is_empty());
        assert!(k.next_due().is_none());
    }

    #[test]
    fn a_namespace_forgotten_gives_its_next_pods_no_delays() {
        let mut k = Kubelet::new(NODE);
        k.set_delays("ns", "web", delays(0, Some(0)), at(0));
        k.forget_namespace("ns");
        assert_eq!(brief(&k.observe(pod("web-a", 1), at(1)))[0], "bind web-a");
    }

    fn owned(kind: &str, owner: &str, hash: Option<&str>) -> Pod {
        let mut labels = json!({});
        if let Some(h) = hash {
            labels["pod-template-hash"] = json!(h);
        }
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "ns",
            "labels": labels,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": owner,
                "uid": "u", "controller": true}]}}))
        .unwrap()
    }

    #[test]
    fn a_pods_workload_is_its_deployment_through_the_replicaset_name() {
        let cases = [
            (
                owned("ReplicaSet", "web-7d4b9c", Some("7d4b9c")),
                Some("web"),
            ),
            (
                owned("ReplicaSet", "my-app-v2-5f6d", Some("5f6d")),
                Some("my-app-v2"),
            ),
            // A ReplicaSet of its own (no hash of its name).
            (owned("ReplicaSet", "rs", None), Some("rs")),
            (owned("ReplicaSet", "rs-x", Some("other")), Some("rs-x")),
            (owned("StatefulSet", "db", None), Some("db")),
            // The simulated cluster's pods are the Deployment's own.
            (owned("Deployment", "web", Some("7d4b9c")), Some("web")),
        ];
        for (pod, want) in cases {
            assert_eq!(workload_of(&pod).as_deref(), want, "{:?}", pod.metadata);
        }
        let naked: Pod =
            serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "ns"}})).unwrap();
        assert_eq!(workload_of(&naked), None);
    }
}
