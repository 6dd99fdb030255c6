//! Pass-through data is not rewritten (docs/design.md §5): tool-call arguments and results are only
//! checked for well-formedness and travel as the bytes received, in both client generations
//! and whether the upstream answers in JSON or SSE; definitions stay strict.

use serde_json::json;
use toolgate::mcp::{Message, ProtocolVersion, Response, ResponsePayload};
use toolgate_testkit::ResponseMode;

use crate::e2e_support::{Harness, Setup, call_entries, denial, run};

/// Numbers no float or i64 holds exactly, in forms a re-serialization would change.
const RESULT: &str = r#"{"structuredContent":{"big":9007199254740993,"e":1E+2,"z":-0,"huge":1e400,"b":1,"a":2},"content":[{"type":"text","text":"\u0041 big"}]}"#;
const ARGUMENTS: &str = r#"{"n": 9007199254740993, "x": 1E+2, "z": -0, "text": "\u00e9"}"#;

#[test]
fn results_and_arguments_arrive_byte_identical_in_both_generations_over_json_and_sse() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let controls = harness.upstream.controls();
        assert!(controls.set_call_result(Some(RESULT)));
        for mode in [ResponseMode::Json, ResponseMode::Sse] {
            controls.set_response_mode(mode);
            for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
                let mut client = harness.client(version).await;
                let exchange = client.call_tool_raw("demo.echo", ARGUMENTS).await.unwrap();
                let body = String::from_utf8(exchange.body.to_vec()).unwrap();
                let Ok(Message::Response(Response {
                    id: Some(id),
                    payload: ResponsePayload::Result(_),
                })) = Message::from_slice(body.as_bytes())
                else {
                    panic!("{mode:?} {version:?}: not a result: {body}");
                };
                // 2026-07-28 results carry resultType, added in front; nothing else changes.
                let result = match version {
                    ProtocolVersion::V2026_07_28 => {
                        format!(r#"{{"resultType":"complete",{}"#, &RESULT[1..])
                    }
                    _ => RESULT.to_owned(),
                };
                assert_eq!(
                    body,
                    format!(r#"{{"id":{id},"jsonrpc":"2.0","result":{result}}}"#),
                    "{mode:?} {version:?}"
                );
                assert_eq!(controls.last_arguments().as_deref(), Some(ARGUMENTS));
            }
        }
        // The arguments cannot be canonicalized (RFC 8785 has no 2^53 + 1): the call is
        // allowed, and its entry has no argument digest.
        let calls = call_entries(&harness.audit_entries());
        assert_eq!(calls.len(), 4);
        for entry in &calls {
            assert_eq!(entry["decision"], "allowed");
            assert_eq!(entry["arguments_digest"], json!(null));
        }
        harness.stop().await;
    });
}

#[test]
fn ill_formed_arguments_are_refused_and_definitions_stay_strict() {
    run(async {
        let harness = Harness::start(Setup::new()).await;
        let controls = harness.upstream.controls();
        let mut client = harness.client(ProtocolVersion::V2025_11_25).await;
        // A duplicate member in the arguments: a parse error, nothing forwarded.
        let exchange = client
            .call_tool_raw("demo.echo", r#"{"text": "a", "text": "b"}"#)
            .await
            .unwrap();
        let error = exchange.response.unwrap().unwrap_err();
        assert_eq!(error.code, -32700);
        assert!(
            error.message.starts_with(
                "the message is not valid JSON: the member name \"text\" twice in one object at byte "
            ),
            "{}",
            error.message
        );
        assert_eq!(controls.method_count("tools/call"), 0);

        // A listing whose definition holds 2^53 + 1 is refused as the strict reader refuses it:
        // definitions are hashed, so they are never read loosely.
        controls.set_tools(vec![json!({
            "name": "echo",
            "description": "Echoes.",
            "inputSchema": {"type": "object", "maximum": 9_007_199_254_740_993_u64},
        })]);
        let answer = client
            .call_tool("demo.echo", json!({"text": "a"}))
            .await
            .unwrap();
        assert_eq!(denial(&answer), (-32004, "upstream_error".to_owned()));
        let message = answer.unwrap_err().message;
        assert!(
            message
                .contains("sent a malformed answer to tools/list: the result is not strict JSON"),
            "{message}"
        );
        assert_eq!(controls.method_count("tools/call"), 0);
        harness.stop().await;
    });
}
