//! A tools/list document digested from a file read a chunk at a time, so that no buffer of the
//! document's size is made: what [`CatalogDigest::from_document`] gives for the same bytes,
//! whenever this path can vouch for it.
//!
//! The document's beginning (up to its tools array) and end (after it) are kept; the tools in
//! between are read element by element from a window of about a chunk, each by a reader of its
//! own, digested and keyed. A large array is read in two parts on two threads, the second
//! starting at a guessed element that the first must arrive at exactly (as the in-memory path
//! does); each part sorts its own keys, so that after the join two sorted runs are merged.
//!
//! Only the tools are read here. The rest of the document is judged by the in-memory path
//! itself: it reads the beginning and the end with the tools array replaced by one made-up tool
//! whose name no file can predict, and this path's tools stand only if that read accepts the
//! document and returns exactly that tool. Anything else (an error anywhere, a tools array this
//! path did not find, a document it does not take) is [`Chunked::WholeDocument`]: read the
//! whole document with [`CatalogDigest::from_document`], which gives the result or the error,
//! with its exact position.

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use catalog_key::ToolKey;
use jcs_digest::{
    Digest, JsonType, Profile, StreamReader, StreamedTool, StrictReader, ToolName,
    guess_element_start,
};

use crate::catalog::streamed_entry;
use crate::{CatalogDigest, stream_tools_document};

/// The tools read, keyed: each part's in document order until the part sorts it.
type Entries = Vec<(ToolKey, Digest)>;

/// The default chunk: the window reads about a megabyte at a time.
pub const DEFAULT_CHUNK: usize = 1 << 20;

/// Arrays with at least this much of the document left when they open are read in two parts
/// (with the default window).
const SPLIT_AT: usize = 1 << 20;

/// A tool definition, not a nested schema, usually starts with its name.
const TOOL_START: Option<&[u8]> = Some(b"\"name\"");

/// Bytes read at an offset: a file, or bytes in memory.
pub trait ReadAt: Sync {
    /// Reads into `buf` from `offset`; returns how many bytes were read (0 at the end).
    ///
    /// # Errors
    ///
    /// What the system said.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let available = &self[start..];
        let read = available.len().min(buf.len());
        buf[..read].copy_from_slice(&available[..read]);
        Ok(read)
    }
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

#[cfg(windows)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }
}

/// What [`digest_in_chunks`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunked {
    /// The digests [`CatalogDigest::from_document`] gives for the same bytes.
    Digest(CatalogDigest),
    /// This path does not vouch for the document (it holds an error, or it is a shape this path
    /// does not take): read it whole with [`CatalogDigest::from_document`].
    WholeDocument,
}

/// Digests the tools/list document of `len` bytes in `source`, reading it `chunk` bytes at a
/// time (at least one; [`DEFAULT_CHUNK`] for files), under `profile`.
///
/// ```
/// use catalog_fold::{CatalogDigest, Chunked, digest_in_chunks};
/// use jcs_digest::Profile;
///
/// let document = br#"{"tools": [{"name": "a", "description": "A"}, {"name": "b"}]}"#;
/// let whole = CatalogDigest::from_document(document, Profile::Trace).unwrap();
/// let len = document.len() as u64;
/// assert_eq!(
///     digest_in_chunks(&document[..], len, Profile::Trace, 7).unwrap(),
///     Chunked::Digest(whole)
/// );
/// // A trailing comma: the in-memory path says where.
/// let broken = br#"[{"name": "a"},]"#;
/// assert_eq!(
///     digest_in_chunks(&broken[..], broken.len() as u64, Profile::Trace, 7).unwrap(),
///     Chunked::WholeDocument
/// );
/// ```
///
/// # Errors
///
/// The source's read errors.
pub fn digest_in_chunks<R: ReadAt + ?Sized>(
    source: &R,
    len: u64,
    profile: Profile,
    chunk: usize,
) -> io::Result<Chunked> {
    let chunk = chunk.max(1);
    let mut window = Window::new(source, len, chunk, 0);
    let Some(depth) = locate_tools(&mut window)? else {
        return Ok(Chunked::WholeDocument);
    };
    // Nothing before the array was dropped from the window: it starts at byte 0.
    let prefix = window.bytes()[..window.pos - 1].to_vec();
    let parts = Parts {
        source,
        len,
        chunk,
        profile,
        max_depth: StrictReader::DEFAULT_MAX_DEPTH.saturating_sub(depth),
    };
    let Some((tools, end)) = parts.read_array(window)? else {
        return Ok(Chunked::WholeDocument);
    };
    let mut rest = Window::new(source, len, chunk, end);
    while rest.more()? {}
    Ok(judge(&prefix, rest.bytes(), tools, profile))
}

/// Whether the in-memory path accepts the document around the tools that were read: the
/// catalog digest of `tools` if it does.
fn judge(prefix: &[u8], suffix: &[u8], tools: Entries, profile: Profile) -> Chunked {
    let stand_in = unpredictable_name();
    let mut document = Vec::with_capacity(prefix.len() + suffix.len() + stand_in.len() + 16);
    document.extend_from_slice(prefix);
    document.extend_from_slice(b"[{\"name\":\"");
    document.extend_from_slice(stand_in.as_bytes());
    document.extend_from_slice(b"\"}]");
    document.extend_from_slice(suffix);
    let accepted = match stream_tools_document(&document, profile) {
        Ok(read) => matches!(
            read.as_slice(),
            [StreamedTool::Definition { name: ToolName::Text(name), .. }] if *name == stand_in
        ),
        Err(_) => false,
    };
    if !accepted {
        return Chunked::WholeDocument;
    }
    Chunked::Digest(CatalogDigest::from_keyed(tools, profile))
}

/// A tool name no document can be written to hold in advance: 128 bits from the standard
/// library's per-process random hash keys.
fn unpredictable_name() -> String {
    let word = || {
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    };
    format!("toolgate-chunk-stand-in-{:016x}{:016x}", word(), word())
}

/// Finds the tools array: the document itself, its `tools` member, or its `result` member's
/// `tools` member. Returns how many arrays and objects hold its elements (the array included),
/// with the window's cursor just after its `[`; `None` when there is none this path takes.
fn locate_tools<R: ReadAt + ?Sized>(window: &mut Window<'_, R>) -> io::Result<Option<usize>> {
    loop {
        match find_tools(window.rest()) {
            Located::At { open, depth } => {
                window.pos += open + 1;
                return Ok(Some(depth));
            }
            Located::NotYet => {
                if !window.more()? {
                    return Ok(None);
                }
            }
            Located::Nowhere => return Ok(None),
        }
    }
}

enum Located {
    At {
        open: usize,
        depth: usize,
    },
    /// Not found in what was read so far (or what was read does not parse yet).
    NotYet,
    Nowhere,
}

fn find_tools(bytes: &[u8]) -> Located {
    let mut reader = StreamReader::new(bytes);
    match reader.peek() {
        Some(JsonType::Array) => {
            return Located::At {
                open: reader.offset(),
                depth: 1,
            };
        }
        Some(JsonType::Object) => {}
        Some(_) => return Located::Nowhere,
        None if bytes.iter().all(|byte| is_whitespace(*byte)) => return Located::NotYet,
        None => return Located::Nowhere,
    }
    if reader.enter_object().is_err() {
        return Located::NotYet;
    }
    let mut depth = 1;
    loop {
        let name = match reader.next_member() {
            Ok(Some(name)) => name.to_owned(),
            Ok(None) if depth == 2 => {
                depth = 1;
                continue;
            }
            Ok(None) => return Located::Nowhere,
            Err(_) => return Located::NotYet,
        };
        let found = reader.peek();
        if name == "tools" && found == Some(JsonType::Array) {
            return Located::At {
                open: reader.offset(),
                depth: depth + 1,
            };
        }
        if depth == 1 && name == "result" && found == Some(JsonType::Object) {
            if reader.enter_object().is_err() {
                return Located::NotYet;
            }
            depth = 2;
            continue;
        }
        if reader.skip_value().is_err() {
            return Located::NotYet;
        }
    }
}

/// What reading the elements of the tools array needs.
struct Parts<'s, R: ?Sized> {
    source: &'s R,
    len: u64,
    chunk: usize,
    profile: Profile,
    /// The depth limit left to an element, below the containers around it.
    max_depth: usize,
}

/// How a run of elements ended.
enum Run {
    /// The array's `]` was read; the offset after it.
    Closed(u64),
    /// The first part arrived at the second part's first element.
    Joined,
    /// Stopped from outside (the first part went past the second part's start).
    Stopped,
    /// Something the in-memory path must judge.
    Judge,
}

impl Run {
    /// The tools a part read and the offset after the array's `]`, if the part read to it.
    fn closed(self, tools: Entries) -> Option<(Entries, u64)> {
        match self {
            Run::Closed(end) => Some((tools, end)),
            Run::Joined | Run::Stopped | Run::Judge => None,
        }
    }
}

impl<R: ReadAt + ?Sized> Parts<'_, R> {
    /// Every element of the array whose `[` the window's cursor just passed, and the offset
    /// after its `]`; `None` when the in-memory path must judge.
    fn read_array(&self, mut first: Window<'_, R>) -> io::Result<Option<(Entries, u64)>> {
        let mut tools = Vec::new();
        let content = first.offset();
        // A second thread costs more than it saves below a megabyte (as in memory); small
        // windows split small arrays, so that tests meet the two-part path.
        let large = self.len.saturating_sub(content) >= (4 * self.chunk).min(SPLIT_AT) as u64;
        let two_cpus = std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1);
        let second = if large && two_cpus {
            self.second_part_start(content + (self.len - content) / 2)?
        } else {
            None
        };
        let Some(second) = second else {
            return self.whole_run(&mut first, tools);
        };
        let start = second.offset();
        let stop = AtomicBool::new(false);
        let stop = &stop;
        std::thread::scope(|scope| {
            let later = std::thread::Builder::new()
                .name("catalog-fold-chunk".to_owned())
                .spawn_scoped(scope, move || {
                    let mut second = second;
                    let mut tools = Vec::new();
                    let run = self.run(&mut second, false, &mut tools, |_| {
                        if stop.load(Ordering::Relaxed) {
                            Next::Stop
                        } else {
                            Next::Read
                        }
                    })?;
                    let mut closed = run.closed(tools);
                    // Each part is sorted on its own thread, so that after the join the two
                    // are only merged.
                    if let Some((tools, _)) = &mut closed {
                        tools.sort_unstable();
                    }
                    Ok(closed)
                });
            let Ok(later) = later else {
                // No thread: this one reads every element.
                return self.whole_run(&mut first, tools);
            };
            let run = self.run(&mut first, true, &mut tools, |at| {
                if at == start {
                    return Next::Join;
                }
                if at > start {
                    stop.store(true, Ordering::Relaxed);
                }
                Next::Read
            });
            if matches!(run, Ok(Run::Joined)) {
                tools.sort_unstable();
            } else {
                stop.store(true, Ordering::Relaxed);
            }
            let later: io::Result<Option<(Entries, u64)>> = match later.join() {
                Ok(later) => later,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            match run? {
                Run::Closed(end) => Ok(Some((tools, end))),
                Run::Joined => Ok(later?.map(|(rest, end)| {
                    tools.extend(rest);
                    // Two sorted runs: the stable sort finds them and merges them in one pass
                    // (the fold's own sort then finds the whole sorted, also in one pass).
                    tools.sort();
                    (tools, end)
                })),
                Run::Stopped | Run::Judge => Ok(None),
            }
        })
    }

    /// Every element, read by this thread alone, and the offset after the array's `]`.
    fn whole_run(
        &self,
        window: &mut Window<'_, R>,
        mut tools: Entries,
    ) -> io::Result<Option<(Entries, u64)>> {
        Ok(self
            .run(window, true, &mut tools, |_| Next::Read)?
            .closed(tools))
    }

    /// A window at the guessed first element of the second part, at or after `middle`.
    fn second_part_start(&self, middle: u64) -> io::Result<Option<Window<'_, R>>> {
        let mut window = Window::new(self.source, self.len, self.chunk, middle);
        if !window.more()? {
            return Ok(None);
        }
        Ok(
            guess_element_start(window.bytes(), 0, TOOL_START).map(|start| {
                window.pos = start;
                window
            }),
        )
    }

    /// Reads elements from the window's cursor (after the array's `[` when `at_open`, else at
    /// an element), each digested and keyed into `tools`; `before` is asked at each element's
    /// offset.
    fn run(
        &self,
        window: &mut Window<'_, R>,
        at_open: bool,
        tools: &mut Entries,
        mut before: impl FnMut(u64) -> Next,
    ) -> io::Result<Run> {
        let mut at_open = at_open;
        loop {
            let Some(byte) = window.next_byte()? else {
                return Ok(Run::Judge);
            };
            if at_open && byte == b']' {
                window.pos += 1;
                return Ok(Run::Closed(window.offset()));
            }
            at_open = false;
            match before(window.offset()) {
                Next::Read => {}
                Next::Join => return Ok(Run::Joined),
                Next::Stop => return Ok(Run::Stopped),
            }
            match self.element(window, tools)? {
                Some(b',') => {}
                Some(b']') => return Ok(Run::Closed(window.offset())),
                _ => return Ok(Run::Judge),
            }
        }
    }

    /// Digests and keys the element at the window's cursor into `tools` and moves past the
    /// byte after it (returned: `,` or `]` in a valid array); `None` when the element or what
    /// follows does not read, up to the end of the document, or it has no key (the in-memory
    /// path names it by its place in the whole document).
    fn element(&self, window: &mut Window<'_, R>, tools: &mut Entries) -> io::Result<Option<u8>> {
        loop {
            let rest = window.rest();
            let mut reader = StreamReader::with_max_depth(rest, self.max_depth);
            let read = reader.tool_definition(self.profile);
            let end = reader.offset();
            drop(reader);
            // The value ends only where the byte after it shows (a number would read as
            // complete at the window's edge): that byte must be in the window too.
            let after = rest
                .get(end..)
                .and_then(|after| after.iter().position(|byte| !is_whitespace(*byte)));
            match (read, after) {
                (Ok(tool), Some(gap)) => {
                    let Ok(entry) = streamed_entry(&tool) else {
                        return Ok(None);
                    };
                    let delimiter = rest[end + gap];
                    window.pos += end + gap + 1;
                    tools.push(entry);
                    return Ok(Some(delimiter));
                }
                // Cut off by the window's edge, or an error: read more, and judge at the end.
                _ => {
                    if !window.more()? {
                        return Ok(None);
                    }
                }
            }
        }
    }
}

/// What a run does at an element.
enum Next {
    Read,
    Join,
    Stop,
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Part of the source, read a chunk at a time, with a cursor.
struct Window<'s, R: ?Sized> {
    source: &'s R,
    /// Where reading stops: the source's length, or less if it turned out shorter.
    len: u64,
    chunk: usize,
    /// The bytes read are `buf[..filled]`. The rest was written before and is kept as it is,
    /// so that reading the next chunk into it needs no zeros written first (the whole file
    /// would be zeroed once over, a chunk at a time).
    buf: Vec<u8>,
    filled: usize,
    /// The source offset of `buf[0]`.
    base: u64,
    /// The cursor, in `buf`.
    pos: usize,
}

impl<'s, R: ReadAt + ?Sized> Window<'s, R> {
    fn new(source: &'s R, len: u64, chunk: usize, at: u64) -> Self {
        Window {
            source,
            len,
            chunk,
            buf: Vec::new(),
            filled: 0,
            base: at.min(len),
            pos: 0,
        }
    }

    /// The source offset of the cursor.
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The bytes from the cursor to the window's end.
    fn rest(&self) -> &[u8] {
        self.bytes().get(self.pos..).unwrap_or_default()
    }

    /// The bytes read, from the window's start.
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.filled]
    }

    /// Drops what the cursor passed and reads more: a chunk, or as much as the window already
    /// holds if that is more (so that a value longer than the window is read again only a
    /// logarithmic number of times). Returns `false` at the end of the source.
    fn more(&mut self) -> io::Result<bool> {
        let passed = self.pos.min(self.filled);
        self.buf.copy_within(passed..self.filled, 0);
        self.filled -= passed;
        self.base += passed as u64;
        self.pos = 0;
        let held = self.filled;
        let left = self.len.saturating_sub(self.base + held as u64);
        let want = usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(self.chunk.max(held));
        if want == 0 {
            return Ok(false);
        }
        let end = held + want;
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        while self.filled < end {
            let read = self.source.read_at(
                &mut self.buf[self.filled..end],
                self.base + self.filled as u64,
            )?;
            if read == 0 {
                break;
            }
            self.filled += read;
        }
        if self.filled == held {
            // The source ended before its length said: it ends here.
            self.len = self.base + held as u64;
            return Ok(false);
        }
        Ok(true)
    }

    /// Moves the cursor past whitespace, reading more as needed: the byte there, or `None` at
    /// the end of the source.
    fn next_byte(&mut self) -> io::Result<Option<u8>> {
        loop {
            if let Some(skip) = self.rest().iter().position(|byte| !is_whitespace(*byte)) {
                self.pos += skip;
                return Ok(Some(self.buf[self.pos]));
            }
            self.pos = self.filled;
            if !self.more()? {
                return Ok(None);
            }
        }
    }
}
