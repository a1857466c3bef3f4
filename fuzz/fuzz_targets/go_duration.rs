//! Go durations (`1m30s`, `-1.5h`, `300ms`) through the one parser every
//! part of the workspace uses (`hpa_core::go_duration`, a port of Go's
//! `time.ParseDuration`): parsing never panics, and what parses prints (Go's
//! `Duration.String()`) as text that parses back to the same span.
#![no_main]

use hpa_core::go_duration::{format, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(d) = parse(text) {
        let printed = format(d);
        let again = parse(&printed)
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
        assert_eq!(d, again, "{text:?} -> {printed:?}");
    }
});
