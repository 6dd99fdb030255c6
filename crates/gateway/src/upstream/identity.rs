//! What the upstream presented: the fingerprints of the leaf certificate the verifier accepted,
//! for the audit log (DESIGN.md §5 "recording … observed identity").

use server_identity::Fingerprint;

/// What the upstream presented on a connection the pinning verifier accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedIdentity {
    /// SHA-256 of the leaf's SubjectPublicKeyInfo (the `key-pinned` fingerprint), when the
    /// certificate could be walked to it.
    pub spki_sha256: Option<Fingerprint>,
    /// SHA-256 of the whole leaf certificate (the `cert-pinned` fingerprint).
    pub cert_sha256: Fingerprint,
}

impl ObservedIdentity {
    pub(super) fn of_leaf(leaf_der: &[u8]) -> ObservedIdentity {
        ObservedIdentity {
            spki_sha256: spki_of_certificate(leaf_der).map(Fingerprint::of_spki),
            cert_sha256: Fingerprint::of_certificate(leaf_der),
        }
    }
}

/// One DER element: its tag, the whole element, its contents, and the bytes after it.
type Tlv<'a> = (u8, &'a [u8], &'a [u8], &'a [u8]);

/// Reads one DER element (definite lengths up to four length bytes).
fn read_tlv(input: &[u8]) -> Option<Tlv<'_>> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, rest) = rest.split_at(count);
        let length = bytes
            .iter()
            .fold(0usize, |acc, &byte| (acc << 8) | usize::from(byte));
        (length, rest)
    };
    if rest.len() < length {
        return None;
    }
    let (contents, after) = rest.split_at(length);
    let header_length = input.len() - rest.len();
    let whole = input.get(..header_length + length)?;
    Some((tag, whole, contents, after))
}

/// The SubjectPublicKeyInfo DER of an X.509 certificate (RFC 5280 §4.1): the seventh element
/// of `tbsCertificate`, or the sixth when the optional `[0] version` is absent. The certificate
/// was already parsed and accepted by the verifier; this only finds the bytes to hash.
fn spki_of_certificate(certificate: &[u8]) -> Option<&[u8]> {
    const SEQUENCE: u8 = 0x30;
    let (tag, _, certificate_body, _) = read_tlv(certificate)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, _, mut tbs, _) = read_tlv(certificate_body)?;
    if tag != SEQUENCE {
        return None;
    }
    // [0] EXPLICIT version, when present.
    if tbs.first() == Some(&0xa0) {
        let (_, _, _, rest) = read_tlv(tbs)?;
        tbs = rest;
    }
    // serialNumber, signature, issuer, validity, subject.
    for _ in 0..5 {
        let (_, _, _, rest) = read_tlv(tbs)?;
        tbs = rest;
    }
    let (tag, spki, _, _) = read_tlv(tbs)?;
    (tag == SEQUENCE).then_some(spki)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_spki_found_in_the_certificate_is_the_one_rcgen_signed() {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        let certificate = params.self_signed(&key).unwrap();
        let observed = ObservedIdentity::of_leaf(certificate.der());
        assert_eq!(
            observed.spki_sha256,
            Some(Fingerprint::of_spki(
                &rcgen::PublicKeyData::subject_public_key_info(&key)
            ))
        );
        assert_eq!(
            observed.cert_sha256,
            Fingerprint::of_certificate(certificate.der())
        );
        assert_eq!(
            ObservedIdentity::of_leaf(b"\x30\x03\x02\x01").spki_sha256,
            None
        );
    }
}
