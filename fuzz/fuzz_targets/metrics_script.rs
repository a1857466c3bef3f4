//! The fake metrics server's script (what `PUT /control/v1/script` takes),
//! as YAML and as JSON: reading it never panics or runs away.
#![no_main]

use fake_metrics_server::script::{Script, from_json, from_yaml};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = from_yaml::<Script>(text);
    let _ = from_json::<Script>(text);
});
