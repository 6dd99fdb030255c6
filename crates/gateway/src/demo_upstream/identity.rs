//! The demo upstream's certificates: a private CA and a leaf for `127.0.0.1` and `localhost`,
//! generated with rcgen. A second identity is the impostor: same names, another key.

use std::sync::Arc;

use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use server_identity::Fingerprint;

use super::DemoUpstreamError;

/// A generated CA and leaf certificate with its private key.
#[derive(Clone)]
pub struct DemoIdentity {
    ca_pem: String,
    ca_der: CertificateDer<'static>,
    leaf_pem: String,
    leaf_der: CertificateDer<'static>,
    leaf_key_pkcs8: Arc<Vec<u8>>,
    leaf_key_pem: String,
    spki_der: Vec<u8>,
}

impl std::fmt::Debug for DemoIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoIdentity")
            .field("spki_sha256", &self.spki_fingerprint())
            .finish_non_exhaustive()
    }
}

fn generation_error(error: rcgen::Error) -> DemoUpstreamError {
    DemoUpstreamError::Certificate {
        detail: error.to_string(),
    }
}

impl DemoIdentity {
    /// A new CA (`toolgate demo CA`) and a leaf signed by it with the subject alternative names
    /// `IP:127.0.0.1` and `DNS:localhost`, each with a fresh ECDSA P-256 key.
    ///
    /// # Errors
    ///
    /// [`DemoUpstreamError::Certificate`] if rcgen fails.
    pub fn generate() -> Result<DemoIdentity, DemoUpstreamError> {
        let ca_key = rcgen::KeyPair::generate().map_err(generation_error)?;
        let mut ca_params =
            rcgen::CertificateParams::new(Vec::<String>::new()).map_err(generation_error)?;
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "toolgate demo CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let ca_certificate = ca_params.self_signed(&ca_key).map_err(generation_error)?;
        let issuer = rcgen::Issuer::new(ca_params, ca_key);

        let leaf_key = rcgen::KeyPair::generate().map_err(generation_error)?;
        let mut leaf_params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .map_err(generation_error)?;
        leaf_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "toolgate demo upstream");
        leaf_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_certificate = leaf_params
            .signed_by(&leaf_key, &issuer)
            .map_err(generation_error)?;

        Ok(DemoIdentity {
            ca_pem: ca_certificate.pem(),
            ca_der: ca_certificate.der().clone(),
            leaf_pem: leaf_certificate.pem(),
            leaf_der: leaf_certificate.der().clone(),
            leaf_key_pkcs8: Arc::new(leaf_key.serialize_der()),
            leaf_key_pem: leaf_key.serialize_pem(),
            spki_der: rcgen::PublicKeyData::subject_public_key_info(&leaf_key),
        })
    }

    /// The key-pinned fingerprint (SHA-256 of the leaf's SubjectPublicKeyInfo).
    pub fn spki_fingerprint(&self) -> Fingerprint {
        Fingerprint::of_spki(&self.spki_der)
    }

    /// The cert-pinned fingerprint (SHA-256 of the leaf certificate).
    pub fn cert_fingerprint(&self) -> Fingerprint {
        Fingerprint::of_certificate(&self.leaf_der)
    }

    /// The CA certificate, PEM (a trust root for `tls_trust: webpki`).
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The CA certificate, DER.
    pub fn ca_der(&self) -> &CertificateDer<'static> {
        &self.ca_der
    }

    /// The leaf certificate, PEM.
    pub fn leaf_pem(&self) -> &str {
        &self.leaf_pem
    }

    /// The leaf certificate, DER.
    pub fn leaf_der(&self) -> &CertificateDer<'static> {
        &self.leaf_der
    }

    /// The leaf's private key, PKCS#8 PEM (for serving the same identity from another program,
    /// such as the FastMCP interop upstream).
    pub fn leaf_key_pem(&self) -> &str {
        &self.leaf_key_pem
    }

    /// A rustls server configuration presenting the leaf and the CA, ALPN `http/1.1`.
    pub(super) fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, DemoUpstreamError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            self.leaf_key_pkcs8.as_ref().clone(),
        ));
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| DemoUpstreamError::Certificate {
                detail: error.to_string(),
            })?
            .with_no_client_auth()
            .with_single_cert(vec![self.leaf_der.clone(), self.ca_der.clone()], key)
            .map_err(|error| DemoUpstreamError::Certificate {
                detail: error.to_string(),
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}
