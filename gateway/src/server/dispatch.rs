//! The methods the gateway answers, shared by the HTTP and stdio transports.
//!
//! The transports decide the exchange (session generation with a negotiated version, or a
//! stateless 2026-07-28 request whose envelope they already checked); this module turns one
//! request into one result or one JSON-RPC error.

use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use super::listing::ToolListing;
use crate::auth::Principal;
use crate::denial::DenialReason;
use crate::mcp::{
    ErrorObject, Generation, META_SERVER_INFO, ProtocolVersion, RawJson, Request, error_codes,
    methods,
};
use crate::router::ToolCall;

use super::Gateway;

/// How the current request reached the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exchange {
    /// Inside a session that `initialize` opened with this version (or before one: stdio).
    Session(ProtocolVersion),
    /// A self-contained 2026-07-28 request whose `params._meta` envelope has been checked.
    Stateless(ProtocolVersion),
}

/// A request answered with an error: the error, and the denial reason when it is a denial (its
/// HTTP status is the reason's, [`DenialReason::http_status`], not the code's).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) error: ErrorObject,
    pub(crate) denial: Option<DenialReason>,
}

impl From<ErrorObject> for Refusal {
    fn from(error: ErrorObject) -> Refusal {
        Refusal {
            error,
            denial: None,
        }
    }
}

/// The server's name and version, as `initialize` and `server/discover` report them.
pub(crate) fn server_info() -> Value {
    json!({"name": "toolgate", "title": "toolgate MCP gateway", "version": env!("CARGO_PKG_VERSION")})
}

const INSTRUCTIONS: &str = "A pinning MCP gateway: every tool is bound to one upstream server identity \
     and one approved definition; a call is refused (error.data.reason) when either differs.";

fn capabilities() -> Value {
    // The catalog is fixed for the life of the process, so the list never changes.
    json!({"tools": {"listChanged": false}})
}

/// The `initialize` result and the version it settles on: the client's version when the gateway
/// speaks it (session generation), otherwise the newest session version (the client then
/// decides whether it can continue).
pub(crate) fn initialize(params: Option<&Map<String, Value>>) -> (ProtocolVersion, Value) {
    let requested = params
        .and_then(|params| params.get("protocolVersion"))
        .and_then(Value::as_str);
    let version = requested
        .and_then(ProtocolVersion::from_wire)
        .filter(|version| version.generation() == crate::mcp::Generation::Session)
        .unwrap_or(ProtocolVersion::LATEST_SESSION);
    let result = json!({
        "protocolVersion": version.as_str(),
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    });
    (version, result)
}

/// Answers one request (never `initialize`, which the transports handle because it opens a
/// session).
///
/// `session` is the client's `Mcp-Session-Id`, for the audit log.
pub(crate) async fn answer(
    gateway: &Gateway,
    exchange: Exchange,
    request: &Request,
    session: Option<&str>,
    principal: &Principal,
) -> Result<RawJson, Refusal> {
    let params = request.params.as_ref();
    let protocol = match exchange {
        Exchange::Session(version) | Exchange::Stateless(version) => version.as_str(),
    };
    let result: RawJson = match request.method.as_str() {
        methods::PING => Ok(json!({}).into()),
        // Under a policy, only what this principal may call (docs/design.md §7).
        methods::TOOLS_LIST => {
            let served = gateway.served();
            match served.router.listed_tools_for(principal, protocol) {
                None => served.listing.page(params),
                Some(tools) => {
                    let measurement = served.router.catalog().measurement().digest().to_string();
                    let tag = measurement.strip_prefix("sha256:").unwrap_or(&measurement);
                    ToolListing::new(tools, gateway.options.page_size, tag).page(params)
                }
            }
            .map(RawJson::from)
            .map_err(Refusal::from)
        }
        // The upstream's result, as it wrote it.
        methods::TOOLS_CALL => call_tool(gateway, request, session, principal, protocol).await,
        methods::SERVER_DISCOVER if matches!(exchange, Exchange::Stateless(_)) => {
            Ok(discover().into())
        }
        methods::INITIALIZE => Err(ErrorObject::new(
            error_codes::INVALID_REQUEST,
            "initialize is not valid here: a 2026-07-28 request carries its protocol version in \
             params._meta; use server/discover, or send initialize without that envelope",
        )
        .into()),
        other => Err(method_not_found(other).into()),
    }?;
    Ok(match exchange {
        Exchange::Session(_) => result,
        Exchange::Stateless(_) => stamp_stateless(&request.method, result),
    })
}

/// The versions the gateway serves, for the messages that refuse another.
pub(crate) fn supported_versions() -> String {
    let session: Vec<&str> = ProtocolVersion::of_generation(Generation::Session)
        .map(ProtocolVersion::as_str)
        .collect();
    let stateless: Vec<&str> = ProtocolVersion::of_generation(Generation::Stateless)
        .map(ProtocolVersion::as_str)
        .collect();
    format!(
        "this gateway supports {} (with a session: send initialize first) and {} (stateless: \
         params._meta carries the version)",
        session.join(", "),
        stateless.join(", ")
    )
}

/// -32022 for a `params._meta` protocol version the gateway does not serve: the message names
/// every served version, `data` lists the stateless ones (what a 2026-07-28 client may retry).
pub(crate) fn unsupported_version(requested: &Value) -> ErrorObject {
    let shown = match requested {
        Value::String(text) => format!("{:?}", text.chars().take(100).collect::<String>()),
        other => jcs_digest::order::to_string(other)
            .chars()
            .take(100)
            .collect(),
    };
    let stateless: Vec<&str> = ProtocolVersion::of_generation(Generation::Stateless)
        .map(ProtocolVersion::as_str)
        .collect();
    ErrorObject::new(
        error_codes::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version {shown}: {}",
            supported_versions()
        ),
    )
    .with_data(json!({"supported": stateless, "requested": requested}))
}

pub(crate) fn method_not_found(method: &str) -> ErrorObject {
    let shown: String = method.chars().take(100).collect();
    ErrorObject::new(
        error_codes::METHOD_NOT_FOUND,
        format!(
            "Method not found: {shown:?}; this gateway offers tools only \
             (initialize, ping, server/discover, tools/list, tools/call)"
        ),
    )
}

fn discover() -> Value {
    let mut meta = Map::new();
    meta.insert(META_SERVER_INFO.into(), server_info());
    json!({
        "supportedVersions": [ProtocolVersion::V2026_07_28.as_str()],
        "capabilities": capabilities(),
        "instructions": INSTRUCTIONS,
        "_meta": Value::Object(meta),
    })
}

/// 2026-07-28 results carry `resultType` (required of servers at that version), and listings
/// carry the cache hints `cacheScope` and `ttlMs`. An upstream of the session generation sends
/// none of them, so they are added when absent; nothing present is changed, and no byte of an
/// upstream's result is rewritten ([`RawJson::with_member_if_absent`]).
fn stamp_stateless(method: &str, result: RawJson) -> RawJson {
    // Made once, not per answer.
    static COMPLETE: LazyLock<Value> = LazyLock::new(|| Value::from("complete"));
    static PRIVATE: LazyLock<Value> = LazyLock::new(|| Value::from("private"));
    let mut result = result.with_member_if_absent("resultType", &COMPLETE);
    if method == methods::TOOLS_LIST || method == methods::SERVER_DISCOVER {
        result = result
            .with_member_if_absent("cacheScope", &PRIVATE)
            .with_member_if_absent("ttlMs", &Value::from(0));
    }
    result
}

async fn call_tool(
    gateway: &Gateway,
    request: &Request,
    session: Option<&str>,
    principal: &Principal,
    protocol: &str,
) -> Result<RawJson, Refusal> {
    let Some(params) = request.params.as_ref() else {
        return Err(invalid_params("tools/call needs params with a \"name\"").into());
    };
    let Some(Value::String(name)) = params.get("name") else {
        return Err(
            invalid_params("tools/call needs params.name, the tool's name as a string").into(),
        );
    };
    // Carried as the client wrote them (well-formed, not rewritten: docs/design.md §5).
    let arguments = match &request.arguments {
        None => None,
        Some(raw) if raw.as_str() == "null" => None,
        Some(raw) if raw.is_object() => Some(raw.clone()),
        Some(_) => {
            return Err(invalid_params("tools/call params.arguments must be an object").into());
        }
    };
    let meta = match params.get("_meta") {
        None | Some(Value::Null) => None,
        Some(Value::Object(meta)) => {
            // The reserved `io.modelcontextprotocol/*` keys describe this client's exchange with
            // the gateway (version, capabilities); the upstream exchange carries its own.
            let passed: Map<String, Value> = meta
                .iter()
                .filter(|(key, _)| !key.starts_with("io.modelcontextprotocol/"))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            (!passed.is_empty()).then_some(passed)
        }
        Some(_) => return Err(invalid_params("tools/call params._meta must be an object").into()),
    };
    let mut call = ToolCall::new(name.clone());
    call.arguments = arguments;
    call.meta = meta;
    call.session_id = session.map(str::to_owned);
    call.request_id = Some(request.id.to_value());
    call.principal = principal.clone();
    call.protocol = Some(protocol.to_owned());
    gateway
        .router()
        .call_tool(call)
        .await
        .map_err(|failure| Refusal {
            error: failure.to_error_object(),
            denial: failure.denial().map(|denial| denial.reason),
        })
}

fn invalid_params(message: &str) -> ErrorObject {
    ErrorObject::new(
        error_codes::INVALID_PARAMS,
        format!("Invalid params: {message}"),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn initialize_echoes_a_supported_session_version_and_falls_back_to_the_newest() {
        for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
            let mut params = Map::new();
            params.insert("protocolVersion".into(), version.into());
            let (negotiated, result) = initialize(Some(&params));
            assert_eq!(negotiated.as_str(), version);
            assert_eq!(result["protocolVersion"], version);
        }
        for version in [json!("2024-11-05"), json!("2026-07-28"), json!(7)] {
            let mut params = Map::new();
            params.insert("protocolVersion".into(), version);
            let (negotiated, result) = initialize(Some(&params));
            assert_eq!(negotiated, ProtocolVersion::V2025_11_25);
            assert_eq!(result["protocolVersion"], "2025-11-25");
            assert_eq!(
                result["capabilities"],
                json!({"tools": {"listChanged": false}})
            );
        }
    }

    #[test]
    fn stateless_results_gain_result_type_and_keep_everything_else() {
        let raw = |text: &str| RawJson::from_slice(text.as_bytes()).unwrap();
        let stamped = stamp_stateless("tools/call", raw(r#"{"content": [], "isError": true}"#));
        assert_eq!(
            stamped.as_str(),
            r#"{"resultType":"complete","content": [], "isError": true}"#
        );
        let kept = stamp_stateless("tools/call", raw(r#"{"content":[],"resultType":"other"}"#));
        assert_eq!(kept.as_str(), r#"{"content":[],"resultType":"other"}"#);
        let listed = stamp_stateless("tools/list", raw(r#"{"tools":[]}"#));
        assert_eq!(
            listed.to_value().unwrap(),
            json!({"tools": [], "resultType": "complete", "cacheScope": "private", "ttlMs": 0})
        );
        // An upstream's numbers stay as written.
        let call = stamp_stateless("tools/call", raw(r#"{"structuredContent":{"n":1E+2}}"#));
        assert_eq!(
            call.as_str(),
            r#"{"resultType":"complete","structuredContent":{"n":1E+2}}"#
        );
    }
}
