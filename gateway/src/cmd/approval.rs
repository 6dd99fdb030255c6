//! What approving a live definition writes: the six hashed members under the served name, their
//! digest, the time and who approved (docs/design.md §4 `approved_definition`, `definition_hash`).

use std::time::{SystemTime, UNIX_EPOCH};

use jcs_digest::{Digest, Profile, TOOL_DEFINITION_MEMBERS, tool_definition_digest};
use serde_json::{Map, Value};

use crate::outcome::Failure;

/// One live definition made ready for the catalog.
#[derive(Debug, Clone)]
pub(crate) struct Approved {
    /// The name the upstream serves it under (`upstream_name`).
    pub(crate) upstream_name: String,
    /// The six hashed members, `null` ones dropped, `name` = the served name.
    pub(crate) definition: Value,
    /// Its per-tool digest under the default label: what the live entry must hash to.
    pub(crate) hash: Digest,
}

/// Why a served tool cannot be approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotApprovable {
    /// It is not a JSON object.
    NotAnObject,
    /// Its `name` is absent, empty or not a string: nothing could route to it.
    NoName,
    /// It has no digest (a value RFC 8785 cannot write).
    NoDigest(String),
}

impl std::fmt::Display for NotApprovable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotApprovable::NotAnObject => f.write_str("it is not a JSON object"),
            NotApprovable::NoName => f.write_str("it has no name (absent, empty or not a string)"),
            NotApprovable::NoDigest(why) => write!(f, "it has no digest: {why}"),
        }
    }
}

/// `--approved-by` must say who: an approval nobody made is not one (exit 2).
pub(crate) fn check_approver(who: &str) -> Result<(), Failure> {
    if who.trim().is_empty() {
        return Err(Failure::Usage(
            "--approved-by: say who approves these definitions (a name or an address)".to_owned(),
        ));
    }
    Ok(())
}

/// The served name of a live definition, if it has a usable one.
pub(crate) fn served_name(live: &Value) -> Option<&str> {
    live.get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
}

/// The catalog's view of a live definition (what the gateway will compare it with).
pub(crate) fn approve(live: &Value) -> Result<Approved, NotApprovable> {
    let members = live.as_object().ok_or(NotApprovable::NotAnObject)?;
    let upstream_name = served_name(live).ok_or(NotApprovable::NoName)?.to_owned();
    let mut kept = Map::new();
    for member in TOOL_DEFINITION_MEMBERS {
        if let Some(value) = members.get(member).filter(|value| !value.is_null()) {
            kept.insert(member.to_owned(), value.clone());
        }
    }
    let definition = Value::Object(kept);
    let hash = tool_definition_digest(&definition, Profile::Trace)
        .map_err(|error| NotApprovable::NoDigest(error.to_string()))?;
    Ok(Approved {
        upstream_name,
        definition,
        hash,
    })
}

/// Now, as RFC 3339 UTC to the second (`2026-12-01T10:00:00Z`): the `added_at` of an approval.
pub(crate) fn now_rfc3339() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    rfc3339_seconds(seconds)
}

/// Seconds since the Unix epoch as RFC 3339 UTC, by `server_identity::UtcTimestamp`.
fn rfc3339_seconds(seconds: u64) -> String {
    i64::try_from(seconds)
        .ok()
        .and_then(|seconds| server_identity::UtcTimestamp::from_unix_seconds(seconds).ok())
        .map_or_else(|| "9999-12-31T23:59:59Z".to_owned(), |at| at.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dates_as_rfc3339() {
        assert_eq!(rfc3339_seconds(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_seconds(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_seconds(1_796_032_800), "2026-11-30T10:00:00Z");
        assert_eq!(rfc3339_seconds(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn approval_keeps_the_six_members_and_hashes_them() {
        let live = json!({"name": "echo", "description": "d", "title": null,
                          "inputSchema": {"type": "object"}, "_meta": {"x": 1}, "icons": []});
        let approved = approve(&live).unwrap();
        assert_eq!(approved.upstream_name, "echo");
        assert_eq!(
            approved.definition,
            json!({"name": "echo", "description": "d", "inputSchema": {"type": "object"}})
        );
        assert_eq!(
            approved.hash,
            tool_definition_digest(&live, Profile::Trace).unwrap()
        );
        assert_eq!(
            approve(&json!({"name": ""})).unwrap_err(),
            NotApprovable::NoName
        );
        assert_eq!(approve(&json!(1)).unwrap_err(), NotApprovable::NotAnObject);
    }
}
