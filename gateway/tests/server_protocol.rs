//! The client-facing transport: Host/Origin checks, the 2026-07-28 header ladder, sessions,
//! sizes, pagination, unsupported methods, and stdio.

use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{Value, json};
use toolgate::mcp::ProtocolVersion;
use toolgate::server::ServerOptions;

use crate::e2e_support::{Harness, Setup, run};

fn body(value: Value) -> Bytes {
    Bytes::from(value.to_string())
}

fn stateless_request(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

fn headers(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    pairs
        .iter()
        .map(|(name, value)| (*name, value.to_string()))
        .collect()
}

#[test]
fn foreign_host_and_origin_are_forbidden() {
    run(async {
        let mut setup = Setup::new();
        setup.server_options = Some(Box::new(|options: &mut ServerOptions| {
            options.allow_origin("https://app.example").unwrap();
        }));
        let harness = Harness::start(setup).await;
        let client = harness.client(ProtocolVersion::V2025_11_25).await;
        let ping = body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
        let cases = [
            (headers(&[("Host", "evil.example")]), StatusCode::FORBIDDEN),
            (
                headers(&[("Host", "localhost.evil.example:80")]),
                StatusCode::FORBIDDEN,
            ),
            (
                headers(&[("Origin", "http://evil.example")]),
                StatusCode::FORBIDDEN,
            ),
            (headers(&[("Origin", "null")]), StatusCode::FORBIDDEN),
            (
                headers(&[("Origin", "http://localhost:3000")]),
                StatusCode::OK,
            ),
            (
                headers(&[("Origin", "https://app.example")]),
                StatusCode::OK,
            ),
            (headers(&[("Host", "localhost:1234")]), StatusCode::OK),
        ];
        for (extra, status) in cases {
            let exchange = client
                .send(Method::POST, ping.clone(), &extra)
                .await
                .unwrap();
            assert_eq!(exchange.status, status, "{extra:?}");
            if status == StatusCode::OK {
                assert_eq!(exchange.response.unwrap().unwrap(), json!({}));
            }
        }
        // Refused before anything else: a DELETE with a bad Host does not end the session.
        let exchange = client
            .send(
                Method::DELETE,
                Bytes::new(),
                &headers(&[("Host", "evil.example")]),
            )
            .await
            .unwrap();
        assert_eq!(exchange.status, StatusCode::FORBIDDEN);
        let exchange = client.send(Method::POST, ping, &[]).await.unwrap();
        assert_eq!(exchange.status, StatusCode::OK);
        harness.stop().await;
    });
}

#[test]
fn stateless_headers_must_match_the_body() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let client =
            toolgate_testkit::GatewayClient::new(&harness.url, ProtocolVersion::V2026_07_28);
        let call = stateless_request(
            "tools/call",
            json!({"name": "demo.echo", "arguments": {"text": "x"}}),
        );
        let good = [("Mcp-Method", "tools/call"), ("Mcp-Name", "demo.echo")];
        let exchange = client
            .send(Method::POST, body(call.clone()), &headers(&good))
            .await
            .unwrap();
        assert_eq!(exchange.status, StatusCode::OK);
        assert!(exchange.response.unwrap().is_ok());

        let mismatches: [&[(&'static str, &str)]; 5] = [
            &[("Mcp-Method", "tools/list"), ("Mcp-Name", "demo.echo")],
            &[("Mcp-Method", "tools/call"), ("Mcp-Name", "demo.add")],
            &[("Mcp-Method", "tools/call")],
            &[("Mcp-Name", "demo.echo")],
            &[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "demo.echo"),
            ],
        ];
        for extra in mismatches {
            let exchange = client
                .send(Method::POST, body(call.clone()), &headers(extra))
                .await
                .unwrap();
            assert_eq!(exchange.status, StatusCode::BAD_REQUEST, "{extra:?}");
            let error = exchange.response.unwrap().unwrap_err();
            assert_eq!(error.code, -32020, "{extra:?}: {}", error.message);
        }
        // The version header must equal the envelope's version.
        let mut old = call.clone();
        old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-06-18");
        let exchange = client
            .send(Method::POST, body(old), &headers(&good))
            .await
            .unwrap();
        assert_eq!(exchange.response.unwrap().unwrap_err().code, -32020);
        // A missing envelope is invalid params.
        let bare = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "demo.echo"}});
        let exchange = client
            .send(Method::POST, body(bare), &headers(&good))
            .await
            .unwrap();
        assert_eq!(exchange.response.unwrap().unwrap_err().code, -32602);
        // No upstream call was made for any refused request.
        assert_eq!(harness.upstream.controls().method_count("tools/call"), 1);
        harness.stop().await;
    });
}

#[test]
fn unsupported_methods_are_method_not_found_in_both_generations() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let mut session = harness.client(ProtocolVersion::V2025_06_18).await;
        let exchange = session.send_request("prompts/list", None).await.unwrap();
        assert_eq!(exchange.status, StatusCode::OK);
        assert_eq!(exchange.response.unwrap().unwrap_err().code, -32601);
        let mut stateless = harness.client(ProtocolVersion::V2026_07_28).await;
        let exchange = stateless
            .send_request("resources/list", Some(json!({})))
            .await
            .unwrap();
        assert_eq!(exchange.status, StatusCode::NOT_FOUND);
        assert_eq!(exchange.response.unwrap().unwrap_err().code, -32601);
        let exchange = stateless
            .send_request("ping", Some(json!({})))
            .await
            .unwrap();
        assert_eq!(
            exchange.response.unwrap().unwrap(),
            json!({"resultType": "complete"})
        );
        harness.stop().await;
    });
}

#[test]
fn oversized_requests_are_413_and_malformed_ones_400() {
    run(async {
        let mut setup = Setup::new();
        setup.server_options = Some(Box::new(|options: &mut ServerOptions| {
            options.max_request_bytes(1000);
        }));
        let harness = Harness::start(setup).await;
        let client = harness.client(ProtocolVersion::V2025_11_25).await;
        let big = body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "demo.echo", "arguments": {"text": "x".repeat(2000)}}}));
        let exchange = client.send(Method::POST, big, &[]).await.unwrap();
        assert_eq!(exchange.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(harness.upstream.controls().method_count("tools/call"), 0);

        let cases = [
            (Bytes::from_static(b"{not json"), -32700),
            (
                Bytes::from_static(
                    br#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}"#,
                ),
                -32700,
            ),
            (
                Bytes::from_static(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
                -32600,
            ),
            (
                Bytes::from_static(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
                -32600,
            ),
        ];
        for (bytes, code) in cases {
            let exchange = client.send(Method::POST, bytes.clone(), &[]).await.unwrap();
            assert_eq!(exchange.status, StatusCode::BAD_REQUEST, "{bytes:?}");
            assert_eq!(
                exchange.response.unwrap().unwrap_err().code,
                code,
                "{bytes:?}"
            );
        }
        let exchange = client.send(Method::GET, Bytes::new(), &[]).await.unwrap();
        assert_eq!(exchange.status, StatusCode::METHOD_NOT_ALLOWED);
        harness.stop().await;
    });
}

#[test]
fn sessions_are_required_issued_and_ended() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let ping = body(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));

        // No session: 400. An unknown session: 404.
        let anonymous =
            toolgate_testkit::GatewayClient::new(&harness.url, ProtocolVersion::V2025_11_25);
        let exchange = anonymous
            .send(Method::POST, ping.clone(), &[])
            .await
            .unwrap();
        assert_eq!(exchange.status, StatusCode::BAD_REQUEST);
        let unknown = headers(&[("Mcp-Session-Id", "00000000000000000000000000000000")]);
        let exchange = anonymous
            .send(Method::POST, ping.clone(), &unknown)
            .await
            .unwrap();
        assert_eq!(exchange.status, StatusCode::NOT_FOUND);

        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let session = client.session_id().unwrap().to_owned();
        assert_eq!(session.len(), 32);
        let other = harness.client(ProtocolVersion::V2025_11_25).await;
        assert_ne!(other.session_id().unwrap(), session);
        let exchange = client.send(Method::POST, ping.clone(), &[]).await.unwrap();
        assert_eq!(exchange.status, StatusCode::OK);
        assert_eq!(exchange.response.unwrap().unwrap(), json!({}));

        assert_eq!(client.end_session().await.unwrap(), StatusCode::OK);
        let exchange = client.send(Method::POST, ping.clone(), &[]).await.unwrap();
        assert_eq!(exchange.status, StatusCode::NOT_FOUND);
        assert_eq!(client.end_session().await.unwrap(), StatusCode::NOT_FOUND);
        // The other session is unaffected.
        let exchange = other.send(Method::POST, ping, &[]).await.unwrap();
        assert_eq!(exchange.status, StatusCode::OK);
        harness.stop().await;
    });
}

#[test]
fn initialize_negotiates_and_discover_describes() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
            let mut client =
                toolgate_testkit::GatewayClient::new(&harness.url, version.parse().unwrap());
            let result = client.connect().await.unwrap();
            assert_eq!(result["protocolVersion"], version);
            assert_eq!(
                result["capabilities"],
                json!({"tools": {"listChanged": false}})
            );
            assert_eq!(result["serverInfo"]["name"], "toolgate");
        }
        let mut modern =
            toolgate_testkit::GatewayClient::new(&harness.url, ProtocolVersion::V2026_07_28);
        let discovered = modern.connect().await.unwrap();
        assert_eq!(discovered["supportedVersions"], json!(["2026-07-28"]));
        assert_eq!(discovered["resultType"], "complete");
        assert_eq!(
            discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "toolgate"
        );
        harness.stop().await;
    });
}

#[test]
fn tools_list_serves_approved_definitions_under_catalog_names_in_pages() {
    run(async {
        let mut setup = Setup::new();
        setup.server_options = Some(Box::new(|options: &mut ServerOptions| {
            options.page_size(2);
        }));
        let harness = Harness::start(setup).await;
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let mut client = harness.client(version).await;
            let tools = client.list_tools().await.unwrap();
            let names: Vec<&str> = tools
                .iter()
                .map(|tool| tool["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["demo.echo", "demo.add", "demo.get_time"]);
            // Complete: title, schemas and annotations as approved.
            let mut approved_add = harness.catalog_json[1]["approved_definition"].clone();
            approved_add["name"] = json!("demo.add");
            assert_eq!(tools[1], approved_add);
            assert_eq!(tools[1]["outputSchema"]["required"], json!(["sum"]));
            assert_eq!(tools[1]["title"], "Add");
            assert_eq!(tools[1]["annotations"], json!({"readOnlyHint": true}));

            let exchange = client
                .send_request("tools/list", Some(json!({"cursor": "forged"})))
                .await
                .unwrap();
            assert_eq!(exchange.response.unwrap().unwrap_err().code, -32602);
        }
        harness.stop().await;
    });
}

#[test]
fn stdio_serves_both_generations_line_by_line() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let (client_side, server_side) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_side);
        let serving = tokio::spawn(harness.gateway.clone().serve_stdio(
            server_read,
            server_write,
            std::future::pending(),
        ));
        let (client_read, mut client_write) = tokio::io::split(client_side);
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let input = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "demo.echo", "arguments": {"text": "via stdio"}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope"}}),
            stateless_request("tools/list", json!({})),
        ];
        for message in &input {
            client_write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
        }
        client_write.write_all(b"{broken\n").await.unwrap();
        client_write.shutdown().await.unwrap();
        let mut lines = tokio::io::BufReader::new(client_read).lines();
        let mut answers = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            answers.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        serving.await.unwrap().unwrap();
        assert_eq!(answers.len(), 5, "{answers:?}");
        let by_id = |id: Value| {
            answers
                .iter()
                .find(|answer| answer["id"] == id)
                .unwrap()
                .clone()
        };
        assert_eq!(by_id(json!(1))["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(by_id(json!(2))["result"]["content"][0]["text"], "via stdio");
        assert_eq!(
            by_id(json!(3))["error"]["data"]["reason"],
            "tool_not_in_catalog"
        );
        assert_eq!(by_id(Value::Null)["error"]["code"], -32700);
        let listed = answers
            .iter()
            .find(|answer| answer["result"]["tools"].is_array())
            .unwrap();
        assert_eq!(listed["result"]["resultType"], "complete");
        assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 3);
        // On stdio the caller is the local user who started the gateway (docs/design.md §7).
        let local = toolgate::auth::Principal::local_user().to_string();
        assert!(local.starts_with("Local::\""), "{local}");
        let principals: Vec<Value> = crate::e2e_support::call_entries(&harness.audit_entries())
            .iter()
            .map(|entry| entry["principal"].clone())
            .collect();
        assert_eq!(principals, [json!(local), json!(local)]);
        harness.stop().await;
    });
}

#[test]
fn responses_over_the_limit_become_an_error_naming_it() {
    run(async {
        let mut setup = Setup::new();
        setup.server_options = Some(Box::new(|options: &mut ServerOptions| {
            options.max_response_bytes(600);
        }));
        let harness = Harness::start(setup).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        let exchange = client.send_request("tools/list", None).await.unwrap();
        let error = exchange.response.unwrap().unwrap_err();
        assert_eq!(error.code, -32603);
        assert!(
            error
                .message
                .contains("exceeds the gateway's limit of 600 bytes"),
            "{}",
            error.message
        );
        assert!(exchange.body.len() <= 600);
        // Small answers are unaffected.
        let exchange = client.send_request("ping", None).await.unwrap();
        assert_eq!(exchange.response.unwrap().unwrap(), json!({}));
        harness.stop().await;
    });
}

#[test]
fn shutdown_lets_calls_in_flight_finish() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        harness
            .upstream
            .controls()
            .set_delay(Some(std::time::Duration::from_millis(400)));
        let before = harness.upstream.controls().method_count("tools/list");
        let call =
            tokio::spawn(
                async move { client.call_tool("demo.add", json!({"a": 1, "b": 2})).await },
            );
        crate::e2e_support::eventually("the call reaching the upstream", || {
            harness.upstream.controls().method_count("tools/list") > before
        })
        .await;
        let (_upstream, path, _) = harness.stop().await;
        let result = call.await.unwrap().unwrap().unwrap();
        assert_eq!(result["structuredContent"], json!({"sum": 3}));
        // The decision was flushed before the gateway stopped.
        let entries = crate::e2e_support::read_entries(&path);
        assert_eq!(entries.last().unwrap()["decision"], "allowed");
    });
}

/// A TLS listener (`--tls-cert`/`--tls-key`) speaking HTTP/2 by ALPN.
#[test]
fn the_gateway_serves_http2_over_tls() {
    use std::sync::Arc;

    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

    run(async {
        let harness = Harness::start(Setup::new()).await;
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let cert_der = certified.cert.der().clone();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        ));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert_der.clone()], key)
            .unwrap();
        server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(harness.gateway.clone().serve_http(
            listener,
            Some(Arc::new(server)),
            async move {
                let _ = stopped.await;
            },
        ));

        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert_der).unwrap();
        let mut client = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        client.alpn_protocols = vec![b"h2".to_vec()];
        let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
        let tls = tokio_rustls::TlsConnector::from(Arc::new(client))
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (mut sender, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
                .await
                .unwrap();
        tokio::spawn(connection);
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h2", "version": "1"}}});
        let request = http::Request::post(format!("https://localhost:{}/mcp", address.port()))
            .header("content-type", "application/json")
            .body(Full::new(body(initialize)))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.version(), http::Version::HTTP_2);
        assert!(response.headers().contains_key("mcp-session-id"));
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");

        let _ = stop.send(());
        serving.await.unwrap().unwrap();
        harness.stop().await;
    });
}
