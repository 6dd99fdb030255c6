//! A real TLS server on 127.0.0.1 (tokio-rustls) and a client that connects through a given
//! `ClientConfig`, then writes a request only if the handshake succeeded.

use std::sync::Arc;

use rustls::{ServerConfig, SupportedProtocolVersion};
use rustls_pki_types::ServerName;
use server_identity::IdentityError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::pki::{HOST, ServerCert};

/// The bytes the client sends after a successful handshake.
pub const REQUEST: &[u8] = b"POST /mcp HTTP/1.1\r\n\r\n";

/// The protocol versions every handshake row runs over.
pub const VERSIONS: [&SupportedProtocolVersion; 2] =
    [&rustls::version::TLS13, &rustls::version::TLS12];

/// What happened on both sides of one connection.
#[derive(Debug)]
pub struct Outcome {
    /// The client's handshake result: `Ok` or the identity failure it carried.
    pub client: Result<(), IdentityError>,
    /// Plaintext bytes the server read from the client.
    pub server_plaintext_bytes: usize,
    /// The server's handshake error, if any.
    pub server_error: Option<rustls::Error>,
}

pub fn server_config(
    cert: &ServerCert,
    version: &'static SupportedProtocolVersion,
) -> Arc<ServerConfig> {
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[version])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(cert.chain.clone(), cert.private_key())
            .unwrap();
    Arc::new(config)
}

/// Runs a server that accepts one connection and counts the plaintext bytes it receives.
pub async fn spawn_server(
    config: Arc<ServerConfig>,
) -> (u16, tokio::task::JoinHandle<(usize, Option<rustls::Error>)>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        match tokio_rustls::TlsAcceptor::from(config).accept(tcp).await {
            Err(error) => (0, Some(tls_error(&error))),
            Ok(mut tls) => {
                let mut received = Vec::new();
                // A client that hangs up without close_notify still leaves what it sent.
                let _ = tls.read_to_end(&mut received).await;
                (received.len(), None)
            }
        }
    });
    (port, task)
}

/// One connection: `cert` served over `version`, the client using `client`, reaching the
/// server under `HOST`.
pub async fn connect(
    cert: &ServerCert,
    version: &'static SupportedProtocolVersion,
    client: Arc<rustls::ClientConfig>,
) -> Outcome {
    connect_as(cert, version, client, HOST).await
}

/// As [`connect`], under another server name.
pub async fn connect_as(
    cert: &ServerCert,
    version: &'static SupportedProtocolVersion,
    client: Arc<rustls::ClientConfig>,
    server_name: &str,
) -> Outcome {
    let (port, server) = spawn_server(server_config(cert, version)).await;
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let name = ServerName::try_from(server_name.to_owned()).unwrap();
    let client_result = match tokio_rustls::TlsConnector::from(client)
        .connect(name, tcp)
        .await
    {
        Ok(mut tls) => {
            tls.write_all(REQUEST).await.unwrap();
            tls.shutdown().await.unwrap();
            Ok(())
        }
        Err(error) => Err(IdentityError::from_io_error(&error)
            .unwrap_or_else(|| panic!("handshake failed without an identity reason: {error}"))
            .clone()),
    };
    let (server_plaintext_bytes, server_error) = server.await.unwrap();
    Outcome {
        client: client_result,
        server_plaintext_bytes,
        server_error,
    }
}

/// One accepted connection through `client`: the chain the client's connection holds
/// (`peer_certificates()`), read after the handshake, as a caller records it per request.
pub async fn peer_certificates(
    cert: &ServerCert,
    version: &'static SupportedProtocolVersion,
    client: Arc<rustls::ClientConfig>,
) -> Vec<rustls_pki_types::CertificateDer<'static>> {
    let (port, server) = spawn_server(server_config(cert, version)).await;
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let name = ServerName::try_from(HOST.to_owned()).unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(client)
        .connect(name, tcp)
        .await
        .unwrap();
    let chain = tls.get_ref().1.peer_certificates().unwrap().to_vec();
    tls.write_all(REQUEST).await.unwrap();
    tls.shutdown().await.unwrap();
    assert_eq!(server.await.unwrap(), (REQUEST.len(), None));
    chain
}

fn tls_error(error: &std::io::Error) -> rustls::Error {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .cloned()
        .unwrap_or_else(|| rustls::Error::General(error.to_string()))
}

impl Outcome {
    /// The handshake succeeded and the server read the request.
    pub fn assert_accepted(&self) {
        assert_eq!(self.client, Ok(()), "{self:?}");
        assert_eq!(self.server_error, None);
        assert_eq!(self.server_plaintext_bytes, REQUEST.len());
    }

    /// The handshake was refused with exactly `expected`, the server got the
    /// `certificate_unknown` alert and read zero bytes of application data.
    pub fn assert_refused(&self, expected: &IdentityError) {
        assert_eq!(self.client.as_ref().err(), Some(expected), "{self:?}");
        assert_eq!(self.server_plaintext_bytes, 0);
        assert_eq!(
            self.server_error,
            Some(rustls::Error::AlertReceived(
                rustls::AlertDescription::CertificateUnknown
            ))
        );
    }
}
