//! Why a step failed ([`StepError`]): the one error of every step, the
//! world's and the kinds' alike, so that the runner can tell failures from
//! steps this cluster cannot take.

use fake_metrics_server::client::ClientError;
use hpa_controller::config::FlagError;

use crate::testbed::cluster::fake_node::FakeNodeError;
use crate::testbed::controller::DriverError;
use crate::testbed::env::EnvError;

/// Why a step failed. Messages say what the scenario asked and what went
/// wrong, naming the object.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The scenario's cluster or metrics server: it could not start, a
    /// Kubernetes API call or a control request failed, or it cannot do
    /// what the step asks ([`EnvError::Unsupported`]). Its message as is.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// The controller could not be built or driven.
    #[error("{action}: {source}")]
    Controller {
        action: String,
        #[source]
        source: DriverError,
    },
    /// A controller flag was refused.
    #[error("flag {flag}: {source}")]
    Flag {
        flag: String,
        #[source]
        source: FlagError,
    },
    /// The step's own input (table, doc string, name) is wrong.
    #[error("{0}")]
    Input(String),
    /// The step is not possible in the current state of the scenario.
    #[error("{0}")]
    State(String),
    /// A `Then` step did not hold; the message holds what the cluster shows.
    #[error("{0}")]
    Expectation(String),
}

/// How an unsupported step's message (`StepError::unsupported`) starts
/// (the runner tells these apart from failures).
pub const UNSUPPORTED_MARK: &str = "[unsupported here] ";

impl StepError {
    pub(crate) fn kube(action: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let action = action.into();
        move |error| EnvError::Kube { action, error }.into()
    }

    pub(crate) fn metrics(action: impl Into<String>) -> impl FnOnce(ClientError) -> Self {
        let action = action.into();
        move |source| EnvError::Metrics { action, source }.into()
    }

    /// The scenario's cluster or metrics server could not start.
    pub(crate) fn start(message: impl Into<String>) -> Self {
        EnvError::Start(message.into()).into()
    }

    /// The step needs something this cluster or controller does not offer
    /// (fault injection on a real API server, our controller's memory when
    /// the cluster's own controller acts).
    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        EnvError::Unsupported(message.into()).into()
    }

    pub(crate) fn controller(action: impl Into<String>) -> impl FnOnce(DriverError) -> Self {
        let action = action.into();
        move |source| Self::Controller { action, source }
    }

    /// A fake node's failure: an API error as the cluster's, anything else
    /// (the node stopped) as it is.
    pub(crate) fn fake_node(action: impl Into<String>) -> impl FnOnce(FakeNodeError) -> Self {
        let action = action.into();
        move |error| match error {
            FakeNodeError::WriteStatus { source, .. } => {
                Self::kube(format!("{action} on the fake node"))(source)
            }
            other => Self::State(format!("{action}: {other}")),
        }
    }
}

/// What a step returns.
pub type StepResult = Result<(), StepError>;
