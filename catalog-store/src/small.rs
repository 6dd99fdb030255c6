//! The small members of the catalog (an entry's names and `server`, the object form's own
//! members) as the schema readers take them: read straight from the streaming reader, with
//! no `serde_json::Value` per member.
//!
//! Why not a `Value`: its objects are `BTreeMap`s whose every name is a `String` of its own;
//! a load read some 70,000 such small trees (and freed them), each a dozen allocations, for
//! values whose types and texts are all the checks look at. Here an object is one `Vec` of
//! members in file order, the names the schema knows are not allocated, and a number or a
//! boolean is kept as its type alone (no check reads more of it).

use std::borrow::Cow;

use jcs_digest::{JsonType, StreamReader, StrictJsonError};

use crate::catalog::CATALOG_MEMBERS;
use crate::entry::ENTRY_MEMBERS;
use crate::schema::SERVER_MEMBERS;

/// The room an object is given at its first member.
const MEMBERS_AT_FIRST: usize = 7;

/// A member value, as the schema readers see it; its strings borrowed from the document
/// when they are written without escapes (most are: names, URLs, fingerprints, times).
#[derive(Debug, PartialEq)]
pub(crate) enum SmallValue<'a> {
    Null,
    /// `true`, `false` or a number (read strictly): no check looks past its type.
    Scalar(JsonType),
    String(Cow<'a, str>),
    Array(Vec<SmallValue<'a>>),
    Object(SmallObject<'a>),
}

/// An object's members, in file order (the strict reader has refused duplicate names).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SmallObject<'a> {
    members: Vec<(Cow<'static, str>, SmallValue<'a>)>,
}

impl<'a> SmallValue<'a> {
    /// Reads the next value of `reader`, a reader of `input`, as the tree reader would (the
    /// same errors).
    pub(crate) fn read(
        reader: &mut StreamReader<'a>,
        input: &'a [u8],
    ) -> Result<SmallValue<'a>, StrictJsonError> {
        match reader.peek() {
            Some(JsonType::String) => read_string_text(reader, input).map(SmallValue::String),
            Some(JsonType::Array) => {
                reader.enter_array()?;
                let mut elements = Vec::new();
                while reader.next_element()? {
                    elements.push(SmallValue::read(reader, input)?);
                }
                Ok(SmallValue::Array(elements))
            }
            Some(JsonType::Object) => {
                reader.enter_object()?;
                let mut object = SmallObject::default();
                while let Some(name) = reader.next_member()? {
                    let name = member_name(name);
                    let value = SmallValue::read(reader, input)?;
                    object.insert(name, value);
                }
                Ok(SmallValue::Object(object))
            }
            // A value `peek` cannot type is refused here, with the tree reader's error.
            _ => Ok(SmallValue::of_scalar(reader.skip_value()?)),
        }
    }

    fn of_scalar(found: JsonType) -> SmallValue<'a> {
        match found {
            JsonType::Null => SmallValue::Null,
            other => SmallValue::Scalar(other),
        }
    }

    /// What [`read`](Self::read) gives for the bytes `value` was parsed from (the tree
    /// loader's path, the reference the streaming one is tested against).
    #[cfg(any(test, feature = "reference-loader"))]
    pub(crate) fn from_value(value: serde_json::Value) -> SmallValue<'static> {
        use serde_json::Value;
        match value {
            Value::String(text) => SmallValue::String(Cow::Owned(text)),
            Value::Array(elements) => {
                SmallValue::Array(elements.into_iter().map(SmallValue::from_value).collect())
            }
            Value::Object(members) => SmallValue::Object(SmallObject::from_map(members)),
            other => SmallValue::of_scalar(JsonType::of_value(&other)),
        }
    }

    /// The JSON type of the value.
    pub(crate) fn json_type(&self) -> JsonType {
        match self {
            SmallValue::Null => JsonType::Null,
            SmallValue::Scalar(found) => *found,
            SmallValue::String(_) => JsonType::String,
            SmallValue::Array(_) => JsonType::Array,
            SmallValue::Object(_) => JsonType::Object,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            SmallValue::String(text) => Some(text),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, SmallValue::Null)
    }
}

impl<'a> SmallObject<'a> {
    /// The value of member `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&SmallValue<'a>> {
        self.members
            .iter()
            .find(|(member, _)| member == name)
            .map(|(_, value)| value)
    }

    /// Adds a member (whose name, from [`member_name`], the object does not hold yet).
    pub(crate) fn insert(&mut self, name: Cow<'static, str>, value: SmallValue<'a>) {
        // An entry or a network server has at most 7 members: room for them at the first,
        // rather than growing three times (no more than a `BTreeMap`'s first node takes).
        if self.members.capacity() == 0 {
            self.members.reserve_exact(MEMBERS_AT_FIRST);
        }
        self.members.push((name, value));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members in name order (code point order, as the tree's `BTreeMap` iterated them):
    /// the order problems are reported in.
    pub(crate) fn in_name_order(&self) -> Vec<(&str, &SmallValue<'a>)> {
        let mut members: Vec<(&str, &SmallValue<'a>)> = self
            .members
            .iter()
            .map(|(name, value)| (&**name, value))
            .collect();
        members.sort_unstable_by(|a, b| a.0.cmp(b.0));
        members
    }

    /// The object of a tree (the reference loader's path).
    #[cfg(any(test, feature = "reference-loader"))]
    pub(crate) fn from_map(
        members: serde_json::Map<String, serde_json::Value>,
    ) -> SmallObject<'static> {
        SmallObject {
            members: members
                .into_iter()
                .map(|(name, value)| (member_name(&name), SmallValue::from_value(value)))
                .collect(),
        }
    }
}

/// Reads the string that is the next value of `reader` (a reader of `input`; the caller has
/// seen it is one with `peek`): its text, borrowed from `input` when it holds no escape.
pub(crate) fn read_string_text<'a>(
    reader: &mut StreamReader<'a>,
    input: &'a [u8],
) -> Result<Cow<'a, str>, StrictJsonError> {
    let start = reader.offset();
    reader.skip_value()?;
    Ok(string_text(
        input.get(start..reader.offset()).unwrap_or_default(),
    ))
}

/// The text of the JSON string written as `written` (read strictly, quotes included):
/// borrowed when it holds no escape, decoded otherwise.
fn string_text(written: &[u8]) -> Cow<'_, str> {
    let inner = written
        .strip_prefix(b"\"")
        .and_then(|inner| inner.strip_suffix(b"\""));
    if let Some(inner) = inner.filter(|inner| !inner.contains(&b'\\')) {
        // UTF-8: the reader checked it.
        if let Ok(text) = std::str::from_utf8(inner) {
            return Cow::Borrowed(text);
        }
    }
    // Read strictly once already, so it reads again.
    let decoded = StreamReader::new(written).string_value();
    Cow::Owned(decoded.ok().flatten().unwrap_or_default())
}

/// `name`, not allocated when it is one the schema knows (most names in a catalog are).
pub(crate) fn member_name(name: &str) -> Cow<'static, str> {
    let known = [ENTRY_MEMBERS, SERVER_MEMBERS, CATALOG_MEMBERS];
    match known
        .iter()
        .flat_map(|names| names.iter())
        .find(|known| **known == name)
    {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(name.to_owned()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod unit {
    use std::borrow::Cow;

    use jcs_digest::{JsonType, StreamReader};

    use super::{SmallObject, SmallValue};

    /// The streaming read and the tree's conversion give the same value, every type included.
    #[test]
    fn a_value_read_from_bytes_is_the_trees() {
        let text = br#"{"url": "https://a.example", "x": [1, true, null, "\u00e9", {}], "server": {"b": 2.5, "a": false}, "n": null}"#;
        let mut reader = StreamReader::new(text);
        let read = SmallValue::read(&mut reader, text).unwrap();
        reader.finish().unwrap();
        let tree = SmallValue::from_value(jcs_digest::parse_strict(text).unwrap());
        let SmallValue::Object(object) = &read else {
            panic!("{read:?}")
        };
        let names: Vec<&str> = object
            .in_name_order()
            .iter()
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(names, ["n", "server", "url", "x"]);
        assert_eq!(object.get("n"), Some(&SmallValue::Null));
        // A string without escapes is borrowed from the bytes; one with escapes is decoded.
        assert!(matches!(
            object.get("url"),
            Some(SmallValue::String(Cow::Borrowed("https://a.example")))
        ));
        let Some(SmallValue::Array(elements)) = object.get("x") else {
            panic!()
        };
        assert!(matches!(
            elements.get(3),
            Some(SmallValue::String(Cow::Owned(text))) if text == "\u{e9}"
        ));
        let SmallValue::Object(server) = object.get("server").unwrap() else {
            panic!()
        };
        assert_eq!(
            server.get("b").map(SmallValue::json_type),
            Some(JsonType::Number)
        );
        // The tree iterates in name order, the file's order is kept here: compare as sorted.
        let SmallValue::Object(tree_object) = &tree else {
            panic!("{tree:?}")
        };
        assert_eq!(
            object.in_name_order().len(),
            tree_object.in_name_order().len()
        );
        for ((name, value), (tree_name, tree_value)) in object
            .in_name_order()
            .into_iter()
            .zip(tree_object.in_name_order())
        {
            assert_eq!(name, tree_name);
            match (value, tree_value) {
                (SmallValue::Object(a), SmallValue::Object(b)) => {
                    assert_eq!(a.in_name_order(), b.in_name_order())
                }
                (a, b) => assert_eq!(a, b),
            }
        }
        assert!(SmallObject::default().is_empty());
    }

    /// A strict-JSON error inside a small member is the tree reader's, its pointer included.
    #[test]
    fn an_error_inside_is_the_tree_readers() {
        for text in [
            &br#"{"server": {"url": "a", "url": "b"}}"#[..],
            br#"{"server": [1, 2, tru]}"#,
            br#"{"server": {"x": 1e400}}"#,
            b"{\"server\": \"\\ud800\"}",
        ] {
            let mut reader = StreamReader::new(text);
            let read = SmallValue::read(&mut reader, text).map(|_| ());
            let tree = jcs_digest::parse_strict(text).map(|_| ());
            assert_eq!(read.unwrap_err().to_string(), tree.unwrap_err().to_string());
        }
    }
}
