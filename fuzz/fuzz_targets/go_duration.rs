//! Go durations (`1m30s`, `-1.5h`, `300ms`) of the controller's flags and of
//! the metrics script: parsing never panics, and the script's formatter
//! prints what parses as text that parses back to the same span.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = hpa_harness::controller::config::parse_go_duration(text);
    if let Ok(d) = fake_metrics_server::script::parse_go_duration(text) {
        let printed = fake_metrics_server::script::format_go_duration(d);
        let again = fake_metrics_server::script::parse_go_duration(&printed)
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which does not parse: {e}"));
        assert_eq!(d, again, "{text:?} -> {printed:?}");
    }
});
