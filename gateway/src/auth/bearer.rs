//! OAuth 2.1 bearer tokens (docs/design.md §7): the gateway is a resource server. A token is a JWS
//! signed by a key of the configured JWKS (RS256, ES256 or EdDSA), for the configured issuer and
//! audience, within its `exp`/`nbf` (60 s leeway). Signature and claim checks are
//! `jsonwebtoken`'s; this module chooses the key, refuses what must never be accepted (`none`,
//! HMAC, a `kid` not in the JWKS) before any key is used, and names every refusal.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use serde_json::{Map, Value};

use super::principal::Principal;

/// The clock skew allowed on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECONDS: u64 = 60;
/// The longest `Authorization` header value read; a longer one is refused unread.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

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
        /// The file.
        path: String,
        /// The parser's message.
        detail: String,
    },
    /// A key has no `kid`: tokens name their key by `kid`, so it could never be chosen.
    #[error("--jwks {path}: key {index} has no \"kid\"; every key must have one")]
    MissingKid {
        /// The file.
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
        /// The file.
        path: String,
        /// The key's `kid`.
        kid: String,
        /// What the key is.
        observed: String,
    },
    /// A key's parameters do not make a public key.
    #[error("--jwks {path}: key {kid:?} is not a valid public key ({detail})")]
    InvalidKey {
        /// The file.
        path: String,
        /// The key's `kid`.
        kid: String,
        /// The library's message.
        detail: String,
    },
    /// No usable key at all.
    #[error("--jwks {path}: the set has no keys")]
    Empty {
        /// The file.
        path: String,
    },
}

/// Why a request's bearer token was refused (HTTP 401).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BearerRefusal {
    /// No `Authorization` header.
    #[error("no bearer token: send Authorization: Bearer <token> from the authorization server")]
    Missing,
    /// An `Authorization` header of another scheme, or several, or unreadable.
    #[error("the Authorization header is not one \"Bearer <token>\"")]
    NotBearer,
    /// Longer than [`MAX_TOKEN_BYTES`].
    #[error("the bearer token is longer than {MAX_TOKEN_BYTES} bytes")]
    TooLong,
    /// Not three base64url segments with a JSON header.
    #[error("the bearer token is not a JWS in compact form ({0})")]
    Malformed(String),
    /// `alg: none`.
    #[error("the token is unsigned (alg \"none\"); only RS256, ES256 and EdDSA are accepted")]
    Unsigned,
    /// An HMAC algorithm: a shared secret would let any holder mint tokens.
    #[error("the token uses HMAC ({0}); only RS256, ES256 and EdDSA are accepted")]
    Hmac(String),
    /// Another algorithm.
    #[error("the token's algorithm {0:?} is not accepted; only RS256, ES256 and EdDSA are")]
    UnsupportedAlgorithm(String),
    /// No `kid` in the header.
    #[error("the token's header has no \"kid\"; the gateway chooses the key by kid")]
    MissingKid,
    /// A `kid` not in the JWKS.
    #[error("the token's kid {0:?} is not in the gateway's JWKS")]
    UnknownKid(String),
    /// The header's `alg` is not the key's.
    #[error("the token's alg {observed} does not match key {kid:?}, which is {expected}")]
    AlgorithmMismatch {
        /// The key's `kid`.
        kid: String,
        /// The key's algorithm.
        expected: String,
        /// The header's.
        observed: String,
    },
    /// The signature does not verify.
    #[error("the token's signature does not verify against key {0:?}")]
    BadSignature(String),
    /// `exp` is past (beyond the leeway).
    #[error("the token has expired (exp is past, {LEEWAY_SECONDS} s leeway)")]
    Expired,
    /// `nbf` is ahead (beyond the leeway).
    #[error("the token is not yet valid (nbf is ahead, {LEEWAY_SECONDS} s leeway)")]
    NotYetValid,
    /// `iss` is not the configured issuer.
    #[error("the token's iss {observed} is not the gateway's issuer {expected:?}")]
    WrongIssuer {
        /// `--jwt-issuer`.
        expected: String,
        /// The token's `iss` (JSON text).
        observed: String,
    },
    /// `aud` does not name the configured audience.
    #[error("the token's aud {observed} does not name the gateway's audience {expected:?}")]
    WrongAudience {
        /// `--jwt-audience`.
        expected: String,
        /// The token's `aud` (JSON text).
        observed: String,
    },
    /// A claim the gateway needs (`exp`, `iss`, `aud`, `sub`) is absent.
    #[error("the token has no {0:?} claim")]
    MissingClaim(String),
    /// The claims are not what a token holds (a `sub` that is not a string, say).
    #[error("the token's claims are not valid ({0})")]
    InvalidClaims(String),
}

impl BearerRefusal {
    /// Whether the request carried no credentials at all (RFC 6750 §3.1: then the challenge
    /// has no `error` attribute).
    pub fn is_missing(&self) -> bool {
        matches!(self, BearerRefusal::Missing)
    }
}

struct TokenKey {
    kid: String,
    algorithm: Algorithm,
    key: DecodingKey,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

/// The token verifier: issuer, audience and the JWKS's signing keys.
#[derive(Debug)]
pub struct BearerAuth {
    issuer: String,
    audience: String,
    keys: Vec<TokenKey>,
}

impl BearerAuth {
    /// A verifier for tokens of `issuer` for `audience`, signed by a key of the JWKS in `path`.
    ///
    /// # Errors
    ///
    /// [`JwksError`] when the file cannot be read or holds a key the gateway refuses.
    pub fn from_jwks_file(issuer: &str, audience: &str, path: &Path) -> Result<Self, JwksError> {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| JwksError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::from_jwks(issuer, audience, &bytes, &shown)
    }

    /// A verifier from the JWKS text `jwks` (`origin` names it in errors).
    ///
    /// # Errors
    ///
    /// [`JwksError`] when the text is not a JWK set or holds a key the gateway refuses.
    pub fn from_jwks(
        issuer: &str,
        audience: &str,
        jwks: &[u8],
        origin: &str,
    ) -> Result<Self, JwksError> {
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
        Ok(BearerAuth {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            keys,
        })
    }

    /// The issuer tokens must name (`authorization_servers` of the metadata document).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The principal of a request whose `Authorization` header values are `authorization`.
    ///
    /// # Errors
    ///
    /// [`BearerRefusal`] saying why the request is not authenticated.
    pub fn authenticate<'a>(
        &self,
        mut authorization: impl Iterator<Item = &'a [u8]>,
    ) -> Result<Principal, BearerRefusal> {
        let Some(value) = authorization.next() else {
            return Err(BearerRefusal::Missing);
        };
        if authorization.next().is_some() {
            return Err(BearerRefusal::NotBearer);
        }
        if value.len() > MAX_TOKEN_BYTES {
            return Err(BearerRefusal::TooLong);
        }
        let value = std::str::from_utf8(value).map_err(|_| BearerRefusal::NotBearer)?;
        // The scheme is case-insensitive (RFC 9110 §11.1).
        let token = match value.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => return Err(BearerRefusal::NotBearer),
        };
        self.verify(token)
    }

    /// The principal of the compact JWS `token`.
    ///
    /// # Errors
    ///
    /// [`BearerRefusal`] saying why the token is refused.
    pub fn verify(&self, token: &str) -> Result<Principal, BearerRefusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(BearerRefusal::TooLong);
        }
        let header = segment(token, 0)?;
        let alg = match header.get("alg") {
            Some(Value::String(alg)) => alg.as_str(),
            _ => {
                return Err(BearerRefusal::Malformed(
                    "the header has no \"alg\"".to_owned(),
                ));
            }
        };
        // Decided on the text, before any key is looked at.
        match alg {
            "RS256" | "ES256" | "EdDSA" => {}
            none if none.eq_ignore_ascii_case("none") => return Err(BearerRefusal::Unsigned),
            hmac if hmac.starts_with("HS") => return Err(BearerRefusal::Hmac(hmac.to_owned())),
            other => return Err(BearerRefusal::UnsupportedAlgorithm(other.to_owned())),
        }
        let kid = match header.get("kid") {
            Some(Value::String(kid)) => kid,
            _ => return Err(BearerRefusal::MissingKid),
        };
        let Some(key) = self.keys.iter().find(|key| &key.kid == kid) else {
            return Err(BearerRefusal::UnknownKid(kid.clone()));
        };
        let expected = format!("{:?}", key.algorithm);
        if expected != alg {
            return Err(BearerRefusal::AlgorithmMismatch {
                kid: kid.clone(),
                expected,
                observed: alg.to_owned(),
            });
        }
        let mut validation = Validation::new(key.algorithm);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let claims = match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation)
        {
            Ok(data) => data.claims,
            Err(error) => return Err(self.refusal(error.into_kind(), token, kid)),
        };
        principal(claims)
    }

    fn refusal(&self, kind: ErrorKind, token: &str, kid: &str) -> BearerRefusal {
        let observed = |claim: &str| {
            segment(token, 1)
                .ok()
                .and_then(|claims| claims.get(claim).map(Value::to_string))
                .unwrap_or_else(|| "(absent)".to_owned())
        };
        match kind {
            ErrorKind::InvalidSignature => BearerRefusal::BadSignature(kid.to_owned()),
            ErrorKind::ExpiredSignature => BearerRefusal::Expired,
            ErrorKind::ImmatureSignature => BearerRefusal::NotYetValid,
            ErrorKind::InvalidIssuer => BearerRefusal::WrongIssuer {
                expected: self.issuer.clone(),
                observed: observed("iss"),
            },
            ErrorKind::InvalidAudience => BearerRefusal::WrongAudience {
                expected: self.audience.clone(),
                observed: observed("aud"),
            },
            ErrorKind::MissingRequiredClaim(claim) => BearerRefusal::MissingClaim(claim),
            ErrorKind::Json(error) => BearerRefusal::InvalidClaims(error.to_string()),
            other => BearerRefusal::Malformed(format!("{other:?}")),
        }
    }
}

/// The JSON object in segment `index` (0: header, 1: claims) of a compact JWS.
fn segment(token: &str, index: usize) -> Result<Map<String, Value>, BearerRefusal> {
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err(BearerRefusal::Malformed(format!(
            "{} segments, not 3",
            parts.len()
        )));
    }
    let name = if index == 0 { "header" } else { "claims" };
    let bytes = URL_SAFE_NO_PAD
        .decode(parts[index])
        .map_err(|_| BearerRefusal::Malformed(format!("the {name} is not base64url")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(BearerRefusal::Malformed(format!(
            "the {name} is not a JSON object"
        ))),
    }
}

/// `User::"<sub>"` with the token's scopes and every other claim.
fn principal(mut claims: Map<String, Value>) -> Result<Principal, BearerRefusal> {
    let subject = match claims.remove("sub") {
        Some(Value::String(sub)) if !sub.is_empty() => sub,
        _ => {
            return Err(BearerRefusal::InvalidClaims(
                "sub is not a non-empty string".to_owned(),
            ));
        }
    };
    let scopes = match claims.get("scope") {
        Some(Value::String(scope)) => scope.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    Ok(Principal::User {
        subject,
        scopes,
        claims,
    })
}
