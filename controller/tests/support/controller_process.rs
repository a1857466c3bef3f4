//! The HPA controller as a process of its own, as the tests of the deployed
//! binary start it (`hpa-controller`, or `hpa-harness controller`, which
//! takes the same flags).
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// A port on 127.0.0.1 that was free a moment ago, for a process that
/// takes its listen address as a flag.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How a test starts the controller: against the cluster of a kubeconfig,
/// its endpoints on 127.0.0.1, its stdout and (unless told) its log
/// discarded.
pub struct ControllerProcess {
    command: std::process::Command,
    port: u16,
    stderr: Option<Stdio>,
}

impl ControllerProcess {
    /// `PROGRAM LEADING --kubeconfig KUBECONFIG`, its endpoints on a port
    /// the system picks.
    pub fn new(program: impl AsRef<OsStr>, leading: &[&str], kubeconfig: &Path) -> Self {
        let mut command = std::process::Command::new(program);
        command.args(leading).arg("--kubeconfig").arg(kubeconfig);
        Self {
            command,
            port: 0,
            stderr: None,
        }
    }

    /// Syncs every `period` (`1s`) rather than every 15 s.
    pub fn sync_period(mut self, period: &str) -> Self {
        self.command
            .arg(format!("--horizontal-pod-autoscaler-sync-period={period}"));
        self
    }

    /// Without leader election: it syncs from its start and holds no Lease.
    pub fn without_leader_election(self) -> Self {
        self.args(["--leader-elect=false"])
    }

    /// More flags.
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.command.args(args);
        self
    }

    /// Its endpoints (`/metrics`, `/readyz`, `/debug/...`) on `port`.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Its log to `stderr` rather than nowhere.
    pub fn stderr(mut self, stderr: Stdio) -> Self {
        self.stderr = Some(stderr);
        self
    }

    /// The command, for a test that runs and stops it itself.
    pub fn command(mut self) -> std::process::Command {
        self.command
            .arg(format!("--bind-address=127.0.0.1:{}", self.port))
            .stdout(Stdio::null())
            .stderr(self.stderr.unwrap_or_else(Stdio::null));
        self.command
    }

    /// Starts it; it is killed when the returned child drops.
    pub fn spawn(self) -> tokio::process::Child {
        tokio::process::Command::from(self.command())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    }

    /// [`Self::spawn`], then waits until its endpoints accept connections,
    /// so that what reads them finds them from its start. Needs a
    /// [`Self::port`].
    pub async fn spawn_serving(self) -> tokio::process::Child {
        let port = self.port;
        assert_ne!(port, 0, "spawn_serving needs the controller's port");
        let child = self.spawn();
        tokio::time::timeout(Duration::from_secs(30), async {
            while tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_err()
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await
        .unwrap();
        child
    }
}
