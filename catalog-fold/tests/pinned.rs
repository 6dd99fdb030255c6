//! The pinned catalogs against digests computed independently.
//!
//! Expected values come from this throwaway script, run with `rfc8785==0.1.4` from PyPI in a
//! venv (`python3 -m venv /tmp/rfcvenv && /tmp/rfcvenv/bin/pip install rfc8785==0.1.4`;
//! `/tmp/rfcvenv/bin/python digest.py corpus/catalogs/deepwiki-tools-list.json`):
//!
//! ```text
//! import hashlib, json, sys
//! import rfc8785
//! MEMBERS = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"]
//! def tool_digest(t, label="trace.mcp-tool-definition.v1"):
//!     r = {m: t[m] for m in MEMBERS if t.get(m) is not None}
//!     return "sha256:" + hashlib.sha256(rfc8785.dumps({"profile": label, "tool": r})).hexdigest()
//! def key(name):
//!     if not name: body = "unnamed"
//!     else:
//!         body = "".join(chr(b) if 0x21 <= b <= 0x7E and b not in (0x25, 0x3D) else "%%%02X" % b
//!                        for b in name.encode())
//!         if len(body) > 128:
//!             body = body[:96] + "~" + hashlib.sha256(name.encode()).hexdigest()[:16]
//!     return "tool:" + body
//! tools = json.load(open(sys.argv[1]))
//! lines = sorted(f"{key(t.get('name'))}={tool_digest(t)}" for t in tools)
//! for l in lines: print(l)
//! print("catalog", "sha256:" + hashlib.sha256("\n".join(lines).encode()).hexdigest())
//! ```
//!
//! The AgentAvow value is the same script with `label="agentavow.mcp-tool-definition.v1"`; the
//! drifted value appends " Always cite the page you read." to the description of
//! `ask_wiki_question` before hashing.

use catalog_fold::{CatalogDiff, CatalogDigest};
use catalog_key::ToolKey;
use jcs_digest::Profile;

use crate::support::pinned_catalog;

const DEEPWIKI_LINES: &str = "\
tool:ask_wiki_question=sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729
tool:read_wiki_contents=sha256:60d4ddd7838f28963920e8687ef644096fb38e8602cb25b8a53149fe87fc72d5
tool:read_wiki_structure=sha256:9b1330cf1cf19a6b003fc093dc0d92bdea53a47de4cf4efd17b7a0add7945c50";

const DEEPWIKI_CATALOG: &str =
    "sha256:b3d3955a3da0c0eb95a263ac53e4df2efcb0634193b7cbee92337144f4146cbd";

fn deepwiki(profile: Profile) -> CatalogDigest {
    let tools = crate::support::read_both(&pinned_catalog("deepwiki-tools-list.json")).unwrap();
    CatalogDigest::compute(&tools, profile).unwrap()
}

#[test]
fn deepwiki_catalog_recomputes() {
    let catalog = deepwiki(Profile::Trace);
    assert_eq!(catalog.fold_lines(), DEEPWIKI_LINES);
    assert_eq!(catalog.catalog().to_string(), DEEPWIKI_CATALOG);
    assert_eq!(catalog.duplicate_keys().count(), 0);
}

#[test]
fn deepwiki_catalog_under_the_agentavow_label() {
    assert_eq!(
        deepwiki(Profile::AgentAvow).catalog().to_string(),
        "sha256:9d4a7d42e2b6c025099570b6dfff977f9e58ea3fce98f727c58454e936025e84"
    );
}

#[test]
fn everything_catalog_recomputes() {
    let tools = crate::support::read_both(&pinned_catalog("everything-tools-list.json")).unwrap();
    let catalog = CatalogDigest::compute(&tools, Profile::Trace).unwrap();
    assert_eq!(catalog.tools().len(), 13);
    assert_eq!(
        catalog.catalog().to_string(),
        "sha256:08934d646ead38c8b7d04930e578cf98e3399271721c5a0765656a7d2531bdcf"
    );
    assert_eq!(
        catalog.tools()[&ToolKey::from_name("echo")].to_string(),
        "sha256:812b74b8d391296c1a0114dc7cfb3d641fb31505fe871a2f8c91ddfe6fd451e7"
    );
}

#[test]
fn wrong_subject_shares_no_key_with_the_pinned_catalog() {
    // Seed 000 §8: another server's catalog is entirely added/removed, never "changed".
    let tools = crate::support::read_both(&pinned_catalog("everything-tools-list.json")).unwrap();
    let other = CatalogDigest::compute(&tools, Profile::Trace).unwrap();
    let diff = CatalogDiff::between(&deepwiki(Profile::Trace), &other);
    assert_eq!(diff.removed().len(), 3);
    assert_eq!(diff.added().len(), 13);
    assert!(diff.changed().is_empty());
}

#[test]
fn drifted_deepwiki_changes_exactly_one_line() {
    let mut tools = crate::support::read_both(&pinned_catalog("deepwiki-tools-list.json")).unwrap();
    let ask = tools
        .iter_mut()
        .find(|tool| tool["name"] == "ask_wiki_question")
        .unwrap();
    let description = ask["description"].as_str().unwrap().to_owned();
    ask["description"] = format!("{description} Always cite the page you read.").into();
    let drifted = CatalogDigest::compute(&tools, Profile::Trace).unwrap();
    assert_eq!(
        drifted.catalog().to_string(),
        "sha256:21d462fca55b6d634d7b434f5f4fc8275bd1a23c3cde623b27bf43f057b17016"
    );

    let before = deepwiki(Profile::Trace);
    let diff = CatalogDiff::between(&before, &drifted);
    assert!(diff.added().is_empty() && diff.removed().is_empty());
    assert_eq!(diff.changed().len(), 1);
    let changed = &diff.changed()[0];
    assert_eq!(changed.key.as_str(), "tool:ask_wiki_question");
    assert_eq!(
        changed.old.to_string(),
        "sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729"
    );
    assert_eq!(
        changed.new.to_string(),
        "sha256:443d0b5ca06eaf82884cf5d58d3d0c2a82a9c366e757e4c85fdb60eac2f35862"
    );
    let before_lines = before.fold_lines();
    let after_lines = drifted.fold_lines();
    let differing: Vec<(&str, &str)> = before_lines
        .lines()
        .zip(after_lines.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(
        differing,
        [(
            "tool:ask_wiki_question=sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729",
            "tool:ask_wiki_question=sha256:443d0b5ca06eaf82884cf5d58d3d0c2a82a9c366e757e4c85fdb60eac2f35862"
        )]
    );
}
