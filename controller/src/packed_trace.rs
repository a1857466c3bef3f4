//! A decision trace packed as bytes, as the decision log keeps it.
//!
//! Every HPA's latest decision is kept, each with its trace (the core's
//! explanation: the scale, every metric's proposal, every pod's share, the
//! normalization steps). Typed, a trace at 10 pods takes about 2 KB; as
//! JSON about 1.3 KB, which [`CompactText`] shortened to about 250 bytes,
//! but writing the JSON and finding its fragments was a fifth of a steady
//! sync's instructions (docs/load-report.md, "CPU per sync"). Packed, the
//! fields are written in order without names: integers as variable-length
//! numbers, floating-point numbers by their bits (any value reads back,
//! NaN and infinities included), the strings every trace repeats as one
//! byte, a pod's name as what it shares with the previous pod's and the
//! rest, the chosen metric as the index of the metric it names, and only
//! the longer texts of upstream's messages through [`CompactText`]. About
//! 200 bytes at 10 pods, and a few microseconds less per sync; read back
//! (`/debug/decisions`), it is the trace that was packed.

use std::sync::{Arc, LazyLock};

use hpa_core::DecisionTrace;
use hpa_core::calc::{POD_CLASSES, PodShare, Tolerances};
use hpa_core::decide::ScaleInfo;
use hpa_core::grouping::GroupRule;
use hpa_core::trace::MetricTrace;
use jiff::{SignedDuration, Timestamp};

use super::compact_text::CompactText;

/// Strings every trace repeats, written as their index: the metric
/// types, the rules and reasons of the normalization steps, upstream's
/// names of the resource metrics. The first is the empty string.
const WORDS: &[&str] = &[
    "",
    "Resource",
    "ContainerResource",
    "Pods",
    "Object",
    "External",
    "ReadyForNewScale",
    "ScaleUpStabilized",
    "ScaleDownStabilized",
    "DesiredWithinRange",
    "TooFewReplicas",
    "TooManyReplicas",
    "ScaleUpLimit",
    "ScaleDownLimit",
    "metrics failed",
    "SelectorRequired",
    "InvalidSelector",
    "AmbiguousSelector",
    "ScalingDisabled: the target has zero replicas",
    "cpu resource utilization (percentage of request)",
    "memory resource utilization (percentage of request)",
    "cpu resource",
    "memory resource",
    "cpu",
    "memory",
];

/// Each of [`WORDS`] by its index: a trace writes some 18 texts, and a
/// search of the list for each was a seventh of packing it.
static WORD_INDEX: LazyLock<foldhash::HashMap<&'static str, usize>> =
    LazyLock::new(|| WORDS.iter().enumerate().map(|(i, w)| (*w, i)).collect());

/// Texts at least this long go through [`CompactText`] (upstream's
/// messages and descriptions); shorter ones are written as they are.
const COMPACT_FROM: usize = 24;

/// A decision trace, packed (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedTrace(Box<[u8]>);

impl PackedTrace {
    /// `trace`, packed.
    pub fn new(trace: &DecisionTrace) -> Self {
        let mut out = Writer(Vec::with_capacity(256));
        out.trace(trace);
        Self(out.0.into_boxed_slice())
    }

    /// The trace again; `None` if the bytes do not read as a trace (they
    /// were packed here, so that would be a bug).
    pub fn trace(&self) -> Option<DecisionTrace> {
        let mut reader = Reader { bytes: &self.0 };
        let trace = reader.trace()?;
        reader.bytes.is_empty().then_some(trace)
    }

    /// Its bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it is empty (never: a trace has fields).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

struct Writer(Vec<u8>);

/// Small magnitudes, either sign, as small numbers.
fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(code: u64) -> i64 {
    ((code >> 1) as i64) ^ -((code & 1) as i64)
}

/// A pod rule's kind as a number below 64, written beside the pod's class.
fn rule_code(rule: &GroupRule) -> u8 {
    match rule {
        GroupRule::Counted => 0,
        GroupRule::TurnedUnready { .. } => 1,
        GroupRule::Pending => 2,
        GroupRule::NoReadyCondition => 3,
        GroupRule::NoStartTime => 4,
        GroupRule::NotReady { .. } => 5,
        GroupRule::SampleBeforeReady { .. } => 6,
        GroupRule::NeverReady { .. } => 7,
        GroupRule::NoSample => 8,
        GroupRule::Deleting { .. } => 9,
        GroupRule::Failed => 10,
        GroupRule::NotSelected { counted: false } => 11,
        GroupRule::NotSelected { counted: true } => 12,
    }
}

impl Writer {
    /// LEB128: seven bits a byte, low first.
    fn uint(&mut self, value: u64) {
        self.wide(u128::from(value));
    }

    fn wide(&mut self, mut value: u128) {
        while value >= 0x80 {
            self.0.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
    }

    fn int(&mut self, value: i64) {
        self.uint(zigzag(value));
    }

    /// `None` as 0, a value as its zigzag code plus one: one byte less
    /// than [`Self::opt`] for the small counts that are most of them.
    fn opt_int(&mut self, value: Option<i64>) {
        self.wide(value.map_or(0, |v| u128::from(zigzag(v)) + 1));
    }

    /// `None` as 0, a value as 1 and the value as `write` writes it.
    fn opt<T>(&mut self, value: Option<T>, write: impl FnOnce(&mut Self, T)) {
        match value {
            None => self.0.push(0),
            Some(value) => {
                self.0.push(1);
                write(self, value);
            }
        }
    }

    fn float(&mut self, value: f64) {
        self.0.extend_from_slice(&value.to_bits().to_le_bytes());
    }

    /// A string: a word's index, or its length and kind (as it is, or
    /// compact) and its bytes.
    fn text(&mut self, text: &str) {
        if let Some(&word) = WORD_INDEX.get(text) {
            self.uint(word as u64);
            return;
        }
        let words = WORDS.len() as u64;
        if text.len() >= COMPACT_FROM {
            let compact = CompactText::new(text);
            let bytes = compact.as_bytes();
            self.uint(words + ((bytes.len() as u64) << 1 | 1));
            self.0.extend_from_slice(bytes);
        } else {
            self.uint(words + ((text.len() as u64) << 1));
            self.0.extend_from_slice(text.as_bytes());
        }
    }

    /// A pod's name: the bytes it shares with the previous one, then the
    /// rest (a Deployment's pods share most of theirs).
    fn pod_name(&mut self, name: &str, previous: &str) {
        let mut shared = name
            .bytes()
            .zip(previous.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !name.is_char_boundary(shared) {
            shared -= 1;
        }
        self.uint(shared as u64);
        self.text(&name[shared..]);
    }

    fn time(&mut self, time: Timestamp) {
        self.int(time.as_second());
        self.int(i64::from(time.subsec_nanosecond()));
    }

    /// The times of a pod's rule; its kind went with the class (see
    /// [`rule_code`]).
    fn rule_times(&mut self, rule: &GroupRule) {
        match *rule {
            GroupRule::Counted
            | GroupRule::Pending
            | GroupRule::NoReadyCondition
            | GroupRule::NoStartTime
            | GroupRule::NoSample
            | GroupRule::Failed
            | GroupRule::NotSelected { .. } => {}
            GroupRule::TurnedUnready { since, delay_ends } => {
                self.time(since);
                self.time(delay_ends);
            }
            GroupRule::NotReady {
                since,
                delay_ends,
                initialization_ends,
            } => {
                self.opt(since, Self::time);
                self.time(delay_ends);
                self.time(initialization_ends);
            }
            GroupRule::SampleBeforeReady {
                ready_since,
                sample_time,
                window,
                initialization_ends,
            } => {
                self.time(ready_since);
                self.time(sample_time);
                self.int(window.as_secs());
                self.int(i64::from(window.subsec_nanos()));
                self.time(initialization_ends);
            }
            GroupRule::NeverReady {
                since,
                started,
                delay_ends,
            } => {
                self.opt(since, Self::time);
                self.time(started);
                self.time(delay_ends);
            }
            GroupRule::Deleting { since } => self.time(since),
        }
    }

    fn trace(&mut self, trace: &DecisionTrace) {
        // Destructured: a field added to the trace must be packed here.
        let DecisionTrace {
            hpa,
            now,
            scale,
            min_replicas,
            max_replicas,
            tolerances,
            rule,
            metrics,
            chosen_metric,
            prenormalized,
            stabilized,
            stabilization,
            limited,
            limit_reason,
            desired,
            rescale,
            reason,
        } = trace;
        let ScaleInfo {
            spec_replicas,
            status_replicas,
            selector,
            parsed_selector: _,
        } = scale;
        let Tolerances {
            scale_down,
            scale_up,
        } = tolerances;
        self.text(hpa);
        self.int(now.as_second());
        self.int(i64::from(now.subsec_nanosecond()));
        self.int(i64::from(*spec_replicas));
        self.int(i64::from(*status_replicas));
        self.text(selector);
        self.int(i64::from(*min_replicas));
        self.int(i64::from(*max_replicas));
        self.float(*scale_down);
        self.float(*scale_up);
        self.text(rule);
        self.uint(metrics.len() as u64);
        for metric in metrics {
            self.metric(metric);
        }
        // Most often the name of one of the metrics above.
        match metrics.iter().position(|m| m.name == *chosen_metric) {
            Some(index) => self.uint(index as u64 + 1),
            None => {
                self.uint(0);
                self.text(chosen_metric);
            }
        }
        self.opt_int(prenormalized.map(i64::from));
        self.opt_int(stabilized.map(i64::from));
        self.text(stabilization);
        self.opt_int(limited.map(i64::from));
        self.text(limit_reason);
        self.int(i64::from(*desired));
        self.0.push(u8::from(*rescale));
        self.text(reason);
    }

    fn metric(&mut self, metric: &MetricTrace) {
        let MetricTrace {
            index,
            type_,
            name,
            target,
            current,
            ratio,
            new_ratio,
            ready_pods,
            proposal,
            error,
            pods,
        } = metric;
        self.uint(*index as u64);
        self.text(type_);
        self.text(name);
        self.text(target);
        self.text(current);
        self.opt(*ratio, Self::float);
        self.opt(*new_ratio, Self::float);
        self.wide(ready_pods.map_or(0, |n| n as u128 + 1));
        self.opt_int(proposal.map(i64::from));
        self.opt(error.as_deref(), Self::text);
        self.uint(pods.len() as u64);
        let mut previous: &str = "";
        for pod in pods {
            let PodShare {
                pod,
                class,
                sample,
                assumed,
                why,
            } = pod;
            self.pod_name(pod, previous);
            previous = pod;
            // One of POD_CLASSES (the core's only ones); another reads
            // back as the first. The rule's kind shares its byte: a
            // counted pod costs nothing more.
            let class = POD_CLASSES.iter().position(|c| c == class).unwrap_or(0);
            self.0.push(class as u8 | rule_code(why) << 2);
            self.rule_times(why);
            self.opt_int(*sample);
            self.opt_int(*assumed);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(first)
    }

    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(taken)
    }

    fn uint(&mut self) -> Option<u64> {
        u64::try_from(self.wide()?).ok()
    }

    fn wide(&mut self) -> Option<u128> {
        let mut value = 0u128;
        for shift in (0..128).step_by(7) {
            let byte = self.byte()?;
            value |= u128::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn int(&mut self) -> Option<i64> {
        Some(unzigzag(self.uint()?))
    }

    fn int32(&mut self) -> Option<i32> {
        i32::try_from(self.int()?).ok()
    }

    fn opt_int(&mut self) -> Option<Option<i64>> {
        match self.wide()? {
            0 => Some(None),
            code => Some(Some(unzigzag(u64::try_from(code - 1).ok()?))),
        }
    }

    /// What [`Writer::opt`] wrote: 0, or 1 and a value `read` reads.
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.byte()? {
            0 => Some(None),
            1 => Some(Some(read(self)?)),
            _ => None,
        }
    }

    fn opt_int32(&mut self) -> Option<Option<i32>> {
        match self.opt_int()? {
            None => Some(None),
            Some(v) => Some(Some(i32::try_from(v).ok()?)),
        }
    }

    fn float(&mut self) -> Option<f64> {
        let bytes: [u8; 8] = self.take(8)?.try_into().ok()?;
        Some(f64::from_bits(u64::from_le_bytes(bytes)))
    }

    fn text(&mut self) -> Option<String> {
        let head = self.uint()?;
        let words = WORDS.len() as u64;
        if head < words {
            return WORDS
                .get(usize::try_from(head).ok()?)
                .map(|w| (*w).to_owned());
        }
        let rest = head - words;
        let bytes = self.take(usize::try_from(rest >> 1).ok()?)?;
        if rest & 1 == 1 {
            Some(CompactText::from_bytes(bytes).text())
        } else {
            String::from_utf8(bytes.to_vec()).ok()
        }
    }

    fn time(&mut self) -> Option<Timestamp> {
        let second = self.int()?;
        let nanosecond = i32::try_from(self.int()?).ok()?;
        Timestamp::new(second, nanosecond).ok()
    }

    /// A pod's rule of kind `code` (see [`rule_code`]) with its times.
    fn rule(&mut self, code: u8) -> Option<GroupRule> {
        Some(match code {
            0 => GroupRule::Counted,
            1 => GroupRule::TurnedUnready {
                since: self.time()?,
                delay_ends: self.time()?,
            },
            2 => GroupRule::Pending,
            3 => GroupRule::NoReadyCondition,
            4 => GroupRule::NoStartTime,
            5 => GroupRule::NotReady {
                since: self.opt(Self::time)?,
                delay_ends: self.time()?,
                initialization_ends: self.time()?,
            },
            6 => GroupRule::SampleBeforeReady {
                ready_since: self.time()?,
                sample_time: self.time()?,
                window: {
                    let seconds = self.int()?;
                    let nanos = i32::try_from(self.int()?).ok()?;
                    // Within a second, as packed: no carry to overflow.
                    if nanos.unsigned_abs() >= 1_000_000_000 {
                        return None;
                    }
                    SignedDuration::new(seconds, nanos)
                },
                initialization_ends: self.time()?,
            },
            7 => GroupRule::NeverReady {
                since: self.opt(Self::time)?,
                started: self.time()?,
                delay_ends: self.time()?,
            },
            8 => GroupRule::NoSample,
            9 => GroupRule::Deleting {
                since: self.time()?,
            },
            10 => GroupRule::Failed,
            11 => GroupRule::NotSelected { counted: false },
            12 => GroupRule::NotSelected { counted: true },
            _ => return None,
        })
    }

    fn trace(&mut self) -> Option<DecisionTrace> {
        let hpa = self.text()?;
        let second = self.int()?;
        let nanosecond = i32::try_from(self.int()?).ok()?;
        let now = Timestamp::new(second, nanosecond).ok()?;
        let spec_replicas = self.int32()?;
        let status_replicas = self.int32()?;
        let selector = self.text()?;
        let min_replicas = self.int32()?;
        let max_replicas = self.int32()?;
        let tolerances = Tolerances {
            scale_down: self.float()?,
            scale_up: self.float()?,
        };
        let rule = self.text()?;
        let count = usize::try_from(self.uint()?).ok()?;
        let metrics = (0..count)
            .map(|_| self.metric())
            .collect::<Option<Vec<_>>>()?;
        let chosen_metric = match usize::try_from(self.uint()?).ok()? {
            0 => self.text()?,
            index => metrics.get(index - 1)?.name.clone(),
        };
        Some(DecisionTrace {
            hpa,
            now,
            scale: ScaleInfo::new(spec_replicas, status_replicas, selector),
            min_replicas,
            max_replicas,
            tolerances,
            rule,
            metrics,
            chosen_metric,
            prenormalized: self.opt_int32()?,
            stabilized: self.opt_int32()?,
            stabilization: self.text()?,
            limited: self.opt_int32()?,
            limit_reason: self.text()?,
            desired: self.int32()?,
            rescale: match self.byte()? {
                0 => false,
                1 => true,
                _ => return None,
            },
            reason: self.text()?,
        })
    }

    fn metric(&mut self) -> Option<MetricTrace> {
        let index = usize::try_from(self.uint()?).ok()?;
        let type_ = self.text()?;
        let name = self.text()?;
        let target = self.text()?;
        let current = self.text()?;
        let ratio = self.opt(Self::float)?;
        let new_ratio = self.opt(Self::float)?;
        let ready_pods = match self.wide()? {
            0 => None,
            n => Some(usize::try_from(n - 1).ok()?),
        };
        let proposal = self.opt_int32()?;
        let error = self.opt(Self::text)?;
        let count = usize::try_from(self.uint()?).ok()?;
        let mut pods = Vec::with_capacity(count.min(self.bytes.len()));
        let mut previous: Arc<str> = Arc::from("");
        for _ in 0..count {
            let shared = usize::try_from(self.uint()?).ok()?;
            let rest = self.text()?;
            let name: Arc<str> = Arc::from(format!("{}{rest}", previous.get(..shared)?));
            let kinds = self.byte()?;
            let class = *POD_CLASSES.get(usize::from(kinds & 3))?;
            let why = self.rule(kinds >> 2)?;
            pods.push(PodShare {
                pod: Arc::clone(&name),
                class,
                sample: self.opt_int()?,
                assumed: self.opt_int()?,
                why,
            });
            previous = name;
        }
        Some(MetricTrace {
            index,
            type_,
            name,
            target,
            current,
            ratio,
            new_ratio,
            ready_pods,
            proposal,
            error,
            pods,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn share(pod: &str, class: &'static str, sample: Option<i64>) -> PodShare {
        PodShare {
            pod: Arc::from(pod),
            class,
            sample,
            assumed: None,
            why: GroupRule::Counted,
        }
    }

    /// A load HPA's trace at 10 pods, as the core makes it.
    fn trace() -> DecisionTrace {
        let name = "cpu resource utilization (percentage of request)";
        DecisionTrace {
            hpa: "load-0/w0".into(),
            now: "2026-01-01T00:06:30.25Z".parse().unwrap(),
            scale: ScaleInfo::new(10, 10, "app=w0"),
            min_replicas: 1,
            max_replicas: 20,
            tolerances: Tolerances::symmetric(0.1),
            rule: String::new(),
            metrics: vec![MetricTrace {
                index: 0,
                type_: "Resource".into(),
                name: name.into(),
                target: "50% utilization".into(),
                current: "50% (100m)".into(),
                ratio: Some(1.0),
                new_ratio: None,
                ready_pods: None,
                proposal: Some(10),
                error: None,
                pods: (0..10)
                    .map(|k| share(&format!("w0-{k}"), "ready", Some(100)))
                    .collect(),
            }],
            chosen_metric: name.into(),
            prenormalized: Some(10),
            stabilized: Some(10),
            stabilization: "ReadyForNewScale".into(),
            limited: Some(10),
            limit_reason: "DesiredWithinRange".into(),
            desired: 10,
            rescale: false,
            reason: String::new(),
        }
    }

    /// Read back as it was; smaller than the compact JSON text it replaces.
    /// Each repeated string is written as its own index, one byte.
    #[test]
    fn each_word_is_written_as_its_index() {
        for (i, word) in WORDS.iter().enumerate() {
            let mut out = Writer(Vec::new());
            out.text(word);
            let mut expected = Writer(Vec::new());
            expected.uint(i as u64);
            assert_eq!(out.0, expected.0, "{word:?}");
            assert_eq!(out.0.len(), 1);
        }
    }

    #[test]
    fn a_packed_trace_reads_back_as_it_was_and_is_smaller_than_its_compact_text() {
        let trace = trace();
        let packed = PackedTrace::new(&trace);
        assert_eq!(packed.trace().unwrap(), trace);
        let text = CompactText::new(&serde_json::to_string(&trace).unwrap());
        assert!(
            packed.len() < text.len(),
            "{} bytes packed, {} as compact text",
            packed.len(),
            text.len()
        );
    }

    /// Every field that may hold anything does: non-finite ratios, texts
    /// that are not words, a chosen metric no metric names, errors, pods
    /// sharing nothing or part of a character.
    #[test]
    fn odd_values_read_back() {
        let mut odd = trace();
        odd.tolerances = Tolerances {
            scale_down: f64::NAN,
            scale_up: f64::INFINITY,
        };
        odd.rule = "ScalingDisabled: the target has zero replicas".into();
        odd.chosen_metric = "neither".into();
        odd.reason = "ü".repeat(40);
        odd.metrics[0].ratio = Some(f64::NEG_INFINITY);
        odd.metrics[0].new_ratio = Some(-0.0);
        odd.metrics[0].error = Some("unable to get metric x: \u{1} boom".into());
        odd.metrics[0].ready_pods = Some(usize::MAX >> 1);
        let at = |t: &str| t.parse::<Timestamp>().unwrap();
        odd.metrics[0].pods = vec![
            PodShare {
                why: GroupRule::NoSample,
                ..share("éa", "missing", None)
            },
            PodShare {
                why: GroupRule::SampleBeforeReady {
                    ready_since: at("2026-01-01T00:00:10Z"),
                    sample_time: at("2026-01-01T00:00:20.5Z"),
                    window: SignedDuration::new(-30, -250_000_000),
                    initialization_ends: Timestamp::MAX,
                },
                ..share("éb", "unready", Some(i64::MIN))
            },
            PodShare {
                why: GroupRule::NotSelected { counted: true },
                ..share("\u{e9}", "ignored", Some(i64::MAX))
            },
            PodShare {
                why: GroupRule::NeverReady {
                    since: None,
                    started: Timestamp::MIN,
                    delay_ends: at("2026-01-01T00:00:30Z"),
                },
                ..share("", "ready", Some(-1))
            },
        ];
        odd.metrics.push(MetricTrace {
            index: 1,
            ..odd.metrics[0].clone()
        });
        let read = PackedTrace::new(&odd).trace().unwrap();
        assert_eq!(format!("{read:?}"), format!("{odd:?}"));
        assert_eq!(read.tolerances.scale_down.to_bits(), f64::NAN.to_bits());
    }

    #[test]
    fn cut_bytes_do_not_read() {
        let PackedTrace(bytes) = PackedTrace::new(&trace());
        for len in 0..bytes.len() {
            let cut = PackedTrace(bytes[..len].into());
            assert_eq!(cut.trace(), None, "{len} of {} bytes", bytes.len());
        }
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert_eq!(PackedTrace(longer.into()).trace(), None);
    }

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            (0..WORDS.len()).prop_map(|i| WORDS[i].to_owned()),
            any::<String>(),
            "[a-z0-9-]{0,40}",
            Just("external metric queue_depth(&LabelSelector{MatchLabels:map[string]string{queue: w1,},MatchExpressions:[]LabelSelectorRequirement{},})".to_owned()),
        ]
    }

    fn any_float() -> impl Strategy<Value = f64> {
        prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY), Just(0.1)]
    }

    fn any_time() -> impl Strategy<Value = Timestamp> {
        (-377_705_116_800i64..253_402_207_200, 0..1_000_000_000i32)
            .prop_map(|(second, nanosecond)| Timestamp::new(second, nanosecond).unwrap())
    }

    /// Every rule, with any times.
    fn any_rule() -> impl Strategy<Value = GroupRule> {
        let window = (any::<i64>(), -999_999_999..1_000_000_000i32).prop_map(|(s, n)| {
            // Same sign, as a duration's parts are.
            let n = if (s < 0 && n > 0) || (s > 0 && n < 0) {
                -n
            } else {
                n
            };
            SignedDuration::new(s, n)
        });
        prop_oneof![
            Just(GroupRule::Counted),
            (any_time(), any_time())
                .prop_map(|(since, delay_ends)| GroupRule::TurnedUnready { since, delay_ends }),
            Just(GroupRule::Pending),
            Just(GroupRule::NoReadyCondition),
            Just(GroupRule::NoStartTime),
            (proptest::option::of(any_time()), any_time(), any_time()).prop_map(
                |(since, delay_ends, initialization_ends)| GroupRule::NotReady {
                    since,
                    delay_ends,
                    initialization_ends
                }
            ),
            (any_time(), any_time(), window, any_time()).prop_map(
                |(ready_since, sample_time, window, initialization_ends)| {
                    GroupRule::SampleBeforeReady {
                        ready_since,
                        sample_time,
                        window,
                        initialization_ends,
                    }
                }
            ),
            (proptest::option::of(any_time()), any_time(), any_time()).prop_map(
                |(since, started, delay_ends)| GroupRule::NeverReady {
                    since,
                    started,
                    delay_ends
                }
            ),
            Just(GroupRule::NoSample),
            any_time().prop_map(|since| GroupRule::Deleting { since }),
            Just(GroupRule::Failed),
            any::<bool>().prop_map(|counted| GroupRule::NotSelected { counted }),
        ]
    }

    fn any_metric() -> impl Strategy<Value = MetricTrace> {
        (
            (
                any::<usize>(),
                any_text(),
                any_text(),
                any_text(),
                any_text(),
            ),
            (
                proptest::option::of(any_float()),
                proptest::option::of(any_float()),
                proptest::option::of(any::<usize>()),
                proptest::option::of(any::<i32>()),
                proptest::option::of(any_text()),
            ),
            proptest::collection::vec(
                (
                    any_text(),
                    0..POD_CLASSES.len(),
                    proptest::option::of(any::<i64>()),
                    proptest::option::of(any::<i64>()),
                    any_rule(),
                ),
                0..12,
            ),
        )
            .prop_map(
                |(
                    (index, type_, name, target, current),
                    (ratio, new_ratio, ready_pods, proposal, error),
                    pods,
                )| MetricTrace {
                    index,
                    type_,
                    name,
                    target,
                    current,
                    ratio,
                    new_ratio,
                    ready_pods,
                    proposal,
                    error,
                    pods: pods
                        .into_iter()
                        .map(|(pod, class, sample, assumed, why)| PodShare {
                            pod: Arc::from(pod),
                            class: POD_CLASSES[class],
                            sample,
                            assumed,
                            why,
                        })
                        .collect(),
                },
            )
    }

    proptest! {
        /// Any trace reads back as it was packed.
        #[test]
        fn any_trace_reads_back(
            metrics in proptest::collection::vec(any_metric(), 0..3),
            texts in proptest::collection::vec(any_text(), 6),
            ints in proptest::collection::vec(any::<i32>(), 5),
            options in proptest::collection::vec(proptest::option::of(any::<i32>()), 3),
            (second, nanosecond) in (-377_705_116_800i64..253_402_207_200, 0..1_000_000_000i32),
            (down, up, rescale, choose) in (any_float(), any_float(), any::<bool>(), any::<bool>()),
        ) {
            let chosen_metric = match metrics.first() {
                Some(first) if choose => first.name.clone(),
                _ => texts[5].clone(),
            };
            let trace = DecisionTrace {
                hpa: texts[0].clone(),
                now: Timestamp::new(second, nanosecond).unwrap(),
                scale: ScaleInfo::new(ints[0], ints[1], texts[1].clone()),
                min_replicas: ints[2],
                max_replicas: ints[3],
                tolerances: Tolerances { scale_down: down, scale_up: up },
                rule: texts[2].clone(),
                metrics,
                chosen_metric,
                prenormalized: options[0],
                stabilized: options[1],
                stabilization: texts[3].clone(),
                limited: options[2],
                limit_reason: texts[4].clone(),
                desired: ints[4],
                rescale,
                reason: texts[5].clone(),
            };
            let read = PackedTrace::new(&trace).trace();
            prop_assert_eq!(format!("{read:?}"), format!("{:?}", Some(&trace)));
        }
    }
}
