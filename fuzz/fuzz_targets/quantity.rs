//! Kubernetes quantities (`500m`, `1.5Gi`, `1e3`): parsing never panics, and
//! what parses prints as text that parses back to the same amount.
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
    assert_eq!(q.cmp(&again), std::cmp::Ordering::Equal, "{text:?} -> {printed:?}");
    let _ = Quantity::parse_non_negative(text);
});
