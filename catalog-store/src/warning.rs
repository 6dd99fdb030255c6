//! Warnings that do not refuse a catalog: names outside MCP's recommended form, lookalike
//! names across servers and names equal after NFC (the shadowing that exact name collisions,
//! seed 003 §3, do not catch), and invisible or direction-changing characters in names and
//! approved definitions (docs/design.md §9).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use unicode_normalization::UnicodeNormalization;

use crate::code_points::{CodePoints, is_invisible};
use crate::entry::CatalogEntry;
use crate::invisible::InvisibleText;

/// The longest tool name MCP recommends, in characters.
const RECOMMENDED_MAX_LEN: usize = 128;

/// Something a catalog author should look at; the catalog loads all the same.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogWarning {
    /// A `tool_name` outside MCP's recommended `[A-Za-z0-9_.-]{1,128}`.
    NameNotRecommended {
        /// The entry's index.
        index: usize,
        /// The name.
        tool_name: String,
        /// The first character outside `[A-Za-z0-9_.-]`, if any.
        character: Option<char>,
        /// The name's length in characters.
        length: usize,
    },
    /// Two names on different servers that are equal ignoring case, or equal once `-`, `_`
    /// and `.` are removed and case is ignored: a client or a model may call one meaning the
    /// other. Each such entry is reported once, against the earliest lookalike on another
    /// server.
    Lookalike {
        /// The later entry's index.
        index: usize,
        /// The later entry's name.
        tool_name: String,
        /// The later entry's `server.url` (for a local server, its command and program).
        url: String,
        /// The earlier entry's index.
        other_index: usize,
        /// The earlier entry's name.
        other_tool_name: String,
        /// The earlier entry's `server.url` (for a local server, its command and program).
        other_url: String,
        /// Which comparison found them alike.
        rule: LookalikeRule,
    },
    /// Two names that are equal after Unicode NFC normalization but differ as written
    /// (`café` with U+00E9, `café` with `e` + U+0301): they look the same to a person and may
    /// be one name to a client that normalizes, but are two names to the gateway. Reported
    /// whatever the servers, against the earliest such name.
    NormalizationCollision {
        /// The later entry's index.
        index: usize,
        /// The later entry's name.
        tool_name: String,
        /// The earlier entry's index.
        other_index: usize,
        /// The earlier entry's name.
        other_tool_name: String,
    },
    /// A text of the approved definition (a string value or a member name, found by
    /// [`invisible_text`](crate::invisible_text)) holds invisible or direction-changing
    /// characters: what the approver saw is not what the model reads (docs/design.md §9).
    InvisibleCharacters {
        /// The entry's index.
        index: usize,
        /// The entry's name.
        tool_name: String,
        /// Where in the approved definition, and which characters.
        text: InvisibleText,
    },
    /// The `tool_name` holds invisible or direction-changing characters (reported here only
    /// when it differs from `upstream_name`; otherwise the definition's `/name` reports them).
    InvisibleCharactersInName {
        /// The entry's index.
        index: usize,
        /// The entry's name.
        tool_name: String,
        /// The characters, in order of appearance.
        code_points: CodePoints,
    },
}

/// How two lookalike names compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LookalikeRule {
    /// Equal ignoring case (`Salesforce.Query`, `salesforce.query`).
    Case,
    /// Equal once `-`, `_` and `.` are removed and case is ignored (`sales-force.query`,
    /// `salesforce_query`), but not equal ignoring case alone.
    Separators,
}

impl fmt::Display for CatalogWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogWarning::NameNotRecommended {
                index,
                tool_name,
                character,
                length,
            } => {
                write!(f, "entry {index} (tool_name {tool_name:?}): ")?;
                match character {
                    Some(character) => write!(
                        f,
                        "the name contains {character:?}, outside MCP's recommended tool name characters [A-Za-z0-9_.-]"
                    )?,
                    None => write!(
                        f,
                        "the name is {length} characters long, over MCP's recommended {RECOMMENDED_MAX_LEN}"
                    )?,
                }
                f.write_str(
                    "; some clients refuse or alter such names: consider renaming the tool \
                     (upstream_name keeps the upstream's own name)",
                )
            }
            CatalogWarning::Lookalike {
                index,
                tool_name,
                url,
                other_index,
                other_tool_name,
                other_url,
                rule,
            } => {
                let (how, differ) = match rule {
                    LookalikeRule::Case => ("equal ignoring case", "case"),
                    LookalikeRule::Separators => (
                        "equal once '-', '_' and '.' are removed and case is ignored",
                        "punctuation and case",
                    ),
                };
                write!(
                    f,
                    "entry {index} (tool_name {tool_name:?}) on {url} looks like entry \
                     {other_index} (tool_name {other_tool_name:?}) on {other_url}: the names are \
                     {how}, so a client or model may call one meaning the other; rename one so \
                     that they differ in more than {differ}"
                )
            }
            CatalogWarning::NormalizationCollision {
                index,
                tool_name,
                other_index,
                other_tool_name,
            } => write!(
                f,
                "entry {index} (tool_name {tool_name:?}, non-ASCII: {}) and entry {other_index} \
                 (tool_name {other_tool_name:?}, non-ASCII: {}) are one name after Unicode NFC \
                 normalization but differ as written: they look the same to a person, and a \
                 client that normalizes names calls one meaning the other; write the names in \
                 NFC and rename one",
                NonAscii(tool_name),
                NonAscii(other_tool_name),
            ),
            CatalogWarning::InvisibleCharacters {
                index,
                tool_name,
                text,
            } => write!(
                f,
                "entry {index} (tool_name {tool_name:?}): approved_definition {text}; what a \
                 person approves must be what the model reads: remove them, or make sure they \
                 belong there"
            ),
            CatalogWarning::InvisibleCharactersInName {
                index,
                tool_name,
                code_points,
            } => write!(
                f,
                "entry {index} (tool_name {tool_name:?}): tool_name holds {} invisible or \
                 direction-changing character{} ({code_points}); a person cannot tell the name \
                 from one without them: remove them",
                code_points.len(),
                if code_points.len() == 1 { "" } else { "s" },
            ),
        }
    }
}

/// Every warning for `entries`, sorted by entry index (name warnings first for an entry).
pub(crate) fn find_warnings(
    entries: &[CatalogEntry],
    server_keys: &[Cow<'_, str>],
    invisible: Vec<Vec<InvisibleText>>,
) -> Vec<CatalogWarning> {
    let mut warnings: Vec<CatalogWarning> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| name_warning(index, entry))
        .collect();
    warnings.extend(lookalikes(entries, server_keys));
    warnings.extend(normalization_collisions(entries));
    warnings.extend(invisible_characters(entries, invisible));
    // Stable: warnings of one kind keep their order.
    warnings.sort_by_key(|warning| match warning {
        CatalogWarning::NameNotRecommended { index, .. } => (*index, 0),
        CatalogWarning::Lookalike { index, .. } => (*index, 1),
        CatalogWarning::NormalizationCollision { index, .. } => (*index, 2),
        CatalogWarning::InvisibleCharactersInName { index, .. } => (*index, 3),
        CatalogWarning::InvisibleCharacters { index, .. } => (*index, 4),
    });
    warnings
}

fn name_warning(index: usize, entry: &CatalogEntry) -> Option<CatalogWarning> {
    let name = entry.tool_name();
    let character = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')));
    let length = name.chars().count();
    (character.is_some() || length > RECOMMENDED_MAX_LEN).then(|| {
        CatalogWarning::NameNotRecommended {
            index,
            tool_name: name.to_owned(),
            character,
            length,
        }
    })
}

/// Groups names by their folded form (separators removed, lowercase). In each group, an entry
/// is paired with the earliest entry on another server: the group's first entry, or, when that
/// one shares the entry's server, the first entry on any other server. Linear in the entries.
fn lookalikes(entries: &[CatalogEntry], server_keys: &[Cow<'_, str>]) -> Vec<CatalogWarning> {
    struct Group {
        first: usize,
        first_on_other_server: Option<usize>,
    }
    let mut groups: HashMap<String, Group> = HashMap::with_capacity(entries.len());
    let mut warnings = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let folded = fold_separators_and_case(entry.tool_name());
        let Some(group) = groups.get_mut(&folded) else {
            groups.insert(
                folded,
                Group {
                    first: index,
                    first_on_other_server: None,
                },
            );
            continue;
        };
        let partner = if server_keys[index] != server_keys[group.first] {
            group.first_on_other_server.get_or_insert(index);
            Some(group.first)
        } else {
            group.first_on_other_server
        };
        let Some(partner) = partner else { continue };
        let (this, other) = (entry, &entries[partner]);
        let rule = if this.tool_name().to_lowercase() == other.tool_name().to_lowercase() {
            LookalikeRule::Case
        } else {
            LookalikeRule::Separators
        };
        warnings.push(CatalogWarning::Lookalike {
            index,
            tool_name: this.tool_name().to_owned(),
            url: this.server().location_text(),
            other_index: partner,
            other_tool_name: other.tool_name().to_owned(),
            other_url: other.server().location_text(),
            rule,
        });
    }
    warnings
}

fn fold_separators_and_case(name: &str) -> String {
    // An ASCII name (most are) is folded byte by byte: the same text, without decoding.
    if name.is_ascii() {
        return name
            .bytes()
            .filter(|byte| !matches!(byte, b'-' | b'_' | b'.'))
            .map(|byte| char::from(byte.to_ascii_lowercase()))
            .collect();
    }
    fold_decoded(name)
}

/// [`fold_separators_and_case`] of any name, character by character.
fn fold_decoded(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Names equal after NFC but different as written, each paired with the earliest name of its
/// NFC form. An ASCII name is its own NFC form, but a non-ASCII one may normalize to it
/// (U+212A KELVIN SIGN is `K`).
fn normalization_collisions(entries: &[CatalogEntry]) -> Vec<CatalogWarning> {
    let mut first_by_form: HashMap<Cow<'_, str>, usize> = HashMap::with_capacity(entries.len());
    let mut warnings = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let name = entry.tool_name();
        let form: Cow<'_, str> = if name.is_ascii() {
            Cow::Borrowed(name)
        } else {
            Cow::Owned(name.nfc().collect())
        };
        let first = *first_by_form.entry(form).or_insert(index);
        let other = &entries[first];
        // Equal as written is a duplicate tool name, already an error; it cannot load.
        if first != index && other.tool_name() != name {
            warnings.push(CatalogWarning::NormalizationCollision {
                index,
                tool_name: name.to_owned(),
                other_index: first,
                other_tool_name: other.tool_name().to_owned(),
            });
        }
    }
    warnings
}

/// The non-ASCII code points of a name, or `none`.
struct NonAscii<'a>(&'a str);

impl fmt::Display for NonAscii<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let found = CodePoints::of(self.0, |c| !c.is_ascii());
        if found.is_empty() {
            f.write_str("none")
        } else {
            write!(f, "{found}")
        }
    }
}

/// Invisible or direction-changing characters in each entry's `tool_name` (when it is not also
/// the definition's `name`) and approved definition (`invisible`: [`invisible_text`](crate::invisible_text) of each
/// entry's, in order, found on the thread that read the entry).
fn invisible_characters(
    entries: &[CatalogEntry],
    invisible: Vec<Vec<InvisibleText>>,
) -> Vec<CatalogWarning> {
    let mut warnings = Vec::new();
    for ((index, entry), texts) in entries.iter().enumerate().zip(invisible) {
        let tool_name = entry.tool_name();
        if tool_name != entry.upstream_name() && tool_name.chars().any(is_invisible) {
            warnings.push(CatalogWarning::InvisibleCharactersInName {
                index,
                tool_name: tool_name.to_owned(),
                code_points: CodePoints::of(tool_name, is_invisible),
            });
        }
        warnings.extend(
            texts
                .into_iter()
                .map(|text| CatalogWarning::InvisibleCharacters {
                    index,
                    tool_name: tool_name.to_owned(),
                    text,
                }),
        );
    }
    warnings
}

#[cfg(test)]
mod unit {
    use super::{fold_decoded, fold_separators_and_case};

    /// The byte-by-byte fold of an ASCII name is the character-by-character one.
    #[test]
    fn an_ascii_name_folds_as_it_decodes() {
        for name in [
            "",
            "a",
            "Sales-Force.Query_X",
            "ABC-def_.~",
            "x.y",
            "-_.",
            "Z9 z",
        ] {
            assert_eq!(
                fold_separators_and_case(name),
                fold_decoded(name),
                "{name:?}"
            );
        }
        assert_eq!(
            fold_separators_and_case("Sales-Force.Query"),
            "salesforcequery"
        );
        assert_eq!(fold_separators_and_case("ÀB-c"), "àbc");
    }
}
