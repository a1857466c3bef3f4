//! The HPA controller: kube-rs shell around `hpa-core` (being written).
