//! The catalog file read from its bytes, strictly, in one pass: the two shapes (a bare array
//! of entries, or an object with `entries`), and each entry's members, with no `Value` tree
//! of the file.
//!
//! Each entry is read on its own, into what depends on its bytes alone (not on its index), so
//! that jcs-digest can read the two halves of a large entry array at once
//! (`StreamReader::elements_with`). The members other than `approved_definition` are small
//! (names, the `server` object) and are read into a [`SmallValue`] each, for the schema
//! readers; the definition is read by [`DefinitionRead::read`], and digested at the end of
//! the entry's read ([`finish`](crate::definition::DefinitionMembers::finish)), once the
//! upstream name is known wherever it is in the entry: its canonical bytes are then not kept.

use jcs_digest::{JsonType, StreamReader, StrictJsonError};

use crate::definition::{DefinitionRead, entry_upstream_name, with_scratch};
use crate::small::{SmallObject, SmallValue, member_name};

/// One element of the entry array, read.
pub(crate) enum ElementRead<'a> {
    /// An object: its members other than `approved_definition`, and that one.
    Entry {
        members: SmallObject<'a>,
        definition: Option<DefinitionRead<'a>>,
        /// The `server` member's value as written (read strictly), when it was read from
        /// bytes: entries that write one server alike are read once ([`ServersRead`]).
        ///
        /// [`ServersRead`]: crate::server::ServersRead
        server_written: Option<&'a [u8]>,
    },
    /// Not an object, so not an entry.
    NotAnObject(JsonType),
}

/// The document, read.
pub(crate) enum DocumentRead<'a> {
    /// The bare array of entries.
    Entries(Vec<ElementRead<'a>>),
    /// The object form: its members, with `entries` read as entries when it is an array (and
    /// then not among `members`).
    Object {
        members: SmallObject<'a>,
        entries: Option<Vec<ElementRead<'a>>>,
    },
    /// Neither an array nor an object.
    Other(JsonType),
}

impl<'a> DocumentRead<'a> {
    /// Reads `bytes` with jcs-digest's streaming reader: the errors of
    /// [`jcs_digest::parse_strict`] (the first in document order), and what reading its value
    /// would give.
    pub(crate) fn read(bytes: &'a [u8]) -> Result<DocumentRead<'a>, StrictJsonError> {
        let mut reader = StreamReader::new(bytes);
        let read_element = |reader: &mut StreamReader<'a>| ElementRead::read(reader, bytes);
        let document = match reader.peek() {
            Some(JsonType::Array) => DocumentRead::Entries(reader.elements_with(read_element)?),
            Some(JsonType::Object) => {
                reader.enter_object()?;
                let mut members = SmallObject::default();
                let mut entries = None;
                while let Some(name) = reader.next_member()? {
                    let name = member_name(name);
                    if name == "entries" && reader.peek() == Some(JsonType::Array) {
                        entries = Some(reader.elements_with(read_element)?);
                    } else {
                        members.insert(name, SmallValue::read(&mut reader, bytes)?);
                    }
                }
                DocumentRead::Object { members, entries }
            }
            _ => DocumentRead::Other(reader.skip_value()?),
        };
        reader.finish()?;
        Ok(document)
    }

    /// What [`read`](Self::read) gives for the bytes `document` was parsed from
    /// ([`jcs_digest::parse_strict`]): the tree loader's path, the reference the streaming
    /// one is tested against.
    #[cfg(any(test, feature = "reference-loader"))]
    pub(crate) fn from_value(document: serde_json::Value) -> DocumentRead<'static> {
        use serde_json::Value;
        let elements = |elements: Vec<Value>| -> Vec<ElementRead<'static>> {
            elements.into_iter().map(ElementRead::from_value).collect()
        };
        match document {
            Value::Array(entries) => DocumentRead::Entries(elements(entries)),
            Value::Object(mut members) => {
                let entries = match members.remove("entries") {
                    Some(Value::Array(entries)) => Some(elements(entries)),
                    Some(other) => {
                        members.insert("entries".to_owned(), other);
                        None
                    }
                    None => None,
                };
                let members = SmallObject::from_map(members);
                DocumentRead::Object { members, entries }
            }
            other => DocumentRead::Other(JsonType::of_value(&other)),
        }
    }
}

impl<'a> ElementRead<'a> {
    fn read(
        reader: &mut StreamReader<'a>,
        input: &'a [u8],
    ) -> Result<ElementRead<'a>, StrictJsonError> {
        if reader.peek() != Some(JsonType::Object) {
            return reader.skip_value().map(ElementRead::NotAnObject);
        }
        reader.enter_object()?;
        // The definition's canonical bytes go to this thread's buffer, used up below.
        with_scratch(|canonical| {
            let mut members = SmallObject::default();
            let mut definition = None;
            let mut server_written = None;
            while let Some(name) = reader.next_member()? {
                if name == "approved_definition" {
                    definition = Some(DefinitionRead::read(reader, input, canonical)?);
                } else {
                    let name = member_name(name);
                    let is_server = name == "server";
                    reader.peek();
                    let start = reader.offset();
                    members.insert(name, SmallValue::read(reader, input)?);
                    if is_server {
                        server_written = input.get(start..reader.offset());
                    }
                }
            }
            Ok(ElementRead::entry(
                members,
                definition,
                server_written,
                canonical,
            ))
        })
    }

    /// The entry of `members` and `definition`, whose canonical bytes are in `canonical`.
    fn entry(
        members: SmallObject<'a>,
        mut definition: Option<DefinitionRead<'a>>,
        server_written: Option<&'a [u8]>,
        canonical: &mut Vec<u8>,
    ) -> ElementRead<'a> {
        if let Some(DefinitionRead::Object(definition)) = &mut definition {
            definition.finish(canonical, entry_upstream_name(&members));
        }
        ElementRead::Entry {
            members,
            definition,
            server_written,
        }
    }

    #[cfg(any(test, feature = "reference-loader"))]
    fn from_value(element: serde_json::Value) -> ElementRead<'static> {
        let serde_json::Value::Object(mut members) = element else {
            return ElementRead::NotAnObject(JsonType::of_value(&element));
        };
        let mut canonical = Vec::new();
        let definition = members
            .remove("approved_definition")
            .map(|definition| DefinitionRead::from_value(definition, &mut canonical));
        ElementRead::entry(
            SmallObject::from_map(members),
            definition,
            None,
            &mut canonical,
        )
    }
}
