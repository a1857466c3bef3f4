//! Steps about the controller itself: its flags and its in-memory history.

use cucumber::gherkin::Step;
use cucumber::{given, then};

use super::{Table, age, count};
use crate::gherkin::world::{HpaWorld, Seed, StepError, StepResult};
use hpa_controller::{AgedRecommendation, AgedScaleEvent, Direction};

#[given(expr = "the HPA controller runs with:")]
async fn runs_with(world: &mut HpaWorld, step: &Step) -> StepResult {
    let table = Table::of(step, &["flag", "value"])?;
    for row in &table.rows {
        let flag = table.cell(row, "flag").unwrap_or_default();
        let value = table.cell(row, "value").unwrap_or_default();
        world.setup.set_flag(flag, value, &world.cluster).await?;
    }
    Ok(())
}

/// `Given Kubernetes 1.36`: the scenario runs under that release's HPA
/// semantics (controller and simulated API server), whatever the run's;
/// the flag `kubernetes-version`, with the gates set so far (refused where
/// the release does not know or locks one), refused once the controller runs.
#[given(regex = r"^Kubernetes v?(\S+)$")]
async fn kubernetes(world: &mut HpaWorld, version: String) -> StepResult {
    world
        .setup
        .set_flag("kubernetes-version", &version, &world.cluster)
        .await
}

/// `Then the HPA controller refuses the flag "F" "V" saying "TEXT"`: the
/// value is refused (as kube-controller-manager refuses it at start) with a
/// message containing TEXT; nothing changes.
#[then(expr = "the HPA controller refuses the flag {string} {string} saying {string}")]
async fn refuses_flag(
    world: &mut HpaWorld,
    flag: String,
    value: String,
    text: String,
) -> StepResult {
    let before = world.setup.config.clone();
    match world.setup.set_flag(&flag, &value, &world.cluster).await {
        Ok(()) => Err(StepError::Expectation(format!(
            "expected --{flag}={value} to be refused, the controller took it"
        ))),
        Err(StepError::Flag { source, .. }) => {
            let message = source.to_string();
            if world.setup.config != before {
                return Err(StepError::Expectation(format!(
                    "--{flag}={value} was refused ({message}) but changed the settings"
                )));
            }
            if message.contains(&text) {
                Ok(())
            } else {
                Err(StepError::Expectation(format!(
                    "--{flag}={value} was refused saying {message:?}, which does not contain {text:?}"
                )))
            }
        }
        Err(other) => Err(other),
    }
}

#[given(expr = "the HPA controller's recommendations for {string} were:")]
async fn recommendations_were(world: &mut HpaWorld, step: &Step, hpa: String) -> StepResult {
    let table = Table::of(step, &["age", "replicas"])?;
    let mut entries = Vec::new();
    for row in &table.rows {
        entries.push(AgedRecommendation {
            age: age(
                table.cell(row, "age").unwrap_or_default(),
                "recommendation age",
            )?,
            replicas: count(
                table.cell(row, "replicas").unwrap_or_default(),
                "recommended replicas",
            )?,
        });
    }
    let (namespace, name) = world.qualify(&hpa);
    world
        .setup
        .seed(
            Seed::Recommendations {
                namespace,
                name,
                entries,
            },
            &world.cluster,
        )
        .await
}

#[given(expr = "the HPA controller's scale events for {string} were:")]
async fn scale_events_were(world: &mut HpaWorld, step: &Step, hpa: String) -> StepResult {
    let table = Table::of(step, &["age", "direction", "pods"])?;
    let mut events = Vec::new();
    for row in &table.rows {
        events.push(AgedScaleEvent {
            age: age(
                table.cell(row, "age").unwrap_or_default(),
                "scale event age",
            )?,
            direction: direction(table.cell(row, "direction").unwrap_or_default())?,
            pods: count(
                table.cell(row, "pods").unwrap_or_default(),
                "scale event pods",
            )?,
            outdated: outdated(table.cell(row, "outdated"))?,
        });
    }
    let (namespace, name) = world.qualify(&hpa);
    world
        .setup
        .seed(
            Seed::ScaleEvents {
                namespace,
                name,
                events,
            },
            &world.cluster,
        )
        .await
}

/// The optional `outdated` cell of a scale event: `yes` or `no` (absent
/// or empty: `no`).
pub(crate) fn outdated(text: Option<&str>) -> Result<bool, StepError> {
    match text.unwrap_or_default() {
        "yes" => Ok(true),
        "no" | "" => Ok(false),
        other => Err(StepError::Input(format!(
            "scale event outdated {other:?}: expected yes or no"
        ))),
    }
}

/// `up` or `down`.
pub(crate) fn direction(text: &str) -> Result<Direction, StepError> {
    match text {
        "up" => Ok(Direction::Up),
        "down" => Ok(Direction::Down),
        other => Err(StepError::Input(format!(
            "scale event direction {other:?}: expected up or down"
        ))),
    }
}
