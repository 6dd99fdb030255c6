//! `toolgate serve --stdio`: newline-delimited JSON-RPC on standard input and output, for
//! clients that spawn their servers (MCP stdio transport). Logs go to standard error only.
//!
//! Both generations are served: `initialize` settles a session version for the process (stdio
//! has one client and no session ids); a request carrying the 2026-07-28 `params._meta`
//! envelope is answered statelessly (there are no headers to check against it). Requests are
//! answered concurrently, each response written as one line when it is ready.
//!
//! The principal of every call is the local user who started the gateway (docs/design.md §7):
//! whoever writes to its standard input already acts as that user.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::mcp::{
    ErrorObject, Generation, META_PROTOCOL_VERSION, Message, ProtocolVersion, Request, Response,
    error_codes, methods,
};

use super::Gateway;
use super::dispatch::{self, Exchange};
use super::http::bounded_body;

pub(crate) async fn serve<R, W>(
    gateway: Arc<Gateway>,
    input: R,
    output: W,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    tokio::pin!(shutdown);
    let principal = Arc::new(crate::auth::Principal::local_user());
    let (lines_out, mut lines) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = lines.recv().await {
            line.push(b'\n');
            output.write_all(&line).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });

    let limit = gateway.options.max_request_bytes;
    let mut reader = BufReader::new(input);
    let mut session_version = ProtocolVersion::LATEST_SESSION;
    let mut in_flight = tokio::task::JoinSet::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = tokio::select! {
            read = read_bounded_line(&mut reader, &mut line, limit) => read?,
            // Stop reading; what is in flight is still answered below.
            () = &mut shutdown => break,
        };
        match read {
            LineRead::End => break,
            LineRead::TooLong => {
                let error = ErrorObject::new(
                    error_codes::PARSE_ERROR,
                    format!("Parse error: the message exceeds {limit} bytes (--max-request-bytes)"),
                );
                let _ = lines_out
                    .send(Message::Response(Response::error(None, error)).to_vec())
                    .await;
                continue;
            }
            LineRead::Line => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        gateway.request_started();
        let request = match Message::from_slice(&line) {
            Ok(Message::Request(request)) => request,
            Ok(Message::Notification(_) | Message::Response(_)) => continue,
            Err(error) => {
                let _ = lines_out
                    .send(Message::Response(error.to_response()).to_vec())
                    .await;
                continue;
            }
        };
        if request.method == methods::INITIALIZE {
            let (version, result) = dispatch::initialize(request.params.as_ref());
            session_version = version;
            let _ = lines_out
                .send(bounded_body(&gateway, Response::result(request.id, result)))
                .await;
            continue;
        }
        let exchange = exchange_for(&request, session_version);
        let gateway = gateway.clone();
        let principal = principal.clone();
        let lines_out = lines_out.clone();
        in_flight.spawn(async move {
            let id = request.id.clone();
            let response = match exchange {
                Ok(exchange) => {
                    match dispatch::answer(&gateway, exchange, &request, None, &principal).await {
                        Ok(result) => Response::result(id, result),
                        Err(refusal) => Response::error(Some(id), refusal.error),
                    }
                }
                Err(error) => Response::error(Some(id), error),
            };
            let _ = lines_out.send(bounded_body(&gateway, response)).await;
        });
        while in_flight.try_join_next().is_some() {}
    }
    // End of input or shutdown: answer what is in flight, then close the output.
    while in_flight.join_next().await.is_some() {}
    drop(lines_out);
    writer.await.map_err(std::io::Error::other)?
}

/// The exchange of a stdio request: stateless when it carries the 2026-07-28 envelope (whose
/// version must then be served), otherwise the session settled by `initialize`.
fn exchange_for(
    request: &Request,
    session_version: ProtocolVersion,
) -> Result<Exchange, ErrorObject> {
    let envelope_version = request
        .params
        .as_ref()
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION));
    match envelope_version {
        None if request.method == methods::SERVER_DISCOVER => {
            Ok(Exchange::Stateless(ProtocolVersion::V2026_07_28))
        }
        None => Ok(Exchange::Session(session_version)),
        Some(version) => match version.as_str().and_then(ProtocolVersion::from_wire) {
            Some(version) if version.generation() == Generation::Stateless => {
                Ok(Exchange::Stateless(version))
            }
            _ => Err(dispatch::unsupported_version(version)),
        },
    }
}

enum LineRead {
    Line,
    TooLong,
    End,
}

/// Reads one line into `line` (without its newline), never buffering more than `limit` bytes:
/// a longer line is consumed and discarded.
async fn read_bounded_line<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                LineRead::TooLong
            } else if line.is_empty() {
                LineRead::End
            } else {
                LineRead::Line
            });
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(newline) => (&available[..newline], newline + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            if line.len() + chunk.len() > limit {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if done {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}
