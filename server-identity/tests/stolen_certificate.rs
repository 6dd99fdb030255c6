//! The pinned certificate replayed by a server that does not hold its private key: every
//! certificate check passes, and the handshake signature (verified through the provider, never
//! stubbed) is what refuses it. Over TLS 1.3 and 1.2, P-256 and Ed25519.

use std::sync::Arc;

use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use server_identity::{
    IdentityError, RotationMode, ServerAnchors, TlsTrust, TrustBundles, client_config,
};
use tokio::io::AsyncWriteExt;

use crate::loopback::{REQUEST, VERSIONS, spawn_server};
use crate::pki::{Ca, HOST, KeyType, server_cert, spki_sha256};

/// A server presenting `chain` but signing with `key_der`, which does not match it.
fn replaying_server(
    chain: Vec<rustls_pki_types::CertificateDer<'static>>,
    key_der: Vec<u8>,
    version: &'static SupportedProtocolVersion,
) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = provider
        .key_provider
        .load_private_key(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der)))
        .unwrap();
    let resolver = SingleCertAndKey::from(CertifiedKey::new(chain, key));
    let config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[version])
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    Arc::new(config)
}

#[tokio::test]
async fn pinned_certificate_without_its_key_is_refused_by_the_handshake_signature() {
    for key_type in KeyType::ALL {
        for version in VERSIONS {
            let ca = Ca::new("web ca", key_type);
            let (real_key, thief_key) = (key_type.key(), key_type.key());
            let real = server_cert(&ca, &real_key, 1);
            let mut roots = RootCertStore::empty();
            roots.add(ca.cert.clone()).unwrap();
            for anchors in [
                ServerAnchors::builder()
                    .fingerprint(spki_sha256(&real_key))
                    .build()
                    .unwrap(),
                ServerAnchors::builder()
                    .fingerprint(real.cert_sha256())
                    .rotation_mode(RotationMode::CertPinned)
                    .tls_trust(TlsTrust::Pin)
                    .build()
                    .unwrap(),
            ] {
                let config =
                    client_config(&anchors, Arc::new(roots.clone()), &TrustBundles::new()).unwrap();
                let server =
                    replaying_server(real.chain.clone(), thief_key.serialize_der(), version);
                let (port, task) = spawn_server(server).await;
                let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                let name = ServerName::try_from(HOST).unwrap();
                let error = match tokio_rustls::TlsConnector::from(config)
                    .connect(name, tcp)
                    .await
                {
                    Ok(mut tls) => {
                        tls.write_all(REQUEST).await.unwrap();
                        panic!("a server without the pinned key was accepted");
                    }
                    Err(error) => error,
                };
                let tls_error = error
                    .get_ref()
                    .and_then(|e| e.downcast_ref::<rustls::Error>());
                assert_eq!(
                    tls_error,
                    Some(&rustls::Error::InvalidCertificate(
                        rustls::CertificateError::BadSignature
                    )),
                    "{key_type:?} {version:?}"
                );
                assert_eq!(IdentityError::from_io_error(&error), None);
                let (plaintext_bytes, _server_error) = task.await.unwrap();
                assert_eq!(plaintext_bytes, 0);
            }
        }
    }
}
