//! What a load run is asked to do ([`LoadOptions`]), how its metrics move
//! ([`MetricProfile`]) and how it fails ([`LoadError`]).

use std::time::Duration;

use hpa_controller::{ControllerConfig, RunError};

use super::endpoint::EndpointError;
use crate::testbed::options::TestbedOptions;
use crate::testbed::start::TestbedError;
use crate::testbed::{BackendKind, ControllerKind};

/// How the scripted metrics change over the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricProfile {
    /// Every metric stays at its target: no HPA scales.
    Steady,
    /// Every metric rises linearly to 1.6 times its target by the end.
    Ramp,
    /// Metrics jump to 1.8 times their target every other two sync periods.
    Spiky,
}

impl MetricProfile {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Steady => "steady",
            Self::Ramp => "ramp",
            Self::Spiky => "spiky",
        }
    }

    /// Load as a multiple of the target, `elapsed` into a run of `duration`.
    pub fn factor(self, elapsed: Duration, duration: Duration, sync_period: Duration) -> f64 {
        match self {
            Self::Steady => 1.0,
            Self::Ramp => {
                let t = elapsed.as_secs_f64() / duration.as_secs_f64().max(1e-9);
                // Quantised to tenths so that the metrics change a few times,
                // not at every tick.
                1.0 + (t.min(1.0) * 6.0).floor() / 10.0
            }
            Self::Spiky => {
                let phase = elapsed.as_secs_f64() / (2.0 * sync_period.as_secs_f64().max(1e-9));
                if (phase.floor() as u64) % 2 == 1 {
                    1.8
                } else {
                    1.0
                }
            }
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Our controller's settings, from its flags (`hpa-harness load` takes
    /// `hpa-harness controller`'s): the sync period and the workers, the
    /// Kubernetes release whose semantics it follows, the tolerance, ...
    /// With `--controller upstream`, only the sync period counts: the
    /// cluster's controller's, which the run is told.
    pub settings: ControllerConfig,
    /// Without `--kubernetes-version`: the `--feature-gates` text, applied
    /// under the cluster's own release (its `/version`) once the testbed is
    /// up, as `hpa-harness controller` does; until then `settings` holds
    /// them under the newest stable release. `None`: `settings` stands.
    pub gates_under_cluster_release: Option<String>,
    /// Number of HPAs, each with its own Deployment.
    pub hpas: usize,
    /// Pods per Deployment at the start.
    pub pods_per_hpa: usize,
    /// How long the controller is measured, after the warm-up.
    pub duration: Duration,
    /// How long the controller runs before the measurement starts: the
    /// first pass writes every HPA's status, later ones mostly do not, so a
    /// warm-up of a sync period or two shows the steady state.
    pub warmup: Duration,
    /// Which cluster.
    pub backend: BackendKind,
    /// How to reach a cluster other than the in-process one, and whose
    /// controller is measured (`--controller`; with `upstream`, only the
    /// sync period of [`Self::settings`] counts: the cluster's
    /// controller's, which the run is told).
    pub testbed: TestbedOptions,
    /// How metrics change.
    pub profile: MetricProfile,
    /// Scale targets from a watch cache and shared metrics lists
    /// ([`hpa_controller::Extensions`]); off: upstream's requests.
    pub optimize: bool,
    /// HPAs per namespace (namespaces `load-0`, `load-1`, ...).
    pub hpas_per_namespace: usize,
    /// Draw a progress bar on stderr (when it is a terminal).
    pub progress: bool,
    /// The controller's client-side limit, requests a second per clientset
    /// as `hpa-harness controller --kube-api-qps` (0: none). Needs a cluster
    /// outside this process.
    pub kube_api_qps: f64,
    /// The controller's request burst per clientset (`--kube-api-burst`).
    pub kube_api_burst: u32,
    /// With `--controller upstream`: the controller's Prometheus endpoint
    /// (`--controller-metrics-url`). Its syncs are then counted from there
    /// (and from `/debug/syncs` beside it, when served) where the fake
    /// metrics server's request log does not see them all.
    pub controller_metrics_url: Option<String>,
    /// The fake metrics server refuses External lists without a label
    /// selector, as KEDA's metrics adapter does (`--refuse-external-lists`).
    pub refuse_external_lists: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            settings: ControllerConfig::default(),
            gates_under_cluster_release: None,
            hpas: 200,
            pods_per_hpa: 10,
            duration: Duration::from_secs(60),
            warmup: Duration::ZERO,
            backend: BackendKind::Sim,
            testbed: TestbedOptions::default(),
            profile: MetricProfile::Steady,
            optimize: true,
            hpas_per_namespace: 100,
            progress: false,
            kube_api_qps: 0.0,
            kube_api_burst: 30,
            controller_metrics_url: None,
            refuse_external_lists: false,
        }
    }
}

impl LoadOptions {
    /// The release (and gates) of the whole run when `--kubernetes-version`
    /// named one: the controller's, which a simulated cluster the testbed
    /// makes then follows too. `None`: the cluster's own release decides.
    pub fn run_release(&self) -> Option<hpa_core::FeatureGates> {
        self.gates_under_cluster_release
            .is_none()
            .then_some(self.settings.decision.feature_gates)
    }

    /// Whose controller is measured.
    pub fn controller(&self) -> ControllerKind {
        self.testbed.controller
    }

    /// Refuses, before anything is built, the options that make no run or
    /// no measurement.
    pub fn validate(&self) -> Result<(), LoadError> {
        use hpa_controller::config::format_go_duration;
        let invalid = |message: String| Err(LoadError::Invalid(message));
        if self.hpas == 0 || self.pods_per_hpa == 0 || self.duration.is_zero() {
            return invalid("--hpas, --pods-per-hpa and --duration must be positive".into());
        }
        if self.settings.workers == 0 {
            return invalid(
                "--workers must be at least 1 (upstream's --concurrent-horizontal-pod-autoscaler-syncs)"
                    .into(),
            );
        }
        if self.backend == BackendKind::Kubeconfig
            && self.testbed.kubeconfig.is_none()
            && std::env::var_os("KUBECONFIG").is_none()
        {
            return invalid(
                "--backend kubeconfig needs --kubeconfig (or $KUBECONFIG): a load run creates and deletes namespaces, so it uses a cluster only when named".into(),
            );
        }
        if self.hpas_per_namespace == 0 {
            return invalid("--hpas-per-namespace must be at least 1".into());
        }
        if self.settings.sync_period.is_zero() {
            return invalid("--sync-period must be positive".into());
        }
        if !self.kube_api_qps.is_finite() || self.kube_api_qps < 0.0 {
            return invalid(format!(
                "--kube-api-qps must be 0 (no limit) or a positive number, not {}",
                self.kube_api_qps
            ));
        }
        if self.kube_api_qps > 0.0 && self.backend == BackendKind::Sim {
            return Err(LoadError::Unsupported(
                "--kube-api-qps needs a cluster in its own process (--backend sim-process or kubeconfig)".into(),
            ));
        }
        // Like upstream's, the controller first syncs an HPA one period
        // after it sees it: a shorter run would measure nothing.
        let run = self.warmup + self.duration;
        if run <= self.settings.sync_period {
            return invalid(format!(
                "--warmup plus --duration ({}) must be longer than --sync-period ({}): the controller, like upstream's, first syncs an HPA one sync period after it appears, so this run would see no sync",
                format_go_duration(run),
                format_go_duration(self.settings.sync_period)
            ));
        }
        Ok(())
    }
}

/// Errors of a load run.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The combination asked for is not available.
    #[error("{0}")]
    Unsupported(String),
    /// Building the load in the cluster failed.
    #[error("cannot {action}")]
    Setup {
        /// What was being created or read.
        action: String,
        #[source]
        source: kube::Error,
    },
    /// The fake metrics server refused the script.
    #[error("the fake metrics server refused the load's metrics")]
    Metrics(#[source] fake_metrics_server::state::StateError),
    /// The controller failed.
    #[error("the controller failed")]
    Controller(#[source] RunError),
    /// The options make no run.
    #[error("invalid load options: {0}")]
    Invalid(String),
    /// The cluster could not be made, started or reached.
    #[error(transparent)]
    Testbed(#[from] TestbedError),
    /// The fake metrics server's control API failed.
    #[error("fake metrics server at {url}: {message}")]
    MetricsServer {
        /// Its control URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// Creating a namespace or reading the sim's counters failed.
    #[error("cannot {action}: {message}")]
    Cluster {
        /// What was being done.
        action: String,
        /// What failed.
        message: String,
    },
    /// The external controller's endpoints could not be read.
    #[error("the controller's endpoints")]
    Endpoint(#[from] EndpointError),
    /// SIGINT or SIGTERM stopped the run (after its load was deleted).
    #[error(
        "interrupted (SIGINT or SIGTERM): the load's namespaces were deleted, nothing measured"
    )]
    Interrupted,
    /// The fake metrics server did not learn the load's pods in time.
    #[error("{0}")]
    MetricsNotReady(String),
}
