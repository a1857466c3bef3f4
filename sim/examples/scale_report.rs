//! Scale report: memory and list/watch latency of the sim holding 100,000
//! pods (10,000 deployments of 10) and 10,000 HPAs.
//!
//! `cargo run -p hpa-sim --release --example scale_report [-- DEPLOYMENTS PODS_EACH]`
//! prints a Markdown table. Lists and watches go through the in-process kube
//! client, as the controller would use them (deserialization included).

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use hpa_sim::resources::find;
use hpa_sim::{Sim, SimConfig};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use serde_json::json;

const NAMESPACES: usize = 10;

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let deployments = args.first().copied().unwrap_or(10_000);
    let pods_each = args.get(1).copied().unwrap_or(10);
    let namespaces: Vec<String> = (0..NAMESPACES).map(|i| format!("load-{i}")).collect();
    let mut names = vec!["default".to_owned()];
    names.extend(namespaces.iter().cloned());
    let sim = Sim::new(SimConfig {
        namespaces: names,
        ..SimConfig::default()
    });
    let rss_start = rss_mib();
    let deploy_def = find("apps", "v1", "deployments").ok_or("no deployments")?;
    let hpa_def = find("autoscaling", "v2", "horizontalpodautoscalers").ok_or("no hpas")?;

    let t = Instant::now();
    for i in 0..deployments {
        let ns = &namespaces[i % NAMESPACES];
        let name = format!("app-{i}");
        let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": pods_each, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name, "tier": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "registry.example/app:1.0",
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}}});
        sim.create(deploy_def, ns, dep, false)?;
        let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                "minReplicas": 1, "maxReplicas": 50,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}}]}});
        sim.create(hpa_def, ns, hpa, false)?;
    }
    let fill = t.elapsed();
    let rss_full = rss_mib();
    let total_pods = deployments * pods_each;

    let client = sim.client();
    let all_pods: Api<Pod> = Api::all(client.clone());
    let all_hpas: Api<HorizontalPodAutoscaler> = Api::all(client.clone());
    let ns0: Api<Pod> = Api::namespaced(client.clone(), &namespaces[0]);

    let t = Instant::now();
    let listed = all_pods.list(&ListParams::default()).await?;
    let list_all = t.elapsed();
    assert_eq!(listed.items.len(), total_pods);
    drop(listed);

    let t = Instant::now();
    let mut pages = 0;
    let mut seen = 0;
    let mut lp = ListParams::default().limit(500);
    loop {
        let page = all_pods.list(&lp).await?;
        pages += 1;
        seen += page.items.len();
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => lp = lp.continue_token(&c),
            _ => break,
        }
    }
    let list_paged = t.elapsed();
    assert_eq!(seen, total_pods);

    let t = Instant::now();
    let hpas = all_hpas.list(&ListParams::default()).await?;
    let list_hpas = t.elapsed();
    assert_eq!(hpas.items.len(), deployments);
    drop(hpas);

    let mut selector_lists = Vec::new();
    for i in 0..200 {
        let idx = (i * NAMESPACES) % deployments;
        let t = Instant::now();
        let got = ns0
            .list(&ListParams::default().labels(&format!("app=app-{idx}")))
            .await?;
        selector_lists.push(t.elapsed());
        assert_eq!(got.items.len(), pods_each);
    }

    let mut gets = Vec::new();
    for i in 0..200 {
        let idx = (i * NAMESPACES) % deployments;
        let t = Instant::now();
        ns0.get(&format!("app-{idx}-0")).await?;
        gets.push(t.elapsed());
    }

    // Watch latency: one status patch -> the MODIFIED event on a watch of all pods.
    let rv = ns0
        .list(&ListParams::default().limit(1))
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut stream = all_pods
        .watch(&WatchParams::default().timeout(300), &rv)
        .await?
        .boxed();
    let mut watch_lat = Vec::new();
    for i in 0..200 {
        let idx = (i * NAMESPACES) % deployments;
        let t = Instant::now();
        ns0.patch_status(
            &format!("app-{idx}-1"),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"message": format!("tick {i}")}})),
        )
        .await?;
        loop {
            match stream.try_next().await? {
                Some(WatchEvent::Modified(p))
                    if p.metadata.name.as_deref() == Some(&format!("app-{idx}-1")) =>
                {
                    break;
                }
                Some(_) => {}
                None => return Err("watch ended".into()),
            }
        }
        watch_lat.push(t.elapsed());
    }

    // A reflector's initial sync (paged list of 500, then watch) over all pods.
    let (reader, writer) = kube::runtime::reflector::store::<Pod>();
    let t = Instant::now();
    let task = tokio::spawn(
        kube::runtime::reflector(
            writer,
            kube::runtime::watcher(all_pods.clone(), Default::default()),
        )
        .for_each(|_| async {}),
    );
    reader.wait_until_ready().await?;
    let reflector_sync = t.elapsed();
    task.abort();
    // Wait until it is gone: a watcher polled during runtime shutdown spins
    // on its closed client (no backoff) and would keep the process alive.
    let _ = task.await;
    drop(stream);
    let rss_end = rss_mib();

    println!("| measure | value |");
    println!("| --- | --- |");
    println!(
        "| objects | {total_pods} pods, {deployments} deployments, {deployments} HPAs in {NAMESPACES} namespaces |"
    );
    println!(
        "| fill time (direct API, pods created by the workload simulation) | {:.2} s |",
        fill.as_secs_f64()
    );
    println!(
        "| RSS empty -> full | {rss_start:.0} MiB -> {rss_full:.0} MiB ({:.0} bytes per pod incl. its share of deployments/HPAs) |",
        (rss_full - rss_start) * 1024.0 * 1024.0 / total_pods as f64
    );
    println!(
        "| list all pods, one request (kube client, deserialized) | {} |",
        ms(list_all)
    );
    println!(
        "| list all pods in pages of 500 ({pages} requests) | {} |",
        ms(list_paged)
    );
    println!("| list all HPAs | {} |", ms(list_hpas));
    println!(
        "| list pods by label selector in a namespace of {} pods (median of 200) | {} |",
        total_pods / NAMESPACES,
        ms(median(selector_lists))
    );
    println!("| get one pod (median of 200) | {} |", ms(median(gets)));
    println!(
        "| status patch -> watch event on all pods (median of 200) | {} |",
        ms(median(watch_lat))
    );
    println!(
        "| reflector initial sync of all pods | {} |",
        ms(reflector_sync)
    );
    println!("| RSS at end (after the lists above) | {rss_end:.0} MiB |");
    println!("| requests served | {} |", sim.requests().total());
    Ok(())
}
