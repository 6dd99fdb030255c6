//! A small MCP client over plain HTTP, for talking to a gateway on loopback: the demo's client
//! and the end-to-end tests' client. It speaks both generations the gateway serves.

use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use jcs_digest::order;
use serde_json::{Map, Value, json};

use toolgate_mcp::{
    ErrorObject, Generation, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION,
    Message, ProtocolVersion, ResponsePayload, encode_header_value, headers as mcp_headers,
    methods, name_bearing_param,
};

/// The largest response the client reads.
const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;
/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the client could not complete an exchange (a JSON-RPC error answer is not one of these).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The HTTP exchange failed.
    #[error("HTTP exchange with {url} failed: {detail}")]
    Http {
        /// The gateway URL.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The answer was not a JSON-RPC response.
    #[error(
        "the gateway at {url} answered {method} with something that is not a JSON-RPC response (HTTP {status}): {detail}"
    )]
    Malformed {
        /// The gateway URL.
        url: String,
        /// The method sent.
        method: String,
        /// The HTTP status.
        status: u16,
        /// What is wrong.
        detail: String,
    },
    /// A handshake step was answered with an error.
    #[error("the gateway refused {method}: {message}")]
    Refused {
        /// The method sent.
        method: String,
        /// The error message.
        message: String,
    },
}

/// One HTTP answer: status, session header, and the JSON-RPC response when there was one.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The HTTP status.
    pub status: StatusCode,
    /// `Mcp-Session-Id`, when the response carried one.
    pub session_id: Option<String>,
    /// The JSON-RPC response (`None` for 202 and non-JSON answers).
    pub response: Option<Result<Value, ErrorObject>>,
    /// The body as received.
    pub body: Bytes,
}

/// An MCP client of one gateway URL (`http://127.0.0.1:PORT/mcp`).
#[derive(Debug, Clone)]
pub struct GatewayClient {
    url: String,
    version: ProtocolVersion,
    session_id: Option<String>,
    next_id: i64,
    http: Client<HttpConnector, Full<Bytes>>,
    bearer: Option<String>,
}

impl GatewayClient {
    /// A client that will speak `version`; call [`connect`](Self::connect) before other
    /// requests.
    pub fn new(url: &str, version: ProtocolVersion) -> GatewayClient {
        let http = Client::builder(TokioExecutor::new()).build_http();
        GatewayClient {
            url: url.to_owned(),
            version,
            session_id: None,
            next_id: 1,
            http,
            bearer: None,
        }
    }

    /// Sends `Authorization: Bearer <token>` with every request from now on.
    pub fn set_bearer(&mut self, token: &str) {
        self.bearer = Some(token.to_owned());
    }

    /// The protocol version in use.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// The session id, after [`connect`](Self::connect) in the session generation.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The session generation: `initialize` then `notifications/initialized`. The stateless
    /// generation: `server/discover`.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the exchange fails or the handshake is refused.
    pub async fn connect(&mut self) -> Result<Value, ClientError> {
        match self.version.generation() {
            Generation::Session => {
                let params = json!({
                    "protocolVersion": self.version.as_str(),
                    "capabilities": {},
                    "clientInfo": {"name": "toolgate-demo-client", "version": env!("CARGO_PKG_VERSION")},
                });
                let exchange = self.send_request(methods::INITIALIZE, Some(params)).await?;
                let result = self.expect_result(methods::INITIALIZE, exchange.clone())?;
                self.session_id = exchange.session_id;
                self.notify(methods::NOTIFICATIONS_INITIALIZED, None)
                    .await?;
                Ok(result)
            }
            Generation::Stateless => {
                let exchange = self
                    .send_request(methods::SERVER_DISCOVER, Some(json!({})))
                    .await?;
                self.expect_result(methods::SERVER_DISCOVER, exchange)
            }
        }
    }

    /// Every tool the gateway lists, every page followed (at most 1000 pages).
    ///
    /// # Errors
    ///
    /// [`ClientError`] when an exchange fails or a page is refused.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let exchange = self.send_request(methods::TOOLS_LIST, Some(params)).await?;
            let page = self.expect_result(methods::TOOLS_LIST, exchange)?;
            if let Some(Value::Array(listed)) = page.get("tools") {
                tools.extend(listed.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(tools),
            }
        }
        Err(ClientError::Refused {
            method: methods::TOOLS_LIST.into(),
            message: "more than 1000 pages".into(),
        })
    }

    /// Calls `name` with `arguments`: the result, or the gateway's JSON-RPC error.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the exchange fails.
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments: Value,
    ) -> Result<Result<Value, ErrorObject>, ClientError> {
        let exchange = self
            .send_request(
                methods::TOOLS_CALL,
                Some(json!({"name": name, "arguments": arguments})),
            )
            .await?;
        exchange.response.ok_or_else(|| ClientError::Malformed {
            url: self.url.clone(),
            method: methods::TOOLS_CALL.into(),
            status: exchange.status.as_u16(),
            detail: String::from_utf8_lossy(&exchange.body).into_owned(),
        })
    }

    /// Calls `name` with `arguments` written exactly as given (JSON text: numbers beyond 2^53,
    /// `1E+2`, member order as written), returning the whole exchange (the answer's bytes are
    /// in [`Exchange::body`]).
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the exchange fails.
    pub async fn call_tool_raw(
        &mut self,
        name: &str,
        arguments: &str,
    ) -> Result<Exchange, ClientError> {
        const PLACEHOLDER: &str = "\u{0}arguments";
        let id = self.next_id;
        self.next_id += 1;
        let params = self.with_envelope(Some(json!({"name": name, "arguments": PLACEHOLDER})));
        let message =
            json!({"jsonrpc": "2.0", "id": id, "method": methods::TOOLS_CALL, "params": params});
        let headers = self.routing_headers(methods::TOOLS_CALL, params.as_ref());
        let text = order::to_string(&message).replacen(
            &order::to_string(&Value::from(PLACEHOLDER)),
            arguments,
            1,
        );
        self.send(Method::POST, Bytes::from(text), &headers).await
    }

    /// Ends the session (`DELETE`), returning the HTTP status.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the exchange fails.
    pub async fn end_session(&mut self) -> Result<StatusCode, ClientError> {
        let exchange = self.send(Method::DELETE, Bytes::new(), &[]).await?;
        Ok(exchange.status)
    }

    /// Sends one request with the headers its generation needs (and, in the stateless
    /// generation, the `params._meta` envelope).
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the HTTP exchange fails.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Exchange, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let params = self.with_envelope(params);
        let mut message = Map::new();
        message.insert("jsonrpc".into(), "2.0".into());
        message.insert("id".into(), id.into());
        message.insert("method".into(), method.into());
        if let Some(params) = &params {
            message.insert("params".into(), params.clone());
        }
        let headers = self.routing_headers(method, params.as_ref());
        let body = Bytes::from(order::to_vec(&Value::Object(message)));
        self.send(Method::POST, body, &headers).await
    }

    async fn notify(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Exchange, ClientError> {
        let mut message = Map::new();
        message.insert("jsonrpc".into(), "2.0".into());
        message.insert("method".into(), method.into());
        if let Some(params) = params {
            message.insert("params".into(), params);
        }
        let body = Bytes::from(order::to_vec(&Value::Object(message)));
        self.send(Method::POST, body, &[]).await
    }

    fn with_envelope(&self, params: Option<Value>) -> Option<Value> {
        if self.version.generation() != Generation::Stateless {
            return params;
        }
        let mut params = match params {
            Some(Value::Object(params)) => params,
            _ => Map::new(),
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(META_PROTOCOL_VERSION.into(), self.version.as_str().into());
            meta.insert(META_CLIENT_CAPABILITIES.into(), json!({}));
            meta.insert(
                META_CLIENT_INFO.into(),
                json!({"name": "toolgate-demo-client", "version": env!("CARGO_PKG_VERSION")}),
            );
        }
        Some(Value::Object(params))
    }

    fn routing_headers(&self, method: &str, params: Option<&Value>) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        if self.version.generation() == Generation::Stateless {
            headers.push((mcp_headers::MCP_METHOD, method.to_owned()));
            if let Some(name) = name_bearing_param(method)
                .and_then(|member| params.and_then(|params| params.get(member)))
                .and_then(Value::as_str)
            {
                headers.push((mcp_headers::MCP_NAME, encode_header_value(name)));
            }
        }
        headers
    }

    /// Sends a raw body with extra headers (the version and session headers are added).
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the HTTP exchange fails.
    pub async fn send(
        &self,
        method: Method,
        body: Bytes,
        extra: &[(&'static str, String)],
    ) -> Result<Exchange, ClientError> {
        let mut request = http::Request::builder().method(method).uri(&self.url);
        request = request
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        if self.version != ProtocolVersion::V2025_03_26 || self.session_id.is_some() {
            request = request.header(mcp_headers::MCP_PROTOCOL_VERSION, self.version.as_str());
        }
        if let Some(session) = &self.session_id {
            request = request.header(mcp_headers::MCP_SESSION_ID, session.as_str());
        }
        if let Some(token) = &self.bearer {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        for (name, value) in extra {
            request = request.header(*name, value.as_str());
        }
        let request = request
            .body(Full::new(body))
            .map_err(|error| self.http_error(&error))?;
        let response = tokio::time::timeout(REQUEST_TIMEOUT, self.http.request(request))
            .await
            .map_err(|_| self.http_error(&"timed out"))?
            .map_err(|error| self.http_error(&error))?;
        let status = response.status();
        let session_id = response
            .headers()
            .get(mcp_headers::MCP_SESSION_ID)
            .and_then(|value: &HeaderValue| value.to_str().ok())
            .map(str::to_owned);
        let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|error| self.http_error(&error))?
            .to_bytes();
        let response = match Message::from_slice(&body) {
            Ok(Message::Response(response)) => match response.payload {
                // Read as serde_json reads (a number beyond i64 and u64 is a float); the bytes
                // as received are in `Exchange::body`.
                ResponsePayload::Result(result) => {
                    serde_json::from_str(result.as_str()).ok().map(Ok)
                }
                ResponsePayload::Error(error) => Some(Err(error)),
            },
            _ => None,
        };
        Ok(Exchange {
            status,
            session_id,
            response,
            body,
        })
    }

    fn expect_result(&self, method: &str, exchange: Exchange) -> Result<Value, ClientError> {
        match exchange.response {
            Some(Ok(result)) => Ok(result),
            Some(Err(error)) => Err(ClientError::Refused {
                method: method.to_owned(),
                message: error.message,
            }),
            None => Err(ClientError::Malformed {
                url: self.url.clone(),
                method: method.to_owned(),
                status: exchange.status.as_u16(),
                detail: String::from_utf8_lossy(&exchange.body)
                    .chars()
                    .take(200)
                    .collect(),
            }),
        }
    }

    fn http_error(&self, error: &dyn std::fmt::Display) -> ClientError {
        ClientError::Http {
            url: self.url.clone(),
            detail: error.to_string(),
        }
    }
}
