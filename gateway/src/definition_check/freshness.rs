//! How fresh the listing a definition check uses must be (docs/design.md §5, "Definition check
//! freshness").

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How fresh the upstream listing behind a definition check must be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Freshness {
    /// `per-call` (the default, as seed 003 §4 step 9 says): every check uses a listing that
    /// started after the call arrived.
    #[default]
    PerCall,
    /// `max-age=DURATION`: a listing younger than the duration is reused, until the upstream
    /// announces `notifications/tools/list_changed` or reconnects.
    MaxAge(Duration),
}

impl Freshness {
    /// The longest `max-age` accepted: past it a definition check no longer says much about
    /// the definition in use (docs/design.md §5 asks for a bounded `max-age`).
    pub const MAX_AGE_LIMIT: Duration = Duration::from_secs(3600);
}

impl fmt::Display for Freshness {
    /// `per-call`, or `max-age=` and the duration in the largest unit that writes it exactly
    /// (`max-age=30s`, `max-age=1500ms`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Freshness::PerCall => f.write_str("per-call"),
            Freshness::MaxAge(age) => {
                let millis = age.as_millis();
                if millis % 3_600_000 == 0 {
                    write!(f, "max-age={}h", millis / 3_600_000)
                } else if millis % 60_000 == 0 {
                    write!(f, "max-age={}m", millis / 60_000)
                } else if millis % 1000 == 0 {
                    write!(f, "max-age={}s", millis / 1000)
                } else {
                    write!(f, "max-age={millis}ms")
                }
            }
        }
    }
}

/// A text that is not a [`Freshness`].
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FreshnessParseError {
    /// Neither `per-call` nor `max-age=…`.
    #[error(
        "unknown definition-check freshness {input:?}; use \"per-call\" or \"max-age=DURATION\" (e.g. max-age=30s)"
    )]
    Unknown {
        /// The text given.
        input: String,
    },
    /// The duration after `max-age=` does not read.
    #[error(
        "invalid duration {input:?} in max-age; write a whole number and a unit: ms, s, m or h \
         (e.g. 500ms, 30s, 5m)"
    )]
    Duration {
        /// The duration text.
        input: String,
    },
    /// `max-age=0`, which would never reuse a listing: that is `per-call`.
    #[error(
        "max-age must be more than zero; use \"per-call\" to check against a new listing on every call"
    )]
    Zero,
    /// Longer than [`Freshness::MAX_AGE_LIMIT`].
    #[error(
        "max-age={input} is longer than the limit of one hour; a definition check must be bounded in age"
    )]
    TooLong {
        /// The duration text.
        input: String,
    },
}

impl FromStr for Freshness {
    type Err = FreshnessParseError;

    /// `per-call`, or `max-age=` followed by a whole number and a unit (`ms`, `s`, `m`, `h`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "per-call" {
            return Ok(Freshness::PerCall);
        }
        let Some(duration) = text.strip_prefix("max-age=") else {
            return Err(FreshnessParseError::Unknown {
                input: text.to_owned(),
            });
        };
        let age = parse_duration(duration).ok_or_else(|| FreshnessParseError::Duration {
            input: duration.to_owned(),
        })?;
        if age.is_zero() {
            return Err(FreshnessParseError::Zero);
        }
        if age > Freshness::MAX_AGE_LIMIT {
            return Err(FreshnessParseError::TooLong {
                input: duration.to_owned(),
            });
        }
        Ok(Freshness::MaxAge(age))
    }
}

/// `<digits><unit>`, unit one of `ms`, `s`, `m`, `h`.
fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    if digits.is_empty() || digits.len() > 12 {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    let millis_per_unit = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    Some(Duration::from_millis(amount.checked_mul(millis_per_unit)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays() {
        for (text, freshness, shown) in [
            ("per-call", Freshness::PerCall, "per-call"),
            (
                "max-age=30s",
                Freshness::MaxAge(Duration::from_secs(30)),
                "max-age=30s",
            ),
            (
                "max-age=500ms",
                Freshness::MaxAge(Duration::from_millis(500)),
                "max-age=500ms",
            ),
            (
                "max-age=5m",
                Freshness::MaxAge(Duration::from_secs(300)),
                "max-age=5m",
            ),
            (
                "max-age=1h",
                Freshness::MaxAge(Duration::from_secs(3600)),
                "max-age=1h",
            ),
            (
                "max-age=90s",
                Freshness::MaxAge(Duration::from_secs(90)),
                "max-age=90s",
            ),
        ] {
            assert_eq!(text.parse::<Freshness>(), Ok(freshness), "{text}");
            assert_eq!(freshness.to_string(), shown);
        }
        assert_eq!(Freshness::default(), Freshness::PerCall);
    }

    #[test]
    fn refuses_with_a_reason() {
        let unknown = |input: &str| FreshnessParseError::Unknown {
            input: input.to_owned(),
        };
        let duration = |input: &str| FreshnessParseError::Duration {
            input: input.to_owned(),
        };
        assert_eq!("percall".parse::<Freshness>(), Err(unknown("percall")));
        assert_eq!("30s".parse::<Freshness>(), Err(unknown("30s")));
        assert_eq!("max-age=".parse::<Freshness>(), Err(duration("")));
        assert_eq!("max-age=30".parse::<Freshness>(), Err(duration("30")));
        assert_eq!("max-age=1.5s".parse::<Freshness>(), Err(duration("1.5s")));
        assert_eq!("max-age=-1s".parse::<Freshness>(), Err(duration("-1s")));
        assert_eq!("max-age=3d".parse::<Freshness>(), Err(duration("3d")));
        assert_eq!(
            "max-age=99999999999999s".parse::<Freshness>(),
            Err(duration("99999999999999s"))
        );
        assert_eq!(
            "max-age=0s".parse::<Freshness>(),
            Err(FreshnessParseError::Zero)
        );
        assert_eq!(
            "max-age=61m".parse::<Freshness>(),
            Err(FreshnessParseError::TooLong {
                input: "61m".to_owned()
            })
        );
        assert_eq!(
            unknown("x").to_string(),
            "unknown definition-check freshness \"x\"; use \"per-call\" or \"max-age=DURATION\" (e.g. max-age=30s)"
        );
    }
}
