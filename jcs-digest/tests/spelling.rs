//! Writes a JSON value as text in one of its many spellings, chosen by a seed: random
//! whitespace between tokens, members in a random order, characters escaped or not (short
//! escapes, `\u` in either case, surrogate pairs), and numbers written in different but
//! equivalent ways (`15`, `1.5e1`, `15.000`, `1.5E+1`, `150e-1`). Every spelling reads back
//! as the same value, so it has the same canonical bytes and digests.
//!
//! Shared with catalog-fold's tests through `#[path]`.

#![allow(dead_code)]

use serde_json::{Number, Value};

/// SplitMix64: a small deterministic generator.
pub struct Spelling(u64);

impl Spelling {
    pub fn new(seed: u64) -> Self {
        Spelling(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Whitespace, usually none.
    pub fn space(&mut self, out: &mut String) {
        const SPACES: [&str; 8] = ["", "", "", " ", "\n", "\t", "\r\n  ", "  "];
        out.push_str(SPACES[self.below(SPACES.len())]);
    }

    /// `value`, spelled.
    pub fn value(&mut self, value: &Value, out: &mut String) {
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(number) => self.number(number, out),
            Value::String(text) => self.string(text, out),
            Value::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    self.space(out);
                    self.value(item, out);
                    self.space(out);
                }
                if items.is_empty() {
                    self.space(out);
                }
                out.push(']');
            }
            Value::Object(members) => {
                let mut members: Vec<(&String, &Value)> = members.iter().collect();
                // Fisher–Yates: the input order must not matter.
                for i in (1..members.len()).rev() {
                    members.swap(i, self.below(i + 1));
                }
                out.push('{');
                for (index, (name, member)) in members.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    self.space(out);
                    self.string(name, out);
                    self.space(out);
                    out.push(':');
                    self.space(out);
                    self.value(member, out);
                    self.space(out);
                }
                if members.is_empty() {
                    self.space(out);
                }
                out.push('}');
            }
        }
    }

    /// A string with each character raw or escaped at random (raw only where JSON allows).
    pub fn string(&mut self, text: &str, out: &mut String) {
        out.push('"');
        for c in text.chars() {
            let must_escape = c == '"' || c == '\\' || c < ' ';
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '/' => Some("\\/"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                _ => None,
            };
            match self.below(4) {
                0 | 1 if !must_escape => out.push(c),
                2 if short.is_some() => out.push_str(short.unwrap_or_default()),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        if self.below(2) == 0 {
                            out.push_str(&format!("\\u{unit:04x}"));
                        } else {
                            out.push_str(&format!("\\u{unit:04X}"));
                        }
                    }
                }
            }
        }
        out.push('"');
    }

    /// A number in one of several spellings of the same value.
    pub fn number(&mut self, number: &Number, out: &mut String) {
        if let Some(integer) = number
            .as_i64()
            .or_else(|| number.as_u64().map(|u| u as i64))
        {
            let spelled = match self.below(5) {
                0 if integer == 0 => "-0".to_owned(),
                1 => format!("{integer}.0"),
                2 => format!("{integer}e0"),
                3 if integer != 0 => format!("{integer}0E-1"),
                _ => integer.to_string(),
            };
            out.push_str(&spelled);
            return;
        }
        let double = number.as_f64().unwrap_or(0.0);
        let spelled = match self.below(5) {
            0 => format!("{double:E}"),
            1 => {
                // Exponent form with extra zeros in the mantissa and an explicit sign.
                let text = format!("{double:e}");
                let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
                let mantissa = if mantissa.contains('.') {
                    format!("{mantissa}000")
                } else {
                    format!("{mantissa}.000")
                };
                match exponent.strip_prefix('-') {
                    Some(magnitude) => format!("{mantissa}e-{magnitude}"),
                    None => format!("{mantissa}E+{exponent}"),
                }
            }
            2 => {
                // Positional form, always with a fraction so it is not an integer literal.
                let text = format!("{double}");
                if text.contains('.') {
                    text
                } else {
                    format!("{text}.0")
                }
            }
            _ => format!("{double:e}"),
        };
        out.push_str(&spelled);
    }
}

/// `value` in the spelling chosen by `seed`, with whitespace around it.
pub fn spell(value: &Value, seed: u64) -> String {
    let mut spelling = Spelling::new(seed);
    let mut out = String::new();
    spelling.space(&mut out);
    spelling.value(value, &mut out);
    spelling.space(&mut out);
    out
}
