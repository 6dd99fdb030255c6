//! Fuzz what a client sends to authenticate (docs/design.md §7): the `Authorization` header
//! values, the compact JWS inside, and the JWK sets the gateway reads from a file or a URL.
//!
//! Properties: no input panics; a header the fuzzer wrote never authenticates (it cannot sign);
//! a token signed here with the gateway's key over the fuzzer's header and claims is accepted
//! only when those say exactly what the gateway requires (EdDSA, the key's kid, the issuer,
//! the audience, a live `exp`, a string `sub`), and its principal is that `sub` with the claims.
//!
//! The first byte chooses: 0 header values (split on `\n`), 1 a token with the fuzzer's header
//! and claims (split on the first 0xFF), 2 a token with a valid header and the fuzzer's claims,
//! 3 a JWK set.
#![no_main]

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey};
use libfuzzer_sys::fuzz_target;
use ring::signature::KeyPair as _;
use serde_json::Value;
use toolgate::auth::{BearerAuth, MAX_TOKEN_BYTES, Principal, bearer_token};

const ISSUER: &str = "https://auth.example";
const AUDIENCE: &str = "https://gateway.example/mcp";
const KID: &str = "fuzz";

/// The gateway's verifier and the private key behind its one JWK (Ed25519 from a fixed seed,
/// so that a crash reproduces with the same key).
fn keys() -> &'static (BearerAuth, EncodingKey) {
    static KEYS: OnceLock<(BearerAuth, EncodingKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let seed = [7u8; 32];
        let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(&seed).unwrap();
        let x = URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
        let jwks = format!(r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","kid":"{KID}","x":"{x}"}}]}}"#);
        let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, jwks.as_bytes(), "fuzz").unwrap();
        // PKCS#8 v1 of an Ed25519 private key: a fixed prefix, then the seed (RFC 8410 §7).
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend_from_slice(&seed);
        (auth, EncodingKey::from_ed_der(&der))
    })
}

fn signed(header: &[u8], claims: &[u8]) -> String {
    let input = format!("{}.{}", URL_SAFE_NO_PAD.encode(header), URL_SAFE_NO_PAD.encode(claims));
    let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &keys().1, Algorithm::EdDSA)
        .unwrap();
    format!("{input}.{signature}")
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// What an accepted token's header and claims must have said.
fn check_accepted(header: &[u8], claims: &[u8], principal: &Principal) {
    let header: Value = serde_json::from_slice(header).expect("an accepted header is JSON");
    assert_eq!(header["alg"], "EdDSA");
    assert_eq!(header["kid"], KID);
    let claims: Value = serde_json::from_slice(claims).expect("accepted claims are JSON");
    assert_eq!(claims["iss"], ISSUER);
    let audience_named = match &claims["aud"] {
        Value::String(aud) => aud == AUDIENCE,
        Value::Array(auds) => auds.iter().any(|aud| aud == AUDIENCE),
        _ => false,
    };
    assert!(audience_named, "aud {}", claims["aud"]);
    let exp = claims["exp"].as_f64().expect("an accepted token has a numeric exp");
    assert!(exp + 120.0 >= now() as f64, "exp {exp} is long past");
    let Principal::User { subject, .. } = principal else {
        panic!("a token's principal is a user");
    };
    assert_eq!(claims["sub"], subject.as_str());
    assert!(!subject.is_empty());
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (auth, _) = keys();
    match mode % 4 {
        0 => {
            let values: Vec<&[u8]> = rest.split(|&b| b == b'\n').take(3).collect();
            if let Ok(token) = bearer_token(values.iter().copied()) {
                assert_eq!(values.len(), 1);
                assert!(token.len() <= MAX_TOKEN_BYTES);
                assert!(auth.verify(token).is_err(), "an unsigned input authenticated");
            }
        }
        1 => {
            let (header, claims) = match rest.iter().position(|&b| b == 0xFF) {
                Some(at) => (&rest[..at], &rest[at + 1..]),
                None => (rest, &b""[..]),
            };
            if let Ok(principal) = auth.verify(&signed(header, claims)) {
                check_accepted(header, claims, &principal);
            }
        }
        2 => {
            let header = format!(r#"{{"alg":"EdDSA","kid":"{KID}","typ":"JWT"}}"#);
            if let Ok(principal) = auth.verify(&signed(header.as_bytes(), rest)) {
                check_accepted(header.as_bytes(), rest, &principal);
            }
        }
        _ => {
            let _ = BearerAuth::from_jwks(ISSUER, AUDIENCE, rest, "fuzz");
        }
    }
});
