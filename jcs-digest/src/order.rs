//! One member order for `serde_json` objects, whatever serde_json's cargo features.
//!
//! A `serde_json::Map` iterates in name order (it is a `BTreeMap`) unless some crate in the
//! build turns on serde_json's `preserve_order` feature, which makes it an `IndexMap`: insertion
//! order, and `remove` moves the last member into the hole. Cargo unifies features across a
//! build, so a library cannot know which it gets (cedar-policy-core, for one, turns the feature
//! on for every crate in toolgate's build). Whatever this workspace shows, writes or decides from
//! an object's members in turn goes through this module instead of the map's own order:
//!
//! - [`members`] and [`names`]: an object's members in name order (Unicode code point order, the
//!   order of `BTreeMap<String, _>`), without allocating when the map iterates that way already;
//! - [`Sorted`]: a `Value` that serializes (and displays) with every object in that order, so
//!   JSON text is byte for byte what serde_json writes without `preserve_order`;
//! - [`to_string`], [`to_string_pretty`] and [`to_vec`] for the common cases.
//!
//! RFC 8785 sorts by UTF-16 code units instead; [`canonicalize`](crate::canonicalize) does that
//! itself and does not depend on the map's order either.
//!
//! ```
//! use serde_json::{Map, Value, json};
//!
//! let mut object = Map::new();
//! object.insert("b".to_owned(), json!(1));
//! object.insert("a".to_owned(), json!({"y": 2, "x": 3}));
//! let names: Vec<&String> = jcs_digest::order::names(&object).collect();
//! assert_eq!(names, ["a", "b"]);
//! let value = Value::Object(object);
//! assert_eq!(jcs_digest::order::to_string(&value), r#"{"a":{"x":3,"y":2},"b":1}"#);
//! assert_eq!(jcs_digest::order::Sorted(&value).to_string(), r#"{"a":{"x":3,"y":2},"b":1}"#);
//! ```

use std::fmt;

use serde::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

/// The members of one object in name order (see [`members`]).
#[derive(Debug)]
pub struct Members<'v>(Inner<'v>);

#[derive(Debug)]
enum Inner<'v> {
    /// The map iterates in name order already (always so without `preserve_order`).
    InOrder(serde_json::map::Iter<'v>),
    /// The members, sorted by name.
    Sorted(std::vec::IntoIter<(&'v String, &'v Value)>),
}

impl<'v> Iterator for Members<'v> {
    type Item = (&'v String, &'v Value);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Inner::InOrder(members) => members.next(),
            Inner::Sorted(members) => members.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            Inner::InOrder(members) => members.size_hint(),
            Inner::Sorted(members) => members.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Members<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Inner::InOrder(members) => members.next_back(),
            Inner::Sorted(members) => members.next_back(),
        }
    }
}

impl ExactSizeIterator for Members<'_> {}

/// The members of `object` in name order (code point order, as `BTreeMap<String, _>` and
/// serde_json without `preserve_order` iterate), whatever serde_json's features. Sorts only
/// when the map's own order differs.
pub fn members(object: &Map<String, Value>) -> Members<'_> {
    let mut names = object.keys();
    let in_order = match names.next() {
        None => true,
        Some(first) => names
            .try_fold(first, |previous, name| (previous < name).then_some(name))
            .is_some(),
    };
    if in_order {
        return Members(Inner::InOrder(object.iter()));
    }
    let mut sorted: Vec<(&String, &Value)> = object.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    Members(Inner::Sorted(sorted.into_iter()))
}

/// The member names of `object` in name order (see [`members`]).
pub fn names(object: &Map<String, Value>) -> impl DoubleEndedIterator<Item = &String> {
    members(object).map(|(name, _)| name)
}

/// A `Value` whose objects serialize with their members in name order ([`members`]), so that
/// its JSON text is the same whatever serde_json's features: `Display` writes it compact
/// (`{:#}` pretty), and `Serialize` lets it stand anywhere serde writes a value.
#[derive(Clone, Copy, Debug)]
pub struct Sorted<'v>(pub &'v Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => serializer.collect_seq(items.iter().map(Sorted)),
            Value::Object(object) => {
                serializer.collect_map(members(object).map(|(name, value)| (name, Sorted(value))))
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

impl fmt::Display for Sorted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = if f.alternate() {
            serde_json::to_string_pretty(self)
        } else {
            serde_json::to_string(self)
        };
        // Writing a `Value` cannot fail: its member names are strings.
        f.write_str(&text.map_err(|_| fmt::Error)?)
    }
}

/// `value` as compact JSON text, objects' members in name order.
pub fn to_string(value: &Value) -> String {
    Sorted(value).to_string()
}

/// `value` as pretty JSON text (serde_json's two-space form), objects' members in name order.
pub fn to_string_pretty(value: &Value) -> String {
    format!("{:#}", Sorted(value))
}

/// `value` as compact JSON bytes, objects' members in name order.
pub fn to_vec(value: &Value) -> Vec<u8> {
    to_string(value).into_bytes()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An object whose map holds its members out of name order when `preserve_order` is on.
    fn unsorted() -> Value {
        let mut object = Map::new();
        for name in ["é", "b", "a", "\u{10000}", "\u{e000}", "B"] {
            let mut inner = Map::new();
            inner.insert("z".to_owned(), json!([{"q": 1, "p": 2}]));
            inner.insert("y".to_owned(), json!(null));
            object.insert(name.to_owned(), Value::Object(inner));
        }
        Value::Object(object)
    }

    #[test]
    fn members_come_in_code_point_order() {
        let value = unsorted();
        let object = value.as_object().unwrap();
        let forward: Vec<&str> = names(object).map(String::as_str).collect();
        assert_eq!(forward, ["B", "a", "b", "é", "\u{e000}", "\u{10000}"]);
        let back: Vec<&str> = names(object).rev().map(String::as_str).collect();
        assert_eq!(back.len(), 6);
        assert_eq!(back[0], "\u{10000}");
        assert_eq!(members(object).len(), 6);
        assert_eq!(members(&Map::new()).next(), None);
    }

    #[test]
    fn text_is_what_serde_json_writes_without_preserve_order() {
        let value = unsorted();
        let inner = r#"{"y":null,"z":[{"p":2,"q":1}]}"#;
        let expected = format!(
            "{{\"B\":{inner},\"a\":{inner},\"b\":{inner},\"é\":{inner},\"\u{e000}\":{inner},\
             \"\u{10000}\":{inner}}}"
        );
        assert_eq!(to_string(&value), expected);
        assert_eq!(Sorted(&value).to_string(), expected);
        assert_eq!(String::from_utf8(to_vec(&value)).unwrap(), expected);
        let pretty = to_string_pretty(&json!({"b": [1, {"d": true, "c": "x"}], "a": {}}));
        assert_eq!(
            pretty,
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"c\": \"x\",\n      \"d\": true\n    }\n  ]\n}"
        );
        assert_eq!(to_string(&json!(1.5)), "1.5");
        assert_eq!(to_string(&json!("a\"b")), r#""a\"b""#);
    }
}
