//! Steps that move time: one sync now, or a span of virtual time during
//! which the controller syncs every sync period.

use cucumber::when;

use crate::gherkin::params::Duration;
use crate::gherkin::world::{HpaWorld, NoCheck, StepResult};

#[when(expr = "the HPA controller syncs")]
async fn controller_syncs(world: &mut HpaWorld) -> StepResult {
    world.sync_step().await
}

#[when(expr = "{duration} pass")]
#[when(expr = "{duration} passes")]
async fn time_passes(world: &mut HpaWorld, span: Duration) -> StepResult {
    world.pass_time(span.0, NoCheck).await
}
