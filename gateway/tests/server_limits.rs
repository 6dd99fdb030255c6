//! The client-side limits of `toolgate::server` (docs/design.md §5): the header timeout, the
//! connection cap per client address, the session caps, the budget of request bytes in
//! flight, the Host checks and the messages for unsupported versions and malformed headers.
//! Raw HTTP/1.1 over real loopback sockets; a second client address is 127.0.0.2.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use catalog_store::Catalog;
use server_identity::rustls::RootCertStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use toolgate::audit::AuditLog;
use toolgate::router::{Router, RouterOptions};
use toolgate::server::{Gateway, ServerOptions};

use crate::e2e_support::{run, temp_dir};
use crate::util::EXAMPLE_CATALOG;

/// A gateway on 127.0.0.1 whose one upstream is never contacted (no call here names its tool).
struct Served {
    address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Served {
    async fn start(adjust: impl FnOnce(&mut ServerOptions)) -> Served {
        // Pin-only trust: no root store is needed to build the (never used) upstream client.
        let pinned = EXAMPLE_CATALOG.replace(
            r#""tls_fingerprint""#,
            r#""tls_trust": "pin", "tls_fingerprint""#,
        );
        let catalog = Catalog::from_slice(pinned.as_bytes()).unwrap();
        let audit_path = temp_dir("limits").join("audit.jsonl");
        let audit = Arc::new(AuditLog::open(&audit_path, catalog.measurement()).unwrap());
        let options = RouterOptions::new(Arc::new(RootCertStore::empty()));
        let router = Router::new(catalog, options, audit).unwrap();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let mut server_options = ServerOptions::for_listen_address(address);
        adjust(&mut server_options);
        let gateway = Gateway::new(Arc::new(router), server_options);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(gateway.serve_http(listener, None, async move {
            let _ = stopped.await;
        }));
        Served {
            address,
            stop: Some(stop),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A TCP connection to `to` from the loopback address `from`.
async fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::from(from), 0)).unwrap();
    socket.connect(to).await.unwrap()
}

/// One HTTP/1.1 answer: status, headers (lower-cased names), body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `request` (which should say `Connection: close`) and reads the whole answer.
async fn exchange(stream: &mut TcpStream, request: &str) -> Answer {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// A POST of `body` to /mcp with the given extra header lines.
fn post(address: SocketAddr, extra: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

async fn initialize_from(from: [u8; 4], to: SocketAddr) -> String {
    let mut stream = connect_from(from, to).await;
    let answer = exchange(&mut stream, &post(to, "", INITIALIZE)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.header("mcp-session-id").unwrap().to_owned()
}

async fn ping_status(from: [u8; 4], to: SocketAddr, session: &str) -> u16 {
    let mut stream = connect_from(from, to).await;
    let extra = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    exchange(&mut stream, &post(to, &extra, PING)).await.status
}

/// Reads until the peer closes.
async fn closed_after(stream: &mut TcpStream) {
    let mut buffer = [0u8; 64];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

#[test]
fn silent_and_stalled_connections_are_closed_after_the_header_timeout() {
    run(async {
        let timeout = Duration::from_millis(300);
        let served = Served::start(|options| {
            options.header_timeout(timeout);
        })
        .await;
        let opened = Instant::now();
        // Nothing at all (hyper's own protocol detection would wait for ever).
        let mut silent = connect_from([127, 0, 0, 1], served.address).await;
        // A request line and part of the headers, then nothing.
        let mut stalled = connect_from([127, 0, 0, 1], served.address).await;
        stalled
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        // A prefix of the HTTP/2 preface, then nothing.
        let mut preface = connect_from([127, 0, 0, 1], served.address).await;
        preface.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
        for stream in [&mut silent, &mut stalled, &mut preface] {
            closed_after(stream).await;
            // Closed by the gateway, and not before the configured timeout.
            let waited = opened.elapsed();
            assert!(waited >= timeout, "closed after {waited:?}");
        }
    });
}

#[test]
fn a_new_client_is_served_while_hundreds_of_silent_connections_are_open() {
    run(async {
        let served = Served::start(|options| {
            options
                .max_connections_per_address(20)
                .header_timeout(Duration::from_secs(60));
        })
        .await;
        let mut silent = Vec::new();
        for _ in 0..300 {
            silent.push(connect_from([127, 0, 0, 1], served.address).await);
        }
        // Past the cap, the address's connections are closed as soon as they are accepted.
        let mut closed = 0;
        for stream in silent.iter_mut().skip(20) {
            let mut buffer = [0u8; 1];
            if matches!(stream.read(&mut buffer).await, Ok(0) | Err(_)) {
                closed += 1;
            }
        }
        assert_eq!(closed, 280);
        // Another address is served at once, with the first 20 still held open.
        let mut client = connect_from([127, 0, 0, 2], served.address).await;
        let answer = exchange(&mut client, &post(served.address, "", INITIALIZE)).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(answer.body.contains(r#""protocolVersion":"2025-11-25""#));
        drop(silent);
    });
}

#[test]
fn sessions_are_capped_per_address_and_a_flood_evicts_only_its_own() {
    run(async {
        let served = Served::start(|options| {
            options.max_sessions_per_address(3).max_sessions(100);
        })
        .await;
        let to = served.address;
        let other = initialize_from([127, 0, 0, 2], to).await;
        let mut flood = Vec::new();
        for _ in 0..12 {
            flood.push(initialize_from([127, 0, 0, 1], to).await);
        }
        assert_eq!(ping_status([127, 0, 0, 2], to, &other).await, 200);
        let mut statuses = Vec::new();
        for session in &flood {
            statuses.push(ping_status([127, 0, 0, 1], to, session).await);
        }
        assert_eq!(
            statuses,
            [404, 404, 404, 404, 404, 404, 404, 404, 404, 200, 200, 200]
        );
    });
}

#[test]
fn requests_beyond_the_budget_of_bytes_in_flight_are_503() {
    run(async {
        let served = Served::start(|options| {
            options.max_request_bytes_in_flight(1000);
        })
        .await;
        let to = served.address;
        // 800 bytes announced with `Expect: 100-continue`: the gateway reserves its budget before
        // it reads the body, so its `100 Continue` says the 800 bytes are held.
        let mut holding = connect_from([127, 0, 0, 1], to).await;
        holding
            .write_all(
                format!(
                    "POST /mcp HTTP/1.1\r\nHost: {to}\r\nContent-Type: application/json\r\n\
                     Content-Length: 800\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        let mut interim = [0u8; 25];
        holding.read_exact(&mut interim).await.unwrap();
        assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"ping","pad":"{}"}}"#,
            "x".repeat(250)
        );
        let mut stream = connect_from([127, 0, 0, 2], to).await;
        let refused = exchange(&mut stream, &post(to, "", &body)).await;
        assert_eq!(refused.status, 503, "{refused:?}");
        assert_eq!(
            refused.body,
            "Service Unavailable: the requests in flight hold the gateway's budget of 1000 \
             request bytes (--max-request-bytes-in-flight); retry shortly"
        );
        assert_eq!(refused.header("retry-after"), Some("1"));
        // A request within what is left is served (800 + the 40 bytes of a ping ≤ 1000).
        let mut small = connect_from([127, 0, 0, 2], to).await;
        let answer = exchange(&mut small, &post(to, "", PING)).await;
        assert_eq!(answer.status, 400, "{answer:?}"); // no session: the budget let it through
        // When the holder ends, the budget is back.
        drop(holding);
        let mut stream = None;
        for _ in 0..3000 {
            let mut candidate = connect_from([127, 0, 0, 2], to).await;
            let answer = exchange(&mut candidate, &post(to, "", &body)).await;
            if answer.status != 503 {
                stream = Some(answer);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(stream.expect("the budget never came back").status, 400);
    });
}

#[test]
fn two_host_headers_and_a_target_that_disagrees_with_host_are_400() {
    run(async {
        let served = Served::start(|_| {}).await;
        let to = served.address;
        let mut stream = connect_from([127, 0, 0, 1], to).await;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {to}\r\nHost: evil.example\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PING}",
            PING.len()
        );
        let answer = exchange(&mut stream, &request).await;
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (
                400,
                "Bad Request: the request has more than one Host header; send exactly one"
            )
        );

        let mut stream = connect_from([127, 0, 0, 1], to).await;
        let request = format!(
            "POST http://evil.example/mcp HTTP/1.1\r\nHost: {to}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PING}",
            PING.len()
        );
        let answer = exchange(&mut stream, &request).await;
        assert_eq!(answer.status, 400);
        assert_eq!(
            answer.body,
            format!(
                "Bad Request: the request target names \"evil.example\" but the Host header \
                 names \"{to}\"; they must agree"
            )
        );

        // An absolute-form target that agrees with Host is served.
        let mut stream = connect_from([127, 0, 0, 1], to).await;
        let request = format!(
            "POST http://{to}/mcp HTTP/1.1\r\nHost: {to}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
            INITIALIZE.len()
        );
        assert_eq!(exchange(&mut stream, &request).await.status, 200);
    });
}

#[test]
fn an_unsupported_protocol_version_says_which_are_supported() {
    run(async {
        let served = Served::start(|_| {}).await;
        let to = served.address;
        let supported = "this gateway supports 2025-03-26, 2025-06-18, 2025-11-25 (with a \
                         session: send initialize first) and 2026-07-28 (stateless: \
                         params._meta carries the version)";
        let mut stream = connect_from([127, 0, 0, 1], to).await;
        let answer = exchange(
            &mut stream,
            &post(to, "MCP-Protocol-Version: 2024-11-05\r\n", PING),
        )
        .await;
        assert_eq!(answer.status, 400);
        let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": -32600,
                "message": format!("Bad Request: unsupported MCP-Protocol-Version \"2024-11-05\"; {supported}"),
            }})
        );

        // The 2026-07-28 envelope naming an unknown version in both places: -32022.
        let request = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let mut stream = connect_from([127, 0, 0, 1], to).await;
        let answer = exchange(
            &mut stream,
            &post(
                to,
                "MCP-Protocol-Version: 2027-01-01\r\nMcp-Method: tools/list\r\n",
                request,
            ),
        )
        .await;
        assert_eq!(answer.status, 400);
        let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["error"]["code"], -32022);
        assert_eq!(
            body["error"]["message"],
            format!("Unsupported protocol version \"2027-01-01\": {supported}")
        );
        assert_eq!(
            body["error"]["data"],
            serde_json::json!({"supported": ["2026-07-28"], "requested": "2027-01-01"})
        );
    });
}

#[test]
fn an_mcp_name_sent_as_raw_utf8_is_malformed_not_absent() {
    run(async {
        let served = Served::start(|_| {}).await;
        let to = served.address;
        let request = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wetter-zürich","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let mut stream = connect_from([127, 0, 0, 1], to).await;
        let extra = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: wetter-zürich\r\n";
        let answer = exchange(&mut stream, &post(to, extra, request)).await;
        assert_eq!(answer.status, 400);
        let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["error"]["code"], -32020);
        assert_eq!(
            body["error"]["message"],
            "Header mismatch: the Mcp-Name header is malformed: a value outside printable ASCII \
             (raw UTF-8, say) must travel as =?base64?<base64 of its UTF-8>?=, and a \
             =?base64?…?= value must decode to UTF-8"
        );
    });
}

#[test]
fn http2_with_prior_knowledge_is_served_and_an_idle_connection_closes_after_the_idle_timeout() {
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};

    run(async {
        let idle = Duration::from_millis(300);
        let served = Served::start(|options| {
            options.idle_timeout(idle);
        })
        .await;
        let to = served.address;
        let stream = connect_from([127, 0, 0, 1], to).await;
        let (mut sender, connection) =
            hyper::client::conn::http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .handshake(TokioIo::new(stream))
                .await
                .unwrap();
        let connection = tokio::spawn(connection);
        let request = http::Request::post(format!("http://{to}/mcp"))
            .header("content-type", "application/json")
            .body(Full::new(bytes::Bytes::from_static(INITIALIZE.as_bytes())))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), 200);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert!(String::from_utf8_lossy(&body).contains(r#""protocolVersion":"2025-11-25""#));
        let answered = Instant::now();
        // Nothing more in flight: the gateway closes the connection (GOAWAY) after the timeout.
        connection.await.unwrap().unwrap();
        assert!(
            answered.elapsed() >= idle - Duration::from_millis(20),
            "{:?}",
            answered.elapsed()
        );
    });
}
