//! Cedar authorization of `tools/call` (docs/design.md §7): principal, action `Action::"call"`,
//! resource `Tool::"<tool_name>"` with the attributes `server`, `read_only` and `destructive`
//! from the approved definition, context `{ "protocol": <MCP version> }`. Default deny: a call
//! no `permit` matches, or that a `forbid` matches, is refused.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::str::FromStr;

use catalog_store::CatalogEntry;
use cedar_policy::{
    Authorizer, Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicyId,
    PolicySet, Request, RestrictedExpression, Schema, ValidationError, ValidationMode, Validator,
};
use miette::Diagnostic;
use serde_json::Value;

use super::Principal;
pub use super::policy_types::{PolicyDecision, PolicyError};

/// The loaded policy set.
#[derive(Debug)]
pub struct ToolPolicy {
    policies: PolicySet,
    authorizer: Authorizer,
    action: EntityUid,
}

impl ToolPolicy {
    /// Loads and parses the Cedar file at `path`.
    ///
    /// # Errors
    ///
    /// [`PolicyError`] naming the file and, for a parse error, its line and column.
    pub fn from_file(path: &Path) -> Result<ToolPolicy, PolicyError> {
        Self::from_files(path, None)
    }

    /// Loads the Cedar file at `path` and, with `schema`, validates it against the Cedar
    /// schema in that file (`--policy-schema`; see [`ToolPolicy::with_schema`]).
    ///
    /// # Errors
    ///
    /// [`PolicyError`] naming the file and, for a parse or validation error, its line and
    /// column.
    pub fn from_files(path: &Path, schema: Option<&Path>) -> Result<ToolPolicy, PolicyError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: shown.clone(),
            source,
        })?;
        let Some(schema) = schema else {
            return Self::from_text(&text, &shown);
        };
        let schema_shown = schema.display().to_string();
        let schema_text =
            std::fs::read_to_string(schema).map_err(|source| PolicyError::SchemaRead {
                path: schema_shown.clone(),
                source,
            })?;
        Self::with_schema(&text, &shown, &schema_text, &schema_shown)
    }

    /// Parses Cedar `text` and validates it against the Cedar schema `schema` (the
    /// human-readable `.cedarschema` form) with Cedar's validator in strict mode: every entity
    /// type, attribute and action a policy names must be declared, and every expression must
    /// have the type its use needs. `origin` and `schema_origin` name the two texts in errors.
    /// The schema checks the policies only: the entities of each request are what the
    /// gateway builds (docs/design.md §7), whatever the schema declares.
    ///
    /// # Errors
    ///
    /// As [`ToolPolicy::from_text`]; [`PolicyError::SchemaParse`] or
    /// [`PolicyError::SchemaInvalid`] for a schema that cannot be used;
    /// [`PolicyError::NotValid`] for the first policy (in file order) that does not validate,
    /// at the line and column the validator points to.
    pub fn with_schema(
        text: &str,
        origin: &str,
        schema: &str,
        schema_origin: &str,
    ) -> Result<ToolPolicy, PolicyError> {
        let policy = Self::from_text(text, origin)?;
        let (schema, schema_warnings) =
            Schema::from_cedarschema_str(schema).map_err(|error| match first_offset(&error) {
                Some(offset) => {
                    let (line, column) = line_and_column(schema, offset);
                    PolicyError::SchemaParse {
                        path: schema_origin.to_owned(),
                        line,
                        column,
                        message: diagnostic_text(&error),
                    }
                }
                None => PolicyError::SchemaInvalid {
                    path: schema_origin.to_owned(),
                    message: diagnostic_text(&error),
                },
            })?;
        for warning in schema_warnings {
            tracing::warn!(
                "--policy-schema {schema_origin}: {}",
                diagnostic_text(&warning)
            );
        }
        let validation = Validator::new(schema).validate(&policy.policies, ValidationMode::Strict);
        let mut errors: Vec<(usize, &ValidationError)> = validation
            .validation_errors()
            .map(|error| (first_offset(error).unwrap_or(0), error))
            .collect();
        errors.sort_by_key(|(offset, _)| *offset);
        if let Some((offset, error)) = errors.first() {
            let (line, column) = line_and_column(text, *offset);
            return Err(PolicyError::NotValid {
                path: origin.to_owned(),
                line,
                column,
                policy: error.policy_id().to_string(),
                schema: schema_origin.to_owned(),
                message: diagnostic_text(*error),
                more: errors.len() - 1,
            });
        }
        for warning in validation.validation_warnings() {
            tracing::warn!("--policy {origin}: {}", diagnostic_text(warning));
        }
        Ok(policy)
    }

    /// Parses Cedar `text` (`origin` names it in errors).
    ///
    /// # Errors
    ///
    /// [`PolicyError::Parse`] with the line and column of the first error.
    pub fn from_text(text: &str, origin: &str) -> Result<ToolPolicy, PolicyError> {
        let policies = PolicySet::from_str(text).map_err(|errors| {
            let offset = first_offset(&errors).unwrap_or(0);
            let (line, column) = line_and_column(text, offset);
            let message = errors
                .iter()
                .next()
                .map_or_else(|| errors.to_string(), ToString::to_string);
            PolicyError::Parse {
                path: origin.to_owned(),
                line,
                column,
                message,
            }
        })?;
        if policies.policies().next().is_none() {
            return Err(PolicyError::Empty {
                path: origin.to_owned(),
            });
        }
        if policies.templates().next().is_some() {
            return Err(PolicyError::Invalid {
                path: origin.to_owned(),
                message: "templates are not supported: write plain policies".to_owned(),
            });
        }
        // An `@id("…")` annotation names the policy in audit entries and messages (otherwise
        // Cedar's `policy0`, `policy1`, … by position).
        let mut named = PolicySet::new();
        for policy in policies.policies() {
            let policy = match policy.annotation("id") {
                Some(id) => policy.new_id(PolicyId::new(id)),
                None => policy.clone(),
            };
            named.add(policy).map_err(|error| PolicyError::Invalid {
                path: origin.to_owned(),
                message: error.to_string(),
            })?;
        }
        let policies = named;
        let action = EntityUid::from_type_name_and_id(type_name("Action"), EntityId::new("call"));
        Ok(ToolPolicy {
            policies,
            authorizer: Authorizer::new(),
            action,
        })
    }

    /// Whether `principal` may call the catalog tool `entry` over MCP `protocol`.
    pub fn decide(
        &self,
        principal: &Principal,
        entry: &CatalogEntry,
        protocol: &str,
    ) -> PolicyDecision {
        let (principal_uid, principal_entity) = principal_entity(principal);
        let (tool_uid, tool_entity) = tool_entity(entry);
        let denied = |policies| PolicyDecision {
            allowed: false,
            policies,
        };
        let Ok(context) = Context::from_pairs([(
            "protocol".to_owned(),
            RestrictedExpression::new_string(protocol.to_owned()),
        )]) else {
            return denied(Vec::new());
        };
        let Ok(request) = Request::new(principal_uid, self.action.clone(), tool_uid, context, None)
        else {
            return denied(Vec::new());
        };
        let Ok(entities) = Entities::from_entities([principal_entity, tool_entity], None) else {
            return denied(Vec::new());
        };
        let response = self
            .authorizer
            .is_authorized(&request, &self.policies, &entities);
        let policies = response
            .diagnostics()
            .reason()
            .map(ToString::to_string)
            .collect();
        PolicyDecision {
            allowed: response.decision() == Decision::Allow,
            policies,
        }
    }
}

fn type_name(name: &str) -> EntityTypeName {
    // The names used here are fixed identifiers, which always parse.
    EntityTypeName::from_str(name).unwrap_or_else(|_| unreachable!("{name} is an identifier"))
}

/// Where a Cedar diagnostic points: the byte offset of its first label.
fn first_offset(diagnostic: &dyn Diagnostic) -> Option<usize> {
    diagnostic
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|label| label.offset())
}

/// A Cedar diagnostic's message, with its help when it has one.
fn diagnostic_text(diagnostic: &dyn Diagnostic) -> String {
    match diagnostic.help() {
        Some(help) => format!("{diagnostic} ({help})"),
        None => diagnostic.to_string(),
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The principal's entity: `User` with `scopes` and its token's simple claims (strings,
/// booleans, integers, arrays of strings), or `Spiffe`, `Cert`, `Local`, `Anonymous`.
fn principal_entity(principal: &Principal) -> (EntityUid, Entity) {
    let kind = principal.entity_type().unwrap_or("Anonymous");
    let id = principal.id().unwrap_or("anonymous");
    let uid = EntityUid::from_type_name_and_id(type_name(kind), EntityId::new(id));
    let mut attrs = HashMap::new();
    if let Principal::User { scopes, claims, .. } = principal {
        for (name, value) in claims {
            if let Some(value) = simple_value(value) {
                attrs.insert(name.clone(), value);
            }
        }
        attrs.insert(
            "scopes".to_owned(),
            RestrictedExpression::new_set(
                scopes
                    .iter()
                    .map(|scope| RestrictedExpression::new_string(scope.clone())),
            ),
        );
    }
    let entity = Entity::new(uid.clone(), attrs, HashSet::new())
        .unwrap_or_else(|_| Entity::new_no_attrs(uid.clone(), HashSet::new()));
    (uid, entity)
}

fn simple_value(value: &Value) -> Option<RestrictedExpression> {
    match value {
        Value::String(text) => Some(RestrictedExpression::new_string(text.clone())),
        Value::Bool(flag) => Some(RestrictedExpression::new_bool(*flag)),
        Value::Number(number) => number.as_i64().map(RestrictedExpression::new_long),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(|s| RestrictedExpression::new_string(s.to_owned()))
            })
            .collect::<Option<Vec<_>>>()
            .map(RestrictedExpression::new_set),
        _ => None,
    }
}

/// `Tool::"<tool_name>"` with `server` (the binding's display name, else its URL or command),
/// `read_only` and `destructive` from the approved annotations (MCP: `readOnlyHint` defaults
/// to false, `destructiveHint` to true when the tool is not read-only).
fn tool_entity(entry: &CatalogEntry) -> (EntityUid, Entity) {
    let uid = EntityUid::from_type_name_and_id(type_name("Tool"), EntityId::new(entry.tool_name()));
    let annotations = entry.approved_definition().get("annotations");
    let hint = |name: &str| {
        annotations
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
    };
    let read_only = hint("readOnlyHint").unwrap_or(false);
    let destructive = !read_only && hint("destructiveHint").unwrap_or(true);
    let server = entry
        .server()
        .display_name()
        .map_or_else(|| entry.server().location_text(), str::to_owned);
    let attrs = HashMap::from([
        (
            "server".to_owned(),
            RestrictedExpression::new_string(server),
        ),
        (
            "read_only".to_owned(),
            RestrictedExpression::new_bool(read_only),
        ),
        (
            "destructive".to_owned(),
            RestrictedExpression::new_bool(destructive),
        ),
    ]);
    let entity = Entity::new(uid.clone(), attrs, HashSet::new())
        .unwrap_or_else(|_| Entity::new_no_attrs(uid.clone(), HashSet::new()));
    (uid, entity)
}
