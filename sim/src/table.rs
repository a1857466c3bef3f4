//! Server-side printing: `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
//!
//! `kubectl get` asks the API server for a `meta.k8s.io/v1` `Table` and
//! prints its columns as they come. The columns and cell formats here follow
//! kube-apiserver's printers (`pkg/printers/internalversion/printers.go`),
//! so `kubectl get hpa` shows `NAME REFERENCE TARGETS MINPODS MAXPODS
//! REPLICAS AGE` as on a real cluster. Ages are measured on the sim's clock.

use http::HeaderMap;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::resources::{ResourceDef, Storage};

/// What a `Table` row carries besides its cells (`?includeObject=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    /// No object.
    None,
    /// A `PartialObjectMetadata` (the default).
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Parses the `includeObject` query parameter (absent: `Metadata`).
    pub fn parse(param: Option<&str>) -> Result<Self, String> {
        match param {
            None | Some("" | "Metadata") => Ok(Self::Metadata),
            Some("None") => Ok(Self::None),
            Some("Object") => Ok(Self::Object),
            Some(other) => Err(format!(
                "includeObject: unsupported value {other:?}: supported values: \"None\", \"Metadata\", \"Object\""
            )),
        }
    }
}

/// Whether the client asked for a `meta.k8s.io` `Table` (it may list JSON
/// after it as a fallback; the first acceptable choice wins, as upstream).
pub fn wants_table(headers: &HeaderMap) -> bool {
    let accept = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    accept
        .split(',')
        .map(|choice| {
            choice
                .split(';')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
        })
        .find(|parts| !parts.is_empty())
        .is_some_and(|parts| {
            parts.contains(&"as=Table")
                && parts.contains(&"g=meta.k8s.io")
                && (parts.contains(&"v=v1") || parts.contains(&"v=v1beta1"))
        })
}

/// One column: name, type, priority (1: only with `-o wide`).
struct Column(&'static str, &'static str, u8);

const NAME: Column = Column("Name", "string", 0);
const AGE: Column = Column("Age", "string", 0);

fn columns(storage: Storage) -> Vec<Column> {
    match storage {
        Storage::Pods => vec![
            NAME,
            Column("Ready", "string", 0),
            Column("Status", "string", 0),
            Column("Restarts", "string", 0),
            AGE,
            Column("IP", "string", 1),
            Column("Node", "string", 1),
            Column("Nominated Node", "string", 1),
            Column("Readiness Gates", "string", 1),
        ],
        Storage::Deployments => vec![
            NAME,
            Column("Ready", "string", 0),
            Column("Up-to-date", "string", 0),
            Column("Available", "string", 0),
            AGE,
            Column("Containers", "string", 1),
            Column("Images", "string", 1),
            Column("Selector", "string", 1),
        ],
        Storage::ReplicaSets => vec![
            NAME,
            Column("Desired", "integer", 0),
            Column("Current", "integer", 0),
            Column("Ready", "integer", 0),
            AGE,
            Column("Containers", "string", 1),
            Column("Images", "string", 1),
            Column("Selector", "string", 1),
        ],
        Storage::StatefulSets => vec![
            NAME,
            Column("Ready", "string", 0),
            AGE,
            Column("Containers", "string", 1),
            Column("Images", "string", 1),
        ],
        Storage::Hpas => vec![
            NAME,
            Column("Reference", "string", 0),
            Column("Targets", "string", 0),
            Column("MinPods", "string", 0),
            Column("MaxPods", "integer", 0),
            Column("Replicas", "integer", 0),
            AGE,
        ],
        Storage::Events => vec![
            Column("Last Seen", "string", 0),
            Column("Type", "string", 0),
            Column("Reason", "string", 0),
            Column("Object", "string", 0),
            Column("Subobject", "string", 1),
            Column("Source", "string", 1),
            Column("Message", "string", 0),
            Column("First Seen", "string", 1),
            Column("Count", "string", 1),
            Column("Name", "string", 1),
        ],
        Storage::Nodes => vec![
            NAME,
            Column("Status", "string", 0),
            Column("Roles", "string", 0),
            AGE,
            Column("Version", "string", 0),
            Column("Internal-IP", "string", 1),
            Column("External-IP", "string", 1),
            Column("OS-Image", "string", 1),
            Column("Kernel-Version", "string", 1),
            Column("Container-Runtime", "string", 1),
        ],
        Storage::Namespaces => vec![NAME, Column("Status", "string", 0), AGE],
        Storage::Services => vec![
            NAME,
            Column("Type", "string", 0),
            Column("Cluster-IP", "string", 0),
            Column("External-IP", "string", 0),
            Column("Port(s)", "string", 0),
            AGE,
            Column("Selector", "string", 1),
        ],
        Storage::Leases => vec![NAME, Column("Holder", "string", 0), AGE],
        Storage::ApiServices => vec![
            NAME,
            Column("Service", "string", 0),
            Column("Available", "string", 0),
            AGE,
        ],
        Storage::Ingresses => vec![
            NAME,
            Column("Class", "string", 0),
            Column("Hosts", "string", 0),
            Column("Address", "string", 0),
            Column("Ports", "string", 0),
            AGE,
        ],
        Storage::ConfigMaps => vec![NAME, Column("Data", "string", 0), AGE],
        Storage::Secrets => vec![
            NAME,
            Column("Type", "string", 0),
            Column("Data", "string", 0),
            AGE,
        ],
        Storage::ServiceAccounts => vec![NAME, Column("Secrets", "string", 0), AGE],
        // The apiextensions server's default table: name and creation time.
        Storage::Crds => vec![NAME, Column("Created At", "date", 0)],
        Storage::Custom(_) => vec![NAME, AGE],
    }
}

fn column_definitions(def: &ResourceDef) -> Vec<Value> {
    if !def.printer_columns.is_empty() {
        // The API server's table convertor for a CRD: Name, then its columns.
        let mut out = vec![
            json!({"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0}),
        ];
        out.extend(def.printer_columns.iter().map(|c| {
            json!({"name": c.name, "type": c.kind, "format": "", "description": "", "priority": c.priority})
        }));
        return out;
    }
    let storage = def.storage;
    columns(storage)
        .into_iter()
        .map(|Column(name, ty, priority)| {
            let format = if name == "Name" && storage != Storage::Events {
                "name"
            } else {
                ""
            };
            json!({"name": name, "type": ty, "format": format, "description": "", "priority": priority})
        })
        .collect()
}

/// A `Table` of `items` (served-version objects) of `def`.
pub fn table(
    def: &ResourceDef,
    items: &[Value],
    now: Timestamp,
    list_meta: Value,
    include: IncludeObject,
) -> Value {
    let rows: Vec<Value> = items.iter().map(|o| row(def, o, now, include)).collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": column_definitions(def),
        "rows": rows,
    })
}

/// A one-row `Table` for a watch event's object.
pub fn watch_table(
    def: &ResourceDef,
    obj: &Value,
    now: Timestamp,
    include: IncludeObject,
) -> Value {
    let rv = obj
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    table(
        def,
        std::slice::from_ref(obj),
        now,
        json!({"resourceVersion": rv}),
        include,
    )
}

fn row(def: &ResourceDef, obj: &Value, now: Timestamp, include: IncludeObject) -> Value {
    let mut r = Map::new();
    // events.k8s.io/v1 events print as core ones do (upstream prints the
    // internal type both versions convert to).
    let printable = if def.storage == Storage::Events {
        // (No HPA here: the release does not matter.)
        crate::convert::from_view(
            def,
            obj.clone(),
            hpa_core::version::KubernetesVersion::default(),
        )
    } else {
        obj.clone()
    };
    let cells = if def.printer_columns.is_empty() {
        cells(def.storage, &printable, now)
    } else {
        custom_cells(def, &printable, now)
    };
    r.insert("cells".into(), Value::Array(cells));
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            r.insert(
                "object".into(),
                json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))}),
            );
        }
        IncludeObject::Object => {
            r.insert("object".into(), obj.clone());
        }
    }
    Value::Object(r)
}

/// A custom resource's cells from its CRD's printer columns, as the API
/// server prints them: several values joined by commas, dates as ages,
/// nothing found as an empty cell (kubectl shows `<none>`).
fn custom_cells(def: &ResourceDef, o: &Value, now: Timestamp) -> Vec<Value> {
    let mut out = vec![json!(s(o, "/metadata/name"))];
    for c in def.printer_columns {
        let found = crate::crd::json_path(o, &c.json_path);
        let cell = match (c.kind.as_str(), found.as_slice()) {
            (_, []) => Value::Null,
            ("date", [one]) => json!(age_of(one.as_str().unwrap_or_default(), now)),
            ("integer" | "number" | "boolean", [one]) => (*one).clone(),
            (_, many) => json!(
                many.iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        out.push(cell);
    }
    out
}

fn s<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn int(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn or_none(text: &str) -> String {
    if text.is_empty() {
        "<none>".to_owned()
    } else {
        text.to_owned()
    }
}

fn cells(storage: Storage, o: &Value, now: Timestamp) -> Vec<Value> {
    let name = json!(s(o, "/metadata/name"));
    let age = json!(age_of(s(o, "/metadata/creationTimestamp"), now));
    match storage {
        Storage::Pods => pod_cells(o, now, name, age),
        Storage::Deployments => {
            let (containers, images) = containers(o, "/spec/template/spec/containers");
            vec![
                name,
                json!(format!(
                    "{}/{}",
                    int(o, "/status/readyReplicas"),
                    desired(o)
                )),
                json!(int(o, "/status/updatedReplicas")),
                json!(int(o, "/status/availableReplicas")),
                age,
                json!(containers),
                json!(images),
                json!(format_selector(o.pointer("/spec/selector"))),
            ]
        }
        Storage::ReplicaSets => {
            let (containers, images) = containers(o, "/spec/template/spec/containers");
            vec![
                name,
                json!(desired(o)),
                json!(int(o, "/status/replicas")),
                json!(int(o, "/status/readyReplicas")),
                age,
                json!(containers),
                json!(images),
                json!(format_selector(o.pointer("/spec/selector"))),
            ]
        }
        Storage::StatefulSets => {
            let (containers, images) = containers(o, "/spec/template/spec/containers");
            vec![
                name,
                json!(format!(
                    "{}/{}",
                    int(o, "/status/readyReplicas"),
                    desired(o)
                )),
                age,
                json!(containers),
                json!(images),
            ]
        }
        Storage::Hpas => hpa_cells(o, name, age),
        Storage::Events => event_cells(o, now),
        Storage::Nodes => node_cells(o, name, age),
        Storage::Namespaces => vec![name, json!(s(o, "/status/phase")), age],
        Storage::Services => service_cells(o, name, age),
        Storage::Leases => vec![name, json!(s(o, "/spec/holderIdentity")), age],
        Storage::ApiServices => {
            let service = match o.pointer("/spec/service") {
                Some(svc) if svc.is_object() => {
                    format!("{}/{}", s(svc, "/namespace"), s(svc, "/name"))
                }
                _ => "Local".to_owned(),
            };
            let available = condition(o, "Available").map_or_else(
                || "Unknown".to_owned(),
                |c| {
                    let status = s(c, "/status");
                    if status == "True" {
                        status.to_owned()
                    } else {
                        format!("{status} ({})", s(c, "/reason"))
                    }
                },
            );
            vec![name, json!(service), json!(available), age]
        }
        Storage::Ingresses => ingress_cells(o, name, age),
        Storage::ConfigMaps => {
            let data = o.get("data").and_then(Value::as_object).map_or(0, Map::len)
                + o.get("binaryData")
                    .and_then(Value::as_object)
                    .map_or(0, Map::len);
            vec![name, json!(data), age]
        }
        Storage::Secrets => {
            let data = o.get("data").and_then(Value::as_object).map_or(0, Map::len);
            vec![name, json!(s(o, "/type")), json!(data), age]
        }
        Storage::ServiceAccounts => {
            let secrets = o
                .get("secrets")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            vec![name, json!(secrets), age]
        }
        Storage::Crds => vec![name, json!(s(o, "/metadata/creationTimestamp"))],
        Storage::Custom(_) => vec![name, age],
    }
}

/// Upstream's ingress printer: class, hosts, load-balancer address, ports
/// (80, and 443 when TLS is set).
fn ingress_cells(o: &Value, name: Value, age: Value) -> Vec<Value> {
    let class = or_none(s(o, "/spec/ingressClassName"));
    let hosts: Vec<&str> = o
        .pointer("/spec/rules")
        .and_then(Value::as_array)
        .map(|rules| {
            rules
                .iter()
                .map(|r| r.get("host").and_then(Value::as_str).unwrap_or("*"))
                .collect()
        })
        .unwrap_or_default();
    let hosts = if hosts.is_empty() {
        "*".to_owned()
    } else {
        hosts.join(",")
    };
    let address: Vec<&str> = o
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .map(|lbs| {
            lbs.iter()
                .filter_map(|lb| {
                    lb.get("ip")
                        .or_else(|| lb.get("hostname"))
                        .and_then(Value::as_str)
                })
                .collect()
        })
        .unwrap_or_default();
    let tls = o
        .pointer("/spec/tls")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let ports = if tls { "80, 443" } else { "80" };
    vec![
        name,
        json!(class),
        json!(hosts),
        json!(address.join(",")),
        json!(ports),
        age,
    ]
}

/// `spec.replicas`, which the API server defaults to 1.
fn desired(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

fn condition<'a>(o: &'a Value, ty: &str) -> Option<&'a Value> {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == ty))
}

fn containers(o: &Value, pointer: &str) -> (String, String) {
    let list = o.pointer(pointer).and_then(Value::as_array);
    let names: Vec<&str> = list.into_iter().flatten().map(|c| s(c, "/name")).collect();
    let images: Vec<&str> = list.into_iter().flatten().map(|c| s(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// `metav1.FormatLabelSelector`: `app=web,tier in (a,b)`, `<none>` for
/// none, and `<none>` for an empty selector too (as upstream prints it).
fn format_selector(sel: Option<&Value>) -> String {
    let Some(sel) = sel.filter(|v| v.is_object()) else {
        return "<none>".to_owned();
    };
    let mut parts: Vec<String> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = s(e, "/key");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        parts.push(match s(e, "/operator") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            op => format!("{key} {op}"),
        });
    }
    if parts.is_empty() {
        "<none>".to_owned()
    } else {
        parts.join(",")
    }
}

fn pod_cells(o: &Value, now: Timestamp, name: Value, age: Value) -> Vec<Value> {
    let statuses: Vec<&Value> = o
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let total = o
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let mut reason = match s(o, "/status/reason") {
        "" => s(o, "/status/phase").to_owned(),
        r => r.to_owned(),
    };
    let mut ready = 0;
    let mut restarts = 0;
    let mut last_restart: Option<Timestamp> = None;
    for c in statuses.iter().rev() {
        restarts += int(c, "/restartCount");
        if let Ok(t) = s(c, "/lastState/terminated/finishedAt").parse::<Timestamp>() {
            last_restart = Some(last_restart.map_or(t, |l| l.max(t)));
        }
        let waiting = s(c, "/state/waiting/reason");
        let terminated = s(c, "/state/terminated/reason");
        if !waiting.is_empty() {
            waiting.clone_into(&mut reason);
        } else if !terminated.is_empty() {
            terminated.clone_into(&mut reason);
        } else if c.pointer("/state/running").is_some() && c["ready"] == true {
            ready += 1;
        }
    }
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        reason = "Terminating".to_owned();
    }
    let restarts = match last_restart {
        Some(t) if restarts > 0 => {
            format!("{restarts} ({} ago)", human_duration(now.duration_since(t)))
        }
        _ => restarts.to_string(),
    };
    let gates = o
        .pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .filter(|g| !g.is_empty())
        .map_or_else(|| "<none>".to_owned(), |g| format!("0/{}", g.len()));
    vec![
        name,
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts),
        age,
        json!(or_none(s(o, "/status/podIP"))),
        json!(or_none(s(o, "/spec/nodeName"))),
        json!(or_none(s(o, "/status/nominatedNodeName"))),
        json!(gates),
    ]
}

fn hpa_cells(o: &Value, name: Value, age: Value) -> Vec<Value> {
    let reference = format!(
        "{}/{}",
        s(o, "/spec/scaleTargetRef/kind"),
        s(o, "/spec/scaleTargetRef/name")
    );
    let targets = if o.pointer("/spec/metrics").is_some()
        || o.get("apiVersion").is_some_and(|v| v == "autoscaling/v2")
    {
        format_hpa_metrics(
            o.pointer("/spec/metrics")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice),
            o.pointer("/status/currentMetrics")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice),
        )
    } else {
        // autoscaling/v1: one CPU utilization target.
        let current = o
            .pointer("/status/currentCPUUtilizationPercentage")
            .and_then(Value::as_i64)
            .map_or_else(|| "<unknown>".to_owned(), |c| format!("{c}%"));
        let target = o
            .pointer("/spec/targetCPUUtilizationPercentage")
            .and_then(Value::as_i64)
            .map_or_else(|| "<auto>".to_owned(), |t| format!("{t}%"));
        format!("cpu: {current}/{target}")
    };
    let min = o
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or_else(|| "<unset>".to_owned(), |m| m.to_string());
    vec![
        name,
        json!(reference),
        json!(targets),
        json!(min),
        json!(int(o, "/spec/maxReplicas")),
        json!(int(o, "/status/currentReplicas")),
        age,
    ]
}

/// Upstream's `formatHPAMetrics`: at most two metrics, then `+ N more...`;
/// each status is read at the position of its spec.
pub fn format_hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".to_owned();
    }
    let unknown = || "<unknown>".to_owned();
    let q = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let mut list = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i);
        let ty = s(spec, "/type");
        let key = match ty {
            "External" => "external",
            "Pods" => "pods",
            "Object" => "object",
            "Resource" => "resource",
            "ContainerResource" => "containerResource",
            _ => "",
        };
        let source = spec.get(key);
        let current = status.and_then(|st| st.get(key));
        let target = source.and_then(|src| src.get("target"));
        let entry = match ty {
            "External" | "Object" => {
                if let Some(avg) = q(target.and_then(|t| t.get("averageValue"))) {
                    let cur = q(current.and_then(|c| c.pointer("/current/averageValue")))
                        .unwrap_or_else(unknown);
                    format!("{cur}/{avg} (avg)")
                } else {
                    let cur = q(current.and_then(|c| c.pointer("/current/value")))
                        .unwrap_or_else(unknown);
                    let value = q(target.and_then(|t| t.get("value"))).unwrap_or_default();
                    format!("{cur}/{value}")
                }
            }
            "Pods" => {
                let cur = q(current.and_then(|c| c.pointer("/current/averageValue")))
                    .unwrap_or_else(unknown);
                let avg = q(target.and_then(|t| t.get("averageValue"))).unwrap_or_default();
                format!("{cur}/{avg}")
            }
            "Resource" | "ContainerResource" => {
                let resource = source.map_or("", |src| s(src, "/name"));
                if let Some(avg) = q(target.and_then(|t| t.get("averageValue"))) {
                    let cur = q(current.and_then(|c| c.pointer("/current/averageValue")))
                        .unwrap_or_else(unknown);
                    format!("{resource}: {cur}/{avg}")
                } else {
                    let cur = current
                        .and_then(|c| c.pointer("/current/averageUtilization"))
                        .and_then(Value::as_i64)
                        .map_or_else(unknown, |u| format!("{u}%"));
                    let tgt = target
                        .and_then(|t| t.get("averageUtilization"))
                        .and_then(Value::as_i64)
                        .map_or_else(|| "<auto>".to_owned(), |u| format!("{u}%"));
                    format!("{resource}: {cur}/{tgt}")
                }
            }
            _ => "<unknown type>".to_owned(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > 2 {
        list.truncate(2);
        format!("{} + {} more...", list.join(", "), count - 2)
    } else {
        list.join(", ")
    }
}

fn event_cells(o: &Value, now: Timestamp) -> Vec<Value> {
    let first = match s(o, "/firstTimestamp") {
        "" => s(o, "/eventTime"),
        t => t,
    };
    let last = match (s(o, "/series/lastObservedTime"), s(o, "/lastTimestamp")) {
        (series, _) if !series.is_empty() => series,
        (_, "") => first,
        (_, t) => t,
    };
    let count = o
        .pointer("/series/count")
        .or_else(|| o.get("count"))
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let component = match s(o, "/source/component") {
        "" => s(o, "/reportingComponent"),
        c => c,
    };
    let source = match s(o, "/source/host") {
        "" => component.to_owned(),
        host => format!("{component}, {host}"),
    };
    vec![
        json!(age_of(last, now)),
        json!(s(o, "/type")),
        json!(s(o, "/reason")),
        json!(format!(
            "{}/{}",
            s(o, "/involvedObject/kind").to_lowercase(),
            s(o, "/involvedObject/name")
        )),
        json!(s(o, "/involvedObject/fieldPath")),
        json!(source),
        json!(s(o, "/message")),
        json!(age_of(first, now)),
        json!(count.to_string()),
        json!(s(o, "/metadata/name")),
    ]
}

fn node_cells(o: &Value, name: Value, age: Value) -> Vec<Value> {
    let mut status = match condition(o, "Ready").map(|c| s(c, "/status")) {
        Some("True") => "Ready".to_owned(),
        Some("False") => "NotReady".to_owned(),
        _ => "Unknown".to_owned(),
    };
    if o.pointer("/spec/unschedulable") == Some(&Value::Bool(true)) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                Some(role.to_owned())
            } else if k == "kubernetes.io/role" {
                v.as_str().map(str::to_owned)
            } else {
                None
            }
        })
        .filter(|r| !r.is_empty())
        .collect();
    roles.sort();
    let address = |ty: &str| {
        o.pointer("/status/addresses")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().find(|x| x["type"] == ty))
            .map_or_else(|| "<none>".to_owned(), |x| s(x, "/address").to_owned())
    };
    let info = |field: &str| match s(o, &format!("/status/nodeInfo/{field}")) {
        "" => "<unknown>".to_owned(),
        v => v.to_owned(),
    };
    vec![
        name,
        json!(status),
        json!(if roles.is_empty() {
            "<none>".to_owned()
        } else {
            roles.join(",")
        }),
        age,
        json!(s(o, "/status/nodeInfo/kubeletVersion")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

fn service_cells(o: &Value, name: Value, age: Value) -> Vec<Value> {
    let ty = match s(o, "/spec/type") {
        "" => "ClusterIP",
        t => t,
    };
    let external = match ty {
        "ExternalName" => s(o, "/spec/externalName").to_owned(),
        "LoadBalancer" => "<pending>".to_owned(),
        _ => "<none>".to_owned(),
    };
    let ports: Vec<String> = o
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let proto = match s(p, "/protocol") {
                "" => "TCP",
                x => x,
            };
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(node) => format!("{}:{node}/{proto}", int(p, "/port")),
                None => format!("{}/{proto}", int(p, "/port")),
            }
        })
        .collect();
    let selector = o
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
        .map_or_else(
            || "<none>".to_owned(),
            |m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join(",")
            },
        );
    vec![
        name,
        json!(ty),
        json!(or_none(s(o, "/spec/clusterIP"))),
        json!(external),
        json!(if ports.is_empty() {
            "<none>".to_owned()
        } else {
            ports.join(",")
        }),
        age,
        json!(selector),
    ]
}

/// `translateTimestampSince`: the age of an RFC 3339 instant, `<unknown>`
/// when there is none.
fn age_of(at: &str, now: Timestamp) -> String {
    at.parse::<Timestamp>().map_or_else(
        |_| "<unknown>".to_owned(),
        |t| human_duration(now.duration_since(t)),
    )
}

/// apimachinery's `duration.HumanDuration` (`45s`, `2m30s`, `5h`, `3d4h`).
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hpa_targets_print_as_upstream() {
        let specs = vec![
            json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}),
            json!({"type": "Pods", "pods": {"metric": {"name": "pps"}, "target": {"type": "AverageValue", "averageValue": "60"}}}),
        ];
        assert_eq!(format_hpa_metrics(&specs[..1], &[]), "cpu: <unknown>/50%");
        let statuses = vec![
            json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40, "averageValue": "80m"}}}),
            json!({"type": "Pods", "pods": {"metric": {"name": "pps"}, "current": {"averageValue": "75"}}}),
        ];
        assert_eq!(format_hpa_metrics(&specs, &statuses), "cpu: 40%/50%, 75/60");
        let three = [specs.clone(), specs[..1].to_vec()].concat();
        assert_eq!(
            format_hpa_metrics(&three, &statuses),
            "cpu: 40%/50%, 75/60 + 1 more..."
        );
        assert_eq!(format_hpa_metrics(&[], &[]), "<none>");
    }

    #[test]
    fn events_print_alike_in_both_versions() {
        let core = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "default"},
            "involvedObject": {"kind": "HorizontalPodAutoscaler", "name": "web"},
            "reason": "SuccessfulRescale", "type": "Normal", "message": "New size: 3",
            "source": {"component": "horizontal-pod-autoscaler"},
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:30Z",
            "count": 2});
        let now: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let want = json!([
            "30s",
            "Normal",
            "SuccessfulRescale",
            "horizontalpodautoscaler/web",
            "",
            "horizontal-pod-autoscaler",
            "New size: 3",
            "60s",
            "2",
            "web.1"
        ]);
        let v1_def = crate::resources::find("events.k8s.io", "v1", "events").unwrap();
        let core_def = crate::resources::find("", "v1", "events").unwrap();
        let t = table(
            core_def,
            std::slice::from_ref(&core),
            now,
            json!({}),
            IncludeObject::None,
        );
        assert_eq!(t["rows"][0]["cells"], want);
        let v1 = crate::convert::to_view(v1_def, core);
        let t = table(v1_def, &[v1], now, json!({}), IncludeObject::None);
        assert_eq!(t["rows"][0]["cells"], want);
    }

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        assert_eq!(human_duration(SignedDuration::from_secs(45)), "45s");
        assert_eq!(human_duration(SignedDuration::from_secs(150)), "2m30s");
        assert_eq!(human_duration(SignedDuration::from_secs(600)), "10m");
        assert_eq!(
            human_duration(SignedDuration::from_secs(3 * 3600 + 60)),
            "3h1m"
        );
        assert_eq!(human_duration(SignedDuration::from_secs(50 * 3600)), "2d2h");
    }

    #[test]
    fn the_first_acceptable_choice_decides() {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
                .parse()
                .unwrap(),
        );
        assert!(wants_table(&h));
        h.insert(http::header::ACCEPT, "application/json".parse().unwrap());
        assert!(!wants_table(&h));
    }

    #[test]
    fn deployments_print_ready_up_to_date_available() {
        let d = json!({"metadata": {"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "app", "image": "nginx"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        let now: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let def = crate::resources::find("apps", "v1", "deployments").unwrap();
        let t = table(def, &[d], now, json!({}), IncludeObject::None);
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["web", "2/3", 3, 2, "60s", "app", "nginx", "app=web"])
        );
        assert_eq!(t["columnDefinitions"][1]["name"], "Ready");
    }
}
