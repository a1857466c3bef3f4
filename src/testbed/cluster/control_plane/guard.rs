//! The last line of defence against orphans: a small shell process that
//! outlives nothing but this one. The harness tells it each process it
//! starts (`pid N`) over a pipe; when the harness stops them itself it says
//! `done` and the guard leaves. If the harness dies first, however it dies
//! (a panic that aborts, SIGKILL, a test runner's timeout), the pipe closes
//! and the guard stops those processes and removes the run's directory.
//!
//! The guard runs in a process group of its own and ignores SIGINT, SIGTERM
//! and SIGHUP, so that the Ctrl-C that stops the harness does not stop it
//! before it has done its work.

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

/// What the guard runs: `$1` is the run's directory.
const SCRIPT: &str = r#"
trap '' INT TERM HUP
pids=
while read -r verb arg; do
  case "$verb" in
    pid) pids="$pids $arg" ;;
    done) exit 0 ;;
  esac
done
for p in $pids; do kill -TERM "$p" 2>/dev/null; done
i=0
while [ "$i" -lt 100 ]; do
  alive=
  for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.1
  i=$((i + 1))
done
for p in $pids; do kill -KILL "$p" 2>/dev/null; done
rm -rf "$1"
"#;

/// The guard of one control plane.
#[derive(Debug)]
pub struct Guard {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Guard {
    /// Starts a guard for the run whose directory is `dir`.
    pub fn start(dir: &Path) -> std::io::Result<Self> {
        use std::os::unix::process::CommandExt as _;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("hpa-harness-guard")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take();
        Ok(Self { child, stdin })
    }

    /// Tells the guard of a process to stop if the harness dies.
    pub fn watch(&mut self, pid: u32) -> std::io::Result<()> {
        match self.stdin.as_mut() {
            Some(stdin) => {
                writeln!(stdin, "pid {pid}")?;
                stdin.flush()
            }
            None => Ok(()),
        }
    }

    /// The harness stopped everything itself: the guard leaves without
    /// touching anything.
    pub fn release(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "done");
        }
        let _ = self.child.wait();
    }

    /// The guard's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn alive(pid: u32) -> bool {
        Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    }

    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting: {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn a_closed_pipe_stops_the_watched_processes_and_removes_the_folder() {
        let dir = tempfile::tempdir().unwrap().keep();
        let mut guard = Guard::start(&dir).unwrap();
        let mut sleeper = Command::new("sleep").arg("600").spawn().unwrap();
        guard.watch(sleeper.id()).unwrap();
        // The harness dies: its end of the pipe closes.
        drop(guard.stdin.take());
        let _ = sleeper.wait();
        wait_until("the folder to go", || !dir.exists());
        let _ = guard.child.wait();
    }

    #[test]
    fn a_release_leaves_everything_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let mut guard = Guard::start(dir.path()).unwrap();
        let mut sleeper = Command::new("sleep").arg("600").spawn().unwrap();
        guard.watch(sleeper.id()).unwrap();
        let guard_pid = guard.pid();
        guard.release();
        assert!(!alive(guard_pid));
        assert!(dir.path().exists());
        assert!(
            sleeper.try_wait().unwrap().is_none(),
            "the process was stopped"
        );
        sleeper.kill().unwrap();
        let _ = sleeper.wait();
    }
}
