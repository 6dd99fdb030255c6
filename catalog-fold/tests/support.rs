//! Helpers shared by the test modules.

use sha2::{Digest as _, Sha256};

/// The bytes of a pinned catalog under corpus/catalogs.
pub fn pinned_catalog(file: &str) -> Vec<u8> {
    let path = format!("{}/../corpus/catalogs/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|error| {
        panic!(
            "cannot read the pinned catalog {path}: {error}; these tests read the catalogs \
             committed under corpus/catalogs"
        )
    })
}

/// `sha256:` + lowercase hex of SHA-256 over `text`, computed with sha2 directly.
pub fn sha256_text(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}
