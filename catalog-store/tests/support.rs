//! Fixtures shared by the test modules: two valid entries and helpers to edit and load them.
//!
//! Every digest here was computed independently of this workspace with python3 + hashlib:
//! `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` is RFC 8785
//! for values without floats and with ASCII member names, then `hashlib.sha256`.

use catalog_store::{Catalog, CatalogLoadError};
use serde_json::{Value, json};

/// `"SHA256:" + sha256(b"server a key").hexdigest()`.
pub const FP_A: &str = "SHA256:6f18b801991dcee8ea2197836892621aa4d616950335cbe15ccc0c5cc84cf07a";
/// `"SHA256:" + sha256(b"server a next key").hexdigest()`.
pub const FP_A2: &str = "SHA256:e87841f266b12f356649d061936e15fb4f901456e09faf82a745c71554580e9b";
/// `"SHA256:" + sha256(b"server b key").hexdigest()`.
pub const FP_B: &str = "SHA256:48abb7789b62e51a4cd108bbc38b2f48440c4354b3842957881b1396a22c319f";

/// Tool digest of [`entry_one`]'s definition with `name` = `salesforce.query`.
pub const H1: &str = "sha256:d50cd83fe24091afe018725ef2f868c6156218208e5bf9b2912c4cb81cadc228";
/// The same definition with `name` = `query`.
pub const H1_UPSTREAM_QUERY: &str =
    "sha256:f3faab699272d655933be3e50b3326883942f7928c28b196b8bc2894304f4bbe";
/// The same definition with a full stop appended to the description.
pub const H1_CHANGED: &str =
    "sha256:08bcb8e1c27be5739504bc0ab3e18661b247347c9c07971b12e18f54e806e163";
/// Tool digest of [`entry_two`]'s definition with `name` = `crm.lookup`.
pub const H2: &str = "sha256:40362c210e6ce98086bb39d9012f35a844d0817e722d115542e3c86da664e15a";

/// Seed 003 §2's example entry, with snake_case schema names and both anchors.
pub fn entry_one() -> Value {
    json!({
        "tool_name": "salesforce.query",
        "server": {
            "display_name": "Salesforce MCP Server",
            "url": "https://mcp.salesforce.com/mcp",
            "tls_fingerprint": FP_A,
            "spiffe_id": "spiffe://corp.example/salesforce/mcp-server",
            "rotation_mode": "key-pinned"
        },
        "approved_definition": {
            "description": "Query Salesforce records by SOQL",
            "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
            "output_schema": {"type": "object"}
        },
        "definition_hash": H1,
        "added_at": "2026-06-01T00:00:00Z",
        "approved_by": "security@example.com"
    })
}

/// A second entry on another server: SPIFFE ID only, MCP member names, a port.
pub fn entry_two() -> Value {
    json!({
        "tool_name": "crm.lookup",
        "server": {
            "url": "https://crm.internal:8443/mcp",
            "spiffe_id": "spiffe://corp.example/crm/mcp-server"
        },
        "approved_definition": {
            "description": "Look up a CRM contact by email",
            "inputSchema": {
                "type": "object",
                "properties": {"email": {"type": "string"}},
                "required": ["email"]
            }
        },
        "definition_hash": H2,
        "added_at": "2026-06-02T09:30:00+02:00",
        "approved_by": "security@example.com"
    })
}

/// Loads `document` (any JSON value) as catalog bytes.
pub fn load(document: &Value) -> Result<Catalog, CatalogLoadError> {
    Catalog::from_slice(document.to_string().as_bytes())
}

/// Loads an array of `entries`, which must be valid.
pub fn load_valid(entries: Vec<Value>) -> Catalog {
    match load(&Value::Array(entries)) {
        Ok(catalog) => catalog,
        Err(error) => panic!("expected a valid catalog, got:\n{error}"),
    }
}

/// The message of each error of `document`, which must be invalid.
pub fn error_messages(document: &Value) -> Vec<String> {
    match load(document) {
        Ok(_) => panic!("expected an invalid catalog"),
        Err(error) => error.errors().iter().map(ToString::to_string).collect(),
    }
}

/// The one error message of a catalog holding `entry` alone.
pub fn single_error(entry: Value) -> String {
    let messages = error_messages(&Value::Array(vec![entry]));
    assert_eq!(messages.len(), 1, "{messages:#?}");
    messages.into_iter().next().unwrap_or_default()
}

/// `entry` with the value at `pointer` replaced (the parent must exist).
pub fn with(mut entry: Value, pointer: &str, value: Value) -> Value {
    let (parent, member) = pointer.rsplit_once('/').unwrap();
    entry
        .pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert(member.to_owned(), value);
    entry
}

/// `entry` without the member at `pointer`.
pub fn without(mut entry: Value, pointer: &str) -> Value {
    let (parent, member) = pointer.rsplit_once('/').unwrap();
    entry
        .pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(member);
    entry
}

/// [`entry_one`] under another `tool_name`, with the definition hash for that name (each
/// computed with python3 + hashlib as above, `name` = the new tool name).
pub fn entry_one_named(tool_name: &str) -> Value {
    let hash = match tool_name {
        "salesforce.describe" => {
            "sha256:d4e2dc4808448bf80dd051d2ee89926f37952c99c33dbcbc45ef346435d62073"
        }
        "Salesforce.Query" => {
            "sha256:1269d6ad6a6169fc55f5321f18132b6c14ac62dda79be590d03aad68546843a0"
        }
        "salesforce_query" => {
            "sha256:b7c4e6726951729fbd73847b0bab5e1480934120f166ff8621960043c4611403"
        }
        "sales force" => "sha256:ace0ce0e9615f52d2eb40ffbc8189dfc20f298e98499094ddbdfbddebf295cd4",
        other => panic!("no precomputed hash for {other:?}"),
    };
    with(
        with(entry_one(), "/tool_name", json!(tool_name)),
        "/definition_hash",
        json!(hash),
    )
}

/// `fingerprint` (`SHA256:<hex>`) in OpenSSL's colon-separated form, uppercase.
pub fn colon_form(fingerprint: &str) -> String {
    fingerprint
        .trim_start_matches("SHA256:")
        .as_bytes()
        .chunks(2)
        .map(|pair| String::from_utf8_lossy(pair).to_uppercase())
        .collect::<Vec<_>>()
        .join(":")
}

/// `valid` and `invalid` (one `tool_name`, one server; `invalid` with one problem), in both
/// orders: the problem, then the duplicate tool name with `line` for both entries.
#[track_caller]
pub fn assert_colliding_alike(valid: &Value, invalid: &Value, tool_name: &str, line: &str) {
    for document in [json!([valid, invalid]), json!([invalid, valid])] {
        let messages = error_messages(&document);
        assert_eq!(messages.len(), 2, "{messages:#?}");
        assert_eq!(
            messages[1],
            format!(
                "Duplicate tool name in catalog: {tool_name:?} is registered by two different \
                 servers:\n{line}\n{line}\nEach tool name must map to exactly one upstream server."
            )
        );
    }
}

/// The error messages of `document`, each up to the first `until` (the entry and pointer).
pub fn message_starts(document: &Value, until: &str) -> Vec<String> {
    error_messages(document)
        .iter()
        .map(|message| message.split(until).next().unwrap_or_default().to_owned())
        .collect()
}
