//! The server's state: the clock, the data being served (the model), the
//! pending timeline and the request log.
//!
//! Every change (a new script, a patch, a list of changes) is applied to a
//! copy of the model and swapped in only if all of it succeeds, so a bad
//! request leaves the previous data serving unchanged.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use hpa_core::clock::{Clock, ScenarioClock};
use jiff::Timestamp;

use crate::labels::Labels;
use crate::log::RequestLog;
use crate::rules::{Compiled, Inventory, PodEvent, RuleSpec};
use crate::script::{
    Change, Defaults, ExternalSpec, Faults, NodeSpec, ObjectSpec, PodSpec, Script, ScriptError,
    ScriptPatch, TimelineStep,
};

/// Errors from changing the state.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The script, patch or change is malformed.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A change names a pod the script does not declare.
    #[error("{field}: pod {namespace}/{name} does not exist (declare it first)")]
    UnknownPod {
        /// Which change.
        field: String,
        /// Pod namespace.
        namespace: String,
        /// Pod name.
        name: String,
    },
}

/// Key of an object: resource, namespace (None when root-scoped), name.
pub type ObjectKey = (String, Option<String>, String);

/// The data being served right now.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// Defaults for timestamps and windows.
    pub defaults: Defaults,
    /// Pods by (namespace, name).
    pub pods: BTreeMap<(String, String), PodSpec>,
    /// Nodes by name.
    pub nodes: BTreeMap<String, NodeSpec>,
    /// Objects by key.
    pub objects: BTreeMap<ObjectKey, ObjectSpec>,
    /// External series, in declaration order.
    pub external: Vec<ExternalSpec>,
    /// Rules for pods not declared by name, in order.
    pub rules: Vec<RuleSpec>,
    /// The pods of the inventory the rules give values, by (namespace,
    /// name); declared pods of the same name take precedence.
    pub resolved: BTreeMap<(String, String), PodSpec>,
    /// Faults per API.
    pub faults: Faults,
}

impl Model {
    /// The model a (checked) script declares, timeline aside.
    pub fn from_script(script: &Script) -> Self {
        let mut m = Self {
            defaults: script.defaults.clone(),
            faults: script.faults.clone(),
            external: script.external.clone(),
            rules: script.rules.clone(),
            ..Self::default()
        };
        for p in &script.pods {
            m.pods
                .insert((p.namespace.clone(), p.name.clone()), p.clone());
        }
        for n in &script.nodes {
            m.nodes.insert(n.name.clone(), n.clone());
        }
        for o in &script.objects {
            m.objects.insert(object_key(o), o.clone());
        }
        m
    }

    /// The model written back as a script, with the pending timeline.
    pub fn to_script(&self, timeline: Vec<TimelineStep>) -> Script {
        Script {
            defaults: self.defaults.clone(),
            pods: self.pods.values().cloned().collect(),
            nodes: self.nodes.values().cloned().collect(),
            objects: self.objects.values().cloned().collect(),
            external: self.external.clone(),
            rules: self.rules.clone(),
            faults: self.faults.clone(),
            timeline,
        }
    }

    /// The pod `namespace/name` served: declared, else given by a rule.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<&PodSpec> {
        let key = (namespace.to_owned(), name.to_owned());
        self.pods.get(&key).or_else(|| self.resolved.get(&key))
    }

    /// The pods served in one namespace (declared, then those rules give
    /// values), by name.
    pub fn pods_in(&self, namespace: &str) -> Vec<&PodSpec> {
        let mut pods: Vec<&PodSpec> = pods_in(&self.pods, namespace).collect();
        if !self.resolved.is_empty() {
            pods.extend(pods_in(&self.resolved, namespace).filter(|p| {
                !self
                    .pods
                    .contains_key(&(p.namespace.clone(), p.name.clone()))
            }));
            pods.sort_by(|a, b| a.name.cmp(&b.name));
        }
        pods
    }

    /// Every pod served.
    pub fn all_pods(&self) -> impl Iterator<Item = &PodSpec> {
        self.pods.values().chain(
            self.resolved
                .iter()
                .filter(|(k, _)| !self.pods.contains_key(*k))
                .map(|(_, p)| p),
        )
    }

    fn pod_mut(
        &mut self,
        field: &str,
        namespace: &str,
        name: &str,
    ) -> Result<&mut PodSpec, StateError> {
        self.pods
            .get_mut(&(namespace.to_owned(), name.to_owned()))
            .ok_or_else(|| StateError::UnknownPod {
                field: field.to_owned(),
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            })
    }

    /// Applies one change; `field` names it in errors.
    pub fn apply(&mut self, field: &str, change: &Change) -> Result<(), StateError> {
        crate::script::check_change(field, change)?;
        match change {
            Change::Pod(p) => {
                self.pods
                    .insert((p.namespace.clone(), p.name.clone()), p.clone());
            }
            Change::RemovePod(r) => {
                self.pods.remove(&(r.namespace.clone(), r.name.clone()));
            }
            Change::PodUsage(u) => {
                let pod = self.pod_mut(field, &u.namespace, &u.pod)?;
                let i = match pod.containers.iter().position(|c| c.name == u.container) {
                    Some(i) => i,
                    None => {
                        pod.containers.push(crate::script::ContainerSpec {
                            name: u.container.clone(),
                            ..Default::default()
                        });
                        pod.containers.len() - 1
                    }
                };
                let c = &mut pod.containers[i];
                if let Some(cpu) = &u.cpu {
                    c.cpu.clone_from(cpu);
                }
                if let Some(memory) = &u.memory {
                    c.memory.clone_from(memory);
                }
            }
            Change::PodMissing(m) => {
                self.pod_mut(field, &m.namespace, &m.pod)?.missing = m.missing;
            }
            Change::PodMetric(m) => {
                let pod = self.pod_mut(field, &m.namespace, &m.pod)?;
                match &m.value {
                    Some(v) => {
                        pod.metrics.insert(m.metric.clone(), v.clone());
                    }
                    None => {
                        pod.metrics.remove(&m.metric);
                    }
                }
            }
            Change::Node(n) => {
                self.nodes.insert(n.name.clone(), n.clone());
            }
            Change::ObjectMetric(m) => {
                let key = (m.resource.clone(), m.namespace.clone(), m.name.clone());
                let object = self.objects.entry(key).or_insert_with(|| ObjectSpec {
                    resource: m.resource.clone(),
                    namespace: m.namespace.clone(),
                    name: m.name.clone(),
                    ..Default::default()
                });
                match &m.value {
                    Some(v) => {
                        object.metrics.insert(m.metric.clone(), v.clone());
                    }
                    None => {
                        object.metrics.remove(&m.metric);
                    }
                }
            }
            Change::ExternalMetric(e) => {
                let pos = self.external.iter().position(|s| {
                    s.namespace == e.namespace && s.metric == e.metric && s.labels == e.labels
                });
                match (&e.value, pos) {
                    (Some(value), Some(i)) => {
                        let s = &mut self.external[i];
                        s.value = value.clone();
                        s.timestamp = e.timestamp;
                        s.window = e.window;
                    }
                    (Some(value), None) => self.external.push(ExternalSpec {
                        namespace: e.namespace.clone(),
                        metric: e.metric.clone(),
                        labels: e.labels.clone(),
                        value: value.clone(),
                        timestamp: e.timestamp,
                        window: e.window,
                    }),
                    (None, Some(i)) => {
                        self.external.remove(i);
                    }
                    (None, None) => {}
                }
            }
            Change::SetFault(f) => self.faults.set_in(
                f.namespace.as_deref(),
                f.api,
                Some(crate::script::Fault {
                    status: f.status,
                    latency: f.latency,
                    message: f.message.clone(),
                    unselected: f.unselected,
                }),
            ),
            Change::ClearFault(f) => self.faults.set_in(f.namespace.as_deref(), f.api, None),
        }
        Ok(())
    }

    /// Applies a patch: upserts, removals, faults, defaults.
    pub fn apply_patch(&mut self, patch: &ScriptPatch) {
        if let Some(d) = &patch.defaults {
            self.defaults = d.clone();
        }
        for p in &patch.pods {
            self.pods
                .insert((p.namespace.clone(), p.name.clone()), p.clone());
        }
        for n in &patch.nodes {
            self.nodes.insert(n.name.clone(), n.clone());
        }
        for o in &patch.objects {
            self.objects.insert(object_key(o), o.clone());
        }
        for e in &patch.external {
            match self.external.iter_mut().find(|s| {
                s.namespace == e.namespace && s.metric == e.metric && s.labels == e.labels
            }) {
                Some(s) => *s = e.clone(),
                None => self.external.push(e.clone()),
            }
        }
        if let Some(f) = &patch.faults {
            self.faults = f.clone();
        }
        for r in &patch.remove_pods {
            self.pods.remove(&(r.namespace.clone(), r.name.clone()));
        }
        for rule in &patch.rules {
            match self.rules.iter_mut().find(|r| r.name == rule.name) {
                Some(r) => *r = rule.clone(),
                None => self.rules.push(rule.clone()),
            }
        }
        self.rules.retain(|r| !patch.remove_rules.contains(&r.name));
    }
}

fn object_key(o: &ObjectSpec) -> ObjectKey {
    (o.resource.clone(), o.namespace.clone(), o.name.clone())
}

/// The pods of one namespace: a range of the `(namespace, name)` keys, not a
/// scan of every pod (a load of 100,000 pods asks per namespace).
fn pods_in<'a>(
    pods: &'a BTreeMap<(String, String), PodSpec>,
    ns: &str,
) -> impl Iterator<Item = &'a PodSpec> {
    let start = (ns.to_owned(), String::new());
    pods.range(start..)
        .take_while(move |((pod_ns, _), _)| pod_ns == ns)
        .map(|(_, pod)| pod)
}

/// Data plus the timeline not yet applied.
#[derive(Debug)]
struct Live {
    model: Model,
    /// Steps sorted by offset; `next` is the first not yet applied.
    timeline: Vec<TimelineStep>,
    next: usize,
    loaded_at: Timestamp,
    /// The pods that exist (from a pod source), kept across scripts.
    inventory: Inventory,
    /// The model's rules, compiled.
    compiled: Compiled,
}

impl Live {
    fn new(script: &Script, now: Timestamp, inventory: Inventory) -> Self {
        let mut timeline = script.timeline.clone();
        timeline.sort_by_key(|s| s.at);
        let mut live = Self {
            model: Model::from_script(script),
            timeline,
            next: 0,
            loaded_at: now,
            inventory,
            compiled: Compiled::default(),
        };
        live.resolve_rules();
        live
    }

    /// Resolves the rules against the inventory anew.
    fn resolve_rules(&mut self) {
        self.compiled = Compiled::new(&self.model.rules);
        self.model.resolved = self.compiled.resolve_all(&self.inventory);
    }

    /// Swaps in a changed model, resolving the rules again if they changed.
    fn swap(&mut self, model: Model) {
        let rules_changed = model.rules != self.model.rules;
        self.model = model;
        if rules_changed {
            self.resolve_rules();
        }
    }

    /// Takes a pod source's report into the inventory and the rules' pods.
    fn observe(&mut self, event: PodEvent) {
        match event {
            PodEvent::Applied {
                namespace,
                name,
                labels,
            } => {
                let key = (namespace, name);
                match self.compiled.resolve(&key.0, &key.1, &labels) {
                    Some(pod) => self.model.resolved.insert(key.clone(), pod),
                    None => self.model.resolved.remove(&key),
                };
                self.inventory.pods.insert(key, labels);
            }
            PodEvent::Deleted { namespace, name } => {
                let key = (namespace, name);
                self.inventory.pods.remove(&key);
                self.model.resolved.remove(&key);
            }
            PodEvent::Replaced(pods) => {
                self.inventory.pods = pods
                    .into_iter()
                    .map(|(ns, name, labels)| ((ns, name), labels))
                    .collect();
                self.model.resolved = self.compiled.resolve_all(&self.inventory);
            }
        }
        self.inventory.synced = true;
    }

    /// Applies the timeline steps whose offset has passed. A step that no
    /// longer fits (its pod was removed through the control API) is
    /// skipped with a warning rather than stopping the timeline.
    fn catch_up(&mut self, now: Timestamp) {
        let elapsed = now.duration_since(self.loaded_at);
        while let Some(step) = self.timeline.get(self.next) {
            if step.at.0 > elapsed {
                break;
            }
            for (j, change) in step.changes.iter().enumerate() {
                let field = format!("timeline step at {} changes[{j}]", step.at);
                if let Err(e) = self.model.apply(&field, change) {
                    tracing::warn!(error = %e, "timeline change skipped");
                }
            }
            self.next += 1;
        }
    }

    fn pending(&self) -> Vec<TimelineStep> {
        self.timeline[self.next..].to_vec()
    }
}

struct Inner {
    clock: ScenarioClock,
    live: Mutex<Live>,
    log: RequestLog,
    /// Who this server is, as [`AppState::instance`] says.
    instance: String,
}

/// A fresh instance name: 32 hex digits from the system's secure random,
/// else the process and the time (unique enough to tell servers apart).
fn new_instance() -> String {
    let mut bytes = [0u8; 16];
    match rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut bytes)
    {
        Ok(()) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        Err(_) => format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ),
    }
}

/// Shared state of one server. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("clock", &self.inner.clock)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// A server with an empty script.
    pub fn new(clock: ScenarioClock) -> Self {
        Self::with_script(clock, &Script::default())
    }

    /// A server serving `script` (already checked), loaded now.
    pub fn with_script(clock: ScenarioClock, script: &Script) -> Self {
        let now = clock.now();
        Self {
            inner: Arc::new(Inner {
                live: Mutex::new(Live::new(script, now, Inventory::default())),
                clock,
                log: RequestLog::default(),
                instance: new_instance(),
            }),
        }
    }

    /// This server's name among all servers: random, made when it starts,
    /// sent with every answer ([`crate::api::INSTANCE_HEADER`]) and served
    /// by the control API, so that a harness can ask through a cluster's
    /// aggregator whether the server behind a metrics APIService is the one
    /// it scripts, whatever Service leads there.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// The server's clock.
    pub fn clock(&self) -> &ScenarioClock {
        &self.inner.clock
    }

    /// The request log.
    pub fn log(&self) -> &RequestLog {
        &self.inner.log
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.inner.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the current data, after applying any timeline steps that
    /// are due. `f` also gets the server's `now`.
    pub fn read<R>(&self, f: impl FnOnce(&Model, Timestamp) -> R) -> R {
        let now = self.clock().now();
        let mut live = self.live();
        live.catch_up(now);
        f(&live.model, now)
    }

    /// Whether the script names pod `namespace/name` itself (`pods:`, or
    /// a change since), rather than a rule giving it values.
    pub fn declares(&self, namespace: &str, name: &str) -> bool {
        self.read(|model, _| model.pod(namespace, name).is_some())
    }

    /// Whether one of the script's rules gives a pod of `namespace` with
    /// `labels` its values.
    pub fn rule_matches(&self, namespace: &str, labels: &Labels) -> bool {
        self.live()
            .compiled
            .resolve(namespace, "", labels)
            .is_some()
    }

    /// Replaces the script; timeline offsets count from now.
    pub fn load(&self, script: &Script) -> Result<(), StateError> {
        script.check()?;
        let now = self.clock().now();
        let mut live = self.live();
        let inventory = std::mem::take(&mut live.inventory);
        *live = Live::new(script, now, inventory);
        Ok(())
    }

    /// Takes a pod source's report (`crate::watch`): pods that exist get
    /// the values of the first rule that matches them.
    pub fn observe_pods(&self, event: PodEvent) {
        self.live().observe(event);
    }

    /// How many pods the inventory holds, and whether a source filled it.
    pub fn inventory(&self) -> (usize, bool) {
        let live = self.live();
        (live.inventory.pods.len(), live.inventory.synced)
    }

    /// The data now and the pending timeline, as a script.
    pub fn script(&self) -> Script {
        let now = self.clock().now();
        let mut live = self.live();
        live.catch_up(now);
        live.model.to_script(live.pending())
    }

    /// Applies a patch, all or nothing.
    pub fn patch(&self, patch: &ScriptPatch) -> Result<(), StateError> {
        let now = self.clock().now();
        let mut live = self.live();
        live.catch_up(now);
        let mut model = live.model.clone();
        model.apply_patch(patch);
        let mut pods: BTreeSet<(String, String)> = model.pods.keys().cloned().collect();
        for step in &live.timeline[live.next..] {
            for change in &step.changes {
                if let Change::Pod(p) = change {
                    pods.insert((p.namespace.clone(), p.name.clone()));
                }
            }
        }
        crate::script::check_timeline(&patch.timeline, pods, "timeline")?;
        live.swap(model);
        if !patch.timeline.is_empty() {
            let next = live.next;
            live.timeline.extend(patch.timeline.iter().cloned());
            live.timeline[next..].sort_by_key(|s| s.at);
            live.catch_up(now);
        }
        Ok(())
    }

    /// Applies changes in order, all or nothing.
    pub fn apply(&self, changes: &[Change]) -> Result<(), StateError> {
        let now = self.clock().now();
        let mut live = self.live();
        live.catch_up(now);
        let mut model = live.model.clone();
        for (i, change) in changes.iter().enumerate() {
            model.apply(&format!("changes[{i}]"), change)?;
        }
        live.swap(model);
        Ok(())
    }

    /// Replaces all faults.
    pub fn set_faults(&self, faults: Faults) {
        self.live().model.faults = faults;
    }

    /// Changes the faults in one step, so that users changing faults of
    /// their own at the same time do not undo each other's.
    pub fn update_faults(&self, change: impl FnOnce(&mut Faults)) {
        change(&mut self.live().model.faults);
    }

    /// The current faults.
    pub fn faults(&self) -> Faults {
        self.read(|m, _| m.faults.clone())
    }

    /// Forgets the pods, objects, external series, rules and faults of one
    /// namespace and leaves the rest: scenarios that share the server, each
    /// in its own namespace, clear only their own data.
    pub fn reset_namespace(&self, namespace: &str) {
        let mut live = self.live();
        let model = &mut live.model;
        model.faults.namespaces.remove(namespace);
        model.pods.retain(|(ns, _), _| ns != namespace);
        model
            .objects
            .retain(|(_, ns, _), _| ns.as_deref() != Some(namespace));
        model.external.retain(|e| e.namespace != namespace);
        let rules = model.rules.len();
        model.rules.retain(|r| r.namespace != namespace);
        if model.rules.len() != rules {
            live.resolve_rules();
        }
    }

    /// Empty script, no faults, empty log, wall-clock offset zero. A virtual
    /// clock is left where it is: it belongs to whoever shares it.
    pub fn reset(&self) {
        self.clock().reset_offset();
        let now = self.clock().now();
        let mut live = self.live();
        let inventory = std::mem::take(&mut live.inventory);
        *live = Live::new(&Script::default(), now, inventory);
        drop(live);
        self.log().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{PodMetric, Value};
    use hpa_core::clock::VirtualClock;
    use jiff::SignedDuration;

    fn script(text: &str) -> Script {
        Script::parse(text, None).unwrap()
    }

    #[test]
    fn timeline_steps_apply_when_the_clock_passes_their_offset() {
        let clock = VirtualClock::default();
        let state = AppState::with_script(
            ScenarioClock::Virtual(clock.clone()),
            &script(
                "pods: [{name: a, containers: [{name: app, cpu: 100m}]}]\n\
                 timeline:\n  - at: 1m\n    changes: [{podUsage: {pod: a, container: app, cpu: 900m}}]\n",
            ),
        );
        let cpu = |s: &AppState| {
            s.read(|m, _| {
                m.pods[&("default".into(), "a".into())].containers[0]
                    .cpu
                    .clone()
            })
        };
        assert_eq!(cpu(&state), Some(Value("100m".into())));
        clock.advance(SignedDuration::from_secs(59));
        assert_eq!(cpu(&state), Some(Value("100m".into())));
        clock.advance(SignedDuration::from_secs(1));
        assert_eq!(cpu(&state), Some(Value("900m".into())));
    }

    #[test]
    fn a_failing_change_leaves_the_model_unchanged() {
        let state = AppState::with_script(ScenarioClock::wall(), &script("pods: [{name: a}]"));
        let before = state.read(|m, _| m.clone());
        let ok = Change::PodMetric(PodMetric {
            namespace: "default".into(),
            pod: "a".into(),
            metric: "pps".into(),
            value: Some(crate::script::MetricSpec::Value(Value("5".into()))),
        });
        let bad = Change::PodMetric(PodMetric {
            pod: "ghost".into(),
            ..match ok.clone() {
                Change::PodMetric(p) => p,
                _ => unreachable!(),
            }
        });
        let err = state.apply(&[ok, bad]).unwrap_err();
        assert!(err.to_string().contains("changes[1]"), "{err}");
        assert!(err.to_string().contains("ghost"), "{err}");
        assert_eq!(state.read(|m, _| m.clone()), before);
    }

    #[test]
    fn the_wall_clock_can_be_offset() {
        let clock = ScenarioClock::wall();
        let before = clock.now();
        clock.advance(SignedDuration::from_secs(3600));
        assert!(clock.now().duration_since(before) >= SignedDuration::from_secs(3600));
    }

    #[test]
    fn pods_in_reads_exactly_one_namespace() {
        let mut pods = BTreeMap::new();
        for (ns, name) in [
            ("load-1", "a"),
            ("load-1", "b"),
            ("load-10", "a"),
            ("load-0", "z"),
        ] {
            pods.insert(
                (ns.to_owned(), name.to_owned()),
                PodSpec {
                    namespace: ns.to_owned(),
                    name: name.to_owned(),
                    ..PodSpec::default()
                },
            );
        }
        let names: Vec<(&str, &str)> = pods_in(&pods, "load-1")
            .map(|p| (p.namespace.as_str(), p.name.as_str()))
            .collect();
        assert_eq!(names, [("load-1", "a"), ("load-1", "b")]);
        assert_eq!(pods_in(&pods, "load").count(), 0);
        assert_eq!(pods_in(&pods, "load-10").count(), 1);
    }
}
