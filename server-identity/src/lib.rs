//! Pin MCP upstream servers by TLS key, certificate or SPIFFE ID, enforced inside the rustls handshake,
//! and local (stdio) servers by the digests of the files they are started from.
//!
//! A catalog binds each tool name to one upstream server identity (seed 003 §1): a SHA-256
//! [`Fingerprint`] of the server's key or certificate ([`RotationMode`]), a [`SpiffeId`] checked
//! against its trust domain's [`TrustBundles`], or both. [`ServerAnchors`] holds one server's
//! anchors; [`client_config`] turns them into a rustls `ClientConfig` whose verifier
//! ([`ServerIdentityVerifier`]) refuses any other server during the handshake, before a byte of
//! application data is sent. A refusal carries an [`IdentityError`] naming the anchor, the
//! expected value and the presented one. [`ConnectionIdentity::of_connection`] tells, for an
//! established connection, what it presented and which pin ([`PinMatch`]) it matched.
//! [`Observation::of_chain`] reports what a server presented, to write its catalog entry.
//!
//! A local server started as a process is pinned by [`EntrypointDigests`]: each file's
//! [`FileDigest`], checked by [`EntrypointDigests::verify`] before every spawn.
//! [`UtcTimestamp`] is the RFC 3339 time type (certificate validity dates).
//!
//! The crate does no network or process I/O: the caller connects (with the returned
//! `ClientConfig`) and spawns; only [`digest_file`] reads files.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//!
//! use server_identity::rustls::RootCertStore;
//! use server_identity::{
//!     Fingerprint, IdentityError, RotationMode, ServerAnchors, TlsTrust, TrustBundles,
//!     client_config,
//! };
//!
//! // Every input form of a fingerprint reads to the same value; output is canonical.
//! let pin: Fingerprint =
//!     "SHA256:8AE2FBEDC9F94B3C1EE8C9FAF7A3AAD9B3CA3E0CE4C0C7AF5C3B4A3F0F1C2D3E".parse()?;
//! let openssl_form: Fingerprint = "sha256 Fingerprint=8A:E2:FB:ED:C9:F9:4B:3C:1E:E8:C9:FA:\
//!     F7:A3:AA:D9:B3:CA:3E:0C:E4:C0:C7:AF:5C:3B:4A:3F:0F:1C:2D:3E"
//!     .parse()?;
//! assert_eq!(pin, openssl_form);
//! assert_eq!(
//!     pin.to_string(),
//!     "SHA256:8ae2fbedc9f94b3c1ee8c9faf7a3aad9b3ca3e0ce4c0c7af5c3b4a3f0f1c2d3e"
//! );
//!
//! // A self-signed upstream: the pinned key is the only trust anchor.
//! let anchors = ServerAnchors::builder()
//!     .fingerprint(pin)
//!     .rotation_mode("key-pinned".parse::<RotationMode>()?)
//!     .tls_trust(TlsTrust::Pin)
//!     .build()?;
//! let config = client_config(&anchors, Arc::new(RootCertStore::empty()), &TrustBundles::new())?;
//! assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
//!
//! // Connect with `tokio_rustls::TlsConnector::from(config)`; when the server is not the one
//! // pinned, the handshake fails and the reason is read back from the error:
//! fn reason(handshake_error: &std::io::Error) -> Option<&IdentityError> {
//!     IdentityError::from_io_error(handshake_error)
//! }
//! # let _ = reason;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: a local (stdio) server
//!
//! ```
//! use std::path::PathBuf;
//!
//! use server_identity::{EntrypointDigests, FileDigest, IdentityError, digest_file};
//!
//! # let dir = std::env::temp_dir().join(format!("server-identity-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let script: PathBuf = dir.join("index.js");
//! std::fs::write(&script, "console.log('mcp')\n")?;
//!
//! // Pin what `toolgate identity --command -- CMD ARGS…` printed for each file.
//! let pinned: FileDigest = digest_file(&script)?.to_string().parse()?;
//! let mut entrypoints = EntrypointDigests::new();
//! entrypoints.insert(script.clone(), pinned)?;
//!
//! // Before every spawn: every file read and hashed again.
//! entrypoints.verify()?;
//!
//! // One changed byte, and nothing may be started.
//! std::fs::write(&script, "console.log('MCP')\n")?;
//! match entrypoints.verify() {
//!     Err(IdentityError::EntrypointMismatch { path, expected, observed }) => {
//!         assert_eq!((path, expected), (script, pinned));
//!         assert_eq!(observed, FileDigest::of_bytes(b"console.log('MCP')\n"));
//!     }
//!     other => panic!("expected a mismatch, got {other:?}"),
//! }
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Decisions
//!
//! - With a SPIFFE ID, the trust domain's bundle is the chain anchor and no host name is checked
//!   (SVIDs carry none); `tls_trust` then has no effect, and `pin` is refused by
//!   [`ServerAnchorsBuilder::build`] because it would skip the bundle check.
//! - `tls_trust: pin` skips the chain, the host name and the validity dates; the leaf must still
//!   parse, match the pin, and sign the handshake with its key.
//! - Backup fingerprints are read in the same rotation mode as the primary.
//! - Refusals travel in the handshake error (`CertificateError::Other`), not in shared state, so
//!   concurrent connections on one `ClientConfig` never see each other's reasons. The peer gets
//!   a `certificate_unknown` alert. For the same reason which pin matched is read back from each
//!   connection's own chain ([`ConnectionIdentity::of_connection`]).
//! - An X509-SVID leaf must carry the keyUsage extension with `digitalSignature` (X509-SVID
//!   §4.3); a leaf with no keyUsage at all is refused the same way
//!   ([`IdentityError::SvidWithoutDigitalSignature`]).
//! - Entrypoint symlinks are followed (the target's bytes are hashed); errors name the path as
//!   pinned, not the target.
//!
//! # Features
//!
//! None. The crypto provider is rustls' `ring` provider; TLS 1.3 and 1.2 are enabled.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod anchors;
mod bundle;
pub mod danger;
mod entrypoint;
mod error;
mod fingerprint;
mod hex;
mod leaf;
mod modes;
mod observe;
mod pin;
mod problem;
mod spiffe;
mod timestamp;
mod verifier;

// rustls is re-exported so callers name the same `ClientConfig` and `RootCertStore` we return.
pub use {
    crate::{
        anchors::{AnchorsError, ServerAnchors, ServerAnchorsBuilder},
        bundle::{BundleError, TrustBundles, roots_from_pem},
        entrypoint::{
            EntrypointDigests, EntrypointError, EntrypointsVerified, FileDigest, FileDigestError,
            digest_file,
        },
        error::{Anchor, ConfigError, IdentityError},
        fingerprint::{Fingerprint, FingerprintError},
        leaf::PresentedIdentity,
        modes::{ModeError, RotationMode, TlsTrust},
        observe::{Observation, ObserveError},
        pin::{ConnectionIdentity, PinMatch},
        problem::CertificateProblem,
        spiffe::{SpiffeId, SpiffeIdError},
        timestamp::{TimestampError, UtcTimestamp},
        verifier::{IdentityVerified, ServerIdentityVerifier, client_config},
    },
    rustls,
};
