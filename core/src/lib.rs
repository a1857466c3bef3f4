//! The HorizontalPodAutoscaler decision core.
//!
//! Pure and deterministic: no IO, no global clock (`now` is an argument).

pub mod clock;
pub mod quantity;
