//! Reading newline-delimited messages from a child in bounded memory.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One read from [`read_line`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineRead {
    /// A whole line is in the buffer (without its newline).
    Line,
    /// The line was longer than the limit: the buffer holds its first `limit` bytes (for a log
    /// excerpt) and the rest was read and discarded; `length` counts every byte of it.
    TooLong {
        /// The line's full length in bytes.
        length: usize,
    },
    /// End of stream (nothing pending).
    End,
}

/// Reads one line into `line` (cleared first, without the newline), never holding more than
/// `limit` bytes of it: the rest of a longer line is consumed and discarded, so a child that
/// writes a 100 MB line costs the gateway `limit` bytes, not 100 MB.
pub(super) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<LineRead> {
    line.clear();
    let mut length = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match length {
                0 => LineRead::End,
                _ if length > limit => LineRead::TooLong { length },
                _ => LineRead::Line,
            });
        }
        let (chunk, used, done) = match available.iter().position(|&byte| byte == b'\n') {
            Some(newline) => (&available[..newline], newline + 1, true),
            None => (available, available.len(), false),
        };
        let room = limit.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        length = length.saturating_add(chunk.len());
        reader.consume(used);
        if done {
            return Ok(if length > limit {
                LineRead::TooLong { length }
            } else {
                LineRead::Line
            });
        }
    }
}

/// At most `max` characters of `bytes` as text, for a log line or an error message: invalid
/// UTF-8 is replaced, control characters are escaped, and a cut is marked with `…`.
pub(super) fn excerpt(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (count, character) in text.chars().enumerate() {
        if count == max {
            out.push('…');
            break;
        }
        if character.is_control() && character != '\t' {
            out.extend(character.escape_default());
        } else {
            out.push(character);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize) -> Vec<(LineRead, Vec<u8>)> {
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        let mut line = Vec::new();
        loop {
            let read = read_line(&mut reader, &mut line, limit).await.unwrap();
            out.push((read, line.clone()));
            if read == LineRead::End {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_split_and_bounded() {
        let got = lines(b"ab\n0123456789\nlast", 5).await;
        assert_eq!(
            got,
            vec![
                (LineRead::Line, b"ab".to_vec()),
                (LineRead::TooLong { length: 10 }, b"01234".to_vec()),
                (LineRead::Line, b"last".to_vec()),
                (LineRead::End, Vec::new()),
            ]
        );
        let got = lines(b"0123456789", 5).await;
        assert_eq!(
            got[0],
            (LineRead::TooLong { length: 10 }, b"01234".to_vec())
        );
        let got = lines(b"12345\n", 5).await;
        assert_eq!(got[0], (LineRead::Line, b"12345".to_vec()));
    }

    #[test]
    fn excerpts_are_short_and_printable() {
        assert_eq!(excerpt(b"abc", 10), "abc");
        assert_eq!(excerpt(b"abcdef", 3), "abc…");
        assert_eq!(excerpt(b"a\x1b[31mb\xff", 20), "a\\u{1b}[31mb\u{fffd}");
    }
}
