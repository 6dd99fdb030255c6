//! A `tools/list` document digested tool by tool from its bytes, without a `Value` tree.
//!
//! The bytes are read once by [`jcs_digest::StreamReader`]: every tool of the `tools` array is
//! digested as it is read ([`StreamReader::tool_definition`]), and everything else is only
//! checked. The result is the one [`read_tools_document`] followed by
//! [`CatalogDigest::compute`](crate::CatalogDigest::compute) gives: the same digests and, for a
//! document that is not strict JSON, the same [`StrictJsonError`](jcs_digest::StrictJsonError).
//! A document of none of the accepted shapes (or a JSON-RPC error response) is then read again
//! by [`read_tools_document`], so that its error is the tree path's to the letter; those
//! documents have no digest, so reading them twice costs nothing that matters.

use jcs_digest::{JsonType, Profile, StreamReader, StreamedTool};

use crate::document::{DocumentError, read_tools_document};

/// Reads the tool definitions of a `tools/list` document in any of its three shapes and
/// digests each under `profile`, in array order.
///
/// Accepts and refuses exactly what [`read_tools_document`] does, with the same errors; an
/// element that is not an object is [`StreamedTool::NotAnObject`]. The digests are those of
/// [`jcs_digest::tool_definition_digest`] on the elements that document holds.
///
/// ```
/// use catalog_fold::stream_tools_document;
/// use jcs_digest::{Profile, StreamedTool, ToolName, parse_strict, tool_definition_digest};
///
/// let document = br#"{"tools": [{"name": "echo", "_meta": {"x": 1}}, 7]}"#;
/// let tools = stream_tools_document(document, Profile::Trace)?;
/// let expected = tool_definition_digest(&parse_strict(br#"{"name":"echo"}"#)?, Profile::Trace)?;
/// assert_eq!(
///     tools[0],
///     StreamedTool::Definition { name: ToolName::Text("echo".into()), digest: expected }
/// );
/// assert!(matches!(tools[1], StreamedTool::NotAnObject { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`DocumentError`], as [`read_tools_document`] gives it for the same bytes.
pub fn stream_tools_document(
    bytes: &[u8],
    profile: Profile,
) -> Result<Vec<StreamedTool>, DocumentError> {
    let mut reader = StreamReader::new(bytes);
    let found = match reader.peek() {
        Some(JsonType::Array) => Some(tools_array(&mut reader, profile)?),
        Some(JsonType::Object) => document_object(&mut reader, profile)?,
        _ => {
            reader.skip_value()?;
            None
        }
    };
    reader.finish()?;
    match found {
        Some(tools) => Ok(tools),
        None => tree_fallback(bytes, profile),
    }
}

/// The members of a top-level object that decide its shape.
#[derive(Default)]
struct Shape {
    /// `jsonrpc` is present, and whether it is the string `"2.0"`.
    jsonrpc: Option<bool>,
    error: bool,
    /// The `tools` array of the object (a `tools/list` result).
    tools: Option<Vec<StreamedTool>>,
    /// The `tools` array of its `result` object (a JSON-RPC response).
    result_tools: Option<Vec<StreamedTool>>,
}

/// Reads a top-level object; returns its tools when it is one of the accepted shapes.
///
/// Members may come in any order and the shape is known only at the end (an object is a
/// JSON-RPC response when it has a `jsonrpc` member anywhere), so both candidate arrays are
/// digested as they are met and the shape picks one at the end.
fn document_object(
    reader: &mut StreamReader<'_>,
    profile: Profile,
) -> Result<Option<Vec<StreamedTool>>, DocumentError> {
    let mut shape = Shape::default();
    reader.enter_object()?;
    while let Some(name) = reader.next_member()? {
        match name {
            "jsonrpc" => {
                let version = reader.string_value()?;
                shape.jsonrpc = Some(version.as_deref() == Some("2.0"));
            }
            "error" => {
                shape.error = true;
                reader.skip_value()?;
            }
            "tools" => shape.tools = optional_tools_array(reader, profile)?,
            "result" => shape.result_tools = result_tools(reader, profile)?,
            _ => {
                reader.skip_value()?;
            }
        }
    }
    Ok(match shape.jsonrpc {
        Some(true) if !shape.error => shape.result_tools,
        Some(_) => None,
        None => shape.tools,
    })
}

/// The tools of the `result` member of a JSON-RPC response: of its `tools` member when it is
/// an object holding an array there, else `None` (the value checked and skipped).
fn result_tools(
    reader: &mut StreamReader<'_>,
    profile: Profile,
) -> Result<Option<Vec<StreamedTool>>, DocumentError> {
    if reader.peek() != Some(JsonType::Object) {
        reader.skip_value()?;
        return Ok(None);
    }
    let mut tools = None;
    reader.enter_object()?;
    while let Some(name) = reader.next_member()? {
        if name == "tools" {
            tools = optional_tools_array(reader, profile)?;
        } else {
            reader.skip_value()?;
        }
    }
    Ok(tools)
}

/// The tools of the array that is the next value, or `None` (the value checked and skipped)
/// when it is not an array.
fn optional_tools_array(
    reader: &mut StreamReader<'_>,
    profile: Profile,
) -> Result<Option<Vec<StreamedTool>>, DocumentError> {
    if reader.peek() == Some(JsonType::Array) {
        return tools_array(reader, profile).map(Some);
    }
    reader.skip_value()?;
    Ok(None)
}

/// Digests every element of the array that is the next value.
fn tools_array(
    reader: &mut StreamReader<'_>,
    profile: Profile,
) -> Result<Vec<StreamedTool>, DocumentError> {
    Ok(reader.tool_definitions(profile)?)
}

/// The tree path, for a strictly valid document whose shape the stream did not accept: its
/// error is the one to give. Should the tree path accept it after all, its tools are digested
/// from the tree, so the answer is the reference's either way.
fn tree_fallback(bytes: &[u8], profile: Profile) -> Result<Vec<StreamedTool>, DocumentError> {
    read_tools_document(bytes)?
        .iter()
        .map(|tool| StreamedTool::from_value(tool, profile))
        .collect::<Result<Vec<_>, _>>()
        // Unreachable: a strictly read value holds no integer outside ±(2^53−1).
        .map_err(|error| DocumentError::UnexpectedShape {
            found: format!("a document with a tool that has no digest ({error})"),
        })
}
