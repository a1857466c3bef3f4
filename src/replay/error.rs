//! Why a replay could not run ([`ReplayError`]), naming the file, line and
//! field where the manifests or the series are at fault.

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The simulated cluster refused an object (it validates as the API
    /// server does); the line is the first invalid field's, when known.
    #[error("{file}:{line}: {what}: {reason}")]
    Create {
        file: String,
        line: u64,
        what: String,
        reason: String,
    },
    /// A Kubernetes call of the replay itself failed.
    #[error("{action}")]
    Kube {
        action: String,
        #[source]
        source: kube::Error,
    },
    /// The HPA needs a metric the series does not have.
    #[error(
        "{hpa_file}:{line}: field {field}: the HPA scales on {metric:?} but the series has no column {metric:?} ({found})"
    )]
    MissingColumn {
        hpa_file: String,
        line: u64,
        field: String,
        metric: String,
        /// The files and the columns they have.
        found: String,
    },
    /// The HPA has a metric type this version does not know.
    #[error("{hpa_file}:{line}: field {field}: metric type {type_:?} cannot be replayed")]
    MetricType {
        hpa_file: String,
        line: u64,
        field: String,
        type_: String,
    },
    /// The metrics could not be handed to the fake metrics server.
    #[error("setting the metrics at +{at}: {reason}")]
    Metrics { at: String, reason: String },
    /// The controller could not be driven.
    #[error("the HPA controller")]
    Controller(#[from] crate::testbed::controller::DriverError),
    /// The series is longer than a replay may be.
    #[error(
        "the series spans {syncs} syncs of {period}; at most {max} are replayed (a week of 15s syncs)"
    )]
    TooLong {
        syncs: u64,
        period: String,
        max: u64,
    },
}
