//! A fast path for the shared metrics lists (`metrics.k8s.io` pods and
//! `custom.metrics.k8s.io` `pods/*/METRIC`), in the shape metrics servers
//! send them: it reads what [`super::slim`]' raw types would, in
//! about 60 % of the instructions, and gives up (`None`) on anything else,
//! which then goes through `serde_json` as before.
//!
//! Why: these lists were over half of a sync's instructions (callgrind,
//! docs/load-report.md). `serde_json`'s cost is per token (a key's
//! visitor, an `Option`'s, a borrowed `Cow`'s), about 20 instructions per
//! byte of a 300-byte entry; this scanner walks the bytes once, strings
//! sixteen bytes at a time ([`crate::json_scan`]'s cursor).
//!
//! It is sound by being strict: it accepts only JSON that `serde_json`
//! accepts with the same meaning for the same types, and returns `None`
//! for everything it does not handle (so never a different result, only
//! the slower path):
//! - a string with an escape (`\`) anywhere in the parts it reads or skips,
//!   or an unescaped control character (which `serde_json` rejects);
//! - a key the raw types read given twice (`serde` fails on it, or keeps
//!   the last: the slow path tells which);
//! - `null` or a number where the types read a string (a `Cow<str>`, a
//!   quantity's text), or anything but an integer or `null` for the
//!   custom values' window;
//! - a missing required field, nesting deeper than 64 levels, or any
//!   text after the list.
//!
//! Skipped values (creation timestamps, selectors, unknown keys) are still
//! checked to be JSON, as `serde_json` checks them when it skips them.

use std::borrow::Cow;

use super::raw::{CustomValue, CustomVersion, QuantityText, RawPod};
use crate::json_scan::Scan;

/// The entries of a `metrics.k8s.io` PodMetricsList body, or `None` when
/// the body is not in the shape this scanner reads.
pub fn pod_metrics(text: &str) -> Option<Vec<RawPod<'_>>> {
    let mut scan = Scan::new(text);
    let mut items = Vec::new();
    scan.list(|scan| {
        items.push(scan.pod()?);
        Some(())
    })?;
    Some(items)
}

/// The values of a custom metrics list body of `version`, timestamps as
/// text, or `None` when the body is not in the shape this scanner reads.
pub fn custom_values(text: &str, version: CustomVersion) -> Option<Vec<CustomValue<'_, &'_ str>>> {
    let mut scan = Scan::new(text);
    let mut items = Vec::new();
    scan.list(|scan| {
        items.push(scan.custom_value(version)?);
        Some(())
    })?;
    Some(items)
}

/// The keys of one object read so far, one bit each (the [`Key`]s): a
/// key the types read may come once (given twice, the scanner gives up).
/// Bits, not the keys' texts: a list entry's keys were checked by
/// comparing strings, 2 % of a steady sync's instructions.
#[derive(Default)]
struct Seen(u8);

/// The bits of the keys [`Seen`] tracks, each within one kind of object.
struct Key;

impl Key {
    const API_VERSION: u8 = 1;
    const KIND: u8 = 1 << 1;
    const METADATA: u8 = 1 << 2;
    const ITEMS: u8 = 1 << 3;
    const DESCRIBED_OBJECT: u8 = 1 << 4;
    const METRIC: u8 = 1 << 5;
    const NAMESPACE: u8 = 1 << 6;
}

impl Seen {
    fn has(&self, key: u8) -> bool {
        self.0 & key != 0
    }

    /// Marks `key` as seen; `None` when it was already.
    fn first(&mut self, key: u8) -> Option<()> {
        if self.has(key) {
            return None;
        }
        self.0 |= key;
        Some(())
    }
}

/// Keeps a key's value read into `slot`; `None` when the key came before
/// (or the value did not read).
fn fill<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

impl<'a> Scan<'a> {
    /// A list: an object whose `items` array's elements `item` reads, its
    /// `apiVersion` and `kind` strings, its `metadata` a `ListMeta`, and
    /// nothing after it.
    fn list(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        let mut seen = Seen::default();
        self.object(|scan, key| match key {
            "apiVersion" => scan.string_once(&mut seen, Key::API_VERSION),
            "kind" => scan.string_once(&mut seen, Key::KIND),
            "metadata" => {
                seen.first(Key::METADATA)?;
                scan.list_meta()
            }
            "items" => {
                seen.first(Key::ITEMS)?;
                scan.array(&mut item)
            }
            _ => scan.value().map(drop),
        })?;
        // Only whitespace may follow.
        (self.peek().is_none()).then_some(())
    }

    /// A `ListMeta`: its string fields strings or `null`, its count an
    /// integer or `null`, anything else skipped.
    fn list_meta(&mut self) -> Option<()> {
        self.object(|scan, key| match key {
            "continue" | "resourceVersion" | "selfLink" => scan.null_or(Self::string).map(drop),
            "remainingItemCount" => scan.null_or(Self::integer).map(drop),
            _ => scan.value().map(drop),
        })
    }

    /// A PodMetrics entry.
    fn pod(&mut self) -> Option<RawPod<'a>> {
        let mut seen = Seen::default();
        let (mut name, mut namespace, mut labels) = (None, None, None);
        let mut labels_repeated = false;
        let (mut timestamp, mut window, mut containers) = (None, None, None);
        self.object(|scan, key| match key {
            "apiVersion" => scan.string_once(&mut seen, Key::API_VERSION),
            "kind" => scan.string_once(&mut seen, Key::KIND),
            "metadata" => {
                seen.first(Key::METADATA)?;
                let mut seen_labels = false;
                scan.object(|scan, key| match key {
                    "name" => fill(&mut name, scan.null_or(Self::string)),
                    "namespace" => fill(&mut namespace, scan.null_or(Self::string)),
                    "labels" => {
                        labels_repeated |= seen_labels;
                        seen_labels = true;
                        labels = Some(scan.value()?).filter(|text| *text != "null");
                        Some(())
                    }
                    _ => scan.value().map(drop),
                })
            }
            "timestamp" => fill(&mut timestamp, scan.value()),
            "window" => fill(&mut window, scan.string()),
            "containers" => fill(&mut containers, scan.value()),
            _ => scan.value().map(drop),
        })?;
        Some(RawPod {
            name: name.flatten().map(Cow::Borrowed),
            namespace: namespace.flatten().map(Cow::Borrowed),
            labels,
            labels_repeated,
            timestamp: timestamp?,
            window: Cow::Borrowed(window?),
            containers,
        })
    }

    /// A custom metrics value of `version`.
    fn custom_value(&mut self, version: CustomVersion) -> Option<CustomValue<'a, &'a str>> {
        let mut seen = Seen::default();
        let mut name = None;
        let (mut timestamp, mut window, mut value) = (None, None, None);
        let (metric_key, window_key) = match version {
            CustomVersion::V1Beta2 => ("metric", "windowSeconds"),
            CustomVersion::V1Beta1 => ("metricName", "window"),
        };
        self.object(|scan, key| match key {
            "describedObject" => {
                seen.first(Key::DESCRIBED_OBJECT)?;
                let mut described = Seen::default();
                scan.object(|scan, key| match key {
                    "kind" => scan.string_once(&mut described, Key::KIND),
                    "namespace" => scan.string_once(&mut described, Key::NAMESPACE),
                    "apiVersion" => scan.string_once(&mut described, Key::API_VERSION),
                    "name" => fill(&mut name, scan.string()),
                    _ => scan.value().map(drop),
                })
            }
            // v1beta2's `metric: {name}`: its name is required.
            "metric" if key == metric_key => {
                seen.first(Key::METRIC)?;
                let mut metric_name = None;
                scan.object(|scan, key| match key {
                    "name" => fill(&mut metric_name, scan.string()),
                    _ => scan.value().map(drop),
                })?;
                metric_name.map(drop)
            }
            "metricName" if key == metric_key => scan.string_once(&mut seen, Key::METRIC),
            "timestamp" => fill(&mut timestamp, scan.value()),
            "value" => fill(&mut value, scan.string()),
            key if key == window_key => fill(&mut window, scan.null_or(Self::integer)),
            _ => scan.value().map(drop),
        })?;
        // Both are required.
        (seen.has(Key::DESCRIBED_OBJECT) && seen.has(Key::METRIC)).then_some(())?;
        Some(CustomValue {
            name: Cow::Borrowed(name.unwrap_or_default()),
            value: QuantityText(Cow::Borrowed(value?)),
            timestamp: timestamp?,
            window_seconds: window.flatten(),
        })
    }

    /// A string under a key that may come once (`key`, one of [`Seen`]'s
    /// bits): its content is not kept.
    fn string_once(&mut self, seen: &mut Seen, key: u8) -> Option<()> {
        seen.first(key)?;
        self.string().map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics_client::slim;

    /// What the raw serde types read, as the scanner gives it.
    fn pods_by_serde(text: &str) -> Option<Vec<RawPod<'_>>> {
        slim::raw_pods(text).ok()
    }

    fn custom_by_serde(text: &str, version: CustomVersion) -> Option<Vec<CustomValue<'_, &str>>> {
        slim::raw_custom_values(text, version).ok()
    }

    const PODS: &str = r#"{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{"resourceVersion":""},
      "items":[
        {"metadata":{"name":"web-0","namespace":"ns","creationTimestamp":"2026-11-25T19:53:57Z","labels":{"app":"web","pod-template-hash":"5d9"}},
         "timestamp":"2026-11-25T19:53:57Z","window":"15.2s",
         "containers":[{"name":"app","usage":{"cpu":"250m","memory":"65536Ki"}},{"name":"side","usage":{"cpu":0.5,"memory":1e3}}]},
        {"apiVersion":"metrics.k8s.io/v1beta1","kind":"PodMetrics","metadata":{"name":"web-1","namespace":"ns","annotations":{"a":[true,false,null,-1.5e-3]}},
         "timestamp":"2026-11-25T19:53:58Z","window":"15s","containers":[]},
        {"metadata":{"name":"bare","labels":null},"timestamp":null,"window":"1m","containers":null,"extra":{}}
      ]}"#;

    const CUSTOM: &str = r#"{"apiVersion":"custom.metrics.k8s.io/v1beta2","kind":"MetricValueList","metadata":{},
      "items":[
        {"describedObject":{"kind":"Pod","namespace":"ns","name":"web-0","apiVersion":"/v1"},"metric":{"name":"rps","selector":{"matchLabels":{"a":"b"}}},
         "timestamp":"2026-11-25T19:55:49Z","windowSeconds":5,"value":"10000m"},
        {"describedObject":{"name":"web-1"},"metric":{"name":"rps"},"timestamp":"2026-11-25T19:55:49Z","windowSeconds":null,"value":"3"},
        {"describedObject":{},"metric":{"name":"rps"},"timestamp":"x","value":"1k","other":[1,2]}
      ]}"#;

    const CUSTOM_V1BETA1: &str = r#"{"apiVersion":"custom.metrics.k8s.io/v1beta1","kind":"MetricValueList","metadata":{"selfLink":"/x"},
      "items":[{"describedObject":{"kind":"Pod","namespace":"ns","name":"web-0","apiVersion":"/v1"},"metricName":"rps",
         "timestamp":"2026-11-25T19:55:49Z","window":60,"value":"10","selector":null}]}"#;

    #[test]
    fn reads_what_the_serde_types_read() {
        let scanned = pod_metrics(PODS).unwrap();
        assert_eq!(Some(scanned.clone()), pods_by_serde(PODS));
        assert_eq!(scanned.len(), 3);
        assert_eq!(
            scanned[0].labels,
            Some(r#"{"app":"web","pod-template-hash":"5d9"}"#)
        );
        assert_eq!(scanned[2].labels, None);
        assert_eq!(scanned[2].containers, Some("null"));
        assert_eq!(scanned[2].timestamp, "null");
        for version in [CustomVersion::V1Beta2, CustomVersion::V1Beta1] {
            let text = match version {
                CustomVersion::V1Beta2 => CUSTOM,
                CustomVersion::V1Beta1 => CUSTOM_V1BETA1,
            };
            let scanned = custom_values(text, version).unwrap();
            assert_eq!(Some(scanned), custom_by_serde(text, version), "{version:?}");
        }
        assert_eq!(
            custom_values(CUSTOM, CustomVersion::V1Beta2).unwrap()[0].window_seconds,
            Some(5)
        );
    }

    #[test]
    fn gives_up_on_what_it_does_not_read() {
        for bad in [
            // An escape, read or skipped.
            r#"{"items":[{"metadata":{"name":"w\u0065b"},"timestamp":"t","window":"1s"}]}"#,
            r#"{"items":[{"metadata":{"annotations":{"a":"\n"}},"timestamp":"t","window":"1s"}]}"#,
            // A key read twice.
            r#"{"items":[{"metadata":{"name":"a","name":"b"},"timestamp":"t","window":"1s"}]}"#,
            r#"{"items":[],"items":[]}"#,
            // null or a number where a string is read.
            r#"{"items":[{"timestamp":"t","window":null}]}"#,
            r#"{"kind":null,"items":[]}"#,
            // Missing required fields.
            r#"{"items":[{"window":"1s"}]}"#,
            // Not JSON, or text after it.
            r#"{"items":[{"timestamp":"t","window":"1s",}]}"#,
            r#"{"items":[{"timestamp":01,"window":"1s"}]}"#,
            r#"{"items":[]} x"#,
            "\u{feff}{\"items\":[]}",
            r#"{"items":[{"timestamp":"t","window":"1s","x":tru}]}"#,
        ] {
            assert_eq!(pod_metrics(bad), None, "{bad}");
        }
        for bad in [
            r#"{"items":[{"describedObject":{},"metric":{"name":"m"},"timestamp":"t","value":5}]}"#,
            r#"{"items":[{"describedObject":{},"metric":{},"timestamp":"t","value":"5"}]}"#,
            r#"{"items":[{"describedObject":{},"metric":{"name":"m"},"timestamp":"t","value":"5","windowSeconds":1.5}]}"#,
            r#"{"items":[{"describedObject":{"name":null},"metric":{"name":"m"},"timestamp":"t","value":"5"}]}"#,
            // serde_json reads -0 as a float, which the window does not take.
            r#"{"items":[{"describedObject":{},"metric":{"name":"m"},"timestamp":"t","value":"5","windowSeconds":-0}]}"#,
        ] {
            assert!(
                custom_values(bad, CustomVersion::V1Beta2).is_none(),
                "{bad}"
            );
        }
    }

    /// Deeply nested skipped values: given up on, never a stack overflow.
    #[test]
    fn deep_nesting_is_given_up_on() {
        let deep = format!(
            r#"{{"items":[{{"timestamp":"t","window":"1s","x":{}1{}}}]}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        assert_eq!(pod_metrics(&deep), None);
    }

    /// The nesting limit holds at its edge in skipped values as in read
    /// ones: 64 levels in all (the list, its items and the entry, then the
    /// skipped value's arrays and its innermost object, array and object),
    /// one more given up on.
    #[test]
    fn skipped_values_nest_up_to_the_limit() {
        let nested = |arrays: usize| {
            format!(
                r#"{{"items":[{{"timestamp":"t","window":"1s","x":{}{{"a":[1,{{}}]}}{}}}]}}"#,
                "[".repeat(arrays),
                "]".repeat(arrays)
            )
        };
        let at_limit = nested(64 - 6);
        assert!(pod_metrics(&at_limit).is_some());
        assert_eq!(pod_metrics(&at_limit), pods_by_serde(&at_limit));
        let beyond = nested(64 - 5);
        assert_eq!(pod_metrics(&beyond), None);
        assert!(pods_by_serde(&beyond).is_some());
    }

    /// Generated bodies: keys the types read (given twice, or missing),
    /// values of every JSON kind (escapes, `null`, numbers, nesting), and
    /// whitespace. Whatever the scanner accepts, the serde types read the
    /// same way; and it accepts a good share of them.
    #[test]
    fn never_disagrees_with_serde_on_generated_bodies() {
        use proptest::prelude::*;
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;

        const KEYS: &[&str] = &[
            "apiVersion",
            "kind",
            "metadata",
            "items",
            "name",
            "namespace",
            "labels",
            "timestamp",
            "window",
            "containers",
            "describedObject",
            "metric",
            "metricName",
            "windowSeconds",
            "value",
            "creationTimestamp",
            "selector",
            "resourceVersion",
            "remainingItemCount",
            "x",
            "n\\u0061me",
        ];
        fn text() -> impl Strategy<Value = String> {
            prop_oneof![
                6 => "[a-z0-9./:-]{0,40}".prop_map(|s| format!("\"{s}\"")),
                // An escape, a non-ASCII or a control character anywhere in
                // the first three of the cursor's 16-byte chunks.
                1 => (
                    "[a-z0-9]{0,40}",
                    prop::sample::select(vec!["\\u0065", "\\\"", "é", "\t", "\\\\"]),
                    "[a-z]{0,6}"
                )
                    .prop_map(|(a, special, b)| format!("\"{a}{special}{b}\"")),
            ]
        }
        fn scalar() -> impl Strategy<Value = String> {
            prop_oneof![
                4 => text(),
                1 => prop::sample::select(vec![
                    "null", "true", "false", "0", "-0", "5", "-3", "01", "1.5", "2e3", "1.",
                    "9223372036854775808",
                ])
                .prop_map(String::from),
            ]
        }
        fn gap() -> impl Strategy<Value = &'static str> {
            prop::sample::select(vec!["", "", "", " ", "\n\t"])
        }
        fn object(members: Vec<(String, String, &'static str)>) -> String {
            let inner: Vec<String> = members
                .into_iter()
                .map(|(k, v, g)| format!("{g}\"{k}\"{g}:{g}{v}{g}"))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        fn value() -> impl Strategy<Value = String> {
            scalar().prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(
                        (
                            prop::sample::select(KEYS).prop_map(String::from),
                            inner.clone(),
                            gap()
                        ),
                        0..5
                    )
                    .prop_map(object),
                    prop::collection::vec(inner, 0..3).prop_map(|v| format!("[{}]", v.join(","))),
                ]
            })
        }
        fn list() -> impl Strategy<Value = String> {
            let item = prop::collection::vec(
                (
                    prop::sample::select(KEYS).prop_map(String::from),
                    value(),
                    gap(),
                ),
                0..8,
            )
            .prop_map(object);
            (prop::collection::vec(item, 0..4), gap(), gap()).prop_map(|(items, a, b)| {
                format!(
                    "{a}{{\"kind\":\"L\",\"metadata\":{{}},\"items\":[{}]}}{b}",
                    items.join(",")
                )
            })
        }
        // Items shaped as the lists' own, fields of every kind.
        fn pod_list() -> impl Strategy<Value = String> {
            let meta = prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "name",
                        "namespace",
                        "labels",
                        "creationTimestamp",
                        "x",
                    ])
                    .prop_map(String::from),
                    prop_oneof![3 => text(), 1 => value()],
                    gap(),
                ),
                0..5,
            )
            .prop_map(object);
            let field = prop_oneof![
                1 => (Just("metadata".to_string()), meta, gap()),
                3 => (
                    prop::sample::select(vec!["timestamp", "window", "containers", "apiVersion", "kind", "x"])
                        .prop_map(String::from),
                    prop_oneof![4 => text(), 1 => value()],
                    gap(),
                ),
            ];
            let item = prop::collection::vec(field, 2..8).prop_map(object);
            prop::collection::vec(item, 0..4)
                .prop_map(|items| format!("{{\"items\":[{}]}}", items.join(",")))
        }
        fn custom_list() -> impl Strategy<Value = String> {
            let described = prop::collection::vec(
                (
                    prop::sample::select(vec!["name", "kind", "namespace", "apiVersion", "x"])
                        .prop_map(String::from),
                    prop_oneof![4 => text(), 1 => value()],
                    gap(),
                ),
                0..4,
            )
            .prop_map(object);
            let field = prop_oneof![
                1 => (Just("describedObject".to_string()), described, gap()),
                1 => (Just("metric".to_string()), Just("{\"name\":\"m\"}".to_string()), gap()),
                3 => (
                    prop::sample::select(vec!["timestamp", "value", "windowSeconds", "window", "metricName", "x"])
                        .prop_map(String::from),
                    prop_oneof![4 => text(), 1 => scalar(), 1 => value()],
                    gap(),
                ),
            ];
            let item = prop::collection::vec(field, 3..8).prop_map(object);
            prop::collection::vec(item, 0..4)
                .prop_map(|items| format!("{{\"items\":[{}]}}", items.join(",")))
        }

        let mut runner = TestRunner::deterministic();
        let mut accepted = [0; 3];
        for round in 0..6000 {
            let which = round % 3;
            let body = match which {
                0 => pod_list().boxed(),
                1 => custom_list().boxed(),
                _ => list().boxed(),
            }
            .new_tree(&mut runner)
            .unwrap()
            .current();
            if let Some(scanned) = pod_metrics(&body) {
                accepted[which] += 1;
                assert_eq!(Some(scanned), pods_by_serde(&body), "{body}");
            }
            for version in [CustomVersion::V1Beta2, CustomVersion::V1Beta1] {
                if let Some(scanned) = custom_values(&body, version) {
                    accepted[which] += 1;
                    assert_eq!(Some(scanned), custom_by_serde(&body, version), "{body}");
                }
            }
        }
        // Not vacuous: shaped bodies are often in the scanner's shape.
        assert!(accepted[0] > 100 && accepted[1] > 100, "{accepted:?}");
    }

    /// Every cut and single-byte change of the sample bodies: whatever the
    /// scanner accepts, the serde types read the same way.
    #[test]
    fn never_disagrees_with_serde_on_mutated_bodies() {
        let replacements = [
            b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b'0', b'-', b'n', b' ', b'x', b'e',
        ];
        for text in [PODS, CUSTOM] {
            let bytes = text.as_bytes();
            let mut variants: Vec<Vec<u8>> = Vec::new();
            for at in 0..bytes.len() {
                variants.push(bytes[..at].to_vec());
                let mut removed = bytes.to_vec();
                removed.remove(at);
                variants.push(removed);
                for &b in &replacements {
                    let mut changed = bytes.to_vec();
                    changed[at] = b;
                    variants.push(changed);
                }
            }
            let (mut accepted, mut total) = (0, 0);
            for variant in variants {
                let Ok(variant) = String::from_utf8(variant) else {
                    continue;
                };
                total += 1;
                if text == PODS {
                    if let Some(scanned) = pod_metrics(&variant) {
                        accepted += 1;
                        assert_eq!(Some(scanned), pods_by_serde(&variant), "{variant}");
                    }
                } else if let Some(scanned) = custom_values(&variant, CustomVersion::V1Beta2) {
                    accepted += 1;
                    assert_eq!(
                        Some(scanned),
                        custom_by_serde(&variant, CustomVersion::V1Beta2),
                        "{variant}"
                    );
                }
            }
            // Not vacuous: many changes (in names, values, whitespace) keep
            // a body the scanner reads.
            assert!(accepted * 5 > total, "{accepted} of {total}");
        }
    }
}
