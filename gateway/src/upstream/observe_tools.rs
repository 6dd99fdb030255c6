//! Listing what an upstream serves under a key pin alone: what an operator reviews before
//! approving its definitions.

use std::sync::Arc;

use catalog_store::UpstreamUrl;
use serde_json::Value;
use server_identity::rustls::RootCertStore;
use server_identity::{Fingerprint, ServerAnchors, TlsTrust, TrustBundles, client_config};

use super::{UpstreamClient, UpstreamError, UpstreamOptions};

/// The tools the upstream at `url` serves now, read through a client that pins `spki` with
/// `tls_trust: pin`: what an operator reviews before approving.
///
/// # Errors
///
/// [`UpstreamError`] when the upstream cannot be listed (an
/// [`UpstreamError::Identity`] when it does not present `spki`).
pub async fn observe_tools(
    url: &UpstreamUrl,
    spki: &Fingerprint,
) -> Result<Vec<Value>, UpstreamError> {
    let mut anchors = ServerAnchors::builder();
    anchors.fingerprint(*spki).tls_trust(TlsTrust::Pin);
    // A key pin alone, trusted as the only anchor: neither step can refuse it, but a TLS
    // configuration error is still reported rather than assumed away.
    let tls_error = |detail: String| UpstreamError::Tls {
        url: url.as_str().to_owned(),
        detail,
    };
    let anchors = anchors
        .build()
        .map_err(|error| tls_error(error.to_string()))?;
    let tls = client_config(
        &anchors,
        Arc::new(RootCertStore::empty()),
        &TrustBundles::new(),
    )
    .map_err(|error| tls_error(error.to_string()))?;
    UpstreamClient::new(url, tls, one_listing())
        .list_tools()
        .await
}

/// The options of a client made for one listing: no event stream is opened, since nobody is
/// left to hear it once the listing is read, and a request sent after the answer would reach
/// the upstream behind the caller's back.
fn one_listing() -> UpstreamOptions {
    UpstreamOptions {
        listen_for_notifications: false,
        ..UpstreamOptions::default()
    }
}
