//! hpa-harness: prove how Kubernetes HorizontalPodAutoscalers behave.
