//! `Observation::of_chain`: what a presented chain shows, with and without roots, at a fixed
//! clock; the chain as a real loopback handshake hands it over; the errors.

use std::time::Duration;

use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use server_identity::{
    CertificateProblem, Observation, ObserveError, SpiffeId, TlsTrust, TrustBundles, UtcTimestamp,
    client_config,
};

use crate::loopback::peer_certificates;
use crate::pki::{
    Ca, HOST, KeyType, SVID_ID, ServerCert, server_cert, server_params, spki_sha256, svid_params,
};

/// 2026-06-01T00:00:00Z.
fn june_2026() -> UnixTime {
    UnixTime::since_unix_epoch(Duration::from_secs(1_780_272_000))
}

fn name(text: &str) -> ServerName<'static> {
    ServerName::try_from(text.to_owned()).unwrap()
}

/// The observation of `chain` reached as `host`, with `ca` as the only root, in June 2026.
fn observed(chain: &[CertificateDer<'static>], host: &str, ca: &Ca) -> Observation {
    Observation::of_chain(chain, &name(host), Some(&ca.roots()), june_2026()).unwrap()
}

fn time(text: &str) -> UtcTimestamp {
    text.parse().unwrap()
}

#[test]
fn observes_a_ca_valid_chain_for_an_ip_address() {
    let ca = Ca::new("web ca", KeyType::EcdsaP256);
    let key = KeyType::EcdsaP256.key();
    let mut params = server_params(&[], 1);
    params.subject_alt_names = vec![rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap())];
    let cert = ServerCert::new(ca.issue(&params, &key), &key);

    let seen = observed(&cert.chain, "127.0.0.1", &ca);
    assert_eq!(seen.spki_sha256, spki_sha256(&key));
    assert_eq!(seen.cert_sha256, cert.cert_sha256());
    assert_eq!(seen.spiffe_ids, Vec::<SpiffeId>::new());
    assert_eq!(seen.chain_valid, Some(true));
    assert_eq!(seen.chain_problem, None);
    assert_eq!(seen.not_before, time("1975-01-01T00:00:00Z"));
    assert_eq!(seen.not_after, time("4096-01-01T00:00:00Z"));
    assert_eq!(seen.not_before.to_string(), "1975-01-01T00:00:00Z");
    assert_eq!(seen.chain, cert.chain);
}

#[test]
fn reports_why_the_chain_is_not_valid_for_the_name_or_the_time() {
    let ca = Ca::new("web ca", KeyType::Ed25519);
    let key = KeyType::Ed25519.key();
    let cert = server_cert(&ca, &key, 1);
    let seen = observed(&cert.chain, "127.0.0.1", &ca);
    assert_eq!(seen.chain_valid, Some(false));
    assert_eq!(
        seen.chain_problem,
        Some(CertificateProblem::NotValidForName {
            expected: "127.0.0.1".to_owned(),
            presented: vec![HOST.to_owned()],
        })
    );

    let mut params = server_params(&[HOST], 2);
    params.not_before = rcgen::date_time_ymd(2019, 1, 1);
    params.not_after = rcgen::date_time_ymd(2020, 1, 1);
    let expired = ServerCert::new(ca.issue(&params, &key), &key);
    let seen = observed(&expired.chain, HOST, &ca);
    assert_eq!(
        seen.chain_problem,
        Some(CertificateProblem::Expired {
            now: "2026-06-01T00:00:00Z".to_owned(),
            not_after: "2020-01-01T00:00:00Z".to_owned(),
        })
    );
    assert_eq!(seen.not_after, time("2020-01-01T00:00:00Z"));
}

// The chain as a real handshake leaves it on the client connection (the gateway's
// `toolgate identity` takes it from there).
#[tokio::test]
async fn observes_an_svid_chain_from_a_handshake_without_roots() {
    let domain_ca = Ca::new("corp.example", KeyType::EcdsaP256);
    let key = KeyType::EcdsaP256.key();
    let svid = ServerCert::new(
        domain_ca.issue(
            &svid_params(&[SVID_ID, "https://not-spiffe.example/x"]),
            &key,
        ),
        &key,
    );
    // A pin-only configuration accepts this self-issued chain for the handshake.
    let anchors = server_identity::ServerAnchors::builder()
        .fingerprint(spki_sha256(&key))
        .tls_trust(TlsTrust::Pin)
        .build()
        .unwrap();
    let config = client_config(
        &anchors,
        std::sync::Arc::new(rustls::RootCertStore::empty()),
        &TrustBundles::new(),
    )
    .unwrap();
    let chain = peer_certificates(&svid, &rustls::version::TLS13, config).await;
    let seen = Observation::of_chain(&chain, &name(HOST), None, UnixTime::now()).unwrap();
    assert_eq!(seen.spiffe_ids, vec![SVID_ID.parse::<SpiffeId>().unwrap()]);
    assert_eq!(seen.chain_valid, None);
    assert_eq!(seen.chain_problem, None);
    assert_eq!(seen.chain, svid.chain);
}

#[test]
fn an_empty_or_unreadable_chain_is_an_error() {
    assert_eq!(
        Observation::of_chain(&[], &name(HOST), None, june_2026()),
        Err(ObserveError::NoCertificate)
    );
    let garbage = CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00]);
    assert_eq!(
        Observation::of_chain(&[garbage], &name(HOST), None, june_2026()),
        Err(ObserveError::Certificate {
            problem: CertificateProblem::Malformed {
                detail: "BER error: Unexpected Tag (expected: Some(Tag(16)), actual: Tag(2))"
                    .into()
            }
        })
    );
}
