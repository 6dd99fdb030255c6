//! The buffers a reader leaves behind when it is dropped, kept for the next reader on the same
//! thread. The gateway reads a small `tools/list` answer on every call in `per-call` mode, and
//! a fresh reader would allocate and grow each of its buffers again every time.

use std::cell::Cell;

use super::{Frame, Name, Span};

/// A buffer that has grown past this many bytes is freed instead of kept: it held a large
/// document, and the next reader on the thread probably reads a small one.
const KEEP_AT_MOST: usize = 64 * 1024;

/// A reader's buffers, empty.
#[derive(Default)]
pub(super) struct Buffers {
    pub(super) stack: Vec<Frame>,
    pub(super) name_text: Vec<u8>,
    pub(super) names: Vec<Name>,
    pub(super) spans: Vec<Span>,
    pub(super) scratch: Vec<u8>,
    pub(super) tool_buffer: Vec<u8>,
}

thread_local! {
    /// At most one set per thread: readers nested on one thread (none in this crate) would
    /// simply allocate their own.
    static SPARE: Cell<Option<Buffers>> = const { Cell::new(None) };
}

impl Buffers {
    /// The buffers the last reader on this thread left, or new ones.
    pub(super) fn take() -> Buffers {
        SPARE
            .try_with(Cell::take)
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Empties the buffers (freeing the large ones) and keeps them for the next reader on this
    /// thread.
    pub(super) fn give_back(mut self) {
        empty(&mut self.stack);
        empty(&mut self.name_text);
        empty(&mut self.names);
        empty(&mut self.spans);
        empty(&mut self.scratch);
        empty(&mut self.tool_buffer);
        // Not kept while the thread is ending (its thread-locals are being destroyed).
        let _ = SPARE.try_with(|spare| spare.set(Some(self)));
    }
}

/// Clears `buffer`, and frees it when it takes more than [`KEEP_AT_MOST`] bytes.
fn empty<T>(buffer: &mut Vec<T>) {
    if buffer.capacity().saturating_mul(size_of::<T>()) > KEEP_AT_MOST {
        *buffer = Vec::new();
    } else {
        buffer.clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::stream::canonicalize_strict;

    /// Buffers given back are the next ones taken on the thread, emptied, with their capacity;
    /// a large one is freed; and a reader that stopped half-way through a document leaves
    /// nothing of it to the next.
    #[test]
    fn the_next_reader_on_the_thread_gets_the_buffers_emptied() {
        drop(Buffers::take());
        let mut small = Buffers::default();
        small.name_text.extend_from_slice(b"a name");
        let capacity = small.name_text.capacity();
        small.give_back();
        let again = Buffers::take();
        assert_eq!(
            (again.name_text.len(), again.name_text.capacity()),
            (0, capacity)
        );
        assert_eq!(Buffers::take().name_text.capacity(), 0);

        let mut large = Buffers::default();
        large.scratch.reserve(KEEP_AT_MOST + 1);
        large.give_back();
        assert_eq!(Buffers::take().scratch.capacity(), 0);

        let error = canonicalize_strict(br#"{"z": {"y": [1, {"x": "#).unwrap_err();
        assert_eq!(error.offset(), 22);
        assert_eq!(
            canonicalize_strict(br#"{"b": {"y": 1, "x": 2}, "a": 3}"#).unwrap(),
            br#"{"a":3,"b":{"x":2,"y":1}}"#
        );
    }
}
