//! The pod statuses the fake node writes. A running pod's is the one the
//! simulated cluster's kubelet writes (`hpa_sim`'s pods module: the same
//! conditions in the same order, `startTime`, and the Ready condition's
//! transition time), so the HPA controller's readiness rules see the same
//! pods on both; a pod without room gets what kube-scheduler writes
//! (`PodScheduled=False`, reason `Unschedulable`).

use jiff::Timestamp;
use serde_json::{Value, json};

/// The node's address, as the simulated cluster's node has.
const HOST_IP: &str = "10.0.0.1";

/// What kube-scheduler says of a pod it found no room for (the simulated
/// cluster's words).
pub const UNSCHEDULABLE_MESSAGE: &str = "0/1 nodes are available: 1 Insufficient cpu.";

/// One container of a pod's spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// Its name.
    pub name: String,
    /// Its image.
    pub image: String,
}

/// The state a scenario or the kubelet gives one pod the node runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodState {
    /// `Running`, `Pending`, `Succeeded` or `Failed`.
    pub phase: String,
    /// The Ready condition: `Some(true)`, `Some(false)`, or `None` for no
    /// Ready condition at all.
    pub ready: Option<bool>,
    /// `status.startTime`; `None` leaves it unset.
    pub started: Option<Timestamp>,
    /// The Ready condition's lastTransitionTime (the start time when
    /// `None`).
    pub ready_since: Option<Timestamp>,
}

impl PodState {
    /// Running and Ready since `now`: a new pod without delays.
    pub fn running_since(now: Timestamp) -> Self {
        Self {
            phase: "Running".to_owned(),
            ready: Some(true),
            started: Some(now),
            ready_since: Some(now),
        }
    }

    /// Whether the pod takes room on the node (the simulated cluster counts
    /// running pods).
    pub fn is_running(&self) -> bool {
        self.phase == "Running"
    }

    /// The status a kubelet reports for this state of a pod with these
    /// containers, scheduled at `scheduled`, at address `ip`. A start time
    /// the state does not have is removed (`null` in a merge patch).
    pub fn status(
        &self,
        containers: &[Container],
        scheduled: Option<Timestamp>,
        ip: &str,
    ) -> Value {
        let mut conditions = Vec::new();
        if let Some(started) = self.started {
            let t = k8s_time(started);
            conditions.push(condition("PodReadyToStartContainers", "True", &t));
            conditions.push(condition("Initialized", "True", &t));
        }
        if let Some(ready) = self.ready {
            let flag = if ready { "True" } else { "False" };
            let at = self.ready_since.or(self.started).or(scheduled);
            let t = at.map(k8s_time).unwrap_or_default();
            conditions.push(condition("Ready", flag, &t));
            conditions.push(condition("ContainersReady", flag, &t));
        }
        if let Some(at) = scheduled.or(self.started) {
            conditions.push(condition("PodScheduled", "True", &k8s_time(at)));
        }
        let running = self.phase == "Running";
        let statuses: Vec<Value> = containers
            .iter()
            .map(|c| {
                let state = match (self.phase.as_str(), self.started) {
                    ("Running", Some(started)) => {
                        json!({"running": {"startedAt": k8s_time(started)}})
                    }
                    ("Running", None) => json!({"running": {}}),
                    ("Failed", _) => json!({"terminated": {"exitCode": 1, "reason": "Error"}}),
                    ("Succeeded", _) => {
                        json!({"terminated": {"exitCode": 0, "reason": "Completed"}})
                    }
                    _ => json!({"waiting": {"reason": "ContainerCreating"}}),
                };
                json!({"name": c.name, "image": c.image, "imageID": "",
                    "ready": running && self.ready == Some(true), "started": running,
                    "restartCount": 0, "state": state})
            })
            .collect();
        let mut status = json!({
            "phase": self.phase,
            "startTime": self.started.map(k8s_time),
            "conditions": conditions,
            "containerStatuses": statuses,
        });
        if self.started.is_some() || running {
            status["hostIP"] = json!(HOST_IP);
            status["hostIPs"] = json!([{"ip": HOST_IP}]);
            status["podIP"] = json!(ip);
            status["podIPs"] = json!([{"ip": ip}]);
        }
        status
    }
}

/// A pod kube-scheduler found no room for since `since`: Pending, not
/// started.
pub fn unschedulable(since: Timestamp) -> Value {
    json!({
        "phase": "Pending",
        "startTime": null,
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": UNSCHEDULABLE_MESSAGE, "lastTransitionTime": k8s_time(since)}],
    })
}

/// A pod bound to the node at `scheduled` whose containers have not
/// started yet.
pub fn not_started(scheduled: Timestamp) -> Value {
    json!({
        "phase": "Pending",
        "startTime": null,
        "conditions": [condition("PodScheduled", "True", &k8s_time(scheduled))],
    })
}

/// A pod IP in 10.244.0.0/16 from a counter, as a kubelet's CNI hands
/// them out.
pub fn pod_ip(n: u32) -> String {
    format!("10.244.{}.{}", (n / 250) % 256, n % 250 + 2)
}

fn condition(type_: &str, status: &str, at: &str) -> Value {
    json!({"type": type_, "status": status, "lastTransitionTime": at})
}

/// Kubernetes time: whole seconds, RFC 3339.
fn k8s_time(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    fn app() -> Vec<Container> {
        vec![
            Container {
                name: "server".into(),
                image: "redis:7".into(),
            },
            Container {
                name: "exporter".into(),
                image: "exporter:1".into(),
            },
        ]
    }

    fn types(status: &Value) -> Vec<(&str, &str, &str)> {
        status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["type"].as_str().unwrap(),
                    c["status"].as_str().unwrap(),
                    c["lastTransitionTime"].as_str().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn a_running_pod_has_the_sims_conditions_in_its_order_and_times() {
        let state = PodState {
            phase: "Running".into(),
            ready: Some(true),
            started: Some(at(-600)),
            ready_since: Some(at(-300)),
        };
        let status = state.status(&app(), Some(at(-601)), "10.244.0.2");
        assert_eq!(status["phase"], "Running");
        assert_eq!(status["startTime"], "2025-12-31T23:50:00Z");
        assert_eq!(
            types(&status),
            [
                ("PodReadyToStartContainers", "True", "2025-12-31T23:50:00Z"),
                ("Initialized", "True", "2025-12-31T23:50:00Z"),
                ("Ready", "True", "2025-12-31T23:55:00Z"),
                ("ContainersReady", "True", "2025-12-31T23:55:00Z"),
                ("PodScheduled", "True", "2025-12-31T23:49:59Z"),
            ]
        );
        assert_eq!(status["podIP"], "10.244.0.2");
        let names: Vec<&str> = status["containerStatuses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["server", "exporter"]);
        assert_eq!(status["containerStatuses"][1]["ready"], true);
    }

    #[test]
    fn an_unready_pod_is_ready_since_its_start_and_its_containers_are_not_ready() {
        let state = PodState {
            phase: "Running".into(),
            ready: Some(false),
            started: Some(at(0)),
            ready_since: None,
        };
        let status = state.status(&app(), Some(at(0)), "ip");
        let ready = types(&status)[2];
        assert_eq!(ready, ("Ready", "False", "2026-01-01T00:00:00Z"));
        assert_eq!(status["containerStatuses"][0]["ready"], false);
        assert_eq!(status["containerStatuses"][0]["started"], true);
    }

    #[test]
    fn a_pod_never_started_has_no_start_time_no_address_and_may_have_no_ready_condition() {
        let state = PodState {
            phase: "Pending".into(),
            ready: None,
            started: None,
            ready_since: None,
        };
        let status = state.status(&app(), Some(at(0)), "ip");
        // null removes a start time an earlier write gave.
        assert!(status["startTime"].is_null());
        assert!(status.get("podIP").is_none());
        assert_eq!(
            types(&status),
            [("PodScheduled", "True", "2026-01-01T00:00:00Z")]
        );
    }

    #[test]
    fn a_pod_without_room_is_unschedulable_as_kube_scheduler_says() {
        let status = unschedulable(at(5));
        assert_eq!(status["phase"], "Pending");
        let c = &status["conditions"][0];
        assert_eq!(
            (&c["type"], &c["status"], &c["reason"]),
            (
                &json!("PodScheduled"),
                &json!("False"),
                &json!("Unschedulable")
            )
        );
        assert_eq!(c["lastTransitionTime"], "2026-01-01T00:00:05Z");
        assert_eq!(types(&not_started(at(5)))[0].1, "True");
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
