//! `observe`: what a real loopback server presents, with and without roots; URL and
//! connection errors. The observed server must receive no application data.

use server_identity::{CertificateProblem, ObserveError, SpiffeId, observe};

use crate::loopback::{server_config, spawn_server};
use crate::pki::{
    Ca, HOST, KeyType, SVID_ID, ServerCert, server_cert, server_params, spki_sha256, svid_params,
};

#[tokio::test]
async fn observes_a_ca_valid_server_by_ip_address() {
    let ca = Ca::new("web ca", KeyType::EcdsaP256);
    let key = KeyType::EcdsaP256.key();
    let mut params = server_params(&[], 1);
    params.subject_alt_names = vec![rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap())];
    let cert = ServerCert::new(ca.issue(&params, &key), &key);
    let (port, server) = spawn_server(server_config(&cert, &rustls::version::TLS13)).await;

    let url = format!("https://127.0.0.1:{port}/mcp");
    let seen = observe(&url, Some(ca.roots())).await.unwrap();
    assert_eq!(seen.url, url);
    assert_eq!(seen.spki_sha256, spki_sha256(&key));
    assert_eq!(seen.cert_sha256, cert.cert_sha256());
    assert_eq!(seen.spiffe_ids, Vec::<SpiffeId>::new());
    assert_eq!(seen.chain_valid, Some(true));
    assert_eq!(seen.chain_problem, None);
    assert_eq!(seen.not_before, "1975-01-01T00:00:00Z");
    assert_eq!(seen.not_after, "4096-01-01T00:00:00Z");
    assert_eq!(&seen.leaf, cert.leaf());
    assert_eq!(seen.chain, cert.chain);
    assert_eq!(
        server.await.unwrap(),
        (0, None),
        "no application data reaches the server"
    );
}

#[tokio::test]
async fn reports_why_the_chain_is_not_valid_for_the_url() {
    let ca = Ca::new("web ca", KeyType::Ed25519);
    let key = KeyType::Ed25519.key();
    let cert = server_cert(&ca, &key, 1);
    let (port, server) = spawn_server(server_config(&cert, &rustls::version::TLS12)).await;
    let seen = observe(&format!("https://127.0.0.1:{port}"), Some(ca.roots()))
        .await
        .unwrap();
    assert_eq!(seen.chain_valid, Some(false));
    assert_eq!(
        seen.chain_problem,
        Some(CertificateProblem::NotValidForName {
            expected: "127.0.0.1".to_owned(),
            presented: vec![HOST.to_owned()],
        })
    );
    assert_eq!(server.await.unwrap(), (0, None));
}

#[tokio::test]
async fn observes_an_svid_without_roots() {
    let domain_ca = Ca::new("corp.example", KeyType::EcdsaP256);
    let key = KeyType::EcdsaP256.key();
    let svid = ServerCert::new(
        domain_ca.issue(
            &svid_params(&[SVID_ID, "https://not-spiffe.example/x"]),
            &key,
        ),
        &key,
    );
    let (port, server) = spawn_server(server_config(&svid, &rustls::version::TLS13)).await;
    let seen = observe(&format!("https://127.0.0.1:{port}/"), None)
        .await
        .unwrap();
    assert_eq!(seen.spiffe_ids, vec![SVID_ID.parse::<SpiffeId>().unwrap()]);
    assert_eq!(seen.chain_valid, None);
    assert_eq!(seen.chain_problem, None);
    assert_eq!(server.await.unwrap(), (0, None));
}

#[tokio::test]
async fn url_and_connection_errors() {
    let invalid = |url: &str, reason: &'static str| ObserveError::InvalidUrl {
        url: url.to_owned(),
        reason,
    };
    for (url, reason) in [
        ("http://127.0.0.1/mcp", "the scheme must be https"),
        ("https://", "the host is empty"),
        ("https://user@host/", "user info is not allowed"),
        ("https://host:https/", "the port is not a number"),
        ("https://[::1/", "unclosed `[` in the host"),
        (
            "https://bad_host!/",
            "the host is not a DNS name or IP address",
        ),
    ] {
        assert_eq!(observe(url, None).await.unwrap_err(), invalid(url, reason));
    }
    // A port nobody listens on.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    match observe(&format!("https://127.0.0.1:{port}/"), None).await {
        Err(ObserveError::Connect { address, .. }) => {
            assert_eq!(address, format!("127.0.0.1:{port}"))
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
}
