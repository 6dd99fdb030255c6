//! Duplicate tool names refuse the whole catalog with seed 003 §3's message, word for word.

use serde_json::json;

use crate::support::{
    FP_A, FP_B, assert_colliding_alike, colon_form, entry_one, entry_two, error_messages, with,
    without,
};

/// [`entry_one`]'s tool on another server: the seed's `legacy-crm.internal` example.
fn legacy_one() -> serde_json::Value {
    let entry = with(
        entry_one(),
        "/server/url",
        json!("https://legacy-crm.internal/mcp"),
    );
    let entry = with(entry, "/server/tls_fingerprint", json!(FP_B));
    without(entry, "/server/spiffe_id")
}

#[test]
fn two_servers_with_one_name_refuse_the_catalog_with_the_seed_message() {
    assert_eq!(
        error_messages(&json!([entry_one(), entry_two(), legacy_one()])),
        [format!(
            "Duplicate tool name in catalog: \"salesforce.query\" is registered by two different servers:\n  \
             - https://mcp.salesforce.com/mcp (tls_fingerprint: {FP_A})\n  \
             - https://legacy-crm.internal/mcp (tls_fingerprint: {FP_B})\n\
             Each tool name must map to exactly one upstream server."
        )]
    );
}

#[test]
fn three_entries_are_counted_and_a_spiffe_only_server_shows_its_spiffe_id() {
    let spiffe_only = with(
        without(entry_one(), "/server/tls_fingerprint"),
        "/server/url",
        json!("https://sf-replica.internal/mcp"),
    );
    assert_eq!(
        error_messages(&json!([entry_one(), legacy_one(), spiffe_only])),
        [format!(
            "Duplicate tool name in catalog: \"salesforce.query\" is registered by three different servers:\n  \
             - https://mcp.salesforce.com/mcp (tls_fingerprint: {FP_A})\n  \
             - https://legacy-crm.internal/mcp (tls_fingerprint: {FP_B})\n  \
             - https://sf-replica.internal/mcp (spiffe_id: spiffe://corp.example/salesforce/mcp-server)\n\
             Each tool name must map to exactly one upstream server."
        )]
    );
}

#[test]
fn the_same_server_twice_is_refused_all_the_same() {
    // Identical lines: the duplicate is an ambiguity too (which approval is in force?).
    let line = format!("  - https://mcp.salesforce.com/mcp (tls_fingerprint: {FP_A})");
    assert_eq!(
        error_messages(&json!([entry_one(), entry_one()])),
        [format!(
            "Duplicate tool name in catalog: \"salesforce.query\" is registered by two different servers:\n\
             {line}\n{line}\n\
             Each tool name must map to exactly one upstream server."
        )]
    );
}

#[test]
fn invalid_entries_still_collide_and_are_shown_as_written() {
    let bad = with(legacy_one(), "/server/tls_fingerprint", json!("SHA256:abc"));
    let messages = error_messages(&json!([entry_one(), bad]));
    assert_eq!(messages.len(), 2);
    assert!(messages[0].starts_with(
        "entry 1 (tool_name \"salesforce.query\") at /1/server/tls_fingerprint: fingerprint in"
    ));
    assert_eq!(
        messages[1],
        format!(
            "Duplicate tool name in catalog: \"salesforce.query\" is registered by two different servers:\n  \
             - https://mcp.salesforce.com/mcp (tls_fingerprint: {FP_A})\n  \
             - https://legacy-crm.internal/mcp (tls_fingerprint: SHA256:abc)\n\
             Each tool name must map to exactly one upstream server."
        )
    );
}

#[test]
fn each_duplicated_name_is_one_error_in_order_of_first_appearance() {
    let messages = error_messages(&json!([
        entry_two(),
        entry_one(),
        entry_two(),
        legacy_one()
    ]));
    assert_eq!(messages.len(), 2);
    assert!(messages[0].starts_with("Duplicate tool name in catalog: \"crm.lookup\""));
    assert!(messages[1].starts_with("Duplicate tool name in catalog: \"salesforce.query\""));
}

#[test]
fn names_that_differ_only_in_case_are_not_collisions() {
    // They are lookalikes (a warning, see the warnings module), not the same name.
    let other = crate::support::entry_one_named("Salesforce.Query");
    assert!(crate::support::load(&json!([entry_one(), other])).is_ok());
}

/// A valid entry's server is described from its binding, an invalid server's from what was
/// read: the two lines are the same for one server (fingerprint written in another form,
/// SPIFFE ID alone), whichever entry is the invalid one.
#[test]
fn a_valid_and_an_invalid_server_are_shown_alike() {
    let line = format!("  - https://mcp.salesforce.com/mcp (tls_fingerprint: {FP_A})");
    let spiffe_line = "  - https://mcp.salesforce.com/mcp (spiffe_id: spiffe://corp.example/salesforce/mcp-server)";
    for (entry, line) in [
        (entry_one(), line.as_str()),
        (
            with(
                entry_one(),
                "/server/tls_fingerprint",
                json!(colon_form(FP_A)),
            ),
            line.as_str(),
        ),
        (without(entry_one(), "/server/tls_fingerprint"), spiffe_line),
    ] {
        // A typo in the server object: the server is invalid, its fields readable.
        let invalid = with(entry.clone(), "/server/tls_fingerprnt", json!("x"));
        assert_colliding_alike(&entry, &invalid, "salesforce.query", line);
    }
}
