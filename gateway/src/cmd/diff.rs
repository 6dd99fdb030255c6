//! `toolgate diff`: which tools were added, removed or changed between two catalogs.

use std::io::Write;

use catalog_fold::{CatalogDiff, CatalogDigest};

use crate::cli::DiffArgs;
use crate::cmd::common::{digest_file, json_string, profile_from_label};
use crate::outcome::{Failure, Verdict, stdout_error};

pub(crate) fn run(args: &DiffArgs) -> Result<Verdict, Failure> {
    let profile = profile_from_label(args.label.as_deref())?;
    let old = digest_file(&args.old, profile)?;
    let new = digest_file(&args.new, profile)?;
    let diff = CatalogDiff::between(&old, &new);
    let text = if args.json {
        render_json(&old, &new, &diff)
    } else {
        render_text(&old, &new, &diff)
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

fn render_text(old: &CatalogDigest, new: &CatalogDigest, diff: &CatalogDiff) -> String {
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

fn render_json(old: &CatalogDigest, new: &CatalogDigest, diff: &CatalogDiff) -> String {
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
            format!(
                "{{\"key\":{},\"old\":\"{}\",\"new\":\"{}\"}}",
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
