//! Certificates for the tests, generated with rcgen: CAs, server leaves, SVIDs.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use server_identity::Fingerprint;

/// The host name the servers are reached under.
pub const HOST: &str = "mcp.example.test";
/// The pinned workload.
pub const SVID_ID: &str = "spiffe://corp.example/salesforce/mcp-server";
/// Its trust domain.
pub const TRUST_DOMAIN: &str = "corp.example";

/// The key types every handshake row runs over.
#[derive(Debug, Clone, Copy)]
pub enum KeyType {
    EcdsaP256,
    Ed25519,
    Rsa2048,
}

/// RSA keys cannot be generated with ring, so the RSA rows sign with eight 2048-bit keys made
/// once for these tests (`openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`).
const RSA_KEYS: [&str; 8] = [
    include_str!("fixtures/rsa/key-1.pem"),
    include_str!("fixtures/rsa/key-2.pem"),
    include_str!("fixtures/rsa/key-3.pem"),
    include_str!("fixtures/rsa/key-4.pem"),
    include_str!("fixtures/rsa/key-5.pem"),
    include_str!("fixtures/rsa/key-6.pem"),
    include_str!("fixtures/rsa/key-7.pem"),
    include_str!("fixtures/rsa/key-8.pem"),
];

thread_local! {
    // Each test runs on its own thread, and one row uses at most five keys per variant, so
    // consecutive keys from this rotation are always distinct within a row, as generated
    // ones would be.
    static NEXT_RSA_KEY: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl KeyType {
    pub const ALL: [KeyType; 3] = [KeyType::EcdsaP256, KeyType::Ed25519, KeyType::Rsa2048];

    pub fn key(self) -> KeyPair {
        match self {
            KeyType::EcdsaP256 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap(),
            KeyType::Ed25519 => KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap(),
            KeyType::Rsa2048 => {
                let index = NEXT_RSA_KEY.with(|next| {
                    let index = next.get();
                    next.set((index + 1) % RSA_KEYS.len());
                    index
                });
                KeyPair::from_pem_and_sign_algo(RSA_KEYS[index], &rcgen::PKCS_RSA_SHA256).unwrap()
            }
        }
    }
}

/// A certificate authority (a web PKI CA or a SPIFFE trust domain's signing CA).
pub struct Ca {
    pub cert: CertificateDer<'static>,
    pub pem: String,
    params: CertificateParams,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    pub fn new(name: &str, key_type: KeyType) -> Ca {
        let key = key_type.key();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).unwrap();
        Ca {
            cert: cert.der().clone(),
            pem: cert.pem(),
            params: params.clone(),
            issuer: Issuer::new(params, key),
        }
    }

    /// This CA's parameters, to have it certified by another CA (an intermediate).
    pub fn params(&self) -> CertificateParams {
        self.params.clone()
    }

    /// A root store holding only this CA.
    pub fn roots(&self) -> std::sync::Arc<rustls::RootCertStore> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.cert.clone()).unwrap();
        std::sync::Arc::new(roots)
    }

    pub fn key(&self) -> &KeyPair {
        self.issuer.key()
    }

    /// Signs `params` for `key`.
    pub fn issue(&self, params: &CertificateParams, key: &KeyPair) -> CertificateDer<'static> {
        params.signed_by(key, &self.issuer).unwrap().der().clone()
    }
}

/// A server's certificate chain and private key.
pub struct ServerCert {
    pub chain: Vec<CertificateDer<'static>>,
    pub key_der: Vec<u8>,
}

impl ServerCert {
    pub fn new(leaf: CertificateDer<'static>, key: &KeyPair) -> ServerCert {
        ServerCert {
            chain: vec![leaf],
            key_der: key.serialize_der(),
        }
    }

    pub fn private_key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()))
    }

    pub fn leaf(&self) -> &CertificateDer<'static> {
        &self.chain[0]
    }

    /// The certificate fingerprint, computed here with sha2 directly.
    pub fn cert_sha256(&self) -> Fingerprint {
        use sha2::Digest;
        Fingerprint::from_bytes(sha2::Sha256::digest(self.leaf()).into())
    }
}

/// The key fingerprint, from rcgen's own SPKI encoding (independent of our x509 parsing).
pub fn spki_sha256(key: &KeyPair) -> Fingerprint {
    use rcgen::PublicKeyData;
    use sha2::Digest;
    Fingerprint::from_bytes(sha2::Sha256::digest(key.subject_public_key_info()).into())
}

/// A TLS server leaf for `names`, serial `serial` (renewals differ in serial).
pub fn server_params(names: &[&str], serial: u64) -> CertificateParams {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = CertificateParams::new(names).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "mcp server");
    params.serial_number = Some(serial.into());
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params
}

/// An X509-SVID leaf carrying the given URI SANs.
pub fn svid_params(uris: &[&str]) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.subject_alt_names = uris
        .iter()
        .map(|u| SanType::URI((*u).try_into().unwrap()))
        .collect();
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params
}

/// A server leaf for `HOST` issued by `ca` for `key`.
pub fn server_cert(ca: &Ca, key: &KeyPair, serial: u64) -> ServerCert {
    ServerCert::new(ca.issue(&server_params(&[HOST], serial), key), key)
}
