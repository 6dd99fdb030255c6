//! An entry's members written straight into their RFC 8785 bytes, one buffer per entry: the
//! audit line and its hash are made from these bytes, with no `Value` built for what the gateway
//! itself writes (texts, digests, numbers), so a decision costs a few allocations, not one per
//! member.

use std::io::Write as _;
use std::ops::Range;

use jcs_digest::{CanonicalizeError, Digest, write_canonical, write_canonical_str};
use serde_json::Value;

/// The members of one entry in reading order, each value's canonical bytes in one buffer.
#[derive(Debug, Default)]
pub(crate) struct EntryMembers {
    bytes: Vec<u8>,
    members: Vec<(&'static str, Range<usize>)>,
}

impl EntryMembers {
    pub(crate) fn new() -> EntryMembers {
        EntryMembers {
            bytes: Vec::with_capacity(640),
            members: Vec::with_capacity(20),
        }
    }

    /// The members in the order they were written: name and canonical value bytes.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'static str, &[u8])> {
        self.members
            .iter()
            .map(|(name, span)| (*name, &self.bytes[span.clone()]))
    }

    /// How many members there are.
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// The canonical bytes of every value, for sizing what is built from them.
    pub(crate) fn value_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// `name` with the value `write` appends (canonical bytes).
    fn member(&mut self, name: &'static str, write: impl FnOnce(&mut Vec<u8>)) {
        let start = self.bytes.len();
        write(&mut self.bytes);
        self.members.push((name, start..self.bytes.len()));
    }

    /// `name`: `text`, cut to `limit` bytes as [`bounded_into`] cuts.
    pub(crate) fn text(&mut self, name: &'static str, text: &str, limit: usize) {
        self.member(name, |out| bounded_into(text, limit, out));
    }

    /// `name`: `text` cut to `limit`, or `null`.
    pub(crate) fn optional_text(&mut self, name: &'static str, text: Option<&str>, limit: usize) {
        self.member(name, |out| match text {
            Some(text) => bounded_into(text, limit, out),
            None => out.extend_from_slice(b"null"),
        });
    }

    /// `name`: `null`.
    pub(crate) fn null(&mut self, name: &'static str) {
        self.member(name, |out| out.extend_from_slice(b"null"));
    }

    /// `name`: the RFC 3339 UTC text of `time` (microseconds), written in place.
    pub(crate) fn time(&mut self, name: &'static str, time: std::time::SystemTime) {
        self.member(name, |out| {
            // Digits, `-`, `:`, `T`, `.` and `Z`: nothing a JSON string escapes.
            out.push(b'"');
            crate::audit::time::write_rfc3339_utc(time, out);
            out.push(b'"');
        });
    }

    /// `name`: the digest's `sha256:…` text, or `null`.
    pub(crate) fn digest(&mut self, name: &'static str, digest: Option<&Digest>) {
        self.member(name, |out| write_digest(digest, out));
    }

    /// `name`: a number of at most 2^53 − 1 (written exactly, as RFC 8785 writes it).
    pub(crate) fn number(&mut self, name: &'static str, number: u64) {
        debug_assert!(number < 1 << 53);
        self.member(name, |out| {
            let _ = write!(out, "{number}");
        });
    }

    /// `name`: `items`, each cut to `limit`, as an array of strings.
    pub(crate) fn texts<'a>(
        &mut self,
        name: &'static str,
        items: impl Iterator<Item = &'a str>,
        limit: usize,
    ) {
        self.member(name, |out| write_texts(items, limit, out));
    }

    /// `name`: a value as it is (its canonical form).
    ///
    /// # Errors
    ///
    /// [`CanonicalizeError`] for an integer outside ±(2^53−1); nothing is written then.
    pub(crate) fn value(
        &mut self,
        name: &'static str,
        value: &Value,
    ) -> Result<(), CanonicalizeError> {
        let start = self.bytes.len();
        write_canonical(value, &mut self.bytes)?;
        self.members.push((name, start..self.bytes.len()));
        Ok(())
    }

    /// `name`: an object whose members `write` appends, already in canonical (UTF-16) order;
    /// the braces and commas are this function's.
    pub(crate) fn object(&mut self, name: &'static str, write: impl FnOnce(&mut ObjectWriter<'_>)) {
        self.member(name, |out| {
            out.push(b'{');
            let mut object = ObjectWriter { out, first: true };
            write(&mut object);
            out.push(b'}');
        });
    }
}

/// The members of a nested object, written in the order given (which must be canonical).
pub(crate) struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl ObjectWriter<'_> {
    fn name(&mut self, name: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_canonical_str(name, self.out);
        self.out.push(b':');
    }

    /// `name`: `text` cut to `limit`, or `null`.
    pub(crate) fn optional_text(&mut self, name: &str, text: Option<&str>, limit: usize) {
        self.name(name);
        match text {
            Some(text) => bounded_into(text, limit, self.out),
            None => self.out.extend_from_slice(b"null"),
        }
    }

    /// `name`: `items`, each cut to `limit`, as an array of strings.
    pub(crate) fn texts<'a>(
        &mut self,
        name: &str,
        items: impl Iterator<Item = &'a str>,
        limit: usize,
    ) {
        self.name(name);
        write_texts(items, limit, self.out);
    }
}

fn write_texts<'a>(items: impl Iterator<Item = &'a str>, limit: usize, out: &mut Vec<u8>) {
    out.push(b'[');
    for (index, item) in items.enumerate() {
        if index > 0 {
            out.push(b',');
        }
        bounded_into(item, limit, out);
    }
    out.push(b']');
}

fn write_digest(digest: Option<&Digest>, out: &mut Vec<u8>) {
    match digest {
        // `sha256:` and lowercase hex: nothing a JSON string escapes.
        Some(digest) => {
            let _ = write!(out, "\"{digest}\"");
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// The end of `text`'s longest prefix of at most `limit` bytes that ends on a character
/// boundary.
fn cut_at(text: &str, limit: usize) -> usize {
    let mut end = limit.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// Writes `text` as an RFC 8785 string, cut at a character boundary to at most `limit` bytes
/// plus a marker saying how much was cut (a client can send a long tool name; an upstream a long
/// error).
pub(crate) fn bounded_into(text: &str, limit: usize, out: &mut Vec<u8>) {
    if text.len() <= limit {
        write_canonical_str(text, out);
        return;
    }
    write_canonical_str(&bounded(text, limit), out);
}

/// `text`, cut as [`bounded_into`] writes it.
pub(crate) fn bounded(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let end = cut_at(text, limit);
    format!("{}…[{} more bytes]", &text[..end], text.len() - end)
}
