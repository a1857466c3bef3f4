//! The work queue's keys, `namespace/name`: made from an object and taken
//! apart. A leaf, so that the caches that key by them need not import the
//! `Context` that holds those caches.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// `namespace/name` → (namespace, name).
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once('/')
}

/// The key of an object.
pub fn key_of(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}
