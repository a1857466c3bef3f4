//! The sim's PATCH handling: the first byte picks the patch type, the rest
//! is the body, applied to a Deployment; parsing, patching and the type
//! check of the result never panic.
#![no_main]

use hpa_sim::patch::{self, PatchKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((first, body)) = data.split_first() else {
        return;
    };
    let kind = match first % 4 {
        0 => PatchKind::Merge,
        1 => PatchKind::Json,
        2 => PatchKind::Strategic,
        _ => PatchKind::Apply,
    };
    let Ok(parsed) = patch::parse_body(kind, body) else {
        return;
    };
    let mut target = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx",
                    "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}]}]}}},
        "status": {"conditions": [{"type": "Available", "status": "True"}]}
    });
    if patch::apply(kind, &mut target, &parsed).is_ok() {
        let def = hpa_sim::resources::find("apps", "v1", "deployments");
        if let Some(def) = def {
            let _ = hpa_sim::validate::type_error(def, &target);
        }
        let _ = hpa_sim::validate::scale_replicas("web", &target);
    }
});
