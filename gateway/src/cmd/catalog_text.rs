//! The catalog file as text, for the commands that write it (`pin --catalog`, `catalog
//! approve`): where its entries are, entries written in a readable member order, entries
//! appended or replaced without touching any other byte of the file, and the atomic write.
//!
//! A catalog is a security file that people review in diffs, so a change rewrites only what it
//! must: appending keeps every existing byte (shape, order, formatting, other entries), and
//! replacing an entry re-serializes that entry alone.

use std::fs::OpenOptions;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use catalog_fold::escape_hidden_json;
use jcs_digest::TOOL_DEFINITION_MEMBERS;
use serde_json::{Map, Value};

use crate::cmd::common::json_string;
use crate::outcome::Failure;

/// An entry's members in the order a person reads them; others (none today) follow sorted.
const ENTRY_ORDER: &[&str] = &[
    "tool_name",
    "upstream_name",
    "server",
    "approved_definition",
    "definition_hash",
    "added_at",
    "approved_by",
];
const SERVER_ORDER: &[&str] = &[
    "display_name",
    "url",
    "tls_fingerprint",
    "backup_fingerprints",
    "spiffe_id",
    "rotation_mode",
    "tls_trust",
];

/// A catalog document's text and where its entries are.
#[derive(Debug)]
pub(crate) struct CatalogText {
    text: String,
    /// The `[` of the entry array.
    open: usize,
    /// Its `]`.
    close: usize,
    /// Each entry's bytes.
    entries: Vec<Range<usize>>,
}

impl CatalogText {
    /// Finds the entries of `text`, which must be JSON the strict reader accepted (the caller
    /// loaded it as a catalog): a bare array, or an object whose `entries` member is one.
    pub(crate) fn scan(text: String) -> Result<CatalogText, String> {
        let bytes = text.as_bytes();
        let root = skip_space(bytes, 0);
        let (open, entries, close) = match bytes.get(root) {
            Some(b'[') => {
                let (entries, close) = elements(bytes, root)?;
                (root, entries, close)
            }
            Some(b'{') => {
                let open = entries_member(&text, root)?;
                let (entries, close) = elements(bytes, open)?;
                (open, entries, close)
            }
            _ => return Err("the catalog is neither an array nor an object".to_owned()),
        };
        Ok(CatalogText {
            text,
            open,
            close,
            entries,
        })
    }

    /// Entry `index` (0-based, file order) as written, read strictly.
    pub(crate) fn entry_value(&self, index: usize) -> Option<Value> {
        let range = self.entries.get(index)?.clone();
        jcs_digest::parse_strict(self.text[range].as_bytes()).ok()
    }

    /// The text with `new` entries after the last one, in the file's layout (one entry per
    /// line group, indented as the first entry is, or inline when the file is on one line).
    pub(crate) fn append(&self, new: &[Value]) -> String {
        let text = &self.text;
        match (self.entries.first(), self.entries.last()) {
            (Some(first), Some(last)) => {
                let before_first = &text[self.open + 1..first.start];
                let mut inserted = String::new();
                for entry in new {
                    if let Some((_, indent)) = before_first.rsplit_once('\n') {
                        inserted.push_str(",\n");
                        inserted.push_str(indent);
                        inserted.push_str(&entry_text(entry, indent, true));
                    } else {
                        inserted.push_str(", ");
                        inserted.push_str(&entry_text(entry, "", false));
                    }
                }
                format!("{}{inserted}{}", &text[..last.end], &text[last.end..])
            }
            _ => {
                let base = line_indent(text, self.open);
                let array = entry_array(new, &base);
                format!("{}{array}{}", &text[..self.open], &text[self.close + 1..])
            }
        }
    }

    /// The text with entry `index` (0-based, file order) replaced by `entry` for each pair,
    /// written in that entry's layout; every other byte is kept.
    pub(crate) fn replace(&self, replacements: &[(usize, Value)]) -> String {
        let mut ranges: Vec<(Range<usize>, &Value)> = replacements
            .iter()
            .filter_map(|(index, entry)| Some((self.entries.get(*index)?.clone(), entry)))
            .collect();
        ranges.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
        let mut text = self.text.clone();
        for (range, entry) in ranges {
            let pretty = self.text[range.clone()].contains('\n');
            let indent = line_indent(&self.text, range.start);
            text.replace_range(range, &entry_text(entry, &indent, pretty));
        }
        text
    }
}

/// A new catalog document (the array form) holding `entries`, with a final newline.
pub(crate) fn new_document(entries: &[Value]) -> String {
    format!("{}\n", entry_array(entries, ""))
}

/// `[`, one entry per line group indented two spaces past `base`, `]`.
fn entry_array(entries: &[Value], base: &str) -> String {
    if entries.is_empty() {
        return "[]".to_owned();
    }
    let indent = format!("{base}  ");
    let items: Vec<String> = entries
        .iter()
        .map(|entry| format!("{indent}{}", entry_text(entry, &indent, true)))
        .collect();
    format!("[\n{}\n{base}]", items.join(",\n"))
}

/// One entry as JSON text, members in reading order ([`ENTRY_ORDER`], with the server's and
/// the definition's members ordered too: the definition's in seed 000's order of the hashed
/// members). `pretty`: two spaces per level past `indent` (the
/// column the entry starts at); otherwise compact. Characters a reviewer could not see (tag,
/// bidirectional, zero-width, control) are written as `\u` escapes: the same JSON value, made
/// visible in the file.
pub(crate) fn entry_text(entry: &Value, indent: &str, pretty: bool) -> String {
    let Value::Object(members) = entry else {
        return escape_hidden_json(&value_text(entry, indent, pretty));
    };
    let inner = format!("{indent}  ");
    let pairs = ordered(members, ENTRY_ORDER)
        .into_iter()
        .map(|(name, value)| {
            let text = match (name.as_str(), value) {
                ("server", Value::Object(server)) => {
                    object_text(server, SERVER_ORDER, &inner, pretty)
                }
                ("approved_definition", Value::Object(definition)) => {
                    object_text(definition, &TOOL_DEFINITION_MEMBERS, &inner, pretty)
                }
                _ => value_text(value, &inner, pretty),
            };
            (name, text)
        })
        .collect();
    escape_hidden_json(&members_text(pairs, indent, pretty))
}

fn object_text(members: &Map<String, Value>, order: &[&str], indent: &str, pretty: bool) -> String {
    let inner = format!("{indent}  ");
    let pairs = ordered(members, order)
        .into_iter()
        .map(|(name, value)| (name, value_text(value, &inner, pretty)))
        .collect();
    members_text(pairs, indent, pretty)
}

/// The members named in `order` first (in that order), then the others in name order (whatever
/// order the map keeps: serde_json's `preserve_order`).
fn ordered<'a>(members: &'a Map<String, Value>, order: &[&str]) -> Vec<(&'a String, &'a Value)> {
    let mut out: Vec<(&String, &Value)> = order
        .iter()
        .filter_map(|name| members.get_key_value(*name))
        .collect();
    out.extend(
        jcs_digest::order::members(members).filter(|(name, _)| !order.contains(&name.as_str())),
    );
    out
}

fn members_text(pairs: Vec<(&String, String)>, indent: &str, pretty: bool) -> String {
    if pairs.is_empty() {
        return "{}".to_owned();
    }
    if pretty {
        let lines: Vec<String> = pairs
            .iter()
            .map(|(name, text)| format!("{indent}  {}: {text}", json_string(name)))
            .collect();
        format!("{{\n{}\n{indent}}}", lines.join(",\n"))
    } else {
        let items: Vec<String> = pairs
            .iter()
            .map(|(name, text)| format!("{}:{text}", json_string(name)))
            .collect();
        format!("{{{}}}", items.join(","))
    }
}

/// A value as JSON text; pretty output continues at `indent` (JSON strings hold no raw line
/// breaks, so indenting after each one is safe).
fn value_text(value: &Value, indent: &str, pretty: bool) -> String {
    if pretty {
        jcs_digest::order::to_string_pretty(value).replace('\n', &format!("\n{indent}"))
    } else {
        jcs_digest::order::to_string(value)
    }
}

/// The spaces and tabs that start the line holding byte `position`.
fn line_indent(text: &str, position: usize) -> String {
    let start = text[..position].rfind('\n').map_or(0, |at| at + 1);
    text[start..position]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

const TRUNCATED: &str = "the catalog text ends inside a value";

/// The end (exclusive) of the string starting at `start` (its `"`).
fn string_end(bytes: &[u8], start: usize) -> Result<usize, String> {
    let mut at = start + 1;
    loop {
        match bytes.get(at) {
            Some(b'\\') => at += 2,
            Some(b'"') => return Ok(at + 1),
            Some(_) => at += 1,
            None => return Err(TRUNCATED.to_owned()),
        }
    }
}

/// The end (exclusive) of the JSON value starting at `start`; iterative, any depth.
fn value_end(bytes: &[u8], start: usize) -> Result<usize, String> {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut at = start;
            loop {
                match bytes.get(at) {
                    Some(b'"') => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    Some(b'{' | b'[') => depth += 1,
                    Some(b'}' | b']') => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return Ok(at + 1);
                        }
                    }
                    Some(_) => {}
                    None => return Err(TRUNCATED.to_owned()),
                }
                at += 1;
            }
        }
        Some(_) => {
            let mut at = start;
            while !matches!(
                bytes.get(at),
                None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                at += 1;
            }
            Ok(at)
        }
        None => Err(TRUNCATED.to_owned()),
    }
}

/// The elements of the array whose `[` is at `open`, and the position of its `]`.
fn elements(bytes: &[u8], open: usize) -> Result<(Vec<Range<usize>>, usize), String> {
    let mut at = skip_space(bytes, open + 1);
    let mut found = Vec::new();
    if bytes.get(at) == Some(&b']') {
        return Ok((found, at));
    }
    loop {
        let end = value_end(bytes, at)?;
        found.push(at..end);
        at = skip_space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b']') => return Ok((found, at)),
            _ => return Err("the entry array is not well formed".to_owned()),
        }
    }
}

/// The position of the `[` of the `entries` member of the object at `root`.
fn entries_member(text: &str, root: usize) -> Result<usize, String> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, root + 1);
    while bytes.get(at) == Some(&b'"') {
        let name_end = string_end(bytes, at)?;
        let name: String = serde_json::from_str(&text[at..name_end])
            .map_err(|error| format!("a member name does not read: {error}"))?;
        at = skip_space(bytes, name_end);
        if bytes.get(at) != Some(&b':') {
            break;
        }
        at = skip_space(bytes, at + 1);
        if name == "entries" {
            return match bytes.get(at) {
                Some(b'[') => Ok(at),
                _ => Err("`entries` is not an array".to_owned()),
            };
        }
        at = skip_space(bytes, value_end(bytes, at)?);
        if bytes.get(at) != Some(&b',') {
            break;
        }
        at = skip_space(bytes, at + 1);
    }
    Err("the catalog object has no `entries` array".to_owned())
}

/// The temporary file a write of `path` goes through: beside it (so the rename stays on one
/// file system), with a fixed name, so that a second writer at the same time, or the remains
/// of an interrupted one, are found rather than overwritten.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(
        || "catalog".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    path.with_file_name(format!(".{name}.toolgate-tmp"))
}

/// Replaces `path` with `bytes` so that a reader sees the old file or the new one, never part
/// of one: write a temporary file in the same directory, sync it, rename it over `path`, sync
/// the directory. On any failure the temporary file is removed and `path` is as it was.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let temp = temp_path(path);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|error| {
            let hint = if error.kind() == std::io::ErrorKind::AlreadyExists {
                format!(
                    "{} exists: another toolgate is writing {} now, or an earlier write was \
                     interrupted; remove it once no toolgate is running",
                    temp.display(),
                    path.display()
                )
            } else {
                format!(
                    "cannot create {} to replace {} atomically (check the directory's permissions)",
                    temp.display(),
                    path.display()
                )
            };
            Failure::io(hint, error)
        })?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Ok(existing) = std::fs::metadata(path) {
            file.set_permissions(existing.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)?;
        sync_directory(path)
    })();
    written.map_err(|error| {
        let _ = std::fs::remove_file(&temp);
        Failure::io(
            format!("cannot write {} (it is unchanged)", path.display()),
            error,
        )
    })
}

/// Syncs the directory holding `path`, so that the rename itself is durable.
fn sync_directory(path: &Path) -> std::io::Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::File::open(directory)?.sync_all()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(name: &str) -> Value {
        json!({"approved_by": "me", "tool_name": name, "server": {"url": "https://a.example/mcp",
               "tls_fingerprint": "SHA256:00"}, "approved_definition": {"inputSchema": {},
               "name": name}, "definition_hash": "sha256:00", "added_at": "2026-01-01T00:00:00Z"})
    }

    #[test]
    fn entries_are_written_in_reading_order() {
        assert_eq!(
            entry_text(&entry("t"), "", false),
            r#"{"tool_name":"t","server":{"url":"https://a.example/mcp","tls_fingerprint":"SHA256:00"},"approved_definition":{"name":"t","inputSchema":{}},"definition_hash":"sha256:00","added_at":"2026-01-01T00:00:00Z","approved_by":"me"}"#
        );
        assert_eq!(
            new_document(&[entry("t")]),
            "[\n  {\n    \"tool_name\": \"t\",\n    \"server\": {\n      \"url\": \"https://a.example/mcp\",\n      \
             \"tls_fingerprint\": \"SHA256:00\"\n    },\n    \"approved_definition\": {\n      \"name\": \"t\",\n      \
             \"inputSchema\": {}\n    },\n    \"definition_hash\": \"sha256:00\",\n    \
             \"added_at\": \"2026-01-01T00:00:00Z\",\n    \"approved_by\": \"me\"\n  }\n]\n"
        );
        let hidden = json!({"tool_name": "t\u{E0041}\u{202E}\u{7f}"});
        assert_eq!(
            entry_text(&hidden, "", false),
            r#"{"tool_name":"t\udb40\udc41\u202e\u007f"}"#
        );
    }

    #[test]
    fn appending_keeps_every_byte_before_and_after() {
        let object =
            "{\"catalog_version\": \"1\",\n \"entries\": [\n    {\"tool_name\": \"a\"}\n  ]\n}\n";
        let scanned = CatalogText::scan(object.to_owned()).unwrap();
        let appended = scanned.append(&[json!({"tool_name": "b"})]);
        assert_eq!(
            appended,
            "{\"catalog_version\": \"1\",\n \"entries\": [\n    {\"tool_name\": \"a\"},\n    {\n      \"tool_name\": \"b\"\n    }\n  ]\n}\n"
        );
        let inline = CatalogText::scan("[{\"tool_name\":\"a\"}]".to_owned()).unwrap();
        assert_eq!(
            inline.append(&[json!({"tool_name": "b"})]),
            "[{\"tool_name\":\"a\"}, {\"tool_name\":\"b\"}]"
        );
        let empty = CatalogText::scan("{\"entries\": [ ]}".to_owned()).unwrap();
        assert_eq!(
            empty.append(&[json!({"tool_name": "b"})]),
            "{\"entries\": [\n  {\n    \"tool_name\": \"b\"\n  }\n]}"
        );
        // Member names with escapes, strings holding brackets, nested values before `entries`.
        let tricky = r#"{"catalog_version": "v]\"[", "entr\u0069es": [{"x": "]}"}]}"#;
        let scanned = CatalogText::scan(tricky.to_owned()).unwrap();
        assert_eq!(scanned.entries.len(), 1);
        assert_eq!(&tricky[scanned.entries[0].clone()], r#"{"x": "]}"}"#);
    }

    #[test]
    fn replacing_rewrites_that_entry_only() {
        let text =
            "[\n  {\"tool_name\": \"a\", \"added_at\": \"old\"},\n  {\"tool_name\": \"b\"}\n]\n";
        let scanned = CatalogText::scan(text.to_owned()).unwrap();
        assert_eq!(
            scanned.replace(&[(1, json!({"tool_name": "b", "added_at": "new"}))]),
            "[\n  {\"tool_name\": \"a\", \"added_at\": \"old\"},\n  {\"tool_name\":\"b\",\"added_at\":\"new\"}\n]\n"
        );
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_file_and_keeps_the_target() {
        let dir = std::env::temp_dir().join(format!("toolgate-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("target.json")).unwrap();
        std::fs::write(dir.join("target.json").join("inside"), b"kept").unwrap();
        let target = dir.join("target.json");
        let error = write_atomically(&target, b"[]").unwrap_err();
        assert!(error.to_string().contains("it is unchanged"), "{error}");
        assert!(!temp_path(&target).exists());
        assert_eq!(std::fs::read(target.join("inside")).unwrap(), b"kept");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
