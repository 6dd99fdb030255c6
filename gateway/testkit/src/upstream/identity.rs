//! The demo upstream's certificates: a private CA and a leaf for `127.0.0.1` and `localhost`,
//! generated with rcgen. A second identity is the impostor: same names, another key.
//!
//! [`DemoIdentity::svid`] makes an X.509 SVID instead (docs/design.md §3, X509-SVID §2–4): a trust
//! domain CA and a leaf whose only subject alternative name is the URI `spiffe://…`, not a CA,
//! without keyCertSign or cRLSign. [`DemoIdentity::issue_svid`] signs another SVID with the same
//! CA (another workload of the same trust domain).

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
    ca: Arc<DemoCa>,
    spiffe_id: Option<String>,
}

/// The CA's parameters and key, kept so that more leaves can be signed by the same CA.
struct DemoCa {
    params: rcgen::CertificateParams,
    key: rcgen::KeyPair,
}

impl DemoCa {
    /// A self-signed CA named `common_name`; returns it with its certificate.
    fn generate(common_name: &str) -> Result<(DemoCa, rcgen::Certificate), DemoUpstreamError> {
        let key = rcgen::KeyPair::generate().map_err(generation_error)?;
        let mut params =
            rcgen::CertificateParams::new(Vec::<String>::new()).map_err(generation_error)?;
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let certificate = params.self_signed(&key).map_err(generation_error)?;
        Ok((DemoCa { params, key }, certificate))
    }
}

impl std::fmt::Debug for DemoIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoIdentity")
            .field("spki_sha256", &self.spki_fingerprint())
            .finish_non_exhaustive()
    }
}

/// The parameters of an X.509 SVID leaf for `spiffe_id` (X509-SVID §2 and §4).
fn svid_params(spiffe_id: &str) -> Result<rcgen::CertificateParams, DemoUpstreamError> {
    let uri = rcgen::string::Ia5String::try_from(spiffe_id).map_err(generation_error)?;
    let mut params =
        rcgen::CertificateParams::new(Vec::<String>::new()).map_err(generation_error)?;
    params.subject_alt_names = vec![rcgen::SanType::URI(uri)];
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "toolgate demo SVID");
    params.is_ca = rcgen::IsCa::ExplicitNoCa;
    params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![
        rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    ];
    Ok(params)
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
        let (ca, ca_certificate) = DemoCa::generate("toolgate demo CA")?;
        let mut leaf_params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .map_err(generation_error)?;
        leaf_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "toolgate demo upstream");
        leaf_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        DemoIdentity::issue(
            Arc::new(ca),
            ca_certificate.pem(),
            ca_certificate.der().clone(),
            &leaf_params,
            None,
        )
    }

    /// A new trust-domain CA and an X.509 SVID for `spiffe_id` signed by it, each with a fresh
    /// ECDSA P-256 key. The leaf's only subject alternative name is the URI `spiffe_id` (no DNS
    /// name, no IP address: SVIDs carry none, and a gateway pinning a SPIFFE ID checks no host
    /// name); it is not a CA, its key usage is digitalSignature only, its extended key usages
    /// serverAuth and clientAuth. [`ca_pem`](Self::ca_pem) is the trust domain's X.509 bundle
    /// (`toolgate serve --spiffe-bundle DOMAIN=FILE`, `TrustBundles::add_pem`).
    ///
    /// `spiffe_id` is not checked against the SPIFFE ID rules, so tests can present a malformed
    /// one; it must only be a valid URI text (IA5).
    ///
    /// # Errors
    ///
    /// [`DemoUpstreamError::Certificate`] if rcgen fails or `spiffe_id` is not IA5 text.
    pub fn svid(spiffe_id: &str) -> Result<DemoIdentity, DemoUpstreamError> {
        let (ca, ca_certificate) = DemoCa::generate("toolgate demo SPIFFE trust domain CA")?;
        DemoIdentity::issue(
            Arc::new(ca),
            ca_certificate.pem(),
            ca_certificate.der().clone(),
            &svid_params(spiffe_id)?,
            Some(spiffe_id.to_owned()),
        )
    }

    /// Another X.509 SVID, for `spiffe_id`, signed by this identity's CA (so it validates to
    /// the same bundle, [`ca_pem`](Self::ca_pem)), with a fresh key. Made like
    /// [`svid`](Self::svid).
    ///
    /// # Errors
    ///
    /// [`DemoUpstreamError::Certificate`] if rcgen fails or `spiffe_id` is not IA5 text.
    pub fn issue_svid(&self, spiffe_id: &str) -> Result<DemoIdentity, DemoUpstreamError> {
        DemoIdentity::issue(
            self.ca.clone(),
            self.ca_pem.clone(),
            self.ca_der.clone(),
            &svid_params(spiffe_id)?,
            Some(spiffe_id.to_owned()),
        )
    }

    /// A leaf made from `leaf_params` with a fresh key, signed by `ca`.
    fn issue(
        ca: Arc<DemoCa>,
        ca_pem: String,
        ca_der: CertificateDer<'static>,
        leaf_params: &rcgen::CertificateParams,
        spiffe_id: Option<String>,
    ) -> Result<DemoIdentity, DemoUpstreamError> {
        let issuer = rcgen::Issuer::from_params(&ca.params, &ca.key);
        let leaf_key = rcgen::KeyPair::generate().map_err(generation_error)?;
        let leaf_certificate = leaf_params
            .signed_by(&leaf_key, &issuer)
            .map_err(generation_error)?;
        Ok(DemoIdentity {
            ca_pem,
            ca_der,
            leaf_pem: leaf_certificate.pem(),
            leaf_der: leaf_certificate.der().clone(),
            leaf_key_pkcs8: Arc::new(leaf_key.serialize_der()),
            leaf_key_pem: leaf_key.serialize_pem(),
            spki_der: rcgen::PublicKeyData::subject_public_key_info(&leaf_key),
            ca,
            spiffe_id,
        })
    }

    /// The SPIFFE ID of an identity made by [`svid`](Self::svid) or
    /// [`issue_svid`](Self::issue_svid); `None` for [`generate`](Self::generate).
    pub fn spiffe_id(&self) -> Option<&str> {
        self.spiffe_id.as_deref()
    }

    /// The key-pinned fingerprint (SHA-256 of the leaf's SubjectPublicKeyInfo).
    pub fn spki_fingerprint(&self) -> Fingerprint {
        Fingerprint::of_spki(&self.spki_der)
    }

    /// The cert-pinned fingerprint (SHA-256 of the leaf certificate).
    pub fn cert_fingerprint(&self) -> Fingerprint {
        Fingerprint::of_certificate(&self.leaf_der)
    }

    /// The CA certificate, PEM: a trust root for `tls_trust: webpki`, or, for an SVID, the
    /// trust domain's X.509 bundle.
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

    /// A rustls server configuration presenting the leaf and the CA, ALPN `http/1.1` (the demo
    /// upstream adds `h2` when configured to serve it).
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
