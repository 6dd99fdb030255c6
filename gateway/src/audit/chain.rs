//! The hash chain: how an entry's `hash` is computed, and the head a writer appends to.

use std::io::Write as _;

use jcs_digest::{CanonicalizeError, Digest, canonicalize};
use serde_json::Value;

use crate::audit::members::EntryMembers;

/// Where a writer stands in the chain: the `seq` and `prev` of the next entry.
#[derive(Clone, Debug)]
pub(crate) struct ChainHead {
    pub(crate) next_seq: u64,
    pub(crate) prev: Digest,
    /// The hash preimage and the canonical member order of the entry being appended, kept
    /// between entries so that an append allocates neither (empty between appends: a clone
    /// of the head copies nothing).
    scratch: Scratch,
}

#[derive(Clone, Debug, Default)]
struct Scratch {
    preimage: Vec<u8>,
    order: Vec<usize>,
}

/// A short text written on the stack: a number, a quoted digest (73 bytes).
struct Short {
    bytes: [u8; 80],
    len: usize,
}

impl Short {
    fn of(text: std::fmt::Arguments<'_>) -> Short {
        let mut cursor = std::io::Cursor::new([0u8; 80]);
        // Every text written here fits (a u64 has 20 digits, a quoted digest 73 bytes).
        let _ = cursor.write_fmt(text);
        let len = usize::try_from(cursor.position()).unwrap_or(0);
        Short {
            bytes: cursor.into_inner(),
            len,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// What a written entry is known by: its place in the chain and its hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditReceipt {
    seq: u64,
    hash: Digest,
}

impl AuditReceipt {
    /// The entry's sequence number (0 for the first entry of the log).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The entry's `hash`, which the next entry's `prev` repeats.
    pub fn hash(&self) -> Digest {
        self.hash
    }
}

impl ChainHead {
    /// The head whose next entry has `seq` = `next_seq` and `prev` = `prev`.
    pub(crate) fn new(next_seq: u64, prev: Digest) -> ChainHead {
        ChainHead {
            next_seq,
            prev,
            scratch: Scratch::default(),
        }
    }

    /// Appends one line to `out`: `seq`, the `members` in order, `prev`, and `hash` = the digest
    /// of the RFC 8785 form of everything before it (docs/design.md §5). The head moves on.
    pub(crate) fn append(&mut self, members: &EntryMembers, out: &mut Vec<u8>) -> AuditReceipt {
        let seq = Short::of(format_args!("{}", self.next_seq));
        let prev = Short::of(format_args!("\"{}\"", self.prev));
        let mut line: Vec<(&str, &[u8])> = Vec::with_capacity(members.len() + 2);
        line.push(("seq", seq.as_bytes()));
        line.extend(members.iter());
        line.push(("prev", prev.as_bytes()));

        // Every value is already in its RFC 8785 form; the hash's preimage takes them in
        // canonical member order, the line in reading order (seq first, prev and hash last).
        // The hash is over the canonical form, so either verifies. Names are distinct ASCII
        // identifiers: their byte order is RFC 8785's UTF-16 order, and they are written as
        // they are.
        let Scratch { preimage, order } = &mut self.scratch;
        order.clear();
        order.extend(0..line.len());
        order.sort_unstable_by_key(|&index| line[index].0);
        preimage.clear();
        preimage.reserve(members.value_bytes() + 24 * line.len() + 100);
        write_members(order.iter().map(|&index| line[index]), preimage);
        let hash = Digest::of(preimage);

        let hash_text = Short::of(format_args!("\"{hash}\""));
        out.reserve(preimage.len() + hash_text.len + 10);
        let members_in_reading_order = line
            .iter()
            .copied()
            .chain(std::iter::once(("hash", hash_text.as_bytes())));
        write_members(members_in_reading_order, out);
        out.push(b'\n');
        // Empty between appends (a clone of the head then copies nothing); the capacity stays.
        preimage.clear();
        order.clear();
        let receipt = AuditReceipt {
            seq: self.next_seq,
            hash,
        };
        self.next_seq += 1;
        self.prev = hash;
        receipt
    }
}

/// Writes `{"name":value,…}` from names and canonical value bytes.
fn write_members<'a>(members: impl Iterator<Item = (&'a str, &'a [u8])>, out: &mut Vec<u8>) {
    out.push(b'{');
    for (index, (name, value)) in members.enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(value);
    }
    out.push(b'}');
}

/// The `hash` of an entry given without its `hash` member: SHA-256 of its RFC 8785 bytes.
pub(crate) fn entry_hash(entry_without_hash: &Value) -> Result<Digest, CanonicalizeError> {
    canonicalize(entry_without_hash).map(|bytes| Digest::of(&bytes))
}
