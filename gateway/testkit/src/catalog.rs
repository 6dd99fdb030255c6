//! Writing a catalog entry that pins a test upstream: what an operator does with
//! `toolgate identity` and `toolgate digest`, done in code for the demo and the tests.

use jcs_digest::{Profile, TOOL_DEFINITION_MEMBERS, ToolDigestError, tool_definition_digest};
use serde_json::{Map, Value, json};
use server_identity::Fingerprint;

/// One catalog entry binding `tool_name` to the upstream tool `definition` (as its
/// `tools/list` serves it) at `url`, pinned by the key fingerprint `spki` with `tls_trust: pin`
/// (the demo upstream's certificate is self-issued).
///
/// The approved definition keeps the six hashed members (seed 000 §3) and its
/// `definition_hash` is their digest under the upstream's name.
///
/// # Errors
///
/// [`ToolDigestError`] when the definition cannot be digested.
pub fn pinned_entry(
    tool_name: &str,
    definition: &Value,
    url: &str,
    spki: &Fingerprint,
) -> Result<Value, ToolDigestError> {
    let server = json!({
        "display_name": "toolgate demo upstream",
        "url": url,
        "tls_fingerprint": spki.to_string(),
        "rotation_mode": "key-pinned",
        "tls_trust": "pin",
    });
    approved_entry(tool_name, definition, server)
}

/// One catalog entry binding `tool_name` to the upstream tool `definition` on `server` (a
/// catalog `server` object: a network one, or a local one with `command` and
/// `entrypoint_digests`), with the approved definition and `definition_hash` as
/// [`pinned_entry`] makes them.
///
/// # Errors
///
/// [`ToolDigestError`] when the definition cannot be digested.
pub fn approved_entry(
    tool_name: &str,
    definition: &Value,
    server: Value,
) -> Result<Value, ToolDigestError> {
    let mut approved = Map::new();
    if let Value::Object(members) = definition {
        for member in TOOL_DEFINITION_MEMBERS {
            if let Some(value) = members.get(member).filter(|value| !value.is_null()) {
                approved.insert(member.to_owned(), value.clone());
            }
        }
    }
    let upstream_name = approved
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(tool_name)
        .to_owned();
    approved.insert("name".into(), Value::from(upstream_name.as_str()));
    let digest = tool_definition_digest(&Value::Object(approved.clone()), Profile::Trace)?;
    Ok(json!({
        "tool_name": tool_name,
        "upstream_name": upstream_name,
        "server": server,
        "approved_definition": Value::Object(approved),
        "definition_hash": digest.to_string(),
        "added_at": "2026-01-01T00:00:00Z",
        "approved_by": "toolgate demo",
    }))
}
