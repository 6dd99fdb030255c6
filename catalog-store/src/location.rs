//! Where a problem is: the entry (index and `tool_name`) and the JSON Pointer of the field.

use std::fmt;

use crate::printable::Printable;

/// The catalog entry a problem belongs to: its 0-based index in the file (the same number as
/// in its JSON Pointer) and its `tool_name`, when that could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryRef {
    pub(crate) index: usize,
    pub(crate) tool_name: Option<String>,
}

impl EntryRef {
    /// The 0-based index of the entry in the file's entry array.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The entry's `tool_name`, or `None` when it is missing or not a string.
    pub fn tool_name(&self) -> Option<&str> {
        self.tool_name.as_deref()
    }
}

impl fmt::Display for EntryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool_name {
            // `{:?}` escapes quotes and control characters, so a hostile name cannot forge a
            // line of the report.
            Some(name) => write!(f, "entry {} (tool_name {name:?})", self.index),
            None => write!(f, "entry {}", self.index),
        }
    }
}

/// Where in the catalog file a problem is: the entry, if any, and an RFC 6901 JSON Pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub(crate) entry: Option<EntryRef>,
    pub(crate) pointer: String,
}

impl Location {
    /// The entry the problem belongs to; `None` for a problem with the file as a whole.
    pub fn entry(&self) -> Option<&EntryRef> {
        self.entry.as_ref()
    }

    /// The JSON Pointer (RFC 6901) of the field, e.g. `/entries/3/server/url`; `""` is the
    /// whole document.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(entry) = &self.entry {
            write!(f, "{entry} ")?;
        }
        if self.pointer.is_empty() {
            f.write_str("at the document root")
        } else {
            // Member names in a pointer come from the file: escape control characters so
            // that the report keeps one problem per line.
            write!(f, "at {}", Printable(&self.pointer))
        }
    }
}

/// `pointer` + `/` + `name`, with `~` and `/` escaped as RFC 6901 §3 requires.
pub(crate) fn child(pointer: &str, name: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + name.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for character in name.chars() {
        match character {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            other => out.push(other),
        }
    }
    out
}

/// `pointer` + `/` + `index`.
pub(crate) fn element(pointer: &str, index: usize) -> String {
    format!("{pointer}/{index}")
}
