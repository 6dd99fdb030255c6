//! Token signing keys generated on the spot (RSA by `openssl genpkey`, EC P-256 and Ed25519 by
//! rcgen), their public JWKs, and tokens minted with them. Shared by the integration tests and
//! the token bench (`benches/token.rs` includes this file), so that both mint the same way.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// A signing key and its public JWK.
pub struct TestKey {
    pub kid: String,
    pub algorithm: Algorithm,
    pub encoding: EncodingKey,
    pub jwk: Value,
}

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn ec_key(kid: &str) -> TestKey {
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let raw = pair.public_key_raw();
    assert_eq!((raw.len(), raw[0]), (65, 4), "an uncompressed P-256 point");
    TestKey {
        kid: kid.to_owned(),
        algorithm: Algorithm::ES256,
        encoding: EncodingKey::from_ec_der(&pair.serialize_der()),
        jwk: json!({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
                    "x": b64(&raw[1..33]), "y": b64(&raw[33..])}),
    }
}

pub fn ed_key(kid: &str) -> TestKey {
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
    TestKey {
        kid: kid.to_owned(),
        algorithm: Algorithm::EdDSA,
        encoding: EncodingKey::from_ed_der(&pair.serialize_der()),
        jwk: json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": b64(pair.public_key_raw())}),
    }
}

/// ring cannot generate RSA keys; `openssl genpkey` (a real process) does.
pub fn rsa_key(kid: &str) -> TestKey {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let pem_path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rsa-{}-{nanos}.pem", std::process::id()));
    let status = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&pem_path)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let modulus = std::process::Command::new("openssl")
        .args(["rsa", "-noout", "-modulus", "-in"])
        .arg(&pem_path)
        .output()
        .unwrap();
    let text = String::from_utf8(modulus.stdout).unwrap();
    let hex = text.trim().strip_prefix("Modulus=").unwrap();
    let n: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let pem = std::fs::read(&pem_path).unwrap();
    let _ = std::fs::remove_file(&pem_path);
    TestKey {
        kid: kid.to_owned(),
        algorithm: Algorithm::RS256,
        encoding: EncodingKey::from_rsa_pem(&pem).unwrap(),
        jwk: json!({"kty": "RSA", "kid": kid, "n": b64(&n), "e": "AQAB"}),
    }
}

/// `claims` signed by `key`, its `kid` in the header.
pub fn mint(key: &TestKey, claims: &Value) -> String {
    let mut header = Header::new(key.algorithm);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &key.encoding).unwrap()
}

/// The JWK set of `keys`.
pub fn jwks(keys: &[&TestKey]) -> Vec<u8> {
    json!({"keys": keys.iter().map(|key| key.jwk.clone()).collect::<Vec<_>>()})
        .to_string()
        .into_bytes()
}
