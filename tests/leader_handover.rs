//! Two controller processes (`hpa-harness controller`, what the
//! `hpa-controller` image runs) with leader election against `hpa-harness
//! sim` as a process: one leads; stopped with SIGTERM it releases the Lease
//! and the other takes over within about a retry period (client-go's
//! `ReleaseOnCancel`); killed with SIGKILL it cannot, and the other takes
//! over once the Lease has gone unrenewed for its duration. Orders of
//! magnitude are asserted, not exact timings.
#![allow(clippy::unwrap_used)] // reason: test fixtures; a panic is the failure report

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

mod support;
use support::{Sim, free_port, harness_controller, temp_dir};

/// Short election timings keep the test bounded: the SIGKILL handover
/// takes about `LEASE`.
const LEASE: Duration = Duration::from_secs(4);
const FLAGS: [&str; 5] = [
    "--leader-elect-lease-duration=4s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=500ms",
    "--leader-elect-resource-namespace=default",
    "--horizontal-pod-autoscaler-sync-period=1s",
];

struct Replica {
    child: Child,
    port: u16,
}

fn start_controller(kubeconfig: &Path) -> Replica {
    let port = free_port();
    let child = harness_controller(kubeconfig)
        .args(FLAGS)
        .port(port)
        .spawn();
    Replica { child, port }
}

/// Whether the replica's `/metrics` says it leads (`false` while it does
/// not answer yet).
async fn leads(port: u16) -> bool {
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let request = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response).await;
    // The sample line itself (the HELP text starts the same).
    response.lines().any(|l| l.trim() == "hpa_harness_leader 1")
}

/// Waits (bounded) until one of `replicas` leads; its index.
async fn leader_of(replicas: &[&Replica], within: Duration) -> Option<usize> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        for (i, r) in replicas.iter().enumerate() {
            if leads(r.port).await {
                return Some(i);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

async fn signal(child: &mut Child, name: &str) {
    let pid = child.id().unwrap().to_string();
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &pid])
        .status()
        .await
        .unwrap();
    assert!(sent.success());
    tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the leader did not exit")
        .unwrap();
}

async fn holder(leases: &Api<Lease>) -> Option<String> {
    leases
        .get("hpa-harness-controller")
        .await
        .unwrap()
        .spec?
        .holder_identity
}

#[tokio::test]
async fn a_standby_takes_over_at_once_after_sigterm_and_after_the_lease_after_sigkill() {
    let dir = temp_dir("leader");
    let (_sim, kubeconfig, _) = Sim::new(dir.path()).spawn().await;
    let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let leases: Api<Lease> = Api::namespaced(kube::Client::try_from(config).unwrap(), "default");

    let a = start_controller(&kubeconfig);
    let b = start_controller(&kubeconfig);
    let first = leader_of(&[&a, &b], Duration::from_secs(30))
        .await
        .expect("no replica became leader");
    let (mut leader, standby) = if first == 0 { (a, b) } else { (b, a) };
    let first_holder = holder(&leases).await;
    assert!(!leads(standby.port).await, "two leaders");

    // SIGTERM: the Lease is released, the standby acquires it at its next
    // retry (500ms), far sooner than the lease duration.
    signal(&mut leader.child, "TERM").await;
    let stopped = Instant::now();
    leader_of(&[&standby], Duration::from_secs(20))
        .await
        .expect("the standby did not take over after SIGTERM");
    let after_term = stopped.elapsed();
    let second_holder = holder(&leases).await;
    assert_ne!(second_holder, first_holder);

    // A new standby; then SIGKILL the leader: nothing is released, so the
    // new standby waits until the Lease has gone unrenewed for its duration.
    let mut leader = standby;
    let standby = start_controller(&kubeconfig);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !leads(standby.port).await,
        "the new replica took a held lease"
    );
    signal(&mut leader.child, "KILL").await;
    let killed = Instant::now();
    leader_of(&[&standby], Duration::from_secs(30))
        .await
        .expect("the standby did not take over after SIGKILL");
    let after_kill = killed.elapsed();
    assert_ne!(holder(&leases).await, second_holder);

    eprintln!("handover: SIGTERM {after_term:?}, SIGKILL {after_kill:?}");
    assert!(
        after_term < Duration::from_secs(2),
        "SIGTERM handover took {after_term:?}"
    );
    assert!(
        after_kill >= LEASE / 2 && after_kill < 3 * LEASE,
        "SIGKILL handover took {after_kill:?}, the lease is {LEASE:?}"
    );
    assert!(
        after_kill > after_term * 2,
        "{after_term:?} vs {after_kill:?}"
    );
}
