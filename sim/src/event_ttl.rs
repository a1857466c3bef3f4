//! Events expire, as on a real API server (`kube-apiserver --event-ttl`,
//! default 1h): every write of an Event (create, update, patch) gives it an
//! etcd lease of the TTL, so an Event goes a TTL after its last write. Without
//! this, a long run (a churn of HPAs, each with its events) grows the sim
//! without bound. Expiry is on the sim's clock, so virtual time expires Events
//! as wall time does.

use std::collections::{BTreeSet, HashMap};

use jiff::{SignedDuration, Timestamp};

/// An Event, by namespace and name.
type EventKey = (Box<str>, Box<str>);

/// When each Event expires.
#[derive(Debug, Default)]
pub(crate) struct EventExpiry {
    /// Expiry (ns since the epoch) per Event.
    by_key: HashMap<EventKey, i128>,
    /// The same, ordered by expiry.
    due: BTreeSet<(i128, EventKey)>,
}

impl EventExpiry {
    /// An Event was written at `now`: it expires `ttl` later.
    pub(crate) fn written(&mut self, ns: &str, name: &str, now: Timestamp, ttl: SignedDuration) {
        let at = now.as_nanosecond() + ttl.as_nanos();
        let key: EventKey = (ns.into(), name.into());
        if let Some(old) = self.by_key.insert(key.clone(), at) {
            self.due.remove(&(old, key.clone()));
        }
        self.due.insert((at, key));
    }

    /// An Event was deleted (by a client, or expired).
    pub(crate) fn deleted(&mut self, ns: &str, name: &str) {
        let key: EventKey = (ns.into(), name.into());
        if let Some(at) = self.by_key.remove(&key) {
            self.due.remove(&(at, key));
        }
    }

    /// Takes the Events expired by `now`, earliest first.
    pub(crate) fn take_expired(&mut self, now: Timestamp) -> Vec<EventKey> {
        let now = now.as_nanosecond();
        let mut expired = Vec::new();
        while let Some(first) = self.due.first() {
            if first.0 > now {
                break;
            }
            if let Some((_, key)) = self.due.pop_first() {
                self.by_key.remove(&key);
                expired.push(key);
            }
        }
        expired
    }

    /// Events with an expiry.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + secs).unwrap()
    }

    const HOUR: SignedDuration = SignedDuration::from_hours(1);

    #[test]
    fn an_event_expires_a_ttl_after_its_last_write() {
        let mut e = EventExpiry::default();
        e.written("ns", "a", t(0), HOUR);
        e.written("ns", "b", t(10), HOUR);
        e.written("ns", "a", t(20), HOUR); // an update renews the lease
        assert!(e.take_expired(t(3_609)).is_empty());
        assert_eq!(e.take_expired(t(3_610)), vec![("ns".into(), "b".into())]);
        assert!(e.take_expired(t(3_619)).is_empty());
        assert_eq!(e.take_expired(t(3_620)), vec![("ns".into(), "a".into())]);
        assert_eq!(e.len(), 0);
    }

    #[test]
    fn a_deleted_event_does_not_expire_later() {
        let mut e = EventExpiry::default();
        e.written("ns", "a", t(0), HOUR);
        e.deleted("ns", "a");
        assert!(e.take_expired(t(7_200)).is_empty());
        assert_eq!(e.len(), 0);
    }
}
