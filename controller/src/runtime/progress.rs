//! Per-key run counters: what `sync_all_now` waits on, so that it sees a
//! run that began after its request end.

use foldhash::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

/// Per-key run counters, so that `sync_all_now` can wait for a run that
/// started after its request.
#[derive(Debug, Default)]
pub(super) struct Progress {
    pub(super) runs: Mutex<HashMap<String, RunState>>,
    pub(super) tick: Mutex<Option<watch::Sender<u64>>>,
}

#[derive(Debug, Default, Clone)]
pub(super) struct RunState {
    pub(super) started: u64,
    pub(super) completed: u64,
    pub(super) last_error: Option<String>,
}

impl Progress {
    pub(super) fn new() -> (Arc<Self>, watch::Receiver<u64>) {
        let (tx, rx) = watch::channel(0);
        let progress = Self {
            runs: Mutex::default(),
            tick: Mutex::new(Some(tx)),
        };
        (Arc::new(progress), rx)
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, HashMap<String, RunState>> {
        self.runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Updates the key's entry, allocating its key only the first time
    /// (every sync passes here twice).
    pub(super) fn update<T>(&self, key: &str, f: impl FnOnce(&mut RunState) -> T) -> T {
        let mut runs = self.lock();
        if let Some(run) = runs.get_mut(key) {
            return f(run);
        }
        f(runs.entry(key.to_string()).or_default())
    }

    pub(super) fn start(&self, key: &str) -> u64 {
        self.update(key, |run| {
            run.started += 1;
            run.started
        })
    }

    /// Records the end of run `seq` of `key`; a run that found its HPA
    /// deleted (`gone`) drops the key's entry instead, so deleted HPAs leave
    /// no counters behind (a waiter then sees the key as done, see
    /// [`Progress::pending`]).
    pub(super) fn complete(&self, key: &str, seq: u64, error: Option<String>, gone: bool) {
        if gone {
            self.lock().remove(key);
        } else {
            self.update(key, |run| {
                run.completed = run.completed.max(seq);
                run.last_error = error;
            });
        }
        if let Some(tx) = self
            .tick
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
        {
            tx.send_modify(|n| *n += 1);
        }
    }

    pub(super) fn started(&self, key: &str) -> u64 {
        self.lock().get(key).map_or(0, |r| r.started)
    }

    pub(super) fn state(&self, key: &str) -> RunState {
        self.lock().get(key).cloned().unwrap_or_default()
    }

    /// Whether a run of `key` after run `mark` is still to complete. A key
    /// without an entry has not run yet unless its HPA is gone (`exists`
    /// false): a deleted HPA's entry is dropped by its last run.
    pub(super) fn pending(&self, key: &str, mark: u64, exists: impl FnOnce() -> bool) -> bool {
        match self.lock().get(key) {
            Some(run) => run.completed <= mark,
            None => exists(),
        }
    }

    /// Keys with run counters.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Churn: HPAs synced then found deleted leave no run counters, and a
    /// waiter on a deleted HPA's run is not left waiting.
    /// waiter on a deleted HPA's run is not left waiting.
    #[test]
    fn deleted_hpas_leave_no_run_counters() {
        let (progress, _ticks) = Progress::new();
        for cycle in 0..10 {
            for i in 0..100 {
                let key = format!("ns/hpa-{cycle}-{i}");
                let seq = progress.start(&key);
                progress.complete(&key, seq, None, false);
                let seq = progress.start(&key);
                progress.complete(&key, seq, None, true);
            }
            assert_eq!(progress.len(), 0, "cycle {cycle}");
        }
        let seq = progress.start("ns/web");
        assert!(progress.pending("ns/web", 0, || true), "running");
        progress.complete("ns/web", seq, Some("boom".into()), false);
        assert!(!progress.pending("ns/web", 0, || true));
        assert!(progress.pending("ns/web", seq, || true), "a later run");
        progress.complete("ns/web", progress.start("ns/web"), None, true);
        assert!(!progress.pending("ns/web", seq, || false), "deleted");
        assert!(progress.pending("ns/new", 0, || true), "not run yet");
    }
}
