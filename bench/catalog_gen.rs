//! Deterministic generated `tools/list` catalogs for benchmarks.
//!
//! One source, included with `#[path]` by every bench and by `cargo xtask gen-bench-catalog`, so
//! that the criterion benches and the whole-process comparison measure the same documents.
//! Realistic shape: nested object schemas, arrays, enums, numbers with fractions and exponents,
//! non-ASCII descriptions, and on some tools `title`, `outputSchema`, `annotations` and `_meta`.

#![allow(dead_code)]

use std::fmt::Write as _;

/// A small deterministic generator (SplitMix64): the same `n` always gives the same bytes.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "repository",
    "query",
    "record",
    "file",
    "issue",
    "customer",
    "invoice",
    "schedule",
    "message",
    "résumé",
    "naïve",
    "count",
    "limit",
    "filter",
    "owner",
    "branch",
    "commit",
    "label",
    "status",
    "region",
    "zone",
    "température",
    "日本語",
    "emoji 🚀",
    "page",
    "cursor",
    "token",
    "scope",
];

const VERBS: &[&str] = &[
    "list", "get", "create", "update", "delete", "search", "sync", "export",
];

fn sentence(rng: &mut SplitMix64, words: usize) -> String {
    let mut out = String::new();
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(rng.pick(WORDS));
    }
    out.push('.');
    out
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn property_schema(rng: &mut SplitMix64, depth: u32) -> String {
    let words = 4 + rng.below(8) as usize;
    let description = json_string(&sentence(rng, words));
    match rng.below(if depth == 0 { 6 } else { 5 }) {
        0 => format!(
            r#"{{"type":"string","description":{description},"maxLength":{}}}"#,
            16 + rng.below(4096)
        ),
        1 => format!(
            r#"{{"type":"number","description":{description},"minimum":{},"maximum":{}.5,"multipleOf":1e-3}}"#,
            rng.below(10),
            100 + rng.below(10_000)
        ),
        2 => format!(
            r#"{{"type":"integer","description":{description},"default":{}}}"#,
            rng.below(500)
        ),
        3 => format!(
            r#"{{"type":"string","enum":[{},{},{}],"description":{description}}}"#,
            json_string(rng.pick(VERBS)),
            json_string(rng.pick(WORDS)),
            json_string(rng.pick(WORDS))
        ),
        4 => format!(
            r#"{{"type":"array","items":{{"type":"string"}},"description":{description},"minItems":0,"uniqueItems":true}}"#
        ),
        _ => {
            let properties = 2 + rng.below(3) as usize;
            object_schema(rng, depth + 1, properties)
        }
    }
}

fn object_schema(rng: &mut SplitMix64, depth: u32, properties: usize) -> String {
    let mut out = String::from(r#"{"type":"object","properties":{"#);
    let mut names = Vec::with_capacity(properties);
    for i in 0..properties {
        let name = format!("{}_{}", rng.pick(VERBS), i);
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{}:{}",
            json_string(&name),
            property_schema(rng, depth)
        );
        names.push(name);
    }
    out.push_str(r#"},"required":["#);
    let required = names.iter().take(1 + properties / 2);
    let required: Vec<String> = required.map(|n| json_string(n)).collect();
    out.push_str(&required.join(","));
    out.push_str(r#"],"additionalProperties":false}"#);
    out
}

/// A `tools/list` `tools` array of `n` tools, as JSON text (the bare-array document shape).
pub fn generate_catalog(n: usize) -> String {
    let mut rng = SplitMix64(0x746F_6F6C_6761_7465 ^ n as u64);
    let mut out = String::from("[");
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        let name = format!(
            "{}.{}_{}",
            rng.pick(&["github", "crm", "files", "calendar"]),
            rng.pick(VERBS),
            i
        );
        let _ = write!(out, r#"{{"name":{}"#, json_string(&name));
        if rng.below(3) == 0 {
            let _ = write!(out, r#","title":{}"#, json_string(&sentence(&mut rng, 3)));
        }
        let description = format!("{}\n{}", sentence(&mut rng, 12), sentence(&mut rng, 20));
        let _ = write!(out, r#","description":{}"#, json_string(&description));
        let properties = 3 + rng.below(6) as usize;
        let _ = write!(
            out,
            r#","inputSchema":{}"#,
            object_schema(&mut rng, 0, properties)
        );
        if rng.below(2) == 0 {
            let _ = write!(out, r#","outputSchema":{}"#, object_schema(&mut rng, 1, 2));
        }
        if rng.below(2) == 0 {
            let _ = write!(
                out,
                r#","annotations":{{"readOnlyHint":{},"destructiveHint":false,"openWorldHint":true}}"#,
                rng.below(2) == 0
            );
        }
        if rng.below(4) == 0 {
            let _ = write!(
                out,
                r#","_meta":{{"_fastmcp":{{"tags":["{}"]}}}}"#,
                rng.pick(VERBS)
            );
        }
        out.push('}');
    }
    out.push(']');
    out
}
