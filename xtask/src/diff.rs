//! A small line-based unified difference, enough to show why a corpus file is stale.

use std::fmt::Write as _;

/// Lines of context around each change, as `diff -u` shows them.
const CONTEXT: usize = 3;

/// Above this many line pairs the difference is summarized instead of computed (the longest
/// common subsequence table is quadratic).
const MAX_TABLE_CELLS: usize = 16_000_000;

/// One step of an edit script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// A line in both texts: (old index, new index).
    Keep(usize, usize),
    /// A line only in the old text.
    Remove(usize),
    /// A line only in the new text.
    Add(usize),
}

/// The unified difference between `old` and `new` (`---`/`+++` headers, `@@` hunks with three
/// lines of context). Empty when the texts are equal.
pub fn unified(old_name: &str, new_name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let old_lines: Vec<&str> = old.split('\n').collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    if old_lines.len().saturating_mul(new_lines.len()) > MAX_TABLE_CELLS {
        let _ = writeln!(
            out,
            "@@ files too large to compare line by line ({} and {} lines) @@",
            old_lines.len(),
            new_lines.len()
        );
        return out;
    }
    let steps = edit_script(&old_lines, &new_lines);
    for hunk in hunks(&steps) {
        let slice = &steps[hunk.0..hunk.1];
        let old_start = slice.iter().find_map(|s| match s {
            Step::Keep(o, _) | Step::Remove(o) => Some(*o),
            Step::Add(_) => None,
        });
        let new_start = slice.iter().find_map(|s| match s {
            Step::Keep(_, n) | Step::Add(n) => Some(*n),
            Step::Remove(_) => None,
        });
        let old_count = slice.iter().filter(|s| !matches!(s, Step::Add(_))).count();
        let new_count = slice
            .iter()
            .filter(|s| !matches!(s, Step::Remove(_)))
            .count();
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(old_start, old_count),
            range(new_start, new_count)
        );
        for step in slice {
            let _ = match *step {
                Step::Keep(o, _) => writeln!(out, " {}", old_lines[o]),
                Step::Remove(o) => writeln!(out, "-{}", old_lines[o]),
                Step::Add(n) => writeln!(out, "+{}", new_lines[n]),
            };
        }
    }
    out
}

/// `start,count` in 1-based lines, as unified diffs write ranges (an empty range names the
/// line before it).
fn range(start: Option<usize>, count: usize) -> String {
    match start {
        Some(start) => format!("{},{count}", start + 1),
        None => format!("0,{count}"),
    }
}

/// A shortest edit script from the longest common subsequence.
fn edit_script(old: &[&str], new: &[&str]) -> Vec<Step> {
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: length of the LCS of old[i..] and new[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut steps = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            steps.push(Step::Keep(i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Removals before additions, as `diff -u` shows a changed line.
            steps.push(Step::Remove(i));
            i += 1;
        } else {
            steps.push(Step::Add(j));
            j += 1;
        }
    }
    steps
}

/// The hunks of an edit script as `[start, end)` step ranges: each change with up to
/// [`CONTEXT`] kept lines around it, overlapping ranges merged.
fn hunks(steps: &[Step]) -> Vec<(usize, usize)> {
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        if matches!(step, Step::Keep(..)) {
            continue;
        }
        let start = index.saturating_sub(CONTEXT);
        let end = (index + 1 + CONTEXT).min(steps.len());
        match hunks.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => hunks.push((start, end)),
        }
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_difference() {
        assert_eq!(unified("a", "b", "x\ny\n", "x\ny\n"), "");
    }

    #[test]
    fn one_changed_line_is_one_hunk_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        assert_eq!(
            unified("old", "new", old, new),
            "--- old\n+++ new\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn a_missing_trailing_newline_shows() {
        assert_eq!(
            unified("old", "new", "a\nb", "a\nb\n"),
            "--- old\n+++ new\n@@ -1,2 +1,3 @@\n a\n b\n+\n"
        );
    }
}
