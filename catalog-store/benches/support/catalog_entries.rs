//! Generated catalog entries: the tools of `bench/catalog_gen.rs` (a sibling module
//! `catalog_gen` of this one) bound to `SERVERS` servers, every fourth with a SPIFFE ID as well
//! as a fingerprint, every tenth with a backup fingerprint, each `definition_hash` precomputed.
//! Shared by the load bench and the unit tests that compare the one- and two-thread loads.
#![allow(dead_code, clippy::unwrap_used)]

use jcs_digest::{Digest, Profile, tool_definition_digest};
use serde_json::{Value, json};

use super::catalog_gen;

pub const SERVERS: usize = 40;

/// `n` valid entries.
pub fn catalog_entries(n: usize) -> Vec<Value> {
    let tools: Vec<Value> = serde_json::from_str(&catalog_gen::generate_catalog(n)).unwrap();
    tools
        .into_iter()
        .enumerate()
        .map(|(i, mut tool)| {
            let object = tool.as_object_mut().unwrap();
            // `_meta` is not hashed, so a catalog refuses it in an approved definition.
            object.remove("_meta");
            let tool_name = object["name"].as_str().unwrap().to_owned();
            let definition_hash = tool_definition_digest(&tool, Profile::Trace).unwrap();
            let server = i % SERVERS;
            let mut binding = json!({
                "display_name": format!("Upstream {server}"),
                "url": format!("https://mcp-{server}.example.com/mcp"),
                "tls_fingerprint": format!("SHA256:{}", hex(Digest::of(format!("key {server}").as_bytes()))),
                "rotation_mode": if server % 3 == 0 { "cert-pinned" } else { "key-pinned" },
            });
            if server % 4 == 0 {
                binding["spiffe_id"] = json!(format!("spiffe://corp.example/upstream-{server}/mcp"));
            }
            if server % 10 == 0 {
                let backup = hex(Digest::of(format!("next key {server}").as_bytes()));
                binding["backup_fingerprints"] = json!([format!("SHA256:{backup}")]);
            }
            json!({
                "tool_name": tool_name,
                "server": binding,
                "approved_definition": tool,
                "definition_hash": definition_hash.to_string(),
                "added_at": "2026-06-01T00:00:00Z",
                "approved_by": "security@example.com",
            })
        })
        .collect()
}

/// A catalog file of `n` entries in the object form, pretty-printed, as bytes.
pub fn catalog_bytes(n: usize) -> Vec<u8> {
    let entries = catalog_entries(n);
    serde_json::to_vec_pretty(&json!({"catalog_version": "bench", "entries": entries})).unwrap()
}

fn hex(digest: Digest) -> String {
    digest.to_string().trim_start_matches("sha256:").to_owned()
}
