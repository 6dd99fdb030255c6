//! Fuzz what the gateway reads from the network: JSON-RPC messages (from clients and upstreams),
//! SSE event streams (upstream responses), and `Mcp-Name`-style header values.
//!
//! Properties: no input panics; an accepted message serializes to bytes that parse back to the
//! same message; the carrying reader of client requests (`Message::from_slice_carried`, which
//! keeps integers beyond ±(2^53−1)) accepts everything the strict reader does, as the same
//! message, and its own messages round-trip too; an SSE stream gives the same messages whether it arrives whole or split at any
//! byte; a header value round-trips through its encoding.
#![no_main]

use toolgate::mcp::{Message, SseParser, decode_header_value, encode_header_value, parse_sse_messages};
use libfuzzer_sys::fuzz_target;

const MAX_EVENT_BYTES: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let strict = Message::from_slice(data);
    if let Ok(message) = &strict {
        let bytes = message.to_vec();
        let again = Message::from_slice(&bytes).expect("a serialized message must parse");
        assert_eq!(again.to_vec(), bytes);
    }
    match (Message::from_slice_carried(data), &strict) {
        (Ok(carried), Ok(strict)) => assert_eq!(&carried, strict),
        (Err(_), Ok(_)) => panic!("the carrying reader refused what the strict reader accepts"),
        (Ok(carried), Err(_)) => {
            let bytes = carried.to_vec();
            let again = Message::from_slice_carried(&bytes).expect("a carried message must parse");
            assert_eq!(again.to_vec(), bytes);
        }
        (Err(_), Err(_)) => {}
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

    if let Some(value) = decode_header_value(data) {
        assert_eq!(decode_header_value(encode_header_value(&value).as_bytes()), Some(value));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(decode_header_value(encode_header_value(text).as_bytes()).as_deref(), Some(text));
    }
});
