//! Scale targets: from an HPA's `scaleTargetRef` to the `/scale` subresource
//! of any kind that has one (Deployments, StatefulSets, CRDs), found by
//! discovery as upstream's RESTMapper does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersion};
use kube::discovery::ApiCapabilities;

/// Errors of resolving or using a scale target. The messages follow
/// upstream's where users see them (events, conditions).
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// The apiVersion does not parse: an error in the HPA's spec.
    #[error("invalid API version in scale target reference: {0}")]
    InvalidApiVersion(String),
    /// Discovery knows no such kind in that group.
    #[error(
        "unable to determine resource for scale target reference: no matches for kind {kind:?} in group {group:?}"
    )]
    UnknownKind {
        group: String,
        kind: String,
        #[source]
        source: Option<kube::Error>,
    },
    /// The kind exists but has no scale subresource.
    #[error("the resource {resource} ({kind}) has no scale subresource")]
    NoScaleSubresource { resource: String, kind: String },
    /// GET of the scale failed.
    #[error(transparent)]
    Get { source: kube::Error },
    /// PUT of the scale failed.
    #[error(transparent)]
    Update { source: kube::Error },
}

impl ScaleError {
    /// Whether the HPA's spec is at fault (upstream's `errSpec`, the
    /// `error="spec"` metric label).
    pub fn is_spec_error(&self) -> bool {
        matches!(self, Self::InvalidApiVersion(_))
    }
}

/// A resolved target: which API resource serves it.
#[derive(Debug, Clone)]
pub struct ScaleTarget {
    pub resource: ApiResource,
    pub namespace: String,
    pub name: String,
}

impl ScaleTarget {
    fn api(&self, client: &kube::Client) -> Api<DynamicObject> {
        Api::namespaced_with(client.clone(), &self.namespace, &self.resource)
    }

    /// The group-resource, as upstream prints it (`deployments.apps`).
    pub fn group_resource(&self) -> String {
        if self.resource.group.is_empty() {
            self.resource.plural.clone()
        } else {
            format!("{}.{}", self.resource.plural, self.resource.group)
        }
    }
}

/// Resolves scale targets through discovery and caches the answers per
/// group and kind (discovery is costly; kinds rarely change). A failed
/// scale request drops the cached entry so that a removed CRD is noticed.
#[derive(Debug, Clone, Default)]
pub struct ScaleResolver {
    cache: Arc<Mutex<HashMap<(String, String), ApiResource>>>,
}

impl ScaleResolver {
    /// Finds the resource for `target` in `namespace`.
    pub async fn resolve(
        &self,
        client: &kube::Client,
        namespace: &str,
        target: &CrossVersionObjectReference,
    ) -> Result<ScaleTarget, ScaleError> {
        let api_version = target.api_version.clone().unwrap_or_default();
        let gv = parse_group_version(&api_version)?;
        let key = (gv.group.clone(), target.kind.clone());
        let cached = self.lock().get(&key).cloned();
        let resource = match cached {
            Some(resource) => resource,
            None => {
                let resource = discover(client, &gv, &target.kind).await?;
                self.lock().insert(key, resource.clone());
                resource
            }
        };
        Ok(ScaleTarget {
            resource,
            namespace: namespace.to_string(),
            name: target.name.clone(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), ApiResource>> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn forget(&self, target: &ScaleTarget) {
        self.lock()
            .remove(&(target.resource.group.clone(), target.resource.kind.clone()));
    }

    /// GET the target's scale.
    pub async fn get_scale(
        &self,
        client: &kube::Client,
        target: &ScaleTarget,
    ) -> Result<Scale, ScaleError> {
        target
            .api(client)
            .get_scale(&target.name)
            .await
            .map_err(|source| {
                if is_not_found(&source) {
                    self.forget(target);
                }
                ScaleError::Get { source }
            })
    }

    /// PUT the scale with new spec replicas (optimistic: the scale's
    /// resourceVersion is kept, so a concurrent change conflicts). On a
    /// conflict, as upstream's `retry.RetryOnConflict(retry.DefaultRetry, ..)`
    /// around the update (k/k #132007, in v1.34 and later): read the scale
    /// again and retry, at most [`SCALE_UPDATE_ATTEMPTS`] times in all, so a
    /// transient conflict is a `SuccessfulRescale` in the same reconcile.
    pub async fn update_scale(
        &self,
        client: &kube::Client,
        target: &ScaleTarget,
        mut scale: Scale,
        replicas: i32,
    ) -> Result<Scale, ScaleError> {
        let api = target.api(client);
        let mut attempt = 1;
        loop {
            scale.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
            match api
                .replace_scale(&target.name, &PostParams::default(), &scale)
                .await
            {
                Ok(updated) => return Ok(updated),
                Err(source) if is_conflict(&source) && attempt < SCALE_UPDATE_ATTEMPTS => {
                    attempt += 1;
                    tokio::time::sleep(SCALE_UPDATE_RETRY_DELAY).await;
                    match api.get_scale(&target.name).await {
                        Ok(latest) => scale = latest,
                        Err(_) => return Err(ScaleError::Update { source }),
                    }
                }
                Err(source) => return Err(ScaleError::Update { source }),
            }
        }
    }
}

/// client-go's `retry.DefaultRetry`: five steps, 10 ms apart.
pub const SCALE_UPDATE_ATTEMPTS: u32 = 5;
const SCALE_UPDATE_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(10);

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}

/// Parses `group/version` or `version` strictly, as apimachinery's
/// `ParseGroupVersion` (kube's parser accepts more slashes).
pub fn parse_group_version(api_version: &str) -> Result<GroupVersion, ScaleError> {
    let invalid =
        || ScaleError::InvalidApiVersion(format!("unexpected GroupVersion string: {api_version}"));
    let parts: Vec<&str> = api_version.split('/').collect();
    match parts.as_slice() {
        // No apiVersion: the core group (upstream's RESTMapper finds core
        // kinds by group and kind alone).
        [""] => Ok(GroupVersion::gv("", "v1")),
        [version] => Ok(GroupVersion::gv("", version)),
        [group, version] if !version.is_empty() => Ok(GroupVersion::gv(group, version)),
        _ => Err(invalid()),
    }
}

fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404)
}

/// Discovery: the pinned version first; if it lacks the kind, the group's
/// other versions (upstream tries every mapping of the group-kind).
async fn discover(
    client: &kube::Client,
    gv: &GroupVersion,
    kind: &str,
) -> Result<ApiResource, ScaleError> {
    let gvk = kube::core::GroupVersionKind::gvk(&gv.group, &gv.version, kind);
    let unknown = |source| ScaleError::UnknownKind {
        group: gv.group.clone(),
        kind: kind.to_string(),
        source,
    };
    let found: Option<(ApiResource, ApiCapabilities)> =
        match kube::discovery::pinned_kind(client, &gvk).await {
            Ok(found) => Some(found),
            Err(first) => {
                if gv.group.is_empty() {
                    return Err(unknown(Some(first)));
                }
                let group = kube::discovery::group(client, &gv.group)
                    .await
                    .map_err(|e| unknown(Some(e)))?;
                group.recommended_kind(kind)
            }
        };
    let (resource, caps) = found.ok_or_else(|| unknown(None))?;
    if !caps
        .subresources
        .iter()
        .any(|(sub, _)| sub.plural == "scale")
    {
        return Err(ScaleError::NoScaleSubresource {
            resource: resource.plural.clone(),
            kind: resource.kind.clone(),
        });
    }
    Ok(resource)
}
