//! One interface to a simulated cluster's admin side, whether the sim runs
//! in this process ([`Sim`]) or in another one ([`AdminClient`], over
//! `/admin/v1/`): the scenario world and the load runner drive both the
//! same way.

use futures::future::BoxFuture;
use hpa_core::gates::FeatureGates;
use jiff::SignedDuration;

use super::{
    AdminClient, AdminError, ClockState, FaultAction, RequestCounts, ResetSummary, apply_fault,
    clock_state, request_counts,
};
use crate::sim::Sim;
use crate::state::PodDelays;

/// What the harness may do to a simulated cluster beyond the Kubernetes API.
pub trait SimAdmin: Send + Sync + std::fmt::Debug {
    /// The sim's clock.
    fn clock(&self) -> BoxFuture<'_, Result<ClockState, AdminError>>;
    /// Moves the virtual clock forward by `by` and applies the pod
    /// transitions that fell due.
    fn advance(&self, by: SignedDuration) -> BoxFuture<'_, Result<(), AdminError>>;
    /// Sets one fault or scale override.
    fn set_fault<'a>(&'a self, action: &'a FaultAction) -> BoxFuture<'a, Result<(), AdminError>>;
    /// How long new pods of workload `namespace/name` take to run and be Ready.
    fn set_pod_delays<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        delays: PodDelays,
    ) -> BoxFuture<'a, Result<(), AdminError>>;
    /// Makes the API server `gates`' release with their overrides (what it
    /// stores, validates and reports at `/version`).
    fn set_feature_gates<'a>(
        &'a self,
        gates: &'a FeatureGates,
    ) -> BoxFuture<'a, Result<(), AdminError>>;
    /// A fresh cluster for the next scenario.
    fn reset(&self) -> BoxFuture<'_, Result<ResetSummary, AdminError>>;
    /// The request counters.
    fn requests(&self) -> BoxFuture<'_, Result<RequestCounts, AdminError>>;
    /// Zeroes the request counters.
    fn reset_requests(&self) -> BoxFuture<'_, Result<(), AdminError>>;
}

impl SimAdmin for Sim {
    fn clock(&self) -> BoxFuture<'_, Result<ClockState, AdminError>> {
        Box::pin(async move { Ok(clock_state(self)) })
    }

    fn advance(&self, by: SignedDuration) -> BoxFuture<'_, Result<(), AdminError>> {
        Box::pin(async move {
            if self.virtual_clock().is_none() {
                // As the admin API answers: a wall clock does not move.
                return Err(AdminError::Rejected {
                    endpoint: "POST /admin/v1/clock".to_owned(),
                    status: 409,
                    message: "the sim runs on the wall clock, which cannot be moved".to_owned(),
                });
            }
            Sim::advance(self, by);
            Ok(())
        })
    }

    fn set_fault<'a>(&'a self, action: &'a FaultAction) -> BoxFuture<'a, Result<(), AdminError>> {
        Box::pin(async move {
            // As the admin API answers a value that does not parse.
            apply_fault(self, action).map_err(|message| AdminError::Rejected {
                endpoint: "POST /admin/v1/faults".to_owned(),
                status: 400,
                message,
            })
        })
    }

    fn set_pod_delays<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        delays: PodDelays,
    ) -> BoxFuture<'a, Result<(), AdminError>> {
        Box::pin(async move {
            Sim::set_pod_delays(self, namespace, name, delays);
            Ok(())
        })
    }

    fn set_feature_gates<'a>(
        &'a self,
        gates: &'a FeatureGates,
    ) -> BoxFuture<'a, Result<(), AdminError>> {
        Box::pin(async move {
            Sim::set_feature_gates(self, gates);
            Ok(())
        })
    }

    fn reset(&self) -> BoxFuture<'_, Result<ResetSummary, AdminError>> {
        Box::pin(async move {
            let removed = Sim::reset(self);
            Ok(ResetSummary {
                removed,
                resource_version: self.resource_version(),
            })
        })
    }

    fn requests(&self) -> BoxFuture<'_, Result<RequestCounts, AdminError>> {
        Box::pin(async move { Ok(request_counts(self)) })
    }

    fn reset_requests(&self) -> BoxFuture<'_, Result<(), AdminError>> {
        Box::pin(async move {
            Sim::requests(self).reset();
            Ok(())
        })
    }
}

impl SimAdmin for AdminClient {
    fn clock(&self) -> BoxFuture<'_, Result<ClockState, AdminError>> {
        Box::pin(AdminClient::clock(self))
    }

    fn advance(&self, by: SignedDuration) -> BoxFuture<'_, Result<(), AdminError>> {
        Box::pin(async move { AdminClient::advance(self, by).await.map(drop) })
    }

    fn set_fault<'a>(&'a self, action: &'a FaultAction) -> BoxFuture<'a, Result<(), AdminError>> {
        Box::pin(AdminClient::set_fault(self, action))
    }

    fn set_pod_delays<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        delays: PodDelays,
    ) -> BoxFuture<'a, Result<(), AdminError>> {
        Box::pin(AdminClient::set_pod_delays(self, namespace, name, delays))
    }

    fn set_feature_gates<'a>(
        &'a self,
        gates: &'a FeatureGates,
    ) -> BoxFuture<'a, Result<(), AdminError>> {
        Box::pin(async move { AdminClient::set_feature_gates(self, gates).await.map(drop) })
    }

    fn reset(&self) -> BoxFuture<'_, Result<ResetSummary, AdminError>> {
        Box::pin(AdminClient::reset(self))
    }

    fn requests(&self) -> BoxFuture<'_, Result<RequestCounts, AdminError>> {
        Box::pin(AdminClient::requests(self))
    }

    fn reset_requests(&self) -> BoxFuture<'_, Result<(), AdminError>> {
        Box::pin(AdminClient::reset_requests(self))
    }
}
