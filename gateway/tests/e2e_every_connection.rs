//! Every connection is a full handshake through the pinning verifier (docs/design.md §3), against an
//! upstream that issues session tickets and closes each connection after one answer; the
//! identity recorded for a call is the one of the connection that carried it, with the pin it
//! matched.

use std::sync::Arc;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate::mcp::ProtocolVersion;
use toolgate_testkit::{DemoIdentity, DemoUpstream, DemoUpstreamConfig};

use crate::e2e_support::{
    Harness, ServeProcess, Setup, assert_refused_in_the_handshake, call_entries, run, temp_dir,
};

/// An ordinary rustls client (resumption on, as rustls' default is) trusting the demo CA: what
/// the gateway would be without `server_identity::client_config`.
fn resuming_client(identity: &DemoIdentity) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(identity.ca_der().clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// One HTTP exchange over a new TLS connection (reading to the end, which also takes in the
/// session tickets the server sends after its handshake).
async fn one_exchange(connector: &tokio_rustls::TlsConnector, address: std::net::SocketAddr) {
    let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    tls.write_all(b"GET /elsewhere HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    assert!(answer.starts_with(b"HTTP/1.1 404"), "{answer:?}");
}

#[test]
fn n_calls_are_n_full_handshakes_and_a_new_key_behind_old_tickets_is_refused() {
    run(async {
        let mut setup = Setup::new();
        setup.upstream.close_after_answer(true);
        // No notification stream, whose long-lived connection would make the counts vary.
        setup.upstream_options.listen_for_notifications = false;
        let harness = Harness::start(setup).await;
        let controls = harness.upstream.controls();

        // The upstream does resume sessions: an ordinary client resumes its second connection.
        let ordinary = resuming_client(harness.upstream.identity());
        one_exchange(&ordinary, harness.upstream.address()).await;
        one_exchange(&ordinary, harness.upstream.address()).await;
        assert_eq!(controls.handshakes_resumed(), 1);

        let upstream_client = harness.network_upstream();
        let handshakes_before = controls.handshakes_completed();
        let made_before = upstream_client.connections_made();
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        const CALLS: u64 = 5;
        for index in 0..CALLS {
            let answer = client
                .call_tool("demo.echo", json!({"text": index.to_string()}))
                .await
                .unwrap();
            assert!(answer.is_ok(), "{answer:?}");
        }
        // Per call: the connection the call goes on, and one for the listing; before the first,
        // one for server/discover. Each a new connection (the upstream closed the last), each a
        // full handshake the gateway's verifier ran on.
        let made = upstream_client.connections_made() - made_before;
        assert_eq!(made, 2 * CALLS + 1);
        assert_eq!(controls.handshakes_completed() - handshakes_before, made);
        assert_eq!(
            controls.handshakes_resumed(),
            1,
            "the gateway resumed a session"
        );

        // The same server, the same ticket keys, another key: the next call is refused in the
        // handshake, before a single application byte.
        let new_key = DemoIdentity::generate().unwrap();
        controls.present_identity(&new_key).unwrap();
        assert_refused_in_the_handshake(&mut client, controls).await;
        assert_eq!(controls.handshakes_resumed(), 1);

        let calls = call_entries(&harness.audit_entries());
        let last = calls.last().unwrap();
        assert_eq!(last["decision"], "identity_mismatch");
        assert_eq!(
            last["identity"]["fingerprints"],
            json!([new_key.spki_fingerprint().to_string()])
        );
        // Every allowed call names the key its own connection presented, and the primary pin.
        let pinned = harness.upstream.spki_fingerprint().to_string();
        let allowed: Vec<_> = calls
            .iter()
            .filter(|entry| entry["decision"] == "allowed")
            .collect();
        assert_eq!(allowed.len() as u64, CALLS);
        for entry in allowed {
            assert_eq!(entry["identity"]["fingerprints"][0], pinned.as_str());
            assert_eq!(entry["identity"]["pin"], "primary");
            assert_eq!(entry["identity"]["pinned_backup"], json!(null));
        }
        harness.stop().await;
    });
}

/// A gateway pinning `demo.echo` to a primary key and a backup, in front of an upstream that
/// presents the backup (a rotation under way); `adjust` sets the gateway's options. Returns the
/// primary, the backup and the running harness.
async fn presenting_the_backup(
    adjust: impl FnOnce(&mut Setup),
) -> (DemoIdentity, DemoIdentity, Harness) {
    let primary = DemoIdentity::generate().unwrap();
    let backup = DemoIdentity::generate().unwrap();
    let mut config = DemoUpstreamConfig::new();
    config.identity(backup.clone());
    let upstream = DemoUpstream::start(&config).await.unwrap();
    let mut setup = Setup::new();
    setup.pinned = vec![("demo.echo".to_owned(), "echo".to_owned())];
    adjust(&mut setup);
    setup.server = Some(json!({
        "url": upstream.url(),
        "tls_fingerprint": primary.spki_fingerprint().to_string(),
        "backup_fingerprints": [backup.spki_fingerprint().to_string()],
        "rotation_mode": "key-pinned",
        "tls_trust": "pin",
    }));
    (primary, backup, Harness::start_with(upstream, setup).await)
}

#[test]
fn the_audit_names_the_connection_that_carried_the_call_and_a_backup_pin_it_matched() {
    run(async {
        let (primary, backup, harness) = presenting_the_backup(|setup| {
            // One idle connection kept: the next call's own connection comes from the pool,
            // its listing's is new.
            setup.upstream_options.max_idle_connections = 1;
            setup.upstream_options.listen_for_notifications = false;
        })
        .await;
        let controls = harness.upstream.controls();
        let mut client = harness.client(ProtocolVersion::V2026_07_28).await;
        let answer = client.call_tool("demo.echo", json!({"text": "a"})).await;
        assert!(answer.unwrap().is_ok());

        // The rotation finishes: new connections present the primary key. The call goes on the
        // idle (backup) connection; its listing on a new (primary) one, the pool's newest.
        controls.present_identity(&primary).unwrap();
        let answer = client.call_tool("demo.echo", json!({"text": "b"})).await;
        assert!(answer.unwrap().is_ok());
        let upstream_client = harness.network_upstream();
        let newest = upstream_client.observed_identity().unwrap();
        assert_eq!(newest.spki_sha256, Some(primary.spki_fingerprint()));

        let allowed: Vec<_> = call_entries(&harness.audit_entries())
            .into_iter()
            .filter(|entry| entry["decision"] == "allowed")
            .collect();
        assert_eq!(allowed.len(), 2);
        let backup_text = backup.spki_fingerprint().to_string();
        for entry in &allowed {
            assert_eq!(entry["identity"]["fingerprints"][0], backup_text.as_str());
            assert_eq!(entry["identity"]["pin"], "backup");
            assert_eq!(entry["identity"]["pinned_backup"], backup_text.as_str());
        }
        harness.stop().await;
    });
}

/// A backup pin matched is a rotation under way: `toolgate serve` says so at warn, naming the
/// upstream and the backup, so that the operator updates the catalog's primary.
#[test]
fn serve_warns_when_the_upstream_presents_a_backup_pin() {
    run(async {
        let (_, backup, harness) = presenting_the_backup(|_| {}).await;
        let catalog_json = harness.catalog_json.clone();
        let (upstream, _, _) = harness.stop().await;
        let dir = temp_dir("backup-warn");
        let catalog = dir.join("catalog.json");
        std::fs::write(&catalog, catalog_json.to_string()).unwrap();
        let mut serve = ServeProcess::spawn(&catalog, &dir.join("audit.jsonl"), &[]);
        let mut client = serve.connect(ProtocolVersion::V2025_11_25).await;
        let answer = client.call_tool("demo.echo", json!({"text": "a"})).await;
        assert!(answer.unwrap().is_ok());

        let (code, stderr) = serve.terminate().await;
        assert_eq!(code, 0, "{stderr}");
        let warned: Vec<&str> = stderr
            .lines()
            .filter(|line| line.contains("presented a backup fingerprint"))
            .collect();
        assert!(!warned.is_empty(), "{stderr}");
        for line in warned {
            assert!(line.contains("WARN"), "{line}");
            assert!(
                line.contains(
                    "the upstream presented a backup fingerprint, not the primary \
                     tls_fingerprint; update the catalog's primary once the rotation is complete"
                ),
                "{line}"
            );
            assert!(
                line.contains(&format!("upstream={}", upstream.url())),
                "{line}"
            );
            assert!(
                line.contains(&format!("backup={}", backup.spki_fingerprint())),
                "{line}"
            );
        }
        drop(upstream);
    });
}
