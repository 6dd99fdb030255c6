//! Reading a client's request whose arguments the gateway only carries (DESIGN.md §5,
//! "Pass-through data is not rewritten").
//!
//! Definitions are hashed, so they are read strictly; a call's arguments are not, so an
//! integer beyond ±(2^53−1) in them must not fail the call. The message is still checked for
//! well-formedness: UTF-8, no duplicate member names at any depth, and nesting within the
//! strict reader's default limit.

use std::collections::HashSet;
use std::fmt;

use jcs_digest::{StrictJsonErrorKind, StrictReader, parse_strict};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a carried message is not well-formed JSON.
#[derive(Debug)]
pub(crate) enum CarriedError {
    /// What the strict reader refused (everything but an integer's range).
    Strict(jcs_digest::StrictJsonError),
    /// What the second, range-tolerant reading refused.
    Lenient(String),
}

/// Reads `bytes` strictly, except that integers outside ±(2^53−1) are kept as serde_json reads
/// them (exactly up to 64 bits, the nearest double beyond) instead of refused.
pub(crate) fn parse_carried(bytes: &[u8]) -> Result<Value, CarriedError> {
    match parse_strict(bytes) {
        Ok(value) => Ok(value),
        Err(error) if matches!(error.kind(), StrictJsonErrorKind::IntegerOutOfRange { .. }) => {
            lenient(bytes)
        }
        Err(error) => Err(CarriedError::Strict(error)),
    }
}

fn lenient(bytes: &[u8]) -> Result<Value, CarriedError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = CarriedValue
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|error| {
            // serde_json's own nesting limit (128, as the strict reader's default), in the
            // strict reader's words.
            let text = error.to_string();
            CarriedError::Lenient(match text.strip_prefix("recursion limit exceeded") {
                Some(rest) => format!(
                    "arrays and objects nested deeper than the limit of {}{rest}",
                    StrictReader::DEFAULT_MAX_DEPTH
                ),
                None => text,
            })
        })?;
    Ok(value)
}

/// A JSON value whose objects may not repeat a member name (serde_json bounds the nesting).
struct CarriedValue;

impl<'de> DeserializeSeed<'de> for CarriedValue {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CarriedValue {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(CarriedValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !seen.insert(name.clone()) {
                return Err(de::Error::custom(format!(
                    "duplicate member name {name:?}: a member name may appear once per object"
                )));
            }
            let value = map.next_value_seed(CarriedValue)?;
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn large_integers_are_carried_and_everything_else_stays_strict() {
        let value = parse_carried(br#"{"n": 9007199254740993, "m": -9007199254740993}"#).unwrap();
        assert_eq!(value["n"].as_u64(), Some(9_007_199_254_740_993));
        assert_eq!(value["m"].as_i64(), Some(-9_007_199_254_740_993));

        let duplicate = parse_carried(br#"{"n": 9007199254740993, "a": {"b": 1, "b": 2}}"#);
        let Err(CarriedError::Lenient(message)) = duplicate else {
            panic!("a duplicate member was accepted: {duplicate:?}");
        };
        assert!(
            message.starts_with("duplicate member name \"b\""),
            "{message}"
        );

        let deep = format!("[9007199254740993,{}{}]", "[".repeat(200), "]".repeat(200));
        let Err(CarriedError::Lenient(message)) = parse_carried(deep.as_bytes()) else {
            panic!("a deep document was accepted");
        };
        assert!(
            message.contains("nested deeper than the limit of 128"),
            "{message}"
        );

        // Without a large integer the strict reader's own error stands.
        assert!(matches!(
            parse_carried(br#"{"a": 1, "a": 2}"#),
            Err(CarriedError::Strict(_))
        ));
    }
}
