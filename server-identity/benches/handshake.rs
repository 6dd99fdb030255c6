//! A full TLS 1.3 handshake (ECDSA P-256, no resumption): our verifier against the stock
//! `WebPkiServerVerifier`. Two groups: client and server both real rustls in one process with
//! the records carried through memory (the verifier's cost, little noise), and the same over TCP
//! on 127.0.0.1 with tokio-rustls. Run: `cargo bench -p server-identity --bench handshake`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_main};
use rcgen::{
    BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PublicKeyData, SanType,
};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::{
    ClientConfig, ClientConnection, Connection, RootCertStore, ServerConfig, ServerConnection,
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use server_identity::{
    Fingerprint, ServerAnchors, SpiffeId, TlsTrust, TrustBundles, client_config,
};

const HOST: &str = "mcp.example.test";
const SVID_ID: &str = "spiffe://corp.example/salesforce/mcp-server";

struct Pki {
    ca: CertificateDer<'static>,
    leaf: CertificateDer<'static>,
    svid: CertificateDer<'static>,
    key: KeyPair,
}

fn pki() -> Pki {
    let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign];
    let ca = ca_params.self_signed(&ca_key).unwrap().der().clone();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut leaf_params = CertificateParams::new(vec![HOST.to_owned()]).unwrap();
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf = leaf_params.signed_by(&key, &issuer).unwrap().der().clone();
    let mut svid_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    svid_params.subject_alt_names = vec![SanType::URI(SVID_ID.try_into().unwrap())];
    let svid = svid_params.signed_by(&key, &issuer).unwrap().der().clone();
    Pki {
        ca,
        leaf,
        svid,
        key,
    }
}

fn server(pki: &Pki, leaf: &CertificateDer<'static>) -> Arc<ServerConfig> {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.key.serialize_der()));
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.clone()], key)
            .unwrap();
    config.send_tls13_tickets = 0;
    Arc::new(config)
}

/// Every iteration must verify the certificate: no session resumption.
fn without_resumption(config: &ClientConfig) -> Arc<ClientConfig> {
    let mut config = config.clone();
    config.resumption = Resumption::disabled();
    Arc::new(config)
}

fn handshake(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) {
    let name = ServerName::try_from(HOST).unwrap();
    let mut client = Connection::Client(ClientConnection::new(client.clone(), name).unwrap());
    let mut server = Connection::Server(ServerConnection::new(server.clone()).unwrap());
    while client.is_handshaking() || server.is_handshaking() {
        transfer(&mut client, &mut server);
        transfer(&mut server, &mut client);
    }
}

fn transfer(from: &mut Connection, to: &mut Connection) {
    let mut records = Vec::new();
    while from.wants_write() {
        from.write_tls(&mut records).unwrap();
    }
    let mut reader = records.as_slice();
    while !reader.is_empty() {
        to.read_tls(&mut reader).unwrap();
    }
    to.process_new_packets().unwrap();
}

fn bench(c: &mut Criterion) {
    let pki = pki();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots.add(pki.ca.clone()).unwrap();
    let roots = Arc::new(roots);
    let spki = Fingerprint::of_spki(&pki.key.subject_public_key_info());
    let web_server = server(&pki, &pki.leaf);
    let svid_server = server(&pki, &pki.svid);

    let stock_verifier =
        WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .unwrap();
    let stock = without_resumption(
        &ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_webpki_verifier(stock_verifier)
            .with_no_client_auth(),
    );
    let key_pin_webpki = ServerAnchors::builder().fingerprint(spki).build().unwrap();
    let ours_webpki = without_resumption(
        &client_config(&key_pin_webpki, roots.clone(), &TrustBundles::new()).unwrap(),
    );
    let key_pin_only = ServerAnchors::builder()
        .fingerprint(spki)
        .tls_trust(TlsTrust::Pin)
        .build()
        .unwrap();
    let ours_pin = without_resumption(
        &client_config(&key_pin_only, roots.clone(), &TrustBundles::new()).unwrap(),
    );
    let mut bundles = TrustBundles::new();
    bundles.add_der("corp.example", &pki.ca).unwrap();
    let spiffe_and_pin = ServerAnchors::builder()
        .spiffe_id(SVID_ID.parse::<SpiffeId>().unwrap())
        .fingerprint(spki)
        .build()
        .unwrap();
    let ours_spiffe = without_resumption(&client_config(&spiffe_and_pin, roots, &bundles).unwrap());

    let mut group = c.benchmark_group("tls13_p256_full_handshake");
    group.bench_function("stock_webpki_verifier", |b| {
        b.iter(|| handshake(&stock, &web_server))
    });
    group.bench_function("ours_key_pin_and_webpki", |b| {
        b.iter(|| handshake(&ours_webpki, &web_server))
    });
    group.bench_function("ours_key_pin_only", |b| {
        b.iter(|| handshake(&ours_pin, &web_server))
    });
    group.bench_function("ours_spiffe_and_key_pin", |b| {
        b.iter(|| handshake(&ours_spiffe, &svid_server))
    });
    group.finish();

    // The same, over TCP on 127.0.0.1 with tokio-rustls (socket costs included).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let port = runtime.block_on(tcp_server(web_server));
    let mut group = c.benchmark_group("tls13_p256_tcp_loopback_handshake");
    group.bench_function("stock_webpki_verifier", |b| {
        b.iter(|| runtime.block_on(tcp_handshake(port, &stock)))
    });
    group.bench_function("ours_key_pin_and_webpki", |b| {
        b.iter(|| runtime.block_on(tcp_handshake(port, &ours_webpki)))
    });
    group.finish();
}

/// Accepts connections forever, completing each handshake on its own task.
async fn tcp_server(config: Arc<ServerConfig>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(tcp).await;
            });
        }
    });
    port
}

async fn tcp_handshake(port: u16, client: &Arc<ClientConfig>) {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let name = ServerName::try_from(HOST).unwrap();
    tokio_rustls::TlsConnector::from(client.clone())
        .connect(name, tcp)
        .await
        .unwrap();
}

// criterion_group! generates an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;

criterion_main!(benches);
