//! The `tools/list` answers of one upstream, kept so that an answer served again byte for byte
//! (but for its id) is recognized without checking the message again.
//!
//! In `per-call` mode every call lists the upstream again, and an unchanged upstream answers
//! with the same bytes each time except for the JSON-RPC `id`, which is that of each request.
//! Checking the message (`Message::from_slice`: UTF-8, grammar, duplicate members and depth over
//! the whole answer) was nearly all of what such a listing cost once its page was found in the
//! page memo (BENCHMARKS.md, twenty-third session).
//!
//! An answer `P` that passed the message check and the id check is kept with the span of its
//! top-level `id` value, found by the strict reader. A later answer `N` to a request with id
//! `n` is recognized when `N` is `P` with exactly that span replaced by `n` written as JSON
//! writes an integer. Replacing one integer by another where the grammar has a value changes
//! neither the message's well-formedness nor any other member, so `N` is a response to `n` with
//! `P`'s result, byte for byte: what checking it would give. Anything else in `N` that differs
//! (a drifted tool, other whitespace, an id elsewhere or spelled otherwise) makes it a stranger
//! that is checked in full. In an event stream (`text/event-stream`) it is the data of the
//! response's event that is kept and recognized: the stream's other events, notifications
//! above all, are read every time.
//!
//! The type is the crate's own; a build by cargo-fuzz (`--cfg fuzzing`) also exports it, for
//! fuzz/fuzz_targets/fuzz_answer_memo.rs to compare it with the message check.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use jcs_digest::{JsonType, StreamReader};
use toolgate_mcp::{RawJson, RequestId, Response, ResponsePayload};

/// Recent `tools/list` answers of one upstream, within a byte budget.
#[derive(Debug)]
pub struct AnswerMemo {
    held: Mutex<Held>,
    recognized: AtomicU64,
    /// The most bytes (answers and their results) held at once.
    budget: usize,
}

#[derive(Debug, Default)]
struct Held {
    answers: VecDeque<KeptAnswer>,
    bytes: usize,
}

#[derive(Debug, Clone)]
struct KeptAnswer {
    body: Bytes,
    /// Where the top-level `id` value is in `body`.
    id: Range<usize>,
    result: RawJson,
}

impl KeptAnswer {
    fn size(&self) -> usize {
        self.body.len() + self.result.as_bytes().len()
    }

    /// Whether an answer of `length` bytes could be this one with an id of `id_length` bytes.
    fn fits(&self, length: usize, id_length: usize) -> bool {
        length == self.body.len() - self.id.len() + id_length
    }

    /// Whether `body` is this answer with its id written as `id`.
    fn matches(&self, body: &[u8], id: &[u8]) -> bool {
        let (before, after) = (&self.body[..self.id.start], &self.body[self.id.end..]);
        self.fits(body.len(), id.len())
            && body.starts_with(before)
            && body.ends_with(after)
            && &body[before.len()..before.len() + id.len()] == id
    }
}

impl AnswerMemo {
    /// An empty memo that holds at most `budget` bytes (the listing budget: about one
    /// listing's answers).
    pub fn new(budget: usize) -> AnswerMemo {
        AnswerMemo {
            held: Mutex::new(Held::default()),
            recognized: AtomicU64::new(0),
            budget,
        }
    }

    /// The response `body` holds, when it is a kept answer with its id replaced by `expected`
    /// (an integer id; string ids are never recognized).
    pub fn recognize(&self, body: &[u8], expected: &RequestId) -> Option<Response> {
        let RequestId::Number(number) = expected else {
            return None;
        };
        let id = number.to_string();
        // The bytes are compared outside the lock (a large listing's take a while, and in
        // `per-call` mode every call lists): each candidate of the right length is taken out
        // (shared, not copied) in turn. An answer kept or forgotten meanwhile can shift the
        // positions, which can only make a candidate missed, and the answer then checked.
        let mut from = 0;
        loop {
            let (position, kept) = {
                let held = self.lock();
                let (offset, kept) = held
                    .answers
                    .iter()
                    .skip(from)
                    .enumerate()
                    .find(|(_, kept)| kept.fits(body.len(), id.len()))?;
                (from + offset, kept.clone())
            };
            if kept.matches(body, id.as_bytes()) {
                self.recognized.fetch_add(1, Ordering::Relaxed);
                return Some(Response::result(expected.clone(), kept.result));
            }
            from = position + 1;
        }
    }

    /// Keeps `body`, which passed the message check and answered `expected` with `response`,
    /// when it is a result whose top-level `id` is `expected` written as an integer, found by
    /// the strict reader (otherwise it is simply not kept). The oldest answers make room for it.
    pub fn keep(&self, body: Bytes, expected: &RequestId, response: &Response) {
        let (RequestId::Number(number), ResponsePayload::Result(result)) =
            (expected, &response.payload)
        else {
            return;
        };
        let Some(id) = top_level_id(&body) else {
            return;
        };
        if body[id.clone()] != *number.to_string().as_bytes() {
            return;
        }
        let kept = KeptAnswer {
            body,
            id,
            result: result.clone(),
        };
        let size = kept.size();
        if size > self.budget {
            return;
        }
        let mut held = self.lock();
        if held.answers.iter().any(|other| other.body == kept.body) {
            return;
        }
        while held.bytes + size > self.budget {
            let Some(oldest) = held.answers.pop_front() else {
                break;
            };
            held.bytes -= oldest.size();
        }
        held.bytes += size;
        held.answers.push_back(kept);
    }

    /// How many answers were recognized rather than checked, since the memo was made.
    pub fn recognized(&self) -> u64 {
        self.recognized.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        // Nothing is left half-updated by a panic while it is held.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The span of the `id` member's value of the object `body` holds, read by the strict reader
/// up to it (`None` when it has none, or when the strict reader refuses a member before it).
/// The members after it are not read: `body` passed the message check, so it holds one `id`.
/// (An answer that puts its `result` first has it read here once, when the answer is kept.)
fn top_level_id(body: &[u8]) -> Option<Range<usize>> {
    let mut reader = StreamReader::new(body);
    if reader.peek() != Some(JsonType::Object) {
        return None;
    }
    reader.enter_object().ok()?;
    while let Some(name) = reader.next_member().ok()? {
        let is_id = name == "id";
        reader.peek()?;
        let start = reader.offset();
        reader.skip_value().ok()?;
        if is_id {
            return Some(start..reader.offset());
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use toolgate_mcp::Message;

    /// What the transport does with an answer: recognized, or checked and then kept.
    fn answer(memo: &AnswerMemo, body: &str, id: i64) -> (Response, bool) {
        let expected = RequestId::Number(id);
        if let Some(response) = memo.recognize(body.as_bytes(), &expected) {
            return (response, true);
        }
        let Message::Response(response) = Message::from_slice(body.as_bytes()).unwrap() else {
            panic!("not a response: {body}");
        };
        assert_eq!(response.id.as_ref(), Some(&expected), "{body}");
        memo.keep(
            Bytes::copy_from_slice(body.as_bytes()),
            &expected,
            &response,
        );
        (response, false)
    }

    fn result_text(response: &Response) -> &str {
        match &response.payload {
            ResponsePayload::Result(result) => result.as_str(),
            ResponsePayload::Error(error) => panic!("an error: {error:?}"),
        }
    }

    const PAGE: &str =
        r#"{"tools":[{"name":"ask","description":"Asks 7 questions: \"id\":7","inputSchema":{}}]}"#;

    #[test]
    fn an_answer_served_again_under_another_id_is_recognized_with_its_result() {
        let memo = AnswerMemo::new(1 << 20);
        let first = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{PAGE}}}"#);
        assert!(!answer(&memo, &first, 7).1);
        // The same bytes under the next ids, of one more digit, and of one fewer.
        for id in [8, 10, 123_456_789, 9] {
            let again = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{PAGE}}}"#);
            let (response, recognized) = answer(&memo, &again, id);
            assert!(recognized, "id {id}");
            assert_eq!(response.id, Some(RequestId::Number(id)));
            assert_eq!(result_text(&response), PAGE);
        }
        assert_eq!(memo.recognized(), 4);
    }

    #[test]
    fn any_other_difference_is_checked_in_full() {
        let memo = AnswerMemo::new(1 << 20);
        let body =
            |id: &str, page: &str| format!(r#"{{"jsonrpc":"2.0", "id": {id} ,"result":{page}}}"#);
        assert!(!answer(&memo, &body("7", PAGE), 7).1);
        let drifted = PAGE.replacen("questions", "questiond", 1);
        let strangers = [
            // A drifted description: checked, and its own result returned.
            (body("8", &drifted), 8),
            // The id written in the description changed, not the id.
            (
                body("7", &PAGE.replacen(r#"\"id\":7"#, r#"\"id\":8"#, 1)),
                7,
            ),
            // Other whitespace around the id.
            (
                format!(r#"{{"jsonrpc":"2.0", "id":8 ,"result":{PAGE}}}"#),
                8,
            ),
            // The members in another order.
            (
                format!(r#"{{"id": 8 ,"jsonrpc":"2.0","result":{PAGE}}}"#),
                8,
            ),
        ];
        for (text, id) in &strangers {
            let (response, recognized) = answer(&memo, text, *id);
            assert!(!recognized, "{text}");
            assert_eq!(response.id, Some(RequestId::Number(*id)));
        }
        // Each stranger was kept in its turn, so each is now recognized under a new id.
        assert_eq!(memo.recognized(), 0);
        let (response, recognized) = answer(&memo, &body("9", &drifted), 9);
        assert!(recognized);
        assert_eq!(result_text(&response), drifted);
        // An id spelled otherwise than the request's is never taken as that id.
        assert!(
            memo.recognize(body("09", PAGE).as_bytes(), &RequestId::Number(9))
                .is_none()
        );
        assert!(
            memo.recognize(body("9.0", PAGE).as_bytes(), &RequestId::Number(9))
                .is_none()
        );
        assert!(
            memo.recognize(body("7", PAGE).as_bytes(), &RequestId::from("7"))
                .is_none()
        );
    }

    #[test]
    fn what_is_kept_is_a_result_under_the_requests_integer_id() {
        let memo = AnswerMemo::new(1 << 20);
        let keep = |text: &str, id: RequestId| {
            let Message::Response(response) = Message::from_slice(text.as_bytes()).unwrap() else {
                panic!("not a response");
            };
            memo.keep(Bytes::copy_from_slice(text.as_bytes()), &id, &response);
        };
        // A string id, an error, and an id that is not the request's: none kept.
        keep(
            r#"{"jsonrpc":"2.0","id":"a","result":{}}"#,
            RequestId::from("a"),
        );
        keep(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m"}}"#,
            RequestId::Number(3),
        );
        keep(
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
            RequestId::Number(6),
        );
        for (text, id) in [
            (r#"{"jsonrpc":"2.0","id":8,"result":{}}"#, 8),
            (
                r#"{"jsonrpc":"2.0","id":8,"error":{"code":-1,"message":"m"}}"#,
                8,
            ),
        ] {
            assert!(
                memo.recognize(text.as_bytes(), &RequestId::Number(id))
                    .is_none(),
                "{text}"
            );
        }
        assert_eq!(memo.lock().answers.len(), 0);
        // A result is not read past the id when the id comes first: what the message check
        // accepted (here a number beyond a double, which the definition check refuses later) is
        // kept, and recognized as exactly that result.
        let wide = r#"{"jsonrpc":"2.0","id":4,"result":{"n":1e400}}"#;
        keep(wide, RequestId::Number(4));
        let again = memo
            .recognize(wide.replacen("4", "8", 1).as_bytes(), &RequestId::Number(8))
            .unwrap();
        assert_eq!(result_text(&again), r#"{"n":1e400}"#);
        memo.lock().answers.clear();
        memo.lock().bytes = 0;
        // The id found is the top-level member's, after a result that holds an `id` of its own.
        let late = r#"{"jsonrpc":"2.0","result":{"id":5,"tools":[]},"id":5}"#;
        keep(late, RequestId::Number(5));
        let kept = memo.lock().answers[0].id.clone();
        assert_eq!(&late[kept], "5");
        assert_eq!(kept_start(late), late.rfind('5').unwrap());
    }

    fn kept_start(text: &str) -> usize {
        top_level_id(text.as_bytes()).unwrap().start
    }

    #[test]
    fn the_memo_holds_at_most_its_budget_and_forgets_the_oldest_first() {
        let bodies: Vec<String> = (0..4)
            .map(|n| format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[],"n":{n}}}}}"#))
            .collect();
        let size = bodies[0].len() + r#"{"tools":[],"n":0}"#.len();
        let memo = AnswerMemo::new(3 * size);
        for body in &bodies {
            answer(&memo, body, 1);
        }
        assert_eq!(memo.lock().answers.len(), 3);
        assert_eq!(memo.lock().bytes, 3 * size);
        // The first was forgotten; the last three are recognized.
        let under = |body: &str| body.replacen(r#""id":1"#, r#""id":2"#, 1);
        assert!(
            memo.recognize(under(&bodies[0]).as_bytes(), &RequestId::Number(2))
                .is_none()
        );
        for body in &bodies[1..] {
            assert!(
                memo.recognize(under(body).as_bytes(), &RequestId::Number(2))
                    .is_some()
            );
        }
        // An answer larger than the whole budget is not kept, and nothing is forgotten for it.
        let tiny = AnswerMemo::new(size - 1);
        answer(&tiny, &bodies[0], 1);
        assert_eq!(tiny.lock().answers.len(), 0);
    }

    #[test]
    fn answers_are_recognized_while_other_threads_keep_and_forget_answers() {
        let body = |id: i64, n: usize| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[],"n":{n}}}}}"#)
        };
        let size = body(1, 0).len() + r#"{"tools":[],"n":0}"#.len();
        // Room for four: the keeping thread makes the memo forget its oldest all the time.
        let memo = AnswerMemo::new(4 * size);
        let found = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for n in 0..2_000 {
                    answer(&memo, &body(1, n % 10), 1);
                }
            });
            for thread in 0..2_i64 {
                let (memo, found) = (&memo, &found);
                scope.spawn(move || {
                    for call in 0..2_000_i64 {
                        let n = (call % 10) as usize;
                        let id = 10 + thread * 10_000 + call;
                        let expected = RequestId::Number(id);
                        if let Some(response) = memo.recognize(body(id, n).as_bytes(), &expected) {
                            assert_eq!(response.id, Some(expected));
                            assert_eq!(
                                result_text(&response),
                                format!(r#"{{"tools":[],"n":{n}}}"#)
                            );
                            found.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(memo.recognized(), found.load(Ordering::Relaxed));
        assert_eq!(memo.lock().bytes, 4 * size);
        // The last four kept (n = 6 to 9) are held, the others forgotten.
        for n in 0..10 {
            let again = memo.recognize(body(99, n).as_bytes(), &RequestId::Number(99));
            assert_eq!(again.is_some(), n >= 6, "n = {n}");
        }
    }

    proptest::proptest! {
        /// Whatever the memo recognizes is what checking the answer gives: the same id and the
        /// same result bytes. Answers are the kept one with its id replaced, and that with one
        /// byte changed anywhere.
        #[test]
        fn what_is_recognized_is_what_the_check_reads(
            description in "[ -~é]{0,24}",
            first_id in 0_i64..100_000,
            next_id in 0_i64..100_000,
            space in "[ \n]{0,2}",
            at in proptest::num::usize::ANY,
            byte in proptest::num::u8::ANY,
            id_last in proptest::bool::ANY,
        ) {
            let page = serde_json::json!({"tools": [{"name": "t", "description": description}]});
            let body = |id: i64| if id_last {
                format!(r#"{{"jsonrpc":"2.0","result":{page}{space},"id":{space}{id}}}"#)
            } else {
                format!(r#"{{"jsonrpc":"2.0",{space}"id":{id}{space},"result":{page}}}"#)
            };
            let memo = AnswerMemo::new(1 << 20);
            answer(&memo, &body(first_id), first_id);
            let expected = RequestId::Number(next_id);
            let same = body(next_id).into_bytes();
            let mut changed = same.clone();
            let at = at % changed.len();
            changed[at] = byte;
            for candidate in [same.clone(), changed] {
                let Some(recognized) = memo.recognize(&candidate, &expected) else {
                    proptest::prop_assert_ne!(&candidate, &same);
                    continue;
                };
                let Ok(Message::Response(checked)) = Message::from_slice(&candidate) else {
                    return Err(proptest::test_runner::TestCaseError::fail(
                        "recognized an answer the check refuses",
                    ));
                };
                proptest::prop_assert_eq!(&checked.id, &Some(expected.clone()));
                proptest::prop_assert_eq!(result_text(&checked), result_text(&recognized));
            }
        }
    }
}
