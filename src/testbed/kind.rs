//! Which cluster a run uses and whose HPA controller acts in it: one
//! vocabulary for scenarios (`hpa-harness test`) and load runs
//! (`hpa-harness load`), each of which offers the backends it can use.

use clap::ValueEnum;
use clap::builder::{PossibleValuesParser, TypedValueParser};

/// Where the cluster and the fake metrics server run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The simulated cluster and fake metrics server in this process
    /// (scenarios: one per scenario, on a virtual clock).
    #[default]
    Sim,
    /// `hpa-harness sim` in a child process, driven through its admin API:
    /// the load process's memory and CPU are then the controller's own;
    /// scenarios run on it one at a time, on a virtual clock.
    SimProcess,
    /// The cluster of a kubeconfig (our sim or a real one) with the fake
    /// metrics server at its control URL.
    Kubeconfig,
    /// A kind cluster created for the run.
    Kind,
    /// A k3d cluster created for the run.
    K3d,
    /// A k3s container created for the run.
    K3s,
    /// A genuine control plane (etcd, kube-apiserver,
    /// kube-controller-manager) started from its binaries for the run
    /// (`--control-plane-bin DIR` or `$KUBEBUILDER_ASSETS`), with the
    /// harness's fake node as its only node. No Docker.
    ControlPlane,
}

impl BackendKind {
    /// The backends scenarios run on.
    pub const SCENARIOS: &'static [Self] = &[
        Self::Sim,
        Self::SimProcess,
        Self::Kubeconfig,
        Self::Kind,
        Self::K3d,
        Self::K3s,
        Self::ControlPlane,
    ];

    /// The backends a load run uses.
    pub const LOAD: &'static [Self] = &[
        Self::Sim,
        Self::SimProcess,
        Self::Kubeconfig,
        Self::ControlPlane,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sim => "sim",
            Self::SimProcess => "sim-process",
            Self::Kubeconfig => "kubeconfig",
            Self::Kind => "kind",
            Self::K3d => "k3d",
            Self::K3s => "k3s",
            Self::ControlPlane => "control-plane",
        }
    }

    /// A command-line parser taking only the backends of `allowed` (with
    /// their help), so that each command lists what it can use.
    pub fn parser(allowed: &'static [Self]) -> impl TypedValueParser<Value = Self> {
        PossibleValuesParser::new(allowed.iter().filter_map(ValueEnum::to_possible_value))
            .try_map(|name| Self::from_str(&name, false))
    }
}

/// Whose HPA controller acts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ControllerKind {
    /// Ours, run by the harness (scenarios: synced when a step says so).
    #[default]
    Ours,
    /// kube-controller-manager's own, which syncs on its own schedule; the
    /// harness only waits and looks.
    Upstream,
}

impl ControllerKind {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::Upstream => "upstream",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_takes_only_its_backends() {
        let cmd = clap::Command::new("t");
        let parse = |allowed: &'static [BackendKind], name: &str| {
            BackendKind::parser(allowed)
                .parse_ref(&cmd, None, std::ffi::OsStr::new(name))
                .ok()
        };
        assert_eq!(parse(BackendKind::SCENARIOS, "k3d"), Some(BackendKind::K3d));
        assert_eq!(
            parse(BackendKind::SCENARIOS, "sim-process"),
            Some(BackendKind::SimProcess)
        );
        assert_eq!(
            parse(BackendKind::LOAD, "sim-process"),
            Some(BackendKind::SimProcess)
        );
        assert_eq!(parse(BackendKind::LOAD, "kind"), None);
        assert_eq!(
            parse(BackendKind::LOAD, "control-plane"),
            Some(BackendKind::ControlPlane)
        );
    }
}
