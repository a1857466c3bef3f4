//! Upstream's `validateAndParseSelector`: the scale's selector must be set and
//! parse, and the pods it selects must not be controlled by another HPA.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::Timestamp;

use super::outcome::{Event, EventType};
use super::state::State;
use crate::input::DecisionInput;
use crate::pod::CorePod;
use crate::selector::Selector;
use crate::trace::DecisionTrace;

/// The pods the scale's selector picks. `Err(())` = the reconcile stops
/// (Warning event, ScalingActive=False and the failure recorded in `state`).
pub(super) fn selected_pods<'a>(
    input: &'a DecisionInput,
    now: Timestamp,
    state: &mut State,
    trace: &mut DecisionTrace,
) -> Result<Cow<'a, [Arc<CorePod>]>, ()> {
    let selector_text = &input.scale.selector;
    if selector_text.is_empty() {
        selector_failure(
            state,
            now,
            "SelectorRequired",
            "InvalidSelector",
            "selector is required".to_owned(),
            "the HPA target's scale is missing a selector".to_owned(),
        );
        trace.rule = "SelectorRequired".to_owned();
        return Err(());
    }
    let selector = match input.scale.parse_selector() {
        Ok(s) => s,
        Err(e) => {
            let msg = format!(
                "couldn't convert selector into a corresponding internal selector object: {e}"
            );
            selector_failure(
                state,
                now,
                "InvalidSelector",
                "InvalidSelector",
                msg.clone(),
                msg,
            );
            trace.rule = "InvalidSelector".to_owned();
            return Err(());
        }
    };
    let pods = matching_pods(input, &selector);
    let controlling = controlling_hpas(input, &pods);
    if controlling.len() > 1 {
        let list: Vec<&str> = controlling.iter().map(String::as_str).collect();
        let msg = format!(
            "pods by selector {selector_text} are controlled by multiple HPAs: [{}]",
            list.join(" ")
        );
        selector_failure(
            state,
            now,
            "AmbiguousSelector",
            "AmbiguousSelector",
            msg.clone(),
            msg,
        );
        trace.rule = "AmbiguousSelector".to_owned();
        return Err(());
    }
    Ok(pods)
}

/// Records a selector failure: a Warning event, ScalingActive=False, and the
/// event text as the reconcile's failure.
fn selector_failure(
    state: &mut State,
    now: Timestamp,
    event_reason: &str,
    cond_reason: &str,
    event: String,
    cond: String,
) {
    state.events.push(Event {
        type_: EventType::Warning,
        reason: event_reason.to_owned(),
        message: event.clone(),
    });
    state.set_condition("ScalingActive", "False", cond_reason, cond, now);
    state.failure = Some(event);
}

/// The namespace's pods that `selector` matches.
fn matching_pods<'a>(input: &'a DecisionInput, selector: &Selector) -> Cow<'a, [Arc<CorePod>]> {
    // Usually every listed pod matches; borrow instead of cloning them then.
    if input.pods.iter().all(|p| selector.matches(&p.labels)) {
        Cow::Borrowed(&input.pods)
    } else {
        Cow::Owned(
            input
                .pods
                .iter()
                .filter(|p| selector.matches(&p.labels))
                .cloned()
                .collect(),
        )
    }
}

/// The HPAs (`namespace/name`, this one included) whose selectors match any
/// of `pods`; more than one is upstream's ambiguous-selector error.
fn controlling_hpas(input: &DecisionInput, pods: &[Arc<CorePod>]) -> BTreeSet<String> {
    let hpa = &input.hpa;
    let own_key = [
        hpa.metadata.namespace.as_deref().unwrap_or(""),
        "/",
        hpa.metadata.name.as_deref().unwrap_or(""),
    ]
    .concat();
    let mut controlling = BTreeSet::new();
    if !pods.is_empty() {
        controlling.insert(own_key.clone());
    }
    for other in input.other_hpas.iter().filter(|o| o.key != own_key) {
        if pods.iter().any(|p| other.selector.matches(&p.labels)) {
            controlling.insert(other.key.clone());
        }
    }
    controlling
}
