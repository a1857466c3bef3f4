//! autoscaling/v2 HorizontalPodAutoscaler messages as Kubernetes 1.37's
//! `generated.proto` numbers them. k8s-pb 0.9's HorizontalPodAutoscalerCondition
//! stops at `message` (5); 1.37 adds `observedGeneration` as field 6
//! (int64), which the simulated cluster stores and protobuf clients
//! (`kubectl describe`, client-go's typed clients, kube-controller-manager)
//! read and write. The condition is redefined here, and with it the
//! messages that hold it; everything below them is k8s-pb's.

use k8s_pb::api::autoscaling::v2::{HorizontalPodAutoscalerSpec, MetricStatus};
use k8s_pb::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta, Time};

use super::json::messages;

/// `HorizontalPodAutoscalerCondition`, with `observedGeneration` (6).
#[derive(Clone, PartialEq, prost::Message)]
pub struct HorizontalPodAutoscalerCondition {
    #[prost(string, optional, tag = "1")]
    pub r#type: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub status: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub last_transition_time: Option<Time>,
    #[prost(string, optional, tag = "4")]
    pub reason: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub message: Option<String>,
    #[prost(int64, optional, tag = "6")]
    pub observed_generation: Option<i64>,
}

/// `HorizontalPodAutoscalerStatus`, holding the conditions above.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HorizontalPodAutoscalerStatus {
    #[prost(int64, optional, tag = "1")]
    pub observed_generation: Option<i64>,
    #[prost(message, optional, tag = "2")]
    pub last_scale_time: Option<Time>,
    #[prost(int32, optional, tag = "3")]
    pub current_replicas: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub desired_replicas: Option<i32>,
    #[prost(message, repeated, tag = "5")]
    pub current_metrics: Vec<MetricStatus>,
    #[prost(message, repeated, tag = "6")]
    pub conditions: Vec<HorizontalPodAutoscalerCondition>,
}

/// `HorizontalPodAutoscaler`, holding the status above.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HorizontalPodAutoscaler {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<HorizontalPodAutoscalerSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<HorizontalPodAutoscalerStatus>,
}

/// `HorizontalPodAutoscalerList` of the HPAs above.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HorizontalPodAutoscalerList {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ListMeta>,
    #[prost(message, repeated, tag = "2")]
    pub items: Vec<HorizontalPodAutoscaler>,
}

messages! {
    HorizontalPodAutoscalerCondition { r#type => "type", status => "status", last_transition_time => "lastTransitionTime", reason => "reason", message => "message", observed_generation => "observedGeneration" }
    HorizontalPodAutoscalerStatus { observed_generation => "observedGeneration", last_scale_time => "lastScaleTime", current_replicas => "currentReplicas", desired_replicas => "desiredReplicas", current_metrics => "currentMetrics", conditions => "conditions" }
    HorizontalPodAutoscaler { metadata => "metadata", spec => "spec", status => "status" }
    HorizontalPodAutoscalerList { metadata => "metadata", items => "items" }
}
