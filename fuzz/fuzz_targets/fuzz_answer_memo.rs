//! Differential fuzzing of the answer memo (`AnswerMemo`, through which `per-call` mode takes a
//! `tools/list` answer served again under a new id): whatever the memo recognizes must be
//! exactly what checking the message gives, a response to the request's id with the same
//! result; an answer it does not recognize is checked, and kept when the check accepts it.
//!
//! Input: answer templates separated by 0xFF. In each, every 0xFE byte (never in UTF-8 text)
//! is replaced by the request's id in decimal, so one template served under successive ids is
//! the same answer with its id changed. An empty template repeats the previous one.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolgate::mcp::{Message, RequestId, Response};
use toolgate::upstream::AnswerMemo;

const MAX_ANSWERS: usize = 12;

/// Small enough that the fuzzer's answers make the memo forget its oldest.
const BUDGET: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let memo = AnswerMemo::new(BUDGET);
    let mut previous: &[u8] = &[];
    for (index, template) in data.split(|&byte| byte == 0xFF).take(MAX_ANSWERS).enumerate() {
        let template = if template.is_empty() { previous } else { template };
        previous = template;
        // 0, 997, 1994, …: ids of one, three and four digits, so the id's span changes length.
        let expected = RequestId::Number(index as i64 * 997);
        let answer = with_id(template, &expected);
        let checked = check(&answer, &expected);
        let recognized_before = memo.recognized();
        match memo.recognize(&answer, &expected) {
            Some(recognized) => {
                assert_eq!(Some(&recognized), checked.as_ref(), "answer {answer:?}");
                assert_eq!(memo.recognized(), recognized_before + 1);
            }
            None => {
                assert_eq!(memo.recognized(), recognized_before);
                if let Some(response) = checked {
                    memo.keep(Bytes::from(answer), &expected, &response);
                }
            }
        }
    }
});

fn with_id(template: &[u8], id: &RequestId) -> Vec<u8> {
    let RequestId::Number(number) = id else {
        unreachable!("the target's ids are integers")
    };
    let text = number.to_string();
    let mut answer = Vec::with_capacity(template.len() + 8);
    for &byte in template {
        match byte {
            0xFE => answer.extend_from_slice(text.as_bytes()),
            _ => answer.push(byte),
        }
    }
    answer
}

/// What the transport accepts without the memo: a response (result or error) to `expected`.
fn check(answer: &[u8], expected: &RequestId) -> Option<Response> {
    match Message::from_slice(answer) {
        Ok(Message::Response(response)) if response.id.as_ref() == Some(expected) => {
            Some(response)
        }
        _ => None,
    }
}
