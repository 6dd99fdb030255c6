//! Text from the file, shown so that it stays on its line and reads as it is.

use std::fmt;

use crate::code_points::is_invisible;

/// Text as written, with control characters escaped (so that it stays on its line) and
/// invisible or direction-changing characters escaped (so that a bidirectional control cannot
/// reorder the rest of the report), as `\u{202e}`.
pub(crate) struct Printable<'a>(pub(crate) &'a str);

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for character in self.0.chars() {
            if character.is_control() || is_invisible(character) {
                write!(f, "{}", character.escape_default())?;
            } else {
                write!(f, "{character}")?;
            }
        }
        Ok(())
    }
}
