//! The MCP gateway that pins every tool to one upstream server identity and one approved
//! definition, and refuses any call where either is not the one that was approved.
//!
//! The `toolgate` program is a thin command line over this library and the workspace's other
//! crates. The pieces: [`upstream`] speaks MCP Streamable HTTP to a pinned upstream;
//! [`definition_check`] compares live definitions with approved digests; [`audit`] keeps the
//! hash-chained decision log; [`router`] runs the `tools/call` steps in order; [`server`] serves
//! MCP clients over HTTP and stdio; [`demo`] and [`demo_upstream`] make the one-command demo.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod audit;
pub mod definition_check;
pub mod demo;
pub mod demo_upstream;
pub mod mcp;
pub mod router;
pub mod server;
pub mod upstream;
