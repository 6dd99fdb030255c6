//! The header-value codec of 2026-07-28: a value that would not survive an HTTP field round
//! trip (non-ASCII, control characters, edge whitespace) travels as `=?base64?…?=`, so the
//! receiver recovers the exact string and compares it with the body (Python `mcp` 2.3.0,
//! `mcp.shared.inbound.encode_header_value`, implements the same rule).

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

fn is_header_safe(value: &str) -> bool {
    value.bytes().all(|byte| (0x20..=0x7e).contains(&byte)) && value.trim() == value
}

fn looks_like_sentinel(value: &str) -> bool {
    value.len() >= SENTINEL_PREFIX.len() + SENTINEL_SUFFIX.len()
        && value.starts_with(SENTINEL_PREFIX)
        && value.ends_with(SENTINEL_SUFFIX)
}

/// The header form of `value`: verbatim when it is printable ASCII without leading or trailing
/// whitespace and does not itself look like the sentinel; otherwise `=?base64?<base64>?=`.
pub fn encode_header_value(value: &str) -> String {
    if is_header_safe(value) && !looks_like_sentinel(value) {
        return value.to_owned();
    }
    format!(
        "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
        STANDARD.encode(value.as_bytes())
    )
}

/// The string a header value carries: verbatim (borrowed), or the decoded `=?base64?…?=`
/// payload.
///
/// `None` for a malformed sentinel (bad or non-canonical base64, invalid UTF-8) and for bytes
/// that are not visible ASCII, so a corrupt header never matches a body value by accident.
pub fn decode_header_value(raw: &[u8]) -> Option<Cow<'_, str>> {
    let text = std::str::from_utf8(raw).ok()?;
    if !text.bytes().all(|byte| (0x20..=0x7e).contains(&byte)) {
        return None;
    }
    if !looks_like_sentinel(text) {
        return Some(Cow::Borrowed(text));
    }
    let payload = &text[SENTINEL_PREFIX.len()..text.len() - SENTINEL_SUFFIX.len()];
    let bytes = STANDARD.decode(payload).ok()?;
    String::from_utf8(bytes).ok().map(Cow::Owned)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_ascii_is_verbatim_and_everything_else_round_trips_through_base64() {
        assert_eq!(encode_header_value("echo"), "echo");
        assert_eq!(
            encode_header_value("wetter-zürich"),
            "=?base64?d2V0dGVyLXrDvHJpY2g=?="
        );
        assert_eq!(encode_header_value(" x"), "=?base64?IHg=?=");
        for value in ["echo", "wetter-zürich", " x", "=?base64?abc?=", "a\nb", ""] {
            let encoded = encode_header_value(value);
            assert_eq!(
                decode_header_value(encoded.as_bytes()).as_deref(),
                Some(value)
            );
        }
        // A verbatim value is not copied; a decoded one is new text.
        assert!(matches!(
            decode_header_value(b"echo"),
            Some(Cow::Borrowed("echo"))
        ));
        assert!(matches!(
            decode_header_value(b"=?base64?IHg=?="),
            Some(Cow::Owned(text)) if text == " x"
        ));
        assert_eq!(decode_header_value(b"=?base64?!!?="), None);
        assert_eq!(decode_header_value("zü".as_bytes()), None);
    }
}
