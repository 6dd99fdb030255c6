//! Who may call (docs/design.md §7) end to end: bearer tokens minted here with keys generated here
//! (RSA by `openssl genpkey`, EC P-256 and Ed25519 by rcgen), verified by a real gateway on
//! loopback; every refusal with its status, challenge and message; the RFC 9728 metadata
//! document; the principal in every audit entry; the safe default of `toolgate serve`.

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rustls_pki_types::pem::PemObject;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate::auth::{BearerAuth, JwksError, Principal};
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::GatewayClient;

use crate::e2e_support::{Harness, Setup, TOOLGATE, call_entries, run, temp_dir};
use crate::token_keys::{TestKey, b64, ec_key, ed_key, jwks, mint, rsa_key};

pub const ISSUER: &str = "https://auth.example";
pub const AUDIENCE: &str = "https://gateway.example/mcp";

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims that the gateway accepts, for `sub`.
pub fn claims(sub: &str) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": now() + 300, "nbf": now() - 5,
           "scope": "tools:call tools:list", "groups": ["ops"]})
}

async fn gateway(keys: &[&TestKey]) -> Harness {
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &jwks(keys), "test JWKS").unwrap();
    let auth = std::sync::Arc::new(auth);
    let mut setup = Setup::new();
    setup.server_options = Some(Box::new(move |options| {
        options.bearer_auth(auth);
    }));
    Harness::start(setup).await
}

/// One raw HTTP/1.1 exchange: status, headers (lower-case names), body.
pub async fn raw(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let address = url
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(": ").unwrap();
            (name.to_ascii_lowercase(), value.to_owned())
        })
        .collect();
    (status, headers, body.to_owned())
}

pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    headers
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[test]
fn tokens_signed_rs256_es256_and_eddsa_are_accepted_and_every_entry_names_the_subject() {
    run(async {
        let (rsa, ec, ed) = (rsa_key("rsa-1"), ec_key("ec-1"), ed_key("ed-1"));
        let harness = gateway(&[&rsa, &ec, &ed]).await;
        let cases = [
            (&rsa, "rsa-user", ProtocolVersion::V2025_06_18),
            (&ec, "ec-user", ProtocolVersion::V2026_07_28),
            (&ed, "ed-user", ProtocolVersion::V2025_03_26),
        ];
        for (key, subject, version) in cases {
            let mut client = GatewayClient::new(&harness.url, version);
            client.set_bearer(&mint(key, &claims(subject)));
            client.connect().await.unwrap();
            let answer = client
                .call_tool("demo.add", json!({"a": 2, "b": 3}))
                .await
                .unwrap();
            assert!(answer.is_ok(), "{subject}: {answer:?}");
            let denied = client.call_tool("crm.query", json!({})).await.unwrap();
            assert!(denied.is_err());
        }
        let entries = call_entries(&harness.audit_entries());
        let seen: Vec<(&str, &str, &str)> = entries
            .iter()
            .map(|entry| {
                (
                    entry["principal"].as_str().unwrap(),
                    entry["tool"].as_str().unwrap(),
                    entry["decision"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (r#"User::"rsa-user""#, "demo.add", "allowed"),
                (r#"User::"rsa-user""#, "crm.query", "tool_not_in_catalog"),
                (r#"User::"ec-user""#, "demo.add", "allowed"),
                (r#"User::"ec-user""#, "crm.query", "tool_not_in_catalog"),
                (r#"User::"ed-user""#, "demo.add", "allowed"),
                (r#"User::"ed-user""#, "crm.query", "tool_not_in_catalog"),
            ]
        );
        let (_, audit, _) = harness.stop().await;
        let verified = std::process::Command::new(TOOLGATE)
            .args(["audit", "verify"])
            .arg(&audit)
            .output()
            .unwrap();
        assert_eq!(verified.status.code(), Some(0), "{verified:?}");
    });
}

#[test]
fn every_refused_token_is_401_with_the_resource_metadata_challenge_and_its_reason() {
    run(async {
        let (ec, ed) = (ec_key("ec-1"), ed_key("ed-1"));
        let stranger = ec_key("ec-1");
        let unlisted = ec_key("ec-9");
        let harness = gateway(&[&ec, &ed]).await;
        let address = harness
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        let metadata = format!("http://{address}/.well-known/oauth-protected-resource/mcp");
        let missing = format!("Bearer resource_metadata=\"{metadata}\"");
        let invalid = format!("Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\"");

        let unsigned = format!(
            "{}.{}.",
            b64(br#"{"alg":"none","kid":"ec-1"}"#),
            b64(claims("mallory").to_string().as_bytes())
        );
        let mut hmac_header = Header::new(Algorithm::HS256);
        hmac_header.kid = Some("ec-1".to_owned());
        let hmac = jsonwebtoken::encode(
            &hmac_header,
            &claims("mallory"),
            &EncodingKey::from_secret(b"a shared secret"),
        )
        .unwrap();
        let mut other = claims("alice");
        other["iss"] = json!("https://other.example");
        let wrong_issuer = mint(&ec, &other);
        let mut other = claims("alice");
        other["aud"] = json!("https://another-resource.example/mcp");
        let wrong_audience = mint(&ec, &other);
        let mut other = claims("alice");
        other["exp"] = json!(now() - 120);
        let expired = mint(&ed, &other);
        let mut other = claims("alice");
        other["nbf"] = json!(now() + 600);
        let early = mint(&ed, &other);
        let mut other = claims("alice");
        other.as_object_mut().unwrap().remove("sub");
        let no_subject = mint(&ec, &other);
        // An EdDSA header on the EC key's kid.
        let mut swapped = Header::new(Algorithm::EdDSA);
        swapped.kid = Some("ec-1".to_owned());
        let swapped = jsonwebtoken::encode(&swapped, &claims("alice"), &ed.encoding).unwrap();
        let mut headless = Header::new(Algorithm::ES256);
        headless.kid = None;
        let no_kid = jsonwebtoken::encode(&headless, &claims("alice"), &ec.encoding).unwrap();

        let cases: Vec<(Option<String>, &str, String)> = vec![
            (None, &missing, "no bearer token: send Authorization: Bearer <token> from the authorization server".into()),
            (Some("Basic YWxpY2U6cHc=".into()), &invalid, "the Authorization header is not one \"Bearer <token>\"".into()),
            (Some("Bearer not-a-jws".into()), &invalid, "the bearer token is not a JWS in compact form (1 segments, not 3)".into()),
            (Some(format!("Bearer {unsigned}")), &invalid, "the token is unsigned (alg \"none\"); only RS256, ES256 and EdDSA are accepted".into()),
            (Some(format!("Bearer {hmac}")), &invalid, "the token uses HMAC (HS256); only RS256, ES256 and EdDSA are accepted".into()),
            (Some(format!("Bearer {}", mint(&unlisted, &claims("alice")))), &invalid, "the token's kid \"ec-9\" is not in the gateway's JWKS".into()),
            (Some(format!("Bearer {}", mint(&stranger, &claims("alice")))), &invalid, "the token's signature does not verify against key \"ec-1\"".into()),
            (Some(format!("Bearer {swapped}")), &invalid, "the token's alg EdDSA does not match key \"ec-1\", which is ES256".into()),
            (Some(format!("Bearer {no_kid}")), &invalid, "the token's header has no \"kid\"; the gateway chooses the key by kid".into()),
            (Some(format!("Bearer {wrong_issuer}")), &invalid, "the token's iss \"https://other.example\" is not the gateway's issuer \"https://auth.example\"".into()),
            (Some(format!("Bearer {wrong_audience}")), &invalid, "the token's aud \"https://another-resource.example/mcp\" does not name the gateway's audience \"https://gateway.example/mcp\"".into()),
            (Some(format!("Bearer {expired}")), &invalid, "the token has expired (exp is past, 60 s leeway)".into()),
            (Some(format!("Bearer {early}")), &invalid, "the token is not yet valid (nbf is ahead, 60 s leeway)".into()),
            (Some(format!("Bearer {no_subject}")), &invalid, "the token has no \"sub\" claim".into()),
        ];
        for (authorization, challenge, message) in &cases {
            let headers: Vec<(&str, &str)> = authorization
                .iter()
                .map(|value| ("Authorization", value.as_str()))
                .collect();
            let (status, response_headers, body) =
                raw(&harness.url, "POST", "/mcp", &headers, INITIALIZE).await;
            assert_eq!(status, 401, "{message}");
            assert_eq!(header(&response_headers, "www-authenticate"), [*challenge]);
            assert_eq!(body, format!("Unauthorized: {message}"));
        }
        // A refused request decides nothing about a tool: the log holds only the start.
        assert_eq!(call_entries(&harness.audit_entries()), Vec::<Value>::new());
        harness.stop().await;
    });
}

#[test]
fn the_protected_resource_metadata_document_names_the_resource_and_the_issuer() {
    run(async {
        let ec = ec_key("ec-1");
        let harness = gateway(&[&ec]).await;
        let address = harness
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        let (status, headers, body) = raw(
            &harness.url,
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            &[],
            "",
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(header(&headers, "content-type"), ["application/json"]);
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            json!({
                "resource": format!("http://{address}/mcp"),
                "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"],
                "resource_name": "toolgate",
            })
        );
        harness.stop().await;
    });
}

#[test]
fn without_client_authentication_entries_name_anonymous_and_no_metadata_is_served() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let (status, _, _) = raw(
            &harness.url,
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            &[],
            "",
        )
        .await;
        assert_eq!(status, 404);
        let mut client = harness.client(ProtocolVersion::V2025_06_18).await;
        let answer = client.call_tool("demo.add", json!({"a": 1, "b": 1})).await;
        assert!(answer.unwrap().is_ok());
        let entries = call_entries(&harness.audit_entries());
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0]["principal"], "anonymous");
        harness.stop().await;
    });
}

#[test]
fn a_jwks_the_gateway_cannot_trust_is_refused_with_its_reason() {
    let ec = ec_key("ec-1");
    let refuse = |text: Value| {
        BearerAuth::from_jwks(ISSUER, AUDIENCE, text.to_string().as_bytes(), "jwks.json")
            .unwrap_err()
    };
    let hmac = refuse(json!({"keys": [{"kty": "oct", "kid": "h", "k": "c2VjcmV0"}]}));
    assert!(matches!(hmac, JwksError::UnsupportedKey { .. }));
    assert_eq!(
        hmac.to_string(),
        "--jwks jwks.json: key \"h\" is a symmetric (HMAC) key; only RS256 (RSA), ES256 (EC \
         P-256) and EdDSA (Ed25519) signing keys are accepted"
    );
    let mut no_kid = ec.jwk.clone();
    no_kid.as_object_mut().unwrap().remove("kid");
    assert_eq!(
        refuse(json!({"keys": [no_kid]})).to_string(),
        "--jwks jwks.json: key 0 has no \"kid\"; every key must have one"
    );
    let mut declared = ec.jwk.clone();
    declared["alg"] = json!("RS256");
    assert_eq!(
        refuse(json!({"keys": [declared]})).to_string(),
        "--jwks jwks.json: key \"ec-1\" is declared for RS256; only RS256 (RSA), ES256 (EC \
         P-256) and EdDSA (Ed25519) signing keys are accepted"
    );
    assert_eq!(
        refuse(json!({"keys": []})).to_string(),
        "--jwks jwks.json: the set has no keys"
    );
    assert!(matches!(refuse(json!([1])), JwksError::Parse { .. }));
    // The verifier's principal carries the scopes and the other claims.
    let auth = BearerAuth::from_jwks(ISSUER, AUDIENCE, &jwks(&[&ec]), "jwks.json").unwrap();
    let Principal::User {
        subject,
        scopes,
        claims: other,
    } = auth.verify(&mint(&ec, &claims("alice"))).unwrap()
    else {
        panic!("not a user");
    };
    assert_eq!(subject, "alice");
    assert_eq!(scopes, ["tools:call", "tools:list"]);
    assert_eq!(other["groups"], json!(["ops"]));
}

/// `toolgate serve` with `extra` on `listen`: its exit code and stderr when it exits by itself
/// within 20 s.
pub fn serve_exit(listen: &str, extra: &[&str]) -> (i32, String) {
    let dir = temp_dir("serve-auth");
    let catalog = dir.join("catalog.json");
    std::fs::write(&catalog, "[]").unwrap();
    let mut child = std::process::Command::new(TOOLGATE)
        .args([
            "serve",
            "--catalog",
            catalog.to_str().unwrap(),
            "--listen",
            listen,
        ])
        .args(["--audit", dir.join("audit.jsonl").to_str().unwrap()])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::e2e_support::wait_bounded(&mut child, std::time::Duration::from_secs(20))
}

#[test]
fn serve_refuses_a_non_loopback_listener_that_authenticates_nobody() {
    let (code, stderr) = serve_exit("0.0.0.0:0", &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "refusing to serve 0.0.0.0:0 without client authentication: anyone who can reach \
             it could call every catalog tool. Give --jwt-issuer, --jwt-audience and --jwks \
             (bearer tokens) or --client-ca (mTLS), or --allow-unauthenticated to serve it anyway"
        ),
        "{stderr}"
    );
    // A JWKS that cannot be read is named; --jwks alone is a usage error.
    let (code, stderr) = serve_exit(
        "0.0.0.0:0",
        &[
            "--jwt-issuer",
            ISSUER,
            "--jwt-audience",
            AUDIENCE,
            "--jwks",
            "/nonexistent/jwks.json",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--jwks /nonexistent/jwks.json: cannot read it (No such file or directory"),
        "{stderr}"
    );
    // A --client-ca that cannot be read is named (it needs an HTTPS listener).
    let (code, stderr) = serve_exit(
        "0.0.0.0:0",
        &[
            "--tls-cert",
            "/nonexistent/c.pem",
            "--tls-key",
            "/nonexistent/k.pem",
            "--client-ca",
            "/nonexistent/ca.pem",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--client-ca /nonexistent/ca.pem: "),
        "{stderr}"
    );
    let (code, stderr) = serve_exit("127.0.0.1:0", &["--client-ca", "/nonexistent/ca.pem"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--tls-cert"), "{stderr}");
    let (code, stderr) = serve_exit("127.0.0.1:0", &["--jwks", "/nonexistent/jwks.json"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--jwt-issuer"), "{stderr}");
}

/// A client CA generated here, and leaves it issues for client authentication.
struct ClientCa {
    params: rcgen::CertificateParams,
    key: rcgen::KeyPair,
    der: rustls_pki_types::CertificateDer<'static>,
}

impl ClientCa {
    fn new() -> ClientCa {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "toolgate test client CA");
        let der = params.self_signed(&key).unwrap().der().clone();
        ClientCa { params, key, der }
    }

    /// A client leaf (with the URI SAN `spiffe`, when given): its chain, key and SPKI DER.
    fn issue(
        &self,
        spiffe: Option<&str>,
    ) -> (rustls_pki_types::CertificateDer<'static>, Vec<u8>, Vec<u8>) {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        if let Some(id) = spiffe {
            params.subject_alt_names = vec![rcgen::SanType::URI(
                rcgen::string::Ia5String::try_from(id).unwrap(),
            )];
        }
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let key = rcgen::KeyPair::generate().unwrap();
        let issuer = rcgen::Issuer::from_params(&self.params, &self.key);
        let der = params.signed_by(&key, &issuer).unwrap().der().clone();
        let spki = rcgen::PublicKeyData::subject_public_key_info(&key);
        (der, key.serialize_der(), spki)
    }
}

/// One stateless `tools/call` of `demo.add` over TLS with the client certificate `client`:
/// the HTTP status line, or the handshake's error.
async fn call_over_mtls(
    address: std::net::SocketAddr,
    server_ca: &rustls_pki_types::CertificateDer<'static>,
    client: Option<(rustls_pki_types::CertificateDer<'static>, Vec<u8>)>,
) -> Result<String, String> {
    use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    use std::sync::Arc;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(server_ca.clone()).unwrap();
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                vec![cert],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key)),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .map_err(|error| error.to_string())?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "demo.add", "arguments": {"a": 2, "b": 3},
        "_meta": {toolgate::mcp::META_PROTOCOL_VERSION: "2026-07-28",
                  toolgate::mcp::META_CLIENT_CAPABILITIES: {}}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
         Mcp-Name: demo.add\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // TLS 1.3: the server's verdict on the client certificate arrives after the client's
    // handshake completes, so a refusal shows on the first write or read.
    tls.write_all(request.as_bytes())
        .await
        .map_err(|error| error.to_string())?;
    let mut answer = Vec::new();
    tls.read_to_end(&mut answer)
        .await
        .map_err(|error| error.to_string())?;
    let answer = String::from_utf8(answer).unwrap();
    Ok(answer.lines().next().unwrap_or("").to_owned())
}

#[test]
fn client_certificates_name_the_caller_by_spiffe_id_or_key_and_another_ca_is_refused() {
    use rustls_pki_types::PrivateKeyDer;
    use std::sync::Arc;
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let server = toolgate_testkit::DemoIdentity::generate().unwrap();
        let clients = ClientCa::new();
        let mut client_roots = rustls::RootCertStore::empty();
        client_roots.add(clients.der.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(client_roots),
            provider.clone(),
        )
        .build()
        .unwrap();
        let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(server.leaf_key_pem().as_bytes())
            .unwrap();
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(vec![server.leaf_der().clone()], key)
            .unwrap();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(harness.gateway.clone().serve_http(
            listener,
            Some(Arc::new(config)),
            async move {
                let _ = stopped.await;
            },
        ));

        let (spiffe_cert, spiffe_key, _) = clients.issue(Some("spiffe://corp.example/agents/a1"));
        let (plain_cert, plain_key, plain_spki) = clients.issue(None);
        let stranger =
            toolgate_testkit::DemoIdentity::svid("spiffe://corp.example/agents/a1").unwrap();
        let stranger_key =
            PrivateKeyDer::from_pem_slice(stranger.leaf_key_pem().as_bytes()).unwrap();
        let PrivateKeyDer::Pkcs8(stranger_key) = stranger_key else {
            panic!("a PKCS#8 key")
        };

        let ok = "HTTP/1.1 200 OK".to_owned();
        assert_eq!(
            call_over_mtls(address, server.ca_der(), Some((spiffe_cert, spiffe_key))).await,
            Ok(ok.clone())
        );
        assert_eq!(
            call_over_mtls(address, server.ca_der(), Some((plain_cert, plain_key))).await,
            Ok(ok)
        );
        let refused = call_over_mtls(
            address,
            server.ca_der(),
            Some((
                stranger.leaf_der().clone(),
                stranger_key.secret_pkcs8_der().to_vec(),
            )),
        )
        .await;
        assert!(
            refused.as_ref().is_err_and(|e| e.contains("UnknownCA")),
            "{refused:?}"
        );
        let anonymous = call_over_mtls(address, server.ca_der(), None).await;
        assert!(
            anonymous
                .as_ref()
                .is_err_and(|e| e.contains("CertificateRequired")),
            "{anonymous:?}"
        );

        let fingerprint = server_identity::Fingerprint::of_spki(&plain_spki);
        let principals: Vec<Value> = call_entries(&harness.audit_entries())
            .iter()
            .map(|entry| entry["principal"].clone())
            .collect();
        assert_eq!(
            principals,
            [
                json!(r#"Spiffe::"spiffe://corp.example/agents/a1""#),
                json!(format!("Cert::\"{fingerprint}\"")),
            ]
        );
        let _ = stop.send(());
        serving.await.unwrap().unwrap();
        harness.stop().await;
    });
}

/// Without the `cedar` feature, `--policy` refuses to start rather than run unenforced.
#[cfg(not(feature = "cedar"))]
#[test]
fn serve_without_cedar_refuses_a_policy() {
    let (code, stderr) = serve_exit("127.0.0.1:0", &["--policy", "examples/policy.cedar"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "--policy examples/policy.cedar: this toolgate was built without Cedar; rebuild it \
             with the cargo feature `cedar` (on by default)"
        ),
        "{stderr}"
    );
    // So does --policy-schema: the schema is never read.
    let (code, stderr) = serve_exit(
        "127.0.0.1:0",
        &[
            "--policy",
            "examples/policy.cedar",
            "--policy-schema",
            "examples/no-such.cedarschema",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--policy examples/policy.cedar: this toolgate was built without Cedar"),
        "{stderr}"
    );
}
