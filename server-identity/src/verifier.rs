//! `ServerIdentityVerifier`: a rustls `ServerCertVerifier` that enforces a server's anchors
//! inside the handshake (seed 003 §4 steps 5–8, docs/design.md §3).
//!
//! Assembled from rustls' own pieces, as `rustls::client::WebPkiServerVerifier` is: webpki path
//! building with the provider's algorithms, webpki's name check, and handshake signatures
//! through `rustls::crypto::verify_tls1{2,3}_signature`. It adds only the pin and SVID checks.

use std::sync::Arc;

use rustls::RootCertStore;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, TrustAnchor, UnixTime};

use crate::anchors::ServerAnchors;
use crate::bundle::TrustBundles;
use crate::error::{ConfigError, IdentityError};
use crate::fingerprint::Fingerprint;
use crate::leaf::Leaf;
use crate::modes::TlsTrust;
use crate::pin::{PinMatch, match_pin};
use crate::problem::from_webpki;
use crate::spiffe::SpiffeId;

/// How the chain is trusted, fixed when the verifier is made.
#[derive(Debug)]
enum ChainPolicy {
    /// `tls_trust: webpki`, no SPIFFE ID: the roots, for the server name.
    Webpki(Arc<RootCertStore>),
    /// A SPIFFE ID: its trust domain's bundle, no name check (SVIDs carry no host name).
    SpiffeBundle {
        id: SpiffeId,
        anchors: Vec<TrustAnchor<'static>>,
    },
    /// `tls_trust: pin`: no chain; the pin is the anchor.
    PinOnly,
}

/// Enforces one server's [`ServerAnchors`] during the TLS handshake.
///
/// Checks, in order (each failure is an [`IdentityError`] naming its anchor):
/// 1. the leaf parses;
/// 2. with a SPIFFE ID (seed 003 §4 step 7): exactly one URI SAN, which is a SPIFFE ID, in a leaf
///    that is neither a CA nor allowed to sign certificates, equal to the pinned ID, chaining to
///    the trust domain's bundle (validity dates enforced, no host name);
///    otherwise with `tls_trust: webpki`: the chain to the roots and the server name;
/// 3. with a fingerprint (seed 003 §4 step 6): the leaf's key (or certificate) hash equals the
///    pin or a backup.
///
/// Handshake signatures are then verified by the provider with the leaf's key, in every mode.
#[derive(Debug)]
pub struct ServerIdentityVerifier {
    anchors: ServerAnchors,
    chain: ChainPolicy,
    provider: Arc<CryptoProvider>,
}

impl ServerIdentityVerifier {
    /// A verifier for `anchors`, with the ring provider.
    ///
    /// `roots` are used only for `tls_trust: webpki` without a SPIFFE ID (and must then be
    /// non-empty); `bundles` only for a SPIFFE ID (and must then hold its trust domain).
    pub fn new(
        anchors: &ServerAnchors,
        roots: Arc<RootCertStore>,
        bundles: &TrustBundles,
    ) -> Result<ServerIdentityVerifier, ConfigError> {
        let chain = match (anchors.spiffe_id(), anchors.tls_trust()) {
            (Some(id), _) => {
                let Some(bundle) = bundles.anchors(id.trust_domain()) else {
                    return Err(ConfigError::MissingBundle {
                        trust_domain: id.trust_domain().to_owned(),
                        spiffe_id: id.clone(),
                    });
                };
                ChainPolicy::SpiffeBundle {
                    id: id.clone(),
                    anchors: bundle.to_vec(),
                }
            }
            (None, TlsTrust::Webpki) => {
                if roots.is_empty() {
                    return Err(ConfigError::NoRoots);
                }
                ChainPolicy::Webpki(roots)
            }
            (None, TlsTrust::Pin) => ChainPolicy::PinOnly,
        };
        Ok(ServerIdentityVerifier {
            anchors: anchors.clone(),
            chain,
            provider: Arc::new(rustls::crypto::ring::default_provider()),
        })
    }

    /// The anchors this verifier enforces.
    pub fn anchors(&self) -> &ServerAnchors {
        &self.anchors
    }

    /// Checks a presented chain against the anchors at time `now`, outside a handshake.
    ///
    /// This is the whole certificate decision of the handshake; the handshake additionally
    /// proves possession of the leaf's key.
    pub fn verify_identity(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        now: UnixTime,
    ) -> Result<IdentityVerified, IdentityError> {
        let leaf =
            Leaf::parse(end_entity).map_err(|problem| IdentityError::MalformedLeaf { problem })?;
        let algorithms = self.provider.signature_verification_algorithms.all;
        let spiffe_id = match &self.chain {
            ChainPolicy::Webpki(roots) => {
                verify_webpki_chain(
                    end_entity,
                    intermediates,
                    roots,
                    server_name,
                    now,
                    algorithms,
                )
                .map_err(|e| IdentityError::WebpkiRejected {
                    problem: from_webpki(e),
                })?;
                None
            }
            ChainPolicy::SpiffeBundle { id, anchors } => Some(check_svid(
                &leaf,
                id,
                anchors,
                end_entity,
                intermediates,
                now,
                algorithms,
            )?),
            ChainPolicy::PinOnly => None,
        };
        let pin = match_pin(&self.anchors, &leaf)?;
        Ok(IdentityVerified {
            spki: leaf.spki,
            certificate: leaf.certificate,
            spiffe_id,
            pin,
        })
    }
}

/// X509-SVID checks (docs/design.md §3 `spiffe_id`), then the chain to the bundle.
fn check_svid(
    leaf: &Leaf,
    expected: &SpiffeId,
    anchors: &[TrustAnchor<'static>],
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    now: UnixTime,
    algorithms: &[&dyn rustls::pki_types::SignatureVerificationAlgorithm],
) -> Result<SpiffeId, IdentityError> {
    let [uri] = leaf.uri_sans.as_slice() else {
        return Err(IdentityError::SvidUriSanCount {
            expected: expected.clone(),
            presented: leaf.uri_sans.clone(),
        });
    };
    let presented: SpiffeId = uri.parse().map_err(|reason| IdentityError::SvidInvalidId {
        expected: expected.clone(),
        presented: uri.clone(),
        reason,
    })?;
    if leaf.is_ca || leaf.signs_certificates {
        return Err(IdentityError::SvidIsCa { presented });
    }
    // X509-SVID §4.3: keyUsage MUST be present and a leaf MUST set digitalSignature. A leaf
    // without the extension is refused too: webpki does not read keyUsage on an end entity.
    if !leaf.digital_signature {
        return Err(IdentityError::SvidWithoutDigitalSignature {
            presented,
            key_usage: leaf.key_usage.clone(),
        });
    }
    if presented != *expected {
        return Err(IdentityError::SpiffeIdMismatch {
            expected: expected.clone(),
            presented,
        });
    }
    // No name check: the bundle, not the host name, anchors an SVID.
    webpki::EndEntityCert::try_from(end_entity)
        .and_then(|cert| {
            cert.verify_for_usage(
                algorithms,
                anchors,
                intermediates,
                now,
                webpki::KeyUsage::server_auth(),
                None,
                None,
            )
            .map(|_| ())
        })
        .map_err(|e| IdentityError::SvidChainRejected {
            trust_domain: expected.trust_domain().to_owned(),
            problem: from_webpki(e),
        })?;
    Ok(presented)
}

/// Proof that a presented chain satisfied every anchor of a [`ServerAnchors`]. Only
/// [`ServerIdentityVerifier::verify_identity`] makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityVerified {
    spki: Fingerprint,
    certificate: Fingerprint,
    spiffe_id: Option<SpiffeId>,
    pin: PinMatch,
}

impl IdentityVerified {
    /// SHA-256 of the leaf's SubjectPublicKeyInfo.
    pub fn spki_sha256(&self) -> Fingerprint {
        self.spki
    }

    /// SHA-256 of the leaf certificate.
    pub fn cert_sha256(&self) -> Fingerprint {
        self.certificate
    }

    /// The verified SPIFFE ID, when one is pinned.
    pub fn spiffe_id(&self) -> Option<&SpiffeId> {
        self.spiffe_id.as_ref()
    }

    /// True when a backup fingerprint matched, not the primary: the planned rotation has
    /// happened and the catalog's primary should be updated.
    pub fn matched_backup(&self) -> bool {
        matches!(self.pin, PinMatch::Backup(_))
    }

    /// Which pin matched.
    pub fn pin_match(&self) -> PinMatch {
        self.pin
    }
}

impl ServerCertVerifier for ServerIdentityVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.verify_identity(end_entity, intermediates, server_name, now) {
            Ok(_proof) => Ok(ServerCertVerified::assertion()),
            Err(error) => Err(error.into_tls_error()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}

impl ServerIdentityVerifier {
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.provider.signature_verification_algorithms
    }
}

/// A client configuration that enforces `anchors` on every handshake: the ring provider, TLS 1.3
/// and 1.2, ALPN `h2` and `http/1.1`, no client certificate, and **no session resumption**.
///
/// Resumption is off because a resumed handshake presents no certificate, and rustls then does
/// not call the verifier: the connection would inherit the verdict of an earlier one, made
/// before the server might have changed its key, let its SVID expire, or been replaced by
/// another backend that holds the same ticket keys. Every connection made with this
/// configuration is a full handshake checked against `anchors`.
///
/// A refused handshake fails with `rustls::Error::InvalidCertificate(CertificateError::Other(..))`
/// (the peer receives a `certificate_unknown` alert) carrying the [`IdentityError`]; read it with
/// [`IdentityError::from_tls_error`] or [`IdentityError::from_io_error`].
pub fn client_config(
    anchors: &ServerAnchors,
    roots: Arc<RootCertStore>,
    bundles: &TrustBundles,
) -> Result<Arc<rustls::ClientConfig>, ConfigError> {
    let verifier = Arc::new(ServerIdentityVerifier::new(anchors, roots, bundles)?);
    let mut config = rustls::ClientConfig::builder_with_provider(verifier.provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| ConfigError::Tls {
            detail: error.to_string(),
        })?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config.resumption = rustls::client::Resumption::disabled();
    Ok(Arc::new(config))
}

/// The webpki check of `tls_trust: webpki`: the chain validates to `roots` for server
/// authentication at `now`, and the leaf is valid for `server_name`. One place, so that what
/// `Observation::of_chain` reports as `chain_valid` is exactly what the verifier enforces.
pub(crate) fn verify_webpki_chain(
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    roots: &RootCertStore,
    server_name: &ServerName<'_>,
    now: UnixTime,
    algorithms: &[&'static dyn rustls::pki_types::SignatureVerificationAlgorithm],
) -> Result<(), webpki::Error> {
    let cert = webpki::EndEntityCert::try_from(end_entity)?;
    cert.verify_for_usage(
        algorithms,
        &roots.roots,
        intermediates,
        now,
        webpki::KeyUsage::server_auth(),
        None,
        None,
    )?;
    cert.verify_is_valid_for_subject_name(server_name)
}
