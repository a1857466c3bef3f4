//! A child's announcement: the lines it prints on stdout once it serves.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::BIN;

/// Reads `child`'s stdout (piped) line by line until `read` makes
/// something of a line, for at most `within`; `None` if stdout ends first.
/// The rest is drained in the background, so that the child never blocks
/// on a full pipe.
pub async fn wait_for_announcement<T>(
    child: &mut Child,
    within: Duration,
    mut read: impl FnMut(&str) -> Option<T>,
) -> Option<T> {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let found = tokio::time::timeout(within, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(found) = read(&line) {
                return Some(found);
            }
        }
        None
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    found
}

/// Spawns `hpa-harness ARGS` and returns it with the rest of the first
/// stdout line starting with `prefix` (trimmed). The process is killed when
/// the returned `Child` drops. Its stderr goes to the test's (`inherit`) or
/// nowhere.
pub async fn spawn(args: &[&str], prefix: &str, stderr: Stdio) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let value = wait_for_announcement(&mut child, Duration::from_secs(60), |line| {
        line.strip_prefix(prefix).map(|v| v.trim().to_owned())
    })
    .await
    .unwrap_or_else(|| panic!("hpa-harness {args:?} printed no {prefix:?} line"));
    (child, value)
}
