//! A metrics list body through the controller's list scanner
//! (`hpa_controller::metrics_client::scan`), as a `metrics.k8s.io` pod
//! metrics list and as a custom metrics list of either version: it never
//! panics, and whatever it reads, the raw serde types read the same (it may
//! give up where they read, never read where they fail or read otherwise).
#![no_main]

use hpa_controller::metrics_client::raw::CustomVersion;
use hpa_controller::metrics_client::scan;
use hpa_controller::metrics_client::slim::{raw_custom_values, raw_pods};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Some(fast) = scan::pod_metrics(text) {
        let slow = raw_pods(text)
            .unwrap_or_else(|e| panic!("the scanner read {text:?}, serde fails: {e}"));
        assert_eq!(fast, slow, "{text:?}");
    }
    for version in [CustomVersion::V1Beta2, CustomVersion::V1Beta1] {
        if let Some(fast) = scan::custom_values(text, version) {
            let slow = raw_custom_values(text, version).unwrap_or_else(|e| {
                panic!("the scanner read {text:?} ({version:?}), serde fails: {e}")
            });
            assert_eq!(fast, slow, "{text:?}");
        }
    }
});
