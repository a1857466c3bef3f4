//! The key of a namespaced object the scenario tracks: a workload, an HPA,
//! a pod.

use std::fmt;

/// A namespaced object's namespace and name (`ns/name` when shown).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjKey {
    pub ns: String,
    pub name: String,
}

impl ObjKey {
    pub fn new(ns: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            ns: ns.into(),
            name: name.into(),
        }
    }

    /// Another object of the same namespace.
    pub fn sibling(&self, name: impl Into<String>) -> Self {
        Self::new(self.ns.clone(), name)
    }
}

impl fmt::Display for ObjKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.ns, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_shows_as_namespace_slash_name() {
        assert_eq!(ObjKey::new("prod", "web").to_string(), "prod/web");
    }

    #[test]
    fn keys_order_by_namespace_then_name() {
        let mut keys = [
            ObjKey::new("b", "a"),
            ObjKey::new("a", "z"),
            ObjKey::new("a", "b"),
        ];
        keys.sort();
        let shown: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["a/b", "a/z", "b/a"]);
    }
}
