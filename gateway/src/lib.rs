//! The MCP gateway that pins every tool to one upstream server identity and one approved
//! definition, and refuses any call where either is not the one that was approved.
//!
//! The `toolgate` program is a thin command line over this library and the workspace's other
//! crates. The pieces: [`upstream`] speaks MCP Streamable HTTP to a pinned upstream; [`local`]
//! runs a local (stdio) upstream pinned by the digests of what it runs;
//! [`definition_check`] compares live definitions with approved digests; [`audit`] keeps the
//! hash-chained decision log; [`denial`] is the one vocabulary of a refusal (reason, code, HTTP
//! status); [`router`] runs the `tools/call` steps in order; [`server`] serves MCP clients over
//! HTTP and stdio; [`mcp`] is the wire vocabulary (the `toolgate-mcp` crate).
//!
//! # Example
//!
//! Pin a running upstream's key and one tool's definition in a catalog, serve the gateway, call
//! the tool, then change its description upstream (a rug-pull): the next call is denied. The
//! upstream and the client are the test harness of the `toolgate-testkit` crate (a
//! dev-dependency here; not part of this library).
//!
//! ```
//! use std::sync::Arc;
//!
//! use catalog_store::Catalog;
//! use toolgate::audit::AuditLog;
//! use toolgate::upstream::observe_tools;
//! use toolgate_testkit::{GatewayClient, pinned_entry};
//! use toolgate_testkit::{DemoUpstream, DemoUpstreamConfig};
//! use toolgate::mcp::ProtocolVersion;
//! use toolgate::router::{Router, RouterOptions};
//! use toolgate::server::{Gateway, MCP_PATH, ServerOptions};
//! use serde_json::json;
//! use server_identity::rustls::RootCertStore;
//!
//! # let runtime = tokio::runtime::Runtime::new()?;
//! # runtime.block_on(async {
//! // An MCP server over TLS (a generated certificate) and what it serves now.
//! let upstream = DemoUpstream::start(&DemoUpstreamConfig::new()).await?;
//! let pin = upstream.spki_fingerprint();
//! let served = observe_tools(&upstream.url().parse()?, &pin).await?;
//! let echo = served.iter().find(|tool| tool["name"] == "echo").ok_or("no echo tool")?;
//!
//! // The catalog: `demo.echo` is the upstream's `echo`, on this key, with this definition.
//! let entry = pinned_entry("demo.echo", echo, upstream.url(), &pin)?;
//! let catalog = Catalog::from_slice(&serde_json::to_vec(&[entry])?)?;
//! let log = std::env::temp_dir().join(format!("toolgate-doc-{}.jsonl", std::process::id()));
//! # let _ = std::fs::remove_file(&log);
//! let audit = Arc::new(AuditLog::open(&log, catalog.measurement())?);
//! let options = RouterOptions::new(Arc::new(RootCertStore::empty()));
//! let router = Arc::new(Router::new(catalog, options, audit)?);
//!
//! // The gateway on loopback, and an MCP client of it.
//! let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
//! let address = listener.local_addr()?;
//! let gateway = Gateway::new(router, ServerOptions::for_listen_address(address));
//! tokio::spawn(gateway.serve_http(listener, None, std::future::pending()));
//! let mut client = GatewayClient::new(&format!("http://{address}{MCP_PATH}"), ProtocolVersion::V2025_11_25);
//! client.connect().await?;
//!
//! let allowed = client.call_tool("demo.echo", json!({"text": "hi"})).await?;
//! assert!(allowed.is_ok());
//!
//! // Rug-pull: the upstream changes the description it serves. The definition no longer
//! // hashes to the approved digest, so the call is refused before it is forwarded.
//! upstream.controls().set_description("echo", "Echo, and send the text elsewhere too.");
//! let denied = client.call_tool("demo.echo", json!({"text": "hi"})).await?;
//! let error = denied.err().ok_or("the changed tool was not denied")?;
//! assert_eq!(error.code, -32002);
//! assert_eq!(error.data.as_ref().map(|data| &data["reason"]), Some(&json!("definition_mismatch")));
//! # let _ = std::fs::remove_file(&log);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The `toolgate` program wraps this as `toolgate serve` (see the repository README for its
//! options and the denial codes) and `toolgate demo`.
//!
//! # Features
//!
//! - `demo` (default): the program's `demo` and `demo-upstream` subcommands, which run the
//!   test upstream of `toolgate-testkit` (and so build rcgen). The library does not use it; turn
//!   default features off to depend on the gateway alone.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod audit;
pub mod auth;
pub mod definition_check;
pub mod denial;
pub mod local;
pub mod metrics;
pub use toolgate_mcp as mcp;
pub mod router;
pub mod server;
pub mod upstream;
