//! The network half of `toolgate identity`: connect to an https URL, complete a handshake that
//! trusts nothing, and hand the presented chain to `server_identity::Observation::of_chain`
//! (server-identity does no I/O; the socket lives here, docs/design.md §6).

use std::sync::Arc;
use std::time::Duration;

use catalog_store::UpstreamUrl;
use rustls_pki_types::UnixTime;
use server_identity::Observation;
use server_identity::danger::ObservingVerifier;
use server_identity::rustls::RootCertStore;
use tokio::io::AsyncWriteExt as _;

/// How long connecting, and then the handshake, may each take.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a server could not be observed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ObserveError {
    /// The TCP connection failed or timed out.
    #[error("cannot connect to {address}: {detail}; check the host name, the port and the network")]
    Connect {
        /// `host:port`.
        address: String,
        /// Why.
        detail: String,
    },
    /// The TLS handshake failed (not a trust failure: nothing is trusted here).
    #[error(
        "TLS handshake with {address} failed: {detail}; is the server speaking TLS on this port?"
    )]
    Handshake {
        /// `host:port`.
        address: String,
        /// Why.
        detail: String,
    },
    /// The presented chain cannot be read.
    #[error(transparent)]
    Chain(#[from] server_identity::ObserveError),
}

/// Connects to an `https` URL, completes a handshake through
/// [`ObservingVerifier`](server_identity::danger::ObservingVerifier) (which accepts any chain
/// but still verifies the handshake signatures) and reports what the server presented on this
/// connection. No application data is sent: close_notify only.
///
/// `roots`, when given, set [`Observation::chain_valid`] for the URL's host name.
pub(crate) async fn observe(
    url: &UpstreamUrl,
    roots: Option<Arc<RootCertStore>>,
) -> Result<Observation, ObserveError> {
    let connect_host = url.host().to_string();
    let server_name = url.server_name();
    let address = url.tls_endpoint();
    let connect_error = |detail: String| ObserveError::Connect {
        address: address.clone(),
        detail,
    };
    let tcp = tokio::time::timeout(
        STEP_TIMEOUT,
        tokio::net::TcpStream::connect((connect_host.as_str(), url.port())),
    )
    .await
    .map_err(|_| connect_error(format!("no answer in {} s", STEP_TIMEOUT.as_secs())))?
    .map_err(|error| connect_error(error.to_string()))?;

    let handshake_error = |detail: String| ObserveError::Handshake {
        address: address.clone(),
        detail,
    };
    let config = Arc::new(ObservingVerifier::new())
        .client_config()
        .map_err(|error| handshake_error(error.to_string()))?;
    let mut tls = tokio::time::timeout(
        STEP_TIMEOUT,
        tokio_rustls::TlsConnector::from(config).connect(server_name.clone(), tcp),
    )
    .await
    .map_err(|_| handshake_error(format!("no answer in {} s", STEP_TIMEOUT.as_secs())))?
    .map_err(|error| handshake_error(error.to_string()))?;
    // This connection's own chain (not a verifier's shared record of the last one).
    let chain = tls
        .get_ref()
        .1
        .peer_certificates()
        .unwrap_or_default()
        .to_vec();
    // close_notify; the server's answer does not matter.
    let _ = tls.shutdown().await;
    Observation::of_chain(&chain, &server_name, roots.as_deref(), UnixTime::now())
        .map_err(ObserveError::from)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    /// A TLS server on 127.0.0.1 for one self-signed leaf with an IP SAN; it accepts one
    /// connection and returns the plaintext bytes it read.
    async fn server() -> (u16, Vec<u8>, rcgen::KeyPair, tokio::task::JoinHandle<usize>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.subject_alt_names = vec![rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap())];
        let cert = params.self_signed(&key).unwrap();
        let leaf = cert.der().clone();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.clone()],
            rustls_pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut tls = tokio_rustls::TlsAcceptor::from(Arc::new(config))
                .accept(tcp)
                .await
                .unwrap();
            let mut received = Vec::new();
            let _ = tls.read_to_end(&mut received).await;
            received.len()
        });
        (port, leaf.to_vec(), key, task)
    }

    #[tokio::test]
    async fn observes_a_real_server_and_sends_it_nothing() {
        let (port, leaf, key, server) = server().await;
        let mut roots = RootCertStore::empty();
        roots.add(leaf.clone().into()).unwrap();
        let seen = observe(
            &format!("https://127.0.0.1:{port}/mcp").parse().unwrap(),
            Some(Arc::new(roots)),
        )
        .await
        .unwrap();
        assert_eq!(
            seen.spki_sha256,
            server_identity::Fingerprint::of_spki(&rcgen::PublicKeyData::subject_public_key_info(
                &key
            ))
        );
        assert_eq!(
            seen.cert_sha256,
            server_identity::Fingerprint::of_certificate(&leaf)
        );
        // rcgen's self-signed leaf is its own root: valid for 127.0.0.1.
        assert_eq!(seen.chain_valid, Some(true));
        assert_eq!(seen.not_before.to_string(), "1975-01-01T00:00:00Z");
        assert_eq!(seen.chain.len(), 1);
        assert_eq!(server.await.unwrap(), 0, "no application data");
    }

    #[tokio::test]
    async fn connection_errors_name_the_address() {
        // A port nobody listens on.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        match observe(&format!("https://127.0.0.1:{port}/").parse().unwrap(), None).await {
            Err(ObserveError::Connect { address, .. }) => {
                assert_eq!(address, format!("127.0.0.1:{port}"))
            }
            other => panic!("expected a connection error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_server_that_does_not_speak_tls_is_a_handshake_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            tcp.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                .await
                .unwrap();
        });
        let error = observe(&format!("https://127.0.0.1:{port}/").parse().unwrap(), None)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ObserveError::Handshake { address, .. } if *address == format!("127.0.0.1:{port}")),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("is the server speaking TLS"),
            "{error}"
        );
        server.await.unwrap();
    }
}
