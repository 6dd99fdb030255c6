//! `Observation`: what a server presented, trusted by nothing, to write its catalog entry
//! (docs/design.md §6 `toolgate identity`). Pure: the caller makes the connection (through
//! [`danger::ObservingVerifier`](crate::danger::ObservingVerifier)) and hands over the chain;
//! this crate does no network I/O.

use rustls::RootCertStore;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use crate::fingerprint::Fingerprint;
use crate::leaf::Leaf;
use crate::problem::{CertificateProblem, from_webpki};
use crate::spiffe::SpiffeId;
use crate::timestamp::UtcTimestamp;
use crate::verifier::verify_webpki_chain;

/// What a server presented in a handshake, trusted by nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Observation {
    /// The `key-pinned` fingerprint: SHA-256 of the leaf's SubjectPublicKeyInfo.
    pub spki_sha256: Fingerprint,
    /// The `cert-pinned` fingerprint: SHA-256 of the leaf certificate.
    pub cert_sha256: Fingerprint,
    /// The leaf's URI SANs that are valid SPIFFE IDs.
    pub spiffe_ids: Vec<SpiffeId>,
    /// Whether the chain validates to the given roots for the host name (what
    /// `tls_trust: webpki` requires); `None` when no roots were given.
    pub chain_valid: Option<bool>,
    /// Why the chain did not validate, when it did not.
    pub chain_problem: Option<CertificateProblem>,
    /// The leaf's notBefore.
    pub not_before: UtcTimestamp,
    /// The leaf's notAfter.
    pub not_after: UtcTimestamp,
    /// The whole presented chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
}

/// Why a presented chain cannot be observed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// The server presented no certificate.
    #[error("the server presented no certificate; is it a TLS server that authenticates?")]
    NoCertificate,
    /// The leaf does not parse.
    #[error("the server's certificate cannot be read: {problem}")]
    Certificate {
        /// Why.
        problem: CertificateProblem,
    },
}

impl Observation {
    /// The report for `chain` (leaf first, as a connection's `peer_certificates()` holds it),
    /// presented by the server reached as `server_name`, at `now`.
    ///
    /// `roots`, when given, set [`chain_valid`](Observation::chain_valid) and
    /// [`chain_problem`](Observation::chain_problem) by exactly the check `tls_trust: webpki`
    /// makes (the chain to the roots at `now`, then the host name); without roots, `server_name`
    /// and `now` are not used.
    ///
    /// # Errors
    ///
    /// [`ObserveError::NoCertificate`] for an empty chain, [`ObserveError::Certificate`] when
    /// the leaf does not parse.
    pub fn of_chain(
        chain: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        roots: Option<&RootCertStore>,
        now: UnixTime,
    ) -> Result<Observation, ObserveError> {
        let Some(leaf_der) = chain.first() else {
            return Err(ObserveError::NoCertificate);
        };
        let leaf =
            Leaf::parse(leaf_der).map_err(|problem| ObserveError::Certificate { problem })?;
        let chain_problem = roots.and_then(|roots| {
            let algorithms =
                rustls::crypto::ring::default_provider().signature_verification_algorithms;
            verify_webpki_chain(
                leaf_der,
                &chain[1..],
                roots,
                server_name,
                now,
                algorithms.all,
            )
            .err()
            .map(from_webpki)
        });
        Ok(Observation {
            spki_sha256: leaf.spki,
            cert_sha256: leaf.certificate,
            spiffe_ids: leaf.spiffe_ids(),
            chain_valid: roots.map(|_| chain_problem.is_none()),
            chain_problem,
            not_before: leaf.not_before,
            not_after: leaf.not_after,
            chain: chain.iter().map(|cert| cert.clone().into_owned()).collect(),
        })
    }
}
