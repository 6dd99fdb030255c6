//! `TrustBundles`: X.509 trust anchors per SPIFFE trust domain, from PEM or from the SPIFFE
//! bundle JSON format (seed 003 §1 "SPIFFE SVID": "verifies the SVID against the SPIRE trust
//! bundle").

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, TrustAnchor};

use crate::problem::{CertificateProblem, from_webpki};
use crate::spiffe::{SpiffeIdError, validate_trust_domain};

/// X.509 trust anchors, per SPIFFE trust domain.
///
/// Anchors added for a domain accumulate (a bundle may be assembled from several files); an
/// SVID of that domain must chain to one of them. Nothing here is trusted for any other domain.
#[derive(Debug, Clone, Default)]
pub struct TrustBundles {
    domains: BTreeMap<String, Vec<TrustAnchor<'static>>>,
}

impl TrustBundles {
    /// No trust domains.
    pub fn new() -> TrustBundles {
        TrustBundles::default()
    }

    /// Adds every `CERTIFICATE` section of a PEM document as an anchor of `trust_domain`;
    /// returns how many. Sections of other types (keys, CRLs) are skipped; a document with no
    /// certificate is an error.
    pub fn add_pem(&mut self, trust_domain: &str, pem: &[u8]) -> Result<usize, BundleError> {
        check_domain(trust_domain)?;
        let mut anchors = Vec::new();
        for (index, section) in CertificateDer::pem_slice_iter(pem).enumerate() {
            let der = section.map_err(from_pem)?;
            anchors.push(anchor(&der, index)?);
        }
        self.extend(trust_domain, anchors)
    }

    /// Adds the `x509-svid` keys of a SPIFFE bundle (a JWK Set, SPIFFE Trust Domain and Bundle
    /// specification §4) as anchors of `trust_domain`; returns how many.
    ///
    /// `jwt-svid` keys, and keys of any other `use`, are ignored: they can never widen X.509
    /// trust. A bundle without a single `x509-svid` key is refused, since it would silently
    /// trust nothing.
    pub fn add_spiffe_json(
        &mut self,
        trust_domain: &str,
        json: &[u8],
    ) -> Result<usize, BundleError> {
        check_domain(trust_domain)?;
        let document: serde_json::Value =
            serde_json::from_slice(json).map_err(|error| BundleError::Json {
                detail: error.to_string(),
            })?;
        let Some(keys) = document.get("keys").and_then(serde_json::Value::as_array) else {
            return Err(BundleError::NoKeysArray);
        };
        let mut anchors = Vec::new();
        for (index, key) in keys.iter().enumerate() {
            let Some(key_use) = key.get("use").and_then(serde_json::Value::as_str) else {
                return Err(BundleError::KeyWithoutUse { index });
            };
            if key_use != "x509-svid" {
                continue;
            }
            // Bundle specification §4.2.1: x5c holds exactly one certificate, the anchor.
            let chain = key.get("x5c").and_then(serde_json::Value::as_array);
            let certificate = match chain.map(Vec::as_slice) {
                Some([single]) => single.as_str().ok_or(BundleError::X5cNotString { index })?,
                Some(other) => {
                    return Err(BundleError::X5cCount {
                        index,
                        presented: other.len(),
                    });
                }
                None => return Err(BundleError::X5cMissing { index }),
            };
            let der = STANDARD
                .decode(certificate)
                .map_err(|error| BundleError::X5cBase64 {
                    index,
                    detail: error.to_string(),
                })?;
            anchors.push(anchor(&CertificateDer::from(der), index)?);
        }
        if anchors.is_empty() {
            return Err(BundleError::NoX509SvidKey);
        }
        self.extend(trust_domain, anchors)
    }

    /// Adds one DER certificate as an anchor of `trust_domain`.
    pub fn add_der(
        &mut self,
        trust_domain: &str,
        certificate: &CertificateDer<'_>,
    ) -> Result<(), BundleError> {
        check_domain(trust_domain)?;
        let anchor = anchor(certificate, 0)?;
        self.extend(trust_domain, vec![anchor]).map(|_| ())
    }

    /// The anchors of a trust domain, if any were added.
    pub fn anchors(&self, trust_domain: &str) -> Option<&[TrustAnchor<'static>]> {
        self.domains.get(trust_domain).map(Vec::as_slice)
    }

    /// The trust domains that have anchors, in sorted order.
    pub fn trust_domains(&self) -> impl Iterator<Item = &str> {
        self.domains.keys().map(String::as_str)
    }

    fn extend(
        &mut self,
        trust_domain: &str,
        anchors: Vec<TrustAnchor<'static>>,
    ) -> Result<usize, BundleError> {
        if anchors.is_empty() {
            return Err(BundleError::NoCertificates);
        }
        let count = anchors.len();
        self.domains
            .entry(trust_domain.to_owned())
            .or_default()
            .extend(anchors);
        Ok(count)
    }
}

/// A root store for `tls_trust: webpki` from a PEM document (a `--ca` file, the system bundle).
///
/// Every `CERTIFICATE` section must be a usable trust anchor: a root that silently fails to load
/// would turn into refused handshakes far from the cause.
pub fn roots_from_pem(pem: &[u8]) -> Result<rustls::RootCertStore, BundleError> {
    let mut roots = rustls::RootCertStore::empty();
    for (index, section) in CertificateDer::pem_slice_iter(pem).enumerate() {
        let der = section.map_err(from_pem)?;
        roots.roots.push(anchor(&der, index)?);
    }
    if roots.is_empty() {
        return Err(BundleError::NoCertificates);
    }
    Ok(roots)
}

/// The one translation of a PEM reader error.
fn from_pem(error: rustls_pki_types::pem::Error) -> BundleError {
    use rustls_pki_types::pem::Error as E;
    let detail = match error {
        E::MissingSectionEnd { end_marker } => {
            format!(
                "missing `-----END {}-----`",
                String::from_utf8_lossy(&end_marker)
            )
        }
        E::IllegalSectionStart { line } => {
            format!("illegal section start `{}`", String::from_utf8_lossy(&line))
        }
        E::Base64Decode(detail) => format!("invalid base64 ({detail})"),
        other => other.to_string(),
    };
    BundleError::Pem { detail }
}

fn check_domain(trust_domain: &str) -> Result<(), BundleError> {
    validate_trust_domain(trust_domain, 0).map_err(|reason| BundleError::TrustDomain {
        presented: trust_domain.to_owned(),
        reason,
    })
}

fn anchor(der: &CertificateDer<'_>, index: usize) -> Result<TrustAnchor<'static>, BundleError> {
    webpki::anchor_from_trusted_cert(der)
        .map(|anchor| anchor.to_owned())
        .map_err(|error| BundleError::Certificate {
            index,
            problem: from_webpki(error),
        })
}

/// Why a trust bundle was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// The trust domain name is not a valid SPIFFE trust domain.
    #[error("`{presented}` is not a SPIFFE trust domain: {reason}")]
    TrustDomain {
        /// The name given.
        presented: String,
        /// What is wrong with it.
        reason: SpiffeIdError,
    },
    /// The PEM document is malformed.
    #[error("malformed PEM bundle: {detail}; expected -----BEGIN CERTIFICATE----- sections")]
    Pem {
        /// What the PEM reader said.
        detail: String,
    },
    /// The PEM document holds no certificate.
    #[error("the bundle holds no certificate; expected -----BEGIN CERTIFICATE----- sections")]
    NoCertificates,
    /// The JSON does not parse.
    #[error("the SPIFFE bundle is not JSON: {detail}")]
    Json {
        /// What the JSON parser said.
        detail: String,
    },
    /// The JSON is not a JWK Set.
    #[error("the SPIFFE bundle has no `keys` array; expected a JWK Set {{\"keys\": [...]}}")]
    NoKeysArray,
    /// A key has no `use` member.
    #[error("SPIFFE bundle key {index} has no `use`; expected \"x509-svid\" or \"jwt-svid\"")]
    KeyWithoutUse {
        /// Index in `keys`.
        index: usize,
    },
    /// An `x509-svid` key without `x5c`.
    #[error("SPIFFE bundle key {index} is an x509-svid key without `x5c`")]
    X5cMissing {
        /// Index in `keys`.
        index: usize,
    },
    /// An `x5c` with other than one certificate.
    #[error("SPIFFE bundle key {index} has {presented} certificates in `x5c`; expected exactly 1")]
    X5cCount {
        /// Index in `keys`.
        index: usize,
        /// How many it has.
        presented: usize,
    },
    /// An `x5c` entry that is not a string.
    #[error("SPIFFE bundle key {index}: `x5c` entries must be base64 strings")]
    X5cNotString {
        /// Index in `keys`.
        index: usize,
    },
    /// An `x5c` entry that is not base64.
    #[error("SPIFFE bundle key {index}: `x5c` is not base64 DER ({detail})")]
    X5cBase64 {
        /// Index in `keys`.
        index: usize,
        /// What the decoder said.
        detail: String,
    },
    /// The bundle has no `x509-svid` key.
    #[error("the SPIFFE bundle has no x509-svid key, so it would trust no X.509 SVID")]
    NoX509SvidKey,
    /// A certificate that cannot be a trust anchor.
    #[error("bundle certificate {index} cannot be a trust anchor: {problem}")]
    Certificate {
        /// Index of the certificate (PEM section or `keys` entry).
        index: usize,
        /// Why.
        problem: CertificateProblem,
    },
}
