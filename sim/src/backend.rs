//! Where an aggregated API is served: the simulated cluster's configuration
//! names a [`Backend`], and [`crate::aggregation`] proxies to it. Apart from
//! the proxy so that the sim's configuration does not depend on it.

/// Where an aggregated API is served.
#[derive(Clone)]
pub enum Backend {
    /// `http://host:port` (paths are appended as requested).
    Url(String),
    /// An in-process router.
    Router(axum::Router),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Url(u) => f.debug_tuple("Url").field(u).finish(),
            Self::Router(_) => f.write_str("Router(..)"),
        }
    }
}
