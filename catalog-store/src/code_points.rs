//! Code points, shown as `U+XXXX`: how a report names characters a person cannot see.

use std::fmt;

/// How many code points a report shows before it only counts the rest.
const SHOWN: usize = 8;

/// Characters found in a text, in order of appearance (each occurrence, repeats included).
///
/// `Display` writes them as `U+0007 U+001B`; beyond eight it shows the first eight, then
/// `… (29 in all)`, so a long hidden text cannot flood a report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodePoints(Vec<char>);

impl CodePoints {
    /// The characters of `text` for which `select` holds, in order.
    pub fn of(text: &str, select: impl Fn(char) -> bool) -> CodePoints {
        CodePoints(text.chars().filter(|c| select(*c)).collect())
    }

    /// The characters, in order of appearance.
    pub fn chars(&self) -> &[char] {
        &self.0
    }

    /// How many were found.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for CodePoints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, character) in self.0.iter().take(SHOWN).enumerate() {
            if position > 0 {
                f.write_str(" ")?;
            }
            write!(f, "U+{:04X}", u32::from(*character))?;
        }
        if self.0.len() > SHOWN {
            write!(f, " … ({} in all)", self.0.len())?;
        }
        Ok(())
    }
}

/// Whether `character` is one the approver cannot see or that changes the direction of what
/// they see: a Unicode tag character (U+E0000–U+E007F), a bidirectional control (U+061C,
/// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) or a zero-width character (U+200B, U+200C,
/// U+200D, U+2060, U+FEFF).
pub fn is_invisible(character: char) -> bool {
    matches!(
        character,
        '\u{E0000}'..='\u{E007F}'
            | '\u{061C}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200B}'
            | '\u{200C}'
            | '\u{200D}'
            | '\u{2060}'
            | '\u{FEFF}'
    )
}

#[cfg(test)]
mod unit {
    use super::CodePoints;

    #[test]
    fn shows_eight_then_counts() {
        assert_eq!(
            CodePoints::of("a\u{7}b\u{1b}", char::is_control).to_string(),
            "U+0007 U+001B"
        );
        assert_eq!(
            CodePoints::of(&"\u{200b}".repeat(9), |_| true).to_string(),
            "U+200B U+200B U+200B U+200B U+200B U+200B U+200B U+200B … (9 in all)"
        );
        assert_eq!(CodePoints::of("\u{E0041}", |_| true).to_string(), "U+E0041");
    }
}
