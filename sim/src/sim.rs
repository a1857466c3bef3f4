//! The simulated cluster: configuration, the cheap-clone [`Sim`] handle and
//! the API semantics (create, update, patch, delete, scale) over the store.
//!
//! One mutex guards all objects. Every operation runs synchronously under it
//! (no await inside), which keeps writes, their resourceVersions and the
//! workload reactions to them deterministic; list and watch copy out shared
//! `Bytes` and serialize outside the lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use hpa_core::clock::{Clock, ScenarioClock, SystemClock, VirtualClock};
use hpa_core::gates::FeatureGates;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::backend::Backend;
use crate::convert::{from_view, to_view};
use crate::crd;
use crate::error::{ApiError, FieldError};
use crate::faults::Faults;
use crate::hpa;
use crate::patch::{self, PatchKind};
use crate::resources::{self, ResourceDef, Storage};
use crate::selector::Selector;
use crate::state::{PodDelays, State, k8s_time};
use crate::stats::RequestStats;
use crate::store::{Entry, EventType, Store};
use crate::validate;
use crate::workloads;

/// Settings of a simulated cluster.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The clock every timestamp the sim writes comes from: a virtual clock
    /// the harness moves ([`Sim::advance`]), or the wall clock (standalone
    /// use; the sim never offsets it).
    pub clock: ScenarioClock,
    /// Watch events kept per resource for resumption; older resourceVersions
    /// get 410 Gone.
    pub watch_history: usize,
    /// Delays for new pods of workloads without their own setting.
    pub pod_delays: PodDelays,
    /// Backend of the aggregated metrics APIs (metrics.k8s.io,
    /// custom.metrics.k8s.io, external.metrics.k8s.io) when no APIService
    /// says otherwise.
    pub metrics: Option<Backend>,
    /// Wall-clock interval between watch bookmarks (when asked for).
    pub bookmark_interval: std::time::Duration,
    /// Namespaces that exist from the start.
    pub namespaces: Vec<String>,
    /// The Kubernetes release the API server is, with its `--feature-gates`
    /// overrides: it decides what `/version` reports and how HPAs are
    /// stored and validated (`metadata.generation`, the fields a release
    /// drops, `minReplicas: 0`). Also settable later with
    /// [`Sim::set_feature_gates`].
    pub feature_gates: FeatureGates,
    /// Pods one workload may have (see [`crate::limits`]).
    pub max_pods_per_workload: usize,
    /// Name the pods of Deployments and ReplicaSets as kube-controller-
    /// manager does (`web-7d9c5b8f4-xk2zq`, [`crate::pod_names`]) rather
    /// than `web-0`, `web-1`: clients must then learn pod names from the
    /// API, as on a real cluster. StatefulSets keep their ordinals.
    pub generated_pod_names: bool,
    /// How long a Deployment's or ReplicaSet's controller takes to create
    /// the pods it owes, on [`SimConfig::clock`]: a real cluster's
    /// controllers react to a new or scaled workload some hundreds of
    /// milliseconds later, so clients must wait for its pods. Zero: at once.
    /// StatefulSets and rollouts are not delayed.
    pub pod_creation_delay: SignedDuration,
    /// How long an Event lives after its last write, as `kube-apiserver
    /// --event-ttl` (default 1h), on [`SimConfig::clock`]; `None`: forever.
    pub event_ttl: Option<SignedDuration>,
    /// The cluster has a node of its own (`sim-node-0`) whose scheduler
    /// and kubelet the sim plays for the pods of `default-scheduler`.
    /// Without it the cluster is an API server with kube-controller-manager
    /// alone: every pod stays Pending and unscheduled until another
    /// scheduler binds it (`pods/binding`) and its node's kubelet writes
    /// its status, as the harness's fake node does on a real cluster.
    /// Either way, pods of another scheduler, or bound to another node,
    /// are left to it.
    pub own_node: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            clock: ScenarioClock::Virtual(VirtualClock::default()),
            watch_history: 10_000,
            pod_delays: PodDelays::default(),
            metrics: None,
            bookmark_interval: std::time::Duration::from_secs(60),
            namespaces: ["default", "kube-system", "kube-public", "kube-node-lease"]
                .map(String::from)
                .to_vec(),
            feature_gates: FeatureGates::default(),
            max_pods_per_workload: crate::limits::MAX_PODS_PER_WORKLOAD,
            generated_pod_names: false,
            pod_creation_delay: SignedDuration::ZERO,
            event_ttl: Some(DEFAULT_EVENT_TTL),
            own_node: true,
        }
    }
}

/// kube-apiserver's `--event-ttl` default.
pub const DEFAULT_EVENT_TTL: SignedDuration = SignedDuration::from_hours(1);

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The object itself (its status is kept when it has a status subresource).
    Main,
    /// Only `status` (the `/status` subresource).
    Status,
}

pub(crate) struct Inner {
    state: Mutex<State>,
    pub clock: Arc<dyn Clock>,
    pub virtual_clock: Option<VirtualClock>,
    pub faults: Faults,
    pub stats: RequestStats,
    pub config: SimConfig,
    pub backends: Mutex<HashMap<String, Backend>>,
    pub shutdown: CancellationToken,
    /// The release and feature gates HPAs are stored and validated under
    /// (copied once per request, so one write sees one set).
    pub feature_gates: Mutex<FeatureGates>,
    /// Whether HPA references' apiVersions are checked (v1.34 and later);
    /// off, the sim stores HPAs as an older API server did.
    pub reference_api_versions: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim").field("config", &self.config).finish()
    }
}

/// A simulated Kubernetes API server. Clones share the same cluster.
#[derive(Debug, Clone)]
pub struct Sim {
    pub(crate) inner: Arc<Inner>,
}

/// Settles a sim's workloads when dropped (see [`Sim::settle_on_drop`]).
struct SettleOnDrop<'a>(&'a Sim);

impl Drop for SettleOnDrop<'_> {
    fn drop(&mut self) {
        self.0.settle();
    }
}

impl Sim {
    /// A cluster with the configured namespaces and nothing else.
    pub fn new(config: SimConfig) -> Self {
        let (clock, virtual_clock): (Arc<dyn Clock>, _) = match &config.clock {
            ScenarioClock::Virtual(v) => (Arc::new(v.clone()), Some(v.clone())),
            ScenarioClock::Wall(_) => (Arc::new(SystemClock), None),
        };
        let mut state = State::new(
            Store::new(config.watch_history),
            config.pod_delays,
            config.max_pods_per_workload,
        );
        state.generated_names = config.generated_pod_names;
        state.creation_delay = config.pod_creation_delay;
        state.own_node = config.own_node;
        let sim = Self {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                clock,
                virtual_clock,
                faults: Faults::default(),
                stats: RequestStats::default(),
                feature_gates: Mutex::new(config.feature_gates),
                reference_api_versions: std::sync::atomic::AtomicBool::new(true),
                config,
                backends: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
            }),
        };
        let def = Storage::Namespaces.def();
        for ns in sim.inner.config.namespaces.clone() {
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            if let Err(e) = sim.create(def, "", obj, false) {
                tracing::warn!(namespace = %ns, error = %e, "could not create a namespace");
            }
        }
        sim
    }

    /// The clock every timestamp of the sim comes from.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.inner.clock.clone()
    }

    /// The virtual clock, when the sim runs on one.
    pub fn virtual_clock(&self) -> Option<VirtualClock> {
        self.inner.virtual_clock.clone()
    }

    /// Moves the virtual clock forward and applies the pod transitions that
    /// fell due. Does nothing to a wall clock.
    pub fn advance(&self, by: SignedDuration) {
        if let Some(v) = &self.inner.virtual_clock {
            v.advance(by);
        }
        self.process_due();
    }

    /// Applies pod transitions due by now and expires Events past their
    /// TTL. Also runs on every request, so a clock advanced behind the
    /// sim's back is noticed at the next request.
    pub fn process_due(&self) {
        {
            let now = self.inner.clock.now();
            let mut st = self.lock();
            workloads::release_due_creations(&mut st, now);
        }
        self.settle();
        let now = self.inner.clock.now();
        let mut st = self.lock();
        workloads::process_due(&mut st, now);
        let def = Storage::Events.def();
        for (ns, name) in st.event_expiry.take_expired(now) {
            self.finish_delete(&mut st, def, &ns, &name);
        }
        if self.inner.faults.hpa_watch_lag().is_some() {
            // Held changes may have fallen due: the watches look again.
            st.store.wake(Storage::Hpas);
        }
    }

    /// Creates the pods workloads still owe, a batch per lock, so other
    /// requests get the lock between batches.
    fn settle(&self) {
        loop {
            let now = self.now();
            let mut st = self.lock();
            let Some((s, ns, name)) = st.unsettled.pop_first() else {
                return;
            };
            workloads::reconcile(&mut st, s, &ns, &name, now);
        }
    }

    /// Settles workloads when dropped: declared before the lock guard of a
    /// write, it runs after the guard is released.
    fn settle_on_drop(&self) -> SettleOnDrop<'_> {
        SettleOnDrop(self)
    }

    /// Makes the API server another release, or the same with other
    /// `--feature-gates`: later writes are stored and validated under
    /// `gates`; stored objects stay as they are, as after an upgrade.
    pub fn set_feature_gates(&self, gates: &FeatureGates) {
        *self
            .inner
            .feature_gates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = *gates;
    }

    /// The release and feature gates the API server runs with.
    pub fn feature_gates(&self) -> FeatureGates {
        *self
            .inner
            .feature_gates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Turns the check of HPA references' apiVersions on (the default, as
    /// v1.34 and later) or off, to hold HPAs that an API server before the
    /// check (v1.33 and older) stored and that an upgraded cluster still
    /// serves.
    pub fn set_reference_api_version_check(&self, enabled: bool) {
        self.inner
            .reference_api_versions
            .store(enabled, std::sync::atomic::Ordering::SeqCst);
    }

    /// Makes the cluster fresh again without restarting it, so one sim
    /// process serves scenario after scenario: every object a client made
    /// goes (finalizers ignored), each with a DELETED event for open
    /// watches; resourceVersions keep growing. Built-in namespaces stay (and
    /// come back if deleted). Faults, pod delays and pending pod
    /// transitions, service backends and the feature gates return to the
    /// configuration. The clock and the request counters are left alone.
    /// Returns how many objects were removed.
    pub fn reset(&self) -> usize {
        let builtin = &self.inner.config.namespaces;
        let removed = {
            let mut st = self.lock();
            let before = object_count(&st);
            // Owners first, so their pods go with them and no owner status
            // is rewritten for a pod that is about to go anyway.
            let order = [
                Storage::Hpas,
                Storage::Deployments,
                Storage::StatefulSets,
                Storage::ReplicaSets,
                Storage::Pods,
                Storage::Events,
                Storage::Leases,
                Storage::Services,
                Storage::Nodes,
                Storage::ApiServices,
                Storage::Ingresses,
                Storage::ConfigMaps,
                Storage::Secrets,
                Storage::ServiceAccounts,
                Storage::Crds,
                Storage::Namespaces,
            ];
            // Custom resources go with their CRDs.
            for s in order {
                let def = s.def();
                let keys: Vec<(String, String)> = st
                    .store
                    .table(s)
                    .range(None)
                    .filter(|e| s != Storage::Namespaces || !builtin.iter().any(|n| **n == *e.name))
                    .map(|e| (e.ns.to_string(), e.name.to_string()))
                    .collect();
                for (ns, name) in keys {
                    self.finish_delete(&mut st, def, &ns, &name);
                }
            }
            st.delays.clear();
            st.unsettled.clear();
            st.creation_due.clear();
            st.pending.clear();
            st.next_index.clear();
            st.rolling.clear();
            st.old_templates.clear();
            st.rollout_sizes.clear();
            // generateName suffixes repeat as in a fresh sim (the objects
            // that had them are gone); uids keep growing, as clients key
            // caches by uid.
            st.name_seq = 0;
            st.default_delays = self.inner.config.pod_delays;
            before.saturating_sub(object_count(&st))
        };
        let def = Storage::Namespaces.def();
        for ns in builtin {
            let missing = self
                .lock()
                .store
                .table(Storage::Namespaces)
                .get("", ns)
                .is_none();
            if missing {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
                if let Err(e) = self.create(def, "", obj, false) {
                    tracing::warn!(namespace = %ns, error = %e, "could not recreate a namespace");
                }
            }
        }
        self.clear_faults();
        self.inner
            .backends
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        self.set_feature_gates(&self.inner.config.feature_gates);
        self.set_reference_api_version_check(true);
        removed
    }

    /// HPA validation options: the gate, and (on update) whether the stored
    /// object already had `minReplicas: 0`, which the API server keeps
    /// accepting with the gate off.
    fn hpa_validation(
        &self,
        gates: &FeatureGates,
        new: &Value,
        old: Option<&Value>,
    ) -> hpa::ValidationOptions {
        let gate = gates.scale_to_zero();
        let old_zero = old
            .and_then(|o| o.pointer("/spec/minReplicas"))
            .and_then(Value::as_i64)
            == Some(0);
        let check = self
            .inner
            .reference_api_versions
            .load(std::sync::atomic::Ordering::SeqCst);
        let (old_target, old_objects) = match old {
            _ if !check => (true, true),
            Some(old) => hpa::api_version_ratchets(new, old),
            None => (false, false),
        };
        hpa::ValidationOptions {
            min_replicas_lower_bound: if gate || old_zero { 0 } else { 1 },
            allow_invalid_target_api_version: old_target,
            allow_invalid_object_api_version: old_objects,
            max_replicas_texts_of_1_36: gates.version() >= hpa_core::KubernetesVersion::V1_36,
        }
    }

    /// Injected faults and scale overrides.
    pub fn faults(&self) -> &Faults {
        &self.inner.faults
    }

    /// Requests served, by verb and resource.
    pub fn requests(&self) -> &RequestStats {
        &self.inner.stats
    }

    /// Sets how long new pods of workload `ns/name` (any kind) take to run
    /// and to become Ready ("new pods of X become ready after 30s").
    pub fn set_pod_delays(&self, ns: &str, name: &str, delays: PodDelays) {
        self.lock()
            .delays
            .insert((ns.to_owned(), name.to_owned()), delays);
    }

    /// Routes an APIService that names service `ns/name` to `backend`.
    pub fn set_service_backend(&self, ns: &str, name: &str, backend: Backend) {
        self.inner
            .backends
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(format!("{ns}/{name}"), backend);
    }

    /// The current resourceVersion (of the last write).
    pub fn resource_version(&self) -> u64 {
        self.lock().store.rv()
    }

    /// Ends every open watch (used when a server stops).
    pub fn close_watches(&self) {
        self.inner.shutdown.cancel();
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        let mut st = self
            .inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Writes under this lock happen now (the watch history's times).
        st.store.set_now(self.inner.clock.now());
        st
    }

    /// Makes HPA watches lag `lag` behind the writes (zero: catch up), as a
    /// watch cache that far behind would: each change reaches watchers
    /// `lag` after it was written, and lists of HPAs answer as of then. A
    /// GET of one HPA still reads the latest.
    /// Clears every fault and override, and delivers what a watch lag held.
    pub fn clear_faults(&self) {
        self.inner.faults.clear();
        self.lock().store.wake(Storage::Hpas);
    }

    /// Changes written before the call are delivered as usual.
    pub fn lag_hpa_watch(&self, lag: SignedDuration) {
        let st = self.lock();
        self.inner.faults.set_hpa_watch_lag(lag, st.store.rv());
        st.store.wake(Storage::Hpas);
    }

    /// What watches and lists of `s` hold back: changes after the returned
    /// resourceVersion written after the returned time (`None`: nothing).
    pub(crate) fn watch_cutoff(&self, s: Storage) -> Option<Cutoff> {
        if s != Storage::Hpas {
            return None;
        }
        let (lag, from) = self.inner.faults.hpa_watch_lag()?;
        Some(Cutoff {
            after_rv: from,
            after: self.now() - lag,
        })
    }

    fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    /// Every definition this sim serves: the built-in ones, then its CRDs'.
    pub(crate) fn served_defs(&self) -> Vec<&'static ResourceDef> {
        crd::all_defs(&self.lock().store)
    }

    /// The definition this sim serves for `group/version/plural`: a
    /// built-in one, else one of its CRDs'.
    pub(crate) fn find_def(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&'static ResourceDef> {
        resources::find(group, version, plural)
            .or_else(|| crd::find_served(&self.lock().store, group, version, plural))
    }

    /// The custom groups this sim serves, each with its versions (in CRD
    /// order).
    pub(crate) fn custom_groups(&self) -> Vec<(String, Vec<String>)> {
        crd::groups(&self.lock().store)
    }

    /// GET one object in the served version.
    pub fn get(&self, def: &ResourceDef, ns: &str, name: &str) -> Result<Value, ApiError> {
        let st = self.lock();
        let e = find(&st, def, ns, name)?;
        Ok(to_view(def, e.value()))
    }

    /// CREATE (POST to the collection).
    pub fn create(
        &self,
        def: &ResourceDef,
        ns: &str,
        obj: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        check_kind(def, &obj)?;
        validate::check_body(def, &obj)?;
        let _settle = self.settle_on_drop();
        let now = self.now();
        let gates = self.feature_gates();
        let mut st = self.lock();
        let mut obj = from_view(def, obj, gates.version());
        set_meta_ns(def, &mut obj, ns)?;
        let name = match meta_str(&obj, "name") {
            Some(n) if !n.is_empty() => n,
            _ => match meta_str(&obj, "generateName") {
                Some(prefix) if !prefix.is_empty() => {
                    st.name_seq += 1;
                    let n = format!("{prefix}{}", suffix(st.name_seq));
                    meta_mut(&mut obj).insert("name".into(), json!(n));
                    n
                }
                _ => {
                    return Err(invalid(
                        def,
                        "",
                        vec![FieldError::required(
                            "metadata.name",
                            "name or generateName is required",
                        )],
                    ));
                }
            },
        };
        if def.namespaced && st.store.table(Storage::Namespaces).get("", ns).is_none() {
            return Err(ApiError::NotFound {
                resource: "namespaces".into(),
                name: ns.to_owned(),
            });
        }
        if st.store.table(def.storage).get(ns, &name).is_some() {
            return Err(ApiError::AlreadyExists {
                resource: def.qualified(),
                name,
            });
        }
        let uid = st.next_uid();
        {
            let meta = meta_mut(&mut obj);
            meta.insert("uid".into(), json!(uid));
            meta.insert("creationTimestamp".into(), json!(k8s_time(now)));
            meta.remove("resourceVersion");
            meta.remove("deletionTimestamp");
            meta.remove("managedFields");
            if has_generation(def.storage, &gates) {
                meta.insert("generation".into(), json!(1));
            }
        }
        reset_status_on_create(def.storage, &mut obj);
        if def.storage == Storage::Hpas {
            hpa::drop_disabled_fields(&mut obj, None, &gates);
        }
        default_object(def.storage, &mut obj);
        validate(def, &obj, &name, self.hpa_validation(&gates, &obj, None))?;
        if dry_run {
            return Ok(to_view(def, obj));
        }
        let entry = st.store.put(def.storage, obj, EventType::Added);
        self.after_write(&mut st, def.storage, None, &entry, now);
        Ok(to_view(def, entry.value()))
    }

    /// UPDATE (PUT) of the object or of its status.
    pub fn replace(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        obj: Value,
        part: Part,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let _settle = self.settle_on_drop();
        let now = self.now();
        let release = self.feature_gates().version();
        let mut st = self.lock();
        let old = find(&st, def, ns, name)?.clone();
        check_kind(def, &obj)?;
        validate::check_body(def, &obj)?;
        let new = from_view(def, obj, release);
        self.write_update(&mut st, def, old, new, part, dry_run, now)
    }

    /// PATCH of the object or of its status. A server-side apply patch of a
    /// missing object creates it.
    #[allow(clippy::too_many_arguments)] // the verb's parameters, all distinct
    pub fn patch(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        kind: PatchKind,
        body: &[u8],
        part: Part,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let parsed =
            patch::parse_body(kind, body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
        let _settle = self.settle_on_drop();
        let now = self.now();
        let release = self.feature_gates().version();
        let mut st = self.lock();
        let old = match st.store.table(def.storage).get(ns, name) {
            Some(e) => e.clone(),
            None if kind == PatchKind::Apply && part == Part::Main => {
                drop(st);
                let mut obj = parsed;
                if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.insert("name".into(), json!(name));
                }
                return self.create(def, ns, obj, dry_run);
            }
            None => return Err(not_found(def, name)),
        };
        let mut view = to_view(def, old.value());
        patch::apply(kind, &mut view, &parsed).map_err(|e| match e {
            patch::PatchError::Json(m) => ApiError::Invalid {
                kind: def.kind.into(),
                name: name.into(),
                group: def.group.into(),
                causes: vec![FieldError::invalid("", "patch", &m)],
            },
            other => ApiError::BadRequest(other.to_string()),
        })?;
        if kind == PatchKind::Apply
            && let Some(m) = view.get_mut("metadata").and_then(Value::as_object_mut)
        {
            // Apply does not carry optimistic concurrency unless asked.
            if parsed.pointer("/metadata/resourceVersion").is_none() {
                m.remove("resourceVersion");
            }
        }
        check_kind(def, &view)?;
        validate::check_patched(def, name, &view)?;
        let new = from_view(def, view, release);
        self.write_update(&mut st, def, old, new, part, dry_run, now)
    }

    #[allow(clippy::too_many_arguments)] // internal; mirrors `replace`
    fn write_update(
        &self,
        st: &mut State,
        def: &ResourceDef,
        old: Arc<Entry>,
        mut new: Value,
        part: Part,
        dry_run: bool,
        now: Timestamp,
    ) -> Result<Value, ApiError> {
        let name = old.name.to_string();
        let gates = self.feature_gates();
        check_kind(def, &new)?;
        set_meta_ns(def, &mut new, &old.ns)?;
        if let Some(n) = meta_str(&new, "name")
            && !n.is_empty()
            && n != name
        {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        if let Some(rv) = meta_str(&new, "resourceVersion")
            && !rv.is_empty()
            && rv != old.rv.to_string()
        {
            return Err(ApiError::Conflict {
                resource: def.qualified(),
                name,
            });
        }
        let old_val = old.value();
        let mut obj = match part {
            Part::Status => {
                let mut o = old_val.clone();
                if let Some(map) = o.as_object_mut() {
                    match new.get("status") {
                        Some(s) => map.insert("status".into(), s.clone()),
                        None => map.remove("status"),
                    };
                }
                if def.storage == Storage::Hpas {
                    hpa::drop_disabled_fields(&mut o, Some(&old_val), &gates);
                    hpa::omit_empty_status(&mut o);
                }
                o
            }
            Part::Main => {
                let mut o = new;
                {
                    let meta = meta_mut(&mut o);
                    meta.insert("name".into(), json!(name));
                    for k in [
                        "uid",
                        "creationTimestamp",
                        "deletionTimestamp",
                        "generation",
                    ] {
                        match old_val.pointer(&format!("/metadata/{k}")) {
                            Some(v) => meta.insert(k.into(), v.clone()),
                            None => meta.remove(k),
                        };
                    }
                    meta.remove("managedFields");
                }
                if def.status
                    && let Some(map) = o.as_object_mut()
                {
                    match old_val.get("status") {
                        Some(s) => map.insert("status".into(), s.clone()),
                        None => map.remove("status"),
                    };
                }
                if def.storage == Storage::Hpas {
                    hpa::drop_disabled_fields(&mut o, Some(&old_val), &gates);
                }
                default_object(def.storage, &mut o);
                if has_generation(def.storage, &gates) && o.get("spec") != old_val.get("spec") {
                    let g = old_val
                        .pointer("/metadata/generation")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    meta_mut(&mut o).insert("generation".into(), json!(g + 1));
                }
                o
            }
        };
        validate(
            def,
            &obj,
            &name,
            self.hpa_validation(&gates, &obj, Some(&old_val)),
        )?;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(old.rv.to_string()));
        if obj == old_val || dry_run {
            return Ok(to_view(def, obj));
        }
        let entry = st.store.put(def.storage, obj, EventType::Modified);
        self.after_write(st, def.storage, Some(&old_val), &entry, now);
        let view = to_view(def, entry.value());
        if is_terminating(&view) && finalizers(&view).is_empty() {
            // The last finalizer is gone: the pending deletion completes.
            self.finish_delete(st, def, &entry.ns, &name);
        }
        Ok(view)
    }

    /// `POST pods/NAME/binding`: a scheduler assigns the pod to a node, as
    /// the API server's binding storage does: the pod gets the node and a
    /// `PodScheduled` condition; a pod already assigned, or being deleted,
    /// is refused (409). Answers the `Status` the API server sends.
    pub fn bind_pod(&self, ns: &str, name: &str, binding: &Value) -> Result<Value, ApiError> {
        let def = Storage::Pods.def();
        if binding
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .is_some_and(|n| n != name)
        {
            return Err(ApiError::BadRequest(
                "name in URL does not match name in Binding object".to_owned(),
            ));
        }
        let Some(node) = binding
            .pointer("/target/name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        else {
            return Err(ApiError::Invalid {
                kind: "Binding".to_owned(),
                name: name.to_owned(),
                group: String::new(),
                causes: vec![FieldError::required("target.name", "")],
            });
        };
        let now = self.now();
        let mut st = self.lock();
        let old = find(&st, def, ns, name)?.value();
        let refused = |reason: String| ApiError::Refused {
            resource: "pods/binding".to_owned(),
            name: name.to_owned(),
            reason,
        };
        if is_terminating(&old) {
            return Err(refused(format!(
                "pod {name} is being deleted, cannot be assigned to a host"
            )));
        }
        if let Some(assigned) = old
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            return Err(refused(format!(
                "pod {name} is already assigned to node \"{assigned}\""
            )));
        }
        let mut pod = old.clone();
        pod["spec"]["nodeName"] = json!(node);
        let scheduled = json!({"type": "PodScheduled", "status": "True",
            "lastTransitionTime": k8s_time(now)});
        if !pod.get("status").is_some_and(Value::is_object) {
            pod["status"] = json!({});
        }
        match pod
            .pointer_mut("/status/conditions")
            .and_then(Value::as_array_mut)
        {
            Some(conds) => match conds
                .iter_mut()
                .find(|c| c.get("type") == Some(&json!("PodScheduled")))
            {
                // An unchanged status keeps its transition time.
                Some(c) if c.get("status") == Some(&json!("True")) => {}
                Some(c) => *c = scheduled,
                None => conds.push(scheduled),
            },
            None => pod["status"]["conditions"] = json!([scheduled]),
        }
        let entry = st.store.put(Storage::Pods, pod, EventType::Modified);
        self.after_write(&mut st, Storage::Pods, Some(&old), &entry, now);
        Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "code": 201}))
    }

    /// DELETE. Objects go at once (no graceful termination); a workload's
    /// pods and a namespace's objects go with it.
    pub fn delete(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        precondition_rv: Option<&str>,
    ) -> Result<Value, ApiError> {
        let mut st = self.lock();
        let e = find(&st, def, ns, name)?.clone();
        if let Some(rv) = precondition_rv
            && rv != e.rv.to_string()
        {
            return Err(ApiError::Conflict {
                resource: def.qualified(),
                name: name.into(),
            });
        }
        let current = e.value();
        if !finalizers(&current).is_empty() {
            // As the API server does: an object with finalizers is only
            // marked (deletionTimestamp) and goes when they are removed.
            if is_terminating(&current) {
                return Ok(to_view(def, current));
            }
            let mut marked = current.clone();
            let meta = meta_mut(&mut marked);
            meta.insert("deletionTimestamp".into(), json!(k8s_time(self.now())));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            let entry = st.store.put(def.storage, marked, EventType::Modified);
            self.after_write(&mut st, def.storage, Some(&current), &entry, self.now());
            return Ok(to_view(def, entry.value()));
        }
        let gone = self.finish_delete(&mut st, def, ns, name);
        gone.ok_or_else(|| not_found(def, name))
    }

    /// Removes an object for good, with what goes with it.
    fn finish_delete(
        &self,
        st: &mut State,
        def: &ResourceDef,
        ns: &str,
        name: &str,
    ) -> Option<Value> {
        let gone = st.store.remove(def.storage, ns, name)?;
        if def.storage == Storage::Events {
            st.event_expiry.deleted(ns, name);
        }
        cascade_delete(st, def.storage, &gone);
        if def.storage == Storage::Pods {
            workloads::refresh_owner(st, &gone, self.now());
        }
        Some(to_view(def, gone.value()))
    }

    /// Reactions to a successful write: workloads keep their pods in line,
    /// pods refresh their owner's status.
    fn after_write(
        &self,
        st: &mut State,
        s: Storage,
        old: Option<&Value>,
        entry: &Arc<Entry>,
        now: Timestamp,
    ) {
        if s == Storage::Events
            && let Some(ttl) = self.inner.config.event_ttl
        {
            st.event_expiry.written(&entry.ns, &entry.name, now, ttl);
        }
        if s.is_workload() {
            let new = entry.value();
            let replicas_changed =
                old.is_none_or(|o| o.pointer("/spec/replicas") != new.pointer("/spec/replicas"));
            let template_changed = old.is_some_and(|o| {
                o.pointer("/spec/template") != new.pointer("/spec/template")
                    || o.pointer("/spec/strategy") != new.pointer("/spec/strategy")
            });
            if template_changed && let Some(o) = old {
                crate::updater::template_changed(st, s, o, &new);
            }
            if replicas_changed || template_changed {
                workloads::reconcile(st, s, &entry.ns, &entry.name, now);
            }
        } else if s == Storage::Pods {
            workloads::refresh_owner(st, entry, now);
        }
    }

    /// The scale subresource of a workload, overrides applied.
    pub fn get_scale(&self, def: &ResourceDef, ns: &str, name: &str) -> Result<Value, ApiError> {
        if self.inner.faults.get_scale_fails(ns, name) {
            return Err(ApiError::Internal(format!(
                "injected fault: reading the scale of {ns}/{name} fails"
            )));
        }
        let st = self.lock();
        let e = find(&st, def, ns, name)?;
        Ok(self.scale_view(def, &e.value(), ns, name))
    }

    fn scale_view(&self, def: &ResourceDef, obj: &Value, ns: &str, name: &str) -> Value {
        let mut scale = scale_of(def, obj);
        if let Some(o) = self.inner.faults.scale_override(ns, name) {
            if let Some(r) = o.spec_replicas {
                scale["spec"]["replicas"] = json!(r);
            }
            if let Some(r) = o.status_replicas {
                scale["status"]["replicas"] = json!(r);
            }
            if let Some(sel) = o.selector {
                match scale["status"].as_object_mut() {
                    Some(status) if sel.is_empty() => {
                        status.remove("selector");
                    }
                    Some(status) => {
                        status.insert("selector".into(), json!(sel));
                    }
                    None => {}
                }
            }
        }
        scale
    }

    /// Updates the scale subresource: sets `spec.replicas` of the workload,
    /// whose pods then follow.
    pub fn replace_scale(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        scale: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if self.inner.faults.update_scale_fails(ns, name) {
            return Err(ApiError::Internal(format!(
                "injected fault: updating the scale of {ns}/{name} fails"
            )));
        }
        if self.inner.faults.take_scale_conflict(ns, name) {
            return Err(ApiError::Conflict {
                resource: def.qualified(),
                name: name.into(),
            });
        }
        let replicas = validate::scale_replicas(name, &scale)?;
        if replicas < 0 {
            return Err(ApiError::Invalid {
                kind: "Scale".into(),
                name: name.into(),
                group: "autoscaling".into(),
                causes: vec![FieldError::invalid(
                    "spec.replicas",
                    replicas,
                    "must be greater than or equal to 0",
                )],
            });
        }
        let _settle = self.settle_on_drop();
        let now = self.now();
        let mut st = self.lock();
        let old = find(&st, def, ns, name)?.clone();
        let mut obj = old.value();
        match def.scale_paths {
            Some(paths) => crd::set_spec_replicas(paths, &mut obj, i64::from(replicas)),
            None => obj["spec"]["replicas"] = json!(replicas),
        }
        if let Some(rv) = scale.pointer("/metadata/resourceVersion") {
            meta_mut(&mut obj).insert("resourceVersion".into(), rv.clone());
        }
        let written = self.write_update(&mut st, def, old, obj, Part::Main, dry_run, now)?;
        // After the pods followed, so status.replicas is current.
        let out = if dry_run {
            written
        } else {
            find(&st, def, ns, name)?.value()
        };
        drop(st);
        if !dry_run {
            self.inner.faults.scale_updated(ns, name);
        }
        Ok(self.scale_view(def, &out, ns, name))
    }

    /// Patches the scale subresource.
    pub fn patch_scale(
        &self,
        def: &ResourceDef,
        ns: &str,
        name: &str,
        kind: PatchKind,
        body: &[u8],
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let parsed =
            patch::parse_body(kind, body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
        let mut scale = {
            let st = self.lock();
            scale_of(def, &find(&st, def, ns, name)?.value())
        };
        patch::apply(kind, &mut scale, &parsed).map_err(|e| ApiError::BadRequest(e.to_string()))?;
        validate::check_patched_scale(name, &scale)?;
        if parsed.pointer("/metadata/resourceVersion").is_none()
            && let Some(m) = scale.get_mut("metadata").and_then(Value::as_object_mut)
        {
            m.remove("resourceVersion");
        }
        self.replace_scale(def, ns, name, scale, dry_run)
    }

    /// Whether an HPA status write should fail with an injected conflict.
    pub(crate) fn hpa_status_conflict(&self, ns: &str, name: &str) -> bool {
        self.inner.faults.take_hpa_status_conflict(ns, name)
    }
}

/// The Scale of an object: a custom resource's through its CRD's paths.
fn scale_of(def: &ResourceDef, obj: &Value) -> Value {
    match def.scale_paths {
        Some(paths) => crd::scale_of(paths, obj),
        None => workloads::scale_of(obj),
    }
}

fn object_count(st: &State) -> usize {
    Storage::every()
        .map(|s| st.store.table(s).objects.len())
        .sum()
}

fn suffix(n: u64) -> String {
    const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995;
    (0..5)
        .map(|_| {
            let c = ALPHA[(x % ALPHA.len() as u64) as usize] as char;
            x /= ALPHA.len() as u64;
            c
        })
        .collect()
}

pub(crate) fn find<'a>(
    st: &'a State,
    def: &ResourceDef,
    ns: &str,
    name: &str,
) -> Result<&'a Arc<Entry>, ApiError> {
    st.store
        .table(def.storage)
        .get(ns, name)
        .ok_or_else(|| not_found(def, name))
}

pub(crate) fn not_found(def: &ResourceDef, name: &str) -> ApiError {
    ApiError::NotFound {
        resource: def.qualified(),
        name: name.into(),
    }
}

fn invalid(def: &ResourceDef, name: &str, causes: Vec<FieldError>) -> ApiError {
    ApiError::Invalid {
        kind: def.kind.into(),
        name: name.into(),
        group: def.group.into(),
        causes,
    }
}

fn check_kind(def: &ResourceDef, obj: &Value) -> Result<(), ApiError> {
    if !obj.is_object() {
        return Err(ApiError::BadRequest(format!(
            "the body of a {} must be a JSON object",
            def.kind
        )));
    }
    if let Some(k) = obj.get("kind").and_then(Value::as_str)
        && k != def.kind
    {
        return Err(ApiError::BadRequest(format!(
            "the kind of the object ({k}) does not match the resource ({})",
            def.kind
        )));
    }
    Ok(())
}

pub(crate) fn meta_str(obj: &Value, key: &str) -> Option<String> {
    obj.get("metadata")?.get(key)?.as_str().map(str::to_owned)
}

pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = Value::Object(Map::new());
    }
    match obj.get_mut("metadata") {
        Some(Value::Object(m)) => m,
        _ => unreachable!("metadata was made an object just above"),
    }
}

fn set_meta_ns(def: &ResourceDef, obj: &mut Value, ns: &str) -> Result<(), ApiError> {
    let api_version = def.storage.def().api_version();
    let kind = def.kind;
    if let Some(map) = obj.as_object_mut() {
        map.insert("apiVersion".into(), json!(api_version));
        map.insert("kind".into(), json!(kind));
    }
    let meta = meta_mut(obj);
    if def.namespaced {
        match meta.get("namespace").and_then(Value::as_str) {
            Some(n) if !n.is_empty() && n != ns => {
                return Err(ApiError::BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request"
                        .into(),
                ));
            }
            _ => {
                meta.insert("namespace".into(), json!(ns));
            }
        }
    } else {
        meta.remove("namespace");
    }
    Ok(())
}

/// Kinds whose registry strategy sets `metadata.generation` (1 on create,
/// +1 on a spec change). HPAs only with `HPAGeneration` (k/k #138228: beta,
/// on, in v1.37; absent in v1.36): without it a created HPA keeps whatever
/// generation the client sent (usually none) and an update keeps the stored
/// one, as the generic registry's `BeforeUpdate` does.
fn has_generation(s: Storage, gates: &FeatureGates) -> bool {
    match s {
        Storage::Deployments | Storage::ReplicaSets | Storage::StatefulSets | Storage::Pods => true,
        Storage::Hpas => gates.generation(),
        _ => false,
    }
}

fn reset_status_on_create(s: Storage, obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    match s {
        Storage::Pods => {
            map.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": "BestEffort"}),
            );
        }
        Storage::Namespaces => {
            map.insert("status".into(), json!({"phase": "Active"}));
        }
        Storage::Deployments | Storage::ReplicaSets | Storage::StatefulSets | Storage::Hpas => {
            map.remove("status");
        }
        Storage::ApiServices => {
            map.insert(
                "status".into(),
                json!({"conditions": [{"type": "Available", "status": "True",
                    "reason": "Passed", "message": "all checks passed"}]}),
            );
        }
        Storage::Services => {
            map.insert("status".into(), json!({"loadBalancer": {}}));
        }
        Storage::Crds => {
            let status = crd::initial_status(&Value::Object(map.clone()));
            map.insert("status".into(), status);
        }
        // A kubelet registers its node with its status; events and leases
        // have none; others keep what they were given.
        Storage::Events
        | Storage::Leases
        | Storage::Nodes
        | Storage::Ingresses
        | Storage::ConfigMaps
        | Storage::Secrets
        | Storage::ServiceAccounts
        | Storage::Custom(_) => {}
    }
}

/// `metadata.finalizers`, empty when absent.
fn finalizers(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Whether the object has been asked to go (`metadata.deletionTimestamp`).
fn is_terminating(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

fn default_object(s: Storage, obj: &mut Value) {
    match s {
        Storage::Hpas => hpa::default_v2(obj),
        Storage::Deployments | Storage::ReplicaSets | Storage::StatefulSets => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
                && spec.get("replicas").is_none_or(Value::is_null)
            {
                spec.insert("replicas".into(), json!(1));
            }
        }
        _ => {}
    }
}

fn validate(
    def: &ResourceDef,
    obj: &Value,
    name: &str,
    hpa_opts: hpa::ValidationOptions,
) -> Result<(), ApiError> {
    let mut causes = validate::name_causes(def, name);
    match def.storage {
        Storage::Crds => causes.extend(crd::validate(obj, name)),
        Storage::Hpas => {
            causes.extend(hpa::validate_v2_with(obj, hpa_opts));
            causes.extend(validate::tolerance_causes(obj)?);
        }
        Storage::Deployments | Storage::ReplicaSets | Storage::StatefulSets => {
            if let Some(r) = obj.pointer("/spec/replicas").and_then(Value::as_i64)
                && r < 0
            {
                causes.push(FieldError::invalid(
                    "spec.replicas",
                    r,
                    "must be greater than or equal to 0",
                ));
            }
            if obj.pointer("/spec/selector").is_none_or(Value::is_null) {
                causes.push(FieldError::required("spec.selector", ""));
            }
        }
        _ => {}
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(invalid(def, name, causes))
    }
}

fn cascade_delete(st: &mut State, s: Storage, gone: &Entry) {
    match s {
        Storage::Crds => {
            // Its custom resources go with it.
            if let Some(def) = crd::defs_of(&gone.value()).first() {
                let keys: Vec<(Box<str>, Box<str>)> = st
                    .store
                    .table(def.storage)
                    .range(None)
                    .map(|e| (e.ns.clone(), e.name.clone()))
                    .collect();
                for (ns, n) in keys {
                    st.store.remove(def.storage, &ns, &n);
                }
            }
        }
        Storage::Namespaces => {
            for other in Storage::every() {
                if !other.def().namespaced {
                    continue;
                }
                let names: Vec<Box<str>> = st
                    .store
                    .table(other)
                    .range(Some(&gone.name))
                    .map(|e| e.name.clone())
                    .collect();
                for n in names {
                    st.store.remove(other, &gone.name, &n);
                }
            }
        }
        s if s.is_workload() => {
            let uid = gone
                .value()
                .pointer("/metadata/uid")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let pods = uid.map(|u| st.store.owned_pods(&u)).unwrap_or_default();
            for p in pods {
                st.store.remove(Storage::Pods, &gone.ns, &p);
            }
            st.next_index
                .remove(&(s, gone.ns.to_string(), gone.name.to_string()));
            crate::updater::forget(st, s, &gone.ns, &gone.name);
        }
        _ => {}
    }
}

/// What a lagging watch cache holds back: the changes after resourceVersion
/// `after_rv` written after `after`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cutoff {
    pub after_rv: u64,
    pub after: Timestamp,
}

impl Cutoff {
    /// Whether the change `ev` is held back.
    pub fn holds(&self, ev: &crate::store::HistEvent) -> bool {
        ev.rv > self.after_rv && ev.at > self.after
    }
}

/// Lists matching entries of one storage, from after `start` (a continue
/// key), at most `limit`. Returns the entries, the resourceVersion they are
/// consistent with, and the continue key if more remain. With `as_of`
/// (a lagging watch cache, [`Sim::watch_cutoff`]), the objects as written
/// by then, all in one page.
pub(crate) fn list_entries(
    st: &State,
    s: Storage,
    ns: Option<&str>,
    labels: &Selector,
    fields: &Selector,
    page: (Option<&(String, String)>, Option<usize>),
    as_of: Option<Cutoff>,
) -> (Vec<Arc<Entry>>, u64, Option<(String, String)>) {
    let (start, limit) = page;
    if let Some((objects, rv)) = as_of.and_then(|cutoff| st.store.as_of(s, |e| cutoff.holds(e))) {
        let entries = objects
            .into_values()
            .filter(|e| ns.is_none_or(|n| &*e.ns == n) && entry_matches(e, labels, fields))
            .collect();
        return (entries, rv, None);
    }
    let table = st.store.table(s);
    let iter: Box<dyn Iterator<Item = &Arc<Entry>>> = match start {
        Some((sns, sname)) => {
            let from: (Box<str>, Box<str>) = (sns.as_str().into(), sname.as_str().into());
            Box::new(
                table
                    .objects
                    .range((std::ops::Bound::Excluded(from), std::ops::Bound::Unbounded))
                    .map(|(_, e)| e)
                    .take_while(move |e| ns.is_none_or(|n| &*e.ns == n)),
            )
        }
        None => table.range(ns),
    };
    let mut out = Vec::new();
    let mut next = None;
    for e in iter {
        if !entry_matches(e, labels, fields) {
            continue;
        }
        if limit.is_some_and(|l| out.len() >= l) {
            let last: &Arc<Entry> = out.last().unwrap_or(e);
            next = Some((last.ns.to_string(), last.name.to_string()));
            break;
        }
        out.push(e.clone());
    }
    (out, st.store.rv(), next)
}

pub(crate) fn entry_matches(e: &Entry, labels: &Selector, fields: &Selector) -> bool {
    (labels.is_empty() || labels.matches_pairs(&e.labels))
        && (fields.is_empty() || fields.matches(&crate::store::FieldValues(e)))
}
