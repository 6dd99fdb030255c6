//! Two texts compared word by word, shown as `[-removed-]{+added+}` (the notation of
//! `wdiff` and `git diff --word-diff=plain`), for the readable difference of docs/design.md §9.

use std::fmt;

/// The most cells of the comparison table (words of one text times words of the other, after
/// the common beginning and end are set aside). Beyond it the differing middle is shown as one
/// replacement: memory stays bounded whatever a server serves.
const MAX_TABLE_CELLS: usize = 1 << 20;

/// One run of a word difference.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WordSpan {
    /// Text both sides have.
    Same(String),
    /// Text replaced: what the old text had here (may be empty) and what the new one has
    /// (may be empty).
    Change {
        /// Text only the old side has.
        removed: String,
        /// Text only the new side has.
        added: String,
    },
}

/// Two texts compared word by word.
///
/// Words are maximal runs of non-whitespace; the whitespace between them is compared too, so
/// concatenating the `Same` and `removed` parts gives the old text back, and the `Same` and
/// `added` parts the new one. A change separated from the next only by whitespace both sides
/// share is shown as one change, which reads better than alternating fragments.
///
/// `Display` writes unchanged text as it is (a run of more than a dozen words next to a change
/// is cut to the dozen nearest it, with `…`), a change as `[-removed-]{+added+}`, and escapes
/// what a terminal would not show as itself: `\n`, `\r`, `\t`, `\\`, and every other control,
/// format, bidirectional, zero-width or tag character as `\u{XXXX}` (so an invisible injection
/// is visible in the difference, and a hostile text cannot reorder or break the line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WordDiff {
    spans: Vec<WordSpan>,
}

impl WordDiff {
    /// The difference from `old` to `new`.
    pub fn between(old: &str, new: &str) -> WordDiff {
        let old_words = tokens(old);
        let new_words = tokens(new);
        let prefix = old_words
            .iter()
            .zip(&new_words)
            .take_while(|(a, b)| a == b)
            .count();
        let suffix = old_words[prefix..]
            .iter()
            .rev()
            .zip(new_words[prefix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let old_middle = &old_words[prefix..old_words.len() - suffix];
        let new_middle = &new_words[prefix..new_words.len() - suffix];

        let mut builder = SpanBuilder::default();
        for word in &old_words[..prefix] {
            builder.same(word);
        }
        if old_middle.len().saturating_mul(new_middle.len()) <= MAX_TABLE_CELLS {
            for step in longest_common(old_middle, new_middle) {
                match step {
                    Step::Same(word) => builder.same(word),
                    Step::Removed(word) => builder.removed(word),
                    Step::Added(word) => builder.added(word),
                }
            }
        } else {
            for word in old_middle {
                builder.removed(word);
            }
            for word in new_middle {
                builder.added(word);
            }
        }
        for word in &old_words[old_words.len() - suffix..] {
            builder.same(word);
        }
        WordDiff {
            spans: builder.finish(),
        }
    }

    /// The runs, in text order.
    pub fn spans(&self) -> &[WordSpan] {
        &self.spans
    }

    /// Whether the two texts were equal.
    pub fn is_empty(&self) -> bool {
        self.spans
            .iter()
            .all(|span| matches!(span, WordSpan::Same(_)))
    }
}

impl fmt::Display for WordDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let last = self.spans.len().saturating_sub(1);
        for (index, span) in self.spans.iter().enumerate() {
            match span {
                WordSpan::Same(text) => {
                    write_escaped(f, &shortened(text, index > 0, index < last))?;
                }
                WordSpan::Change { removed, added } => {
                    if !removed.is_empty() {
                        f.write_str("[-")?;
                        write_escaped(f, removed)?;
                        f.write_str("-]")?;
                    }
                    if !added.is_empty() {
                        f.write_str("{+")?;
                        write_escaped(f, added)?;
                        f.write_str("+}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// How many unchanged words are shown next to a change; longer unchanged runs are cut to that
/// much context, with `…` for the rest (every changed word is always shown).
const CONTEXT_WORDS: usize = 12;

/// Unchanged `text`, cut to [`CONTEXT_WORDS`] words after a change before it
/// (`after_change`) and before a change after it (`before_change`), `…` marking what is left
/// out. Short runs are kept whole.
fn shortened(text: &str, after_change: bool, before_change: bool) -> std::borrow::Cow<'_, str> {
    let words = tokens(text);
    let word_count = words.iter().filter(|token| !is_space(token)).count();
    let keep = CONTEXT_WORDS * (usize::from(after_change) + usize::from(before_change));
    // Nothing to keep means no change at all: then the text is the point. A cut must save at
    // least a context's worth of words to be worth the `…`.
    if keep == 0 || word_count <= keep + CONTEXT_WORDS {
        return text.into();
    }
    // Token positions: a word and the whitespace after it are two tokens.
    let head_end = if after_change {
        position_after_words(&words, CONTEXT_WORDS)
    } else {
        0
    };
    let tail_start = if before_change {
        words.len() - position_after_words_from_end(&words, CONTEXT_WORDS)
    } else {
        words.len()
    };
    let mut out = String::new();
    out.extend(words[..head_end].iter().copied());
    out.push('…');
    out.extend(words[tail_start..].iter().copied());
    out.into()
}

fn is_space(token: &str) -> bool {
    token.chars().all(char::is_whitespace)
}

/// The number of tokens from the start that hold `count` words and the whitespace around them.
fn position_after_words(tokens: &[&str], count: usize) -> usize {
    let mut words = 0;
    for (index, token) in tokens.iter().enumerate() {
        if !is_space(token) {
            if words == count {
                return index;
            }
            words += 1;
        }
    }
    tokens.len()
}

/// The number of tokens from the end that hold `count` words and the whitespace around them.
fn position_after_words_from_end(tokens: &[&str], count: usize) -> usize {
    let mut words = 0;
    for (index, token) in tokens.iter().rev().enumerate() {
        if !is_space(token) {
            if words == count {
                return index;
            }
            words += 1;
        }
    }
    tokens.len()
}

/// Writes `text` with the characters a terminal would not show as themselves escaped.
pub(crate) fn write_escaped(f: &mut impl fmt::Write, text: &str) -> fmt::Result {
    for character in text.chars() {
        match character {
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            '\\' => f.write_str("\\\\")?,
            c if is_hidden(c) => write!(f, "\\u{{{:04X}}}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    Ok(())
}

/// Characters that are not drawn as themselves: controls, and the format characters that are
/// invisible or change the direction of what follows (soft hyphen, Arabic letter mark,
/// Mongolian vowel separator, zero-width characters, bidirectional marks, embeddings,
/// overrides and isolates, invisible operators, the byte order mark, interlinear annotation
/// controls, variation selectors and the tag characters U+E0000–U+E007F).
pub(crate) fn is_hidden(character: char) -> bool {
    character.is_control()
        || matches!(
            character,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
                | '\u{E0100}'..='\u{E01EF}'
        )
}

/// Maximal runs of whitespace and of non-whitespace, in order.
fn tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (index, character) in text.char_indices() {
        let space = character.is_whitespace();
        if in_space.is_some_and(|previous| previous != space) {
            tokens.push(&text[start..index]);
            start = index;
        }
        in_space = Some(space);
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    tokens
}

enum Step<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// A longest common subsequence of the two token lists, as edit steps (removals before
/// additions at each point). The caller bounds `old.len() * new.len()`.
fn longest_common<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<Step<'a>> {
    let (n, m) = (old.len(), new.len());
    let width = m + 1;
    // lengths[i * width + j]: the LCS length of old[i..] and new[j..].
    let mut lengths = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i * width + j] = if old[i] == new[j] {
                lengths[(i + 1) * width + j + 1] + 1
            } else {
                lengths[(i + 1) * width + j].max(lengths[i * width + j + 1])
            };
        }
    }
    let mut steps = Vec::with_capacity(n + m);
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if old[i] == new[j] {
            steps.push(Step::Same(old[i]));
            i += 1;
            j += 1;
        } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
            steps.push(Step::Removed(old[i]));
            i += 1;
        } else {
            steps.push(Step::Added(new[j]));
            j += 1;
        }
    }
    steps.extend(old[i..].iter().map(|word| Step::Removed(word)));
    steps.extend(new[j..].iter().map(|word| Step::Added(word)));
    steps
}

/// Gathers edit steps into spans: adjacent same text joined, adjacent changes joined, and
/// whitespace shared between two changes folded into both sides of one change.
#[derive(Default)]
struct SpanBuilder {
    spans: Vec<WordSpan>,
}

impl SpanBuilder {
    fn same(&mut self, word: &str) {
        match self.spans.last_mut() {
            Some(WordSpan::Same(text)) => text.push_str(word),
            _ => self.spans.push(WordSpan::Same(word.to_owned())),
        }
    }

    fn removed(&mut self, word: &str) {
        self.change(word, "");
    }

    fn added(&mut self, word: &str) {
        self.change("", word);
    }

    /// Extends the change being built (or starts one), after folding a whitespace-only run
    /// that separates it from the previous change into both sides of that change.
    fn change(&mut self, removed: &str, added: &str) {
        let fold = matches!(
            self.spans.as_slice(),
            [.., WordSpan::Change { .. }, WordSpan::Same(gap)] if gap.chars().all(char::is_whitespace)
        );
        if fold {
            if let Some(WordSpan::Same(gap)) = self.spans.pop() {
                if let Some(WordSpan::Change { removed, added }) = self.spans.last_mut() {
                    removed.push_str(&gap);
                    added.push_str(&gap);
                }
            }
        }
        if let Some(WordSpan::Change {
            removed: old_side,
            added: new_side,
        }) = self.spans.last_mut()
        {
            old_side.push_str(removed);
            new_side.push_str(added);
            return;
        }
        self.spans.push(WordSpan::Change {
            removed: removed.to_owned(),
            added: added.to_owned(),
        });
    }

    fn finish(self) -> Vec<WordSpan> {
        self.spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(old: &str, new: &str) -> String {
        WordDiff::between(old, new).to_string()
    }

    #[test]
    fn words_removed_added_and_replaced() {
        assert_eq!(
            shown("Returns the given text.", "Returns the text."),
            "Returns the [-given -]text."
        );
        assert_eq!(
            shown("Adds two numbers.", "Adds two numbers and reports them."),
            "Adds two [-numbers.-]{+numbers and reports them.+}"
        );
        assert_eq!(
            shown("Echo the text back.", "Echo the words back."),
            "Echo the [-text-]{+words+} back."
        );
        // Two replaced words separated only by shared whitespace read as one change.
        assert_eq!(
            shown("one two three four", "one 2 3 four"),
            "one [-two three-]{+2 3+} four"
        );
        assert_eq!(shown("", "New."), "{+New.+}");
        assert_eq!(shown("Old.", ""), "[-Old.-]");
        assert_eq!(shown("same", "same"), "same");
        assert!(WordDiff::between("same", "same").is_empty());
        assert!(!WordDiff::between("a b", "a  b").is_empty());
        assert_eq!(shown("a b", "a  b"), "a[- -]{+  +}b");
    }

    #[test]
    fn hidden_characters_are_escaped() {
        assert_eq!(
            shown("Echo.", "Echo.\u{E0049}\u{E0067}"),
            "[-Echo.-]{+Echo.\\u{E0049}\\u{E0067}+}"
        );
        assert_eq!(shown("a\nb", "a\nc\u{202E}"), "a\\n[-b-]{+c\\u{202E}+}");
        assert_eq!(shown("C:\\x", "C:\\y"), "[-C:\\\\x-]{+C:\\\\y+}");
    }

    #[test]
    fn the_parts_give_both_texts_back() {
        let diff = WordDiff::between("a b c d e", "a x c  e f");
        let (mut old, mut new) = (String::new(), String::new());
        for span in diff.spans() {
            match span {
                WordSpan::Same(text) => {
                    old.push_str(text);
                    new.push_str(text);
                }
                WordSpan::Change { removed, added } => {
                    old.push_str(removed);
                    new.push_str(added);
                }
            }
        }
        assert_eq!((old.as_str(), new.as_str()), ("a b c d e", "a x c  e f"));
    }

    #[test]
    fn long_unchanged_text_is_cut_to_the_context_of_each_change() {
        let words: Vec<String> = (1..=60).map(|n| format!("w{n}")).collect();
        let old = words.join(" ");
        let new = old.replace("w30", "CHANGED");
        assert_eq!(
            shown(&old, &new),
            "… w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 [-w30-]{+CHANGED+} w31 w32 w33 \
             w34 w35 w36 w37 w38 w39 w40 w41 w42 …"
        );
        // Between two changes, both contexts; a short run is kept whole.
        let two = old.replace("w2 ", "x ").replace("w59", "y");
        assert_eq!(
            shown(&old, &two),
            "w1 [-w2-]{+x+} w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 … w47 w48 w49 w50 w51 w52 \
             w53 w54 w55 w56 w57 w58 [-w59-]{+y+} w60"
        );
        // Up to two dozen words next to one change are shown whole.
        let short: Vec<String> = (1..=24).map(|n| format!("w{n}")).collect();
        let short = short.join(" ");
        assert_eq!(
            shown(&short, &format!("{short} end")),
            format!("{short}{{+ end+}}")
        );
    }

    #[test]
    fn a_huge_middle_is_one_replacement() {
        let old = "w ".repeat(3000);
        let new = "v ".repeat(3000);
        let diff = WordDiff::between(&format!("start {old}end"), &format!("start {new}end"));
        assert_eq!(diff.spans().len(), 3);
        assert_eq!(diff.spans()[0], WordSpan::Same("start ".to_owned()));
        assert_eq!(diff.spans()[2], WordSpan::Same(" end".to_owned()));
    }
}
