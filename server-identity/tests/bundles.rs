//! Trust bundles from PEM and from SPIFFE bundle JSON; malformed inputs with exact errors.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use server_identity::{
    BundleError, CertificateProblem, SpiffeIdError, TrustBundles, roots_from_pem,
};

use crate::pki::{Ca, KeyType, TRUST_DOMAIN};

fn ca() -> Ca {
    Ca::new("corp.example", KeyType::EcdsaP256)
}

fn jwks(keys: &str) -> Vec<u8> {
    format!(r#"{{"spiffe_sequence": 7, "spiffe_refresh_hint": 300, "keys": [{keys}]}}"#)
        .into_bytes()
}

fn x509_key(der_b64: &str) -> String {
    format!(
        r#"{{"use": "x509-svid", "kty": "EC", "crv": "P-256", "x": "..", "y": "..", "x5c": ["{der_b64}"]}}"#
    )
}

const JWT_KEY: &str =
    r#"{"use": "jwt-svid", "kty": "EC", "kid": "k1", "crv": "P-256", "x": "..", "y": ".."}"#;

#[test]
fn pem_bundle_loads_and_accumulates() {
    let (first, second) = (ca(), ca());
    let mut bundles = TrustBundles::new();
    assert_eq!(bundles.add_pem(TRUST_DOMAIN, first.pem.as_bytes()), Ok(1));
    let both = format!("{}\n{}", first.pem, second.pem);
    assert_eq!(bundles.add_pem("other.example", both.as_bytes()), Ok(2));
    assert_eq!(bundles.add_pem(TRUST_DOMAIN, second.pem.as_bytes()), Ok(1));
    assert_eq!(bundles.anchors(TRUST_DOMAIN).map(<[_]>::len), Some(2));
    assert_eq!(bundles.anchors("other.example").map(<[_]>::len), Some(2));
    assert_eq!(bundles.anchors("absent.example"), None);
    assert_eq!(
        bundles.trust_domains().collect::<Vec<_>>(),
        ["corp.example", "other.example"]
    );
}

#[test]
fn pem_sections_of_other_types_are_skipped() {
    let ca = ca();
    let key = KeyType::EcdsaP256.key().serialize_pem();
    let mut bundles = TrustBundles::new();
    let mixed = format!("{key}{}", ca.pem);
    assert_eq!(bundles.add_pem(TRUST_DOMAIN, mixed.as_bytes()), Ok(1));
    assert_eq!(
        bundles.add_pem(TRUST_DOMAIN, key.as_bytes()),
        Err(BundleError::NoCertificates)
    );
}

#[test]
fn malformed_pem_is_refused_with_exact_errors() {
    let mut bundles = TrustBundles::new();
    assert_eq!(
        bundles.add_pem(TRUST_DOMAIN, b""),
        Err(BundleError::NoCertificates)
    );
    assert_eq!(
        bundles.add_pem(TRUST_DOMAIN, b"-----BEGIN CERTIFICATE-----\nMIIB\n"),
        Err(BundleError::Pem {
            detail: "missing `-----END CERTIFICATE-----`".to_owned()
        })
    );
    assert_eq!(
        bundles.add_pem(
            TRUST_DOMAIN,
            b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"
        ),
        Err(BundleError::Pem {
            detail: "invalid base64 (InvalidCharacter(33))".to_owned()
        })
    );
    // Valid base64, not a certificate.
    assert_eq!(
        bundles.add_pem(
            TRUST_DOMAIN,
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        ),
        Err(BundleError::Certificate {
            index: 0,
            problem: CertificateProblem::Malformed {
                detail: "trailing data in SignedData".to_owned()
            }
        })
    );
    assert_eq!(
        bundles.trust_domains().count(),
        0,
        "nothing is added on error"
    );
    assert_eq!(
        bundles.add_pem("Corp.Example", ca().pem.as_bytes()),
        Err(BundleError::TrustDomain {
            presented: "Corp.Example".to_owned(),
            reason: SpiffeIdError::TrustDomainCharacter {
                character: 'C',
                position: 0
            }
        })
    );
}

#[test]
fn spiffe_json_bundle_loads_x509_keys_and_ignores_jwt_keys() {
    let ca = ca();
    let der = STANDARD.encode(&ca.cert);
    let mut bundles = TrustBundles::new();
    let document = jwks(&format!("{JWT_KEY}, {}", x509_key(&der)));
    assert_eq!(bundles.add_spiffe_json(TRUST_DOMAIN, &document), Ok(1));
    assert_eq!(bundles.anchors(TRUST_DOMAIN).map(<[_]>::len), Some(1));
}

#[test]
fn malformed_spiffe_json_is_refused_with_exact_errors() {
    let der = STANDARD.encode(&ca().cert);
    let load = |document: &[u8]| TrustBundles::new().add_spiffe_json(TRUST_DOMAIN, document);
    assert_eq!(
        load(b"{"),
        Err(BundleError::Json {
            detail: "EOF while parsing an object at line 1 column 1".to_owned()
        })
    );
    assert_eq!(load(b"[]"), Err(BundleError::NoKeysArray));
    assert_eq!(load(br#"{"keys": {}}"#), Err(BundleError::NoKeysArray));
    assert_eq!(load(&jwks("")), Err(BundleError::NoX509SvidKey));
    assert_eq!(load(&jwks(JWT_KEY)), Err(BundleError::NoX509SvidKey));
    assert_eq!(
        load(&jwks(r#"{"kty": "EC"}"#)),
        Err(BundleError::KeyWithoutUse { index: 0 })
    );
    assert_eq!(
        load(&jwks(&format!(r#"{JWT_KEY}, {{"use": "x509-svid"}}"#))),
        Err(BundleError::X5cMissing { index: 1 })
    );
    assert_eq!(
        load(&jwks(&format!(
            r#"{{"use": "x509-svid", "x5c": ["{der}", "{der}"]}}"#
        ))),
        Err(BundleError::X5cCount {
            index: 0,
            presented: 2
        })
    );
    assert_eq!(
        load(&jwks(r#"{"use": "x509-svid", "x5c": []}"#)),
        Err(BundleError::X5cCount {
            index: 0,
            presented: 0
        })
    );
    assert_eq!(
        load(&jwks(r#"{"use": "x509-svid", "x5c": [1]}"#)),
        Err(BundleError::X5cNotString { index: 0 })
    );
    assert_eq!(
        load(&jwks(&x509_key("not base64!"))),
        Err(BundleError::X5cBase64 {
            index: 0,
            detail: "Invalid symbol 32, offset 3.".to_owned()
        })
    );
    assert_eq!(
        load(&jwks(&x509_key("AAAA"))),
        Err(BundleError::Certificate {
            index: 0,
            problem: CertificateProblem::Malformed {
                detail: "trailing data in SignedData".to_owned()
            }
        })
    );
}

#[test]
fn roots_from_pem_is_strict() {
    let (first, second) = (ca(), ca());
    let roots = roots_from_pem(format!("{}{}", first.pem, second.pem).as_bytes()).unwrap();
    assert_eq!(roots.len(), 2);
    assert_eq!(
        roots_from_pem(b"").unwrap_err(),
        BundleError::NoCertificates
    );
}
