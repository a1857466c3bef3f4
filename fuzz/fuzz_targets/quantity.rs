//! Kubernetes quantities (`500m`, `1.5Gi`, `1e3`): parsing never panics;
//! what parses prints as text that parses back to no less than it (finer
//! than a nano it is rounded up, as Go's canonical form is), and printing
//! that again changes nothing.
#![no_main]

use hpa_core::quantity::Quantity;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(q) = Quantity::parse(text) else {
        return;
    };
    let _ = q.milli_value();
    for scale in [-9, -3, 0, 3, 9] {
        let _ = q.scaled_value_i128(scale);
    }
    let printed = q.to_string();
    let again = Quantity::parse(&printed)
        .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
    assert_ne!(again.cmp(&q), std::cmp::Ordering::Less, "{text:?} -> {printed:?}");
    assert_eq!(again.to_string(), printed, "{text:?} -> {printed:?} is not canonical");
    let _ = Quantity::parse_non_negative(text);
});
