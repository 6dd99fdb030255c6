//! Checking an audit log: every entry parses strictly, its `hash` recomputes, its `seq` follows
//! the one before, and its `prev` is the hash before it (docs/design.md §5).

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use jcs_digest::{Digest, StrictJsonErrorKind, parse_strict};
use serde_json::Value;

use crate::audit::chain::entry_hash;
use crate::audit::entry::{Decision, EVENT_CALL, EVENT_CATALOG_LOADED, EVENT_STARTED};

/// The longest line the verifier reads. The writer bounds every text it records, so its entries
/// stay far below this.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// What a verified log holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainSummary {
    entries: u64,
    bytes: u64,
    preallocated: u64,
    first_prev: Option<Digest>,
    last_hash: Option<Digest>,
    decisions: BTreeMap<Decision, u64>,
    starts: Vec<GatewayStart>,
    loads: Vec<GatewayStart>,
}

impl ChainSummary {
    /// Number of entries (decisions and gateway starts).
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Length of the entries in bytes: where the next entry goes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Length of the zeros after the last entry: allocated space that a crash left unwritten,
    /// as some file systems show it, or the space a running gateway writes ahead of its entries
    /// ([`AuditOptions::prewritten_zeros`](crate::audit::AuditOptions::prewritten_zeros)); 0
    /// for a cleanly closed log.
    pub fn preallocated_bytes(&self) -> u64 {
        self.preallocated
    }

    /// The first entry's `prev`: the measurement of the catalog the log was started with.
    /// `None` for an empty log.
    pub fn first_prev(&self) -> Option<Digest> {
        self.first_prev
    }

    /// The last entry's `hash`, which the next entry's `prev` must repeat. Keep it outside the
    /// log to detect a removal of the log's last entries, which no chain can show by itself.
    pub fn last_hash(&self) -> Option<Digest> {
        self.last_hash
    }

    /// Number of `tools/call` entries per decision.
    pub fn decisions(&self) -> &BTreeMap<Decision, u64> {
        &self.decisions
    }

    /// The `gateway_started` entries, in order.
    pub fn starts(&self) -> &[GatewayStart] {
        &self.starts
    }

    /// The `catalog_loaded` entries (reloads), in order.
    pub fn catalog_loads(&self) -> &[GatewayStart] {
        &self.loads
    }

    /// The measurement of the catalog in force at the end of the log: the last start's or
    /// reload's, whichever is later, or the first `prev` when the log records neither.
    pub fn catalog_in_force(&self) -> Option<Digest> {
        let start = self.starts.last();
        let load = self.loads.last();
        let last = match (start, load) {
            (Some(start), Some(load)) if load.seq > start.seq => Some(load),
            (Some(start), _) => Some(start),
            (None, load) => load,
        };
        last.map(|entry| entry.catalog).or(self.first_prev)
    }
}

/// One `gateway_started` entry (or `catalog_loaded`: the same members matter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GatewayStart {
    /// Line number, from 1.
    pub line: u64,
    /// The entry's `seq`.
    pub seq: u64,
    /// The measurement of the catalog that run served.
    pub catalog: Digest,
}

/// Why a log does not verify.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The log could not be read.
    #[error("cannot read the audit log {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The first entry that breaks the chain.
    #[error("{0}")]
    Broken(BrokenEntry),
}

/// The first line of a log that breaks the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenEntry {
    /// Line number, from 1.
    pub line: u64,
    /// Byte offset of the line's start: the entries before it are intact.
    pub offset: u64,
    /// The `seq` the line states, when it could be read.
    pub seq: Option<u64>,
    /// What is wrong.
    pub problem: ChainProblem,
}

impl fmt::Display for BrokenEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seq {
            Some(seq) => write!(f, "line {} (seq {seq}): {}", self.line, self.problem),
            None => write!(f, "line {}: {}", self.line, self.problem),
        }
    }
}

impl std::error::Error for BrokenEntry {}

/// What is wrong with a line.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainProblem {
    /// The line is not JSON (strict reading, docs/design.md §2).
    #[error("not valid JSON at column {column}: {reason}")]
    NotJson {
        /// Column of the problem (1-based, in bytes).
        column: usize,
        /// What the strict reader refused.
        reason: String,
    },
    /// An object of the line repeats a member name.
    #[error(
        "duplicate member {name:?} in the object at JSON Pointer {pointer:?}: the gateway never \
         writes one, and two readers could see different entries"
    )]
    DuplicateMember {
        /// JSON Pointer of the object.
        pointer: String,
        /// The repeated name.
        name: String,
    },
    /// The line is JSON but not an entry the gateway writes.
    #[error("not an audit entry: {reason}")]
    NotAnEntry {
        /// What is missing or wrong.
        reason: String,
    },
    /// The entry's `hash` is not the digest of its contents: the entry was edited.
    #[error(
        "hash does not recompute: expected {expected} (the SHA-256 of the entry's RFC 8785 form \
         without `hash`), found {found}; the entry was changed after it was written"
    )]
    HashMismatch {
        /// The digest of the entry as it is.
        expected: Digest,
        /// The `hash` the entry states.
        found: Digest,
    },
    /// The entry's `prev` is not the hash of the line before it.
    #[error(
        "prev does not match the previous entry's hash: expected {expected}, found {found}; the \
         entry before this one was removed, replaced or reordered"
    )]
    PrevMismatch {
        /// The previous line's `hash`.
        expected: Digest,
        /// The `prev` this entry states.
        found: Digest,
    },
    /// The first entry's `prev` is not the measurement of the given catalog.
    #[error(
        "the first entry's prev is not the catalog's measurement: expected {expected}, found \
         {found}; the log was started with another catalog, or its first entries were removed"
    )]
    FirstPrevNotCatalog {
        /// The catalog's measurement.
        expected: Digest,
        /// The `prev` of the first entry.
        found: Digest,
    },
    /// The entry's `seq` does not follow the one before it.
    #[error(
        "expected seq {expected}, found seq {found}: {}",
        if found > expected {
            "an entry before this one is missing, or entries were reordered"
        } else {
            "entries were reordered or repeated"
        }
    )]
    SeqMismatch {
        /// One more than the previous entry's `seq` (0 on the first line).
        expected: u64,
        /// The `seq` this entry states.
        found: u64,
    },
    /// The last line has no newline: the writer stopped in the middle of an entry.
    #[error(
        "the last line is incomplete ({length} bytes and no newline at the end of the file): the \
         writer stopped in the middle of an entry (a crash or a full disk); the entries before \
         it verify"
    )]
    TornLine {
        /// Length of the incomplete line in bytes.
        length: u64,
    },
    /// After the last complete entry the log holds zeros (allocated space) and other bytes: the
    /// writer stopped while writing into that space, after part of a group reached the disk
    /// and part did not.
    #[error(
        "the last {length} bytes are neither complete entries nor zeros of allocated space: the \
         writer stopped while writing into that space (a crash); the entries before them \
         verify"
    )]
    TornPreallocatedTail {
        /// Length from the end of the last complete entry to the end of the log, in bytes.
        length: u64,
    },
    /// A line longer than [`MAX_LINE_BYTES`].
    #[error("the line is longer than {limit} bytes, which no audit entry is")]
    LineTooLong {
        /// [`MAX_LINE_BYTES`].
        limit: usize,
    },
}

impl ChainProblem {
    /// A stable name for the problem, for machine-readable output: `not_json`,
    /// `duplicate_member`, `not_an_entry`, `hash_mismatch`, `prev_mismatch`,
    /// `first_prev_not_catalog`, `seq_mismatch`, `torn_line`, `torn_preallocated_tail` or
    /// `line_too_long`.
    pub fn code(&self) -> &'static str {
        match self {
            ChainProblem::NotJson { .. } => "not_json",
            ChainProblem::DuplicateMember { .. } => "duplicate_member",
            ChainProblem::NotAnEntry { .. } => "not_an_entry",
            ChainProblem::HashMismatch { .. } => "hash_mismatch",
            ChainProblem::PrevMismatch { .. } => "prev_mismatch",
            ChainProblem::FirstPrevNotCatalog { .. } => "first_prev_not_catalog",
            ChainProblem::SeqMismatch { .. } => "seq_mismatch",
            ChainProblem::TornLine { .. } => "torn_line",
            ChainProblem::TornPreallocatedTail { .. } => "torn_preallocated_tail",
            ChainProblem::LineTooLong { .. } => "line_too_long",
        }
    }
}

/// Verifies the log at `path`; with `first_prev`, the first entry's `prev` must also be that
/// catalog measurement.
///
/// # Errors
///
/// [`VerifyError::Io`] when the file cannot be read; [`VerifyError::Broken`] naming the first
/// line that breaks the chain.
pub fn verify_file(path: &Path, first_prev: Option<&Digest>) -> Result<ChainSummary, VerifyError> {
    let file = File::open(path).map_err(|source| VerifyError::Io {
        path: path.display().to_string(),
        source,
    })?;
    verify_reader(BufReader::new(file), first_prev).map_err(|error| match error {
        VerifyError::Io { source, .. } => VerifyError::Io {
            path: path.display().to_string(),
            source,
        },
        broken => broken,
    })
}

/// Verifies a log read from `reader` (see [`verify_file`]). Memory use is bounded by
/// [`MAX_LINE_BYTES`] whatever the log's length.
///
/// # Errors
///
/// As [`verify_file`]; the `path` of an I/O error is `<reader>`.
pub fn verify_reader<R: BufRead>(
    mut reader: R,
    first_prev: Option<&Digest>,
) -> Result<ChainSummary, VerifyError> {
    let mut verifier = ChainVerifier {
        first_prev: first_prev.copied(),
        summary: ChainSummary::default(),
    };
    let mut line = Vec::new();
    let mut line_number = 0u64;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|source| VerifyError::Io {
                path: "<reader>".to_owned(),
                source,
            })?;
        if read == 0 {
            return Ok(verifier.summary);
        }
        line_number += 1;
        let offset = verifier.summary.bytes;
        let broken = |seq, problem| {
            VerifyError::Broken(BrokenEntry {
                line: line_number,
                offset,
                seq,
                problem,
            })
        };
        // No entry holds a NUL byte (JSON has none outside strings, where it is escaped). Zeros
        // that run to the end of the log are allocated space a crash left unwritten; a line that starts with zeros
        // or ends in them is where a crash stopped the writer inside that space. A NUL inside a
        // line with more bytes after it on that line is left to the entry check.
        if let Some(zero) = line.iter().position(|&byte| byte == 0) {
            let zeros_after = line[zero..].iter().all(|&byte| byte == 0);
            if zero == 0 || zeros_after {
                let rest = zeros_to_end(&mut reader).map_err(|source| VerifyError::Io {
                    path: "<reader>".to_owned(),
                    source,
                })?;
                let length = read as u64 + rest.length;
                return match (zero, zeros_after && rest.all_zero) {
                    (0, true) => {
                        verifier.summary.preallocated = length;
                        Ok(verifier.summary)
                    }
                    // Part of a line, then zeros to the end: the write stopped inside the line.
                    (_, true) => Err(broken(None, ChainProblem::TornLine { length })),
                    _ => Err(broken(None, ChainProblem::TornPreallocatedTail { length })),
                };
            }
        }
        match line.last() {
            Some(b'\n') => line.pop(),
            _ if line.len() > MAX_LINE_BYTES => {
                return Err(broken(
                    None,
                    ChainProblem::LineTooLong {
                        limit: MAX_LINE_BYTES,
                    },
                ));
            }
            _ => {
                return Err(broken(
                    None,
                    ChainProblem::TornLine {
                        length: line.len() as u64,
                    },
                ));
            }
        };
        verifier
            .check(&line, line_number)
            .map_err(|(seq, problem)| broken(seq, problem))?;
        verifier.summary.bytes += read as u64;
    }
}

/// What follows a NUL byte in the log.
struct Rest {
    length: u64,
    all_zero: bool,
}

/// Reads `reader` to its end in its own buffer's steps (bounded memory), saying whether every
/// byte is zero.
fn zeros_to_end<R: BufRead>(reader: &mut R) -> io::Result<Rest> {
    let mut rest = Rest {
        length: 0,
        all_zero: true,
    };
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(rest);
        }
        rest.all_zero &= buffer.iter().all(|&byte| byte == 0);
        let length = buffer.len();
        rest.length += length as u64;
        reader.consume(length);
    }
}

/// The chain state between lines.
struct ChainVerifier {
    first_prev: Option<Digest>,
    summary: ChainSummary,
}

impl ChainVerifier {
    /// Checks one line (without its newline) and records it in the summary.
    fn check(&mut self, line: &[u8], line_number: u64) -> Result<(), (Option<u64>, ChainProblem)> {
        let not_entry = |seq, reason: &str| {
            (
                seq,
                ChainProblem::NotAnEntry {
                    reason: reason.to_owned(),
                },
            )
        };
        let value = parse_strict(line).map_err(|error| match error.kind() {
            StrictJsonErrorKind::DuplicateMember { pointer, name } => (
                None,
                ChainProblem::DuplicateMember {
                    pointer: pointer.clone(),
                    name: name.clone(),
                },
            ),
            kind => (
                None,
                ChainProblem::NotJson {
                    column: error.column(),
                    reason: kind.to_string(),
                },
            ),
        })?;
        let Value::Object(mut entry) = value else {
            return Err(not_entry(None, "the line is not a JSON object"));
        };
        let seq = entry.get("seq").and_then(Value::as_u64).ok_or_else(|| {
            not_entry(
                None,
                "member \"seq\" is missing or not a non-negative integer",
            )
        })?;
        let found_hash = digest_member(entry.get("hash"), "hash")
            .map_err(|reason| not_entry(Some(seq), &reason))?;
        entry.remove("hash");
        let entry = Value::Object(entry);
        let expected_hash =
            entry_hash(&entry).map_err(|error| not_entry(Some(seq), &error.to_string()))?;
        if expected_hash != found_hash {
            return Err((
                Some(seq),
                ChainProblem::HashMismatch {
                    expected: expected_hash,
                    found: found_hash,
                },
            ));
        }
        let expected_seq = self.summary.entries;
        if seq != expected_seq {
            return Err((
                Some(seq),
                ChainProblem::SeqMismatch {
                    expected: expected_seq,
                    found: seq,
                },
            ));
        }
        let prev = digest_member(entry.get("prev"), "prev")
            .map_err(|reason| not_entry(Some(seq), &reason))?;
        match (self.summary.last_hash, self.first_prev) {
            (Some(last), _) if last != prev => {
                return Err((
                    Some(seq),
                    ChainProblem::PrevMismatch {
                        expected: last,
                        found: prev,
                    },
                ));
            }
            (None, Some(catalog)) if catalog != prev => {
                return Err((
                    Some(seq),
                    ChainProblem::FirstPrevNotCatalog {
                        expected: catalog,
                        found: prev,
                    },
                ));
            }
            _ => {}
        }
        match entry.get("event").and_then(Value::as_str) {
            Some(EVENT_CALL) => {
                let decision = entry
                    .get("decision")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        not_entry(Some(seq), "member \"decision\" is missing or not a string")
                    })?
                    .parse::<Decision>()
                    .map_err(|error| not_entry(Some(seq), &error.to_string()))?;
                // Entries written before principals were recorded have none (docs/design.md §7).
                if entry.get("principal").is_some_and(|p| !p.is_string()) {
                    return Err(not_entry(Some(seq), "member \"principal\" is not a string"));
                }
                *self.summary.decisions.entry(decision).or_default() += 1;
            }
            Some(EVENT_STARTED) => {
                let catalog = digest_member(entry.get("catalog"), "catalog")
                    .map_err(|reason| not_entry(Some(seq), &reason))?;
                self.summary.starts.push(GatewayStart {
                    line: line_number,
                    seq,
                    catalog,
                });
            }
            Some(EVENT_CATALOG_LOADED) => {
                let catalog = digest_member(entry.get("catalog"), "catalog")
                    .map_err(|reason| not_entry(Some(seq), &reason))?;
                let previous = digest_member(entry.get("previous_catalog"), "previous_catalog")
                    .map_err(|reason| not_entry(Some(seq), &reason))?;
                let in_force = self.summary.catalog_in_force();
                if in_force.is_some_and(|in_force| in_force != previous) {
                    return Err(not_entry(
                        Some(seq),
                        &format!(
                            "a reload from catalog {previous}, but {} was in force",
                            in_force.map(|d| d.to_string()).unwrap_or_default()
                        ),
                    ));
                }
                self.summary.loads.push(GatewayStart {
                    line: line_number,
                    seq,
                    catalog,
                });
            }
            Some(other) => {
                return Err(not_entry(
                    Some(seq),
                    &format!(
                        "unknown event {other:?}; the gateway writes \"{EVENT_CALL}\", \"{EVENT_STARTED}\" and \"{EVENT_CATALOG_LOADED}\""
                    ),
                ));
            }
            None => {
                return Err(not_entry(
                    Some(seq),
                    "member \"event\" is missing or not a string",
                ));
            }
        }
        if self.summary.first_prev.is_none() {
            self.summary.first_prev = Some(prev);
        }
        self.summary.last_hash = Some(found_hash);
        self.summary.entries += 1;
        Ok(())
    }
}

fn digest_member(member: Option<&Value>, name: &str) -> Result<Digest, String> {
    match member {
        None => Err(format!("member {name:?} is missing")),
        Some(Value::String(text)) => text
            .parse()
            .map_err(|error| format!("member {name:?} is not a digest: {error}")),
        Some(_) => Err(format!("member {name:?} is not a string")),
    }
}
