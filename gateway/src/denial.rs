//! The one vocabulary of a refused `tools/call` (docs/design.md §5, §7): for each reason, its
//! string, its JSON-RPC code, its HTTP status and the shape of the error a client receives.
//!
//! Every refusal is a [`DenialReason`] before it is anything else: the router builds a
//! [`Denial`] from it, the client-facing transports answer with [`Denial::to_error_object`] and
//! [`DenialReason::http_status`], and the audit log records [`DenialReason::as_str`] as the
//! entry's `decision`. The errors that cause a refusal each name theirs once, in this type:
//! `UpstreamError::reason` and `DefinitionCheckError::denial_reason`.
//!
//! | reason | code | HTTP status (2026-07-28) |
//! |---|---|---|
//! | `tool_not_in_catalog` | -32602 (MCP's code for an unknown tool) | 400 |
//! | `not_authorized` | -32005 | 200 |
//! | `identity_mismatch` | -32001 | 200 |
//! | `definition_mismatch` | -32002 | 200 |
//! | `upstream_unavailable` | -32003 | 200 |
//! | `upstream_error` | -32004 | 200 |
//!
//! In the session generation every JSON-RPC error is HTTP 200; the 2026-07-28 statuses follow
//! the Python reference's table (`mcp.shared.inbound.ERROR_CODE_HTTP_STATUS`: 400 for -32602,
//! 200 for codes it does not list).

use std::fmt;
use std::str::FromStr;

use http::StatusCode;
use jcs_digest::Digest;
use serde_json::{Map, Value};

use crate::mcp::ErrorObject;

/// The JSON-RPC error codes of the gateway's denials ([`DenialReason::code`]).
/// `error.data.reason` carries the reason string; the code lets a client tell them apart
/// without reading it.
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
    /// `not_authorized`: the caller may not call this tool (docs/design.md §7).
    pub const NOT_AUTHORIZED: i64 = -32005;
}

/// Why a call was denied (docs/design.md §5, §7): the `error.data.reason` a client receives, and the
/// `decision` the audit entry records.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DenialReason {
    /// The tool name is not in the catalog (seed 003 §4, step 2).
    ToolNotInCatalog,
    /// The caller is not allowed to call the tool (docs/design.md §7).
    NotAuthorized,
    /// The upstream did not present the pinned key, certificate or SPIFFE ID (step 8).
    IdentityMismatch,
    /// The live definition does not hash to the approved digest, or the tool is absent from the
    /// upstream's listing (step 10).
    DefinitionMismatch,
    /// The upstream could not be reached, or did not answer in time.
    UpstreamUnavailable,
    /// The upstream answered with a protocol error or a malformed response.
    UpstreamError,
}

impl DenialReason {
    /// Every reason, in the order of the routing steps.
    pub const ALL: [DenialReason; 6] = [
        DenialReason::ToolNotInCatalog,
        DenialReason::NotAuthorized,
        DenialReason::IdentityMismatch,
        DenialReason::DefinitionMismatch,
        DenialReason::UpstreamUnavailable,
        DenialReason::UpstreamError,
    ];

    /// The reason string: `tool_not_in_catalog`, `not_authorized`, `identity_mismatch`,
    /// `definition_mismatch`, `upstream_unavailable` or `upstream_error`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DenialReason::ToolNotInCatalog => "tool_not_in_catalog",
            DenialReason::NotAuthorized => "not_authorized",
            DenialReason::IdentityMismatch => "identity_mismatch",
            DenialReason::DefinitionMismatch => "definition_mismatch",
            DenialReason::UpstreamUnavailable => "upstream_unavailable",
            DenialReason::UpstreamError => "upstream_error",
        }
    }

    /// The JSON-RPC error code ([`codes`]).
    pub const fn code(self) -> i64 {
        match self {
            DenialReason::ToolNotInCatalog => codes::TOOL_NOT_IN_CATALOG,
            DenialReason::NotAuthorized => codes::NOT_AUTHORIZED,
            DenialReason::IdentityMismatch => codes::IDENTITY_MISMATCH,
            DenialReason::DefinitionMismatch => codes::DEFINITION_MISMATCH,
            DenialReason::UpstreamUnavailable => codes::UPSTREAM_UNAVAILABLE,
            DenialReason::UpstreamError => codes::UPSTREAM_ERROR,
        }
    }

    /// The HTTP status of the denial's response in the 2026-07-28 generation (the session
    /// generation answers every JSON-RPC error with 200).
    pub fn http_status(self) -> StatusCode {
        match self {
            DenialReason::ToolNotInCatalog => StatusCode::BAD_REQUEST,
            DenialReason::NotAuthorized
            | DenialReason::IdentityMismatch
            | DenialReason::DefinitionMismatch
            | DenialReason::UpstreamUnavailable
            | DenialReason::UpstreamError => StatusCode::OK,
        }
    }
}

/// A reason equals its string (`DenialReason::UpstreamError == "upstream_error"`), so that a
/// test or a log filter can compare with the text a client sees.
impl PartialEq<&str> for DenialReason {
    fn eq(&self, text: &&str) -> bool {
        self.as_str() == *text
    }
}

impl fmt::Display for DenialReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that is not a denial reason string.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown denial reason {0:?}; a reason is one of: {reasons}",
    reasons = DenialReason::ALL.map(DenialReason::as_str).join(", ")
)]
pub struct UnknownDenialReason(pub String);

impl FromStr for DenialReason {
    type Err = UnknownDenialReason;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        DenialReason::ALL
            .into_iter()
            .find(|reason| reason.as_str() == text)
            .ok_or_else(|| UnknownDenialReason(text.to_owned()))
    }
}

/// The JSON-RPC error code of a denial reason; the same as [`DenialReason::code`].
pub const fn error_code(reason: DenialReason) -> i64 {
    reason.code()
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
    /// A denial of `tool` for `reason` with `message`, naming no upstream or digests; fill
    /// those with struct update syntax.
    pub fn new(
        reason: DenialReason,
        tool: impl Into<String>,
        message: impl Into<String>,
    ) -> Denial {
        Denial {
            reason,
            tool: tool.into(),
            upstream: None,
            expected_definition: None,
            observed_definition: None,
            message: message.into(),
        }
    }

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
        ErrorObject::new(self.reason.code(), self.message.clone()).with_data(Value::Object(data))
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
    fn each_reason_has_one_string_code_and_status() {
        let table: Vec<(&str, i64, u16)> = DenialReason::ALL
            .iter()
            .map(|reason| {
                (
                    reason.as_str(),
                    reason.code(),
                    reason.http_status().as_u16(),
                )
            })
            .collect();
        assert_eq!(
            table,
            [
                ("tool_not_in_catalog", -32602, 400),
                ("not_authorized", -32005, 200),
                ("identity_mismatch", -32001, 200),
                ("definition_mismatch", -32002, 200),
                ("upstream_unavailable", -32003, 200),
                ("upstream_error", -32004, 200),
            ]
        );
        for reason in DenialReason::ALL {
            assert_eq!(reason.as_str().parse::<DenialReason>(), Ok(reason));
            assert_eq!(error_code(reason), reason.code());
        }
        assert_eq!(
            "denied".parse::<DenialReason>().unwrap_err().to_string(),
            "unknown denial reason \"denied\"; a reason is one of: tool_not_in_catalog, \
             not_authorized, identity_mismatch, definition_mismatch, upstream_unavailable, \
             upstream_error"
        );
    }

    #[test]
    fn an_upstream_failure_becomes_its_reason() {
        use crate::upstream::UpstreamError;
        let url = "https://127.0.0.1:1/mcp".to_owned();
        let cases = [
            (
                UpstreamError::InvalidUrl {
                    url: "http://x".into(),
                    detail: "the scheme must be https".into(),
                },
                DenialReason::UpstreamError,
            ),
            (
                UpstreamError::Connect {
                    url: url.clone(),
                    detail: "Connection refused (os error 111)".into(),
                },
                DenialReason::UpstreamUnavailable,
            ),
            (
                UpstreamError::Identity {
                    url,
                    error: server_identity::IdentityError::PinMismatch {
                        mode: server_identity::RotationMode::KeyPinned,
                        expected: server_identity::Fingerprint::of_spki(b"expected"),
                        backups: Vec::new(),
                        presented: server_identity::Fingerprint::of_spki(b"presented"),
                    },
                },
                DenialReason::IdentityMismatch,
            ),
        ];
        for (error, reason) in cases {
            assert_eq!(error.reason(), reason, "{error}");
            assert_eq!(error.reason(), reason.as_str());
        }
    }

    #[test]
    fn the_error_object_carries_the_reason_in_data() {
        let denial = Denial::new(DenialReason::ToolNotInCatalog, "x", "m");
        let error = denial.to_error_object();
        assert_eq!((error.code, error.message.as_str()), (-32602, "m"));
        assert_eq!(
            error.data,
            Some(serde_json::json!({"reason": "tool_not_in_catalog", "tool": "x"}))
        );
        let denied = Denial::new(DenialReason::NotAuthorized, "crm.query", "not yours");
        assert_eq!(denied.to_error_object().code, -32005);
        assert_eq!(denied.to_string(), "not yours");
    }
}
