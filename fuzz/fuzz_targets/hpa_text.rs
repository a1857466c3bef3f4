//! A cached HPA's text through the controller's fast path
//! (`hpa_controller::hpa_decode`): it never panics, and whatever it reads,
//! `serde_json` reads the same (it may give up where `serde_json` reads,
//! never read where `serde_json` fails or reads otherwise).
#![no_main]

use libfuzzer_sys::fuzz_target;

/// `fast` is what `serde_json` reads of `text`, as the same type.
fn agrees<T>(fast: &T, text: &str)
where
    T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let slow: T = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("the fast path read {text:?}, serde_json fails: {e}"));
    assert_eq!(fast, &slow, "{text:?}");
}

fuzz_target!(|text: &str| {
    if let Some(fast) = hpa_controller::hpa_decode::hpa(text) {
        agrees(&fast, text);
    }
});
