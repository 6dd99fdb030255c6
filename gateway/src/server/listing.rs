//! `tools/list` to clients: the catalog's approved definitions under their catalog names, in
//! pages with an opaque cursor (docs/design.md §5 "tools/list to clients").

use serde_json::{Map, Value};

use crate::mcp::{ErrorObject, error_codes};

/// The client-facing tool list, fixed for the life of the gateway (the catalog is loaded once).
#[derive(Debug)]
pub(crate) struct ToolListing {
    tools: Vec<Value>,
    page_size: usize,
    /// Ties cursors to this listing: a cursor from another gateway or catalog is refused rather
    /// than silently mis-paged.
    tag: String,
}

impl ToolListing {
    /// `tools` in the order they are served; `catalog_tag` is a short text that changes with the
    /// catalog (a prefix of its measurement).
    pub(crate) fn new(tools: Vec<Value>, page_size: usize, catalog_tag: &str) -> ToolListing {
        ToolListing {
            tools,
            page_size: page_size.max(1),
            tag: catalog_tag.chars().take(16).collect(),
        }
    }

    /// The `tools/list` result for `params` (`cursor` optional).
    pub(crate) fn page(&self, params: Option<&Map<String, Value>>) -> Result<Value, ErrorObject> {
        let start = match params.and_then(|params| params.get("cursor")) {
            None | Some(Value::Null) => 0,
            Some(Value::String(cursor)) => {
                self.decode(cursor).ok_or_else(|| invalid_cursor(cursor))?
            }
            Some(_) => {
                return Err(ErrorObject::new(
                    error_codes::INVALID_PARAMS,
                    "Invalid params: \"cursor\" must be a string returned as nextCursor by tools/list",
                ));
            }
        };
        let end = start.saturating_add(self.page_size).min(self.tools.len());
        let mut result = Map::new();
        result.insert(
            "tools".into(),
            Value::Array(self.tools[start..end].to_vec()),
        );
        if end < self.tools.len() {
            result.insert("nextCursor".into(), Value::String(self.encode(end)));
        }
        Ok(Value::Object(result))
    }

    fn encode(&self, offset: usize) -> String {
        format!("{}.{offset:x}", self.tag)
    }

    fn decode(&self, cursor: &str) -> Option<usize> {
        let (tag, offset) = cursor.split_once('.')?;
        if tag != self.tag
            || offset.is_empty()
            || offset.len() > 16
            || !offset.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return None;
        }
        let offset = usize::from_str_radix(offset, 16).ok()?;
        // Only offsets this listing hands out are valid: a page boundary inside the list.
        (offset > 0 && offset < self.tools.len() && offset % self.page_size == 0).then_some(offset)
    }
}

fn invalid_cursor(cursor: &str) -> ErrorObject {
    let shown: String = cursor.chars().take(64).collect();
    ErrorObject::new(
        error_codes::INVALID_PARAMS,
        format!(
            "Invalid params: the cursor {shown:?} was not issued by this gateway's tools/list; \
             start again without a cursor"
        ),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listing(count: usize, page_size: usize) -> ToolListing {
        let tools = (0..count)
            .map(|i| json!({"name": format!("t{i}")}))
            .collect();
        ToolListing::new(tools, page_size, "sha256:abcdef0123456789")
    }

    fn names(page: &Value) -> Vec<String> {
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn pages_follow_the_cursor_to_the_end() {
        let listing = listing(5, 2);
        let first = listing.page(None).unwrap();
        assert_eq!(names(&first), ["t0", "t1"]);
        let cursor = first["nextCursor"].as_str().unwrap().to_owned();
        let mut params = Map::new();
        params.insert("cursor".into(), cursor.into());
        let second = listing.page(Some(&params)).unwrap();
        assert_eq!(names(&second), ["t2", "t3"]);
        params.insert("cursor".into(), second["nextCursor"].clone());
        let third = listing.page(Some(&params)).unwrap();
        assert_eq!(names(&third), ["t4"]);
        assert!(third.get("nextCursor").is_none());
    }

    #[test]
    fn foreign_cursors_are_invalid_params() {
        let listing = listing(5, 2);
        for cursor in [
            json!("nope"),
            json!("sha256:abcdef01.3"),
            json!("sha256:abcdef01.9"),
            json!(3),
            json!("sha256:abcdef01.0"),
        ] {
            let mut params = Map::new();
            params.insert("cursor".into(), cursor.clone());
            let error = listing.page(Some(&params)).unwrap_err();
            assert_eq!(error.code, error_codes::INVALID_PARAMS, "{cursor}");
        }
    }

    #[test]
    fn an_empty_catalog_lists_nothing() {
        let page = listing(0, 3).page(None).unwrap();
        assert_eq!(page, json!({"tools": []}));
    }
}
