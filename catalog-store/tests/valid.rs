//! Catalogs that load: both file shapes, accessors, normalization, servers.

use std::path::Path;

use catalog_store::Catalog;
use jcs_digest::Digest;
use serde_json::json;
use server_identity::{RotationMode, TlsTrust};

use crate::support::{
    FP_A, FP_A2, H1, H1_UPSTREAM_QUERY, colon_form, entry_one, entry_one_named, entry_two, load,
    load_valid, with, without,
};

#[test]
fn array_form_loads_and_looks_up_by_exact_name() {
    let catalog = load_valid(vec![entry_one(), entry_two()]);
    assert_eq!(catalog.entries().len(), 2);
    assert_eq!(catalog.catalog_version(), None);
    assert_eq!(catalog.warnings(), &[]);
    assert_eq!(
        catalog.lookup("crm.lookup").map(|e| e.tool_name()),
        Some("crm.lookup")
    );
    assert!(catalog.lookup("CRM.lookup").is_none());
    assert!(catalog.lookup("").is_none());
    let names: Vec<&str> = catalog.entries().iter().map(|e| e.tool_name()).collect();
    assert_eq!(names, ["salesforce.query", "crm.lookup"]);
}

#[test]
fn object_form_carries_the_catalog_version() {
    let document = json!({"catalog_version": "2026-06-01.1", "entries": [entry_one()]});
    let catalog = load(&document).unwrap();
    assert_eq!(catalog.catalog_version(), Some("2026-06-01.1"));
    assert_eq!(catalog.entries().len(), 1);
}

#[test]
fn an_empty_catalog_loads_and_binds_nothing() {
    let catalog = load(&json!([])).unwrap();
    assert!(catalog.entries().is_empty());
    assert!(catalog.servers().is_empty());
    let catalog = load(&json!({"entries": []})).unwrap();
    assert!(catalog.lookup("anything").is_none());
}

#[test]
fn entry_accessors_return_the_file_values_with_defaults_filled_in() {
    let catalog = load_valid(vec![entry_one(), entry_two()]);
    let one = catalog.lookup("salesforce.query").unwrap();
    assert_eq!(one.upstream_name(), "salesforce.query");
    assert_eq!(one.key().as_str(), "tool:salesforce.query");
    assert_eq!(one.definition_hash(), H1.parse::<Digest>().unwrap());
    assert_eq!(one.added_at(), "2026-06-01T00:00:00Z");
    assert_eq!(one.approved_by(), "security@example.com");
    assert_eq!(one.server().display_name(), Some("Salesforce MCP Server"));
    let server = one.server().network().unwrap();
    assert_eq!(server.display_name(), Some("Salesforce MCP Server"));
    assert_eq!(server.url().as_str(), "https://mcp.salesforce.com/mcp");
    assert_eq!(server.url().tls_endpoint(), "mcp.salesforce.com:443");
    assert_eq!(
        server.tls_fingerprint().map(ToString::to_string).as_deref(),
        Some(FP_A)
    );
    assert_eq!(server.backup_fingerprints(), &[]);
    assert_eq!(
        server.spiffe_id().map(|id| id.as_str()),
        Some("spiffe://corp.example/salesforce/mcp-server")
    );
    assert_eq!(server.rotation_mode(), RotationMode::KeyPinned);
    assert_eq!(server.tls_trust(), TlsTrust::Webpki);

    let two = catalog
        .lookup("crm.lookup")
        .unwrap()
        .server()
        .network()
        .unwrap();
    assert_eq!(two.display_name(), None);
    let two_entry = catalog.lookup("crm.lookup").unwrap();
    assert_eq!(two_entry.added_at(), "2026-06-02T09:30:00+02:00");
    assert_eq!(two_entry.added_at_utc().to_string(), "2026-06-02T07:30:00Z");
    assert_eq!(two.tls_fingerprint(), None);
    assert_eq!(two.rotation_mode(), RotationMode::KeyPinned);
}

#[test]
fn the_definition_is_normalized_to_mcp_names_with_the_upstream_name() {
    // snake_case in, MCP names out; `null` members dropped; `name` = upstream_name.
    let entry = with(entry_one(), "/upstream_name", json!("query"));
    let entry = with(entry, "/approved_definition/title", json!(null));
    let entry = with(entry, "/definition_hash", json!(H1_UPSTREAM_QUERY));
    let catalog = load_valid(vec![entry]);
    let definition = catalog
        .lookup("salesforce.query")
        .unwrap()
        .approved_definition();
    assert_eq!(
        definition,
        &json!({
            "name": "query",
            "description": "Query Salesforce records by SOQL",
            "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
            "outputSchema": {"type": "object"}
        })
    );
    // It hashes to definition_hash, as a live tools/list entry must.
    let digest =
        jcs_digest::tool_definition_digest(definition, jcs_digest::Profile::Trace).unwrap();
    assert_eq!(digest.to_string(), H1_UPSTREAM_QUERY);
}

#[test]
fn a_definition_may_carry_the_upstream_name_itself() {
    let entry = with(
        entry_one(),
        "/approved_definition/name",
        json!("salesforce.query"),
    );
    assert_eq!(load_valid(vec![entry]).entries().len(), 1);
}

#[test]
fn null_optional_members_are_absent() {
    let entry = with(entry_two(), "/server/tls_fingerprint", json!(null));
    let entry = with(entry, "/upstream_name", json!(null));
    let entry = with(entry, "/server/backup_fingerprints", json!(null));
    let catalog = load_valid(vec![entry]);
    assert_eq!(catalog.entries()[0].upstream_name(), "crm.lookup");
}

#[test]
fn server_options_are_read_and_fingerprints_canonicalized() {
    // Uppercase hex and OpenSSL's colon form are accepted and shown canonically.
    let colon_form = colon_form(FP_A2);
    let entry = with(
        entry_one(),
        "/server/tls_fingerprint",
        json!(FP_A.to_uppercase()),
    );
    let entry = with(
        entry,
        "/server/backup_fingerprints",
        json!([format!("sha256 Fingerprint={colon_form}")]),
    );
    let entry = with(entry, "/server/rotation_mode", json!("cert-pinned"));
    // `pin` trust needs a fingerprint and excludes a SPIFFE ID.
    let entry = with(
        without(entry, "/server/spiffe_id"),
        "/server/tls_trust",
        json!("pin"),
    );
    let catalog = load_valid(vec![entry]);
    let server = catalog.entries()[0].server().network().unwrap();
    assert_eq!(server.tls_fingerprint().unwrap().to_string(), FP_A);
    assert_eq!(server.backup_fingerprints()[0].to_string(), FP_A2);
    assert_eq!(server.rotation_mode(), RotationMode::CertPinned);
    assert_eq!(server.tls_trust(), TlsTrust::Pin);
}

#[test]
fn servers_group_entries_by_their_whole_binding() {
    let same_server = entry_one_named("salesforce.describe");
    // Same URL and anchors, another display name: the same upstream.
    let same_server = with(
        same_server,
        "/server/display_name",
        json!("Salesforce (again)"),
    );
    let catalog = load_valid(vec![entry_one(), entry_two(), same_server]);
    let servers: Vec<(String, Vec<&str>)> = catalog
        .servers()
        .iter()
        .map(|s| {
            (
                s.binding().location_text(),
                s.tool_names().iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            (
                "https://mcp.salesforce.com/mcp".to_owned(),
                vec!["salesforce.query", "salesforce.describe"]
            ),
            (
                "https://crm.internal:8443/mcp".to_owned(),
                vec!["crm.lookup"]
            ),
        ]
    );
    assert_eq!(
        catalog.servers()[0].binding().display_name(),
        Some("Salesforce MCP Server")
    );
}

#[test]
fn the_example_catalog_loads_without_warnings() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/catalog.json");
    let catalog = Catalog::load(&path).unwrap();
    assert_eq!(catalog.entries().len(), 3);
    assert_eq!(catalog.servers().len(), 2);
    assert_eq!(catalog.warnings(), &[]);
    assert_eq!(catalog.catalog_version(), Some("2026-06-02.1"));
    // python3 + hashlib over the file (per-entry preimage with defaults filled in, then the
    // fold), independent of this workspace.
    assert_eq!(
        catalog.measurement().digest().to_string(),
        "sha256:38ee709c3b85314228a37115ece88a8b00fad1a462641e683fe03c0edc30c5ff"
    );
}
