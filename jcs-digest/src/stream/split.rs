//! The elements of a large array read in two halves on two threads, with the result (errors
//! included) of reading them one after the other.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Frame, StreamReader};
use crate::error::StrictJsonError;

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

impl<'a> StreamReader<'a> {
    /// Reads the array that is the next value, every element with `read`, in order.
    ///
    /// A large array on a machine with more than one CPU is read in two halves at once (see
    /// [`elements_split`](Self::elements_split)); `prefer` is how an element of this array
    /// probably starts after its `{` (a member name in quotes), to guess the second half's
    /// first element.
    pub(super) fn elements<T, F>(
        &mut self,
        prefer: Option<&[u8]>,
        read: F,
    ) -> Result<Vec<T>, StrictJsonError>
    where
        T: Send,
        F: Fn(&mut StreamReader<'a>) -> Result<T, StrictJsonError> + Sync,
    {
        self.enter_array()?;
        let large = self.input.len().saturating_sub(self.offset()) >= SPLIT_AT;
        if large && std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1) {
            if let Some(split) = split_candidate(self.input, self.pos, prefer) {
                return self.elements_split(split, &read);
            }
        }
        let mut elements = Vec::new();
        while self.next_element()? {
            elements.push(read(self)?);
        }
        Ok(elements)
    }

    /// The elements of the entered array, read by this thread up to `split` and by a second
    /// one from there on.
    ///
    /// `split` is only a guess at where an element starts (found by looking at a few bytes,
    /// not by reading the document), so the second half is used only when it is proven right:
    /// this thread, reading every element from the start, must arrive at an element of this
    /// array that starts exactly at `split`. The second thread's reader then stood where this
    /// one stands (an element of an array with as many containers open), and what a reader
    /// does from there depends on nothing else, so its elements are the ones this thread
    /// would have read. If the guess was wrong, or the second half was refused (its error
    /// would lack the index in its pointer), this thread reads on alone and meets every error
    /// itself, in document order.
    fn elements_split<T, F>(&mut self, split: usize, read: &F) -> Result<Vec<T>, StrictJsonError>
    where
        T: Send,
        F: Fn(&mut StreamReader<'a>) -> Result<T, StrictJsonError> + Sync,
    {
        let stop = AtomicBool::new(false);
        let input = self.input;
        let (depth, max_depth) = (self.stack.len(), self.max_depth);
        std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new()
                .name("jcs-digest-split".to_owned())
                .spawn_scoped(scope, || {
                    read_from(input, split, depth, max_depth, read, &stop)
                });
            // Stops the second thread as soon as this one returns, error or not.
            let _stop_on_return = StopOnDrop(&stop);
            let mut second = spawned.ok();
            let mut elements = Vec::new();
            while self.next_element()? {
                self.skip_whitespace();
                if self.pos == split {
                    if let Some((rest, end)) = second.take().and_then(join) {
                        elements.extend(rest);
                        // As `next_element` closes an array whose `]` it has read.
                        self.pos = end;
                        self.close::<false>(&mut Vec::new());
                        return Ok(elements);
                    }
                } else if self.pos > split && second.is_some() {
                    stop.store(true, Ordering::Relaxed);
                    second = None;
                }
                elements.push(read(self)?);
            }
            Ok(elements)
        })
    }
}

/// Sets the flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The second half's outcome: its elements and the offset after the array's `]`, or `None`
/// when it was stopped or refused something.
type Half<T> = Option<(Vec<T>, usize)>;

/// Waits for the second half; a panic there is this thread's.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, Half<T>>) -> Half<T> {
    match handle.join() {
        Ok(half) => half,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Reads the elements of an array from `split` to its `]`, as a reader with `depth`
/// containers open (the array innermost, past its first element) would: every element with
/// `read`, within the same depth limit.
fn read_from<'a, T, F>(
    input: &'a [u8],
    split: usize,
    depth: usize,
    max_depth: usize,
    read: &F,
    stop: &AtomicBool,
) -> Half<T>
where
    F: Fn(&mut StreamReader<'a>) -> Result<T, StrictJsonError>,
{
    let mut reader = StreamReader::with_max_depth(input, max_depth);
    reader.pos = split;
    // Only the number of open containers matters to what is accepted; the frames below the
    // array stand in for the real ones, which would only name them in an error pointer.
    reader.stack.extend((0..depth).map(|level| Frame {
        object: false,
        count: 0,
        started: level + 1 == depth,
        names_start: 0,
        text_start: 0,
        current: None,
        seen: None,
        canonical: None,
    }));
    let mut elements = Vec::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        elements.push(read(&mut reader).ok()?);
        if !reader.next_element().ok()? {
            return Some((elements, reader.pos));
        }
    }
}

/// A guess at where an element of the array whose content starts at `from` begins, near the
/// middle of what is left (see [`guess_element_start`]).
fn split_candidate(input: &[u8], from: usize, prefer: Option<&[u8]>) -> Option<usize> {
    let middle = from + input.len().saturating_sub(from) / 2;
    guess_element_start(input, middle, prefer)
}

/// A guess at where an element of an array begins in `input`, at or after `at`: a `{` that
/// follows `}` and `,` (whitespace allowed between), all three at or after `at`, preferably one
/// whose first member starts with the bytes `prefer` (a tool definition's `"name"`, not a
/// nested schema). Reading a large array in parts starts a part there.
///
/// Only a guess, from a few bytes and not from reading the document: the `{` may be inside a
/// string or a nested array. Use it only once a reader that read every element from the
/// array's start has arrived exactly there, as [`StreamReader::elements_with`] does.
///
/// ```
/// use jcs_digest::guess_element_start;
///
/// let tools = br#"[{"name":"a"},{"name":"b","x":{"y":1}},{"name":"c"}]"#;
/// assert_eq!(guess_element_start(tools, 2, Some(br#""name""#)), Some(14));
/// assert_eq!(guess_element_start(tools, 15, Some(br#""name""#)), Some(39));
/// assert_eq!(guess_element_start(b"[1, 2, 3]", 0, None), None);
/// ```
pub fn guess_element_start(input: &[u8], at: usize, prefer: Option<&[u8]>) -> Option<usize> {
    // Past this many bytes beyond a plain candidate, looking for a better one costs more than
    // a wrong guess.
    const LOOK_FURTHER: usize = 1 << 16;
    let mut plain: Option<usize> = None;
    let mut from = at;
    while let Some(offset) = input.get(from..)?.iter().position(|&b| b == b'{') {
        let open = from + offset;
        if plain.is_some_and(|plain| open - plain > LOOK_FURTHER) {
            break;
        }
        from = open + 1;
        let Some((&b',', before)) = trim_end(&input[at..open]).split_last() else {
            continue;
        };
        if trim_end(before).last() != Some(&b'}') {
            continue;
        }
        match prefer {
            Some(prefer) if !trim_start(&input[from..]).starts_with(prefer) => {
                plain.get_or_insert(open);
            }
            _ => return Some(open),
        }
    }
    plain
}

/// The first member name of the first element of the array whose content starts at `from`,
/// with its quotes, when that element is an object (`"tool_name"` in `[{"tool_name": …`): the
/// other elements of an array written by one program probably start with it too.
pub(super) fn first_member_name(input: &[u8], from: usize) -> Option<&[u8]> {
    let element = trim_start(input.get(from..)?).strip_prefix(b"{")?;
    let name = trim_start(element);
    let close = name.iter().skip(1).position(|&b| b == b'"')?;
    name.get(..close + 2)
        .filter(|name| name.first() == Some(&b'"'))
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

    const NAME: Option<&[u8]> = Some(b"\"name\"");

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
            let guess = split_candidate(document.as_bytes(), 1, NAME).unwrap();
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
        assert_eq!(split_candidate(document, 1, NAME), Some(25));
        assert_eq!(split_candidate(document, 1, None), Some(25));
        assert_eq!(split_candidate(b"[1,2,3,4,5,6,7,8]", 1, NAME), None);
        assert_eq!(split_candidate(br#"[{"a":1},{"b":2}]"#, 17, NAME), None);
    }

    /// The preferred start wins over an earlier plain candidate (a nested object after an
    /// object); without it, the earlier one is the guess.
    #[test]
    fn the_preferred_first_member_wins() {
        let document = br#"[{"k":1},{"k":2},{"s":[{"a":1},{"a":2}]},{"k":3}]"#;
        // The middle is byte 25, inside `{"a":1}`; `{"a":2}` (31) comes after `},`.
        assert_eq!(split_candidate(document, 1, None), Some(31));
        assert_eq!(split_candidate(document, 1, Some(br#""k""#)), Some(41));
        assert!(element_starts(document).contains(&41));
        assert!(!element_starts(document).contains(&31));
    }

    #[test]
    fn the_first_member_name_is_read_with_its_quotes() {
        assert_eq!(
            first_member_name(b"[ {\n  \"tool_name\" : 1}]", 1),
            Some(&b"\"tool_name\""[..])
        );
        assert_eq!(first_member_name(br#"[{"":1}]"#, 1), Some(&b"\"\""[..]));
        assert_eq!(first_member_name(b"[{}]", 1), None);
        assert_eq!(first_member_name(b"[1]", 1), None);
        assert_eq!(first_member_name(br#"[{"unclosed"#, 1), None);
        assert_eq!(first_member_name(b"[", 1), None);
    }
}
