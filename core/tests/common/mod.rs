//! Small builders for reconcile-level tests: HPAs, pods and fetched metrics.
#![allow(dead_code, reason = "each test file uses a different subset")]
#![allow(clippy::unwrap_used, reason = "test fixtures")]

use hpa_core::calc::{ContainerUsage, PodCustomSample, PodResourceSample};
use hpa_core::decide::{DecisionInput, ExternalSample, Fetched, ObjectSample, ScaleInfo};
use hpa_core::quantity::{Format, Quantity};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

pub fn t0() -> Timestamp {
    Timestamp::from_second(1_767_225_600).unwrap()
}

/// An HPA `test-namespace/test-hpa` on `Deployment/web` with the given metrics.
pub struct Hpa {
    pub json: Value,
}

impl Hpa {
    pub fn test() -> Self {
        Self {
            json: json!({
                "metadata": {"name": "test-hpa", "namespace": "test-namespace"},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 1,
                    "maxReplicas": 10,
                    "metrics": []
                }
            }),
        }
    }
    pub fn min(mut self, n: i32) -> Self {
        self.json["spec"]["minReplicas"] = json!(n);
        self
    }
    pub fn max(mut self, n: i32) -> Self {
        self.json["spec"]["maxReplicas"] = json!(n);
        self
    }
    pub fn metric(mut self, m: Value) -> Self {
        self.json["spec"]["metrics"].as_array_mut().unwrap().push(m);
        self
    }
    pub fn behavior(mut self, b: Value) -> Self {
        self.json["spec"]["behavior"] = b;
        self
    }
    /// `metadata.generation`, as the API server sets it under `HPAGeneration`.
    pub fn generation(mut self, n: i64) -> Self {
        self.json["metadata"]["generation"] = json!(n);
        self
    }
    pub fn status(mut self, s: Value) -> Self {
        self.json["status"] = s;
        self
    }
    pub fn cpu(self, utilization: i32) -> Self {
        self.metric(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": utilization}}}))
    }
    pub fn pods_avg(self, metric: &str, avg: &str) -> Self {
        self.metric(json!({"type": "Pods", "pods": {"metric": {"name": metric},
            "target": {"type": "AverageValue", "averageValue": avg}}}))
    }
    pub fn external_value(self, metric: &str, value: &str) -> Self {
        self.metric(
            json!({"type": "External", "external": {"metric": {"name": metric},
            "target": {"type": "Value", "value": value}}}),
        )
    }
    pub fn object_value(self, metric: &str, value: &str) -> Self {
        self.metric(json!({"type": "Object", "object": {
            "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "front"},
            "metric": {"name": metric}, "target": {"type": "Value", "value": value}}}))
    }
    pub fn build(&self) -> HorizontalPodAutoscaler {
        serde_json::from_value(self.json.clone()).unwrap()
    }
}

/// A running, ready pod labelled `app=web`, started long ago, requesting `cpu_m` per container
/// (one container), or without request when `None`.
pub fn pod(name: &str, cpu_m: Option<i64>) -> Pod {
    let requests = match cpu_m {
        Some(m) => json!({"cpu": format!("{m}m")}),
        None => json!({}),
    };
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "test-namespace", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "resources": {"requests": requests}}]},
        "status": {
            "phase": "Running",
            "startTime": (t0() - SignedDuration::from_hours(1)).to_string(),
            "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": (t0() - SignedDuration::from_hours(1)).to_string()}]
        }
    }))
    .unwrap()
}

pub fn cpu_samples(values: &[(&str, i64)]) -> Fetched {
    Fetched::PodResource(Ok(values
        .iter()
        .map(|(p, m)| PodResourceSample {
            pod: (*p).into(),
            namespace: "test-namespace".into(),
            timestamp: t0() - SignedDuration::from_secs(30),
            window: SignedDuration::from_secs(30),
            containers: vec![ContainerUsage {
                name: "app".to_owned(),
                usage: [(
                    "cpu".to_owned(),
                    Quantity::from_milli(*m, Format::DecimalSI),
                )]
                .into(),
            }]
            .into(),
        })
        .collect()))
}

pub fn custom_samples(values: &[(&str, &str)]) -> Fetched {
    Fetched::PodsCustom(Ok(values
        .iter()
        .map(|(p, v)| PodCustomSample {
            pod: (*p).into(),
            value: Quantity::parse(v).unwrap(),
            timestamp: t0(),
            window: None,
        })
        .collect()))
}

pub fn external_values(values: &[&str]) -> Fetched {
    Fetched::External(Ok(ExternalSample {
        values: values.iter().map(|v| Quantity::parse(v).unwrap()).collect(),
        timestamp: t0(),
    }))
}

pub fn object_value(v: &str) -> Fetched {
    Fetched::Object(Ok(ObjectSample {
        value: Quantity::parse(v).unwrap(),
        timestamp: t0(),
    }))
}

pub fn input(
    hpa: &Hpa,
    spec: i32,
    status: i32,
    pods: Vec<Pod>,
    metrics: Vec<Fetched>,
) -> DecisionInput {
    DecisionInput {
        hpa: hpa.build().into(),
        scale: ScaleInfo::new(spec, status, "app=web"),
        pods: pods
            .iter()
            .map(|p| std::sync::Arc::new(hpa_core::CorePod::from(p)))
            .collect(),
        other_hpas: Vec::new(),
        metrics: metrics.into_iter().map(Some).collect(),
    }
}
