//! The HTTP surface: Kubernetes REST paths, discovery, list and watch.
//!
//! One fallback handler parses the path itself: Kubernetes paths overlap in
//! ways axum's matcher cannot express (`/api/v1/namespaces/{name}` is an
//! object, `/api/v1/namespaces/{ns}/pods` a collection).

use std::collections::VecDeque;
use std::io::Write as _;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use hpa_core::version::KubernetesVersion;
use http::{HeaderMap, Method, StatusCode, Uri};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::aggregation;
use crate::convert::{needs_conversion, to_view};
use crate::error::ApiError;
use crate::patch::PatchKind;
use crate::query;
use crate::resources::{self, RESOURCES, ResourceDef, Storage};
use crate::selector::{Operator, Selector};
use crate::sim::{Part, Sim, entry_matches, list_entries};
use crate::store::{Entry, EventType};

/// The router of a sim (no socket needed: it is a tower service).
pub fn router(sim: Sim) -> Router {
    Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BODY_BYTES))
        .with_state(sim)
}

/// The API server's `MaxRequestBodyBytes`: 3 MiB per object; a larger body
/// is refused (413) before it is buffered whole.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

#[derive(Debug, Default)]
struct Params(Vec<(String, String)>);

impl Params {
    fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str())
    }
    fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1"))
    }
}

async fn handle(
    State(sim): State<Sim>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return ApiError::TooLarge {
                limit: MAX_REQUEST_BODY_BYTES,
            }
            .into_response();
        }
        Err(e) => return ApiError::BadRequest(e.body_text()).into_response(),
    };
    sim.process_due();
    let response = match route(&sim, method, &uri, &headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    crate::protobuf::negotiate(&uri, &headers, response).await
}

fn json_response(v: &Value) -> Response {
    json_bytes(StatusCode::OK, serde_json::to_vec(v).unwrap_or_default())
}

fn json_bytes(code: StatusCode, bytes: Vec<u8>) -> Response {
    (
        code,
        [(http::header::CONTENT_TYPE, "application/json")],
        bytes,
    )
        .into_response()
}

fn not_found_path() -> ApiError {
    ApiError::NotFound {
        resource: String::new(),
        name: String::new(),
    }
}

async fn route(
    sim: &Sim,
    method: Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let params = Params(query::pairs(uri)?);
    let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    if let ["apis", group, version, rest @ ..] = segs.as_slice() {
        let backend = aggregation::backend_for(sim, group, version);
        // Authorization comes before the proxy (and its failures).
        if !matches!(backend, Ok(None)) {
            let (ns, resource, name) = aggregated_target(rest);
            let verb = verb_of(&method, name.is_some(), false);
            if sim
                .faults()
                .is_forbidden(verb, &format!("{resource}.{group}"))
            {
                return Err(forbidden(verb, group, resource, name, ns));
            }
        }
        if let Some(route) = backend? {
            sim.inner
                .stats
                .record(verb_of(&method, false, false), group);
            return Ok(route.answer(method, uri, headers, body).await);
        }
    }
    match segs.as_slice() {
        ["version"] => Ok(json_response(&version_info(sim.feature_gates().version()))),
        ["healthz" | "readyz" | "livez"] => Ok((StatusCode::OK, "ok").into_response()),
        ["api"] => Ok(json_response(
            &json!({"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]}),
        )),
        ["apis"] => Ok(json_response(&group_list(sim))),
        ["api", "v1"] => Ok(json_response(&resource_list(sim, "", "v1"))),
        ["apis", group] => group_list(sim)["groups"]
            .as_array()
            .and_then(|gs| gs.iter().find(|g| g["name"] == *group).cloned())
            .map(|mut g| {
                g["kind"] = json!("APIGroup");
                g["apiVersion"] = json!("v1");
                json_response(&g)
            })
            .ok_or_else(not_found_path),
        ["apis", group, version]
            if sim
                .served_defs()
                .iter()
                .any(|d| d.group == *group && d.version == *version) =>
        {
            Ok(json_response(&resource_list(sim, group, version)))
        }
        ["openapi", "v3"] => Ok(json_response(&openapi_root())),
        ["openapi", "v3", "api", "v1"] => Ok(json_response(&openapi_group_version(sim, "", "v1"))),
        ["openapi", "v3", "apis", group, version]
            if RESOURCES
                .iter()
                .any(|d| d.group == *group && d.version == *version) =>
        {
            Ok(json_response(&openapi_group_version(sim, group, version)))
        }
        ["api", "v1", rest @ ..] => {
            resource(sim, "", "v1", rest, method, &params, headers, body).await
        }
        ["apis", group, version, rest @ ..] => {
            resource(sim, group, version, rest, method, &params, headers, body).await
        }
        _ => Err(not_found_path()),
    }
}

fn group_list(sim: &Sim) -> Value {
    let mut groups: Vec<(String, Vec<String>)> = resources::groups()
        .into_iter()
        .map(|(g, vs)| (g.to_owned(), vs.into_iter().map(str::to_owned).collect()))
        .collect();
    groups.extend(sim.custom_groups());
    groups.extend(aggregation::aggregated_groups(sim));
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(g, vs)| {
            let versions: Vec<Value> = vs
                .iter()
                .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                .collect();
            json!({"name": g, "versions": versions, "preferredVersion": versions[0]})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// The OpenAPI v3 index. The documents behind it describe operations only
/// (no schemas): enough for kubectl to see that the server validates fields
/// itself (`fieldValidation`), so it skips client-side schema validation and
/// builds apply patches from its built-in types.
fn openapi_root() -> Value {
    let mut paths = serde_json::Map::new();
    for (g, v) in group_versions() {
        let key = if g.is_empty() {
            format!("api/{v}")
        } else {
            format!("apis/{g}/{v}")
        };
        paths.insert(
            key.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash=hpa-sim-1")}),
        );
    }
    json!({"paths": paths})
}

fn group_versions() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for d in RESOURCES {
        if !out.contains(&(d.group, d.version)) {
            out.push((d.group, d.version));
        }
    }
    out
}

/// `/version` of the sim as `release`: what clients read the release from
/// (`major` and `minor`, as kubectl and our controller do).
pub fn version_info(release: KubernetesVersion) -> Value {
    json!({
        "major": "1", "minor": release.minor().to_string(), "gitVersion": git_version(release),
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.0", "compiler": "gc",
        "platform": "linux/amd64"})
}

/// The `gitVersion` of the sim as `release`: a pre-release says which one,
/// as its real API server would (`v1.38.0-alpha.2`), so a client reading
/// `/version` learns both the release and that it is not final.
pub fn git_version(release: KubernetesVersion) -> String {
    let pre = if release.is_prerelease() {
        "-alpha.2"
    } else {
        ""
    };
    format!("v1.{}.0{pre}-hpa-sim", release.minor())
}

fn openapi_group_version(sim: &Sim, group: &str, version: &str) -> Value {
    let mut paths = serde_json::Map::new();
    for d in RESOURCES
        .iter()
        .filter(|d| d.group == group && d.version == version)
    {
        let prefix = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let path = if d.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", d.plural)
        } else {
            format!("{prefix}/{}/{{name}}", d.plural)
        };
        let param = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string"}});
        let op = |action: &str| {
            json!({
                "operationId": format!("{action}{}", d.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": d.kind},
                "parameters": [param("dryRun"), param("fieldManager"), param("fieldValidation")],
                "responses": {"200": {"description": "OK"}},
            })
        };
        paths.insert(
            path,
            json!({"get": op("get"), "put": op("put"), "patch": op("patch"), "delete": op("delete")}),
        );
    }
    let release = git_version(sim.feature_gates().version());
    json!({"openapi": "3.0.0", "info": {"title": "Kubernetes (hpa-sim)", "version": release},
        "paths": paths, "components": {"schemas": {}}})
}

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn resource_list(sim: &Sim, group: &str, version: &str) -> Value {
    let mut out = Vec::new();
    for d in sim
        .served_defs()
        .into_iter()
        .filter(|d| d.group == group && d.version == version)
    {
        out.push(
            json!({"name": d.plural, "singularName": d.singular, "namespaced": d.namespaced,
            "kind": d.kind, "verbs": VERBS, "shortNames": d.short_names}),
        );
        if d.status {
            out.push(
                json!({"name": format!("{}/status", d.plural), "singularName": "",
                "namespaced": d.namespaced, "kind": d.kind, "verbs": ["get", "patch", "update"]}),
            );
        }
        if d.storage == Storage::Pods {
            out.push(
                json!({"name": "pods/binding", "singularName": "", "namespaced": true,
                "kind": "Binding", "verbs": ["create"]}),
            );
        }
        if d.scale {
            out.push(
                json!({"name": format!("{}/scale", d.plural), "singularName": "",
                "namespaced": d.namespaced, "group": "autoscaling", "version": "v1",
                "kind": "Scale", "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out})
}

fn verb_of(method: &Method, named: bool, watch: bool) -> &'static str {
    match *method {
        Method::GET if watch => "watch",
        Method::GET if named => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "other",
    }
}

/// The user the sim's RBAC refusals name (it authenticates nobody).
const FORBIDDEN_USER: &str = "hpa-harness";

/// The API server's refusal when RBAC denies `verb` on `resource` (plural,
/// with `/subresource`) of `group`, worded as kube-apiserver words it.
fn forbidden(
    verb: &str,
    group: &str,
    resource: &str,
    name: Option<&str>,
    ns: Option<&str>,
) -> ApiError {
    let plural = resource.split('/').next().unwrap_or(resource);
    let qualified = if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    };
    let what = match name {
        Some(name) => format!("{qualified} \"{name}\""),
        None => qualified,
    };
    let scope = match ns {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_owned(),
    };
    ApiError::Forbidden(format!(
        "{what} is forbidden: User \"{FORBIDDEN_USER}\" cannot {verb} resource \"{resource}\" in API group \"{group}\" {scope}"
    ))
}

/// The namespace, resource and name of an aggregated API's path after
/// `/apis/GROUP/VERSION/`, as the API server's request info reads them
/// (`namespaces/ns/pods` lists pods; `namespaces/ns/pods/*/metric` gets
/// `*`).
fn aggregated_target<'a>(rest: &[&'a str]) -> (Option<&'a str>, &'a str, Option<&'a str>) {
    match rest {
        ["namespaces", ns, resource, name, ..] => (Some(ns), resource, Some(name)),
        ["namespaces", ns, resource] => (Some(ns), resource, None),
        [resource, name, ..] => (None, resource, Some(name)),
        [resource] => (None, resource, None),
        [] => (None, "", None),
    }
}

struct Target<'a> {
    def: &'static ResourceDef,
    ns: Option<&'a str>,
    name: Option<&'a str>,
    sub: Option<&'a str>,
}

#[cfg(test)]
fn parse_target<'a>(group: &str, version: &str, rest: &[&'a str]) -> Result<Target<'a>, ApiError> {
    parse_target_with(|plural| resources::find(group, version, plural), rest)
}

/// Parses a resource path; `find` looks a plural up (built-in resources and
/// the custom resources of the sim's CRDs).
fn parse_target_with<'a>(
    find: impl Fn(&str) -> Option<&'static ResourceDef>,
    rest: &[&'a str],
) -> Result<Target<'a>, ApiError> {
    let lookup = |plural: &str| find(plural).ok_or_else(not_found_path);
    let t = match rest {
        ["namespaces", ns, plural, tail @ ..] if !matches!(*plural, "status" | "finalize") => {
            let def = lookup(plural)?;
            if !def.namespaced {
                return Err(not_found_path());
            }
            match tail {
                [] => Target {
                    def,
                    ns: Some(ns),
                    name: None,
                    sub: None,
                },
                [name] => Target {
                    def,
                    ns: Some(ns),
                    name: Some(name),
                    sub: None,
                },
                [name, sub] => Target {
                    def,
                    ns: Some(ns),
                    name: Some(name),
                    sub: Some(sub),
                },
                _ => return Err(not_found_path()),
            }
        }
        [plural] => Target {
            def: lookup(plural)?,
            ns: None,
            name: None,
            sub: None,
        },
        [plural, name] | [plural, name, _] => {
            let def = lookup(plural)?;
            if def.namespaced {
                return Err(not_found_path());
            }
            Target {
                def,
                ns: None,
                name: Some(name),
                sub: rest.get(2).copied(),
            }
        }
        _ => return Err(not_found_path()),
    };
    match t.sub {
        None => {}
        Some("status") if t.def.status => {}
        Some("scale") if t.def.scale => {}
        Some("binding") if t.def.storage == Storage::Pods => {}
        Some(_) => return Err(not_found_path()),
    }
    Ok(t)
}

#[allow(clippy::too_many_arguments)] // one request's parts
async fn resource(
    sim: &Sim,
    group: &str,
    version: &str,
    rest: &[&str],
    method: Method,
    params: &Params,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let t = parse_target_with(|plural| sim.find_def(group, version, plural), rest)?;
    let def = t.def;
    let table = table_request(headers, params)?;
    let body = crate::protobuf::request_body(def, &method, headers, body)?;
    let ns = t.ns.unwrap_or("");
    let watch = params.flag("watch");
    let verb = verb_of(&method, t.name.is_some(), watch);
    record_and_authorize(sim, &t, verb)?;
    let dry_run = params.get("dryRun") == Some("All");
    let scale = t.sub == Some("scale");
    let part = if t.sub == Some("status") {
        Part::Status
    } else {
        Part::Main
    };
    if part == Part::Status {
        injected_status_conflict(sim, &t, &method, ns)?;
    }
    let v = match (method.clone(), t.name) {
        (Method::GET, None) => {
            let labels = selector(params, "labelSelector")?;
            let fields = field_selector(def, params)?;
            return if watch {
                watch_response(sim, def, t.ns, labels, fields, params, table)
            } else {
                list_response(sim, def, t.ns, &labels, &fields, params, table)
            };
        }
        (Method::GET, Some(name)) if scale => sim.get_scale(def, ns, name)?,
        (Method::GET, Some(name)) => get_named(sim, def, ns, name, table)?,
        (Method::POST, None) => {
            let obj = parse_json(&body)?;
            return Ok(created(&sim.create(def, ns, obj, dry_run)?));
        }
        (Method::POST, Some(name)) if t.sub == Some("binding") => {
            return Ok(created(&sim.bind_pod(ns, name, &parse_json(&body)?)?));
        }
        (Method::PUT, Some(name)) if scale => {
            sim.replace_scale(def, ns, name, parse_json(&body)?, dry_run)?
        }
        (Method::PUT, Some(name)) => {
            sim.replace(def, ns, name, parse_json(&body)?, part, dry_run)?
        }
        (Method::PATCH, Some(name)) => {
            let kind = patch_kind(headers)?;
            if scale {
                sim.patch_scale(def, ns, name, kind, &body, dry_run)?
            } else {
                sim.patch(def, ns, name, kind, &body, part, dry_run)?
            }
        }
        (Method::DELETE, Some(name)) => {
            sim.delete(def, ns, name, delete_precondition(&body).as_deref())?
        }
        (Method::DELETE, None) => delete_collection(sim, def, t.ns, params)?,
        _ => return Err(ApiError::MethodNotAllowed),
    };
    Ok(json_response(&v))
}

/// Counts the request in the stats, then refuses it if a fault forbids
/// its verb on its resource (counted first: a refused request was made).
fn record_and_authorize(sim: &Sim, t: &Target<'_>, verb: &'static str) -> Result<(), ApiError> {
    let def = t.def;
    let res_name = match t.sub {
        Some(sub) => format!("{}/{sub}", def.qualified()),
        None => def.qualified(),
    };
    sim.inner.stats.record(verb, &res_name);
    if sim.faults().is_forbidden(verb, &res_name) {
        let resource = match t.sub {
            Some(sub) => format!("{}/{sub}", def.plural),
            None => def.plural.to_owned(),
        };
        return Err(forbidden(verb, def.group, &resource, t.name, t.ns));
    }
    Ok(())
}

/// A write to an HPA's status refused with a conflict, where the sim was
/// told to make one (a controller's retry path).
fn injected_status_conflict(
    sim: &Sim,
    t: &Target<'_>,
    method: &Method,
    ns: &str,
) -> Result<(), ApiError> {
    if t.def.storage == Storage::Hpas
        && matches!(*method, Method::PUT | Method::PATCH)
        && let Some(name) = t.name
        && sim.hpa_status_conflict(ns, name)
    {
        return Err(ApiError::Conflict {
            resource: t.def.qualified(),
            name: name.into(),
        });
    }
    Ok(())
}

fn parse_json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("the request body is not valid JSON: {e}")))
}

/// A `201 Created` carrying the new object.
fn created(v: &Value) -> Response {
    json_bytes(
        StatusCode::CREATED,
        serde_json::to_vec(v).unwrap_or_default(),
    )
}

/// One object, or a one-row `Table` of it for `kubectl get`.
fn get_named(
    sim: &Sim,
    def: &'static ResourceDef,
    ns: &str,
    name: &str,
    table: Option<crate::table::IncludeObject>,
) -> Result<Value, ApiError> {
    let obj = sim.get(def, ns, name)?;
    Ok(match table {
        Some(include) => {
            let rv = obj.pointer("/metadata/resourceVersion").cloned();
            crate::table::table(
                def,
                &[obj],
                sim.clock().now(),
                json!({"resourceVersion": rv}),
                include,
            )
        }
        None => obj,
    })
}

/// The patch kind its `Content-Type` names; others are a 415.
fn patch_kind(headers: &HeaderMap) -> Result<PatchKind, ApiError> {
    let ct = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    PatchKind::from_content_type(ct).map_err(|_| {
        ApiError::UnsupportedMediaType(
            "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml".into(),
        )
    })
}

/// The `resourceVersion` precondition of a delete's `DeleteOptions`; a body
/// that does not parse sets none.
fn delete_precondition(body: &Bytes) -> Option<String> {
    if body.is_empty() {
        return None;
    }
    serde_json::from_slice::<Value>(body).ok().and_then(|o| {
        o.pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
}

/// `DELETE` on a collection: deletes what the selectors match, one by one
/// outside the lock, and lists what went.
fn delete_collection(
    sim: &Sim,
    def: &'static ResourceDef,
    ns: Option<&str>,
    params: &Params,
) -> Result<Value, ApiError> {
    let labels = selector(params, "labelSelector")?;
    let fields = field_selector(def, params)?;
    let names: Vec<(String, String)> = {
        let st = sim.lock();
        list_entries(&st, def.storage, ns, &labels, &fields, (None, None), None)
            .0
            .iter()
            .map(|e| (e.ns.to_string(), e.name.to_string()))
            .collect()
    };
    let mut items = Vec::new();
    for (n, name) in names {
        if let Ok(v) = sim.delete(def, &n, &name, None) {
            items.push(v);
        }
    }
    Ok(
        json!({"apiVersion": def.api_version(), "kind": format!("{}List", def.kind),
        "metadata": {"resourceVersion": sim.resource_version().to_string()}, "items": items}),
    )
}

/// `Some` when the client asked for a `Table` (`kubectl get`), with what
/// its rows carry.
fn table_request(
    headers: &HeaderMap,
    params: &Params,
) -> Result<Option<crate::table::IncludeObject>, ApiError> {
    if !crate::table::wants_table(headers) {
        return Ok(None);
    }
    crate::table::IncludeObject::parse(params.get("includeObject"))
        .map(Some)
        .map_err(ApiError::BadRequest)
}

fn selector(params: &Params, key: &str) -> Result<Selector, ApiError> {
    Selector::parse(params.get(key).unwrap_or_default())
        .map_err(|e| ApiError::BadRequest(format!("unable to parse {key}: {e}")))
}

fn field_selector(def: &ResourceDef, params: &Params) -> Result<Selector, ApiError> {
    let sel = selector(params, "fieldSelector")?;
    for r in sel.requirements() {
        let key = match r.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => &r.key,
            _ => {
                return Err(ApiError::BadRequest(
                    "field selectors only support =, == and !=".into(),
                ));
            }
        };
        if !def.field_labels().contains(&key.as_str()) {
            return Err(ApiError::BadRequest(format!(
                "field label not supported: {key}"
            )));
        }
    }
    Ok(sel)
}

fn item_bytes(def: &ResourceDef, e: &Entry, out: &mut Vec<u8>) {
    if needs_conversion(def) {
        let v = to_view(def, e.value());
        let _ = serde_json::to_writer(&mut *out, &v);
    } else {
        out.extend_from_slice(&e.json);
    }
}

fn list_response(
    sim: &Sim,
    def: &'static ResourceDef,
    ns: Option<&str>,
    labels: &Selector,
    fields: &Selector,
    params: &Params,
    table: Option<crate::table::IncludeObject>,
) -> Result<Response, ApiError> {
    let start = params
        .get("continue")
        .filter(|c| !c.is_empty())
        .map(query::decode_continue)
        .transpose()?;
    let limit = query::limit(params.get("limit"))?;
    let as_of = sim.watch_cutoff(def.storage);
    let (entries, rv, next) = {
        let st = sim.lock();
        list_entries(
            &st,
            def.storage,
            ns,
            labels,
            fields,
            (start.as_ref(), limit),
            as_of,
        )
    };
    let mut buf = Vec::with_capacity(entries.iter().map(|e| e.json.len() + 1).sum::<usize>() + 256);
    if let Some(include) = table {
        let items: Vec<Value> = entries.iter().map(|e| to_view(def, e.value())).collect();
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if let Some((n, name)) = &next {
            meta["continue"] = json!(query::encode_continue(n, name));
        }
        let t = crate::table::table(def, &items, sim.clock().now(), meta, include);
        return Ok(json_response(&t));
    }
    let cont = next
        .map(|(n, name)| format!(",\"continue\":\"{}\"", query::encode_continue(&n, &name)))
        .unwrap_or_default();
    let _ = write!(
        buf,
        "{{\"apiVersion\":\"{}\",\"kind\":\"{}List\",\"metadata\":{{\"resourceVersion\":\"{rv}\"{cont}}},\"items\":[",
        def.api_version(),
        def.kind
    );
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        item_bytes(def, e, &mut buf);
    }
    buf.extend_from_slice(b"]}");
    Ok(json_bytes(StatusCode::OK, buf))
}

fn event_line(def: &ResourceDef, ty: &str, e: &Entry, table: Option<TableView>) -> Bytes {
    let mut buf = Vec::with_capacity(e.json.len() + 32);
    let _ = write!(buf, "{{\"type\":\"{ty}\",\"object\":");
    match table {
        Some((include, now)) => {
            let t = crate::table::watch_table(def, &to_view(def, e.value()), now, include);
            let _ = serde_json::to_writer(&mut buf, &t);
        }
        None => item_bytes(def, e, &mut buf),
    }
    buf.extend_from_slice(b"}\n");
    Bytes::from(buf)
}

fn bookmark_line(def: &ResourceDef, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let v = json!({"type": "BOOKMARK", "object": {"kind": def.kind,
        "apiVersion": def.api_version(), "metadata": meta}});
    Bytes::from(format!("{v}\n"))
}

fn error_line(e: &ApiError) -> Bytes {
    Bytes::from(format!(
        "{}\n",
        json!({"type": "ERROR", "object": e.to_json()})
    ))
}

/// How a watch prints its objects as `Table`s: rows' objects, and now.
type TableView = (crate::table::IncludeObject, jiff::Timestamp);

struct WatchState {
    sim: Sim,
    def: &'static ResourceDef,
    ns: Option<String>,
    labels: Selector,
    fields: Selector,
    rv: u64,
    rx: watch::Receiver<u64>,
    pending: VecDeque<Bytes>,
    done: bool,
    bookmarks: bool,
    deadline: tokio::time::Instant,
    table: Option<crate::table::IncludeObject>,
}

impl WatchState {
    /// Moves new events of the storage into `pending`, filtered and
    /// translated for this watcher's selection.
    fn pull(&mut self) {
        self.rx.borrow_and_update();
        // A lagging watch cache delivers what was written by then only.
        let cutoff = self.sim.watch_cutoff(self.def.storage);
        let st = self.sim.lock();
        match st.store.events_since(self.def.storage, self.rv) {
            Err(floor) => {
                self.pending.push_back(error_line(&ApiError::Gone {
                    requested: self.rv,
                    oldest: floor,
                }));
                self.done = true;
            }
            Ok(events) => {
                let mut held = false;
                for ev in events {
                    if cutoff.is_some_and(|c| c.holds(&ev)) {
                        held = true;
                        break;
                    }
                    self.rv = ev.rv;
                    let in_ns = |e: &Entry| self.ns.as_deref().is_none_or(|n| *e.ns == *n);
                    let now_in =
                        in_ns(&ev.new) && entry_matches(&ev.new, &self.labels, &self.fields);
                    let was_in = ev
                        .old
                        .as_ref()
                        .is_some_and(|o| in_ns(o) && entry_matches(o, &self.labels, &self.fields));
                    let ty = match (ev.ty, was_in, now_in) {
                        (EventType::Modified, true, true) => "MODIFIED",
                        (EventType::Modified, false, true) | (EventType::Added, _, true) => "ADDED",
                        (EventType::Modified, true, false) | (EventType::Deleted, _, true) => {
                            "DELETED"
                        }
                        _ => continue,
                    };
                    let view = self.table.map(|i| (i, self.sim.clock().now()));
                    self.pending
                        .push_back(event_line(self.def, ty, &ev.new, view));
                }
                // Everything of this storage up to the global revision is
                // delivered, so resuming from it is safe (unless held back).
                if !held {
                    self.rv = self.rv.max(st.store.rv());
                }
            }
        }
    }
}

fn watch_response(
    sim: &Sim,
    def: &'static ResourceDef,
    ns: Option<&str>,
    labels: Selector,
    fields: Selector,
    params: &Params,
    table: Option<crate::table::IncludeObject>,
) -> Result<Response, ApiError> {
    let rv_param = params.get("resourceVersion").unwrap_or_default();
    let bookmarks = params.flag("allowWatchBookmarks");
    let send_initial = params.flag("sendInitialEvents");
    let timeout = query::watch_timeout(params.get("timeoutSeconds"))?;
    let mut pending = VecDeque::new();
    let as_of = sim.watch_cutoff(def.storage);
    let (rv, rx) = {
        let st = sim.lock();
        let rx = st.store.subscribe(def.storage);
        if send_initial || rv_param.is_empty() || rv_param == "0" {
            let (entries, rv, _) =
                list_entries(&st, def.storage, ns, &labels, &fields, (None, None), as_of);
            let view = table.map(|i| (i, sim.clock().now()));
            for e in &entries {
                pending.push_back(event_line(def, "ADDED", e, view));
            }
            if send_initial && bookmarks {
                pending.push_back(bookmark_line(def, rv, true));
            }
            (rv, rx)
        } else {
            let rv = query::resource_version(Some(rv_param))?.unwrap_or_default();
            let current = st.store.rv();
            if rv > current {
                // The API server waits a moment for its cache to catch up,
                // then gives up with 504 and a retry-after; the sim has no
                // lagging cache, so it answers at once.
                return Err(ApiError::TooLargeResourceVersion {
                    requested: rv,
                    current,
                });
            }
            (rv, rx)
        }
    };
    let state = WatchState {
        sim: sim.clone(),
        def,
        ns: ns.map(str::to_owned),
        labels,
        fields,
        rv,
        rx,
        pending,
        done: false,
        bookmarks,
        deadline: tokio::time::Instant::now() + timeout,
        table,
    };
    let bookmark_every = sim.inner.config.bookmark_interval;
    let shutdown = sim.inner.shutdown.clone();
    let stream = futures::stream::unfold(state, move |mut st| {
        let shutdown = shutdown.clone();
        async move {
            loop {
                if let Some(b) = st.pending.pop_front() {
                    return Some((Ok::<Bytes, std::convert::Infallible>(b), st));
                }
                if st.done {
                    return None;
                }
                st.pull();
                if !st.pending.is_empty() || st.done {
                    continue;
                }
                tokio::select! {
                    changed = st.rx.changed() => {
                        if changed.is_err() {
                            st.done = true;
                        }
                    }
                    () = tokio::time::sleep_until(st.deadline) => st.done = true,
                    () = shutdown.cancelled() => st.done = true,
                    () = tokio::time::sleep(bookmark_every), if st.bookmarks => {
                        st.pull();
                        let line = bookmark_line(st.def, st.rv, false);
                        st.pending.push_back(line);
                    }
                }
            }
        }
    });
    Ok((
        StatusCode::OK,
        [(http::header::CONTENT_TYPE, "application/json")],
        Body::from_stream(stream),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_and_cluster_paths_are_told_apart() {
        let t = parse_target("", "v1", &["namespaces", "default"]).unwrap();
        assert_eq!((t.def.plural, t.name), ("namespaces", Some("default")));
        let t = parse_target("", "v1", &["namespaces", "default", "pods", "p", "status"]).unwrap();
        assert_eq!(
            (t.def.plural, t.ns, t.sub),
            ("pods", Some("default"), Some("status"))
        );
        assert!(parse_target("", "v1", &["pods", "p"]).is_err());
        assert!(
            parse_target(
                "apps",
                "v1",
                &["namespaces", "d", "deployments", "x", "bogus"]
            )
            .is_err()
        );
    }
}
