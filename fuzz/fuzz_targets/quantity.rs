//! Kubernetes quantities (`500m`, `1.5Gi`, `1e3`): parsing never panics;
//! what parses prints as text that parses back to no nearer zero than it
//! (finer than a nano it is rounded away from zero, as Go's canonical form
//! is), and printing that again settles after one format change.
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
    // Rounding is away from zero (Go's inf.RoundUp): never towards it.
    let towards_zero = if q.is_negative() {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Less
    };
    assert_ne!(again.cmp(&q), towards_zero, "{text:?} -> {printed:?}");
    // The printed form may change format once, as Go's does ("62.5Ki"
    // prints "64000": BinarySI with no exact binary suffix; "64000" read
    // back is DecimalSI and prints "64k"); after that it is a fixed point.
    let reprinted = again.to_string();
    let third = Quantity::parse(&reprinted)
        .unwrap_or_else(|e| panic!("{printed:?} printed as {reprinted:?}, which does not parse: {e}"));
    assert_eq!(third.cmp(&again), std::cmp::Ordering::Equal, "{printed:?} -> {reprinted:?}");
    assert_eq!(third.to_string(), reprinted, "{text:?} -> {printed:?} -> {reprinted:?} is not canonical");
    let _ = Quantity::parse_non_negative(text);
});
