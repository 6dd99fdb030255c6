//! The facts about a leaf certificate that the identity checks read, parsed once.

use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::{GeneralName, KeyUsage};
use x509_parser::prelude::FromDer;

use crate::fingerprint::Fingerprint;
use crate::problem::{CertificateProblem, from_x509};
use crate::timestamp::UtcTimestamp;

/// A parsed leaf: both fingerprints, its URI SANs and the bits the SVID rules look at.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    /// SHA-256 of the SubjectPublicKeyInfo DER (`key-pinned`).
    pub(crate) spki: Fingerprint,
    /// SHA-256 of the whole certificate DER (`cert-pinned`).
    pub(crate) certificate: Fingerprint,
    /// Every URI subject alternative name, in certificate order.
    pub(crate) uri_sans: Vec<String>,
    /// basicConstraints cA = TRUE.
    pub(crate) is_ca: bool,
    /// keyUsage keyCertSign or cRLSign (X509-SVID §4.3 forbids both in a leaf).
    pub(crate) signs_certificates: bool,
    /// The keyUsage bits set, by their RFC 5280 names in bit order; `None` without a keyUsage
    /// extension (X509-SVID §4.3 requires one with digitalSignature in a leaf).
    pub(crate) key_usage: Option<Vec<String>>,
    /// keyUsage is present and has digitalSignature.
    pub(crate) digital_signature: bool,
    /// notBefore.
    pub(crate) not_before: UtcTimestamp,
    /// notAfter.
    pub(crate) not_after: UtcTimestamp,
}

impl Leaf {
    /// The URI SANs that are valid SPIFFE IDs, in certificate order.
    pub(crate) fn spiffe_ids(&self) -> Vec<crate::spiffe::SpiffeId> {
        self.uri_sans
            .iter()
            .filter_map(|uri| uri.parse().ok())
            .collect()
    }

    /// Parses the leaf. Trailing bytes after the certificate and duplicated extensions are
    /// refused: two parsers (this one and webpki's) must never read different certificates.
    pub(crate) fn parse(der: &[u8]) -> Result<Leaf, CertificateProblem> {
        let (rest, certificate) = X509Certificate::from_der(der).map_err(from_x509)?;
        if !rest.is_empty() {
            return Err(CertificateProblem::Malformed {
                detail: format!("{} bytes after the certificate", rest.len()),
            });
        }
        let extension = |error| from_x509(x509_parser::nom::Err::Error(error));
        let uri_sans = match certificate.subject_alternative_name().map_err(extension)? {
            Some(san) => san
                .value
                .general_names
                .iter()
                .filter_map(|name| match name {
                    GeneralName::URI(uri) => Some((*uri).to_owned()),
                    _ => None,
                })
                .collect(),
            None => Vec::new(),
        };
        let is_ca = certificate
            .basic_constraints()
            .map_err(extension)?
            .is_some_and(|constraints| constraints.value.ca);
        let key_usage = certificate.key_usage().map_err(extension)?;
        let signs_certificates = key_usage
            .as_ref()
            .is_some_and(|usage| usage.value.key_cert_sign() || usage.value.crl_sign());
        let digital_signature = key_usage
            .as_ref()
            .is_some_and(|usage| usage.value.digital_signature());
        let key_usage = key_usage.map(|usage| key_usage_names(usage.value));
        let validity = certificate.validity();
        // X.509 times have four-digit years at most, so this fails only on a parser fault.
        let time = |seconds: i64| {
            UtcTimestamp::from_unix_seconds(seconds).map_err(|error| {
                CertificateProblem::Malformed {
                    detail: format!("validity date: {error}"),
                }
            })
        };
        Ok(Leaf {
            spki: Fingerprint::of_spki(certificate.tbs_certificate.subject_pki.raw),
            certificate: Fingerprint::of_certificate(der),
            uri_sans,
            is_ca,
            signs_certificates,
            key_usage,
            digital_signature,
            not_before: time(validity.not_before.timestamp())?,
            not_after: time(validity.not_after.timestamp())?,
        })
    }
}

/// The RFC 5280 §4.2.1.3 names of the bits set, in bit order.
fn key_usage_names(usage: &KeyUsage) -> Vec<String> {
    [
        (usage.digital_signature(), "digitalSignature"),
        (usage.non_repudiation(), "nonRepudiation"),
        (usage.key_encipherment(), "keyEncipherment"),
        (usage.data_encipherment(), "dataEncipherment"),
        (usage.key_agreement(), "keyAgreement"),
        (usage.key_cert_sign(), "keyCertSign"),
        (usage.crl_sign(), "cRLSign"),
        (usage.encipher_only(), "encipherOnly"),
        (usage.decipher_only(), "decipherOnly"),
    ]
    .into_iter()
    .filter(|(set, _)| *set)
    .map(|(_, name)| name.to_owned())
    .collect()
}

/// What a leaf certificate presents: the values a server's anchors are compared with. For
/// recording what a server showed (an audit log, a report), not for deciding: the decision is
/// the verifier's.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentedIdentity {
    /// SHA-256 of the SubjectPublicKeyInfo DER (what `key-pinned` compares).
    pub spki_sha256: Fingerprint,
    /// SHA-256 of the whole certificate DER (what `cert-pinned` compares).
    pub cert_sha256: Fingerprint,
    /// The URI subject alternative names that are valid SPIFFE IDs, in certificate order.
    pub spiffe_ids: Vec<crate::spiffe::SpiffeId>,
}

impl PresentedIdentity {
    /// Reads a DER X.509 certificate.
    ///
    /// # Errors
    ///
    /// [`CertificateProblem`] when the bytes are not one X.509 certificate.
    pub fn of_certificate(certificate_der: &[u8]) -> Result<PresentedIdentity, CertificateProblem> {
        Leaf::parse(certificate_der).map(|leaf| PresentedIdentity::of_leaf(&leaf))
    }

    pub(crate) fn of_leaf(leaf: &Leaf) -> PresentedIdentity {
        PresentedIdentity {
            spki_sha256: leaf.spki,
            cert_sha256: leaf.certificate,
            spiffe_ids: leaf.spiffe_ids(),
        }
    }
}
