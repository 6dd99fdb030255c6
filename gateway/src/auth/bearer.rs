//! OAuth 2.1 bearer tokens (docs/design.md §7): the gateway is a resource server. A token is a JWS
//! signed by a key of the configured JWKS (RS256, ES256 or EdDSA), for the configured issuer and
//! audience, within its `exp`/`nbf` (60 s leeway). Signature and claim checks are
//! `jsonwebtoken`'s; this module chooses the key, refuses what must never be accepted (`none`,
//! HMAC, a `kid` not in the JWKS) before any key is used, and names every refusal. The keys come
//! from a file, read once, or from a URL ([`JwksUrl`]), refetched when a token names a
//! `kid` the cached set lacks.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Validation, errors::ErrorKind};
use serde_json::{Map, Value};

use super::jwks::{JwksError, KeySet};
use super::jwks_url::{JwksFetchError, JwksUrl, RemoteKeys};
use super::principal::Principal;
use super::verified::VerifiedTokens;

/// The clock skew allowed on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECONDS: u64 = 60;
/// The longest `Authorization` header value read; a longer one is refused unread.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

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

/// Where the keys come from.
#[derive(Debug)]
enum Keys {
    /// A file, read once at start.
    Fixed(Arc<KeySet>),
    /// A URL, fetched at start and refetched for unknown `kid`s.
    Remote(Box<RemoteKeys>),
}

/// The token verifier: issuer, audience and the JWKS's signing keys.
#[derive(Debug)]
pub struct BearerAuth {
    issuer: String,
    audience: String,
    keys: Keys,
    /// Tokens that verified against the keys held now (a hit skips the signature check).
    verified: VerifiedTokens,
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
        let keys = KeySet::parse(jwks, origin)?;
        Ok(BearerAuth {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            keys: Keys::Fixed(Arc::new(keys)),
            verified: VerifiedTokens::new(LEEWAY_SECONDS),
        })
    }

    /// A verifier whose keys are the JWK set at `source`, fetched now; a token naming a `kid`
    /// the set lacks makes it refetch the set, at most once per the source's refetch interval.
    ///
    /// # Errors
    ///
    /// [`JwksFetchError`] when the set cannot be fetched or holds a key the gateway refuses.
    pub async fn from_jwks_url(
        issuer: &str,
        audience: &str,
        source: JwksUrl,
    ) -> Result<Self, JwksFetchError> {
        let keys = RemoteKeys::start(source).await?;
        Ok(BearerAuth {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            keys: Keys::Remote(Box::new(keys)),
            verified: VerifiedTokens::new(LEEWAY_SECONDS),
        })
    }

    /// The issuer tokens must name (`authorization_servers` of the metadata document).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The principal of a request whose `Authorization` header values are `authorization`. A
    /// token whose `kid` is not among the keys held makes a URL's keys refetched (at most once
    /// per interval) before it is refused.
    ///
    /// # Errors
    ///
    /// [`BearerRefusal`] saying why the request is not authenticated.
    pub async fn authenticate<'a>(
        &self,
        authorization: impl Iterator<Item = &'a [u8]>,
    ) -> Result<Principal, BearerRefusal> {
        let token = bearer_token(authorization)?;
        match (self.verify(token), &self.keys) {
            (Err(BearerRefusal::UnknownKid(kid)), Keys::Remote(remote)) => {
                let keys = remote.refetch_for(&kid).await;
                self.verify_with(&keys, token)
            }
            (verdict, _) => verdict,
        }
    }

    /// The principal of the compact JWS `token`, checked against the keys held now (this never
    /// refetches: [`BearerAuth::authenticate`] does). A token that verified before against the
    /// same keys and has not expired since is not checked again (see [`verified_tokens_held`]).
    ///
    /// # Errors
    ///
    /// [`BearerRefusal`] saying why the token is refused.
    ///
    /// [`verified_tokens_held`]: BearerAuth::verified_tokens_held
    pub fn verify(&self, token: &str) -> Result<Principal, BearerRefusal> {
        match &self.keys {
            Keys::Fixed(keys) => self.verify_with(keys, token),
            Keys::Remote(remote) => self.verify_with(&remote.current(), token),
        }
    }

    /// How many verified tokens are held, so that a caller presenting the same token again
    /// pays no signature check: each until its `exp` (with the leeway) or until the key set
    /// changes (a refetch or refresh), at most 1,024 tokens and 4 MiB of them.
    pub fn verified_tokens_held(&self) -> usize {
        self.verified.len()
    }

    fn verify_with(&self, keys: &Arc<KeySet>, token: &str) -> Result<Principal, BearerRefusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(BearerRefusal::TooLong);
        }
        if let Some(principal) = self.verified.get(token, keys) {
            return Ok(principal);
        }
        let principal = self.verify_in_full(keys, token)?;
        self.verified.insert(token, keys, &principal);
        Ok(principal)
    }

    fn verify_in_full(&self, keys: &KeySet, token: &str) -> Result<Principal, BearerRefusal> {
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
        let Some(key) = keys.find(kid) else {
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
                .and_then(|claims| claims.get(claim).map(jcs_digest::order::to_string))
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

/// The token of the one `Authorization: Bearer <token>` header among `authorization`'s values.
///
/// # Errors
///
/// [`BearerRefusal::Missing`], [`BearerRefusal::NotBearer`] or [`BearerRefusal::TooLong`].
pub fn bearer_token<'a>(
    mut authorization: impl Iterator<Item = &'a [u8]>,
) -> Result<&'a str, BearerRefusal> {
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
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => Ok(token.trim()),
        _ => Err(BearerRefusal::NotBearer),
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
