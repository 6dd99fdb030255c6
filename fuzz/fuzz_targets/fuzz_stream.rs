//! Differential fuzzing of the streaming path against the tree path: for any bytes, the
//! streaming reader (`canonicalize_strict`, `canonical_digest`, `StreamReader::tool_definition`)
//! and the document path (`stream_tools_document`, `CatalogDigest::from_document`) give the
//! same canonical bytes, digests and tools as `parse_strict` + `canonicalize` (and
//! `read_tools_document` + `CatalogDigest::compute`), or the same error: same kind (pointer
//! and literal included) at the same offset. The chunked document path (`digest_in_chunks`)
//! gives the same digests or leaves the document to the in-memory path, and always leaves it
//! a document the in-memory path refuses.
//!
//! Built by cargo-fuzz (`--cfg fuzzing`), `StreamReader::tool_definitions` reads every array
//! that has a guessed middle in two halves on two threads, however small (its threshold is a
//! megabyte otherwise), so the two-halves path is compared here with the one-thread path
//! (`tool_definition` element by element) and with the tree path, and so is the gateway's
//! `ToolsPage::read` (which uses it) with `ToolsPage::read_values` (the tree path).
#![no_main]

use catalog_fold::{
    CatalogDigest, Chunked, ReadCatalogError, digest_in_chunks, read_tools_document,
    stream_tools_document,
};
use jcs_digest::{
    Digest, Profile, StreamReader, StreamedTool, canonical_digest, canonicalize,
    canonicalize_strict, parse_strict,
};
use libfuzzer_sys::fuzz_target;
use toolgate::definition_check::ToolsPage;

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

    // The whole document as a tools array: in two halves (when it has a guessed middle) and
    // element by element on one thread, the same tools or the same error.
    let mut reader = StreamReader::new(data);
    let split = reader
        .tool_definitions(Profile::Trace)
        .and_then(|tools| reader.finish().map(|()| tools));
    let mut reader = StreamReader::new(data);
    let one_thread = reader.enter_array().and_then(|()| {
        let mut tools = Vec::new();
        while reader.next_element()? {
            tools.push(reader.tool_definition(Profile::Trace)?);
        }
        reader.finish().map(|()| tools)
    });
    assert_eq!(split, one_thread);

    // The whole document as the result of a tools/list page, read by the gateway.
    let streamed = ToolsPage::read(data)
        .map(|page| (page.len(), page.next_cursor().map(str::to_owned)));
    let mut values = Vec::new();
    let tree = ToolsPage::read_values(data, &mut values).map(|cursor| (values.len(), cursor));
    assert_eq!(streamed, tree);

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

    // The same document read a window at a time: the same digests, or left to the in-memory
    // path (always so for a document it refuses). Windows of 1, 2, 5 and 64 bytes cut every
    // element somewhere, and read arrays of a few dozen bytes in two parts.
    for chunk in [1, 2, 5, 64] {
        let chunked = digest_in_chunks(data, data.len() as u64, Profile::Trace, chunk)
            .expect("bytes in memory read without error");
        match &expected {
            Ok(digest) => assert!(
                chunked == Chunked::Digest(digest.clone()) || chunked == Chunked::WholeDocument,
                "chunk {chunk}: {chunked:?}"
            ),
            Err(_) => assert_eq!(chunked, Chunked::WholeDocument, "chunk {chunk}"),
        }
    }
});
