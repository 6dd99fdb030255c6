//! Doors that weaken verification, named so every use can be found with grep.
//!
//! Nothing here is used by [`client_config`](crate::client_config).

use std::sync::{Arc, Mutex, PoisonError};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

/// A verifier that **accepts any certificate chain** and records it, for looking at what a
/// server presents (`toolgate identity`, then [`Observation::of_chain`](crate::Observation::of_chain)).
///
/// It still verifies the handshake signatures with the presented leaf's key through the ring
/// provider, so what it records is a chain whose key the server holds. It must never guard a
/// connection that carries data.
#[derive(Debug)]
pub struct ObservingVerifier {
    provider: Arc<CryptoProvider>,
    presented: Mutex<Option<Vec<CertificateDer<'static>>>>,
}

impl ObservingVerifier {
    /// A verifier that has recorded nothing yet.
    pub fn new() -> ObservingVerifier {
        ObservingVerifier {
            provider: Arc::new(rustls::crypto::ring::default_provider()),
            presented: Mutex::new(None),
        }
    }

    /// The last chain presented (leaf first), if a server presented one.
    pub fn presented_chain(&self) -> Option<Vec<CertificateDer<'static>>> {
        self.presented
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A client configuration (TLS 1.3 and 1.2, ALPN `h2`, `http/1.1`) using this verifier,
    /// without session resumption: a resumed handshake presents no certificate to record.
    pub fn client_config(self: &Arc<Self>) -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
        let mut config = rustls::ClientConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()?
            .dangerous()
            .with_custom_certificate_verifier(self.clone())
            .with_no_client_auth();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        config.resumption = rustls::client::Resumption::disabled();
        Ok(Arc::new(config))
    }
}

impl Default for ObservingVerifier {
    fn default() -> ObservingVerifier {
        ObservingVerifier::new()
    }
}

impl ServerCertVerifier for ObservingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chain = std::iter::once(end_entity)
            .chain(intermediates)
            .map(|cert| cert.clone().into_owned())
            .collect();
        *self
            .presented
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(chain);
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
