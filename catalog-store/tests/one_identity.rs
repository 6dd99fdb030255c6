//! One server, one identity: entries whose URLs reach the same `https` host and port must carry
//! the same anchors, or the whole catalog is refused.

use catalog_store::CatalogError;
use serde_json::{Value, json};

use crate::support::{
    FP_A, FP_A2, FP_B, entry_one, entry_one_named, entry_two, error_messages, load, load_valid,
    message_starts, with, without,
};

const SPIFFE: &str = "spiffe://corp.example/salesforce/mcp-server";
const FIX: &str = "the endpoint presents one certificate whichever tool is called, so one of \
     the two entries fails its identity check, now or at the next renewal, or two identities \
     were approved for one server unnoticed: give every entry for mcp.salesforce.com:443 the \
     same tls_fingerprint, backup_fingerprints, spiffe_id, rotation_mode and tls_trust (for a \
     planned key rotation, list the new key in backup_fingerprints of each)";

/// A second tool of [`entry_one`]'s server, pinned to another key.
fn describe_on_key_b() -> Value {
    with(
        entry_one_named("salesforce.describe"),
        "/server/tls_fingerprint",
        json!(FP_B),
    )
}

/// `{tls_fingerprint: <fingerprint>, …}` with entry_one's other anchors.
fn identity(fingerprint: &str) -> String {
    format!(
        "{{tls_fingerprint: {fingerprint}, backup_fingerprints: [], spiffe_id: {SPIFFE}, \
         rotation_mode: key-pinned, tls_trust: webpki}}"
    )
}

#[test]
fn one_url_pinned_to_two_keys_refuses_the_catalog_naming_both_entries() {
    let document = json!([entry_one(), entry_two(), describe_on_key_b()]);
    assert_eq!(
        error_messages(&document),
        [format!(
            "entry 2 (tool_name \"salesforce.describe\") at /2/server: the server \
             https://mcp.salesforce.com/mcp is bound here to {}, but entry 0 (tool_name \
             \"salesforce.query\") at /0/server binds the same URL to {} (they differ in \
             tls_fingerprint); {FIX}",
            identity(FP_B),
            identity(FP_A),
        )]
    );
    let error = load(&document).unwrap_err();
    match &error.errors()[0] {
        CatalogError::ConflictingServerIdentity {
            at,
            other,
            binding,
            other_binding,
            endpoint,
            ..
        } => {
            assert_eq!(at.pointer(), "/2/server");
            assert_eq!(other.pointer(), "/0/server");
            assert_eq!(other.entry().map(|e| e.index()), Some(0));
            assert_eq!(
                (binding.url().as_str(), other_binding.url().as_str()),
                (
                    "https://mcp.salesforce.com/mcp",
                    "https://mcp.salesforce.com/mcp"
                )
            );
            assert_eq!(endpoint, "mcp.salesforce.com:443");
            let pin = |b: &catalog_store::NetworkServer| b.tls_fingerprint().map(|f| f.to_string());
            assert_eq!(pin(binding).as_deref(), Some(FP_B));
            assert_eq!(pin(other_binding).as_deref(), Some(FP_A));
        }
        other => panic!("unexpected {other}"),
    }
    // The same input gives an equal error.
    assert_eq!(error.errors(), load(&document).unwrap_err().errors());
}

#[test]
fn the_whole_catalog_is_refused_and_every_other_error_is_still_reported() {
    // Entry 1 is otherwise invalid too: its server still counts, and its own error is reported.
    let document = json!([
        entry_one(),
        with(describe_on_key_b(), "/added_at", json!("yesterday")),
        with(entry_two(), "/approved_by", json!(7)),
        entry_one(),
    ]);
    let error = load(&document).unwrap_err();
    let messages: Vec<String> = error.errors().iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert!(messages[0].starts_with(
        "entry 1 (tool_name \"salesforce.describe\") at /1/added_at: added_at \"yesterday\""
    ));
    assert!(messages[1].starts_with("entry 2 (tool_name \"crm.lookup\") at /2/approved_by:"));
    assert!(messages[2].starts_with(
        "entry 1 (tool_name \"salesforce.describe\") at /1/server: the server \
         https://mcp.salesforce.com/mcp is bound here to"
    ));
    assert!(messages[3].starts_with("Duplicate tool name in catalog: \"salesforce.query\""));
    assert!(
        error
            .to_string()
            .starts_with("the catalog is invalid (4 errors):\n")
    );
}

#[test]
fn two_spellings_of_one_endpoint_are_one_server() {
    // Host case, the default port and the path do not change the TLS server reached.
    let spelled = with(
        entry_one(),
        "/server/url",
        json!("https://MCP.Salesforce.com:443/mcp/"),
    );
    assert_eq!(
        error_messages(&json!([spelled, describe_on_key_b()])),
        [format!(
            "entry 1 (tool_name \"salesforce.describe\") at /1/server: the server \
             https://mcp.salesforce.com/mcp is bound here to {}, but entry 0 (tool_name \
             \"salesforce.query\") at /0/server binds https://MCP.Salesforce.com:443/mcp/, the \
             same TLS endpoint mcp.salesforce.com:443, to {} (they differ in tls_fingerprint); \
             {FIX}",
            identity(FP_B),
            identity(FP_A),
        )]
    );
    let other_path = with(
        describe_on_key_b(),
        "/server/url",
        json!("https://mcp.salesforce.com/v2/mcp?tenant=a"),
    );
    assert_eq!(error_messages(&json!([entry_one(), other_path])).len(), 1);
    // Another port is another endpoint.
    let other_port = with(
        describe_on_key_b(),
        "/server/url",
        json!("https://mcp.salesforce.com:8443/mcp"),
    );
    assert_eq!(load_valid(vec![entry_one(), other_port]).servers().len(), 2);
}

#[test]
fn every_anchor_member_is_part_of_the_identity() {
    let fp_only = without(entry_one(), "/server/spiffe_id");
    let describe_with = |pointer: &str, value: Value| {
        with(
            without(entry_one_named("salesforce.describe"), "/server/spiffe_id"),
            pointer,
            value,
        )
    };
    let cases: [(&str, Value, Value); 5] = [
        (
            "tls_fingerprint",
            fp_only.clone(),
            describe_with("/server/tls_fingerprint", json!(FP_B)),
        ),
        (
            "backup_fingerprints",
            fp_only.clone(),
            describe_with("/server/backup_fingerprints", json!([FP_A2])),
        ),
        (
            "spiffe_id",
            fp_only.clone(),
            describe_with("/server/spiffe_id", json!(SPIFFE)),
        ),
        (
            "rotation_mode",
            fp_only.clone(),
            describe_with("/server/rotation_mode", json!("cert-pinned")),
        ),
        (
            "tls_trust",
            fp_only.clone(),
            describe_with("/server/tls_trust", json!("pin")),
        ),
    ];
    for (member, first, second) in cases {
        let messages = error_messages(&json!([first, second]));
        assert_eq!(messages.len(), 1, "{member}: {messages:#?}");
        assert!(
            messages[0].contains(&format!("(they differ in {member}); ")),
            "{member}: {}",
            messages[0]
        );
    }
    // Several differences are all named, in schema order.
    let mixed = with(
        describe_with("/server/tls_fingerprint", json!(FP_B)),
        "/server/tls_trust",
        json!("pin"),
    );
    let messages = error_messages(&json!([without(entry_one(), "/server/spiffe_id"), mixed]));
    assert!(messages[0].contains("(they differ in tls_fingerprint, tls_trust); "));
}

#[test]
fn two_entries_with_the_same_url_and_the_same_binding_stay_fine() {
    // Same anchors, written differently: another display name, the fingerprint in uppercase,
    // defaults spelled out or left out, backups in another order.
    let fp_c = "SHA256:0000000000000000000000000000000000000000000000000000000000000001";
    let first = with(
        entry_one(),
        "/server/backup_fingerprints",
        json!([FP_A2, fp_c]),
    );
    let second = entry_one_named("salesforce.describe");
    let second = with(second, "/server/display_name", json!("Salesforce (again)"));
    let second = with(
        second,
        "/server/tls_fingerprint",
        json!(FP_A.to_uppercase()),
    );
    let second = with(second, "/server/backup_fingerprints", json!([fp_c, FP_A2]));
    // (tls_trust `webpki` cannot be spelled out here: next to a spiffe_id it is refused.)
    let second = without(second, "/server/rotation_mode");
    let catalog = load_valid(vec![first, entry_two(), second]);
    assert_eq!(catalog.servers().len(), 2);
    assert_eq!(
        catalog.servers()[0].tool_names(),
        ["salesforce.query", "salesforce.describe"]
    );
    assert_eq!(catalog.warnings(), &[]);
}

/// Entries that write one server alike share its binding: the second and fourth entries,
/// written alike, each differ from the first and are each reported; the third, written as
/// the first, agrees.
#[test]
fn servers_written_alike_are_each_compared_with_the_first() {
    let on_key_b = |name: &str| {
        with(
            entry_one_named(name),
            "/server/tls_fingerprint",
            json!(FP_B),
        )
    };
    let document = json!([
        entry_one(),
        on_key_b("salesforce.describe"),
        entry_one_named("salesforce_query"),
        on_key_b("Salesforce.Query"),
    ]);
    assert_eq!(
        message_starts(&document, ": the server"),
        [
            "entry 1 (tool_name \"salesforce.describe\") at /1/server",
            "entry 3 (tool_name \"Salesforce.Query\") at /3/server"
        ]
    );
    for message in &error_messages(&document) {
        assert!(
            message.contains(&format!(
                "is bound here to {}, but entry 0 (tool_name \"salesforce.query\") at /0/server",
                identity(FP_B)
            )),
            "{message}"
        );
    }
}
