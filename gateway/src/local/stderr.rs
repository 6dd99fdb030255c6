//! A child's stderr into the gateway's log, one event per line, prefixed with the server's name
//! (docs/design.md §3 "Local (stdio) upstreams"). Each line is bounded and the rate is limited, so a
//! child that floods its stderr can neither exhaust memory nor drown the gateway's log; the pipe
//! is always drained, so the child never blocks on a full stderr.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, BufReader};

use super::lines::{LineRead, excerpt, read_line};

/// Counts of what a child wrote to stderr.
#[derive(Debug, Default)]
pub(super) struct StderrCounts {
    pub(super) logged: AtomicU64,
    pub(super) dropped: AtomicU64,
}

/// Relays `stderr` until it closes.
pub(super) async fn relay<R: AsyncRead + Unpin>(
    server: Arc<str>,
    stderr: R,
    max_line_bytes: usize,
    lines_per_second: u32,
    counts: Arc<StderrCounts>,
) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    let mut window = Instant::now();
    let mut in_window = 0u32;
    let mut dropped_in_window = 0u64;
    loop {
        let read = match read_line(&mut reader, &mut line, max_line_bytes).await {
            Ok(read) => read,
            Err(error) => {
                tracing::warn!(server = %server, "[{server}] cannot read stderr: {error}");
                return;
            }
        };
        if read == LineRead::End {
            break;
        }
        // A flood is always ready to read: give the other tasks of this worker their turn.
        if (counts.logged.load(Ordering::Relaxed) + counts.dropped.load(Ordering::Relaxed)) % 64
            == 0
        {
            tokio::task::yield_now().await;
        }
        if window.elapsed() >= Duration::from_secs(1) {
            if dropped_in_window > 0 {
                tracing::warn!(
                    server = %server,
                    "[{server}] {dropped_in_window} stderr lines dropped (more than \
                     {lines_per_second} per second)"
                );
            }
            window = Instant::now();
            in_window = 0;
            dropped_in_window = 0;
        }
        if in_window >= lines_per_second {
            dropped_in_window += 1;
            counts.dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        in_window += 1;
        counts.logged.fetch_add(1, Ordering::Relaxed);
        let text = excerpt(&line, max_line_bytes);
        match read {
            LineRead::TooLong { length } => tracing::info!(
                server = %server,
                "[{server}] {text} ({} more bytes cut)",
                length - line.len()
            ),
            _ => tracing::info!(server = %server, "[{server}] {text}"),
        }
    }
    if dropped_in_window > 0 {
        tracing::warn!(
            server = %server,
            "[{server}] {dropped_in_window} stderr lines dropped (more than {lines_per_second} \
             per second)"
        );
    }
}
