//! `CertificateProblem`: why a certificate or chain was refused, and the one place each foreign
//! error (rustls-webpki, x509-parser) is translated into it.

use rustls_pki_types::UnixTime;
use x509_parser::error::X509Error;

use crate::timestamp::rfc3339_or_seconds;

/// Why a certificate, chain or trust anchor was refused, in our words.
///
/// Translated from rustls-webpki in exactly one function and from x509-parser in exactly one
/// function, so every caller sees the same reason for the same fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CertificateProblem {
    /// The DER does not parse as an X.509 certificate.
    #[error("malformed certificate ({detail})")]
    Malformed {
        /// What the parser said.
        detail: String,
    },
    /// No path from the certificate to any of the trust anchors.
    #[error("issued by an unknown certificate authority")]
    UnknownIssuer,
    /// The certificate (or an issuer) expired.
    #[error("expired: not after {not_after}, now {now}")]
    Expired {
        /// The time of the check (RFC 3339 UTC).
        now: String,
        /// The certificate's notAfter (RFC 3339 UTC).
        not_after: String,
    },
    /// The certificate (or an issuer) is not valid yet.
    #[error("not valid yet: not before {not_before}, now {now}")]
    NotValidYet {
        /// The time of the check (RFC 3339 UTC).
        now: String,
        /// The certificate's notBefore (RFC 3339 UTC).
        not_before: String,
    },
    /// The certificate's subject alternative names do not cover the host name.
    #[error("not valid for {expected}; the certificate names {}", list(presented))]
    NotValidForName {
        /// The host name of the URL.
        expected: String,
        /// The DNS names and IP addresses the certificate carries.
        presented: Vec<String>,
    },
    /// The leaf is a certificate authority.
    #[error("the end-entity certificate is a CA certificate")]
    CaUsedAsEndEntity,
    /// A signature in the chain does not verify.
    #[error("a certificate signature does not verify")]
    BadSignature,
    /// A signature algorithm in the chain is not supported.
    #[error("a certificate uses an unsupported signature algorithm")]
    UnsupportedSignatureAlgorithm,
    /// The leaf's extended key usage does not allow TLS server authentication.
    #[error("the certificate's extended key usage does not include TLS server authentication")]
    NotForServerAuth,
    /// The chain violates an issuer's name constraints.
    #[error("the chain violates a certificate authority's name constraints")]
    NameConstraintViolation,
    /// Any other refusal, with the underlying library's description.
    #[error("{detail}")]
    Other {
        /// The underlying description.
        detail: String,
    },
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "no names".to_owned()
    } else {
        names.join(", ")
    }
}

/// The one translation of a rustls-webpki error.
// The deprecated unit variants are still matched: older code paths in webpki return them.
#[allow(deprecated)]
pub(crate) fn from_webpki(error: webpki::Error) -> CertificateProblem {
    use webpki::Error as E;
    match error {
        E::BadDer => CertificateProblem::Malformed {
            detail: "invalid DER".to_owned(),
        },
        E::BadDerTime => CertificateProblem::Malformed {
            detail: "invalid DER time".to_owned(),
        },
        E::TrailingData(inside) => CertificateProblem::Malformed {
            detail: format!("trailing data in {inside:?}"),
        },
        E::UnsupportedCertVersion => CertificateProblem::Malformed {
            detail: "unsupported certificate version".to_owned(),
        },
        E::UnknownIssuer => CertificateProblem::UnknownIssuer,
        E::CertExpired { time, not_after } => CertificateProblem::Expired {
            now: unix(time),
            not_after: unix(not_after),
        },
        E::CertNotValidYet { time, not_before } => CertificateProblem::NotValidYet {
            now: unix(time),
            not_before: unix(not_before),
        },
        E::CertNotValidForName(context) => CertificateProblem::NotValidForName {
            expected: server_name_text(&context.expected),
            presented: context
                .presented
                .iter()
                .map(|name| presented_name(name))
                .collect(),
        },
        E::CaUsedAsEndEntity => CertificateProblem::CaUsedAsEndEntity,
        E::InvalidSignatureForPublicKey => CertificateProblem::BadSignature,
        E::UnsupportedSignatureAlgorithm
        | E::UnsupportedSignatureAlgorithmContext(_)
        | E::UnsupportedSignatureAlgorithmForPublicKey
        | E::UnsupportedSignatureAlgorithmForPublicKeyContext(_) => {
            CertificateProblem::UnsupportedSignatureAlgorithm
        }
        E::RequiredEkuNotFound | E::RequiredEkuNotFoundContext(_) => {
            CertificateProblem::NotForServerAuth
        }
        E::NameConstraintViolation => CertificateProblem::NameConstraintViolation,
        other => CertificateProblem::Other {
            detail: other.to_string(),
        },
    }
}

/// The one translation of an x509-parser error.
pub(crate) fn from_x509(error: x509_parser::nom::Err<X509Error>) -> CertificateProblem {
    let detail = match error {
        x509_parser::nom::Err::Error(e) | x509_parser::nom::Err::Failure(e) => e.to_string(),
        x509_parser::nom::Err::Incomplete(_) => "truncated DER".to_owned(),
    };
    CertificateProblem::Malformed { detail }
}

/// webpki reports presented names in its `Debug` form (`DnsName("a.example")`,
/// `IpAddress(192.0.2.1)`); we show the names themselves.
fn presented_name(debug: &str) -> String {
    let unwrap = |prefix: &str, suffix: &str| {
        debug
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
            .map(str::to_owned)
    };
    unwrap("DnsName(\"", "\")")
        .or_else(|| unwrap("IpAddress(", ")"))
        .or_else(|| unwrap("UniformResourceIdentifier(\"", "\")").map(|uri| format!("URI:{uri}")))
        .unwrap_or_else(|| debug.to_owned())
}

fn unix(time: UnixTime) -> String {
    rfc3339_or_seconds(i64::try_from(time.as_secs()).unwrap_or(i64::MAX))
}

fn server_name_text(name: &rustls_pki_types::ServerName<'_>) -> String {
    match name {
        rustls_pki_types::ServerName::DnsName(dns) => dns.as_ref().to_owned(),
        rustls_pki_types::ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => format!("{other:?}"),
    }
}
