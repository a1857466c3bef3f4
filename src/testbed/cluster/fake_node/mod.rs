//! A fake node for real clusters, in the manner of kwok.
//!
//! Scenarios give pods exact states ("started 10 minutes ago, ready since
//! 5 minutes ago", "ready 30 s after it starts", "pending until 3 run") that
//! no kubelet would honour, and load tests run thousands of pods no real
//! node could hold. So the harness registers a Node whose Lease it renews
//! and sends the pods of its workloads there (a node selector, a toleration
//! and a scheduler name of the node's own in the pod template, see
//! [`crate::testbed::workload::place_on_fake_node`]), so that no other
//! scheduler takes them. The node is then their scheduler and kubelet: it
//! binds them when their workload has room, writes their status as the
//! simulated cluster's kubelet does, moves them through their delays on the
//! wall clock, and confirms their deletion (its `kubelet` module decides, this module
//! makes the calls). The cluster's own deployment, replicaset and
//! statefulset controllers still create and delete the pods.

mod kubelet;
mod status;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use hpa_core::clock::Clock;
use hpa_sim::PodDelays;
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    Binding, Node, NodeCondition, NodeSpec, NodeStatus, ObjectReference, Pod, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use kubelet::{Action, Kubelet, PodKey, PodView};
pub use status::PodState;

/// The label on the fake node, and the node selector scenario pods carry.
pub const NODE_LABEL: &str = "hpa-harness.io/fake-node";
/// The label that marks pods the harness manages.
pub const MANAGED_POD_LABEL: &str = "hpa-harness.io/managed";
/// The taint that keeps other pods off the fake node.
pub const TAINT_KEY: &str = "hpa-harness.io/fake-node";
/// The default node name.
pub const DEFAULT_NODE_NAME: &str = "hpa-harness-fake-node";
/// How often the node's Lease is renewed (the kubelet default is 10 s).
pub const LEASE_RENEW: Duration = Duration::from_secs(10);
/// The scheduler name of the pods placed on the fake node: no other
/// scheduler binds them, so the node decides when they have room.
pub const SCHEDULER_NAME: &str = "hpa-harness-fake-node";
/// The field manager of every write.
const MANAGER: &str = "hpa-harness-fake-node";

/// Errors of the fake node.
#[derive(Debug, thiserror::Error)]
pub enum FakeNodeError {
    /// Registering the node or its Lease failed.
    #[error("cannot register fake node {node}")]
    Register {
        /// The node.
        node: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
    /// The node's kubelet loop has stopped.
    #[error("the fake node {node} no longer runs")]
    Stopped {
        /// The node.
        node: String,
    },
    /// A pod's status could not be written.
    #[error("cannot write the status of pod {namespace}/{pod}")]
    WriteStatus {
        /// The pod's namespace.
        namespace: String,
        /// The pod.
        pod: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
    /// Removing the node failed.
    #[error("cannot remove fake node {node}")]
    Remove {
        /// The node.
        node: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

/// The node selector scenario pod templates carry to land on the fake node.
pub fn node_selector() -> BTreeMap<String, String> {
    BTreeMap::from([(NODE_LABEL.to_string(), "true".to_string())])
}

/// The toleration scenario pod templates carry for the fake node's taint.
pub fn toleration() -> Toleration {
    Toleration {
        key: Some(TAINT_KEY.to_string()),
        operator: Some("Exists".to_string()),
        effect: Some("NoSchedule".to_string()),
        ..Toleration::default()
    }
}

/// The Node object: Ready, roomy, tainted so only scenario pods land on it.
pub fn node_object(name: &str, now: Timestamp) -> Node {
    let quantity = |s: &str| Quantity(s.to_string());
    let resources = BTreeMap::from([
        ("cpu".to_string(), quantity("1k")),
        ("memory".to_string(), quantity("4Ti")),
        ("pods".to_string(), quantity("110k")),
    ]);
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(BTreeMap::from([
                (NODE_LABEL.to_string(), "true".to_string()),
                ("kubernetes.io/hostname".to_string(), name.to_string()),
                ("type".to_string(), "kwok".to_string()),
            ])),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            taints: Some(vec![Taint {
                key: TAINT_KEY.to_string(),
                value: Some("true".to_string()),
                effect: "NoSchedule".to_string(),
                ..Taint::default()
            }]),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: Some(resources.clone()),
            allocatable: Some(resources),
            conditions: Some(vec![NodeCondition {
                type_: "Ready".to_string(),
                status: "True".to_string(),
                reason: Some("KubeletReady".to_string()),
                message: Some("hpa-harness fake kubelet is posting ready status".to_string()),
                last_heartbeat_time: Some(Time(now)),
                last_transition_time: Some(Time(now)),
            }]),
            ..NodeStatus::default()
        }),
    }
}

/// What the harness asks of the node's kubelet loop.
enum Command {
    /// Give a pod a state (a scenario's), and say whether it was written.
    SetState {
        namespace: String,
        name: String,
        state: PodState,
        reply: oneshot::Sender<Result<(), kube::Error>>,
    },
    /// Delay or hold a workload's new pods.
    SetDelays {
        namespace: String,
        workload: String,
        delays: PodDelays,
        reply: oneshot::Sender<()>,
    },
    /// Forget the delays of a namespace.
    ForgetNamespace { namespace: String },
}

/// A registered fake node and its kubelet loops. Dropping it stops the loops;
/// [`FakeNode::remove`] also deletes the Node and its Lease.
pub struct FakeNode {
    client: kube::Client,
    name: String,
    commands: mpsc::UnboundedSender<Command>,
    tasks: Vec<JoinHandle<()>>,
}

impl FakeNode {
    /// Registers the node (or takes over an existing one of that name) and
    /// starts renewing its Lease and acting as scheduler and kubelet for
    /// the pods of `scope`, on `clock`.
    pub async fn start(
        client: kube::Client,
        name: &str,
        clock: Arc<dyn Clock>,
        scope: PodScope,
    ) -> Result<Self, FakeNodeError> {
        let register = |source| FakeNodeError::Register {
            node: name.to_string(),
            source,
        };
        let nodes: Api<Node> = Api::all(client.clone());
        let node = node_object(name, clock.now());
        let pp = PatchParams::apply(MANAGER).force();
        nodes
            .patch(name, &pp, &Patch::Apply(&node))
            .await
            .map_err(register)?;
        nodes
            .patch_status(name, &pp, &Patch::Apply(&node))
            .await
            .map_err(register)?;
        renew_lease(&client, name, clock.now())
            .await
            .map_err(register)?;

        let lease_task = {
            let client = client.clone();
            let name = name.to_string();
            let clock = clock.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(LEASE_RENEW);
                loop {
                    tick.tick().await;
                    if let Err(err) = renew_lease(&client, &name, clock.now()).await {
                        tracing::warn!(node = %name, %err, "cannot renew the fake node's lease");
                    }
                }
            })
        };
        let (commands, receiver) = mpsc::unbounded_channel();
        let shell = Shell {
            client: client.clone(),
            kubelet: Kubelet::new(name),
            clock,
            scope,
        };
        let kubelet_task = tokio::spawn(shell.run(receiver));
        Ok(Self {
            client,
            name: name.to_string(),
            commands,
            tasks: vec![lease_task, kubelet_task],
        })
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn stopped(&self) -> FakeNodeError {
        FakeNodeError::Stopped {
            node: self.name.clone(),
        }
    }

    /// Gives a pod the state a scenario asks for, and writes it now (binding
    /// the pod first if the node has not yet); the node keeps it.
    pub async fn set_pod_state(
        &self,
        namespace: &str,
        pod: &str,
        state: PodState,
    ) -> Result<(), FakeNodeError> {
        let (reply, written) = oneshot::channel();
        self.commands
            .send(Command::SetState {
                namespace: namespace.to_owned(),
                name: pod.to_owned(),
                state,
                reply,
            })
            .map_err(|_| self.stopped())?;
        written
            .await
            .map_err(|_| self.stopped())?
            .map_err(|source| FakeNodeError::WriteStatus {
                namespace: namespace.to_owned(),
                pod: pod.to_owned(),
                source,
            })
    }

    /// How the pods workload `namespace/workload` creates from now on start
    /// and become Ready, and how many of its pods may run at once (the
    /// simulated cluster's [`PodDelays`]). Returns once the node has them.
    pub async fn set_pod_delays(
        &self,
        namespace: &str,
        workload: &str,
        delays: PodDelays,
    ) -> Result<(), FakeNodeError> {
        let (reply, done) = oneshot::channel();
        self.commands
            .send(Command::SetDelays {
                namespace: namespace.to_owned(),
                workload: workload.to_owned(),
                delays,
                reply,
            })
            .map_err(|_| self.stopped())?;
        done.await.map_err(|_| self.stopped())
    }

    /// Forgets the pod delays given in `namespace` (its scenario ended; a
    /// later scenario may use the namespace again).
    pub fn forget_namespace(&self, namespace: &str) {
        let _ = self.commands.send(Command::ForgetNamespace {
            namespace: namespace.to_owned(),
        });
    }

    /// Stops the loops and deletes the Node and its Lease.
    pub async fn remove(mut self) -> Result<(), FakeNodeError> {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        let remove = |source| FakeNodeError::Remove {
            node: self.name.clone(),
            source,
        };
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), "kube-node-lease");
        match leases.delete(&self.name, &DeleteParams::default()).await {
            Ok(_) | Err(kube::Error::Api(_)) => {}
            Err(err) => return Err(remove(err)),
        }
        let nodes: Api<Node> = Api::all(self.client.clone());
        nodes
            .delete(&self.name, &DeleteParams::default())
            .await
            .map(|_| ())
            .map_err(remove)
    }
}

impl std::fmt::Debug for FakeNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeNode")
            .field("name", &self.name)
            .finish()
    }
}

impl Drop for FakeNode {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn renew_lease(client: &kube::Client, node: &str, now: Timestamp) -> Result<(), kube::Error> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some(node.to_string()),
            namespace: Some("kube-node-lease".to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(node.to_string()),
            lease_duration_seconds: Some(40),
            renew_time: Some(MicroTime(now)),
            ..LeaseSpec::default()
        }),
    };
    leases
        .patch(
            node,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&lease),
        )
        .await
        .map(|_| ())
}

/// Which pods the node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PodScope {
    /// The harness's own (labelled [`MANAGED_POD_LABEL`]) that ask for the
    /// node: the cluster's scheduler and kubelets run the rest.
    #[default]
    Managed,
    /// Those too, and every pod of the default scheduler: on a control
    /// plane with no scheduler and no kubelet of its own the node is both,
    /// so that pods made with kubectl or a chart run as well.
    Cluster,
    /// Only the pods of the default scheduler, not the harness's: the node
    /// of `hpa-harness control-plane`, beside which a scenario run brings
    /// its own node for its own pods.
    Unmanaged,
}

impl PodScope {
    /// Whether a pod asks for the fake node: its scheduler is the node's,
    /// or its node selector picks the node; on a cluster the node runs
    /// alone, any pod of the default scheduler.
    fn wants(self, pod: &Pod) -> bool {
        let Some(spec) = pod.spec.as_ref() else {
            return false;
        };
        let default_scheduler = matches!(
            spec.scheduler_name.as_deref(),
            None | Some("") | Some("default-scheduler")
        );
        let asks_for_fake_node = spec.scheduler_name.as_deref() == Some(SCHEDULER_NAME)
            || spec
                .node_selector
                .as_ref()
                .is_some_and(|s| s.get(NODE_LABEL).map(String::as_str) == Some("true"));
        match self {
            Self::Managed => asks_for_fake_node,
            Self::Cluster => asks_for_fake_node || default_scheduler,
            Self::Unmanaged => !asks_for_fake_node && default_scheduler,
        }
    }

    /// The node's name: the harness's, or, for [`PodScope::Unmanaged`],
    /// one of its own beside it.
    pub fn node_name(self) -> &'static str {
        match self {
            Self::Managed | Self::Cluster => DEFAULT_NODE_NAME,
            Self::Unmanaged => "hpa-harness-cluster-node",
        }
    }

    /// The watch of the pods this scope may run.
    fn watch_config(self) -> watcher::Config {
        match self {
            Self::Managed => {
                watcher::Config::default().labels(&format!("{MANAGED_POD_LABEL}=true"))
            }
            Self::Cluster | Self::Unmanaged => watcher::Config::default(),
        }
    }
}

/// The longest the loop sleeps with no transition due.
const IDLE: Duration = Duration::from_secs(3600);

/// The kubelet loop: the node's decisions ([`Kubelet`]) and the API calls
/// they take, one at a time, so that its writes land in the order it made
/// them and a scenario's state is never overwritten by an older one.
struct Shell {
    client: kube::Client,
    kubelet: Kubelet,
    clock: Arc<dyn Clock>,
    scope: PodScope,
}

impl Shell {
    /// Watches managed pods and the harness's commands, and makes the due
    /// transitions, until the node goes.
    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        let all: Api<Pod> = Api::all(self.client.clone());
        let mut events = watcher(all, self.scope.watch_config())
            .default_backoff()
            .boxed();
        // The pods a relist brought, until it is done.
        let mut relisted: Option<HashSet<PodKey>> = None;
        loop {
            let wait = self.kubelet.next_due().map_or(IDLE, |at| {
                let left = at.duration_since(self.clock.now());
                if left.is_positive() {
                    left.unsigned_abs().min(IDLE)
                } else {
                    Duration::ZERO
                }
            });
            tokio::select! {
                command = commands.recv() => match command {
                    Some(command) => self.command(command).await,
                    None => return,
                },
                event = events.try_next() => match event {
                    Ok(Some(event)) => self.event(event, &mut relisted).await,
                    Ok(None) => return,
                    Err(err) => {
                        tracing::warn!(%err, "fake kubelet watch failed; retrying");
                    }
                },
                () = tokio::time::sleep(wait) => {
                    let actions = self.kubelet.due(self.clock.now());
                    self.act(actions).await;
                }
            }
        }
    }

    async fn command(&mut self, command: Command) {
        match command {
            Command::SetState {
                namespace,
                name,
                state,
                reply,
            } => {
                let result = self.set_state(&namespace, &name, state).await;
                let _ = reply.send(result);
            }
            Command::SetDelays {
                namespace,
                workload,
                delays,
                reply,
            } => {
                let now = self.clock.now();
                let actions = self.kubelet.set_delays(&namespace, &workload, delays, now);
                self.act(actions).await;
                let _ = reply.send(());
            }
            Command::ForgetNamespace { namespace } => self.kubelet.forget_namespace(&namespace),
        }
    }

    /// A scenario's state for a pod: the node reads a pod it has not seen
    /// yet first (so that it knows its workload and containers), then
    /// writes the state.
    async fn set_state(
        &mut self,
        namespace: &str,
        name: &str,
        state: PodState,
    ) -> Result<(), kube::Error> {
        if !self.kubelet.knows(namespace, name) {
            let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
            let pod = pods.get(name).await?;
            if let Some(view) = PodView::of(&pod, |p| self.scope.wants(p)) {
                let actions = self.kubelet.observe(view, self.clock.now());
                self.act(actions).await;
            }
        }
        let actions = self
            .kubelet
            .set_state(namespace, name, state, self.clock.now());
        self.execute(actions).await
    }

    async fn event(&mut self, event: watcher::Event<Pod>, relisted: &mut Option<HashSet<PodKey>>) {
        let now = self.clock.now();
        let actions = match event {
            watcher::Event::Init => {
                *relisted = Some(HashSet::new());
                return;
            }
            watcher::Event::InitApply(pod) | watcher::Event::Apply(pod) => {
                let Some(view) = PodView::of(&pod, |p| self.scope.wants(p)) else {
                    return;
                };
                if let Some(seen) = relisted.as_mut() {
                    seen.insert((view.namespace.clone(), view.name.clone()));
                }
                self.kubelet.observe(view, now)
            }
            watcher::Event::Delete(pod) => {
                let (Some(ns), Some(name)) = (pod.metadata.namespace, pod.metadata.name) else {
                    return;
                };
                self.kubelet.gone(&ns, &name, now)
            }
            watcher::Event::InitDone => {
                // Pods that went while the watch was down.
                let seen = relisted.take().unwrap_or_default();
                let mut actions = Vec::new();
                for (ns, name) in self.kubelet.known() {
                    if !seen.contains(&(ns.clone(), name.clone())) {
                        actions.extend(self.kubelet.gone(&ns, &name, now));
                    }
                }
                actions
            }
        };
        self.act(actions).await;
    }

    /// Makes the calls in order; failures are logged (the watch brings the
    /// pod again).
    async fn act(&mut self, actions: Vec<Action>) {
        if let Err(err) = self.execute(actions).await {
            tracing::debug!(%err, "a fake kubelet write failed");
        }
    }

    /// Makes the calls in order; the first failure of a binding or a status
    /// write is returned (and logged, as the others): the watch brings the
    /// pod again.
    async fn execute(&mut self, actions: Vec<Action>) -> Result<(), kube::Error> {
        let mut first_error = None;
        // Pods whose binding failed in this batch: no status of theirs.
        let mut unbound: HashSet<PodKey> = HashSet::new();
        for action in actions {
            match action {
                Action::Bind { namespace, name } => {
                    let pods: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
                    let bound: Result<serde_json::Value, _> = pods
                        .create_subresource(
                            "binding",
                            &name,
                            &PostParams::default(),
                            &binding(&namespace, &name, self.kubelet.node()),
                        )
                        .await;
                    if let Err(err) = bound {
                        // Another scheduler may have won, or the pod went:
                        // it is not this node's to run. The watch brings it
                        // again if it is still waiting for one.
                        tracing::debug!(pod = %name, %err, "binding failed");
                        let now = self.clock.now();
                        let freed = self.kubelet.gone(&namespace, &name, now);
                        unbound.insert((namespace, name));
                        first_error.get_or_insert(err);
                        Box::pin(self.act(freed)).await;
                    }
                }
                Action::WriteStatus {
                    namespace, name, ..
                } if unbound.contains(&(namespace.clone(), name.clone())) => {}
                Action::WriteStatus {
                    namespace,
                    name,
                    status,
                } => {
                    let pods: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
                    let patch = serde_json::json!({ "status": status });
                    match pods
                        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                    {
                        Ok(pod) => {
                            self.kubelet
                                .written(&namespace, &name, pod.metadata.resource_version)
                        }
                        Err(err) => {
                            tracing::debug!(pod = %name, %err, "cannot write pod status");
                            first_error.get_or_insert(err);
                        }
                    }
                }
                Action::ConfirmDeletion { namespace, name } => {
                    let pods: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
                    let dp = DeleteParams {
                        grace_period_seconds: Some(0),
                        ..DeleteParams::default()
                    };
                    if let Err(err) = pods.delete(&name, &dp).await {
                        tracing::debug!(pod = %name, %err, "cannot confirm pod deletion");
                    }
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// The Binding of a pod to node `node`.
fn binding(namespace: &str, pod: &str, node: &str) -> Binding {
    Binding {
        metadata: ObjectMeta {
            name: Some(pod.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some("Node".to_owned()),
            name: Some(node.to_owned()),
            ..ObjectReference::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    #[test]
    fn the_node_is_ready_tainted_and_labelled_for_scenario_pods() {
        let node = node_object("n1", at(0));
        let labels = node.metadata.labels.unwrap();
        assert_eq!(labels.get(NODE_LABEL).map(String::as_str), Some("true"));
        let taints = node.spec.unwrap().taints.unwrap();
        assert_eq!(taints[0].key, TAINT_KEY);
        let t = toleration();
        assert_eq!(t.key.as_deref(), Some(TAINT_KEY));
        assert_eq!(t.effect.as_deref(), Some(taints[0].effect.as_str()));
        assert!(node_selector().contains_key(NODE_LABEL));
        let ready = &node.status.unwrap().conditions.unwrap()[0];
        assert_eq!(
            (ready.type_.as_str(), ready.status.as_str()),
            ("Ready", "True")
        );
    }
}
