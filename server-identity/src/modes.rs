//! `RotationMode` and `TlsTrust`: how a pin is computed and what else the chain must satisfy
//! (seed 003 §4 "Cert Rotation Policy", docs/design.md §3).

use std::fmt;
use std::str::FromStr;

/// What the `tls_fingerprint` hashes (seed 003 §4, "Cert Rotation Policy").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RotationMode {
    /// Mode A, the default: SHA-256 over the leaf certificate's SubjectPublicKeyInfo DER. A
    /// renewal that keeps the key keeps the fingerprint.
    #[default]
    KeyPinned,
    /// Mode B: SHA-256 over the whole leaf certificate DER. Any new certificate, even with the
    /// same key, is an identity mismatch until the catalog is updated.
    CertPinned,
}

impl RotationMode {
    /// The catalog spelling: `key-pinned` or `cert-pinned`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RotationMode::KeyPinned => "key-pinned",
            RotationMode::CertPinned => "cert-pinned",
        }
    }
}

impl fmt::Display for RotationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RotationMode {
    type Err = ModeError;

    /// Exactly `key-pinned` or `cert-pinned` (case-sensitive, as the catalog spells them).
    fn from_str(text: &str) -> Result<RotationMode, ModeError> {
        match text {
            "key-pinned" => Ok(RotationMode::KeyPinned),
            "cert-pinned" => Ok(RotationMode::CertPinned),
            _ => Err(ModeError::UnknownRotationMode {
                presented: text.to_owned(),
            }),
        }
    }
}

/// What, besides the pin, the server's chain must satisfy (docs/design.md §3 `tls_trust`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TlsTrust {
    /// The default: the chain must validate to the trust roots for the URL's host name, then
    /// the pin must match.
    #[default]
    Webpki,
    /// The pin alone is the trust anchor (self-signed upstreams): no chain, host name or
    /// validity-date check; the handshake signature is still verified with the pinned key.
    Pin,
}

impl TlsTrust {
    /// The catalog spelling: `webpki` or `pin`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TlsTrust::Webpki => "webpki",
            TlsTrust::Pin => "pin",
        }
    }
}

impl fmt::Display for TlsTrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TlsTrust {
    type Err = ModeError;

    /// Exactly `webpki` or `pin`.
    fn from_str(text: &str) -> Result<TlsTrust, ModeError> {
        match text {
            "webpki" => Ok(TlsTrust::Webpki),
            "pin" => Ok(TlsTrust::Pin),
            _ => Err(ModeError::UnknownTlsTrust {
                presented: text.to_owned(),
            }),
        }
    }
}

/// An unknown `rotation_mode` or `tls_trust` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModeError {
    /// Not `key-pinned` or `cert-pinned`.
    #[error(
        "unknown rotation_mode `{presented}`: expected `key-pinned` (the default) or `cert-pinned`"
    )]
    UnknownRotationMode {
        /// The value given.
        presented: String,
    },
    /// Not `webpki` or `pin`.
    #[error("unknown tls_trust `{presented}`: expected `webpki` (the default) or `pin`")]
    UnknownTlsTrust {
        /// The value given.
        presented: String,
    },
}
