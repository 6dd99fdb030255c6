//! The generic catalog fold of seed 000 §5: per-key duplicate rule, sorted `key=digest` lines,
//! overflow rule, one digest over the lines.

use std::collections::BTreeMap;

use catalog_key::ToolKey;
use jcs_digest::Digest;
use sha2::{Digest as _, Sha256};

/// The number of entries a fold keeps before the overflow rule applies (seed 000 §5).
pub const MAX_FOLD_ENTRIES: usize = 500;

/// The key under which the entries beyond [`MAX_FOLD_ENTRIES`] are folded (seed 000 §5).
pub const OVERFLOW_KEY: &str = "tools:overflow";

/// The result of [`fold`]: the per-key map, the folded text and its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    per_key: BTreeMap<ToolKey, Digest>,
    duplicate_keys: Vec<ToolKey>,
    overflow: Option<Digest>,
    lines: String,
    digest: Digest,
}

impl Fold {
    /// One digest per key after the duplicate rule, before the overflow rule (every key).
    pub fn per_key(&self) -> &BTreeMap<ToolKey, Digest> {
        &self.per_key
    }

    /// The keys that folded two or more digests under the duplicate rule, in key order.
    pub fn duplicate_keys(&self) -> &[ToolKey] {
        &self.duplicate_keys
    }

    /// The digest of the `tools:overflow` entry, if there were more than
    /// [`MAX_FOLD_ENTRIES`] keys.
    pub fn overflow(&self) -> Option<Digest> {
        self.overflow
    }

    /// The exact text that was hashed: sorted `key=digest` lines joined by `\n`, no trailing
    /// newline.
    pub fn lines(&self) -> &str {
        &self.lines
    }

    /// The digest over [`lines`](Self::lines): the catalog digest.
    pub fn digest(&self) -> Digest {
        self.digest
    }
}

/// Folds `(key, digest)` entries, in any order, into one digest under `label`.
///
/// This is seed 000 §5 with both edge rules, in this order:
///
/// 1. **Duplicate rule.** The digests that share a key fold into one: SHA-256 over
///    `"<label>.duplicates\n"` followed by those digests' `sha256:<hex>` texts, sorted, joined
///    by `\n`. A definition that appears twice contributes its digest twice (the rule folds
///    definitions, not distinct digests).
/// 2. **Sorted lines.** One `key=digest` line per key in code-point order.
/// 3. **Overflow rule.** With more than [`MAX_FOLD_ENTRIES`] keys, the first 500 lines are
///    kept and the remaining lines, joined by `\n`, are hashed after `"<label>.overflow\n"`
///    into one line keyed [`OVERFLOW_KEY`].
/// 4. The digest is SHA-256 over the lines joined by `\n` (no trailing newline). An empty
///    fold hashes the empty text.
///
/// The tool catalog uses the per-tool profile label (`trace.mcp-tool-definition.v1`); the
/// catalog store folds its entries under `trace.mcp-catalog-entry.v1` (docs/design.md §4).
///
/// ```
/// use catalog_fold::fold;
/// use catalog_key::ToolKey;
/// use jcs_digest::Digest;
///
/// let (a, b) = (Digest::of(b"a"), Digest::of(b"b"));
/// let folded = fold(
///     [(ToolKey::from_name("y"), a), (ToolKey::from_name("x"), b)],
///     "trace.mcp-catalog-entry.v1",
/// );
/// assert_eq!(folded.lines(), format!("tool:x={b}\ntool:y={a}"));
/// assert_eq!(folded.digest(), Digest::of(folded.lines().as_bytes()));
/// ```
pub fn fold(entries: impl IntoIterator<Item = (ToolKey, Digest)>, label: &str) -> Fold {
    let mut entries: Vec<(ToolKey, Digest)> = entries.into_iter().collect();
    // Sorting by (key, digest) groups each key's digests together and already in the order
    // the duplicate rule hashes them: `sha256:` + lowercase hex sorts as the raw bytes do.
    // Entries that arrive sorted (the chunked reader merges its two parts) are found so in
    // one pass.
    entries.sort_unstable();

    // The keys move from `entries` into `per_key`; only a duplicated key is cloned (it is also
    // listed in `duplicate_keys`).
    let mut per_key: Vec<(ToolKey, Digest)> = Vec::with_capacity(entries.len());
    let mut duplicate_keys = Vec::new();
    let mut sorted = entries.into_iter().peekable();
    while let Some((key, digest)) = sorted.next() {
        if sorted.peek().is_some_and(|(next, _)| *next == key) {
            let mut group = vec![digest];
            while let Some((_, digest)) = sorted.next_if(|(next, _)| *next == key) {
                group.push(digest);
            }
            per_key.push((key.clone(), duplicates_digest(label, &group)));
            duplicate_keys.push(key);
        } else {
            per_key.push((key, digest));
        }
    }

    let (lines, overflow) = folded_lines(&per_key, label);
    let digest = Digest::of(lines.as_bytes());
    Fold {
        // `per_key` is sorted, so this is a bulk build.
        per_key: per_key.into_iter().collect(),
        duplicate_keys,
        overflow,
        lines,
        digest,
    }
}

/// The duplicate rule: SHA-256 over `"<label>.duplicates\n"` + sorted digests joined by `\n`.
fn duplicates_digest(label: &str, sorted_digests: &[Digest]) -> Digest {
    let mut text = format!("{label}.duplicates\n");
    for (index, digest) in sorted_digests.iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        text.push_str(digest.text().as_str());
    }
    Digest::of(text.as_bytes())
}

/// The sorted lines with the overflow rule applied, and the overflow digest if it applied.
fn folded_lines(per_key: &[(ToolKey, Digest)], label: &str) -> (String, Option<Digest>) {
    let kept_len = per_key.len().min(MAX_FOLD_ENTRIES);
    let (kept, overflowed) = per_key.split_at(kept_len);

    let mut lines: Vec<(&str, Digest)> = kept
        .iter()
        .map(|(key, digest)| (key.as_str(), *digest))
        .collect();
    let overflow = if overflowed.is_empty() {
        None
    } else {
        let overflow = overflow_digest(label, overflowed);
        lines.push((OVERFLOW_KEY, overflow));
        // `tool:` keys sort before `tools:overflow` (':' < 's'); sorting states it anyway.
        lines.sort_by(|a, b| a.0.cmp(b.0));
        Some(overflow)
    };
    let mut text = Vec::new();
    push_lines(&mut text, lines.iter().copied());
    // Keys and digests are text, so the lines are too: the fallback is never taken.
    (String::from_utf8(text).unwrap_or_default(), overflow)
}

/// The overflow rule's digest: SHA-256 over `"<label>.overflow\n"` and the `key=digest` lines
/// of `overflowed` joined by `\n`. The text is hashed as it is written, a piece at a time, not
/// kept: for 10,000 tools it is a megabyte that would only be hashed and freed.
fn overflow_digest(label: &str, overflowed: &[(ToolKey, Digest)]) -> Digest {
    /// Text is handed to the hasher in pieces of about this size.
    const PIECE: usize = 16 * 1024;
    let mut hasher = Sha256::new();
    let mut piece = Vec::with_capacity(PIECE + 256);
    piece.extend_from_slice(label.as_bytes());
    piece.extend_from_slice(b".overflow\n");
    for (index, (key, digest)) in overflowed.iter().enumerate() {
        if index > 0 {
            piece.push(b'\n');
        }
        push_line(&mut piece, key.as_str(), *digest);
        if piece.len() >= PIECE {
            hasher.update(&piece);
            piece.clear();
        }
    }
    hasher.update(&piece);
    Digest::from_bytes(hasher.finalize().into())
}

/// The length of `=` and a digest's text, and of the `\n` before the next line.
const LINE_TAIL_LEN: usize = "=sha256:".len() + 64 + "\n".len();

/// Appends `key=digest` lines joined by `\n`, no trailing newline.
fn push_lines<'a>(text: &mut Vec<u8>, lines: impl Iterator<Item = (&'a str, Digest)> + Clone) {
    // Reserved at once (up to 501 lines of about 100 bytes), not doubled and copied.
    text.reserve(
        lines
            .clone()
            .map(|(key, _)| key.len() + LINE_TAIL_LEN)
            .sum(),
    );
    for (index, (key, digest)) in lines.enumerate() {
        if index > 0 {
            text.push(b'\n');
        }
        push_line(text, key, digest);
    }
}

/// Appends one `key=digest` line, without a newline. Bytes, not a `String`: a digest's text
/// is then copied as it is, not checked again as UTF-8 ten thousand times.
fn push_line(text: &mut Vec<u8>, key: &str, digest: Digest) {
    text.extend_from_slice(key.as_bytes());
    text.push(b'=');
    text.extend_from_slice(digest.text().as_bytes());
}
