//! `toolgate demo`: the gateway's guarantees shown end to end in one command, with no setup.
//!
//! [`run`] starts a [demo upstream](crate::demo_upstream) over TLS with a generated
//! certificate, pins its key in a generated catalog (written to a temporary directory), runs the
//! gateway in-process on `127.0.0.1`, and acts as an MCP client over HTTP: it lists the tools,
//! makes an allowed call, rug-pulls one description (that tool is denied with
//! `definition_mismatch`, another tool still works), puts an impostor key at the pinned URL
//! (`identity_mismatch`, and the impostor receives no application bytes), and verifies the
//! audit chain. Each decision is printed as it happens.
//!
//! [`GatewayClient`] is the small MCP-over-HTTP client it uses; the end-to-end tests use it too.

mod catalog;
mod client;
mod script;

pub use self::catalog::{observe_tools, pinned_entry};
pub use self::client::{ClientError, Exchange, GatewayClient};
pub use self::script::{DemoCheck, DemoError, DemoReport, run};
