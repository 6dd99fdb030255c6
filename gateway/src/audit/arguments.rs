//! What an audit entry holds for a call's arguments: a digest of their RFC 8785 form, plain
//! SHA-256 or keyed HMAC-SHA-256 (`toolgate serve --audit-key FILE`), or the reason there is
//! none (docs/audit in the crate README, "Arguments").
//!
//! A plain digest of low-entropy arguments (`{"account": "1234"}`) can be found by hashing
//! guesses; with a key that only the gateway's operator holds it cannot. The text form names the
//! kind (`sha256:<hex>` or `hmac-sha256:<hex>`), so a verifier knows which one it is looking at.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use hmac::{Hmac, Mac};
use jcs_digest::{CanonicalizeError, Digest, StrictJsonErrorKind, canonicalize};
use serde_json::Value;
use sha2::Sha256;
use toolgate_mcp::RawJson;

/// The shortest key `--audit-key` accepts: HMAC-SHA-256 keys shorter than the hash add nothing
/// an attacker cannot guess (RFC 2104 §3).
pub const MIN_ARGUMENT_KEY_BYTES: usize = 32;

/// The secret key of keyed argument digests. `Debug` does not show it.
#[derive(Clone)]
pub struct ArgumentKey(Arc<[u8]>);

impl ArgumentKey {
    /// A key of these bytes, used exactly as given.
    ///
    /// # Errors
    ///
    /// [`ArgumentKeyError::TooShort`] for fewer than [`MIN_ARGUMENT_KEY_BYTES`] bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<ArgumentKey, ArgumentKeyError> {
        if bytes.len() < MIN_ARGUMENT_KEY_BYTES {
            return Err(ArgumentKeyError::TooShort {
                length: bytes.len(),
                minimum: MIN_ARGUMENT_KEY_BYTES,
            });
        }
        Ok(ArgumentKey(bytes.into()))
    }

    /// Reads a key file: its bytes exactly, a trailing newline included if there is one.
    ///
    /// # Errors
    ///
    /// [`ArgumentKeyError::Read`], or [`ArgumentKeyError::TooShort`].
    pub fn read(path: &Path) -> Result<ArgumentKey, ArgumentKeyError> {
        let bytes = std::fs::read(path).map_err(|source| ArgumentKeyError::Read {
            path: path.display().to_string(),
            source: Arc::new(source),
        })?;
        ArgumentKey::from_bytes(&bytes).map_err(|error| match error {
            ArgumentKeyError::TooShort { length, minimum } => ArgumentKeyError::TooShortFile {
                path: path.display().to_string(),
                length,
                minimum,
            },
            other => other,
        })
    }

    fn mac(&self, bytes: &[u8]) -> [u8; 32] {
        // `new_from_slice` accepts keys of any length for HMAC; the error arm is unreachable.
        match Hmac::<Sha256>::new_from_slice(&self.0) {
            Ok(mut mac) => {
                mac.update(bytes);
                mac.finalize().into_bytes().into()
            }
            Err(_) => [0; 32],
        }
    }
}

impl fmt::Debug for ArgumentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArgumentKey({} bytes)", self.0.len())
    }
}

/// Why an argument key cannot be used.
#[non_exhaustive]
#[derive(Clone, Debug, thiserror::Error)]
pub enum ArgumentKeyError {
    /// The key file could not be read.
    #[error(
        "--audit-key {path}: cannot read the key file: {source}; check the path and its permissions"
    )]
    Read {
        /// The file.
        path: String,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// Too few key bytes.
    #[error("the audit key has {length} bytes, fewer than the {minimum} an HMAC-SHA-256 key needs")]
    TooShort {
        /// The key's length.
        length: usize,
        /// [`MIN_ARGUMENT_KEY_BYTES`].
        minimum: usize,
    },
    /// Too few bytes in the key file.
    #[error(
        "--audit-key {path}: the file has {length} bytes, fewer than the {minimum} an \
         HMAC-SHA-256 key needs; make one with `head -c 32 /dev/urandom > {path}`"
    )]
    TooShortFile {
        /// The file.
        path: String,
        /// The key's length.
        length: usize,
        /// [`MIN_ARGUMENT_KEY_BYTES`].
        minimum: usize,
    },
}

/// What an entry's `arguments_digest` says about a call's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgumentsDigest {
    /// SHA-256 of the arguments' RFC 8785 form: `sha256:<hex>`.
    Sha256(Digest),
    /// HMAC-SHA-256 of the arguments' RFC 8785 form under the `--audit-key`:
    /// `hmac-sha256:<hex>`.
    HmacSha256([u8; 32]),
    /// The arguments have no RFC 8785 form (an integer beyond ±(2^53−1), say: arguments are
    /// carried to the upstream as they are, never rewritten to fit). The entry's
    /// `arguments_digest` is `null` and `arguments_not_digested` holds this reason.
    NotComputable(String),
}

impl ArgumentsDigest {
    /// The digest of `arguments` under `key` (HMAC-SHA-256), or without one (SHA-256).
    pub fn of(arguments: &Value, key: Option<&ArgumentKey>) -> ArgumentsDigest {
        match canonicalize(arguments) {
            Err(CanonicalizeError::IntegerOutOfRange { pointer, value }) => {
                ArgumentsDigest::NotComputable(integer_out_of_range(&pointer, &value.to_string()))
            }
            Err(error) => ArgumentsDigest::NotComputable(format!(
                "the arguments have no RFC 8785 form to digest ({error}); they were carried as sent"
            )),
            Ok(bytes) => match key {
                None => ArgumentsDigest::Sha256(Digest::of(&bytes)),
                Some(key) => ArgumentsDigest::HmacSha256(key.mac(&bytes)),
            },
        }
    }

    /// The digest of arguments carried as received (`tools/call` arguments travel as the
    /// client's bytes): read strictly (docs/design.md §2) and digested as [`ArgumentsDigest::of`]
    /// does; arguments the strict reader refuses (an integer beyond ±(2^53−1), a number beyond
    /// a double) have no digest, and the reason says why.
    pub fn of_carried(arguments: &RawJson, key: Option<&ArgumentKey>) -> ArgumentsDigest {
        // Canonicalized straight from the bytes, without a tree (this runs on every call): the
        // bytes, and the first error, that `canonicalize(&parse_strict(bytes))` gives.
        let bytes = arguments.as_bytes();
        let digested = match key {
            None => jcs_digest::canonical_digest(bytes).map(ArgumentsDigest::Sha256),
            Some(key) => jcs_digest::canonicalize_strict(bytes)
                .map(|canonical| ArgumentsDigest::HmacSha256(key.mac(&canonical))),
        };
        digested.unwrap_or_else(|error| {
            ArgumentsDigest::NotComputable(match error.kind() {
                StrictJsonErrorKind::IntegerOutOfRange { pointer, literal } => {
                    integer_out_of_range(pointer, literal)
                }
                kind => format!(
                    "the arguments have no RFC 8785 form to digest ({kind}); they were carried as sent"
                ),
            })
        })
    }

    /// The text of `arguments_digest`: `sha256:<hex>`, `hmac-sha256:<hex>`, or `None` when it
    /// could not be computed.
    pub fn text(&self) -> Option<String> {
        match self {
            ArgumentsDigest::Sha256(digest) => Some(digest.to_string()),
            ArgumentsDigest::HmacSha256(mac) => Some(format!("hmac-sha256:{}", hex(mac))),
            ArgumentsDigest::NotComputable(_) => None,
        }
    }
}

impl From<Digest> for ArgumentsDigest {
    fn from(digest: Digest) -> ArgumentsDigest {
        ArgumentsDigest::Sha256(digest)
    }
}

/// The one wording of the most common reason: the same whether the integer was found while
/// canonicalizing a value or while reading carried bytes.
fn integer_out_of_range(pointer: &str, literal: &str) -> String {
    format!(
        "integer {literal} at JSON Pointer {pointer:?} is outside ±(2^53−1), so the arguments \
         have no RFC 8785 form to digest; they were carried as sent"
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_at_least_32_bytes_and_not_shown() {
        let error = ArgumentKey::from_bytes(&[7; 31]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the audit key has 31 bytes, fewer than the 32 an HMAC-SHA-256 key needs"
        );
        let key = ArgumentKey::from_bytes(&[7; 32]).unwrap();
        assert_eq!(format!("{key:?}"), "ArgumentKey(32 bytes)");
    }

    #[test]
    fn the_keyed_digest_is_hmac_sha256_of_the_canonical_form() {
        // Computed independently: Python `hmac.new(b"Jefe" * 8, msg, hashlib.sha256)`.
        let key = ArgumentKey::from_bytes(&b"Jefe".repeat(8)).unwrap();
        assert_eq!(
            hex(&key.mac(b"what do ya want for nothing?")),
            "167f928588c5cc2eef8e3093caa0e87c9ff566a14794aa61648d81621a2a40c6"
        );
        let digest = ArgumentsDigest::of(&serde_json::json!({"q": "x"}), Some(&key));
        assert_eq!(
            digest.text().unwrap(),
            format!("hmac-sha256:{}", hex(&key.mac(br#"{"q":"x"}"#)))
        );
    }

    #[test]
    fn arguments_without_a_canonical_form_say_why() {
        let huge: Value = serde_json::from_str(r#"{"n": 9007199254740993}"#).unwrap();
        let ArgumentsDigest::NotComputable(reason) = ArgumentsDigest::of(&huge, None) else {
            panic!("digested an integer beyond 2^53");
        };
        assert!(reason.contains("9007199254740993"), "{reason}");
        let carried = RawJson::from_slice(br#"{"n": 9007199254740993}"#).unwrap();
        let ArgumentsDigest::NotComputable(reason) = ArgumentsDigest::of_carried(&carried, None)
        else {
            panic!("digested carried arguments with an integer beyond 2^53");
        };
        assert_eq!(
            reason,
            "integer 9007199254740993 at JSON Pointer \"/n\" is outside ±(2^53−1), so the \
             arguments have no RFC 8785 form to digest; they were carried as sent"
        );
        let overflow = RawJson::from_slice(br#"[1e400]"#).unwrap();
        assert_eq!(
            ArgumentsDigest::of_carried(&overflow, None),
            ArgumentsDigest::NotComputable(
                "the arguments have no RFC 8785 form to digest (number 1e400 at JSON Pointer \
                 \"/0\" overflows an IEEE 754 double); they were carried as sent"
                    .to_owned()
            )
        );
        // Carried arguments that do read strictly digest exactly as their value does.
        let plain = RawJson::from_slice(br#"{ "q" : "x" }"#).unwrap();
        assert_eq!(
            ArgumentsDigest::of_carried(&plain, None),
            ArgumentsDigest::of(&serde_json::json!({"q": "x"}), None)
        );
        assert_eq!(ArgumentsDigest::NotComputable(reason).text(), None);
    }

    /// What [`ArgumentsDigest::of_carried`] computed before it read the bytes without a tree:
    /// the strict tree, then its canonical form.
    fn of_carried_through_a_tree(
        arguments: &RawJson,
        key: Option<&ArgumentKey>,
    ) -> ArgumentsDigest {
        match arguments.to_value() {
            Ok(value) => ArgumentsDigest::of(&value, key),
            Err(error) => ArgumentsDigest::NotComputable(match error.kind() {
                StrictJsonErrorKind::IntegerOutOfRange { pointer, literal } => {
                    integer_out_of_range(pointer, literal)
                }
                kind => format!(
                    "the arguments have no RFC 8785 form to digest ({kind}); they were carried as sent"
                ),
            }),
        }
    }

    /// JSON texts as clients write them: numbers in every spelling (beyond 2^53 and beyond a
    /// double too), escapes, names that sort differently in UTF-16 and in UTF-8, whitespace.
    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("0".to_owned()),
            Just("-0".to_owned()),
            Just("1E+2".to_owned()),
            Just("1e400".to_owned()),
            Just("-1e-400".to_owned()),
            Just("9007199254740993".to_owned()),
            Just("-9007199254740991".to_owned()),
            Just("0.1".to_owned()),
            Just("true".to_owned()),
            Just("null".to_owned()),
            Just(r#""\u00e9\n\"/\\""#.to_owned()),
            Just(r#""\ud83d\ude00 €""#.to_owned()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>()
                .prop_filter("finite", |x| x.is_finite())
                .prop_map(|x| format!("{x:e}")),
            "[a-z\u{e9}\u{20ac}\u{1f600}\u{ff61} ]{0,6}".prop_map(|text| format!("{text:?}")),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            let name = prop_oneof![
                Just("a"),
                Just("b"),
                Just("\u{e9}"),
                Just("\u{1f600}"),
                Just("\u{ff61}"),
                Just("A"),
                Just(""),
                Just("aa")
            ];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[ {} ]", items.join(" , "))),
                proptest::collection::btree_map(name, inner, 0..5).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(name, value)| format!("{:?}:{value}", name))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn carried_arguments_digest_as_their_strict_tree_does(text in json_text()) {
            let Ok(carried) = RawJson::from_slice(text.as_bytes()) else {
                return Ok(());
            };
            let key = ArgumentKey::from_bytes(&[9; 32]).unwrap();
            proptest::prop_assert_eq!(
                ArgumentsDigest::of_carried(&carried, None),
                of_carried_through_a_tree(&carried, None)
            );
            proptest::prop_assert_eq!(
                ArgumentsDigest::of_carried(&carried, Some(&key)),
                of_carried_through_a_tree(&carried, Some(&key))
            );
        }
    }
}
