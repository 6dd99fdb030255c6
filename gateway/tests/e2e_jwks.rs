//! `--jwks https://…` end to end (docs/design.md §7): a real HTTPS JWKS server started here (a
//! certificate from an rcgen CA generated here, rustls on loopback) that counts the requests it
//! receives; the gateway fetches at start, refetches for a `kid` it lacks (once per interval,
//! one fetch shared), keeps its keys when a refetch fails, and refuses to start, exit 2, naming
//! the URL and the cause, when the first fetch fails.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate::auth::{BearerAuth, JwksUrl};
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::{DemoIdentity, GatewayClient};

use crate::e2e_auth::{AUDIENCE, INITIALIZE, ISSUER, claims, header, raw, serve_exit};
use crate::e2e_support::{
    Harness, ServeProcess, Setup, call_entries, eventually, eventually_async, run, temp_dir,
};
use crate::token_keys::{TestKey, ec_key, ed_key, jwks, mint};

/// What the test JWKS server answers to every request.
#[derive(Clone)]
enum Answer {
    /// 200 with this body and its Content-Length.
    Document(Vec<u8>),
    /// This status, with an empty body.
    Status(u16),
    /// 200 with `n` bytes of body and no Content-Length (delimited by closing the connection).
    Unannounced(usize),
    /// These bytes, whatever they are, then the connection closes.
    Bytes(Vec<u8>),
    /// Nothing at all: the connection stays open and silent.
    Silence,
}

/// An HTTPS server on loopback serving one JWKS document, counting the requests it reads.
struct JwksServer {
    url: String,
    requests: Arc<AtomicUsize>,
    answer: Arc<Mutex<Answer>>,
    accepting: tokio::task::JoinHandle<()>,
}

impl JwksServer {
    async fn start(identity: &DemoIdentity, answer: Answer) -> JwksServer {
        let key = PrivateKeyDer::from_pem_slice(identity.leaf_key_pem().as_bytes()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![identity.leaf_der().clone()], key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let url = format!(
            "https://127.0.0.1:{}/oauth/jwks.json",
            listener.local_addr().unwrap().port()
        );
        let requests = Arc::new(AtomicUsize::new(0));
        let answer = Arc::new(Mutex::new(answer));
        let (counted, served) = (requests.clone(), answer.clone());
        let accepting = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, counted, served) =
                    (acceptor.clone(), counted.clone(), served.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        match tls.read(&mut byte).await {
                            Ok(1) => head.push(byte[0]),
                            _ => return,
                        }
                    }
                    counted.fetch_add(1, Ordering::SeqCst);
                    let answer = served.lock().unwrap().clone();
                    let response = match answer {
                        Answer::Document(body) => {
                            let mut response = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: application/jwk-set+json\r\n\
                                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                                body.len()
                            )
                            .into_bytes();
                            response.extend_from_slice(&body);
                            response
                        }
                        Answer::Status(status) => format!(
                            "HTTP/1.1 {status} Whatever\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        )
                        .into_bytes(),
                        Answer::Unannounced(n) => {
                            let mut response =
                                b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
                            response.extend(std::iter::repeat_n(b' ', n));
                            response
                        }
                        Answer::Bytes(bytes) => bytes,
                        Answer::Silence => {
                            std::future::pending::<()>().await;
                            return;
                        }
                    };
                    let _ = tls.write_all(&response).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        JwksServer {
            url,
            requests,
            answer,
            accepting,
        }
    }

    fn serve(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for JwksServer {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

fn roots(identity: &DemoIdentity) -> Arc<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(identity.ca_der().clone()).unwrap();
    Arc::new(roots)
}

/// A gateway whose keys are fetched from `server` (trusting `ca`), refetching at most once per
/// `interval`.
async fn gateway_fetching(server: &JwksServer, ca: &DemoIdentity, interval: Duration) -> Harness {
    let mut source = JwksUrl::new(&server.url, roots(ca)).unwrap();
    source.refetch_interval(interval);
    gateway_with(source).await
}

/// A gateway whose keys come from `source`.
async fn gateway_with(source: JwksUrl) -> Harness {
    let auth = BearerAuth::from_jwks_url(ISSUER, AUDIENCE, source)
        .await
        .unwrap();
    gateway_using(Arc::new(auth)).await
}

/// A gateway authenticating callers with `auth`.
async fn gateway_using(auth: Arc<BearerAuth>) -> Harness {
    let mut setup = Setup::new();
    setup.server_options = Some(Box::new(move |options| {
        options.bearer_auth(auth);
    }));
    Harness::start(setup).await
}

/// `demo.add` 2 + 3 with a token for `subject` signed by `key`: the result's structuredContent,
/// or the JSON-RPC error's message.
async fn add_as(harness: &Harness, key: &TestKey, subject: &str) -> Result<Value, String> {
    let mut client = GatewayClient::new(&harness.url, ProtocolVersion::V2026_07_28);
    client.set_bearer(&mint(key, &claims(subject)));
    client.connect().await.map_err(|error| error.to_string())?;
    match client.call_tool("demo.add", json!({"a": 2, "b": 3})).await {
        Ok(Ok(result)) => Ok(result["structuredContent"].clone()),
        Ok(Err(error)) => Err(error.message),
        Err(error) => Err(error.to_string()),
    }
}

/// A raw `initialize` with `token`: the status, the WWW-Authenticate values and the body.
async fn initialize_with(harness: &Harness, token: &str) -> (u16, Vec<String>, String) {
    let authorization = format!("Bearer {token}");
    let (status, headers, body) = raw(
        &harness.url,
        "POST",
        "/mcp",
        &[("Authorization", &authorization)],
        INITIALIZE,
    )
    .await;
    let challenges = header(&headers, "www-authenticate")
        .into_iter()
        .map(str::to_owned)
        .collect();
    (status, challenges, body)
}

fn invalid_token_challenge(harness: &Harness) -> Vec<String> {
    let origin = harness.url.trim_end_matches("/mcp");
    vec![format!(
        "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", \
         error=\"invalid_token\""
    )]
}

/// (principal, tool, decision) of every call entry.
fn decisions(harness: &Harness) -> Vec<(String, String, String)> {
    call_entries(&harness.audit_entries())
        .iter()
        .map(|entry| {
            (
                entry["principal"].as_str().unwrap().to_owned(),
                entry["tool"].as_str().unwrap().to_owned(),
                entry["decision"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_jwks_is_fetched_once_at_start_and_its_keys_verify_every_call() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let key = ec_key("as-1");
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&key]))).await;
        let harness = gateway_fetching(&server, &tls, Duration::from_secs(3600)).await;
        assert_eq!(server.requests(), 1);

        assert_eq!(add_as(&harness, &key, "alice").await, Ok(json!({"sum": 5})));
        assert_eq!(add_as(&harness, &key, "bob").await, Ok(json!({"sum": 5})));
        let (status, headers, body) = raw(&harness.url, "POST", "/mcp", &[], INITIALIZE).await;
        assert_eq!(status, 401);
        let origin = harness.url.trim_end_matches("/mcp");
        assert_eq!(
            header(&headers, "www-authenticate"),
            [format!(
                "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\""
            )]
        );
        assert_eq!(
            body,
            "Unauthorized: no bearer token: send Authorization: Bearer <token> from the \
             authorization server"
        );
        // Known kids never cause a fetch.
        assert_eq!(server.requests(), 1);
        let user = |sub: &str| format!("User::\"{sub}\"");
        assert_eq!(
            decisions(&harness),
            [
                (user("alice"), "demo.add".into(), "allowed".into()),
                (user("bob"), "demo.add".into(), "allowed".into()),
            ]
        );
        harness.stop().await;
    });
}

#[test]
fn a_key_published_after_start_is_found_by_one_refetch_and_unknown_kids_within_the_interval_fetch_nothing()
 {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let (old, new, never) = (ec_key("2026-11"), ed_key("2026-12"), ec_key("ghost"));
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&old]))).await;
        let harness = gateway_fetching(&server, &tls, Duration::from_secs(3600)).await;
        assert_eq!(server.requests(), 1);

        // The authorization server rotates: the new key appears in its JWKS.
        server.serve(Answer::Document(jwks(&[&old, &new])));
        assert_eq!(add_as(&harness, &new, "carol").await, Ok(json!({"sum": 5})));
        assert_eq!(server.requests(), 2);
        assert_eq!(add_as(&harness, &old, "alice").await, Ok(json!({"sum": 5})));
        assert_eq!(add_as(&harness, &new, "carol").await, Ok(json!({"sum": 5})));
        assert_eq!(server.requests(), 2);

        // Two more unknown kids within the interval: refused, and no fetch.
        for _ in 0..2 {
            let (status, challenge, body) =
                initialize_with(&harness, &mint(&never, &claims("mallory"))).await;
            assert_eq!(status, 401);
            assert_eq!(challenge, invalid_token_challenge(&harness));
            assert_eq!(
                body,
                "Unauthorized: the token's kid \"ghost\" is not in the gateway's JWKS"
            );
        }
        assert_eq!(server.requests(), 2);
        let user = |sub: &str| format!("User::\"{sub}\"");
        assert_eq!(
            decisions(&harness),
            [
                (user("carol"), "demo.add".into(), "allowed".into()),
                (user("alice"), "demo.add".into(), "allowed".into()),
                (user("carol"), "demo.add".into(), "allowed".into()),
            ]
        );
        harness.stop().await;
    });
}

#[test]
fn with_a_zero_interval_every_unknown_kid_refetches() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let (old, never) = (ec_key("old"), ec_key("ghost"));
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&old]))).await;
        let harness = gateway_fetching(&server, &tls, Duration::ZERO).await;
        for fetched in [2, 3] {
            let (status, _, body) = initialize_with(&harness, &mint(&never, &claims("m"))).await;
            assert_eq!(
                (status, body.as_str()),
                (
                    401,
                    "Unauthorized: the token's kid \"ghost\" is not in the gateway's JWKS"
                )
            );
            assert_eq!(server.requests(), fetched);
        }
        harness.stop().await;
    });
}

#[test]
fn concurrent_tokens_with_unknown_kids_share_one_fetch() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let (old, new, never) = (ec_key("old"), ec_key("new"), ec_key("ghost"));
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&old]))).await;
        let harness = gateway_fetching(&server, &tls, Duration::from_secs(3600)).await;
        server.serve(Answer::Document(jwks(&[&old, &new])));

        // Eight requests at once: six name the new key, two a key nobody publishes.
        let mut tokens = vec![mint(&new, &claims("dave")); 6];
        tokens.extend(vec![mint(&never, &claims("mallory")); 2]);
        let harness = Arc::new(harness);
        let answers = join_in_order(tokens.iter().map(|token| {
            let (harness, token) = (harness.clone(), token.clone());
            tokio::spawn(async move { initialize_with(&harness, &token).await.0 })
        }))
        .await;
        assert_eq!(answers, [200, 200, 200, 200, 200, 200, 401, 401]);
        assert_eq!(server.requests(), 2);
        let Ok(harness) = Arc::try_unwrap(harness) else {
            panic!("a request task still holds the harness");
        };
        harness.stop().await;
    });
}

/// Awaits every task, in order.
async fn join_in_order<T>(tasks: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let tasks: Vec<_> = tasks.collect();
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

#[test]
fn a_failed_refetch_keeps_the_keys_held_and_the_unknown_kid_is_refused() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let (old, new) = (ec_key("old"), ec_key("new"));
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&old]))).await;
        let harness = gateway_fetching(&server, &tls, Duration::from_secs(3600)).await;

        server.serve(Answer::Status(503));
        let (status, challenge, body) =
            initialize_with(&harness, &mint(&new, &claims("erin"))).await;
        assert_eq!(
            (status, challenge, body.as_str()),
            (
                401,
                invalid_token_challenge(&harness),
                "Unauthorized: the token's kid \"new\" is not in the gateway's JWKS"
            )
        );
        assert_eq!(server.requests(), 2);
        assert_eq!(add_as(&harness, &old, "alice").await, Ok(json!({"sum": 5})));
        assert_eq!(server.requests(), 2);
        assert_eq!(
            decisions(&harness),
            [(
                "User::\"alice\"".into(),
                "demo.add".into(),
                "allowed".into()
            )]
        );
        harness.stop().await;
    });
}

#[test]
fn a_key_withdrawn_from_the_jwks_stops_verifying_once_the_set_is_older_than_its_max_age() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let (old, new) = (ec_key("withdrawn"), ed_key("current"));
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&old]))).await;
        let mut source = JwksUrl::new(&server.url, roots(&tls)).unwrap();
        source
            .refetch_interval(Duration::from_secs(3600))
            .max_age(Duration::from_millis(100));
        let auth = Arc::new(
            BearerAuth::from_jwks_url(ISSUER, AUDIENCE, source)
                .await
                .unwrap(),
        );
        let harness = gateway_using(Arc::clone(&auth)).await;
        assert_eq!(add_as(&harness, &old, "alice").await, Ok(json!({"sum": 5})));
        // A token verified once is held (its signature is not checked again)...
        let old_token = mint(&old, &claims("alice"));
        assert_eq!(initialize_with(&harness, &old_token).await.0, 200);
        assert_eq!(initialize_with(&harness, &old_token).await.0, 200);
        assert_eq!(auth.verified_tokens_held(), 2);

        // The authorization server withdraws the key; no token names an unknown kid, so only
        // the refresh of the aged set can notice, and then the held token is not accepted.
        server.serve(Answer::Document(jwks(&[&new])));
        eventually_async("the withdrawn key's refusal", || async {
            initialize_with(&harness, &old_token).await.0 == 401
        })
        .await;
        let (status, challenge, body) = initialize_with(&harness, &old_token).await;
        assert_eq!(
            (status, challenge, body.as_str()),
            (
                401,
                invalid_token_challenge(&harness),
                "Unauthorized: the token's kid \"withdrawn\" is not in the gateway's JWKS"
            )
        );
        // Only add_as's token of alice, never presented again, is still held.
        assert_eq!(auth.verified_tokens_held(), 1);
        assert_eq!(add_as(&harness, &new, "carol").await, Ok(json!({"sum": 5})));
        assert_eq!(
            decisions(&harness),
            [
                (
                    "User::\"alice\"".into(),
                    "demo.add".into(),
                    "allowed".into()
                ),
                (
                    "User::\"carol\"".into(),
                    "demo.add".into(),
                    "allowed".into()
                ),
            ]
        );
        harness.stop().await;
    });
}

#[test]
fn a_failed_refresh_of_an_aged_set_keeps_the_keys_held() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let key = ec_key("held");
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&key]))).await;
        let mut source = JwksUrl::new(&server.url, roots(&tls)).unwrap();
        source
            .refetch_interval(Duration::from_secs(3600))
            .max_age(Duration::from_millis(50));
        let harness = gateway_with(source).await;
        server.serve(Answer::Status(503));
        // The start-up fetch and two failed refreshes.
        eventually("two refreshes of the aged set", || server.requests() >= 3).await;
        assert_eq!(add_as(&harness, &key, "dave").await, Ok(json!({"sum": 5})));
        assert_eq!(
            decisions(&harness),
            [("User::\"dave\"".into(), "demo.add".into(), "allowed".into())]
        );
        harness.stop().await;
    });
}

/// A catalog with no entries, for `toolgate serve` runs that only authenticate.
fn empty_catalog() -> std::path::PathBuf {
    let catalog = temp_dir("jwks-catalog").join("catalog.json");
    std::fs::write(&catalog, "[]").unwrap();
    catalog
}

fn ca_file(identity: &DemoIdentity) -> String {
    let path = temp_dir("jwks-ca").join("ca.pem");
    std::fs::write(&path, identity.ca_pem()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// `toolgate serve --jwks URL --ca CA EXTRA…`: its exit code and stderr (it must exit).
fn serve_refusing(url: &str, ca: &str, extra: &[&str]) -> (i32, String) {
    let mut args = vec![
        "--jwt-issuer",
        ISSUER,
        "--jwt-audience",
        AUDIENCE,
        "--jwks",
        url,
        "--ca",
        ca,
    ];
    args.extend_from_slice(extra);
    serve_exit("127.0.0.1:0", &args)
}

/// The line of `stderr` that names the refusal, without the log prefix.
fn refusal(stderr: &str) -> &str {
    let at = stderr.find("--jwks ").unwrap_or_else(|| panic!("{stderr}"));
    stderr[at..].lines().next().unwrap()
}

#[test]
fn serve_fetches_the_jwks_url_and_logs_a_failed_refetch_keeping_its_keys() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let (old, new) = (ec_key("old"), ec_key("new"));
        let server = JwksServer::start(&tls, Answer::Document(jwks(&[&old]))).await;
        let dir = temp_dir("jwks-serve");
        let ca = ca_file(&tls);
        let process = ServeProcess::spawn(
            &empty_catalog(),
            &dir.join("audit.jsonl"),
            &[
                "--jwt-issuer",
                ISSUER,
                "--jwt-audience",
                AUDIENCE,
                "--jwks",
                &server.url,
                "--ca",
                &ca,
                "--jwks-refetch-interval",
                "1h",
            ],
        );
        let mut client = GatewayClient::new(&process.url, ProtocolVersion::V2025_06_18);
        client.set_bearer(&mint(&old, &claims("alice")));
        let mut answered = false;
        for _ in 0..250 {
            if client.connect().await.is_ok() {
                answered = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(answered, "toolgate serve did not answer on {}", process.url);
        assert_eq!(server.requests(), 1);

        server.serve(Answer::Document(b"{\"keys\": [".to_vec()));
        let authorization = format!("Bearer {}", mint(&new, &claims("erin")));
        let (status, _, body) = raw(
            &process.url,
            "POST",
            "/mcp",
            &[("Authorization", &authorization)],
            INITIALIZE,
        )
        .await;
        assert_eq!(
            (status, body.as_str()),
            (
                401,
                "Unauthorized: the token's kid \"new\" is not in the gateway's JWKS"
            )
        );
        assert_eq!(server.requests(), 2);
        let (code, stderr) = process.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        let url = &server.url;
        let warning = format!(
            "refetching the JWKS for a token with the unknown kid \"new\" failed, keeping the 1 \
             keys fetched before: --jwks {url}: not a JWK set (EOF while parsing a list at line 1 \
             column 10); expected {{\"keys\": [...]}} (RFC 7517 §5)"
        );
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|line| line.contains(&warning))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(lines[0].contains("WARN"), "{stderr}");
    });
}

#[test]
fn serve_refuses_to_start_when_the_first_fetch_fails_naming_the_url_and_the_cause() {
    run(async {
        let tls = DemoIdentity::generate().unwrap();
        let other = DemoIdentity::generate().unwrap();
        let key = ec_key("k");
        let ca = ca_file(&tls);

        // A certificate from another CA of the same name (every DemoIdentity CA has one): webpki
        // finds the trusted issuer by name and the signature does not verify; no request is read.
        let stranger = JwksServer::start(&other, Answer::Document(jwks(&[&key]))).await;
        let (code, stderr) = serve_refusing(&stranger.url, &ca, &[]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            refusal(&stderr),
            format!(
                "--jwks {}: the TLS handshake failed (invalid peer certificate: BadSignature); \
                 the server's certificate must chain to the gateway's trust roots (--ca, default \
                 the system bundle) and name the URL's host",
                stranger.url
            )
        );
        assert_eq!(stranger.requests(), 0);

        let server = JwksServer::start(&tls, Answer::Status(404)).await;
        let url = server.url.clone();
        let cases: Vec<(Answer, String)> = vec![
            (
                Answer::Status(404),
                format!(
                    "--jwks {url}: the server answered HTTP 404; expected 200 with the JWK set"
                ),
            ),
            (
                Answer::Status(302),
                format!(
                    "--jwks {url}: the server answered HTTP 302; expected 200 with the JWK set"
                ),
            ),
            (
                Answer::Document(vec![b' '; 256 * 1024 + 1]),
                format!(
                    "--jwks {url}: the server announced 262145 bytes (Content-Length), more than \
                     the 262144 read; a JWK set is a few KiB"
                ),
            ),
            (
                Answer::Unannounced(300 * 1024),
                format!(
                    "--jwks {url}: the document runs past 262144 bytes; reading stopped there (a \
                     JWK set is a few KiB)"
                ),
            ),
            (
                Answer::Document(b"<html>sign in</html>".to_vec()),
                format!(
                    "--jwks {url}: not a JWK set (expected value at line 1 column 1); expected \
                     {{\"keys\": [...]}} (RFC 7517 §5)"
                ),
            ),
            (
                Answer::Document(
                    json!({"keys": [{"kty": "oct", "kid": "shared", "k": "c2VjcmV0"}]})
                        .to_string()
                        .into_bytes(),
                ),
                format!(
                    "--jwks {url}: key \"shared\" is a symmetric (HMAC) key; only RS256 (RSA), \
                     ES256 (EC P-256) and EdDSA (Ed25519) signing keys are accepted"
                ),
            ),
            (
                Answer::Document(br#"{"keys": []}"#.to_vec()),
                format!("--jwks {url}: the set has no keys"),
            ),
            (
                Answer::Bytes(b"SSH-2.0-OpenSSH_9.6\r\n".to_vec()),
                format!("--jwks {url}: the HTTP exchange failed (invalid HTTP version parsed)"),
            ),
        ];
        for (count, (answer, expected)) in cases.into_iter().enumerate() {
            server.serve(answer);
            let (code, stderr) = serve_refusing(&url, &ca, &[]);
            assert_eq!(code, 2, "{stderr}");
            assert_eq!(refusal(&stderr), expected);
            assert_eq!(server.requests(), count + 1);
        }

        // Silence: the fetch's deadline ends it.
        server.serve(Answer::Silence);
        let (code, stderr) = serve_refusing(&url, &ca, &["--jwks-timeout", "300ms"]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            refusal(&stderr),
            format!(
                "--jwks {url}: no complete answer within 300ms (connect, handshake, request and \
                 body together; --jwks-timeout)"
            )
        );

        // Nobody listening.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = closed.local_addr().unwrap();
        drop(closed);
        let down = format!("https://{address}/jwks.json");
        let (code, stderr) = serve_refusing(&down, &ca, &[]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            refusal(&stderr),
            format!(
                "--jwks {down}: cannot connect to {address} (Connection refused (os error 111)); \
                 is the authorization server up?"
            )
        );
    });
}

#[test]
fn serve_refuses_a_jwks_url_that_is_not_https_before_any_connection() {
    let ca = ca_file(&DemoIdentity::generate().unwrap());
    let (code, stderr) = serve_refusing("http://127.0.0.1:1/jwks.json", &ca, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        refusal(&stderr),
        "--jwks http://127.0.0.1:1/jwks.json: refusing a plain http URL: the keys decide who may \
         call, and anyone on the path could replace them; serve the JWKS over https"
    );
    let (code, stderr) = serve_refusing("ftp://auth.example/jwks.json", &ca, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        refusal(&stderr),
        "--jwks ftp://auth.example/jwks.json: not a JWKS URL (the scheme is not https); write \
         https://HOST[:PORT]/PATH"
    );
    let (code, stderr) = serve_refusing("https://alice@auth.example/jwks.json", &ca, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        refusal(&stderr),
        "--jwks https://alice@auth.example/jwks.json: not a JWKS URL (it carries user \
         information); write https://HOST[:PORT]/PATH"
    );
    let (code, stderr) = serve_refusing("https://[::1/jwks.json", &ca, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        refusal(&stderr),
        "--jwks https://[::1/jwks.json: not a JWKS URL (it does not parse); write \
         https://HOST[:PORT]/PATH"
    );
    let (code, stderr) = serve_refusing(
        "https://127.0.0.1:1/jwks.json",
        &ca,
        &["--jwks-refetch-interval", "soon"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "--jwks-refetch-interval \"soon\" is not a duration: write a positive whole number \
             and a unit, such as 250ms, 30s, 5m or 1h"
        ),
        "{stderr}"
    );
    let (code, stderr) = serve_refusing(
        "https://127.0.0.1:1/jwks.json",
        &ca,
        &["--jwks-max-age", "0s"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "--jwks-max-age \"0s\" is not a duration: write a positive whole number and a \
             unit, such as 250ms, 30s, 5m or 1h"
        ),
        "{stderr}"
    );
}
