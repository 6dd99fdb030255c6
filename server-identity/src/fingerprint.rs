//! `Fingerprint`: the SHA-256 of a server's key or certificate, as the catalog pins it
//! (seed 003 §1 "TLS Fingerprint", docs/design.md §3).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::leaf::Leaf;
use crate::problem::CertificateProblem;

/// The forms [`Fingerprint::from_str`] accepts, quoted in every parse error.
const ACCEPTED_FORMS: &str = "accepted forms: `SHA256:` + 64 hex digits (any case); \
     colon-separated hex as `openssl x509 -fingerprint -sha256` prints it, with or without its \
     `sha256 Fingerprint=` prefix; `SHA256:` + base64 (43 characters, or 44 ending in `=`, as \
     OpenSSH prints)";

/// Longest slice of the input an error repeats, so a pasted PEM file does not flood a log.
const MAX_ECHO: usize = 100;

/// A SHA-256 fingerprint: 32 bytes, compared in constant time.
///
/// Displayed in the canonical form `SHA256:<64 lowercase hex>`; parsed from every form of
/// docs/design.md §3 (see [`FromStr`](#impl-FromStr-for-Fingerprint)).
#[derive(Clone, Copy)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// Wraps 32 bytes of a SHA-256 output.
    pub const fn from_bytes(bytes: [u8; 32]) -> Fingerprint {
        Fingerprint(bytes)
    }

    /// The fingerprint `key-pinned` mode compares: SHA-256 over the DER of a
    /// SubjectPublicKeyInfo (the whole SEQUENCE, as `openssl pkey -pubin -outform der` writes it).
    pub fn of_spki(spki_der: &[u8]) -> Fingerprint {
        Fingerprint(Sha256::digest(spki_der).into())
    }

    /// The fingerprint `cert-pinned` mode compares: SHA-256 over the whole certificate DER, as
    /// `openssl x509 -fingerprint -sha256` prints it.
    pub fn of_certificate(certificate_der: &[u8]) -> Fingerprint {
        Fingerprint(Sha256::digest(certificate_der).into())
    }

    /// The `key-pinned` fingerprint of a certificate: SHA-256 over the SubjectPublicKeyInfo it
    /// carries. Fails only if the DER is not an X.509 certificate.
    pub fn of_certificate_key(certificate_der: &[u8]) -> Result<Fingerprint, CertificateProblem> {
        Leaf::parse(certificate_der).map(|leaf| leaf.spki)
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

// Constant-time (docs/design.md §3): a pin comparison must not leak how many leading bytes matched.
impl PartialEq for Fingerprint {
    fn eq(&self, other: &Fingerprint) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl Eq for Fingerprint {}

impl Hash for Fingerprint {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SHA256:")?;
        crate::hex::write_lower(f, &self.0)
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// Why a fingerprint text did not parse. Every message ends with the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FingerprintError {
    /// The text was empty (or only white space).
    #[error("empty fingerprint; {ACCEPTED_FORMS}")]
    Empty,
    /// The text is in none of the accepted forms (no `SHA256:` prefix, not colon-separated hex).
    #[error("unrecognized fingerprint `{presented}`; {ACCEPTED_FORMS}")]
    UnknownForm {
        /// The text (cut to 100 bytes).
        presented: String,
    },
    /// The form was recognized, but the value has the wrong length for a SHA-256.
    #[error(
        "fingerprint in {form} form has {presented} characters, expected {expected}: is it a \
         SHA-256?; {ACCEPTED_FORMS}"
    )]
    WrongLength {
        /// The form the text was read as (`hex`, `colon-separated hex`, `base64`).
        form: &'static str,
        /// The length that form needs.
        expected: &'static str,
        /// The length found.
        presented: usize,
    },
    /// A character that does not belong to the form.
    #[error("fingerprint in {form} form has `{character}` at byte {position}; {ACCEPTED_FORMS}")]
    InvalidCharacter {
        /// The form the text was read as.
        form: &'static str,
        /// The offending character.
        character: char,
        /// Its byte offset in the trimmed text.
        position: usize,
    },
}

impl FromStr for Fingerprint {
    type Err = FingerprintError;

    /// Parses every input form of docs/design.md §3. Surrounding white space (a pasted line) is
    /// ignored; anything else that is not exactly one of the forms is an error.
    fn from_str(input: &str) -> Result<Fingerprint, FingerprintError> {
        let text = input.trim();
        if text.is_empty() {
            return Err(FingerprintError::Empty);
        }
        // `openssl x509 -fingerprint -sha256`: OpenSSL 3 prints `sha256 Fingerprint=`,
        // OpenSSL 1.1 `SHA256 Fingerprint=`.
        for prefix in ["sha256 Fingerprint=", "SHA256 Fingerprint="] {
            if let Some(rest) = text.strip_prefix(prefix) {
                return parse_colon_hex(rest, prefix.len());
            }
        }
        if let Some(rest) = text.strip_prefix("SHA256:") {
            let offset = "SHA256:".len();
            return match rest.len() {
                64 => parse_plain_hex(rest, offset),
                43 | 44 => parse_base64(rest, offset),
                presented => Err(FingerprintError::WrongLength {
                    form: "`SHA256:` hex or base64",
                    expected: "64 (hex) or 43/44 (base64)",
                    presented,
                }),
            };
        }
        // Bare colon-separated hex (the part after `Fingerprint=`).
        let bytes = text.as_bytes();
        if bytes.len() >= 3 && bytes[2] == b':' {
            return parse_colon_hex(text, 0);
        }
        Err(FingerprintError::UnknownForm {
            presented: echo(text),
        })
    }
}

fn parse_plain_hex(hex: &str, offset: usize) -> Result<Fingerprint, FingerprintError> {
    crate::hex::decode_32(hex)
        .map(Fingerprint)
        .map_err(|at| invalid_character(hex, at, offset, "hex"))
}

fn parse_colon_hex(text: &str, offset: usize) -> Result<Fingerprint, FingerprintError> {
    const FORM: &str = "colon-separated hex";
    // 32 pairs and 31 colons.
    if text.len() != 95 {
        return Err(FingerprintError::WrongLength {
            form: FORM,
            expected: "95 (32 hex pairs separated by `:`)",
            presented: text.chars().count(),
        });
    }
    let mut out = [0u8; 32];
    for (index, byte) in out.iter_mut().enumerate() {
        let at = 3 * index;
        let high = hex_value(text, at, offset, FORM)?;
        let low = hex_value(text, at + 1, offset, FORM)?;
        *byte = (high << 4) | low;
        if index < 31 && text.as_bytes()[at + 2] != b':' {
            return Err(invalid_character(text, at + 2, offset, FORM));
        }
    }
    Ok(Fingerprint(out))
}

fn parse_base64(text: &str, offset: usize) -> Result<Fingerprint, FingerprintError> {
    const FORM: &str = "base64";
    if let Some(position) = text
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='))
    {
        return Err(invalid_character(text, position, offset, FORM));
    }
    // 44 characters must end in exactly one `=`; 43 carry none. The engines also refuse
    // non-zero trailing bits, so each fingerprint has exactly one base64 spelling.
    let decoded = if text.len() == 44 {
        STANDARD.decode(text)
    } else {
        STANDARD_NO_PAD.decode(text)
    };
    match decoded {
        Ok(bytes) => match <[u8; 32]>::try_from(bytes.as_slice()) {
            Ok(array) => Ok(Fingerprint(array)),
            Err(_) => Err(FingerprintError::WrongLength {
                form: FORM,
                expected: "43 (or 44 ending in `=`)",
                presented: text.len(),
            }),
        },
        Err(base64::DecodeError::InvalidByte(position, _))
        | Err(base64::DecodeError::InvalidLastSymbol(position, _)) => {
            Err(invalid_character(text, position, offset, FORM))
        }
        Err(_) => Err(FingerprintError::WrongLength {
            form: FORM,
            expected: "43 (or 44 ending in `=`)",
            presented: text.len(),
        }),
    }
}

fn hex_value(
    text: &str,
    at: usize,
    offset: usize,
    form: &'static str,
) -> Result<u8, FingerprintError> {
    crate::hex::digit(text.as_bytes(), at).map_err(|at| invalid_character(text, at, offset, form))
}

fn invalid_character(text: &str, at: usize, offset: usize, form: &'static str) -> FingerprintError {
    let (character, start) = crate::hex::char_at(text, at);
    FingerprintError::InvalidCharacter {
        form,
        character,
        position: offset + start,
    }
}

fn echo(text: &str) -> String {
    if text.len() <= MAX_ECHO {
        return text.to_owned();
    }
    let end = (0..=MAX_ECHO)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..end])
}
