//! `toolgate diff`: which tools were added, removed or changed between two catalogs, and under
//! each changed tool what changed in its definition (docs/design.md §9's readable difference).

use std::collections::BTreeMap;
use std::io::Write;

use catalog_fold::{CatalogDiff, CatalogDigest, DefinitionDiff};
use catalog_key::ToolKey;
use serde_json::Value;

use crate::cli::DiffArgs;
use crate::cmd::common::{digest_tools, json_string, profile_from_label, read_tools_file};
use crate::outcome::{Failure, Verdict, stdout_error};

/// Per changed key, the difference of its two definitions; `None` when a side lists the name
/// more than once (the duplicate rule folded several definitions under one key).
type Differences = BTreeMap<ToolKey, Option<DefinitionDiff>>;

pub(crate) fn run(args: &DiffArgs) -> Result<Verdict, Failure> {
    let profile = profile_from_label(args.label.as_deref())?;
    let old_tools = read_tools_file(&args.old)?;
    let new_tools = read_tools_file(&args.new)?;
    let old = digest_tools(&args.old, &old_tools, profile)?;
    let new = digest_tools(&args.new, &new_tools, profile)?;
    let diff = CatalogDiff::between(&old, &new);
    let differences = differences(&diff, &old_tools, &new_tools);
    let text = if args.json {
        render_json(&old, &new, &diff, &differences)
    } else {
        render_text(&old, &new, &diff, &differences)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).map_err(stdout_error)?;
    stdout.flush().map_err(stdout_error)?;
    // The verdict is the catalog digest's: equal digests are the same catalog (seed 000 §5).
    Ok(if old.catalog() == new.catalog() {
        Verdict::Pass
    } else {
        Verdict::Fail
    })
}

/// The definition of each key listed once (`None` for a key listed more than once).
fn definitions_by_key(tools: &[Value]) -> BTreeMap<ToolKey, Option<&Value>> {
    let mut by_key: BTreeMap<ToolKey, Option<&Value>> = BTreeMap::new();
    for tool in tools {
        // The same keying as the digest (docs/design.md §2); the catalog digested, so every name is
        // a string, null or absent here.
        let key = match tool.get("name").and_then(Value::as_str) {
            Some(name) => ToolKey::from_name(name),
            None => ToolKey::unnamed(),
        };
        by_key
            .entry(key)
            .and_modify(|seen| *seen = None)
            .or_insert(Some(tool));
    }
    by_key
}

fn differences(diff: &CatalogDiff, old: &[Value], new: &[Value]) -> Differences {
    let (old, new) = (definitions_by_key(old), definitions_by_key(new));
    diff.changed()
        .iter()
        .map(|change| {
            let pair = old
                .get(&change.key)
                .copied()
                .flatten()
                .zip(new.get(&change.key).copied().flatten());
            let difference = pair.map(|(old, new)| DefinitionDiff::between(old, new));
            (change.key.clone(), difference)
        })
        .collect()
}

fn render_text(
    old: &CatalogDigest,
    new: &CatalogDigest,
    diff: &CatalogDiff,
    differences: &Differences,
) -> String {
    let mut out = String::new();
    for (key, digest) in diff.added() {
        out.push_str(&format!("added    {key}  {digest}\n"));
    }
    for (key, digest) in diff.removed() {
        out.push_str(&format!("removed  {key}  {digest}\n"));
    }
    for change in diff.changed() {
        out.push_str(&format!(
            "changed  {}  {} -> {}\n",
            change.key, change.old, change.new
        ));
        match differences.get(&change.key) {
            Some(Some(difference)) => {
                for line in difference.changes() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
            _ => out.push_str(
                "    (the name is listed more than once; compare its definitions by hand)\n",
            ),
        }
    }
    if old.catalog() == new.catalog() {
        out.push_str(&format!("same catalog: {}\n", new.catalog()));
    } else {
        out.push_str(&format!(
            "catalogs differ: {} -> {} ({} added, {} removed, {} changed)\n",
            old.catalog(),
            new.catalog(),
            diff.added().len(),
            diff.removed().len(),
            diff.changed().len()
        ));
    }
    out
}

fn render_json(
    old: &CatalogDigest,
    new: &CatalogDigest,
    diff: &CatalogDiff,
    differences: &Differences,
) -> String {
    let keyed = |items: &[(catalog_key::ToolKey, jcs_digest::Digest)]| -> String {
        let items: Vec<String> = items
            .iter()
            .map(|(key, digest)| {
                format!(
                    "{{\"key\":{},\"digest\":\"{digest}\"}}",
                    json_string(key.as_str())
                )
            })
            .collect();
        items.join(",")
    };
    let changed: Vec<String> = diff
        .changed()
        .iter()
        .map(|c| {
            let changes = match differences.get(&c.key) {
                Some(Some(difference)) => jcs_digest::order::to_string(&difference.to_json()),
                _ => "null".to_owned(),
            };
            format!(
                "{{\"key\":{},\"old\":\"{}\",\"new\":\"{}\",\"changes\":{changes}}}",
                json_string(c.key.as_str()),
                c.old,
                c.new
            )
        })
        .collect();
    format!(
        "{{\"label\":{},\"old\":\"{}\",\"new\":\"{}\",\"same\":{},\"added\":[{}],\"removed\":[{}],\"changed\":[{}]}}\n",
        json_string(new.profile().label()),
        old.catalog(),
        new.catalog(),
        old.catalog() == new.catalog(),
        keyed(diff.added()),
        keyed(diff.removed()),
        changed.join(",")
    )
}
