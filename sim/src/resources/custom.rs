//! The definitions custom resources add to the table at run time, kept here
//! beside the static table because [`Storage::def`] of a custom slot reads
//! them.
//!
//! The served definitions are `&'static` like the built-in table: each
//! distinct definition is leaked once, process-wide, so scenarios that
//! create the same CRD again do not grow memory. Each custom resource (group
//! and plural) gets one of [`MAX_CUSTOM`] storage slots. What a CRD object
//! says is read by [`crate::crd`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{ResourceDef, Storage};

/// How many custom resources (group and plural) one process can serve.
pub const MAX_CUSTOM: u8 = 32;

/// Where a custom resource keeps what its `/scale` shows (JSON pointers).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ScalePaths {
    /// `specReplicasPath` (`.spec.replicas` -> `/spec/replicas`).
    pub spec_replicas: String,
    /// `statusReplicasPath`.
    pub status_replicas: String,
    /// `labelSelectorPath`, if the CRD gives one.
    pub label_selector: Option<String>,
}

/// One of a CRD version's `additionalPrinterColumns`: what `kubectl get`
/// prints for its objects instead of Name and Age alone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PrinterColumn {
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub kind: String,
    /// A JSONPath (`.spec.x`, `.spec.list[*].y`, `.status.conditions[?(@.type=="Ready")].status`).
    pub json_path: String,
    /// 0, or 1 for `-o wide` only.
    pub priority: i64,
}

/// Everything that makes one served definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DefKey {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub namespaced: bool,
    pub status: bool,
    pub scale: Option<ScalePaths>,
    pub short_names: Vec<String>,
    pub columns: Vec<PrinterColumn>,
}

struct Registry {
    /// (group, plural) of each slot.
    slots: Vec<(String, String)>,
    /// The storage version's definition of each slot.
    storage: Vec<Option<&'static ResourceDef>>,
    defs: BTreeMap<DefKey, &'static ResourceDef>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: Vec::new(),
    storage: Vec::new(),
    defs: BTreeMap::new(),
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

impl Registry {
    fn slot(&mut self, group: &str, plural: &str) -> Option<u8> {
        if let Some(i) = self
            .slots
            .iter()
            .position(|(g, p)| g == group && p == plural)
        {
            return u8::try_from(i).ok();
        }
        let next = u8::try_from(self.slots.len()).ok()?;
        if next >= MAX_CUSTOM {
            return None;
        }
        self.slots.push((group.to_owned(), plural.to_owned()));
        self.storage.push(None);
        Some(next)
    }

    fn intern(&mut self, key: DefKey, slot: u8) -> &'static ResourceDef {
        if let Some(d) = self.defs.get(&key) {
            return d;
        }
        let short: Vec<&'static str> = key.short_names.iter().map(|s| leak(s)).collect();
        let def: &'static ResourceDef = Box::leak(Box::new(ResourceDef {
            group: leak(&key.group),
            version: leak(&key.version),
            plural: leak(&key.plural),
            singular: leak(&key.singular),
            kind: leak(&key.kind),
            namespaced: key.namespaced,
            storage: Storage::Custom(slot),
            status: key.status,
            scale: key.scale.is_some(),
            short_names: Box::leak(short.into_boxed_slice()),
            scale_paths: key.scale.clone().map(|p| &*Box::leak(Box::new(p))),
            printer_columns: Box::leak(key.columns.clone().into_boxed_slice()),
        }));
        self.defs.insert(key, def);
        def
    }
}

/// The definition objects of custom slot `slot` are stored as.
pub fn storage_def(slot: u8) -> Option<&'static ResourceDef> {
    registry().storage.get(usize::from(slot)).copied().flatten()
}

/// The slot of custom resource `group`/`plural`, taking a free one for a
/// new resource. `None` when every slot is taken.
pub(crate) fn claim_slot(group: &str, plural: &str) -> Option<u8> {
    registry().slot(group, plural)
}

/// The definitions of custom resource `group`/`plural`, one per served
/// version (each with whether it is the storage version), in its slot.
/// The storage version (else the first) becomes the slot's storage
/// definition. Empty when every slot is taken.
pub(crate) fn register(
    group: &str,
    plural: &str,
    versions: Vec<(DefKey, bool)>,
) -> Vec<&'static ResourceDef> {
    let mut reg = registry();
    let Some(slot) = reg.slot(group, plural) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, storage) in versions {
        let def = reg.intern(key, slot);
        if storage {
            reg.storage[usize::from(slot)] = Some(def);
        }
        out.push(def);
    }
    if reg.storage[usize::from(slot)].is_none()
        && let Some(first) = out.first()
    {
        reg.storage[usize::from(slot)] = Some(first);
    }
    out
}
