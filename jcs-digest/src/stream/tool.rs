//! Tool definitions read from the bytes: the six members of the per-tool digest written
//! canonically, everything else checked and skipped (seed 000 §3, docs/design.md §2).

use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest as _, Sha256};

use super::{Frame, JsonType, StreamReader};
use crate::canonical;
use crate::digest::Digest;
use crate::error::StrictJsonError;
use crate::tool::Profile;

/// The hashed members in RFC 8785 order (as `MEMBERS_IN_CANONICAL_ORDER` in `tool.rs`), each as
/// it is written in the preimage.
const SLOTS: [(&str, &[u8]); 6] = [
    ("annotations", b"\"annotations\":"),
    ("description", b"\"description\":"),
    ("inputSchema", b"\"inputSchema\":"),
    ("name", b"\"name\":"),
    ("outputSchema", b"\"outputSchema\":"),
    ("title", b"\"title\":"),
];
const NAME_SLOT: usize = 3;

/// Arrays with at least this much input left when they open are read in two halves on two
/// threads (when the machine has more than one CPU); below it, a thread costs more than it
/// saves.
#[cfg(not(fuzzing))]
const SPLIT_AT: usize = 1 << 20;

/// Under the fuzzer (cargo-fuzz builds with `--cfg fuzzing`) every array that has a guessed
/// middle is read in two halves, so that the two-halves path meets the fuzzer's small inputs
/// (fuzz/fuzz_targets/fuzz_stream.rs compares it with the one-thread and the tree paths).
/// Never in a build that is not fuzzed.
#[cfg(fuzzing)]
const SPLIT_AT: usize = 0;

/// One element of a `tools` array, read by [`StreamReader::tool_definition`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamedTool {
    /// An object: its `name` member and its definition digest.
    Definition {
        /// The `name` member.
        name: ToolName,
        /// The per-tool definition digest.
        digest: Digest,
    },
    /// Not an object, so not a tool definition.
    NotAnObject {
        /// The type found.
        found: JsonType,
    },
}

impl StreamedTool {
    /// What [`StreamReader::tool_definition`] gives for the bytes of `tool`, computed from the
    /// value by the tree path ([`crate::tool_definition_digest`]): the reference the streaming
    /// path is tested against.
    ///
    /// # Errors
    ///
    /// [`ToolDigestError::Canonicalize`](crate::ToolDigestError::Canonicalize) for an object
    /// whose hashed members hold an integer outside ±(2^53−1) (only a value built in code can).
    pub fn from_value(
        tool: &serde_json::Value,
        profile: Profile,
    ) -> Result<StreamedTool, crate::ToolDigestError> {
        use serde_json::Value;

        let Value::Object(members) = tool else {
            return Ok(StreamedTool::NotAnObject {
                found: JsonType::of_value(tool),
            });
        };
        let name = match members.get("name") {
            None | Some(Value::Null) => ToolName::Absent,
            Some(Value::String(text)) => ToolName::Text(text.clone()),
            Some(other) => ToolName::NotAString {
                found: JsonType::of_value(other),
            },
        };
        let digest = crate::tool_definition_digest(tool, profile)?;
        Ok(StreamedTool::Definition { name, digest })
    }
}

/// The `name` member of a tool definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolName {
    /// Absent or `null`.
    Absent,
    /// A string, decoded.
    Text(String),
    /// Present and neither a string nor `null`.
    NotAString {
        /// The type found.
        found: JsonType,
    },
}

/// Where the canonical bytes of each hashed member are in a buffer, in [`SLOTS`] order.
type Slots = [Option<(usize, usize)>; 6];

/// A tool read up to its digest: for an object, its name and where its members are.
enum Read {
    Definition(ToolName, Slots),
    NotAnObject(JsonType),
}

impl Read {
    /// The record, with the digest of the preimage of a definition whose members are in
    /// `buffer`.
    fn digest(self, buffer: &[u8], profile: Profile) -> StreamedTool {
        match self {
            Read::Definition(name, slots) => {
                let mut hasher = Sha256::new();
                emit_preimage(buffer, &slots, profile, |bytes| hasher.update(bytes));
                StreamedTool::Definition {
                    name,
                    digest: Digest::from_bytes(hasher.finalize().into()),
                }
            }
            Read::NotAnObject(found) => StreamedTool::NotAnObject { found },
        }
    }
}

/// Writes `{"profile":LABEL,"tool":{…}}` to `emit`: the members of `slots` (in `buffer`) in
/// RFC 8785 order, each after its name.
fn emit_preimage(buffer: &[u8], slots: &Slots, profile: Profile, mut emit: impl FnMut(&[u8])) {
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(b"{\"profile\":");
    canonical::write_string(profile.label(), &mut head);
    head.extend_from_slice(b",\"tool\":{");
    emit(&head);
    let mut first = true;
    for ((_, prefix), slot) in SLOTS.iter().zip(slots) {
        let Some((start, end)) = *slot else {
            continue;
        };
        if !first {
            emit(b",");
        }
        first = false;
        emit(prefix);
        emit(&buffer[start..end]);
    }
    emit(b"}}");
}

impl StreamReader<'_> {
    /// Reads one tool definition (an element of a `tools` array) and digests it: the six
    /// members of [`crate::TOOL_DEFINITION_MEMBERS`] are written canonically, `null` ones
    /// omitted; every other member (`_meta` included) is checked and skipped. The digest is
    /// the one [`crate::tool_definition_digest`] gives for the same definition.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes.
    pub fn tool_definition(&mut self, profile: Profile) -> Result<StreamedTool, StrictJsonError> {
        let mut buffer = std::mem::take(&mut self.tool_buffer);
        buffer.clear();
        let read = self.read_tool(&mut buffer);
        let tool = read.map(|read| read.digest(&buffer, profile));
        self.tool_buffer = buffer;
        tool
    }

    /// Reads the array that is the next value and digests every element with
    /// [`tool_definition`](Self::tool_definition), in order.
    ///
    /// A large array (a megabyte or more of input left) on a machine with more than one CPU is
    /// read in two halves at once, the second half used only once the first proves it starts
    /// at an element; the result is the same, errors included.
    ///
    /// # Errors
    ///
    /// [`StrictJsonError`], as the tree reader gives it for the same bytes; a syntax error when
    /// the next value is not an array (check with [`peek`](Self::peek) first).
    pub fn tool_definitions(
        &mut self,
        profile: Profile,
    ) -> Result<Vec<StreamedTool>, StrictJsonError> {
        self.enter_array()?;
        let large = self.input.len().saturating_sub(self.offset()) >= SPLIT_AT;
        if large && std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1) {
            if let Some(split) = split_candidate(self.input, self.pos) {
                return self.tool_definitions_split(split, profile);
            }
        }
        let mut tools = Vec::new();
        while self.next_element()? {
            tools.push(self.tool_definition(profile)?);
        }
        Ok(tools)
    }

    /// The elements of the entered array, read by this thread up to `split` and by a second
    /// one from there on.
    ///
    /// `split` is only a guess at where an element starts (found by looking at a few bytes,
    /// not by reading the document), so the second half is used only when it is proven right:
    /// this thread, reading every element from the start, must arrive at an element of this
    /// array that starts exactly at `split`. The second thread's reader then stood where this
    /// one stands (an element of an array with as many containers open), and what a reader
    /// does from there depends on nothing else, so its tools are the ones this thread would
    /// have read. If the guess was wrong, or the second half was refused (its error would
    /// lack the index in its pointer), this thread reads on alone and meets every error
    /// itself, in document order.
    fn tool_definitions_split(
        &mut self,
        split: usize,
        profile: Profile,
    ) -> Result<Vec<StreamedTool>, StrictJsonError> {
        let stop = AtomicBool::new(false);
        let input = self.input;
        let (depth, max_depth) = (self.stack.len(), self.max_depth);
        std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new()
                .name("jcs-digest-split".to_owned())
                .spawn_scoped(scope, || {
                    read_from(input, split, depth, max_depth, profile, &stop)
                });
            // Stops the second thread as soon as this one returns, error or not.
            let _stop_on_return = StopOnDrop(&stop);
            let mut second = spawned.ok();
            let mut tools = Vec::new();
            while self.next_element()? {
                self.skip_whitespace();
                if self.pos == split {
                    if let Some((rest, end)) = second.take().and_then(join) {
                        tools.extend(rest);
                        // As `next_element` closes an array whose `]` it has read.
                        self.pos = end;
                        self.close::<false>(&mut Vec::new());
                        return Ok(tools);
                    }
                } else if self.pos > split && second.is_some() {
                    stop.store(true, Ordering::Relaxed);
                    second = None;
                }
                tools.push(self.tool_definition(profile)?);
            }
            Ok(tools)
        })
    }
    /// Reads one element; for an object, appends the canonical bytes of its hashed members to
    /// `buffer`.
    fn read_tool(&mut self, buffer: &mut Vec<u8>) -> Result<Read, StrictJsonError> {
        if self.peek() != Some(JsonType::Object) {
            return self.skip_value().map(Read::NotAnObject);
        }
        self.tool_members(buffer)
    }

    fn tool_members(&mut self, buffer: &mut Vec<u8>) -> Result<Read, StrictJsonError> {
        let mut slots: Slots = [None; 6];
        let mut name = ToolName::Absent;
        self.enter_object()?;
        while let Some(member) = self.next_member()? {
            let Some(slot) = SLOTS.iter().position(|(slot, _)| *slot == member) else {
                self.skip_value()?;
                continue;
            };
            let start = buffer.len();
            match self.peek() {
                // Absent and null are the same (seed 000 §3, step 1).
                Some(JsonType::Null) => {
                    self.skip_value()?;
                    continue;
                }
                Some(JsonType::String) if slot == NAME_SLOT => {
                    if let Some(text) = self.string_value()? {
                        canonical::write_string(&text, buffer);
                        name = ToolName::Text(text);
                    }
                }
                found => {
                    if slot == NAME_SLOT {
                        name = ToolName::NotAString {
                            found: found.unwrap_or(JsonType::Null),
                        };
                    }
                    self.canonical_value(buffer)?;
                }
            }
            slots[slot] = Some((start, buffer.len()));
        }
        Ok(Read::Definition(name, slots))
    }
}

/// Sets the flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The second half's outcome: its tools and the offset after the array's `]`, or `None` when
/// it was stopped or refused something.
type Half = Option<(Vec<StreamedTool>, usize)>;

/// Waits for the second half; a panic there is this thread's.
fn join(handle: std::thread::ScopedJoinHandle<'_, Half>) -> Half {
    match handle.join() {
        Ok(half) => half,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Reads the elements of an array from `split` to its `]`, as a reader with `depth`
/// containers open (the array innermost, past its first element) would: every element with
/// [`StreamReader::tool_definition`], within the same depth limit.
fn read_from(
    input: &[u8],
    split: usize,
    depth: usize,
    max_depth: usize,
    profile: Profile,
    stop: &AtomicBool,
) -> Half {
    let mut reader = StreamReader::with_max_depth(input, max_depth);
    reader.pos = split;
    // Only the number of open containers matters to what is accepted; the frames below the
    // array stand in for the real ones, which would only name them in an error pointer.
    reader.stack.extend((0..depth).map(|level| Frame {
        object: false,
        count: 0,
        started: level + 1 == depth,
        names_start: 0,
        current: None,
        seen: None,
        canonical: None,
    }));
    let mut tools = Vec::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        tools.push(reader.tool_definition(profile).ok()?);
        if !reader.next_element().ok()? {
            return Some((tools, reader.pos));
        }
    }
}

/// A guess at where an element of the array whose content starts at `from` begins, near the
/// middle of what is left: a `{` after `}` and `,` (whitespace allowed between), preferably
/// one whose first member is `"name"` (a tool definition, not a nested schema). Only a
/// guess: it may be inside a string or a nested array, which
/// `StreamReader::tool_definitions_split` finds out.
fn split_candidate(input: &[u8], from: usize) -> Option<usize> {
    // Past this many bytes beyond a plain candidate, looking for a better one costs more than
    // a wrong guess.
    const LOOK_FURTHER: usize = 1 << 16;
    let middle = from + input.len().saturating_sub(from) / 2;
    let mut plain: Option<usize> = None;
    let mut at = middle;
    while let Some(offset) = input.get(at..)?.iter().position(|&b| b == b'{') {
        let open = at + offset;
        if plain.is_some_and(|plain| open - plain > LOOK_FURTHER) {
            break;
        }
        at = open + 1;
        let Some((&b',', before)) = trim_end(&input[middle..open]).split_last() else {
            continue;
        };
        if trim_end(before).last() != Some(&b'}') {
            continue;
        }
        if trim_start(&input[at..]).starts_with(b"\"name\"") {
            return Some(open);
        }
        plain.get_or_insert(open);
    }
    plain
}

fn is_whitespace(byte: &u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    let kept = bytes
        .iter()
        .rposition(|b| !is_whitespace(b))
        .map_or(0, |last| last + 1);
    &bytes[..kept]
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let skipped = bytes
        .iter()
        .position(|b| !is_whitespace(b))
        .unwrap_or(bytes.len());
    &bytes[skipped..]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The offsets at which the elements of the top-level array `document` start.
    fn element_starts(document: &[u8]) -> Vec<usize> {
        let mut reader = StreamReader::new(document);
        reader.enter_array().unwrap();
        let mut starts = Vec::new();
        while reader.next_element().unwrap() {
            reader.skip_whitespace();
            starts.push(reader.offset());
            reader.skip_value().unwrap();
        }
        starts
    }

    /// In a catalog, compact or pretty-printed, the guess is the first tool that starts after
    /// the middle, so the two halves are used.
    #[test]
    fn the_guess_is_a_tool_past_the_middle() {
        let tool = |i: usize| {
            format!(
                r#"{{"name":"t{i}","inputSchema":{{"anyOf":[{{"type":"string"}},{{"type":"null"}}]}}}}"#
            )
        };
        let tools: Vec<String> = (0..40).map(tool).collect();
        for separator in [",", ",\n  "] {
            let document = format!("[{}]", tools.join(separator));
            let starts = element_starts(document.as_bytes());
            let guess = split_candidate(document.as_bytes(), 1).unwrap();
            let middle = 1 + (document.len() - 1) / 2;
            let expected = starts.iter().copied().find(|&start| start >= middle);
            assert_eq!(Some(guess), expected, "{document}");
        }
    }

    /// Without a `"name"` first, the first `{` after `}` and `,` past the middle is the guess;
    /// with none, there is no guess (the array is read by one thread).
    #[test]
    fn the_guess_falls_back_to_any_object_after_an_object() {
        let document = br#"[{"a":1},{"b":2},{"c":3},{"d":4}]"#;
        assert_eq!(split_candidate(document, 1), Some(25));
        assert_eq!(split_candidate(b"[1,2,3,4,5,6,7,8]", 1), None);
        assert_eq!(split_candidate(br#"[{"a":1},{"b":2}]"#, 17), None);
    }
}
