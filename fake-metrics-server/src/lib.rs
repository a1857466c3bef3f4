//! A scripted server for the three Kubernetes metrics APIs.
