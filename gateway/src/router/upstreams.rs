//! One upstream per distinct server of the catalog: an [`UpstreamClient`] (URL and anchors) with
//! a TLS configuration that enforces its anchors inside the handshake, or a [`LocalUpstream`]
//! (command and entrypoint digests).

use std::collections::HashMap;
use std::sync::Arc;

use catalog_store::{Catalog, NetworkServer, ServerBinding};
use server_identity::rustls::RootCertStore;
use server_identity::{ServerAnchors, TrustBundles, client_config};

use super::upstream_kind::Upstream;
use crate::local::{LocalCommand, LocalOptions, LocalUpstream};
use crate::upstream::{UpstreamClient, UpstreamOptions};

/// Why the router could not be built from a catalog.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RouterBuildError {
    /// The server binding's anchors do not make a valid set.
    #[error("catalog server {url}: its identity anchors are not usable: {detail}")]
    Anchors {
        /// The upstream URL.
        url: String,
        /// What is wrong.
        detail: String,
    },
    /// No TLS client configuration could be made for the server (for example a `spiffe_id`
    /// whose trust domain has no bundle: give one with `--spiffe-bundle DOMAIN=FILE`).
    #[error("catalog server {url}: cannot configure TLS for it: {detail}")]
    Tls {
        /// The upstream URL.
        url: String,
        /// What is wrong.
        detail: String,
    },
    /// The upstream client refused the URL.
    #[error("catalog server {url}: {detail}")]
    Upstream {
        /// The upstream URL.
        url: String,
        /// What is wrong.
        detail: String,
    },
}

/// The anchors a server binding pins.
pub(crate) fn anchors_of(binding: &NetworkServer) -> Result<ServerAnchors, RouterBuildError> {
    let mut builder = ServerAnchors::builder();
    if let Some(fingerprint) = binding.tls_fingerprint() {
        builder.fingerprint(*fingerprint);
    }
    for backup in binding.backup_fingerprints() {
        builder.backup_fingerprint(*backup);
    }
    if let Some(spiffe_id) = binding.spiffe_id() {
        builder.spiffe_id(spiffe_id.clone());
    }
    builder
        .rotation_mode(binding.rotation_mode())
        .tls_trust(binding.tls_trust());
    builder.build().map_err(|error| RouterBuildError::Anchors {
        url: binding.url().as_str().to_owned(),
        detail: error.to_string(),
    })
}

/// An upstream and the catalog's binding it was built for (what a reload compares).
pub(crate) type BoundUpstream = (ServerBinding, Arc<Upstream>);

/// Builds the upstreams, each with the binding it serves; returns them and, per catalog
/// `tool_name`, the index of its upstream. A binding for which `carried` gives an upstream (an
/// earlier router's, on a reload) gets that one instead of a new one.
pub(crate) fn build_upstreams(
    catalog: &Catalog,
    roots: &Arc<RootCertStore>,
    bundles: &TrustBundles,
    options: &UpstreamOptions,
    local_options: &LocalOptions,
    carried: impl Fn(&ServerBinding) -> Option<Arc<Upstream>>,
) -> Result<(Vec<BoundUpstream>, HashMap<String, usize>), RouterBuildError> {
    let mut upstreams = Vec::with_capacity(catalog.servers().len());
    let mut by_tool = HashMap::new();
    for server in catalog.servers() {
        let binding = server.binding();
        let upstream = match carried(binding) {
            Some(upstream) => upstream,
            None => Arc::new(if let Some(local) = binding.local() {
                let command = LocalCommand::from_catalog(local);
                Upstream::Local(LocalUpstream::new(command, local_options.clone()))
            } else {
                Upstream::Network(network_client(binding, roots, bundles, options)?)
            }),
        };
        for tool_name in server.tool_names() {
            by_tool.insert(tool_name.clone(), upstreams.len());
        }
        upstreams.push((binding.clone(), upstream));
    }
    Ok((upstreams, by_tool))
}

/// The client of a network upstream, enforcing its anchors in the TLS handshake.
fn network_client(
    binding: &ServerBinding,
    roots: &Arc<RootCertStore>,
    bundles: &TrustBundles,
    options: &UpstreamOptions,
) -> Result<UpstreamClient, RouterBuildError> {
    let Some(binding) = binding.network() else {
        return Err(RouterBuildError::Upstream {
            url: binding.location_text(),
            detail: "this gateway serves network (https) and local (stdio) upstreams only"
                .to_owned(),
        });
    };
    let anchors = anchors_of(binding)?;
    let tls =
        client_config(&anchors, roots.clone(), bundles).map_err(|error| RouterBuildError::Tls {
            url: binding.url().as_str().to_owned(),
            detail: error.to_string(),
        })?;
    // With the anchors, so each connection's audit identity says which pin matched.
    Ok(UpstreamClient::with_anchors(
        binding.url(),
        tls,
        anchors,
        options.clone(),
    ))
}
