//! `observe`: connect to an https URL and report what the server presents, to write its
//! catalog entry (DESIGN §6 `toolgate identity`).

use std::sync::Arc;
use std::time::Duration;

use rustls::RootCertStore;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::AsyncWriteExt as _;

use crate::danger::ObservingVerifier;
use crate::fingerprint::Fingerprint;
use crate::leaf::Leaf;
use crate::problem::{CertificateProblem, from_webpki};
use crate::rfc3339::rfc3339;
use crate::spiffe::SpiffeId;
use crate::verifier::verify_webpki_chain;

/// How long connecting, and then the handshake, may each take.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// What a server presented in a handshake, trusted by nothing.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Observation {
    /// The URL observed.
    pub url: String,
    /// The `key-pinned` fingerprint: SHA-256 of the leaf's SubjectPublicKeyInfo.
    pub spki_sha256: Fingerprint,
    /// The `cert-pinned` fingerprint: SHA-256 of the leaf certificate.
    pub cert_sha256: Fingerprint,
    /// The leaf's URI SANs that are valid SPIFFE IDs.
    pub spiffe_ids: Vec<SpiffeId>,
    /// Whether the chain validates to the given roots for the URL's host name (what
    /// `tls_trust: webpki` requires); `None` when no roots were given.
    pub chain_valid: Option<bool>,
    /// Why the chain did not validate, when it did not.
    pub chain_problem: Option<CertificateProblem>,
    /// The leaf's notBefore, RFC 3339 UTC.
    pub not_before: String,
    /// The leaf's notAfter, RFC 3339 UTC.
    pub not_after: String,
    /// The leaf certificate.
    pub leaf: CertificateDer<'static>,
    /// The whole presented chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
}

/// Why a server could not be observed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// The URL is not `https://host[:port][/path]`.
    #[error("invalid URL `{url}`: {reason}; expected https://host[:port]/path")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// The TCP connection failed or timed out.
    #[error("cannot connect to {address}: {detail}; check the host name, the port and the network")]
    Connect {
        /// `host:port`.
        address: String,
        /// Why.
        detail: String,
    },
    /// The TLS handshake failed (not a trust failure: nothing is trusted here).
    #[error(
        "TLS handshake with {address} failed: {detail}; is the server speaking TLS on this port?"
    )]
    Handshake {
        /// `host:port`.
        address: String,
        /// Why.
        detail: String,
    },
    /// The server presented no certificate, or one that does not parse.
    #[error("the server's certificate cannot be read: {problem}")]
    Certificate {
        /// Why.
        problem: CertificateProblem,
    },
}

/// Connects to an `https` URL, completes a handshake that trusts nothing (through
/// [`danger::ObservingVerifier`](crate::danger::ObservingVerifier), which still verifies the
/// handshake signatures) and reports what the server presented. No application data is sent.
///
/// `roots`, when given, are used to report [`Observation::chain_valid`].
pub async fn observe(
    url: &str,
    roots: Option<Arc<RootCertStore>>,
) -> Result<Observation, ObserveError> {
    let target = Target::parse(url)?;
    let address = format!("{}:{}", target.connect_host, target.port);
    let connect_error = |detail: String| ObserveError::Connect {
        address: address.clone(),
        detail,
    };
    let tcp = tokio::time::timeout(
        STEP_TIMEOUT,
        tokio::net::TcpStream::connect((target.connect_host.as_str(), target.port)),
    )
    .await
    .map_err(|_| connect_error(format!("no answer in {} s", STEP_TIMEOUT.as_secs())))?
    .map_err(|error| connect_error(error.to_string()))?;

    let verifier = Arc::new(ObservingVerifier::new());
    let config = verifier
        .client_config()
        .map_err(|error| ObserveError::Handshake {
            address: address.clone(),
            detail: error.to_string(),
        })?;
    let handshake_error = |detail: String| ObserveError::Handshake {
        address: address.clone(),
        detail,
    };
    let mut tls = tokio::time::timeout(
        STEP_TIMEOUT,
        tokio_rustls::TlsConnector::from(config).connect(target.server_name.clone(), tcp),
    )
    .await
    .map_err(|_| handshake_error(format!("no answer in {} s", STEP_TIMEOUT.as_secs())))?
    .map_err(|error| handshake_error(error.to_string()))?;
    // close_notify; the server's answer does not matter.
    let _ = tls.shutdown().await;

    let chain = verifier.presented_chain().unwrap_or_default();
    let now = UnixTime::now();
    observation(url, &target.server_name, chain, roots.as_deref(), now)
}

/// The report for a presented chain, given the roots and the time.
fn observation(
    url: &str,
    server_name: &ServerName<'static>,
    chain: Vec<CertificateDer<'static>>,
    roots: Option<&RootCertStore>,
    now: UnixTime,
) -> Result<Observation, ObserveError> {
    let Some(leaf_der) = chain.first().cloned() else {
        return Err(ObserveError::Certificate {
            problem: CertificateProblem::Malformed {
                detail: "no certificate".to_owned(),
            },
        });
    };
    let leaf = Leaf::parse(&leaf_der).map_err(|problem| ObserveError::Certificate { problem })?;
    let chain_problem = roots.and_then(|roots| {
        let algorithms = rustls::crypto::ring::default_provider().signature_verification_algorithms;
        verify_webpki_chain(
            &leaf_der,
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
        url: url.to_owned(),
        spki_sha256: leaf.spki,
        cert_sha256: leaf.certificate,
        spiffe_ids: leaf.spiffe_ids(),
        chain_valid: roots.map(|_| chain_problem.is_none()),
        chain_problem,
        not_before: rfc3339(leaf.not_before),
        not_after: rfc3339(leaf.not_after),
        leaf: leaf_der,
        chain,
    })
}

/// The parts of an https URL a connection needs.
struct Target {
    /// Host as given to the resolver (IPv6 without brackets).
    connect_host: String,
    port: u16,
    server_name: ServerName<'static>,
}

impl Target {
    fn parse(url: &str) -> Result<Target, ObserveError> {
        let invalid = |reason| ObserveError::InvalidUrl {
            url: url.to_owned(),
            reason,
        };
        let Some(rest) = url.strip_prefix("https://") else {
            return Err(invalid("the scheme must be https"));
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(invalid("user info is not allowed"));
        }
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let Some((host, after)) = bracketed.split_once(']') else {
                return Err(invalid("unclosed `[` in the host"));
            };
            (host, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(invalid("the host is empty"));
        }
        let port = match port {
            None => 443,
            Some(text) => text
                .parse::<u16>()
                .map_err(|_| invalid("the port is not a number"))?,
        };
        let server_name = ServerName::try_from(host.to_owned())
            .map_err(|_| invalid("the host is not a DNS name or IP address"))?;
        Ok(Target {
            connect_host: host.to_owned(),
            port,
            server_name,
        })
    }
}
