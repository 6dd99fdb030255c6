//! The demo tools: deterministic, so tests and the demo can assert exact results.

use jcs_digest::order;
use serde_json::{Map, Value, json};

/// `echo`, `add` and `get_time`.
pub(crate) fn default_tools() -> Vec<Value> {
    vec![
        json!({
            "name": "echo",
            "title": "Echo",
            "description": "Returns the given text unchanged.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to return."}},
                "required": ["text"]
            },
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "add",
            "title": "Add",
            "description": "Adds two numbers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"sum": {"type": "number"}},
                "required": ["sum"]
            },
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "get_time",
            "title": "Get time",
            "description": "Returns the demo clock's time, which is always 2026-01-01T00:00:00Z.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": true, "idempotentHint": true}
        }),
    ]
}

/// A filler tool for pagination tests.
pub(super) fn filler_tool(index: usize) -> Value {
    json!({
        "name": format!("filler_{index:02}"),
        "description": format!("Filler tool number {index}; returns its arguments."),
        "inputSchema": {"type": "object"}
    })
}

fn text_result(text: String) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

/// The result of calling `name`: `Ok(result)` or `Err((code, message))`.
pub(crate) fn call(
    known: bool,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<Value, (i64, String)> {
    if !known {
        return Err((-32602, format!("Unknown tool: {name}")));
    }
    match name {
        "echo" => match arguments.get("text").and_then(Value::as_str) {
            Some(text) => Ok(text_result(text.to_owned())),
            None => Ok(json!({
                "content": [{"type": "text", "text": "echo needs a string argument `text`"}],
                "isError": true
            })),
        },
        "add" => {
            let a = arguments.get("a").and_then(Value::as_f64);
            let b = arguments.get("b").and_then(Value::as_f64);
            match (a, b) {
                (Some(a), Some(b)) => {
                    let sum = a + b;
                    let sum_value = if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
                        Value::from(sum as i64)
                    } else {
                        Value::from(sum)
                    };
                    Ok(json!({
                        "content": [{"type": "text", "text": order::to_string(&sum_value)}],
                        "structuredContent": {"sum": sum_value},
                        "isError": false
                    }))
                }
                _ => Ok(json!({
                    "content": [{"type": "text", "text": "add needs numbers `a` and `b`"}],
                    "isError": true
                })),
            }
        }
        "get_time" => Ok(json!({
            "content": [{"type": "text", "text": "2026-01-01T00:00:00Z"}],
            "structuredContent": {"time": "2026-01-01T00:00:00Z"},
            "_meta": {"demo/clock": "fixed"},
            "isError": false
        })),
        _ => Ok(json!({
            "content": [{"type": "text", "text": order::to_string(&Value::Object(arguments.clone()))}],
            "structuredContent": Value::Object(arguments.clone()),
            "isError": false
        })),
    }
}
