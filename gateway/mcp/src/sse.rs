//! A `text/event-stream` parser (WHATWG HTML "Server-sent events", §9.2.6) that yields the
//! JSON-RPC messages an MCP Streamable HTTP server sends.
//!
//! Lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the next
//! are one line end). `data:` lines are joined with `\n`; a blank line dispatches the event;
//! `event:` and `id:` are exposed; comments (`:` lines) and `retry:` are ignored. An event still
//! open at the end of the stream is dropped, as the standard says. Everything is bounded: one
//! event (its data plus the current line) may not exceed the limit given to
//! [`SseParser::new`].

use super::jsonrpc::{Message, MessageError};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    /// The last `id:` seen on the stream so far (the standard's "last event ID").
    pub id: Option<String>,
    /// The joined `data:` lines, without the final line feed.
    pub data: String,
}

impl SseEvent {
    /// The JSON-RPC message this event carries: `None` for events of another type than
    /// `message` and for events with empty data (the priming events servers send so that a
    /// client can resume).
    ///
    /// # Errors
    ///
    /// [`MessageError`] when the data is not a valid JSON-RPC message.
    pub fn message(&self) -> Result<Option<Message>, MessageError> {
        let is_message = self.event.as_deref().is_none_or(|event| event == "message");
        if !is_message || self.data.trim().is_empty() {
            return Ok(None);
        }
        Message::from_slice(self.data.as_bytes()).map(Some)
    }
}

/// Why an event stream was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// One event grew beyond the limit.
    #[error("an SSE event exceeds {limit} bytes; the stream was refused")]
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// A line is not UTF-8.
    #[error("an SSE line is not valid UTF-8")]
    InvalidUtf8,
    /// An event's data is not a valid JSON-RPC message.
    #[error("an SSE event does not carry a valid JSON-RPC message: {0}")]
    Message(#[from] MessageError),
}

/// An incremental `text/event-stream` parser: feed it chunks as they arrive.
#[derive(Debug, Clone)]
pub struct SseParser {
    limit: usize,
    line: Vec<u8>,
    data: String,
    has_data: bool,
    event: Option<String>,
    last_id: Option<String>,
    after_cr: bool,
}

impl SseParser {
    /// A parser that refuses any event larger than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> SseParser {
        SseParser {
            limit: max_event_bytes,
            line: Vec::new(),
            data: String::new(),
            has_data: false,
            event: None,
            last_id: None,
            after_cr: false,
        }
    }

    /// Feeds one chunk and returns the events it completed.
    ///
    /// # Errors
    ///
    /// [`SseError::EventTooLarge`] or [`SseError::InvalidUtf8`]; the parser must not be used
    /// after an error.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut events)?;
                }
                b'\n' => self.end_line(&mut events)?,
                _ => {
                    if self.line.len() + self.data.len() >= self.limit {
                        return Err(SseError::EventTooLarge { limit: self.limit });
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(events)
    }

    /// Feeds one chunk and returns the JSON-RPC messages it completed.
    ///
    /// # Errors
    ///
    /// As [`SseParser::push`], and [`SseError::Message`] for an event that is not JSON-RPC.
    pub fn push_messages(&mut self, chunk: &[u8]) -> Result<Vec<Message>, SseError> {
        let mut messages = Vec::new();
        for event in self.push(chunk)? {
            if let Some(message) = event.message()? {
                messages.push(message);
            }
        }
        Ok(messages)
    }

    /// The last event id seen, for a `Last-Event-ID` header when resuming.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(events);
            return Ok(());
        }
        let line = String::from_utf8(line).map_err(|_| SseError::InvalidUtf8)?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(SseError::EventTooLarge { limit: self.limit });
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        events.push(SseEvent {
            event: event.filter(|name| !name.is_empty()),
            id: self.last_id.clone(),
            data,
        });
    }
}

/// One SSE event carrying `message`: `event: message`, one `data:` line (compact JSON has no line
/// breaks), and the blank line that ends the event.
pub fn encode_sse_event(message: &Message) -> Vec<u8> {
    let json = message.to_vec();
    let mut event = Vec::with_capacity(json.len() + 24);
    event.extend_from_slice(b"event: message");
    // A pass-through result may hold line breaks (whitespace between tokens: JSON strings
    // cannot): each line goes in a `data:` line of its own, which the reader joins with LF (so
    // a CR there arrives as LF, the one change SSE framing forces).
    let text = String::from_utf8_lossy(&json)
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    for line in text.split('\n') {
        event.extend_from_slice(b"\ndata: ");
        event.extend_from_slice(line.as_bytes());
    }
    event.extend_from_slice(b"\n\n");
    event
}

/// Every JSON-RPC message in a complete `text/event-stream` body.
///
/// # Errors
///
/// As [`SseParser::push_messages`].
pub fn parse_sse_messages(body: &[u8], max_event_bytes: usize) -> Result<Vec<Message>, SseError> {
    SseParser::new(max_event_bytes).push_messages(body)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn data_lines_join_and_blank_lines_dispatch_across_chunk_boundaries_and_line_ends() {
        let stream = b": comment\r\nevent: message\r\nid: 7\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nretry: 5\n\ndata:x\r\rdata: tail";
        let mut parser = SseParser::new(1024);
        let mut events = Vec::new();
        for chunk in stream.chunks(3) {
            events.extend(parser.push(chunk).unwrap());
        }
        assert_eq!(
            events,
            [
                SseEvent {
                    event: Some("message".into()),
                    id: Some("7".into()),
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    event: None,
                    id: Some("7".into()),
                    data: "x".into()
                },
            ]
        );
        assert_eq!(parser.last_event_id(), Some("7"));
    }

    #[test]
    fn messages_skip_priming_events_and_other_types() {
        let body = b"id: 1\ndata:\n\nevent: ping\ndata: {}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
        let messages = parse_sse_messages(body, 4096).unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(
            messages[0].method(),
            Some("notifications/tools/list_changed")
        );
        assert!(matches!(
            parse_sse_messages(b"data: {\"a\":1,\"a\":2}\n\n", 4096),
            Err(SseError::Message(_))
        ));
    }

    #[test]
    fn encoded_events_parse_back_to_the_same_message() {
        let message =
            Message::from_slice(br#"{"jsonrpc":"2.0","id":3,"result":{"text":"a\nb"}}"#).unwrap();
        let event = encode_sse_event(&message);
        assert!(event.starts_with(b"event: message\ndata: {"));
        assert_eq!(parse_sse_messages(&event, 1024).unwrap(), [message]);

        // A pass-through result with line breaks between its tokens: one data line each, and
        // the same text back (CR LF arrives as LF, as SSE framing joins data lines).
        let text = "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\n  \"n\": 1E+2\n}}";
        let message = Message::from_slice(text.as_bytes()).unwrap();
        let event = encode_sse_event(&message);
        assert_eq!(
            event,
            b"event: message\ndata: {\"id\":4,\"jsonrpc\":\"2.0\",\"result\":{\ndata:   \"n\": 1E+2\ndata: }}\n\n"
        );
        assert_eq!(parse_sse_messages(&event, 1024).unwrap(), [message]);
    }

    #[test]
    fn events_larger_than_the_limit_are_refused() {
        let mut parser = SseParser::new(16);
        assert_eq!(
            parser.push(b"data: 0123456789\ndata: 0123456789\n"),
            Err(SseError::EventTooLarge { limit: 16 })
        );
        let mut parser = SseParser::new(16);
        assert_eq!(
            parser.push(&[b'x'; 40]),
            Err(SseError::EventTooLarge { limit: 16 })
        );
    }
}
