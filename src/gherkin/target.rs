//! Where the scenarios of a run go ([`Target`], from the testbed).
//!
//! cucumber builds each scenario's world with no arguments, so the runner
//! scopes the target over the run ([`scope`]): cucumber runs scenarios as
//! futures inside the run's own task, where a task-local is visible.

pub use crate::testbed::ControllerKind;
pub use crate::testbed::target::{RemoteTarget, Target};

tokio::task_local! {
    static TARGET: Target;
}

/// Runs `run` with its scenarios going to `target`.
pub async fn scope<F: std::future::Future>(target: Target, run: F) -> F::Output {
    TARGET.scope(target, run).await
}

/// Where the scenarios of the current run go (embedded outside a scope).
pub fn current() -> Target {
    TARGET.try_with(Clone::clone).unwrap_or_default()
}
