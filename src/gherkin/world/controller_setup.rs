//! What the scenario's controller starts with, in one room: its
//! configuration, which requests ours makes, the flags steps gave (a
//! controller process's command line), the history to seed into it and
//! whether it reads every scale through `/scale`.
//!
//! Settable until the controller starts (at the first step that needs it),
//! so that "the HPA controller runs with:" may come after workloads are
//! declared; the cluster ([`ScenarioCluster`]) says whether it runs and
//! whose controller acts.

use super::{ScenarioCluster, StepError, StepResult};
use crate::gherkin::target::ControllerKind;
use crate::testbed::controller::{Requests, Seed};
use hpa_controller::Extensions;
use hpa_controller::config::ControllerConfig;

/// The scenario controller's configuration and what it is started with.
#[derive(Debug, Default)]
pub struct ControllerSetup {
    /// The controller's flags (settable until it starts).
    pub config: ControllerConfig,
    /// Which configuration of `hpa-controller` ours runs with.
    pub requests: Requests,
    /// The controller flags steps gave (`kubernetes-version` included), in
    /// order: what a controller process is started with.
    flags: Vec<(String, String)>,
    /// Stabilization history and scale events to seed into the controller.
    seeds: Vec<Seed>,
    /// A step bent what the target's `/scale` subresource answers: the
    /// controller reads scales through it, whatever `requests` says (see
    /// [`ControllerSetup::bend_scale`]).
    scale_bent: bool,
}

impl ControllerSetup {
    /// The release a run's pass gives the scenario (before its first step).
    pub fn set_release(&mut self, version: hpa_core::KubernetesVersion) {
        self.config.decision.feature_gates = hpa_core::FeatureGates::of(version);
    }

    /// Sets one controller flag (`kubernetes-version` and `feature-gates`
    /// included), validated first; refused once the controller runs or
    /// where the cluster's own controller acts. The cluster then gets the
    /// gates it implies.
    pub async fn set_flag(
        &mut self,
        flag: &str,
        value: &str,
        cluster: &ScenarioCluster,
    ) -> StepResult {
        if cluster.driver_if_started().is_some() {
            return Err(StepError::State(format!(
                "flag {flag}: the HPA controller already runs; give its flags before it first syncs"
            )));
        }
        self.config
            .set_flag(flag, value)
            .map_err(|source| StepError::Flag {
                flag: flag.to_owned(),
                source,
            })?;
        if cluster.controller() == ControllerKind::Upstream {
            let shown = cluster.upstream_flags().await;
            return Err(StepError::unsupported(format!(
                "flag {flag}: the cluster's own HPA controller acts in this run, with kube-controller-manager's flags; {shown}"
            )));
        }
        self.flags.push((flag.to_owned(), value.to_owned()));
        cluster
            .apply_gates(&self.config.decision.feature_gates)
            .await
    }

    /// Before a step bends what a scale target's `/scale` answers (its
    /// replicas, its selector, a failing GET): at its defaults
    /// `hpa-controller` reads a Deployment's scale from its Deployment
    /// watch, which a bent subresource does not reach, so the scenario's
    /// controller reads every scale through `/scale`, as upstream's does and
    /// as `--upstream-requests` does. The one documented difference between
    /// the two configurations (docs/steps.md).
    pub fn bend_scale(&mut self, cluster: &ScenarioCluster) -> StepResult {
        if cluster.driver_if_started().is_some()
            && !self.scale_bent
            && self.requests == Requests::Shipped
        {
            return Err(StepError::State(
                "the scale subresource can only be bent before the HPA controller first syncs: at its defaults it reads Deployments' scales from its watch, and then it reads them through /scale".to_owned(),
            ));
        }
        self.scale_bent = true;
        Ok(())
    }

    /// Seeds the controller's history now if it runs, else when it starts.
    pub async fn seed(&mut self, seed: Seed, cluster: &ScenarioCluster) -> StepResult {
        if cluster.controller() == ControllerKind::Upstream {
            return Err(StepError::unsupported(
                "seeding history needs our controller; the cluster's own HPA controller acts in this run".to_owned(),
            ));
        }
        match cluster.driver_if_started() {
            Some(driver) => driver
                .seed(&seed)
                .await
                .map_err(StepError::controller("seeding the controller's history")),
            None => {
                self.seeds.push(seed);
                Ok(())
            }
        }
    }

    /// The seeds given before the controller started, handed over once.
    pub(super) fn take_seeds(&mut self) -> Vec<Seed> {
        std::mem::take(&mut self.seeds)
    }

    /// The extensions of our controller in this process: those of its
    /// configuration, but scales read through `/scale` once one is bent.
    pub(super) fn extensions(&self) -> Extensions {
        let mut extensions = self.requests.extensions(&self.config);
        if self.scale_bent {
            extensions.scale_from_cache = false;
        }
        extensions
    }

    /// The command line of a controller process: the release, then the
    /// flags the steps gave (the last value of each), upstream's requests
    /// when asked or when the scenario bends `/scale`, and on a real
    /// cluster its namespace (`scope`), where its leader Lease lives too, so
    /// that scenarios side by side never share one.
    pub(super) fn process_flags(&self, scope: Option<&str>) -> Vec<String> {
        let mut last: Vec<(String, String)> = Vec::new();
        for (flag, value) in &self.flags {
            last.retain(|(f, _)| f != flag);
            last.push((flag.clone(), value.clone()));
        }
        let mut args = Vec::new();
        if !last.iter().any(|(f, _)| f == "kubernetes-version") {
            let release = self.config.decision.feature_gates.version();
            args.push(format!("--kubernetes-version={release}"));
        }
        args.extend(last.iter().map(|(f, v)| format!("--{f}={v}")));
        if self.requests == Requests::Upstream || self.scale_bent {
            args.push("--upstream-requests".to_owned());
        }
        if let Some(namespace) = scope {
            args.push(format!("--namespace={namespace}"));
            args.push(format!("--leader-elect-resource-namespace={namespace}"));
        }
        args
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

    use super::*;
    use crate::gherkin::target::Target;

    fn flags(release: &str, requests: Requests, given: &[(&str, &str)]) -> ControllerSetup {
        let mut setup = ControllerSetup {
            requests,
            ..ControllerSetup::default()
        };
        setup.set_release(release.parse().unwrap());
        setup.flags = given
            .iter()
            .map(|(f, v)| ((*f).to_owned(), (*v).to_owned()))
            .collect();
        setup
    }

    #[test]
    fn a_controller_process_gets_the_release_then_the_last_value_of_each_flag() {
        let setup = flags(
            "1.37",
            Requests::Shipped,
            &[
                ("horizontal-pod-autoscaler-tolerance", "0.2"),
                ("horizontal-pod-autoscaler-sync-period", "30s"),
                ("horizontal-pod-autoscaler-tolerance", "0.05"),
            ],
        );
        assert_eq!(
            setup.process_flags(None),
            [
                "--kubernetes-version=1.37",
                "--horizontal-pod-autoscaler-sync-period=30s",
                "--horizontal-pod-autoscaler-tolerance=0.05",
            ]
        );
    }

    #[test]
    fn on_a_real_cluster_a_controller_process_keeps_to_the_scenario_s_namespace() {
        let setup = flags("1.36", Requests::Shipped, &[]);
        assert_eq!(
            setup.process_flags(Some("hpa-scenario-1")),
            [
                "--kubernetes-version=1.36",
                "--namespace=hpa-scenario-1",
                "--leader-elect-resource-namespace=hpa-scenario-1",
            ]
        );
    }

    #[test]
    fn a_release_a_step_gave_replaces_the_run_s() {
        let setup = flags("1.37", Requests::Shipped, &[("kubernetes-version", "1.35")]);
        assert_eq!(setup.process_flags(None), ["--kubernetes-version=1.35"]);
    }

    #[test]
    fn a_bent_scale_or_upstream_requests_start_the_process_with_upstream_requests() {
        let upstream = flags("1.37", Requests::Upstream, &[]).process_flags(None);
        assert_eq!(
            upstream.last().map(String::as_str),
            Some("--upstream-requests")
        );
        let mut setup = flags("1.37", Requests::Shipped, &[]);
        assert!(
            !setup
                .process_flags(None)
                .contains(&"--upstream-requests".to_owned())
        );
        setup
            .bend_scale(&ScenarioCluster::new(Target::Embedded))
            .unwrap();
        let bent = setup.process_flags(None);
        assert_eq!(bent.last().map(String::as_str), Some("--upstream-requests"));
    }
}
