//! Where "now" comes from.
//!
//! The decision functions of this crate take `now` as an argument; the async
//! shells (controller, simulated cluster, fake metrics server) ask a [`Clock`]
//! for it. Production uses [`SystemClock`]; scenarios and load runs share one
//! [`VirtualClock`] that the harness moves forward, so "wait five minutes"
//! costs no wall time.
//!
//! [`ScenarioClock`] is the one choice between the two that the simulated
//! cluster and the fake metrics server are configured with, and
//! [`ClockState`] / [`ClockMove`] are the one wire form of their clock
//! endpoints (`/admin/v1/clock`, `/control/v1/clock`). They live here because
//! both servers depend on this crate and on nothing else in common.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

/// A source of the current instant.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to. Clones share the same instant.
///
/// Kept as nanoseconds since the Unix epoch in an atomic so that reading it
/// from many tasks is cheap and never blocks.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    nanos: Arc<AtomicI64>,
}

impl VirtualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            nanos: Arc::new(AtomicI64::new(to_nanos(start))),
        }
    }

    /// Moves the clock forward (or backward, for a negative duration).
    pub fn advance(&self, by: SignedDuration) {
        let delta = i64::try_from(by.as_nanos()).unwrap_or(if by.is_negative() {
            i64::MIN
        } else {
            i64::MAX
        });
        self.nanos.fetch_add(delta, Ordering::SeqCst);
    }

    /// Puts the clock at `at`.
    pub fn set(&self, at: Timestamp) {
        self.nanos.store(to_nanos(at), Ordering::SeqCst);
    }
}

impl Default for VirtualClock {
    /// A clock at 2026-01-01T00:00:00Z: a fixed, recognisable start so that
    /// runs are reproducible.
    fn default() -> Self {
        Self::new(Timestamp::constant(1_767_225_600, 0))
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Timestamp {
        let nanos = self.nanos.load(Ordering::SeqCst);
        Timestamp::from_nanosecond(i128::from(nanos)).unwrap_or(Timestamp::UNIX_EPOCH)
    }
}

/// The clock of a simulated cluster or a fake metrics server: a virtual
/// clock shared with the rest of a scenario, or the wall clock plus an
/// adjustable offset.
#[derive(Debug, Clone)]
pub enum ScenarioClock {
    /// Moves only when told to; clones share it.
    Virtual(VirtualClock),
    /// Wall time plus an offset in nanoseconds (clones share the offset).
    /// The simulated cluster never moves it; the fake metrics server does
    /// when its control API is told to.
    Wall(Arc<AtomicI64>),
}

impl ScenarioClock {
    /// The wall clock, not offset.
    pub fn wall() -> Self {
        Self::Wall(Arc::new(AtomicI64::new(0)))
    }

    /// Whether this is a virtual clock.
    pub fn is_virtual(&self) -> bool {
        matches!(self, Self::Virtual(_))
    }

    /// The virtual clock, if this is one.
    pub fn virtual_clock(&self) -> Option<&VirtualClock> {
        match self {
            Self::Virtual(c) => Some(c),
            Self::Wall(_) => None,
        }
    }

    /// Moves the clock (a virtual clock) or its offset (the wall clock).
    pub fn advance(&self, by: SignedDuration) {
        match self {
            Self::Virtual(c) => c.advance(by),
            Self::Wall(offset) => {
                let nanos = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
                offset.fetch_add(nanos, Ordering::SeqCst);
            }
        }
    }

    /// Puts the clock at `at`.
    pub fn set(&self, at: Timestamp) {
        match self {
            Self::Virtual(c) => c.set(at),
            Self::Wall(offset) => {
                let delta = at.duration_since(Timestamp::now());
                let nanos = i64::try_from(delta.as_nanos()).unwrap_or(i64::MAX);
                offset.store(nanos, Ordering::SeqCst);
            }
        }
    }

    /// How far the wall clock is offset (zero for a virtual clock).
    pub fn offset(&self) -> SignedDuration {
        match self {
            Self::Virtual(_) => SignedDuration::ZERO,
            Self::Wall(offset) => SignedDuration::from_nanos(offset.load(Ordering::SeqCst)),
        }
    }

    /// Takes the wall clock's offset back to zero (a virtual clock stays).
    pub fn reset_offset(&self) {
        if let Self::Wall(offset) = self {
            offset.store(0, Ordering::SeqCst);
        }
    }
}

impl Clock for ScenarioClock {
    fn now(&self) -> Timestamp {
        match self {
            Self::Virtual(c) => c.now(),
            Self::Wall(_) => Timestamp::now()
                .checked_add(self.offset())
                .unwrap_or_else(|_| Timestamp::now()),
        }
    }
}

/// A server's clock as `GET /admin/v1/clock` (the simulated cluster) and
/// `GET /control/v1/clock` (the fake metrics server) report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClockState {
    /// The server's now (RFC 3339).
    pub now: Timestamp,
    /// Whether the clock is virtual (moves only when told to).
    #[serde(rename = "virtual")]
    pub is_virtual: bool,
    /// Offset of a wall clock, as a Go duration (`0s` when virtual); empty
    /// and left out of the JSON when the server has none to report (the
    /// simulated cluster, whose wall clock does not move).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub offset: String,
}

/// Body of `POST /admin/v1/clock` and `POST /control/v1/clock`: exactly one
/// of the two.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClockMove {
    /// How far to move the clock, as a Go duration (`90s`; the fake metrics
    /// server also takes a negative one, `-1m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advance: Option<String>,
    /// Put the clock at this instant (RFC 3339), e.g. to line a sim's clock
    /// up with a fake metrics server's after a reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Timestamp>,
}

fn to_nanos(at: Timestamp) -> i64 {
    i64::try_from(at.as_nanosecond()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_clock_moves_only_when_advanced_and_clones_share_it() {
        let clock = VirtualClock::default();
        let other = clock.clone();
        let start = clock.now();
        assert_eq!(clock.now(), start);
        other.advance(SignedDuration::from_secs(300));
        assert_eq!(clock.now(), start + SignedDuration::from_secs(300));
    }

    #[test]
    fn clock_state_leaves_out_an_offset_it_does_not_have() {
        let at: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let sim = ClockState {
            now: at,
            is_virtual: true,
            offset: String::new(),
        };
        assert_eq!(
            serde_json::to_string(&sim).unwrap(),
            r#"{"now":"2026-01-01T00:00:00Z","virtual":true}"#
        );
        let server = ClockState {
            offset: "0s".to_owned(),
            ..sim
        };
        assert_eq!(
            serde_json::to_string(&server).unwrap(),
            r#"{"now":"2026-01-01T00:00:00Z","virtual":true,"offset":"0s"}"#
        );
    }

    #[test]
    fn a_wall_clock_offset_moves_and_resets() {
        let clock = ScenarioClock::wall();
        clock.advance(SignedDuration::from_secs(90));
        assert_eq!(clock.offset(), SignedDuration::from_secs(90));
        clock.reset_offset();
        assert_eq!(clock.offset(), SignedDuration::ZERO);
    }
}
