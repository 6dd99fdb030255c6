//! The one reader of JWK sets (RFC 7517 §5), for `--jwks FILE` and `--jwks URL` alike: a set is
//! accepted whole or refused whole, so a refetched document that holds one key the gateway would
//! never use is refused like the same file at start.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

/// A JWKS that cannot serve as the gateway's token keys.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwksError {
    /// The file could not be read.
    #[error("--jwks {path}: cannot read it ({source}); give a JWKS file (RFC 7517 §5)")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not a JWK set.
    #[error("--jwks {path}: not a JWK set ({detail}); expected {{\"keys\": [...]}} (RFC 7517 §5)")]
    Parse {
        /// The file or URL.
        path: String,
        /// The parser's message.
        detail: String,
    },
    /// A key has no `kid`: tokens name their key by `kid`, so it could never be chosen.
    #[error("--jwks {path}: key {index} has no \"kid\"; every key must have one")]
    MissingKid {
        /// The file or URL.
        path: String,
        /// The key's index in `keys`.
        index: usize,
    },
    /// A key the gateway does not accept tokens from (HMAC secrets, other curves, encryption).
    #[error(
        "--jwks {path}: key {kid:?} is {observed}; only RS256 (RSA), ES256 (EC P-256) and EdDSA \
         (Ed25519) signing keys are accepted"
    )]
    UnsupportedKey {
        /// The file or URL.
        path: String,
        /// The key's `kid`.
        kid: String,
        /// What the key is.
        observed: String,
    },
    /// A key's parameters do not make a public key.
    #[error("--jwks {path}: key {kid:?} is not a valid public key ({detail})")]
    InvalidKey {
        /// The file or URL.
        path: String,
        /// The key's `kid`.
        kid: String,
        /// The library's message.
        detail: String,
    },
    /// No usable key at all.
    #[error("--jwks {path}: the set has no keys")]
    Empty {
        /// The file or URL.
        path: String,
    },
}

/// One signing key of the set, with the one algorithm it verifies.
pub(crate) struct TokenKey {
    pub(crate) kid: String,
    pub(crate) algorithm: Algorithm,
    pub(crate) key: DecodingKey,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

/// The signing keys of one JWK set, every one usable.
#[derive(Debug)]
pub(crate) struct KeySet {
    keys: Vec<TokenKey>,
}

impl KeySet {
    /// The keys of the JWKS text `jwks` (`origin`, a file or URL, names it in errors).
    pub(crate) fn parse(jwks: &[u8], origin: &str) -> Result<KeySet, JwksError> {
        let path = origin.to_owned();
        let set: JwkSet = serde_json::from_slice(jwks).map_err(|error| JwksError::Parse {
            path: path.clone(),
            detail: error.to_string(),
        })?;
        let mut keys = Vec::with_capacity(set.keys.len());
        for (index, jwk) in set.keys.iter().enumerate() {
            let Some(kid) = jwk.common.key_id.clone() else {
                return Err(JwksError::MissingKid { path, index });
            };
            let unsupported = |observed: String| JwksError::UnsupportedKey {
                path: path.clone(),
                kid: kid.clone(),
                observed,
            };
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                return Err(unsupported("an encryption key (use \"enc\")".to_owned()));
            }
            let algorithm = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => Algorithm::RS256,
                AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
                    Algorithm::ES256
                }
                AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
                    Algorithm::EdDSA
                }
                AlgorithmParameters::OctetKey(_) => {
                    return Err(unsupported("a symmetric (HMAC) key".to_owned()));
                }
                AlgorithmParameters::EllipticCurve(ec) => {
                    return Err(unsupported(format!("an EC key on {:?}", ec.curve)));
                }
                AlgorithmParameters::OctetKeyPair(okp) => {
                    return Err(unsupported(format!("an OKP key on {:?}", okp.curve)));
                }
            };
            // A key that says its algorithm must say the one its type is used with here.
            if let Some(declared) = jwk.common.key_algorithm {
                let matches = matches!(
                    (declared, algorithm),
                    (KeyAlgorithm::RS256, Algorithm::RS256)
                        | (KeyAlgorithm::ES256, Algorithm::ES256)
                        | (KeyAlgorithm::EdDSA, Algorithm::EdDSA)
                );
                if !matches {
                    return Err(unsupported(format!("declared for {declared:?}")));
                }
            }
            let key = DecodingKey::from_jwk(jwk).map_err(|error| JwksError::InvalidKey {
                path: path.clone(),
                kid: kid.clone(),
                detail: error.to_string(),
            })?;
            keys.push(TokenKey {
                kid,
                algorithm,
                key,
            });
        }
        if keys.is_empty() {
            return Err(JwksError::Empty { path });
        }
        Ok(KeySet { keys })
    }

    /// The key named `kid`.
    pub(crate) fn find(&self, kid: &str) -> Option<&TokenKey> {
        self.keys.iter().find(|key| key.kid == kid)
    }

    /// The number of keys.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Every `kid`, in the set's order (for the log line of a refetch).
    pub(crate) fn kids(&self) -> Vec<&str> {
        self.keys.iter().map(|key| key.kid.as_str()).collect()
    }
}
