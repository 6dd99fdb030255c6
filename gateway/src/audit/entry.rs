//! What one audit entry says: the decision of one `tools/call`, or the start of a gateway run.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use jcs_digest::{CanonicalizeError, Digest, canonicalize};
use serde_json::Value;

use crate::audit::arguments::ArgumentsDigest;
use crate::audit::members::EntryMembers;
pub use crate::denial::DenialReason;

/// The outcome of one `tools/call`, as the audit entry's `decision` member writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Decision {
    /// Every check passed and the call was forwarded: `allowed`.
    Allowed,
    /// The call was refused: the reason string.
    Denied(DenialReason),
}

impl Decision {
    /// `allowed`, or the denial reason string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Denied(reason) => reason.as_str(),
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that is not a decision string.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown decision {0:?}; a decision is \"allowed\" or a denial reason: {reasons}",
    reasons = DenialReason::ALL.map(DenialReason::as_str).join(", ")
)]
pub struct UnknownDecision(pub String);

impl FromStr for Decision {
    type Err = UnknownDecision;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "allowed" {
            return Ok(Decision::Allowed);
        }
        text.parse::<DenialReason>()
            .map(Decision::Denied)
            .map_err(|_| UnknownDecision(text.to_owned()))
    }
}

/// What the upstream presented in its TLS handshake, when the gateway got that far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedIdentity {
    /// The fingerprints of the presented leaf, canonical `SHA256:<hex>` text (the key's, the
    /// certificate's, or both, as the rotation mode needs).
    pub fingerprints: Vec<String>,
    /// The SPIFFE ID of the presented leaf, when it carries one.
    pub spiffe_id: Option<String>,
    /// Which pin the leaf matched: `Some("primary")`, or `Some("backup")` with the backup in
    /// [`pinned_backup`](Self::pinned_backup) (a rotation is under way); `None` when no
    /// fingerprint is pinned or it is not known.
    pub pin: Option<&'static str>,
    /// The backup fingerprint that matched, when `pin` is `backup`.
    pub pinned_backup: Option<String>,
}

/// One `tools/call` decision, as the router hands it to [`AuditLog::record`](super::AuditLog::record).
///
/// It holds the digest of the arguments, never the arguments (docs/design.md §5): compute it with
/// [`arguments_digest`]. Texts longer than the audit log's limits (a client can send a long tool
/// name; an upstream a long error) are cut, and the cut is marked.
///
/// The catalog's names and URL are shared (`Arc<str>`): the router hands every record of a
/// tool the same texts instead of copying them per call and per record.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// The tool name the client called (the catalog `tool_name`, or the unknown name).
    pub tool: Arc<str>,
    /// The name the upstream serves the tool under, when the tool is in the catalog.
    pub upstream_name: Option<Arc<str>>,
    /// The pinned upstream's URL, when the tool is in the catalog.
    pub upstream_url: Option<Arc<str>>,
    /// What the upstream presented, when known; shared: every call on one connection records
    /// the same identity (made once per connection, not per call).
    pub identity: Option<Arc<ObservedIdentity>>,
    /// The approved `definition_hash`, when the tool is in the catalog.
    pub expected_definition: Option<Digest>,
    /// The digest of the live definition, when the upstream served one that could be digested.
    pub observed_definition: Option<Digest>,
    /// Allowed, or the denial reason.
    pub decision: Decision,
    /// A short human-readable detail (the denial message, or the upstream's error).
    pub detail: String,
    /// The digest of the call's `arguments` ([`ArgumentsDigest::of`], or
    /// [`AuditLog::arguments_digest`](super::AuditLog::arguments_digest) with the log's key), or
    /// why there is none; `None` when the call had no arguments.
    pub arguments: Option<ArgumentsDigest>,
    /// The client's `Mcp-Session-Id`, when it has one.
    pub session_id: Option<String>,
    /// The JSON-RPC `id` of the client's request.
    pub request_id: Option<Value>,
    /// Who called, as [`Principal`](crate::auth::Principal) writes it (`User::"alice"`,
    /// `anonymous`, …; docs/design.md §7).
    pub principal: String,
    /// The ids of the Cedar policies that decided (`--policy`), `None` without a policy.
    pub policies: Option<Vec<String>>,
    /// From the arrival of the request to the decision.
    pub latency: Duration,
}

impl CallRecord {
    /// A record of `decision` for `tool` with every other member empty; fill the rest with
    /// struct update syntax (`CallRecord { detail, ..CallRecord::new(tool, decision) }`).
    pub fn new(tool: impl Into<Arc<str>>, decision: Decision) -> CallRecord {
        CallRecord::of_principal(tool.into(), decision, "anonymous".to_owned())
    }

    /// [`CallRecord::new`] for a caller known already (the router's, on every call: no
    /// default principal made only to be replaced).
    pub(crate) fn of_principal(
        tool: Arc<str>,
        decision: Decision,
        principal: String,
    ) -> CallRecord {
        CallRecord {
            tool,
            upstream_name: None,
            upstream_url: None,
            identity: None,
            expected_definition: None,
            observed_definition: None,
            decision,
            detail: String::new(),
            arguments: None,
            session_id: None,
            request_id: None,
            principal,
            policies: None,
            latency: Duration::ZERO,
        }
    }
}

/// The unkeyed digest of a call's arguments: SHA-256 of their RFC 8785 form (what
/// [`ArgumentsDigest::Sha256`] holds).
///
/// # Errors
///
/// [`CanonicalizeError`] when the value holds an integer outside ±(2^53−1), which only a value
/// not read by `jcs_digest::parse_strict` can hold.
pub fn arguments_digest(arguments: &Value) -> Result<Digest, CanonicalizeError> {
    canonicalize(arguments).map(|bytes| Digest::of(&bytes))
}

/// The `event` of a decision entry.
pub(crate) const EVENT_CALL: &str = "tools/call";
/// The `event` of the entry each gateway run begins with.
pub(crate) const EVENT_STARTED: &str = "gateway_started";
/// The `event` of the entry a catalog reload (SIGHUP) writes before the new catalog serves.
pub(crate) const EVENT_CATALOG_LOADED: &str = "catalog_loaded";

// Limits on the texts an entry carries, so that every entry stays far below the verifier's
// line limit whatever a client or an upstream sends.
const MAX_NAME: usize = 512;
const MAX_URL: usize = 2048;
const MAX_DETAIL: usize = 2048;
const MAX_SESSION: usize = 256;
const MAX_FINGERPRINTS: usize = 8;
/// The largest integer RFC 8785 writes exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The members of a decision entry after `seq` and before `prev`, in the order a line shows them.
pub(crate) fn call_members(record: &CallRecord, time: SystemTime) -> EntryMembers {
    let mut members = EntryMembers::new();
    members.time("time", time);
    members.text("event", EVENT_CALL, usize::MAX);
    members.text("principal", &record.principal, MAX_URL);
    members.text("tool", &record.tool, MAX_NAME);
    members.optional_text("upstream_name", record.upstream_name.as_deref(), MAX_NAME);
    members.optional_text("upstream_url", record.upstream_url.as_deref(), MAX_URL);
    match &record.identity {
        None => members.null("identity"),
        // Members in canonical order; `pin` and `pinned_backup` only when known, so entries
        // without a pin read as before.
        Some(identity) => members.object("identity", |object| {
            let fingerprints = identity.fingerprints.iter().take(MAX_FINGERPRINTS);
            object.texts("fingerprints", fingerprints.map(String::as_str), MAX_NAME);
            if let Some(pin) = identity.pin {
                object.optional_text("pin", Some(pin), usize::MAX);
                object.optional_text("pinned_backup", identity.pinned_backup.as_deref(), MAX_NAME);
            }
            object.optional_text("spiffe_id", identity.spiffe_id.as_deref(), MAX_URL);
        }),
    }
    members.digest("expected_definition", record.expected_definition.as_ref());
    members.digest("observed_definition", record.observed_definition.as_ref());
    members.text("decision", record.decision.as_str(), usize::MAX);
    members.text("detail", &record.detail, MAX_DETAIL);
    match &record.arguments {
        // Written in place, as `ArgumentsDigest::text` would spell it.
        Some(ArgumentsDigest::Sha256(digest)) => members.digest("arguments_digest", Some(digest)),
        other => {
            let text = other.as_ref().and_then(ArgumentsDigest::text);
            members.optional_text("arguments_digest", text.as_deref(), usize::MAX);
        }
    }
    // Only under a policy, so entries without one read as before.
    if let Some(policies) = &record.policies {
        let ids = policies.iter().take(MAX_FINGERPRINTS).map(String::as_str);
        members.texts("policies", ids, MAX_NAME);
    }
    // Only when there were arguments that could not be digested: a `null` digest then says why.
    if let Some(ArgumentsDigest::NotComputable(reason)) = &record.arguments {
        members.text("arguments_not_digested", reason, MAX_DETAIL);
    }
    members.optional_text("session_id", record.session_id.as_deref(), MAX_SESSION);
    request_id(&mut members, record.request_id.as_ref());
    let latency_us = u64::try_from(record.latency.as_micros())
        .unwrap_or(u64::MAX)
        .min(MAX_SAFE_INTEGER);
    members.number("latency_us", latency_us);
    members
}

/// The members of a `gateway_started` entry: the catalog measurement now in force, and the one
/// in force before (`null` for a new log).
pub(crate) fn started_members(
    time: SystemTime,
    catalog: &Digest,
    previous_catalog: Option<&Digest>,
    detail: &str,
    replica: Option<&str>,
) -> EntryMembers {
    let mut members = EntryMembers::new();
    members.time("time", time);
    members.text("event", EVENT_STARTED, usize::MAX);
    members.digest("catalog", Some(catalog));
    members.digest("previous_catalog", previous_catalog);
    members.text("detail", detail, MAX_DETAIL);
    // Which of several replicas wrote this log (docs/replicas.md); absent when not named.
    if let Some(replica) = replica {
        members.text("replica", replica, MAX_NAME);
    }
    members
}

/// The members of a `catalog_loaded` entry: the measurement now in force and the one it
/// replaced.
pub(crate) fn catalog_loaded_members(
    time: SystemTime,
    catalog: &Digest,
    previous_catalog: &Digest,
) -> EntryMembers {
    let mut members = EntryMembers::new();
    members.time("time", time);
    members.text("event", EVENT_CATALOG_LOADED, usize::MAX);
    members.digest("catalog", Some(catalog));
    members.digest("previous_catalog", Some(previous_catalog));
    members.text(
        "detail",
        "catalog reloaded (SIGHUP); later calls are decided under it",
        usize::MAX,
    );
    members
}

/// A JSON-RPC id as the entry records it: a string (cut to the session limit) or a number with
/// an exact RFC 8785 form as it is; anything else (which JSON-RPC does not allow) as its JSON
/// text, so that the entry always has a digest.
fn request_id(members: &mut EntryMembers, id: Option<&Value>) {
    const NAME: &str = "request_id";
    match id {
        None => members.null(NAME),
        Some(Value::String(text)) => members.text(NAME, text, MAX_SESSION),
        Some(other) => {
            if !other.is_number() || members.value(NAME, other).is_err() {
                members.text(NAME, &jcs_digest::order::to_string(other), MAX_SESSION);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::audit::members::bounded;
    use crate::audit::time::rfc3339_utc;

    #[test]
    fn decisions_round_trip_through_their_strings() {
        let all = std::iter::once(Decision::Allowed).chain(DenialReason::ALL.map(Decision::Denied));
        for decision in all {
            assert_eq!(decision.as_str().parse::<Decision>(), Ok(decision));
        }
        assert_eq!(
            "denied".parse::<Decision>(),
            Err(UnknownDecision("denied".to_owned()))
        );
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        assert_eq!(bounded("abc", 3), "abc");
        assert_eq!(bounded("aéb", 2), "a…[3 more bytes]");
    }

    fn request_id_bytes(id: &Value) -> String {
        let mut members = EntryMembers::new();
        request_id(&mut members, Some(id));
        let (name, bytes) = members.iter().next().unwrap();
        assert_eq!(name, "request_id");
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn request_ids_always_have_a_canonical_form() {
        assert_eq!(request_id_bytes(&json!(7)), "7");
        assert_eq!(request_id_bytes(&json!(1e3)), "1000");
        assert_eq!(request_id_bytes(&json!("a\u{1}")), r#""a\u0001""#);
        assert_eq!(
            request_id_bytes(&json!(u64::MAX)),
            r#""18446744073709551615""#
        );
        assert_eq!(
            request_id_bytes(&json!({"b": 1, "a": [true]})),
            r#""{\"a\":[true],\"b\":1}""#
        );
    }

    #[test]
    fn a_decision_entry_writes_every_member_in_reading_order() {
        let record = CallRecord {
            upstream_name: Some("echo".into()),
            upstream_url: Some("https://127.0.0.1:1/mcp".into()),
            identity: Some(Arc::new(ObservedIdentity {
                fingerprints: vec!["SHA256:ab".into()],
                spiffe_id: None,
                pin: Some("backup"),
                pinned_backup: Some("SHA256:ab".into()),
            })),
            expected_definition: Some(Digest::of(b"a")),
            detail: "ok".into(),
            request_id: Some(json!(3)),
            latency: Duration::from_micros(42),
            ..CallRecord::new("demo.echo", Decision::Allowed)
        };
        let members = call_members(&record, std::time::UNIX_EPOCH);
        let line: Vec<String> = members
            .iter()
            .map(|(name, bytes)| format!("{name}={}", String::from_utf8_lossy(bytes)))
            .collect();
        assert_eq!(
            line,
            [
                r#"time="1970-01-01T00:00:00.000000Z""#.to_owned(),
                r#"event="tools/call""#.into(),
                r#"principal="anonymous""#.into(),
                r#"tool="demo.echo""#.into(),
                r#"upstream_name="echo""#.into(),
                r#"upstream_url="https://127.0.0.1:1/mcp""#.into(),
                r#"identity={"fingerprints":["SHA256:ab"],"pin":"backup","pinned_backup":"SHA256:ab","spiffe_id":null}"#.into(),
                format!(r#"expected_definition="{}""#, Digest::of(b"a")),
                "observed_definition=null".into(),
                r#"decision="allowed""#.into(),
                r#"detail="ok""#.into(),
                "arguments_digest=null".into(),
                "session_id=null".into(),
                "request_id=3".into(),
                "latency_us=42".into(),
            ]
        );
    }

    /// The members as the entry wrote them before they were written as bytes: `Value`s, each
    /// canonicalized by `jcs_digest` (the reference the bytes must equal).
    fn reference_members(record: &CallRecord, time: SystemTime) -> Vec<(&'static str, Value)> {
        let digest = |d: &Option<Digest>| {
            d.as_ref()
                .map_or(Value::Null, |d| Value::String(d.to_string()))
        };
        fn text<T: AsRef<str>>(t: &Option<T>, limit: usize) -> Value {
            t.as_ref()
                .map_or(Value::Null, |t| bounded(t.as_ref(), limit).into())
        }
        let identity = record.identity.as_ref().map_or(Value::Null, |identity| {
            let fingerprints: Vec<Value> = identity
                .fingerprints
                .iter()
                .take(MAX_FINGERPRINTS)
                .map(|fingerprint| bounded(fingerprint, MAX_NAME).into())
                .collect();
            let mut members = json!({
                "fingerprints": fingerprints,
                "spiffe_id": text(&identity.spiffe_id, MAX_URL),
            });
            if let (Some(pin), Value::Object(object)) = (identity.pin, &mut members) {
                object.insert("pin".to_owned(), pin.into());
                object.insert(
                    "pinned_backup".to_owned(),
                    text(&identity.pinned_backup, MAX_NAME),
                );
            }
            members
        });
        let request_id = match record.request_id.as_ref() {
            None => Value::Null,
            Some(Value::String(text)) => bounded(text, MAX_SESSION).into(),
            Some(number @ Value::Number(_)) if canonicalize(number).is_ok() => number.clone(),
            Some(other) => bounded(&jcs_digest::order::to_string(other), MAX_SESSION).into(),
        };
        let mut members = vec![
            ("time", rfc3339_utc(time).into()),
            ("event", EVENT_CALL.into()),
            ("principal", bounded(&record.principal, MAX_URL).into()),
            ("tool", bounded(&record.tool, MAX_NAME).into()),
            ("upstream_name", text(&record.upstream_name, MAX_NAME)),
            ("upstream_url", text(&record.upstream_url, MAX_URL)),
            ("identity", identity),
            ("expected_definition", digest(&record.expected_definition)),
            ("observed_definition", digest(&record.observed_definition)),
            ("decision", record.decision.as_str().into()),
            ("detail", bounded(&record.detail, MAX_DETAIL).into()),
            (
                "arguments_digest",
                record
                    .arguments
                    .as_ref()
                    .and_then(ArgumentsDigest::text)
                    .map_or(Value::Null, Value::from),
            ),
        ];
        if let Some(policies) = &record.policies {
            let ids: Vec<Value> = policies
                .iter()
                .take(MAX_FINGERPRINTS)
                .map(|id| bounded(id, MAX_NAME).into())
                .collect();
            members.push(("policies", Value::Array(ids)));
        }
        if let Some(ArgumentsDigest::NotComputable(reason)) = &record.arguments {
            members.push(("arguments_not_digested", bounded(reason, MAX_DETAIL).into()));
        }
        let latency_us = u64::try_from(record.latency.as_micros())
            .unwrap_or(u64::MAX)
            .min(MAX_SAFE_INTEGER);
        members.extend([
            ("session_id", text(&record.session_id, MAX_SESSION)),
            ("request_id", request_id),
            ("latency_us", latency_us.into()),
        ]);
        members
    }

    /// Texts of every kind an entry may hold: empty, escapes and controls, multi-byte
    /// characters, and longer than every limit (cut at a character boundary).
    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z./:_-]{0,12}",
            "[\\u{0}-\\u{1f}\"\\\\a-é€😀]{0,24}",
            ("[aé€😀]{1,4}", 0usize..3).prop_map(|(unit, extra)| unit.repeat(700 + 700 * extra)),
        ]
    }

    fn any_request_id() -> impl Strategy<Value = Option<Value>> {
        prop_oneof![
            Just(None),
            any_text().prop_map(|text| Some(Value::from(text))),
            any::<i64>().prop_map(|n| Some(Value::from(n))),
            any::<u64>().prop_map(|n| Some(Value::from(n))),
            (-1e300f64..1e300).prop_map(|n| Some(json!(n))),
            Just(Some(json!({"b": [1, null], "a": "é"}))),
            Just(Some(json!(true))),
        ]
    }

    fn any_record() -> impl Strategy<Value = CallRecord> {
        let identity = proptest::option::of((
            proptest::collection::vec(any_text(), 0..10),
            proptest::option::of(any_text()),
            proptest::option::of(prop_oneof![Just("primary"), Just("backup")]),
            proptest::option::of(any_text()),
        ));
        let arguments = proptest::option::of(prop_oneof![
            any::<[u8; 4]>().prop_map(|seed| ArgumentsDigest::Sha256(Digest::of(&seed))),
            any::<[u8; 32]>().prop_map(ArgumentsDigest::HmacSha256),
            any_text().prop_map(ArgumentsDigest::NotComputable),
        ]);
        (
            (
                any_text(),
                proptest::option::of(any_text()),
                proptest::option::of(any_text()),
            ),
            identity,
            (any::<bool>(), any::<bool>(), any_text()),
            (
                arguments,
                proptest::option::of(any_text()),
                any_request_id(),
            ),
            (
                any_text(),
                proptest::option::of(proptest::collection::vec(any_text(), 0..10)),
            ),
            any::<u64>(),
        )
            .prop_map(
                |(
                    (tool, upstream_name, upstream_url),
                    identity,
                    (expected, observed, detail),
                    (arguments, session_id, request_id),
                    (principal, policies),
                    latency,
                )| CallRecord {
                    upstream_name: upstream_name.map(Arc::from),
                    upstream_url: upstream_url.map(Arc::from),
                    identity: identity.map(|(fingerprints, spiffe_id, pin, pinned_backup)| {
                        Arc::new(ObservedIdentity {
                            fingerprints,
                            spiffe_id,
                            pin,
                            pinned_backup,
                        })
                    }),
                    expected_definition: expected.then(|| Digest::of(b"expected")),
                    observed_definition: observed.then(|| Digest::of(b"observed")),
                    detail,
                    arguments,
                    session_id,
                    request_id,
                    principal,
                    policies,
                    latency: Duration::from_nanos(latency),
                    ..CallRecord::new(tool, Decision::Denied(DenialReason::DefinitionMismatch))
                },
            )
    }

    proptest! {
        #[test]
        fn members_written_as_bytes_equal_the_canonical_values(
            record in any_record(),
            micros in 0u64..4_102_444_800_000_000,
        ) {
            let time = std::time::UNIX_EPOCH + Duration::from_micros(micros);
            let written: Vec<(&str, Vec<u8>)> = call_members(&record, time)
                .iter()
                .map(|(name, bytes)| (name, bytes.to_vec()))
                .collect();
            let reference: Vec<(&str, Vec<u8>)> = reference_members(&record, time)
                .into_iter()
                .map(|(name, value)| (name, canonicalize(&value).unwrap()))
                .collect();
            prop_assert_eq!(written, reference);
        }
    }
}
