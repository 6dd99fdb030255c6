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

/// `read_tools_document(bytes)` (the tree path), after asserting that the streaming path
/// agrees under every profile: `stream_tools_document` gives the tree's tools digested one by
/// one (or the same `DocumentError`), and `CatalogDigest::from_document` the result of
/// `CatalogDigest::compute` on them (or the same error).
#[track_caller]
pub fn read_both(bytes: &[u8]) -> Result<Vec<serde_json::Value>, catalog_fold::DocumentError> {
    use catalog_fold::{
        CatalogDigest, Chunked, ReadCatalogError, read_tools_document, stream_tools_document,
    };
    use jcs_digest::{Profile, StreamedTool};

    let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    let tree = read_tools_document(bytes);
    for profile in Profile::ALL {
        let expected = tree.clone().map(|tools| {
            tools
                .iter()
                .map(|tool| StreamedTool::from_value(tool, profile).unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(stream_tools_document(bytes, profile), expected, "{shown}");
        let expected = tree
            .clone()
            .map_err(ReadCatalogError::from)
            .and_then(|tools| {
                CatalogDigest::compute(&tools, profile).map_err(ReadCatalogError::from)
            });
        assert_eq!(
            CatalogDigest::from_document(bytes, profile),
            expected,
            "{shown}"
        );
        for chunk in CHUNKS {
            let chunked = chunked(bytes, profile, chunk);
            match &expected {
                // A document the chunked path takes gives the same digests; any other it
                // leaves to the in-memory path.
                Ok(digest) => assert!(
                    chunked == Chunked::Digest(digest.clone()) || chunked == Chunked::WholeDocument,
                    "chunk {chunk}: {chunked:?} for {shown}"
                ),
                Err(_) => assert_eq!(chunked, Chunked::WholeDocument, "chunk {chunk}: {shown}"),
            }
        }
    }
    tree
}

/// Window sizes for `digest_in_chunks`: a byte at a time, a few bytes (every element cut at
/// some place, and the array read in two parts), and more than most test documents.
pub const CHUNKS: [usize; 4] = [1, 3, 16, 4096];

/// `digest_in_chunks` over bytes in memory.
pub fn chunked(bytes: &[u8], profile: jcs_digest::Profile, chunk: usize) -> catalog_fold::Chunked {
    catalog_fold::digest_in_chunks(bytes, bytes.len() as u64, profile, chunk).unwrap()
}
