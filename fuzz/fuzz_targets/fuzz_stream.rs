//! Differential fuzzing of the streaming path against the tree path: for any bytes, the
//! streaming reader (`canonicalize_strict`, `canonical_digest`, `StreamReader::tool_definition`)
//! and the document path (`stream_tools_document`, `CatalogDigest::from_document`) give the
//! same canonical bytes, digests and tools as `parse_strict` + `canonicalize` (and
//! `read_tools_document` + `CatalogDigest::compute`), or the same error: same kind (pointer
//! and literal included) at the same offset.
#![no_main]

use catalog_fold::{
    CatalogDigest, ReadCatalogError, read_tools_document, stream_tools_document,
};
use jcs_digest::{
    Digest, Profile, StreamReader, StreamedTool, canonical_digest, canonicalize,
    canonicalize_strict, parse_strict,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The whole document, canonically.
    let tree = parse_strict(data);
    let canonical = tree
        .as_ref()
        .map(|value| canonicalize(value).expect("a strictly read value canonicalizes"))
        .map_err(Clone::clone);
    assert_eq!(canonicalize_strict(data), canonical);
    assert_eq!(
        canonical_digest(data),
        canonical.as_deref().map(Digest::of).map_err(Clone::clone)
    );

    // The whole document as one tool definition.
    let mut reader = StreamReader::new(data);
    let tool = reader
        .tool_definition(Profile::Trace)
        .and_then(|tool| reader.finish().map(|()| tool));
    let expected = tree.as_ref().map_err(Clone::clone).map(|value| {
        StreamedTool::from_value(value, Profile::Trace).expect("a strictly read value digests")
    });
    assert_eq!(tool, expected);

    // The whole document as a tools/list document.
    let documents = read_tools_document(data);
    let expected = documents.clone().map(|tools| {
        tools
            .iter()
            .map(|tool| StreamedTool::from_value(tool, Profile::Trace).expect("digests"))
            .collect::<Vec<_>>()
    });
    assert_eq!(stream_tools_document(data, Profile::Trace), expected);
    let expected = documents
        .map_err(ReadCatalogError::from)
        .and_then(|tools| {
            CatalogDigest::compute(&tools, Profile::Trace).map_err(ReadCatalogError::from)
        });
    assert_eq!(CatalogDigest::from_document(data, Profile::Trace), expected);
});
