//! A metrics list body through the controller's list scanner
//! (`hpa_controller::metrics_client::scan`), as a `metrics.k8s.io` pod
//! metrics list and as a custom metrics list of either version: it never
//! panics, and whatever it reads, the raw serde types read the same (it may
//! give up where they read, never read where they fail or read otherwise).
#![no_main]

use hpa_controller::metrics_client::raw::{CustomValue, CustomVersion, RawPod};
use hpa_controller::metrics_client::scan;
use hpa_controller::metrics_client::slim::{
    CustomList, MetricValueList, MetricValueListV1Beta1, RawPodMetricsList,
};
use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;

fn pods_by_serde(text: &str) -> Result<Vec<RawPod<'_>>, serde_json::Error> {
    let list: RawPodMetricsList<'_> = serde_json::from_str(text)?;
    Ok(list.items.into_iter().map(RawPod::from).collect())
}

fn custom_by_serde(
    text: &str,
    version: CustomVersion,
) -> Result<Vec<CustomValue<'_, &str>>, serde_json::Error> {
    let values: Vec<CustomValue<'_, &RawValue>> = match version {
        CustomVersion::V1Beta2 => serde_json::from_str::<MetricValueList<'_, &RawValue>>(text)?
            .into_values()
            .collect(),
        CustomVersion::V1Beta1 => {
            serde_json::from_str::<MetricValueListV1Beta1<'_, &RawValue>>(text)?
                .into_values()
                .collect()
        }
    };
    Ok(values.into_iter().map(CustomValue::raw_text).collect())
}

fuzz_target!(|text: &str| {
    if let Some(fast) = scan::pod_metrics(text) {
        let slow = pods_by_serde(text)
            .unwrap_or_else(|e| panic!("the scanner read {text:?}, serde fails: {e}"));
        assert_eq!(fast, slow, "{text:?}");
    }
    for version in [CustomVersion::V1Beta2, CustomVersion::V1Beta1] {
        if let Some(fast) = scan::custom_values(text, version) {
            let slow = custom_by_serde(text, version).unwrap_or_else(|e| {
                panic!("the scanner read {text:?} ({version:?}), serde fails: {e}")
            });
            assert_eq!(fast, slow, "{text:?}");
        }
    }
});
