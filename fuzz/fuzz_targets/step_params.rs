//! The Gherkin step parameters (`{duration}`, `{quantity}`, `{values}`,
//! `{kind}`, quoted text): parsing never panics.
#![no_main]

use hpa_harness::gherkin::params::{self, Duration, Quantity, Values, WorkloadKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = text.parse::<Duration>();
    if let Ok(q) = text.parse::<Quantity>() {
        let _ = q.to_string();
    }
    let _ = text.parse::<Values>();
    let _ = text.parse::<WorkloadKind>();
    let _ = params::split_list(text);
    let _ = params::unescape(text);
});
