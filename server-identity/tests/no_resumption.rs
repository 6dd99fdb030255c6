//! Every connection made with `client_config` is a full handshake, even against a server that
//! issues session tickets, and a server that changes its key while keeping its ticket keys is
//! refused on the next connection (docs/design.md §3 "Every connection is a full handshake").
//!
//! Regression: `client_config` used to keep rustls' default `Resumption`; a resumed handshake
//! presents no certificate, so the pinning verifier never ran on nine connections out of ten.

use std::sync::Arc;

use rustls::client::Resumption;
use rustls::server::{ProducesTickets, ServerSessionMemoryCache};
use rustls::{HandshakeKind, RootCertStore, ServerConfig, SupportedProtocolVersion};
use rustls_pki_types::ServerName;
use server_identity::{IdentityError, RotationMode, ServerAnchors, TrustBundles, client_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::loopback::VERSIONS;
use crate::pki::{Ca, HOST, KeyType, ServerCert, server_cert, spki_sha256};

/// A server configured as TLS servers ship: stateless tickets (TLS 1.3 and 1.2) and a session
/// cache for session IDs, both shared by every configuration built with the same `resumption`.
struct Resumable {
    ticketer: Arc<dyn ProducesTickets>,
    cache: Arc<ServerSessionMemoryCache>,
}

impl Resumable {
    fn new() -> Resumable {
        Resumable {
            ticketer: rustls::crypto::ring::Ticketer::new().unwrap(),
            cache: ServerSessionMemoryCache::new(256),
        }
    }

    fn config(
        &self,
        cert: &ServerCert,
        version: &'static SupportedProtocolVersion,
    ) -> Arc<ServerConfig> {
        let mut config =
            ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_protocol_versions(&[version])
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(cert.chain.clone(), cert.private_key())
                .unwrap();
        config.ticketer = self.ticketer.clone();
        config.session_storage = self.cache.clone();
        config.send_tls13_tickets = 2;
        Arc::new(config)
    }
}

/// Accepts one connection, reads the client's request, answers and closes (as an upstream that
/// sends `Connection: close` does). Returns how the server saw the handshake.
async fn serve_once(listener: &TcpListener, config: Arc<ServerConfig>) -> Option<HandshakeKind> {
    let (tcp, _) = listener.accept().await.unwrap();
    let mut tls = tokio_rustls::TlsAcceptor::from(config)
        .accept(tcp)
        .await
        .ok()?;
    let mut request = [0u8; 4];
    tls.read_exact(&mut request).await.ok()?;
    tls.write_all(b"pong").await.ok()?;
    tls.shutdown().await.ok()?;
    tls.get_ref().1.handshake_kind()
}

/// One client connection: handshake, a 4-byte request, the 4-byte answer (which also carries
/// the TLS 1.3 tickets to the client).
async fn call(
    port: u16,
    client: &Arc<rustls::ClientConfig>,
) -> Result<HandshakeKind, IdentityError> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let name = ServerName::try_from(HOST).unwrap();
    match tokio_rustls::TlsConnector::from(client.clone())
        .connect(name, tcp)
        .await
    {
        Ok(mut tls) => {
            tls.write_all(b"ping").await.unwrap();
            let mut answer = Vec::new();
            let _ = tls.read_to_end(&mut answer).await;
            assert_eq!(answer, b"pong");
            Ok(tls.get_ref().1.handshake_kind().unwrap())
        }
        Err(error) => Err(IdentityError::from_io_error(&error)
            .unwrap_or_else(|| panic!("handshake failed without an identity reason: {error}"))
            .clone()),
    }
}

fn key_pinned_to(key: &rcgen::KeyPair, ca: &Ca) -> (ServerAnchors, Arc<RootCertStore>) {
    let anchors = ServerAnchors::builder()
        .fingerprint(spki_sha256(key))
        .rotation_mode(RotationMode::KeyPinned)
        .build()
        .unwrap();
    let mut roots = RootCertStore::empty();
    roots.add(ca.cert.clone()).unwrap();
    (anchors, Arc::new(roots))
}

const CONNECTIONS: usize = 10;

#[tokio::test]
async fn every_connection_is_a_full_handshake_against_a_ticket_issuing_server() {
    let ca = Ca::new("resumption CA", KeyType::EcdsaP256);
    let key = KeyType::EcdsaP256.key();
    let cert = server_cert(&ca, &key, 1);
    let (anchors, roots) = key_pinned_to(&key, &ca);
    let ours = client_config(&anchors, roots.clone(), &TrustBundles::new()).unwrap();
    for version in VERSIONS {
        let server = Resumable::new();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();

        // The control: a client that keeps rustls' default resumption does resume here, so
        // this server would let a resumed handshake skip the verifier.
        let mut stock = (*ours).clone();
        stock.resumption = Resumption::default();
        let stock = Arc::new(stock);
        let mut stock_kinds = Vec::new();
        for _ in 0..2 {
            let (served, called) = tokio::join!(
                serve_once(&listener, server.config(&cert, version)),
                call(port, &stock)
            );
            assert_eq!(served, Some(called.clone().unwrap()));
            stock_kinds.push(called.unwrap());
        }
        assert_eq!(
            stock_kinds,
            [HandshakeKind::Full, HandshakeKind::Resumed],
            "{version:?}"
        );

        let mut kinds = Vec::new();
        for _ in 0..CONNECTIONS {
            let (served, called) = tokio::join!(
                serve_once(&listener, server.config(&cert, version)),
                call(port, &ours)
            );
            assert_eq!(served, Some(called.clone().unwrap()));
            kinds.push(called.unwrap());
        }
        assert_eq!(kinds, vec![HandshakeKind::Full; CONNECTIONS], "{version:?}");
    }
}

#[tokio::test]
async fn a_key_change_behind_the_same_ticket_keys_is_refused_on_the_next_connection() {
    let ca = Ca::new("resumption CA", KeyType::EcdsaP256);
    let pinned_key = KeyType::EcdsaP256.key();
    let pinned = server_cert(&ca, &pinned_key, 1);
    let other_key = KeyType::EcdsaP256.key();
    // Another key, certified by the same CA for the same name: only the pin tells them apart.
    let impostor = server_cert(&ca, &other_key, 2);
    let (anchors, roots) = key_pinned_to(&pinned_key, &ca);
    let ours = client_config(&anchors, roots, &TrustBundles::new()).unwrap();
    for version in VERSIONS {
        let server = Resumable::new();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (_, first) = tokio::join!(
            serve_once(&listener, server.config(&pinned, version)),
            call(port, &ours)
        );
        assert_eq!(first, Ok(HandshakeKind::Full));

        // Same ticketer and session cache, another key: a resumed handshake would be accepted.
        let (served, second) = tokio::join!(
            serve_once(&listener, server.config(&impostor, version)),
            call(port, &ours)
        );
        assert_eq!(served, None, "the server must not complete a handshake");
        assert_eq!(
            second,
            Err(IdentityError::PinMismatch {
                mode: RotationMode::KeyPinned,
                expected: spki_sha256(&pinned_key),
                backups: Vec::new(),
                presented: spki_sha256(&other_key),
            }),
            "{version:?}"
        );
    }
}
