//! Reading one HPA's sync as upstream's controller reads it: the HPA, its
//! target's `/scale` (resolved by discovery, the controller's
//! [`ScaleResolver`]), the pods the scale's selector picks, the other HPAs'
//! selectors of the namespace (the ambiguity check), and each metric of the
//! core's plan through the controller's [`MetricsClient`]: the same
//! requests to the aggregated metrics APIs. Nothing here writes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use hpa_controller::ControllerConfig;
use hpa_controller::metrics_client::MetricsClient;
use hpa_controller::reconcile::{kube_error_text, scale_info_of};
use hpa_controller::scale::{ScaleError, ScaleResolver};
use hpa_core::decide::{EarlyReason, Fetched, MetricQuery, OtherHpa};
use hpa_core::{KubernetesVersion, ScaleInfo, Selector};
use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{CrossVersionObjectReference, HorizontalPodAutoscaler};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{Api, ListParams};

use super::api_service::{self, MetricsApiProblem, MetricsGroup};
use super::client::{self, Refusals};
use super::error::LiveError;
use hpa_sim::admin::AdminClient;

/// How to reach the cluster and decide as which release.
#[derive(Debug, Clone, Default)]
pub struct ReaderOptions {
    /// `--kubeconfig` (`None`: `$KUBECONFIG` or `~/.kube/config`).
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
    /// `--kubernetes-version`: decide as this release, not the cluster's.
    pub kubernetes_version: Option<KubernetesVersion>,
    /// `--flag NAME=VALUE`: the cluster's controller flags, over those
    /// read from its kube-controller-manager pod where the cluster shows
    /// one (kubeadm, kind), else over upstream's defaults.
    pub flags: Vec<String>,
}

/// The release the core decides as, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Release {
    /// The release.
    pub version: KubernetesVersion,
    /// `the cluster's /version (1.37)` or `--kubernetes-version`.
    pub source: String,
    /// Why the server's own release is not one we support, if so.
    pub warning: Option<String>,
}

/// Which HPAs to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One, by namespace and name.
    One { namespace: String, name: String },
    /// Those of a namespace (matching a label selector, if given).
    Namespace {
        namespace: String,
        selector: Option<String>,
    },
    /// Those of every namespace (matching a label selector, if given).
    All { selector: Option<String> },
}

/// Where `now` comes from: the wall clock, or the simulated cluster's
/// (virtual) clock when the cluster is `hpa-harness sim`.
#[derive(Debug, Clone)]
enum ClockSource {
    Wall,
    Sim(AdminClient),
}

/// Everything one sync of one HPA reads, as read.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// `namespace/name`.
    pub key: String,
    /// When it was read (the moment the core decides at).
    pub now: Timestamp,
    /// The HPA as stored (autoscaling/v2).
    pub hpa: Arc<HorizontalPodAutoscaler>,
    /// Its scale target reference.
    pub target: CrossVersionObjectReference,
    /// The target's resource (`deployments.apps`).
    pub target_resource: String,
    /// The target's `/scale`.
    pub scale: ScaleInfo,
    /// The pods the scale's selector picks (none when it has no selector).
    pub pods: Vec<Pod>,
    /// The other HPAs of the namespace whose targets' selectors are known.
    pub others: Vec<OtherHpa>,
    /// The rule that decides without metrics, if one does.
    pub early: Option<EarlyReason>,
    /// What each metric's read gave, in `spec.metrics` order (`None`: not read).
    pub metrics: Vec<Option<Fetched>>,
    /// The APIServices behind the metrics reads that failed, where one is
    /// at fault (none registered, or one not Available).
    pub metrics_apis: Vec<MetricsApiProblem>,
}

/// A read-only view of a cluster.
pub struct Reader {
    client: kube::Client,
    refusals: Refusals,
    /// The kubeconfig context's namespace.
    pub default_namespace: String,
    /// The controller's settings the core decides with.
    pub config: ControllerConfig,
    /// The release decided as.
    pub release: Release,
    metrics: MetricsClient,
    scales: ScaleResolver,
    clock: ClockSource,
    /// Other HPAs' target selectors, by `namespace/kind/name` of the target.
    selectors: Mutex<HashMap<String, Option<String>>>,
    /// The controller flags decided with (`NAME=VALUE`): those read from
    /// the cluster's kube-controller-manager pod, then `--flag`'s.
    pub flags: Vec<String>,
    /// Where flags were read from the cluster: that pod's
    /// `namespace/name`.
    pub flags_from: Option<String>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("release", &self.release)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

fn not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(s) if s.code == 404)
}

impl Reader {
    /// Connects: the kubeconfig's cluster, its release (`/version`) unless
    /// `--kubernetes-version` says, and the controller flags given.
    pub async fn connect(options: &ReaderOptions) -> Result<Self, LiveError> {
        let refusals = Refusals::default();
        let (client, url, default_namespace) = client::connect(
            options.kubeconfig.as_deref(),
            options.context.as_deref(),
            &refusals,
        )
        .await?;
        // The simulated cluster serves plain HTTP and its admin API; its
        // clock may be virtual. A real API server (HTTPS) is not probed.
        let mut clock = ClockSource::Wall;
        if url.starts_with("http:")
            && let Ok(admin) = AdminClient::new(url.trim_end_matches('/'))
            && admin.clock().await.is_ok()
        {
            clock = ClockSource::Sim(admin);
        }
        let release = match options.kubernetes_version {
            Some(version) => Release {
                version,
                source: "--kubernetes-version".to_owned(),
                warning: None,
            },
            None => {
                let info = client
                    .apiserver_version()
                    .await
                    .map_err(|e| failure(&refusals, "reading the API server's /version", &e))?;
                let (version, warning) =
                    hpa_controller::release::of_server_numbers(&info.major, &info.minor).map_err(
                        |e| LiveError::Request {
                            what: "reading the API server's /version".to_owned(),
                            detail: e.to_string(),
                        },
                    )?;
                Release {
                    version,
                    source: format!(
                        "the cluster's /version ({}.{})",
                        info.major.trim(),
                        info.minor.trim()
                    ),
                    warning,
                }
            }
        };
        let mut config = ControllerConfig::default();
        config
            .set_flag("kubernetes-version", release.version.as_str())
            .map_err(|e| LiveError::Flag {
                arg: format!("kubernetes-version={}", release.version),
                reason: e.to_string(),
            })?;
        // The cluster's own controller's flags, where its pod shows them
        // (a cluster that hides it, or RBAC that forbids reading
        // kube-system, leaves upstream's defaults); flags this controller
        // has no use for (its client budget) are left out.
        let mut flags = Vec::new();
        let mut flags_from = None;
        if let Ok(Some((pod, read))) = crate::testbed::controller_manager::read(&client).await {
            for flag in read {
                let (name, value) = flag
                    .trim_start_matches('-')
                    .split_once('=')
                    .unwrap_or((&flag, ""));
                if config.set_flag(name, value).is_ok() {
                    flags.push(format!("{name}={value}"));
                }
            }
            flags_from = (!flags.is_empty()).then_some(pod);
        }
        for arg in &options.flags {
            let (name, value) = arg.split_once('=').ok_or_else(|| LiveError::Flag {
                arg: arg.clone(),
                reason: "expected NAME=VALUE".to_owned(),
            })?;
            config.set_flag(name, value).map_err(|e| LiveError::Flag {
                arg: arg.clone(),
                reason: e.to_string(),
            })?;
            let name = name.trim_start_matches('-');
            flags.retain(|f| f.split_once('=').is_none_or(|(n, _)| n != name));
            flags.push(format!("{name}={value}"));
        }
        let metrics = MetricsClient::new(client.clone(), config.sync_period);
        Ok(Self {
            client,
            refusals,
            default_namespace,
            config,
            release,
            metrics,
            scales: ScaleResolver::default(),
            clock,
            selectors: Mutex::default(),
            flags,
            flags_from,
        })
    }

    /// The cluster's now: the simulated cluster's clock, else the wall clock.
    pub async fn now(&self) -> Timestamp {
        match &self.clock {
            ClockSource::Sim(admin) => admin
                .clock()
                .await
                .map_or_else(|_| Timestamp::now(), |c| c.now),
            ClockSource::Wall => Timestamp::now(),
        }
    }

    /// Whether `now` is a simulated cluster's clock.
    pub fn on_simulated_cluster(&self) -> bool {
        matches!(self.clock, ClockSource::Sim(_))
    }

    fn failure(&self, what: &str, err: &kube::Error) -> LiveError {
        failure(&self.refusals, what, err)
    }

    /// The HPAs of `scope`, as `(namespace, name)`, sorted.
    pub async fn hpas(&self, scope: &Scope) -> Result<Vec<(String, String)>, LiveError> {
        self.refusals.clear();
        let (api, selector, where_): (Api<HorizontalPodAutoscaler>, _, String) = match scope {
            Scope::One { namespace, name } => {
                return Ok(vec![(namespace.clone(), name.clone())]);
            }
            Scope::Namespace {
                namespace,
                selector,
            } => (
                Api::namespaced(self.client.clone(), namespace),
                selector,
                format!("in namespace {namespace}"),
            ),
            Scope::All { selector } => (
                Api::all(self.client.clone()),
                selector,
                "in any namespace".to_owned(),
            ),
        };
        let mut params = ListParams::default();
        if let Some(s) = selector {
            params = params.labels(s);
        }
        let list = api
            .list(&params)
            .await
            .map_err(|e| self.failure(&format!("listing HPAs {where_}"), &e))?;
        let mut keys: Vec<(String, String)> = list
            .items
            .iter()
            .map(|h| {
                (
                    h.metadata.namespace.clone().unwrap_or_default(),
                    h.metadata.name.clone().unwrap_or_default(),
                )
            })
            .collect();
        keys.sort();
        if keys.is_empty() {
            let scope = match selector {
                Some(s) => format!("{where_} matching {s:?}"),
                None => where_,
            };
            return Err(LiveError::NoHpas { scope });
        }
        Ok(keys)
    }

    /// Reads one sync's worth of HPA `namespace/name`.
    pub async fn read(&self, namespace: &str, name: &str) -> Result<Snapshot, LiveError> {
        self.refusals.clear();
        let key = format!("{namespace}/{name}");
        let now = self.now().await;
        let hpas: Api<HorizontalPodAutoscaler> = Api::namespaced(self.client.clone(), namespace);
        let hpa = match hpas.get(name).await {
            Ok(hpa) => hpa,
            Err(e) if not_found(&e) => {
                return Err(LiveError::HpaNotFound {
                    namespace: namespace.to_owned(),
                    name: name.to_owned(),
                });
            }
            Err(e) => return Err(self.failure(&format!("reading HPA {key}"), &e)),
        };
        let target = hpa.spec.scale_target_ref.clone();
        let scale_target = self
            .scales
            .resolve(&self.client, namespace, &target)
            .await
            .map_err(|e| self.scale_failure(&key, &target, &e))?;
        let scale = self
            .scales
            .get_scale(&self.client, &scale_target)
            .await
            .map_err(|e| self.scale_failure(&key, &target, &e))?;
        let scale = scale_info_of(&scale);
        let plan = hpa_core::plan(&hpa, &scale, &self.config.decision);
        let parsed = Selector::parse(&scale.selector)
            .ok()
            .filter(|_| !scale.selector.is_empty());
        let pods = match &parsed {
            Some(_) => {
                let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
                let mut list = api
                    .list(&ListParams::default().labels(&scale.selector))
                    .await
                    .map_err(|e| self.failure(&format!("listing the pods of {key}"), &e))?
                    .items;
                list.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
                list
            }
            None => Vec::new(),
        };
        let others = if plan.early.is_none() {
            self.others(namespace, name).await?
        } else {
            Vec::new()
        };
        let mut metrics = Vec::with_capacity(plan.queries.len());
        for query in &plan.queries {
            metrics.push(match query {
                Some(q) => Some(self.metrics.fetch(namespace, q).await),
                None => None,
            });
        }
        if let Some(refusal) = self.refusals.first() {
            let failed = metrics.iter().flatten().find_map(fetch_error);
            return Err(forbidden(refusal, failed.unwrap_or_default()));
        }
        let errors: Vec<String> = metrics.iter().flatten().filter_map(fetch_error).collect();
        let metrics_apis = if errors.is_empty() {
            Vec::new()
        } else {
            self.metrics_apis(&plan.queries, &metrics).await
        };
        let read = metrics.iter().flatten().count();
        if read > 0 && errors.len() == read {
            return Err(LiveError::MetricsUnavailable {
                hpa: key,
                detail: errors.join("; "),
                why: metrics_apis
                    .iter()
                    .map(|p| format!("; {p}"))
                    .collect::<String>(),
            });
        }
        Ok(Snapshot {
            key,
            now,
            hpa: Arc::new(hpa),
            target,
            target_resource: scale_target.group_resource(),
            scale,
            pods,
            others,
            early: plan.early,
            metrics,
            metrics_apis,
        })
    }

    /// The APIServices at fault for the metrics reads that failed, one per
    /// API group; none when they cannot be read (RBAC may not allow it:
    /// the failure is then reported as read).
    async fn metrics_apis(
        &self,
        queries: &[Option<MetricQuery>],
        fetched: &[Option<Fetched>],
    ) -> Vec<MetricsApiProblem> {
        let mut failed: Vec<(MetricsGroup, String)> = Vec::new();
        for (query, fetched) in queries.iter().zip(fetched) {
            if let (Some(query), Some(error)) = (query, fetched.as_ref().and_then(fetch_error)) {
                let group = MetricsGroup::of(query);
                if !failed.iter().any(|(g, _)| *g == group) {
                    failed.push((group, error));
                }
            }
        }
        let api: Api<APIService> = Api::all(self.client.clone());
        let Ok(services) = api.list(&ListParams::default()).await else {
            return Vec::new();
        };
        failed
            .iter()
            .filter_map(|(group, error)| api_service::diagnose(*group, error, &services.items))
            .collect()
    }

    /// The other HPAs of the namespace with their targets' selectors, as
    /// the controller's selector store would hold them once it synced them.
    async fn others(&self, namespace: &str, name: &str) -> Result<Vec<OtherHpa>, LiveError> {
        let api: Api<HorizontalPodAutoscaler> = Api::namespaced(self.client.clone(), namespace);
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(|e| self.failure(&format!("listing the HPAs of namespace {namespace}"), &e))?;
        let mut others = Vec::new();
        for other in &list.items {
            let other_name = other.metadata.name.clone().unwrap_or_default();
            if other_name == name {
                continue;
            }
            let target = &other.spec.scale_target_ref;
            let cache_key = format!(
                "{namespace}/{}/{}/{}",
                target.api_version.as_deref().unwrap_or_default(),
                target.kind,
                target.name
            );
            let known = self
                .selectors
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&cache_key)
                .cloned();
            let selector = match known {
                Some(selector) => selector,
                None => {
                    let selector = match self.scales.resolve(&self.client, namespace, target).await
                    {
                        Ok(t) => self
                            .scales
                            .get_scale(&self.client, &t)
                            .await
                            .ok()
                            .and_then(|s| s.status.and_then(|st| st.selector)),
                        Err(_) => None,
                    };
                    self.selectors
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .insert(cache_key, selector.clone());
                    selector
                }
            };
            if let Some(selector) = selector.filter(|s| !s.is_empty())
                && let Ok(parsed) = Selector::parse(&selector)
            {
                others.push(OtherHpa {
                    key: format!("{namespace}/{other_name}"),
                    selector: Arc::new(parsed),
                });
            }
        }
        others.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(others)
    }

    fn scale_failure(
        &self,
        key: &str,
        target: &CrossVersionObjectReference,
        err: &ScaleError,
    ) -> LiveError {
        if let Some(refusal) = self.refusals.first() {
            let message = match err {
                ScaleError::Get { source } | ScaleError::Update { source } => {
                    kube_error_text(source)
                }
                other => other.to_string(),
            };
            return forbidden(refusal, message);
        }
        let (kind, name) = (target.kind.clone(), target.name.clone());
        match err {
            ScaleError::UnknownKind { .. } => LiveError::TargetNotFound {
                hpa: key.to_owned(),
                kind,
                name,
                detail: err.to_string(),
            },
            ScaleError::Get { source } if not_found(source) => LiveError::TargetNotFound {
                hpa: key.to_owned(),
                kind,
                name,
                detail: kube_error_text(source),
            },
            ScaleError::Get { source } | ScaleError::Update { source } => LiveError::Scale {
                hpa: key.to_owned(),
                kind,
                name,
                detail: kube_error_text(source),
            },
            other => LiveError::Scale {
                hpa: key.to_owned(),
                kind,
                name,
                detail: other.to_string(),
            },
        }
    }
}

fn fetch_error(fetched: &Fetched) -> Option<String> {
    match fetched {
        Fetched::PodResource(Err(e))
        | Fetched::PodsCustom(Err(e))
        | Fetched::Object(Err(e))
        | Fetched::External(Err(e)) => Some(e.clone()),
        _ => None,
    }
}

fn forbidden(refusal: client::Refusal, message: String) -> LiveError {
    LiveError::Forbidden {
        verb: refusal.verb,
        resource: refusal.resource,
        namespace: refusal.namespace,
        message: if message.is_empty() {
            "403 Forbidden".to_owned()
        } else {
            message
        },
    }
}

/// A failed request: RBAC's refusal when the server answered 403, else the
/// server's words.
fn failure(refusals: &Refusals, what: &str, err: &kube::Error) -> LiveError {
    match refusals.first() {
        Some(refusal) => forbidden(refusal, kube_error_text(err)),
        None => LiveError::Request {
            what: what.to_owned(),
            detail: kube_error_text(err),
        },
    }
}

/// `NAMESPACE/NAME`, or `NAME` in `default_namespace`.
pub fn parse_name(text: &str, default_namespace: &str) -> Result<(String, String), LiveError> {
    let bad = || LiveError::BadName(text.to_owned());
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
    };
    match text.split_once('/') {
        Some((ns, name)) if ok(ns) && ok(name) => Ok((ns.to_owned(), name.to_owned())),
        Some(_) => Err(bad()),
        None if ok(text) => Ok((default_namespace.to_owned(), text.to_owned())),
        None => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_namespace_slash_name_or_a_name_in_the_context_namespace() {
        assert_eq!(
            parse_name("shop/web", "default").unwrap(),
            ("shop".to_owned(), "web".to_owned())
        );
        assert_eq!(
            parse_name("web", "team").unwrap(),
            ("team".to_owned(), "web".to_owned())
        );
        for bad in ["a/b/c", "/web", "shop/", "Web", ""] {
            assert_eq!(
                parse_name(bad, "default").unwrap_err(),
                LiveError::BadName(bad.to_owned()),
                "{bad}"
            );
        }
    }
}
