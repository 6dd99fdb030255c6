//! [`RawJson`]: a JSON value carried as the bytes received (docs/design.md §5, "Pass-through data
//! is not rewritten").

use std::fmt;
use std::sync::Arc;

use jcs_digest::order::Sorted;
use serde_json::Value;

use crate::well_formed::{DEFAULT_MAX_DEPTH, WellFormedError, check_well_formed, object_members};

/// One JSON value as text, checked to be well-formed (UTF-8, the JSON grammar, no duplicate
/// member names, bounded nesting) and otherwise exactly as received: numbers are not
/// converted, members not reordered, escapes not changed. Tool-call arguments and results
/// travel as this; what is hashed or interpreted is read strictly ([`RawJson::to_value`]).
///
/// Cheap to clone (shared text). Whitespace around the value is dropped; whitespace inside
/// it is kept.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RawJson(Arc<str>);

impl RawJson {
    /// The value `bytes` hold, checked with [`check_well_formed`] at the default depth limit.
    ///
    /// # Errors
    ///
    /// [`WellFormedError`] when they are not one well-formed JSON value.
    pub fn from_slice(bytes: &[u8]) -> Result<RawJson, WellFormedError> {
        check_well_formed(bytes, DEFAULT_MAX_DEPTH)?;
        // Checked UTF-8 just above.
        let text = String::from_utf8_lossy(bytes);
        Ok(RawJson::trusted(&text))
    }

    /// A text already checked (a span of a checked message).
    pub(crate) fn trusted(text: &str) -> RawJson {
        RawJson(Arc::from(text.trim_matches([' ', '\t', '\n', '\r'])))
    }

    /// The JSON text of `value` (serde_json's compact form, members in name order whatever
    /// serde_json's features).
    pub fn from_value(value: &Value) -> RawJson {
        RawJson(Arc::from(jcs_digest::order::to_string(value)))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// Whether the value is an object.
    pub fn is_object(&self) -> bool {
        self.0.starts_with('{')
    }

    /// The value read strictly (`jcs_digest::parse_strict`): for what is interpreted, never
    /// for what is only carried.
    ///
    /// # Errors
    ///
    /// [`jcs_digest::StrictJsonError`] for what the strict reader refuses (an integer beyond
    /// ±(2^53−1), a number beyond the double range, …).
    pub fn to_value(&self) -> Result<Value, jcs_digest::StrictJsonError> {
        jcs_digest::parse_strict(self.as_bytes())
    }

    /// The same object with the member `name` = `value` added at its start when it has no such
    /// member; anything else unchanged (so a 2026-07-28 `resultType` can be added to an
    /// upstream's result without rewriting a byte of it).
    pub fn with_member_if_absent(&self, name: &str, value: &Value) -> RawJson {
        let has_it = match object_members(&self.0, DEFAULT_MAX_DEPTH) {
            Ok(Some(members)) => members.iter().any(|(member, _)| member == name),
            // Not an object (or, impossibly, not checked): nothing to add to.
            _ => return self.clone(),
        };
        if has_it {
            return self.clone();
        }
        // One buffer, written in place (this runs on every 2026-07-28 answer): `{`, the
        // member, a comma unless the object was empty, the rest as it was.
        let rest = self.0[1..].trim_start_matches([' ', '\t', '\n', '\r']);
        let mut text = Vec::with_capacity(self.0.len() + name.len() + 32);
        text.push(b'{');
        // Writing into a `Vec` cannot fail, and a `Value` always serializes.
        let _ = serde_json::to_writer(&mut text, name);
        text.push(b':');
        let _ = serde_json::to_writer(&mut text, &Sorted(value));
        if !rest.starts_with('}') {
            text.push(b',');
        }
        text.extend_from_slice(rest.as_bytes());
        // Made of UTF-8 text only.
        RawJson(Arc::from(String::from_utf8_lossy(&text)))
    }
}

impl From<Value> for RawJson {
    fn from(value: Value) -> RawJson {
        RawJson::from_value(&value)
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({})", self.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_text_is_kept_as_received_and_read_strictly_only_on_request() {
        let text = r#"{"z": 9007199254740993, "a": [1E+2, -0, 1e400]}"#;
        let raw = RawJson::from_slice(format!("  {text}\n").as_bytes()).unwrap();
        assert_eq!(raw.as_str(), text);
        assert!(raw.is_object());
        assert!(raw.to_value().is_err());
        let strict = RawJson::from_slice(br#"{"b":1,"a":2}"#).unwrap();
        assert_eq!(strict.to_value().unwrap(), json!({"a": 2, "b": 1}));
        assert_eq!(strict.as_str(), r#"{"b":1,"a":2}"#);
        assert!(RawJson::from_slice(br#"{"a":1,"a":2}"#).is_err());
        assert_eq!(RawJson::from(json!({"k": [1]})).as_str(), r#"{"k":[1]}"#);
    }

    #[test]
    fn a_member_is_added_only_where_absent_and_nothing_else_changes() {
        let result = json!("complete");
        let cases = [
            (r#"{"n":1E+2}"#, r#"{"resultType":"complete","n":1E+2}"#),
            ("{ }", r#"{"resultType":"complete"}"#),
            (r#"{"resultType":"other"}"#, r#"{"resultType":"other"}"#),
            (r#"{"\u0072esultType":1}"#, r#"{"\u0072esultType":1}"#),
            ("[1]", "[1]"),
        ];
        for (text, expected) in cases {
            let raw = RawJson::from_slice(text.as_bytes()).unwrap();
            assert_eq!(
                raw.with_member_if_absent("resultType", &result).as_str(),
                expected
            );
        }
    }
}
