//! Warnings for invisible or direction-changing characters in definitions a person is about to
//! approve or has approved (docs/design.md §9: what a person approves must be what the model
//! reads). The detector is catalog-store's, the one the catalog load uses.

use serde_json::Value;

/// One warning per text of `definition` holding such characters, naming the tool (its catalog
/// name), the member (a JSON Pointer) and the code points, and what tag characters spell.
pub(crate) fn invisible_warnings(tool_name: &str, definition: &Value) -> Vec<String> {
    catalog_store::invisible_text(definition)
        .iter()
        .map(|found| format!("tool {tool_name:?}: {found}"))
        .collect()
}
