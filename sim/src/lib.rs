//! A simulated Kubernetes API server with a virtual clock.
