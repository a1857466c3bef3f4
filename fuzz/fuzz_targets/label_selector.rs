//! Label and field selectors as the sim parses them from `labelSelector=`
//! and as the decision core parses them from a scale's `status.selector`:
//! parsing and matching never panic.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let labels: BTreeMap<String, String> = [("app", "web"), ("tier", "1"), ("a.b/c", "")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    if let Ok(sel) = hpa_sim::selector::Selector::parse(text) {
        let _ = hpa_sim::selector::matches_map(&sel, &labels);
        let _ = sel.matches(&|k| labels.get(k).cloned());
    }
    if let Ok(sel) = hpa_core::selector::Selector::parse(text) {
        let _ = sel.matches(&labels);
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        let _ = hpa_sim::selector::label_selector_string(&v);
    }
});
