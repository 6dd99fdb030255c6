//! Fuzz what the gateway reads from the network: JSON-RPC messages (from clients and upstreams),
//! SSE event streams (upstream responses), and `Mcp-Name`-style header values.
//!
//! Properties: no input panics; an accepted message serializes to bytes that parse back to the
//! same message; an SSE stream gives the same messages whether it arrives whole or split at any
//! byte; a header value round-trips through its encoding.
//!
//! The raw pass-through path (tool-call arguments and results, docs/design.md §5): whatever the
//! strict reader accepts is well-formed; a well-formed text is carried byte for byte as a
//! result and as tools/call arguments through serialization and parsing (also split into SSE
//! data lines); adding `resultType` to a well-formed object keeps it well-formed and leaves
//! the rest of its bytes as they were.
#![no_main]

use toolgate::mcp::{
    DEFAULT_MAX_DEPTH, Message, RawJson, Request, RequestId, Response, ResponsePayload, SseParser,
    check_well_formed, decode_header_value, encode_header_value, encode_sse_event,
    parse_sse_messages,
};
use libfuzzer_sys::fuzz_target;

const MAX_EVENT_BYTES: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let strict = Message::from_slice(data);
    if let Ok(message) = &strict {
        let bytes = message.to_vec();
        let again = Message::from_slice(&bytes).expect("a serialized message must parse");
        assert_eq!(again.to_vec(), bytes);
    }

    let whole = parse_sse_messages(data, MAX_EVENT_BYTES);
    if let Ok(messages) = &whole {
        let split = data.first().map_or(0, |b| usize::from(*b)) % (data.len() + 1);
        let mut parser = SseParser::new(MAX_EVENT_BYTES);
        let mut pieces = parser.push_messages(&data[..split]).expect("a prefix of a good stream");
        pieces.extend(parser.push_messages(&data[split..]).expect("the rest of a good stream"));
        let whole: Vec<Vec<u8>> = messages.iter().map(Message::to_vec).collect();
        let pieces: Vec<Vec<u8>> = pieces.iter().map(Message::to_vec).collect();
        assert_eq!(whole, pieces);
    }

    pass_through(data);

    if let Some(value) = decode_header_value(data) {
        assert_eq!(decode_header_value(encode_header_value(&value).as_bytes()), Some(value));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(decode_header_value(encode_header_value(text).as_bytes()).as_deref(), Some(text));
    }
});

fn pass_through(data: &[u8]) {
    let well_formed = check_well_formed(data, DEFAULT_MAX_DEPTH);
    if jcs_digest::parse_strict(data).is_ok() {
        assert_eq!(well_formed, Ok(()), "strict JSON must be well-formed");
    }
    let Ok(raw) = RawJson::from_slice(data) else {
        assert!(well_formed.is_err());
        return;
    };
    assert_eq!(well_formed, Ok(()));
    let text = std::str::from_utf8(data).expect("well-formed JSON is UTF-8");
    assert_eq!(raw.as_str(), text.trim_matches([' ', '\t', '\n', '\r']));

    // Inside a message (and a message's params) the value sits two levels deeper.
    if check_well_formed(data, DEFAULT_MAX_DEPTH - 2).is_err() {
        return;
    }
    // As a result: out and back in, as JSON and as an SSE event.
    let response = Message::Response(Response::result(RequestId::Number(7), raw.clone()));
    let bytes = response.to_vec();
    let back = Message::from_slice(&bytes).expect("a carried result must parse");
    assert_eq!(result_text(&back), Some(raw.as_str()));
    let events = parse_sse_messages(&encode_sse_event(&response), usize::MAX).expect("SSE");
    let [event] = events.as_slice() else { panic!("one event") };
    if !raw.as_str().contains('\r') {
        assert_eq!(result_text(event), Some(raw.as_str()));
    }

    // As tools/call arguments.
    let mut request = Request::new(RequestId::Number(1), "tools/call", None);
    request.arguments = Some(raw.clone());
    let bytes = Message::Request(request).to_vec();
    let Ok(Message::Request(back)) = Message::from_slice(&bytes) else {
        panic!("carried arguments must parse: {}", String::from_utf8_lossy(&bytes))
    };
    assert_eq!(back.arguments.as_ref().map(RawJson::as_str), Some(raw.as_str()));

    // resultType added in front, everything after the opening brace untouched.
    let stamped = raw.with_member_if_absent("resultType", &serde_json::json!("complete"));
    assert_eq!(check_well_formed(stamped.as_bytes(), DEFAULT_MAX_DEPTH + 1), Ok(()));
    if stamped != raw {
        let rest = raw.as_str()[1..].trim_start_matches([' ', '\t', '\n', '\r']);
        assert!(stamped.as_str().ends_with(rest));
    }
}

fn result_text(message: &Message) -> Option<&str> {
    match message {
        Message::Response(Response { payload: ResponsePayload::Result(raw), .. }) => Some(raw.as_str()),
        _ => None,
    }
}
