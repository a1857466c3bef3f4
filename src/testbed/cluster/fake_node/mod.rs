//! A fake node for real clusters, in the manner of kwok.
//!
//! Scenarios give pods exact states ("started 10 minutes ago, ready since
//! 5 minutes ago") that no kubelet would honour, and load tests run thousands
//! of pods no real node could hold. So the harness registers a Node whose
//! Lease it renews, schedules scenario workloads onto it (a node selector and
//! a toleration in the pod template), binds their pods when no scheduler does,
//! writes their status as a kubelet would, and confirms their deletion. The
//! cluster's own deployment and replicaset controllers still create and
//! delete the pods.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use hpa_core::clock::Clock;
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    Binding, ContainerStatus, Node, NodeCondition, NodeSpec, NodeStatus, ObjectReference, Pod,
    PodCondition, PodStatus, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;

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

/// The state a scenario gives one pod; the fake kubelet writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodState {
    /// `Running`, `Pending`, `Succeeded` or `Failed`.
    pub phase: String,
    /// The Ready condition: `Some(true)`, `Some(false)`, or `None` for no
    /// Ready condition at all.
    pub ready: Option<bool>,
    /// `status.startTime`; `None` leaves it unset.
    pub started: Option<Timestamp>,
    /// The Ready condition's lastTransitionTime.
    pub ready_since: Option<Timestamp>,
}

impl PodState {
    /// Running and Ready since `now`: what a new pod gets.
    pub fn running_since(now: Timestamp) -> Self {
        Self {
            phase: "Running".to_string(),
            ready: Some(true),
            started: Some(now),
            ready_since: Some(now),
        }
    }

    /// The pod status a kubelet would report for this state.
    pub fn to_status(&self, pod_ip: &str) -> PodStatus {
        let ready_str = |b: bool| if b { "True" } else { "False" }.to_string();
        let transition = self.ready_since.or(self.started).map(Time);
        let mut conditions = vec![PodCondition {
            type_: "PodScheduled".to_string(),
            status: "True".to_string(),
            last_transition_time: self.started.map(Time),
            ..PodCondition::default()
        }];
        if let Some(ready) = self.ready {
            conditions.push(PodCondition {
                type_: "ContainersReady".to_string(),
                status: ready_str(ready),
                last_transition_time: transition.clone(),
                ..PodCondition::default()
            });
            conditions.push(PodCondition {
                type_: "Ready".to_string(),
                status: ready_str(ready),
                last_transition_time: transition,
                ..PodCondition::default()
            });
        }
        PodStatus {
            phase: Some(self.phase.clone()),
            start_time: self.started.map(Time),
            conditions: Some(conditions),
            pod_ip: Some(pod_ip.to_string()),
            container_statuses: Some(vec![ContainerStatus {
                name: "app".to_string(),
                ready: self.ready.unwrap_or(false),
                image: "registry.k8s.io/pause:3.10".to_string(),
                image_id: String::new(),
                restart_count: 0,
                started: Some(self.phase == "Running"),
                ..ContainerStatus::default()
            }]),
            ..PodStatus::default()
        }
    }
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

/// A pod IP in 10.244.0.0/16 derived from a counter, as a kubelet's CNI would hand out.
fn pod_ip(n: u32) -> String {
    format!("10.244.{}.{}", (n / 250) % 256, n % 250 + 2)
}

/// A registered fake node and its kubelet loops. Dropping it stops the loops;
/// [`FakeNode::remove`] also deletes the Node and its Lease.
pub struct FakeNode {
    client: kube::Client,
    name: String,
    states: Arc<Mutex<HashMap<(String, String), PodState>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl FakeNode {
    /// Registers the node (or takes over an existing one of that name) and
    /// starts renewing its Lease and acting as kubelet for managed pods.
    pub async fn start(
        client: kube::Client,
        name: &str,
        clock: Arc<dyn Clock>,
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

        let states = Arc::new(Mutex::new(HashMap::new()));
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
        let kubelet_task = {
            let client = client.clone();
            let name = name.to_string();
            let states = states.clone();
            tokio::spawn(async move { kubelet_loop(client, name, states, clock).await })
        };
        Ok(Self {
            client,
            name: name.to_string(),
            states,
            tasks: vec![lease_task, kubelet_task],
        })
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Gives a pod the state a scenario asks for, and writes it now.
    pub async fn set_pod_state(
        &self,
        namespace: &str,
        pod: &str,
        state: PodState,
    ) -> Result<(), kube::Error> {
        if let Ok(mut states) = self.states.lock() {
            states.insert((namespace.to_string(), pod.to_string()), state.clone());
        }
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        write_status(&pods, pod, &state, &pod_ip(0)).await
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

async fn write_status(
    pods: &Api<Pod>,
    pod: &str,
    state: &PodState,
    ip: &str,
) -> Result<(), kube::Error> {
    let patch = serde_json::json!({ "status": state.to_status(ip) });
    pods.patch_status(pod, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
}

/// Watches managed pods: binds the unbound ones that want this node, writes
/// the status of those bound to it, and confirms their deletion.
async fn kubelet_loop(
    client: kube::Client,
    node: String,
    states: Arc<Mutex<HashMap<(String, String), PodState>>>,
    clock: Arc<dyn Clock>,
) {
    let all: Api<Pod> = Api::all(client.clone());
    let config = watcher::Config::default().labels(&format!("{MANAGED_POD_LABEL}=true"));
    let mut ips = 0_u32;
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut stream = watcher(all, config)
        .default_backoff()
        .applied_objects()
        .boxed();
    loop {
        let pod = match stream.try_next().await {
            Ok(Some(pod)) => pod,
            Ok(None) => return,
            Err(err) => {
                tracing::warn!(%err, "fake kubelet watch failed; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let (Some(ns), Some(name)) = (pod.metadata.namespace.clone(), pod.metadata.name.clone())
        else {
            continue;
        };
        let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
        let spec = pod.spec.clone().unwrap_or_default();
        let bound_here = spec.node_name.as_deref() == Some(node.as_str());
        let wants_here = spec
            .node_selector
            .as_ref()
            .is_some_and(|s| s.get(NODE_LABEL).map(String::as_str) == Some("true"));
        if pod.metadata.deletion_timestamp.is_some() {
            if bound_here || wants_here {
                let dp = DeleteParams {
                    grace_period_seconds: Some(0),
                    ..DeleteParams::default()
                };
                if let Err(err) = pods.delete(&name, &dp).await {
                    tracing::debug!(pod = %name, %err, "cannot confirm pod deletion");
                }
                seen.remove(&(ns.clone(), name.clone()));
                if let Ok(mut states) = states.lock() {
                    states.remove(&(ns, name));
                }
            }
            continue;
        }
        if spec.node_name.is_none() && wants_here {
            let binding = Binding {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(ns.clone()),
                    ..ObjectMeta::default()
                },
                target: ObjectReference {
                    api_version: Some("v1".to_string()),
                    kind: Some("Node".to_string()),
                    name: Some(node.clone()),
                    ..ObjectReference::default()
                },
            };
            let bound: Result<serde_json::Value, _> = pods
                .create_subresource("binding", &name, &PostParams::default(), &binding)
                .await;
            if let Err(err) = bound {
                tracing::debug!(pod = %name, %err, "binding failed (a scheduler may have won)");
            }
            continue;
        }
        if !bound_here {
            continue;
        }
        let key = (ns.clone(), name.clone());
        let wanted = states
            .lock()
            .ok()
            .and_then(|s| s.get(&key).cloned())
            .unwrap_or_else(|| {
                // A pod seen for the first time starts now unless a scenario
                // already said otherwise.
                let state = PodState::running_since(clock.now());
                if let Ok(mut s) = states.lock() {
                    s.insert(key.clone(), state.clone());
                }
                state
            });
        let needs_write = pod.status.as_ref().and_then(|s| s.phase.as_deref())
            != Some(wanted.phase.as_str())
            || !seen.contains(&key);
        if needs_write {
            ips += 1;
            if let Err(err) = write_status(&pods, &name, &wanted, &pod_ip(ips)).await {
                tracing::debug!(pod = %name, %err, "cannot write pod status");
            }
            seen.insert(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    #[test]
    fn a_ready_pod_reports_running_with_ready_conditions_at_its_transition() {
        let state = PodState {
            phase: "Running".into(),
            ready: Some(true),
            started: Some(at(-600)),
            ready_since: Some(at(-300)),
        };
        let status = state.to_status("10.244.0.2");
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert_eq!(status.start_time, Some(Time(at(-600))));
        let conditions = status.conditions.unwrap();
        let ready = conditions.iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(ready.status, "True");
        assert_eq!(ready.last_transition_time, Some(Time(at(-300))));
    }

    #[test]
    fn a_pod_without_ready_condition_has_none_and_no_start_time_when_never_started() {
        let state = PodState {
            phase: "Pending".into(),
            ready: None,
            started: None,
            ready_since: None,
        };
        let status = state.to_status("10.244.0.3");
        assert!(status.start_time.is_none());
        assert!(
            !status
                .conditions
                .unwrap()
                .iter()
                .any(|c| c.type_ == "Ready")
        );
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

    #[test]
    fn pod_ips_are_distinct_and_valid() {
        let ips: std::collections::HashSet<String> = (0..1000).map(pod_ip).collect();
        assert_eq!(ips.len(), 1000);
        assert!(
            ips.iter()
                .all(|ip| ip.split('.').all(|o| o.parse::<u8>().is_ok()))
        );
    }
}
