//! Verified tokens are kept (`BearerAuth::verified_tokens_held`): a token presented again gives
//! the same principal without a second signature check, until its `exp` by the full check's
//! rule; refusals are never kept; the bound on held tokens holds.

use std::time::Duration;

use serde_json::json;
use toolgate::auth::{BearerAuth, BearerRefusal};

use crate::e2e_auth::{AUDIENCE, ISSUER, claims, now};
use crate::token_keys::{ed_key, jwks, mint};

#[test]
fn a_token_presented_again_gives_the_same_principal_and_is_held_once() {
    let key = ed_key("ed-1");
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &jwks(&[&key]), "test JWKS").unwrap();
    let token = mint(&key, &claims("alice"));
    assert_eq!(auth.verified_tokens_held(), 0);
    let first = auth.verify(&token).unwrap();
    assert_eq!(auth.verified_tokens_held(), 1);
    let again = auth.verify(&token).unwrap();
    assert_eq!(again, first);
    assert_eq!(again.to_string(), r#"User::"alice""#);
    assert_eq!(auth.verified_tokens_held(), 1);
    // Another token of the same subject is another entry.
    let other = mint(
        &key,
        &json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice",
                                   "exp": now() + 301, "nbf": now() - 5}),
    );
    assert_eq!(auth.verify(&other).unwrap().to_string(), r#"User::"alice""#);
    assert_eq!(auth.verified_tokens_held(), 2);
}

#[test]
fn refused_tokens_are_never_held() {
    let key = ed_key("ed-1");
    let stranger = ed_key("ed-1");
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &jwks(&[&key]), "test JWKS").unwrap();
    let expired = mint(
        &key,
        &json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice",
                                     "exp": now() - 61, "nbf": now() - 600}),
    );
    let wrong_audience = mint(
        &key,
        &json!({"iss": ISSUER, "aud": "https://other.example",
                                            "sub": "alice", "exp": now() + 300}),
    );
    let forged = mint(&stranger, &claims("alice"));
    for _ in 0..2 {
        assert_eq!(auth.verify(&expired), Err(BearerRefusal::Expired));
        assert_eq!(
            auth.verify(&wrong_audience),
            Err(BearerRefusal::WrongAudience {
                expected: AUDIENCE.to_owned(),
                observed: "\"https://other.example\"".to_owned(),
            })
        );
        assert_eq!(
            auth.verify(&forged),
            Err(BearerRefusal::BadSignature("ed-1".to_owned()))
        );
    }
    assert_eq!(auth.verified_tokens_held(), 0);
}

#[test]
fn a_held_token_expires_when_the_full_check_would_refuse_it() {
    let key = ed_key("ed-1");
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &jwks(&[&key]), "test JWKS").unwrap();
    // Within the 60 s leeway for two more seconds: accepted now, expired soon after.
    let exp = now() - 58;
    let token = mint(
        &key,
        &json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice",
                                   "exp": exp, "nbf": now() - 600}),
    );
    assert_eq!(auth.verify(&token).unwrap().to_string(), r#"User::"alice""#);
    assert_eq!(auth.verified_tokens_held(), 1);
    while now() <= exp + 60 {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(auth.verify(&token), Err(BearerRefusal::Expired));
    assert_eq!(auth.verified_tokens_held(), 0);
}

#[test]
fn at_most_1024_tokens_are_held() {
    let key = ed_key("ed-1");
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &jwks(&[&key]), "test JWKS").unwrap();
    let exp = now() + 300;
    let tokens: Vec<String> = (0..1100)
        .map(|n| {
            mint(
                &key,
                &json!({"iss": ISSUER, "aud": AUDIENCE, "sub": format!("user-{n}"),
                               "exp": exp}),
            )
        })
        .collect();
    for (n, token) in tokens.iter().enumerate() {
        assert_eq!(
            auth.verify(token).unwrap().to_string(),
            format!("User::\"user-{n}\"")
        );
        assert_eq!(auth.verified_tokens_held(), (n + 1).min(1024));
    }
    // Every token still verifies, held or not.
    for (n, token) in tokens.iter().enumerate() {
        assert_eq!(
            auth.verify(token).unwrap().to_string(),
            format!("User::\"user-{n}\"")
        );
    }
    assert_eq!(auth.verified_tokens_held(), 1024);
}
