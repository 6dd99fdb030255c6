//! The approved definition: MCP or snake_case member names in, MCP names out (docs/design.md §4).

use serde_json::{Map, Value};

use crate::error::CatalogError;
use crate::location::child;
use crate::members::{Problems, json_type};

/// The members an approved definition may carry: the six that are hashed (seed 000 §3), with
/// the seed 003 §2 snake_case spellings of the two schemas.
pub(crate) const DEFINITION_MEMBERS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "input_schema",
    "outputSchema",
    "output_schema",
    "annotations",
];

const WHY_DEFINITION: &str = "Only the members that are hashed may be approved: anything else \
     (_meta, icons, ...) would reach clients without ever being checked against the upstream";

/// The hashed members other than `name`: (MCP name, snake_case name, JSON type it must have).
const DEFINITION_FIELDS: [(&str, Option<&str>, Kind); 5] = [
    ("title", None, Kind::String),
    ("description", None, Kind::String),
    ("inputSchema", Some("input_schema"), Kind::Object),
    ("outputSchema", Some("output_schema"), Kind::Object),
    ("annotations", None, Kind::Object),
];

#[derive(Clone, Copy)]
enum Kind {
    String,
    Object,
}

/// Normalizes `approved_definition` to MCP member names with `name` = `upstream_name`: the
/// definition the gateway serves (after renaming to `tool_name`) and a live one must hash to.
///
/// `null` members are dropped (absent and `null` hash the same, seed 000 §3 step 1). Returns
/// `None` when a problem was recorded. `upstream_name` is `None` when it could not be read;
/// the definition is still checked.
pub(crate) fn normalize_definition(
    problems: &mut Problems<'_>,
    mut definition: Map<String, Value>,
    pointer: &str,
    upstream_name: Option<&str>,
) -> Option<Map<String, Value>> {
    let errors_before = problems.errors.len();
    problems.refuse_unknown_members(&definition, pointer, DEFINITION_MEMBERS, WHY_DEFINITION);

    let mut normalized = Map::new();
    match definition.get("name") {
        None | Some(Value::Null) => {}
        Some(Value::String(name)) => {
            if let Some(upstream_name) = upstream_name.filter(|upstream| upstream != name) {
                let at = problems.at(child(pointer, "name"));
                problems.push(CatalogError::DefinitionNameMismatch {
                    at,
                    name: name.clone(),
                    upstream_name: upstream_name.to_owned(),
                });
            }
        }
        Some(other) => problems.wrong_type(child(pointer, "name"), "a string", other),
    }
    if let Some(upstream_name) = upstream_name {
        normalized.insert("name".to_owned(), Value::String(upstream_name.to_owned()));
    }

    // (MCP name, member as written) of each well-typed, non-null member, moved out at the end.
    let mut taken: Vec<(&'static str, &'static str)> = Vec::with_capacity(DEFINITION_FIELDS.len());
    for (mcp, snake, kind) in DEFINITION_FIELDS {
        let mcp_value = definition.get(mcp);
        let snake_value = snake.and_then(|snake| definition.get(snake).map(|value| (snake, value)));
        let (member, value) = match (mcp_value, snake_value) {
            (Some(_), Some((snake, _))) => {
                let at = problems.at(child(pointer, snake));
                problems.push(CatalogError::BothSpellings { at, mcp, snake });
                continue;
            }
            (Some(value), None) => (mcp, value),
            (None, Some((snake, value))) => (snake, value),
            (None, None) => {
                if mcp == "inputSchema" {
                    let at = problems.at(child(pointer, mcp));
                    problems.push(CatalogError::MissingMember {
                        at,
                        member: mcp,
                        hint: "MCP requires every tool to declare its input; add \
                               \"inputSchema\": {\"type\": \"object\"} at least",
                    });
                }
                continue;
            }
        };
        let well_typed = match (kind, value) {
            (_, Value::Null) if mcp != "inputSchema" => continue,
            (Kind::String, Value::String(_)) | (Kind::Object, Value::Object(_)) => true,
            _ => false,
        };
        if well_typed {
            // Moved, not cloned: schemas are the bulk of a catalog.
            taken.push((mcp, member));
        } else {
            let expected = match kind {
                Kind::String => "a string",
                Kind::Object => "an object",
            };
            let at = problems.at(child(pointer, member));
            problems.push(CatalogError::WrongType {
                at,
                expected,
                found: json_type(value),
            });
        }
    }

    if problems.errors.len() != errors_before || upstream_name.is_none() {
        return None;
    }
    for (mcp, member) in taken {
        if let Some(value) = definition.remove(member) {
            normalized.insert(mcp.to_owned(), value);
        }
    }
    Some(normalized)
}
