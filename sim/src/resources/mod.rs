//! The resources the sim serves: one static table drives routing, discovery
//! and storage, so adding a resource is one line. The definitions custom
//! resources add at run time are kept in [`custom`].

pub mod custom;

use custom::{MAX_CUSTOM, PrinterColumn, ScalePaths};

/// Where objects of a resource are kept. Two served versions may share one
/// storage (autoscaling/v1 and v2 HPAs; core/v1 and events.k8s.io/v1 events),
/// converted on the way in and out, as the real API server does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Storage {
    /// core/v1 namespaces (cluster-scoped).
    Namespaces,
    /// core/v1 pods.
    Pods,
    /// core/v1 events (also served as events.k8s.io/v1).
    Events,
    /// apps/v1 deployments.
    Deployments,
    /// apps/v1 replicasets.
    ReplicaSets,
    /// apps/v1 statefulsets.
    StatefulSets,
    /// HPAs, stored as autoscaling/v2.
    Hpas,
    /// coordination.k8s.io/v1 leases.
    Leases,
    /// apiregistration.k8s.io/v1 APIServices (cluster-scoped).
    ApiServices,
    /// core/v1 services (targets of Object metrics; fake-metrics-server's Service).
    Services,
    /// core/v1 nodes (cluster-scoped; the harness's fake node on real clusters).
    Nodes,
    /// networking.k8s.io/v1 ingresses (objects Object metrics describe).
    Ingresses,
    /// core/v1 configmaps.
    ConfigMaps,
    /// core/v1 secrets (charts render them next to their workloads).
    Secrets,
    /// core/v1 serviceaccounts (charts render them next to their workloads).
    ServiceAccounts,
    /// apiextensions.k8s.io/v1 CustomResourceDefinitions (cluster-scoped).
    Crds,
    /// The objects of one custom resource (group and plural), in a slot
    /// [`custom`] hands out when its CRD is stored.
    Custom(u8),
}

impl Storage {
    /// The built-in storages, in table order.
    pub const ALL: [Storage; 16] = [
        Storage::Namespaces,
        Storage::Pods,
        Storage::Events,
        Storage::Deployments,
        Storage::ReplicaSets,
        Storage::StatefulSets,
        Storage::Hpas,
        Storage::Leases,
        Storage::ApiServices,
        Storage::Services,
        Storage::Nodes,
        Storage::Ingresses,
        Storage::ConfigMaps,
        Storage::Secrets,
        Storage::ServiceAccounts,
        Storage::Crds,
    ];

    /// Every storage: the built-in ones and every custom-resource slot.
    pub fn every() -> impl Iterator<Item = Storage> {
        Self::ALL
            .into_iter()
            .chain((0..MAX_CUSTOM).map(Storage::Custom))
    }

    /// Index into per-storage tables.
    pub fn index(self) -> usize {
        match self {
            Storage::Custom(slot) => Self::ALL.len() + usize::from(slot),
            builtin => Self::ALL
                .iter()
                .position(|s| *s == builtin)
                .unwrap_or_default(),
        }
    }

    /// The served definition objects are stored as.
    pub fn def(self) -> &'static ResourceDef {
        let (group, version, plural) = match self {
            Storage::Custom(slot) => return custom::storage_def(slot).unwrap_or(&RESOURCES[0]),
            Storage::Ingresses => ("networking.k8s.io", "v1", "ingresses"),
            Storage::ConfigMaps => ("", "v1", "configmaps"),
            Storage::Secrets => ("", "v1", "secrets"),
            Storage::ServiceAccounts => ("", "v1", "serviceaccounts"),
            Storage::Crds => ("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
            Storage::Namespaces => ("", "v1", "namespaces"),
            Storage::Pods => ("", "v1", "pods"),
            Storage::Events => ("", "v1", "events"),
            Storage::Deployments => ("apps", "v1", "deployments"),
            Storage::ReplicaSets => ("apps", "v1", "replicasets"),
            Storage::StatefulSets => ("apps", "v1", "statefulsets"),
            Storage::Hpas => ("autoscaling", "v2", "horizontalpodautoscalers"),
            Storage::Leases => ("coordination.k8s.io", "v1", "leases"),
            Storage::ApiServices => ("apiregistration.k8s.io", "v1", "apiservices"),
            Storage::Services => ("", "v1", "services"),
            Storage::Nodes => ("", "v1", "nodes"),
        };
        RESOURCES
            .iter()
            .find(|d| d.group == group && d.version == version && d.plural == plural)
            .unwrap_or(&RESOURCES[0])
    }

    /// Whether this is a workload with a scale subresource and simulated pods.
    pub fn is_workload(self) -> bool {
        matches!(
            self,
            Storage::Deployments | Storage::ReplicaSets | Storage::StatefulSets
        )
    }
}

/// One served resource (group, version, plural).
#[derive(Debug)]
pub struct ResourceDef {
    /// API group (`""` for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Plural name used in URLs.
    pub plural: &'static str,
    /// Singular name.
    pub singular: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Where objects live.
    pub storage: Storage,
    /// Whether `/status` exists.
    pub status: bool,
    /// Whether `/scale` exists.
    pub scale: bool,
    /// kubectl short names.
    pub short_names: &'static [&'static str],
    /// Where a custom resource keeps what its `/scale` shows.
    pub scale_paths: Option<&'static ScalePaths>,
    /// A custom resource's `additionalPrinterColumns` (empty: Name and Age).
    pub printer_columns: &'static [PrinterColumn],
}

impl ResourceDef {
    /// `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `pods` or `deployments.apps` (as in error messages).
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_owned()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Field labels a `fieldSelector` may use on this resource.
    pub fn field_labels(&self) -> &'static [&'static str] {
        match self.storage {
            Storage::Pods => &[
                "metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ],
            Storage::Events => &[
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "regarding.kind",
                "regarding.namespace",
                "regarding.name",
                "regarding.uid",
                "regarding.apiVersion",
                "regarding.resourceVersion",
                "regarding.fieldPath",
                "reason",
                "reportingComponent",
                "reportingController",
                "source",
                "type",
            ],
            Storage::Namespaces => &["metadata.name", "status.phase"],
            Storage::ReplicaSets => &["metadata.name", "metadata.namespace", "status.replicas"],
            _ => &["metadata.name", "metadata.namespace"],
        }
    }
}

macro_rules! res {
    ($g:expr, $v:expr, $p:expr, $s:expr, $k:expr, $ns:expr, $st:expr, $status:expr, $scale:expr, $short:expr) => {
        ResourceDef {
            group: $g,
            version: $v,
            plural: $p,
            singular: $s,
            kind: $k,
            namespaced: $ns,
            storage: $st,
            status: $status,
            scale: $scale,
            short_names: $short,
            scale_paths: None,
            printer_columns: &[],
        }
    };
}

/// Every served resource.
pub static RESOURCES: &[ResourceDef] = &[
    res!(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        false,
        Storage::Namespaces,
        true,
        false,
        &["ns"]
    ),
    res!(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        true,
        Storage::Pods,
        true,
        false,
        &["po"]
    ),
    res!(
        "",
        "v1",
        "events",
        "event",
        "Event",
        true,
        Storage::Events,
        false,
        false,
        &["ev"]
    ),
    res!(
        "",
        "v1",
        "services",
        "service",
        "Service",
        true,
        Storage::Services,
        true,
        false,
        &["svc"]
    ),
    res!(
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        false,
        Storage::Nodes,
        true,
        false,
        &["no"]
    ),
    res!(
        "",
        "v1",
        "configmaps",
        "configmap",
        "ConfigMap",
        true,
        Storage::ConfigMaps,
        false,
        false,
        &["cm"]
    ),
    res!(
        "",
        "v1",
        "secrets",
        "secret",
        "Secret",
        true,
        Storage::Secrets,
        false,
        false,
        &[]
    ),
    res!(
        "",
        "v1",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        true,
        Storage::ServiceAccounts,
        false,
        false,
        &["sa"]
    ),
    res!(
        "networking.k8s.io",
        "v1",
        "ingresses",
        "ingress",
        "Ingress",
        true,
        Storage::Ingresses,
        true,
        false,
        &["ing"]
    ),
    res!(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        false,
        Storage::Crds,
        true,
        false,
        &["crd", "crds"]
    ),
    res!(
        "events.k8s.io",
        "v1",
        "events",
        "event",
        "Event",
        true,
        Storage::Events,
        false,
        false,
        &["ev"]
    ),
    res!(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        true,
        Storage::Deployments,
        true,
        true,
        &["deploy"]
    ),
    res!(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        Storage::ReplicaSets,
        true,
        true,
        &["rs"]
    ),
    res!(
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        Storage::StatefulSets,
        true,
        true,
        &["sts"]
    ),
    res!(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        true,
        Storage::Hpas,
        true,
        false,
        &["hpa"]
    ),
    res!(
        "autoscaling",
        "v1",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        true,
        Storage::Hpas,
        true,
        false,
        &["hpa"]
    ),
    res!(
        "coordination.k8s.io",
        "v1",
        "leases",
        "lease",
        "Lease",
        true,
        Storage::Leases,
        false,
        false,
        &[]
    ),
    res!(
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "apiservice",
        "APIService",
        false,
        Storage::ApiServices,
        true,
        false,
        &[]
    ),
];

/// Finds the served resource for `group/version/plural`.
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
    RESOURCES
        .iter()
        .find(|d| d.group == group && d.version == version && d.plural == plural)
}

/// Groups in discovery order, each with its versions (preferred first).
pub fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for d in RESOURCES.iter().filter(|d| !d.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == d.group) {
            Some((_, vs)) => {
                if !vs.contains(&d.version) {
                    vs.push(d.version);
                }
            }
            None => out.push((d.group, vec![d.version])),
        }
    }
    out
}
