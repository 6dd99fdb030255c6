//! The hash chain: how an entry's `hash` is computed, and the head a writer appends to.

use jcs_digest::{CanonicalizeError, Digest, canonicalize, write_canonical};
use serde_json::{Map, Value};

/// Where a writer stands in the chain: the `seq` and `prev` of the next entry.
#[derive(Clone, Debug)]
pub(crate) struct ChainHead {
    pub(crate) next_seq: u64,
    pub(crate) prev: Digest,
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
    /// Appends one line to `out`: `seq`, the `members` in order, `prev`, and `hash` = the digest
    /// of the RFC 8785 form of everything before it (docs/design.md §5). The head moves on only when
    /// the line was written.
    pub(crate) fn append(
        &mut self,
        members: Vec<(&'static str, Value)>,
        out: &mut Vec<u8>,
    ) -> Result<AuditReceipt, CanonicalizeError> {
        let mut line: Vec<(&str, Value)> = Vec::with_capacity(members.len() + 3);
        line.push(("seq", self.next_seq.into()));
        line.extend(members);
        line.push(("prev", self.prev.to_string().into()));
        let entry: Map<String, Value> = line
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect();
        let hash = entry_hash(&Value::Object(entry))?;
        line.push(("hash", hash.to_string().into()));

        // The line shows the members in reading order (seq first, prev and hash last) rather
        // than in canonical order: the hash is over the canonical form, so either verifies.
        // Names are ASCII identifiers, written as they are.
        let start = out.len();
        let written = write_line(&line, out);
        if written.is_err() {
            out.truncate(start);
        }
        written?;
        let receipt = AuditReceipt {
            seq: self.next_seq,
            hash,
        };
        self.next_seq += 1;
        self.prev = hash;
        Ok(receipt)
    }
}

fn write_line(members: &[(&str, Value)], out: &mut Vec<u8>) -> Result<(), CanonicalizeError> {
    out.push(b'{');
    for (index, (name, value)) in members.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        write_canonical(value, out)?;
    }
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// The `hash` of an entry given without its `hash` member: SHA-256 of its RFC 8785 bytes.
pub(crate) fn entry_hash(entry_without_hash: &Value) -> Result<Digest, CanonicalizeError> {
    canonicalize(entry_without_hash).map(|bytes| Digest::of(&bytes))
}
