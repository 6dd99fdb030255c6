//! Why a `tools/call` was refused: the reason strings of seed 003 §4 and DESIGN.md §5, their
//! JSON-RPC error codes, and the error a client receives.

use std::fmt;

pub use crate::audit::DenialReason;

use jcs_digest::Digest;
use serde_json::{Map, Value};

use crate::mcp::ErrorObject;

/// The JSON-RPC error codes of the gateway's denials. `error.data.reason` carries the reason
/// string; the code lets a client tell them apart without reading it.
pub mod codes {
    /// `tool_not_in_catalog`: MCP's code for an unknown tool (invalid params).
    pub const TOOL_NOT_IN_CATALOG: i64 = -32602;
    /// `identity_mismatch`: the upstream did not present the pinned identity.
    pub const IDENTITY_MISMATCH: i64 = -32001;
    /// `definition_mismatch`: the live definition does not hash to the approved digest, or the
    /// upstream no longer lists the tool.
    pub const DEFINITION_MISMATCH: i64 = -32002;
    /// `upstream_unavailable`: the upstream could not be reached or did not answer in time.
    pub const UPSTREAM_UNAVAILABLE: i64 = -32003;
    /// `upstream_error`: the upstream answered, but not with a usable MCP response.
    pub const UPSTREAM_ERROR: i64 = -32004;
}

/// The JSON-RPC error code of a denial reason ([`codes`]).
pub const fn error_code(reason: DenialReason) -> i64 {
    match reason {
        DenialReason::ToolNotInCatalog => codes::TOOL_NOT_IN_CATALOG,
        DenialReason::IdentityMismatch => codes::IDENTITY_MISMATCH,
        DenialReason::DefinitionMismatch => codes::DEFINITION_MISMATCH,
        DenialReason::UpstreamUnavailable => codes::UPSTREAM_UNAVAILABLE,
        DenialReason::UpstreamError => codes::UPSTREAM_ERROR,
    }
}

/// A refused `tools/call`: the reason, what was called, and what was expected and observed.
///
/// `Display` is the message the client receives: which tool, which server, expected against
/// observed, and what an operator can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Denial {
    /// Why.
    pub reason: DenialReason,
    /// The tool name the client called.
    pub tool: String,
    /// The upstream URL the tool is bound to (absent for `tool_not_in_catalog`).
    pub upstream: Option<String>,
    /// The approved definition digest (absent for `tool_not_in_catalog`).
    pub expected_definition: Option<Digest>,
    /// The live definition digest, when one was computed (a drift, or an allowed call).
    pub observed_definition: Option<Digest>,
    /// The human-readable explanation.
    pub message: String,
}

impl Denial {
    /// The JSON-RPC error a client receives: the reason's code, the message, and
    /// `data = {"reason", "tool", "upstream"?, "expected_definition"?, "observed_definition"?}`.
    pub fn to_error_object(&self) -> ErrorObject {
        let mut data = Map::new();
        data.insert("reason".into(), Value::from(self.reason.as_str()));
        data.insert("tool".into(), Value::from(self.tool.as_str()));
        if let Some(upstream) = &self.upstream {
            data.insert("upstream".into(), Value::from(upstream.as_str()));
        }
        if let Some(expected) = &self.expected_definition {
            data.insert(
                "expected_definition".into(),
                Value::from(expected.to_string()),
            );
        }
        if let Some(observed) = &self.observed_definition {
            data.insert(
                "observed_definition".into(),
                Value::from(observed.to_string()),
            );
        }
        ErrorObject::new(error_code(self.reason), self.message.clone())
            .with_data(Value::Object(data))
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Denial {}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn reasons_have_distinct_strings_and_codes() {
        let strings: Vec<_> = DenialReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            strings,
            [
                "tool_not_in_catalog",
                "identity_mismatch",
                "definition_mismatch",
                "upstream_unavailable",
                "upstream_error"
            ]
        );
        let codes: Vec<_> = DenialReason::ALL.iter().map(|r| error_code(*r)).collect();
        assert_eq!(codes, [-32602, -32001, -32002, -32003, -32004]);
    }

    #[test]
    fn the_error_object_carries_the_reason_in_data() {
        let denial = Denial {
            reason: DenialReason::ToolNotInCatalog,
            tool: "x".into(),
            upstream: None,
            expected_definition: None,
            observed_definition: None,
            message: "m".into(),
        };
        let error = denial.to_error_object();
        assert_eq!(error.code, -32602);
        assert_eq!(
            error.data,
            Some(serde_json::json!({"reason": "tool_not_in_catalog", "tool": "x"}))
        );
    }
}
