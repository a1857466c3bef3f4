//! The request log: what was asked, when (server clock), and how it was
//! answered, so tests can assert how many calls a controller made.
//!
//! Entries sit in a bounded ring buffer; per-group counters are atomics so a
//! load test can read counts without copying the log.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Default number of entries kept.
pub const DEFAULT_CAPACITY: usize = 100_000;

/// Which part of the server a request went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Group {
    /// metrics.k8s.io data (not discovery).
    Resource,
    /// custom.metrics.k8s.io data.
    Custom,
    /// external.metrics.k8s.io data.
    External,
    /// `/control/v1`.
    Control,
    /// `/apis...` discovery documents.
    Discovery,
    /// Health checks and anything else.
    Other,
}

impl Group {
    const ALL: [Group; 6] = [
        Group::Resource,
        Group::Custom,
        Group::External,
        Group::Control,
        Group::Discovery,
        Group::Other,
    ];

    fn index(self) -> usize {
        match self {
            Group::Resource => 0,
            Group::Custom => 1,
            Group::External => 2,
            Group::Control => 3,
            Group::Discovery => 4,
            Group::Other => 5,
        }
    }

    /// Classifies a request path.
    pub fn of_path(path: &str) -> Self {
        if path.starts_with("/control/") {
            return Group::Control;
        }
        let Some(rest) = path.strip_prefix("/apis") else {
            return Group::Other;
        };
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        if segments.len() <= 2 {
            return Group::Discovery;
        }
        match segments[0] {
            crate::types::METRICS_GROUP => Group::Resource,
            crate::types::CUSTOM_GROUP => Group::Custom,
            crate::types::EXTERNAL_GROUP => Group::External,
            _ => Group::Other,
        }
    }
}

/// One request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// When it arrived, on the server's clock.
    pub time: Timestamp,
    /// HTTP method.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Raw query string, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Which part of the server.
    pub group: Group,
    /// Status code answered.
    pub status: u16,
    /// Items of the metrics list answered (absent for anything else): 0 is
    /// an answer a controller fails on, as on an error status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<u64>,
    /// Wall time spent answering, in microseconds (includes fault latency).
    pub duration_micros: u64,
}

/// Request and error (status >= 400) counts per group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counters {
    /// metrics.k8s.io data requests.
    pub resource: GroupCount,
    /// custom.metrics.k8s.io data requests.
    pub custom: GroupCount,
    /// external.metrics.k8s.io data requests.
    pub external: GroupCount,
    /// Control API requests.
    pub control: GroupCount,
    /// Discovery requests.
    pub discovery: GroupCount,
    /// Everything else.
    pub other: GroupCount,
}

/// Counts for one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupCount {
    /// All requests.
    pub requests: u64,
    /// Requests answered with status >= 400.
    pub errors: u64,
}

/// Which entries to return.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogFilter {
    /// Only this group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
    /// Only entries at or after this instant (server clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    /// Only paths containing this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// At most this many, the most recent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// The answer of `GET /control/v1/requests`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogPage {
    /// Counters since the last clear.
    pub counters: Counters,
    /// Matching entries, oldest first.
    pub entries: Vec<LogEntry>,
    /// Entries dropped from the ring buffer since the last clear.
    pub dropped: u64,
}

/// The bounded log with its counters.
#[derive(Debug)]
pub struct RequestLog {
    capacity: usize,
    entries: Mutex<VecDeque<LogEntry>>,
    requests: [AtomicU64; 6],
    errors: [AtomicU64; 6],
    dropped: AtomicU64,
}

impl Default for RequestLog {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

impl RequestLog {
    /// A log keeping at most `capacity` entries (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            entries: Mutex::new(VecDeque::new()),
            requests: Default::default(),
            errors: Default::default(),
            dropped: AtomicU64::new(0),
        }
    }

    /// Records one request.
    pub fn record(&self, entry: LogEntry) {
        let i = entry.group.index();
        self.requests[i].fetch_add(1, Ordering::Relaxed);
        if entry.status >= 400 {
            self.errors[i].fetch_add(1, Ordering::Relaxed);
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= self.capacity {
            entries.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        entries.push_back(entry);
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        let get = |g: Group| GroupCount {
            requests: self.requests[g.index()].load(Ordering::Relaxed),
            errors: self.errors[g.index()].load(Ordering::Relaxed),
        };
        Counters {
            resource: get(Group::Resource),
            custom: get(Group::Custom),
            external: get(Group::External),
            control: get(Group::Control),
            discovery: get(Group::Discovery),
            other: get(Group::Other),
        }
    }

    /// Entries matching `filter`, with the counters.
    pub fn page(&self, filter: &LogFilter) -> LogPage {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut matching: Vec<LogEntry> = entries
            .iter()
            .filter(|e| filter.group.is_none_or(|g| e.group == g))
            .filter(|e| filter.since.is_none_or(|s| e.time >= s))
            .filter(|e| filter.path.as_deref().is_none_or(|p| e.path.contains(p)))
            .cloned()
            .collect();
        drop(entries);
        if let Some(limit) = filter.limit
            && matching.len() > limit
        {
            matching.drain(..matching.len() - limit);
        }
        LogPage {
            counters: self.counters(),
            entries: matching,
            dropped: self.dropped.load(Ordering::Relaxed),
        }
    }

    /// Forgets all entries and zeroes the counters.
    pub fn clear(&self) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.clear();
        for g in Group::ALL {
            self.requests[g.index()].store(0, Ordering::Relaxed);
            self.errors[g.index()].store(0, Ordering::Relaxed);
        }
        self.dropped.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, status: u16) -> LogEntry {
        LogEntry {
            time: Timestamp::UNIX_EPOCH,
            method: "GET".into(),
            path: path.into(),
            query: None,
            group: Group::of_path(path),
            status,
            items: None,
            duration_micros: 1,
        }
    }

    #[test]
    fn paths_are_classified_by_api_group() {
        assert_eq!(Group::of_path("/apis"), Group::Discovery);
        assert_eq!(
            Group::of_path("/apis/metrics.k8s.io/v1beta1"),
            Group::Discovery
        );
        assert_eq!(
            Group::of_path("/apis/metrics.k8s.io/v1beta1/pods"),
            Group::Resource
        );
        assert_eq!(
            Group::of_path("/apis/custom.metrics.k8s.io/v1beta2/namespaces/a/pods/*/x"),
            Group::Custom
        );
        assert_eq!(
            Group::of_path("/apis/external.metrics.k8s.io/v1beta1/namespaces/a/q"),
            Group::External
        );
        assert_eq!(Group::of_path("/control/v1/script"), Group::Control);
        assert_eq!(Group::of_path("/healthz"), Group::Other);
    }

    #[test]
    fn the_ring_buffer_keeps_the_newest_and_counts_the_dropped() {
        let log = RequestLog::new(2);
        log.record(entry("/apis/metrics.k8s.io/v1beta1/pods", 200));
        log.record(entry("/apis/metrics.k8s.io/v1beta1/nodes", 500));
        log.record(entry("/control/v1/script", 200));
        let page = log.page(&LogFilter::default());
        assert_eq!(page.entries.len(), 2);
        assert_eq!(page.dropped, 1);
        assert_eq!(page.entries[0].path, "/apis/metrics.k8s.io/v1beta1/nodes");
        assert_eq!(page.counters.resource.requests, 2);
        assert_eq!(page.counters.resource.errors, 1);
        log.clear();
        assert_eq!(log.counters(), Counters::default());
    }
}
