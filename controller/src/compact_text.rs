//! The JSON text of a cached HPA (or of a kept decision trace), shortened
//! by a fixed dictionary of the fragments every such text repeats: field
//! names, kinds and types, conditions' reasons and upstream's condition
//! messages.
//!
//! An HPA's text is about 1.3 KB, of which a few hundred bytes are its
//! own (names, uid, times, values); the rest is the same in every HPA. Each
//! dictionary fragment found is written as two bytes, a marker and its
//! index, so the cached text is a quarter of the JSON. The marker (`0x01`)
//! never appears in JSON text (control characters are escaped inside
//! strings), and a text that holds one anyway keeps it, escaped: any text
//! comes back exactly as it went in.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

/// Starts a dictionary fragment; the next byte is its index plus one, or
/// 0 for a literal marker byte.
const MARKER: u8 = 0x01;

/// The fragments, at most 255. Longer fragments win where several match.
const FRAGMENTS: &[&str] = &[
    // The object and its metadata.
    r#"{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"#,
    r#""annotations":{"#,
    r#""creationTimestamp":""#,
    r#"","generation":"#,
    r#","generation":"#,
    r#""labels":{"#,
    r#","name":""#,
    r#""name":""#,
    r#"","namespace":""#,
    r#","namespace":""#,
    r#"","resourceVersion":""#,
    r#","resourceVersion":""#,
    r#"","uid":""#,
    r#""},"spec":{"#,
    r#"},"spec":{"#,
    r#""managedFields":["#,
    r#""ownerReferences":["#,
    r#""finalizers":["#,
    // The spec.
    r#""behavior":{"#,
    r#""scaleDown":{"#,
    r#""scaleUp":{"#,
    r#""policies":[{"periodSeconds":"#,
    r#",{"periodSeconds":"#,
    r#","type":"Percent","value":"#,
    r#","type":"Pods","value":"#,
    r#""selectPolicy":"Max","#,
    r#""selectPolicy":"Min","#,
    r#""selectPolicy":"Disabled","#,
    r#""stabilizationWindowSeconds":"#,
    r#""tolerance":""#,
    r#""maxReplicas":"#,
    r#","metrics":[{"#,
    r#","minReplicas":"#,
    r#","scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":""#,
    r#","scaleTargetRef":{"apiVersion":"apps/v1","kind":"StatefulSet","name":""#,
    r#","scaleTargetRef":{"apiVersion":""#,
    r#""resource":{"name":"cpu","target":{"#,
    r#""resource":{"name":"memory","target":{"#,
    r#""resource":{"name":""#,
    r#""containerResource":{"container":""#,
    r#""external":{"metric":{"name":""#,
    r#""object":{"describedObject":{"apiVersion":""#,
    r#""pods":{"metric":{"name":""#,
    r#""metric":{"name":""#,
    r#""selector":{"matchLabels":{"#,
    r#""selector":{"matchExpressions":[{"key":""#,
    r#""},"target":{"#,
    r#"},"target":{"#,
    r#","target":{"#,
    r#""averageUtilization":"#,
    r#""averageValue":""#,
    r#","type":"Utilization"}},"type":"Resource"}"#,
    r#"","type":"AverageValue"}},"type":"Resource"}"#,
    r#"","type":"AverageValue"}},"type":"Pods"}"#,
    r#"","type":"AverageValue"}},"type":"External"}"#,
    r#"","type":"AverageValue"}},"type":"Object"}"#,
    r#"","type":"Value"}},"type":"External"}"#,
    r#"","type":"Value"}},"type":"Object"}"#,
    r#","type":"Utilization"}},"type":"ContainerResource"}"#,
    r#""type":"AverageValue""#,
    r#""type":"Utilization""#,
    r#""type":"Value""#,
    r#""value":""#,
    r#"}],"minReplicas":"#,
    // The status.
    r#"}},"status":{"conditions":[{"lastTransitionTime":""#,
    r#"},"status":{"conditions":[{"lastTransitionTime":""#,
    r#""status":{"conditions":[{"lastTransitionTime":""#,
    r#"},{"lastTransitionTime":""#,
    r#"","message":""#,
    r#"","observedGeneration":"#,
    r#","observedGeneration":"#,
    r#","reason":""#,
    r#"","status":"True","type":"AbleToScale"}"#,
    r#"","status":"False","type":"AbleToScale"}"#,
    r#"","status":"True","type":"ScalingActive"}"#,
    r#"","status":"False","type":"ScalingActive"}"#,
    r#"","status":"True","type":"ScalingLimited"}"#,
    r#"","status":"False","type":"ScalingLimited"}"#,
    r#"],"currentMetrics":[{"#,
    r#"}],"currentMetrics":[{"#,
    r#""resource":{"current":{"averageUtilization":"#,
    r#""resource":{"current":{"averageValue":""#,
    r#""external":{"current":{"averageValue":""#,
    r#""external":{"current":{"value":""#,
    r#""object":{"current":{"value":""#,
    r#""object":{"current":{"averageValue":""#,
    r#""pods":{"current":{"averageValue":""#,
    r#""current":{"averageValue":""#,
    r#""current":{"value":""#,
    r#","averageValue":""#,
    r#""},"name":"cpu"},"type":"Resource"}"#,
    r#""},"name":"memory"},"type":"Resource"}"#,
    r#""},"metric":{"name":""#,
    r#""},"type":"Pods"}"#,
    r#""}}},"type":"External"}"#,
    r#""},"type":"External"}"#,
    r#""},"type":"Object"}"#,
    r#"],"currentReplicas":"#,
    r#","currentReplicas":"#,
    r#","desiredReplicas":"#,
    r#""lastScaleTime":""#,
    r#","lastScaleTime":""#,
    // Condition reasons.
    "SucceededGetScale",
    "FailedGetScale",
    "ReadyForNewScale",
    "SucceededRescale",
    "FailedRescale",
    "FailedUpdateScale",
    "ScaleDownStabilized",
    "ScaleUpStabilized",
    "ValidMetricFound",
    "InvalidMetricSourceType",
    "InvalidSelector",
    "AmbiguousSelector",
    "SelectorRequired",
    "FailedGetResourceMetric",
    "FailedGetContainerResourceMetric",
    "FailedGetPodsMetric",
    "FailedGetObjectMetric",
    "FailedGetExternalMetric",
    "FailedComputeMetricsReplicas",
    "DesiredWithinRange",
    "TooFewReplicas",
    "TooManyReplicas",
    "ScaleUpLimit",
    "ScaleDownLimit",
    "ScalingDisabled",
    "ScaledToZero",
    "NotScaledToZero",
    // Upstream's condition messages, and their usual parts.
    "recommended size matches current size",
    "the HPA controller was able to get the target's current scale",
    "the HPA controller was able to update the target scale to ",
    "the HPA was able to successfully calculate a replica count from ",
    "the desired count is within the acceptable range",
    "the desired replica count is less than the minimum replica count",
    "the desired replica count is more than the maximum replica count",
    "the time since the previous scale is still within both the downscale and upscale forbidden windows",
    "recent recommendations were higher than current one, applying the highest recent recommendation",
    "recent recommendations were lower than current one, applying the lowest recent recommendation",
    "the desired replica count is increasing faster than the maximum scale rate",
    "the desired replica count is decreasing faster than the maximum scale rate",
    "the HPA was unable to compute the replica count: ",
    "the HPA controller was unable to get the target's current scale: ",
    "the HPA controller was unable to update the target scale: ",
    "scaling is disabled since the replica count of the target is zero",
    "cpu resource utilization (percentage of request)",
    "memory resource utilization (percentage of request)",
    " resource utilization (percentage of request)",
    "memory resource",
    "cpu resource",
    "pods metric ",
    "external metric ",
    "(&LabelSelector{MatchLabels:map[string]string{",
    ",},MatchExpressions:[]LabelSelectorRequirement{},})",
    "MatchExpressions:[]LabelSelectorRequirement{",
    "unable to get metric ",
    "unable to get metrics for resource ",
    "unable to fetch metrics from ",
    "did not receive metrics for targeted pods (pods might be unready)",
    "invalid metrics (1 invalid out of 1), first error is: ",
    "failed to get ",
    // A decision trace (hpa_core::DecisionTrace).
    r#"{"hpa":""#,
    r#"","now":""#,
    r#"","scale":{"spec_replicas":"#,
    r#","status_replicas":"#,
    r#","selector":""#,
    r#""},"min_replicas":"#,
    r#","max_replicas":"#,
    r#","tolerances":{"scale_down":0.1,"scale_up":0.1},"rule":""#,
    r#","tolerances":{"scale_down":"#,
    r#","scale_up":"#,
    r#"},"rule":""#,
    r#"","metrics":[{"index":0,"type_":""#,
    r#"","metrics":[],"chosen_metric":""#,
    r#",{"index":"#,
    r#","type_":""#,
    r#"","name":""#,
    r#"","target":""#,
    r#"","current":""#,
    r#"","ratio":"#,
    r#","new_ratio":null,"ready_pods":null,"proposal":"#,
    r#","new_ratio":"#,
    r#","ready_pods":"#,
    r#","proposal":"#,
    r#","error":null,"pods":[{"pod":""#,
    r#","error":null,"pods":[]}"#,
    r#","error":""#,
    r#"","pods":["#,
    r#"","class":"ready","sample":"#,
    r#"","class":"unready","sample":"#,
    r#"","class":"missing","sample":"#,
    r#"","class":"ignored","sample":"#,
    r#","assumed":null}"#,
    r#","assumed":"#,
    r#",{"pod":""#,
    r#"}]}],"chosen_metric":""#,
    r#"],"chosen_metric":""#,
    r#"","prenormalized":"#,
    r#","stabilized":"#,
    r#","stabilization":"ReadyForNewScale","limited":"#,
    r#","stabilization":""#,
    r#"","limited":"#,
    r#","limit_reason":"DesiredWithinRange","desired":"#,
    r#","limit_reason":""#,
    r#"","desired":"#,
    r#","rescale":false,"reason":""}"#,
    r#","rescale":true,"reason":""#,
    r#","rescale":"#,
    "% utilization",
    " (average value)",
    "m average value",
    "m average",
    // Frequent values.
    "T00:00:00Z",
    ":00Z",
    r#""True""#,
    r#""False""#,
    r#""Unknown""#,
    "kube-controller-manager",
    "hpa-harness",
];

/// The fragments' matcher: leftmost, longest first. (`None` would mean
/// the fixed list did not build, which the tests rule out: texts are then
/// kept whole.)
fn matcher() -> Option<&'static AhoCorasick> {
    static MATCHER: OnceLock<Option<AhoCorasick>> = OnceLock::new();
    MATCHER
        .get_or_init(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(FRAGMENTS)
                .ok()
        })
        .as_ref()
}

/// A text shortened (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactText(Box<[u8]>);

impl CompactText {
    /// `text`, shortened.
    pub fn new(text: &str) -> Self {
        let mut out = Vec::with_capacity(text.len() / 2);
        let mut at = 0;
        for found in matcher().into_iter().flat_map(|m| m.find_iter(text)) {
            escape_into(&mut out, &text.as_bytes()[at..found.start()]);
            // At most 255 fragments (a test checks): the index fits.
            out.push(MARKER);
            out.push(u8::try_from(found.pattern().as_usize() + 1).unwrap_or(0));
            at = found.end();
        }
        escape_into(&mut out, &text.as_bytes()[at..]);
        Self(out.into_boxed_slice())
    }

    /// The text again.
    pub fn text(&self) -> String {
        // An HPA's text comes back at four to five times its compact
        // length: room for it up front, not a regrowth's copy.
        let mut out = Vec::with_capacity(self.0.len() * 6);
        let mut bytes = self.0.iter().copied();
        while let Some(byte) = bytes.next() {
            if byte != MARKER {
                out.push(byte);
                continue;
            }
            match bytes.next() {
                Some(0) | None => out.push(MARKER),
                Some(index) => {
                    let fragment = FRAGMENTS.get(usize::from(index) - 1).unwrap_or(&"");
                    out.extend_from_slice(fragment.as_bytes());
                }
            }
        }
        // What went in was text, and comes out whole.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Its bytes, as [`Self::from_bytes`] takes them back.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// A compact text from bytes [`Self::as_bytes`] gave (any bytes read
    /// back as text: a byte that is not UTF-8 as U+FFFD).
    pub fn from_bytes(bytes: &[u8]) -> Self {
        Self(bytes.into())
    }

    /// Its bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Copies `bytes`, a literal marker written as the marker and 0.
fn escape_into(out: &mut Vec<u8>, bytes: &[u8]) {
    for &byte in bytes {
        out.push(byte);
        if byte == MARKER {
            out.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_dictionary_fits_its_index_byte_and_builds() {
        assert!(FRAGMENTS.len() <= 255, "{} fragments", FRAGMENTS.len());
        assert!(
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(FRAGMENTS)
                .is_ok()
        );
        assert!(
            FRAGMENTS
                .iter()
                .all(|f| !f.is_empty() && !f.contains('\u{1}'))
        );
        let distinct: std::collections::BTreeSet<&str> = FRAGMENTS.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            FRAGMENTS.len(),
            "a fragment is listed twice"
        );
        assert!(matcher().is_some());
    }

    /// A load HPA's text: a quarter of its length, and whole again.
    #[test]
    fn an_hpa_s_text_comes_back_whole_and_shorter() {
        let text = r#"{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"name":"w0","namespace":"load-0","resourceVersion":"1611","uid":"00000000-0000-4000-8000-000000000008"},"spec":{"maxReplicas":2,"metrics":[{"resource":{"name":"cpu","target":{"averageUtilization":50,"type":"Utilization"}},"type":"Resource"}],"minReplicas":1,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"w0"}},"status":{"conditions":[{"lastTransitionTime":"2026-01-01T00:01:15Z","message":"recommended size matches current size","observedGeneration":1,"reason":"ReadyForNewScale","status":"True","type":"AbleToScale"},{"lastTransitionTime":"2026-01-01T00:01:15Z","message":"the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)","observedGeneration":1,"reason":"ValidMetricFound","status":"True","type":"ScalingActive"},{"lastTransitionTime":"2026-01-01T00:01:15Z","message":"the desired count is within the acceptable range","observedGeneration":1,"reason":"DesiredWithinRange","status":"False","type":"ScalingLimited"}],"currentMetrics":[{"resource":{"current":{"averageUtilization":50,"averageValue":"100m"},"name":"cpu"},"type":"Resource"}],"currentReplicas":1,"desiredReplicas":1,"observedGeneration":1}}"#;
        let compact = CompactText::new(text);
        assert_eq!(compact.text(), text);
        assert!(
            compact.len() * 3 < text.len(),
            "{} of {} bytes",
            compact.len(),
            text.len()
        );
    }

    #[test]
    fn markers_and_unknown_text_come_back_whole() {
        for text in [
            "",
            "\u{1}",
            "\u{1}\u{0}\u{1}x",
            "plain",
            "é\u{1}ü ReadyForNewScale\u{1}",
        ] {
            assert_eq!(CompactText::new(text).text(), text, "{text:?}");
        }
    }

    proptest! {
        /// Any text, made of dictionary fragments, markers and anything
        /// else, comes back exactly.
        #[test]
        fn any_text_comes_back_whole(
            parts in proptest::collection::vec(
                prop_oneof![
                    (0..FRAGMENTS.len()).prop_map(|i| FRAGMENTS[i].to_string()),
                    Just("\u{1}".to_string()),
                    Just("\u{1}\u{0}".to_string()),
                    any::<String>(),
                ],
                0..20,
            )
        ) {
            let text: String = parts.concat();
            prop_assert_eq!(CompactText::new(&text).text(), text);
        }
    }
}
