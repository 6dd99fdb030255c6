//! Reading the members of one JSON object against a fixed schema, collecting every problem.
//!
//! The schema is read from the strictly read members ([`SmallObject`]) by hand rather than
//! with `#[derive(Deserialize)]`: serde's derive stops at the first problem and its messages
//! carry no JSON Pointer, and the catalog must report every problem, each at its field.

use jcs_digest::JsonType;

use crate::error::CatalogError;
use crate::location::{EntryRef, Location, child};
use crate::small::{SmallObject, SmallValue};

/// A member read against the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field<T> {
    /// Absent, or `null` where the member is optional.
    Absent,
    /// Present and of the right type.
    Valid(T),
    /// Present and wrong; the problem has been recorded.
    Invalid,
}

impl<T> Field<T> {
    pub(crate) fn valid(self) -> Option<T> {
        match self {
            Field::Valid(value) => Some(value),
            Field::Absent | Field::Invalid => None,
        }
    }

    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Field<U> {
        match self {
            Field::Valid(value) => Field::Valid(f(value)),
            Field::Absent => Field::Absent,
            Field::Invalid => Field::Invalid,
        }
    }
}

/// The problems of one entry (or of the catalog object), and where they are.
pub(crate) struct Problems<'a> {
    pub(crate) entry: Option<EntryAt<'a>>,
    pub(crate) errors: &'a mut Vec<CatalogError>,
}

/// The entry problems are recorded for: its index and its `tool_name` when readable, copied
/// into each problem's [`EntryRef`] (not before: most entries have none).
#[derive(Clone, Copy)]
pub(crate) struct EntryAt<'a> {
    pub(crate) index: usize,
    pub(crate) tool_name: Option<&'a str>,
}

impl Problems<'_> {
    pub(crate) fn at(&self, pointer: String) -> Location {
        Location {
            entry: self.entry.map(|entry| EntryRef {
                index: entry.index,
                tool_name: entry.tool_name.map(str::to_owned),
            }),
            pointer,
        }
    }

    pub(crate) fn push(&mut self, error: CatalogError) {
        self.errors.push(error);
    }

    /// Records every member of `object` not in `allowed`, with a suggestion for near misses.
    pub(crate) fn refuse_unknown_members(
        &mut self,
        object: &SmallObject<'_>,
        pointer: &str,
        allowed: &'static [&'static str],
        why: &'static str,
    ) {
        // In name order, as the tree of an object iterates (not the file's order).
        let names = object.in_name_order().into_iter().map(|(name, _)| name);
        self.refuse_unknown_names(names, pointer, allowed, why);
    }

    /// Records every name of `names` (in the order given) not in `allowed`, as
    /// [`refuse_unknown_members`](Self::refuse_unknown_members) does for an object's.
    pub(crate) fn refuse_unknown_names<'n>(
        &mut self,
        names: impl IntoIterator<Item = &'n str>,
        pointer: &str,
        allowed: &'static [&'static str],
        why: &'static str,
    ) {
        for member in names {
            if !allowed.contains(&member) {
                let error = CatalogError::UnknownMember {
                    at: self.at(child(pointer, member)),
                    member: member.to_owned(),
                    suggestion: closest(member, allowed),
                    allowed,
                    why,
                };
                self.push(error);
            }
        }
    }

    /// A member that must be a non-empty string.
    pub(crate) fn required_string<'v>(
        &mut self,
        object: &'v SmallObject<'_>,
        pointer: &str,
        member: &'static str,
        hint: &'static str,
    ) -> Field<&'v str> {
        match object.get(member) {
            None => {
                let at = self.at(child(pointer, member));
                self.push(CatalogError::MissingMember { at, member, hint });
                Field::Invalid
            }
            Some(value) => self.non_empty_string(value, pointer, member, hint),
        }
    }

    /// A member that may be absent or `null`, and otherwise must be a non-empty string.
    pub(crate) fn optional_string<'v>(
        &mut self,
        object: &'v SmallObject<'_>,
        pointer: &str,
        member: &'static str,
        hint: &'static str,
    ) -> Field<&'v str> {
        match object.get(member) {
            None | Some(SmallValue::Null) => Field::Absent,
            Some(value) => self.non_empty_string(value, pointer, member, hint),
        }
    }

    /// A member that may be absent or `null` (read as empty), and otherwise must be an array
    /// (`expected` names what of). `None` when it is not (the problem is recorded).
    pub(crate) fn optional_array<'v, 's>(
        &mut self,
        object: &'v SmallObject<'s>,
        pointer: &str,
        member: &'static str,
        expected: &'static str,
    ) -> Option<&'v [SmallValue<'s>]> {
        match object.get(member) {
            None | Some(SmallValue::Null) => Some(&[]),
            Some(SmallValue::Array(elements)) => Some(elements),
            Some(other) => {
                self.wrong_type(child(pointer, member), expected, other);
                None
            }
        }
    }

    fn non_empty_string<'v>(
        &mut self,
        value: &'v SmallValue<'_>,
        pointer: &str,
        member: &'static str,
        hint: &'static str,
    ) -> Field<&'v str> {
        match value {
            SmallValue::String(text) if text.is_empty() => {
                let at = self.at(child(pointer, member));
                self.push(CatalogError::EmptyValue { at, member, hint });
                Field::Invalid
            }
            SmallValue::String(text) => Field::Valid(text),
            other => {
                self.wrong_type(child(pointer, member), "a string", other);
                Field::Invalid
            }
        }
    }

    pub(crate) fn wrong_type(
        &mut self,
        pointer: String,
        expected: &'static str,
        found: &SmallValue<'_>,
    ) {
        self.wrong_type_of(pointer, expected, found.json_type());
    }

    /// As [`wrong_type`](Self::wrong_type), for a value read as its type alone.
    pub(crate) fn wrong_type_of(
        &mut self,
        pointer: String,
        expected: &'static str,
        found: JsonType,
    ) {
        let at = self.at(pointer);
        self.push(CatalogError::WrongType {
            at,
            expected,
            found: found.with_article(),
        });
    }
}

/// The JSON type of `value`, with its article, for messages.
pub(crate) fn json_type(value: &SmallValue<'_>) -> &'static str {
    value.json_type().with_article()
}

/// The allowed name `member` most likely meant: equal ignoring case and `_`, or at most two
/// edits away. Long names are not compared (a hostile file must not cost quadratic time).
fn closest(member: &str, allowed: &[&'static str]) -> Option<&'static str> {
    const LONGEST_COMPARED: usize = 64;
    if member.len() > LONGEST_COMPARED {
        return None;
    }
    let folded = fold_spelling(member);
    if let Some(same) = allowed.iter().find(|name| fold_spelling(name) == folded) {
        return Some(same);
    }
    allowed
        .iter()
        .map(|name| (edit_distance(member, name), *name))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// `inputSchema`, `input_schema` and `InputSchema` all fold to `inputschema`.
fn fold_spelling(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod unit {
    use super::{closest, edit_distance};

    #[test]
    fn suggests_near_misses_only() {
        let allowed = &["tls_fingerprint", "spiffe_id", "url"];
        assert_eq!(closest("tls_fingerprnt", allowed), Some("tls_fingerprint"));
        assert_eq!(closest("tlsFingerprint", allowed), Some("tls_fingerprint"));
        assert_eq!(closest("uri", allowed), Some("url"));
        assert_eq!(closest("endpoint", allowed), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
