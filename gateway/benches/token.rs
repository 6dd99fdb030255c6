//! The bearer-token check of one request (docs/design.md §7): what `BearerAuth::authenticate`
//! runs for a JWKS held in memory (it awaits nothing then), `bearer_token` on the
//! `Authorization` header and `verify`: the JWS header's `alg`/`kid`, the signature
//! (RS256 with a 2048-bit key, ES256, EdDSA) and the claims (`exp`, `nbf`, `iss`, `aud`, the
//! principal), against a JWKS of three keys held in memory; and a refusal before any signature
//! (an unknown `kid` on a file's keys). Keys are generated at start (RSA by `openssl genpkey`).
//! Each token is measured twice: its first use (a verifier that holds no verified token, made
//! outside the timed part, so the full check runs) and presented again (the verified token
//! held: what a caller sending the same token on every request pays).
//!
//! `cargo bench -p toolgate --bench token`

#![allow(clippy::unwrap_used, clippy::expect_used)]
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::time::{SystemTime, UNIX_EPOCH};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use jsonwebtoken::Header;
use serde_json::json;
use toolgate::auth::{BearerAuth, bearer_token};

// The integration tests' key generator and minting, the same file.
#[path = "../tests/token_keys.rs"]
#[allow(dead_code)]
mod token_keys;
use token_keys::{TestKey, ec_key, ed_key, jwks, rsa_key};

const ISSUER: &str = "https://auth.example";
const AUDIENCE: &str = "https://gateway.example/mcp";

fn token(key: &TestKey, kid: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Claims of the size an authorization server issues (scopes, groups, ids).
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "user-4f1c2a", "exp": now + 3600,
                        "nbf": now - 5, "iat": now - 5, "jti": "7d9c0e1a-5b3f-4e2a-9c1d-0f6b8a2e4c71",
                        "scope": "tools:call tools:list", "groups": ["ops", "readers"],
                        "client_id": "agent-7"});
    let mut header = Header::new(key.algorithm);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, &claims, &key.encoding).unwrap()
}

fn bench_token(c: &mut Criterion) {
    let (rsa, ec, ed) = (rsa_key("rsa"), ec_key("ec"), ed_key("ed"));
    let keys = jwks(&[&rsa, &ec, &ed]);
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &keys, "bench").unwrap();
    let cases = [
        ("RS256", token(&rsa, "rsa")),
        ("ES256", token(&ec, "ec")),
        ("EdDSA", token(&ed, "ed")),
        ("unknown kid (refused)", token(&ed, "gone")),
    ];
    let mut group = c.benchmark_group("bearer token check");
    for (name, token) in &cases {
        let header = format!("Bearer {token}");
        let accepted = *name != "unknown kid (refused)";
        let check = |auth: &BearerAuth| {
            let token = bearer_token(std::iter::once(header.as_bytes())).unwrap();
            let verdict = auth.verify(token);
            assert_eq!(verdict.is_ok(), accepted);
            verdict
        };
        group.bench_function(format!("{name}, first use"), |b| {
            b.iter_batched_ref(
                || BearerAuth::from_jwks(ISSUER, AUDIENCE, &keys, "bench").unwrap(),
                |fresh| check(fresh),
                BatchSize::SmallInput,
            );
        });
        if accepted {
            group.bench_function(format!("{name}, presented again"), |b| {
                b.iter(|| check(&auth));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_token);
criterion_main!(benches);
