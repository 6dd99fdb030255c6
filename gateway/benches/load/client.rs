//! The load generator's MCP client: one keep-alive HTTP/1.1 connection per simulated client
//! (plain to the gateway, TLS with the pinned configuration to the upstream), stateless
//! 2026-07-28 requests with the headers that version requires, and a check of every answer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls_pki_types::ServerName;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use toolgate::mcp::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, ProtocolVersion,
    encode_header_value, headers as mcp_headers, methods,
};

/// The text every `echo` call sends and expects back.
pub(crate) const ECHO_TEXT: &str = "load";
/// The largest answer read: the gateway's default listing budget, so that `list` can fetch any
/// listing `per-call` reads (`--upstream-tools`).
const MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;
/// How long one exchange may take before it counts as an error (keeps every run bounded).
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where requests go: an HTTP endpoint, plain or TLS.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) address: SocketAddr,
    pub(crate) path: String,
    /// `Some` for the upstream: the pinned client configuration (ALPN `http/1.1`).
    pub(crate) tls: Option<Arc<rustls::ClientConfig>>,
}

/// One request kind, with its body prepared around a changing id.
#[derive(Clone)]
pub(crate) struct Exchange {
    method: &'static str,
    name: Option<String>,
    /// The body after `{"jsonrpc":"2.0","id":N,`.
    body_tail: String,
    answer: AnswerShape,
}

/// The shape of a good `tools/call` answer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AnswerShape {
    /// The MCP result as the upstream writes it (and the gateway passes it through):
    /// `isError: false` and the echoed text.
    Mcp,
    /// cMCP's: it rebuilds the result as `{"content": [{"type": "text", "text": …}], "_cmcp":
    /// {…}}`, without `isError`, so the echoed text and the session it was counted in
    /// (`_cmcp.session_id`, which the peer module needs to close that session) are required.
    Cmcp,
}

impl Exchange {
    /// `tools/call` of `tool` with `{"text": ECHO_TEXT}`.
    pub(crate) fn call(tool: &str) -> Exchange {
        Exchange::new(
            methods::TOOLS_CALL,
            Some(tool.to_owned()),
            json!({"name": tool, "arguments": {"text": ECHO_TEXT}}),
        )
    }

    /// The same request as [`Exchange::call`], with cMCP's answer expected.
    pub(crate) fn cmcp_call(tool: &str) -> Exchange {
        Exchange {
            answer: AnswerShape::Cmcp,
            ..Exchange::call(tool)
        }
    }

    /// `tools/list` (first page; the demo upstream serves one page).
    pub(crate) fn list() -> Exchange {
        Exchange::new(methods::TOOLS_LIST, None, json!({}))
    }

    fn new(method: &'static str, name: Option<String>, mut params: Value) -> Exchange {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: ProtocolVersion::V2026_07_28.as_str(),
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "toolgate-load", "version": env!("CARGO_PKG_VERSION")},
        });
        let body_tail = format!("\"method\":{},\"params\":{}}}", Value::from(method), params);
        Exchange {
            method,
            name,
            body_tail,
            answer: AnswerShape::Mcp,
        }
    }

    /// The request with `id` for `target`.
    pub(crate) fn request(
        &self,
        target: &Target,
        id: u64,
    ) -> Result<http::Request<Full<Bytes>>, String> {
        let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},{}", self.body_tail);
        let mut request = http::Request::builder()
            .method(Method::POST)
            .uri(target.path.as_str())
            .header(HOST, target.address.to_string())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header(
                mcp_headers::MCP_PROTOCOL_VERSION,
                ProtocolVersion::V2026_07_28.as_str(),
            )
            .header(mcp_headers::MCP_METHOD, self.method);
        if let Some(name) = &self.name {
            request = request.header(mcp_headers::MCP_NAME, encode_header_value(name));
        }
        request
            .body(Full::new(Bytes::from(body)))
            .map_err(|error| format!("cannot build the request: {error}"))
    }

    /// Whether `answer` is the expected successful answer to request `id`; the answer, parsed,
    /// when it is.
    pub(crate) fn check(&self, id: u64, status: StatusCode, body: &[u8]) -> Result<Value, String> {
        let shown = || String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        if status != StatusCode::OK {
            return Err(format!("HTTP {status}: {}", shown()));
        }
        let answer: Value = serde_json::from_slice(body)
            .map_err(|error| format!("answer is not JSON ({error}): {}", shown()))?;
        if answer.get("id").and_then(Value::as_u64) != Some(id) {
            return Err(format!("answer has the wrong id (sent {id}): {}", shown()));
        }
        let Some(result) = answer.get("result") else {
            return Err(format!(
                "{} answered with an error: {}",
                self.method,
                shown()
            ));
        };
        let good = if self.method == methods::TOOLS_CALL {
            let echoed = result["content"][0]["text"].as_str() == Some(ECHO_TEXT);
            match self.answer {
                AnswerShape::Mcp => result.get("isError") == Some(&Value::Bool(false)) && echoed,
                AnswerShape::Cmcp => echoed && result["_cmcp"]["session_id"].is_string(),
            }
        } else {
            result["tools"]
                .as_array()
                .is_some_and(|tools| !tools.is_empty())
        };
        if good {
            Ok(answer)
        } else {
            Err(format!("unexpected {} result: {}", self.method, shown()))
        }
    }
}

/// One client connection.
pub(crate) struct Connection {
    target: Target,
    sender: SendRequest<Full<Bytes>>,
}

impl Connection {
    /// Connects (TCP, then TLS when the target has a configuration) and completes the
    /// HTTP/1.1 handshake.
    pub(crate) async fn open(target: &Target) -> Result<Connection, String> {
        let tcp = TcpStream::connect(target.address)
            .await
            .map_err(|error| format!("cannot connect to {}: {error}", target.address))?;
        let _ = tcp.set_nodelay(true);
        let sender = match &target.tls {
            None => {
                let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
                    .await
                    .map_err(|error| format!("HTTP handshake failed: {error}"))?;
                tokio::spawn(connection);
                sender
            }
            Some(config) => {
                let name = ServerName::from(target.address.ip());
                let tls = TlsConnector::from(config.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(|error| format!("TLS handshake refused: {error}"))?;
                let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
                    .await
                    .map_err(|error| format!("HTTP handshake failed: {error}"))?;
                tokio::spawn(connection);
                sender
            }
        };
        Ok(Connection {
            target: target.clone(),
            sender,
        })
    }

    /// The target this connection reaches.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// Sends `request` and reads the whole answer (the caller times this and checks the
    /// answer afterwards). The error is a message a person can act on; after an error the
    /// connection may be unusable ([`Connection::is_closed`]).
    pub(crate) async fn send(
        &mut self,
        request: http::Request<Full<Bytes>>,
    ) -> Result<(StatusCode, Bytes), String> {
        tokio::time::timeout(EXCHANGE_TIMEOUT, async {
            self.sender
                .ready()
                .await
                .map_err(|error| format!("connection not ready: {error}"))?;
            let response = self
                .sender
                .send_request(request)
                .await
                .map_err(|error| format!("request failed: {error}"))?;
            let status = response.status();
            let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|error| format!("reading the answer failed: {error}"))?
                .to_bytes();
            Ok::<_, String>((status, body))
        })
        .await
        .map_err(|_| format!("no answer within {EXCHANGE_TIMEOUT:?}"))?
    }

    /// Whether the connection has closed (then the client reconnects).
    pub(crate) fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }
}
