//! `UtcTimestamp`: an instant in UTC, read from and written as RFC 3339 text, without a
//! date-time dependency. Certificate validity dates are its first use; it is meant to be the
//! one RFC 3339 type of the workspace (audit times, catalog `added_at`).

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds from 1970-01-01T00:00:00Z to 0000-01-01T00:00:00Z.
const MIN_SECONDS: i64 = -62_167_219_200;
/// Seconds from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
const MAX_SECONDS: i64 = 253_402_300_799;
const NANOS_PER_SECOND: u32 = 1_000_000_000;

/// An instant in UTC, from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z (the years
/// RFC 3339 can write), to the nanosecond: seconds since the Unix epoch and a fraction.
///
/// - [`FromStr`] reads an RFC 3339 §5.6 `date-time`: `YYYY-MM-DDTHH:MM:SS`, an optional
///   fraction (any number of digits; beyond nanoseconds they are dropped), then `Z` or an offset
///   `±HH:MM` (converted to UTC; `-00:00` is UTC). `T` and `Z` may be lowercase, as the RFC's
///   ABNF allows; a space instead of `T` is refused. A leap second (`:60`, RFC 3339 §5.7) reads
///   as the instant one second after `:59`, as POSIX time counts it (there is no `:60` instant
///   in seconds since the epoch), so `23:59:60Z` and the next day's `00:00:00Z` are equal.
/// - [`Display`](fmt::Display) writes UTC with `Z`: `2026-06-01T00:00:00Z`, with the fraction
///   only when it is not zero, in as few digits as it takes (`…:00.5Z`). A precision writes
///   exactly that many fraction digits, truncated: `format!("{t:.6}")` gives
///   `2026-06-01T00:00:00.000000Z` (microseconds, as an audit record writes them), `{t:.0}` none.
///
/// Order and equality are those of the instants.
///
/// ```
/// use server_identity::UtcTimestamp;
///
/// let t: UtcTimestamp = "2026-06-01T02:00:00.25+02:00".parse()?;
/// assert_eq!(t.unix_seconds(), 1_780_272_000);
/// assert_eq!(t.to_string(), "2026-06-01T00:00:00.25Z");
/// assert_eq!(format!("{t:.6}"), "2026-06-01T00:00:00.250000Z");
/// assert_eq!(UtcTimestamp::from_unix_seconds(0)?.to_string(), "1970-01-01T00:00:00Z");
/// # Ok::<(), server_identity::TimestampError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UtcTimestamp {
    seconds: i64,
    nanos: u32,
}

/// Why a text or a value is not a [`UtcTimestamp`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimestampError {
    /// The text is not an RFC 3339 date-time; `reason` names the first rule it breaks.
    #[error(
        "not an RFC 3339 date-time ({reason}); expected YYYY-MM-DDTHH:MM:SS[.fraction] then Z \
         or +HH:MM/-HH:MM, e.g. 2026-06-01T00:00:00Z"
    )]
    Syntax {
        /// The first rule broken, e.g. `the month is outside 01-12`.
        reason: &'static str,
    },
    /// The instant is before year 0000 or after year 9999 in UTC.
    #[error(
        "{unix_seconds} s since 1970 is outside 0000-01-01T00:00:00Z..9999-12-31T23:59:59Z, \
         which is all RFC 3339 can write"
    )]
    OutOfRange {
        /// The instant, in seconds since 1970-01-01T00:00:00Z (negative before).
        unix_seconds: i128,
    },
    /// A fraction of a second of one second or more.
    #[error("{nanos} ns is not a fraction of a second (at most 999999999)")]
    Nanos {
        /// The value given.
        nanos: u32,
    },
}

impl UtcTimestamp {
    /// 1970-01-01T00:00:00Z.
    pub const UNIX_EPOCH: UtcTimestamp = UtcTimestamp {
        seconds: 0,
        nanos: 0,
    };

    /// The instant `seconds` after 1970-01-01T00:00:00Z (before it when negative).
    ///
    /// # Errors
    ///
    /// [`TimestampError::OutOfRange`] outside the years 0000 to 9999.
    pub fn from_unix_seconds(seconds: i64) -> Result<UtcTimestamp, TimestampError> {
        UtcTimestamp::from_unix(seconds, 0)
    }

    /// The instant `seconds` and `nanos` nanoseconds after 1970-01-01T00:00:00Z.
    ///
    /// # Errors
    ///
    /// [`TimestampError::OutOfRange`] outside the years 0000 to 9999;
    /// [`TimestampError::Nanos`] when `nanos` is a second or more.
    pub fn from_unix(seconds: i64, nanos: u32) -> Result<UtcTimestamp, TimestampError> {
        if nanos >= NANOS_PER_SECOND {
            return Err(TimestampError::Nanos { nanos });
        }
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&seconds) {
            return Err(TimestampError::OutOfRange {
                unix_seconds: i128::from(seconds),
            });
        }
        Ok(UtcTimestamp { seconds, nanos })
    }

    /// A system clock reading (`SystemTime::now()`), to the nanosecond.
    ///
    /// # Errors
    ///
    /// [`TimestampError::OutOfRange`] for a time outside the years 0000 to 9999.
    pub fn from_system_time(time: SystemTime) -> Result<UtcTimestamp, TimestampError> {
        let (seconds, nanos) = match time.duration_since(UNIX_EPOCH) {
            Ok(after) => (i128::from(after.as_secs()), after.subsec_nanos()),
            Err(before) => {
                let before = before.duration();
                // 1.25 s before the epoch is -2 s plus 0.75 s.
                match before.subsec_nanos() {
                    0 => (-i128::from(before.as_secs()), 0),
                    n => (-i128::from(before.as_secs()) - 1, NANOS_PER_SECOND - n),
                }
            }
        };
        let seconds = i64::try_from(seconds).map_err(|_| TimestampError::OutOfRange {
            unix_seconds: seconds,
        })?;
        UtcTimestamp::from_unix(seconds, nanos)
    }

    /// Whole seconds since 1970-01-01T00:00:00Z (negative before; the fraction is not rounded).
    pub const fn unix_seconds(self) -> i64 {
        self.seconds
    }

    /// The fraction of the second, in nanoseconds (0 to 999999999).
    pub const fn subsec_nanos(self) -> u32 {
        self.nanos
    }
}

impl From<UtcTimestamp> for SystemTime {
    fn from(time: UtcTimestamp) -> SystemTime {
        let whole = Duration::from_secs(time.seconds.unsigned_abs());
        let fraction = Duration::from_nanos(u64::from(time.nanos));
        if time.seconds >= 0 {
            UNIX_EPOCH + whole + fraction
        } else {
            UNIX_EPOCH - whole + fraction
        }
    }
}

impl fmt::Display for UtcTimestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.seconds.div_euclid(86_400);
        let second_of_day = self.seconds.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            second_of_day / 3600,
            second_of_day / 60 % 60,
            second_of_day % 60
        )?;
        // The fraction is written digit by digit from the number, without an intermediate
        // string (an audit entry writes one per call).
        match f.precision() {
            Some(0) => {}
            Some(digits) if digits <= 9 => {
                let kept = self.nanos / 10u32.pow((9 - digits) as u32);
                write!(f, ".{kept:0digits$}")?;
            }
            Some(digits) => write!(f, ".{:09}{:0<pad$}", self.nanos, "", pad = digits - 9)?,
            None if self.nanos == 0 => {}
            None => {
                let (mut kept, mut width) = (self.nanos, 9);
                while kept % 10 == 0 {
                    kept /= 10;
                    width -= 1;
                }
                write!(f, ".{kept:0width$}")?;
            }
        }
        f.write_str("Z")
    }
}

impl fmt::Debug for UtcTimestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UtcTimestamp({self})")
    }
}

impl FromStr for UtcTimestamp {
    type Err = TimestampError;

    fn from_str(text: &str) -> Result<UtcTimestamp, TimestampError> {
        let syntax = |reason| TimestampError::Syntax { reason };
        let bytes = text.as_bytes();
        // full-date "T" partial-time: YYYY-MM-DDTHH:MM:SS, 19 bytes before the fraction or offset.
        if bytes.len() < 20 {
            return Err(syntax("too short for YYYY-MM-DDTHH:MM:SSZ"));
        }
        let year = digits(bytes, 0, 4).ok_or(syntax("the year must be 4 digits"))?;
        expect(bytes, 4, b'-', "expected '-' after the year")?;
        let month = digits(bytes, 5, 2).ok_or(syntax("the month must be 2 digits"))?;
        expect(bytes, 7, b'-', "expected '-' after the month")?;
        let day = digits(bytes, 8, 2).ok_or(syntax("the day must be 2 digits"))?;
        // RFC 3339 §5.6's ABNF is case-insensitive; the note allowing a space is for
        // applications that choose it, and we do not.
        if !matches!(bytes[10], b'T' | b't') {
            return Err(syntax("expected 'T' between the date and the time"));
        }
        let hour = digits(bytes, 11, 2).ok_or(syntax("the hour must be 2 digits"))?;
        expect(bytes, 13, b':', "expected ':' after the hour")?;
        let minute = digits(bytes, 14, 2).ok_or(syntax("the minute must be 2 digits"))?;
        expect(bytes, 16, b':', "expected ':' after the minute")?;
        let second = digits(bytes, 17, 2).ok_or(syntax("the second must be 2 digits"))?;
        if !(1..=12).contains(&month) {
            return Err(syntax("the month is outside 01-12"));
        }
        if day == 0 || day > days_in_month(year, month) {
            return Err(syntax("the day does not exist in that month"));
        }
        if hour > 23 {
            return Err(syntax("the hour is outside 00-23"));
        }
        if minute > 59 {
            return Err(syntax("the minute is outside 00-59"));
        }
        if second > 60 {
            return Err(syntax("the second is outside 00-60"));
        }

        let mut rest = &bytes[19..];
        let mut nanos = 0u32;
        if let Some((b'.', fraction)) = rest.split_first() {
            let count = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
            if count == 0 {
                return Err(syntax("expected digits after '.'"));
            }
            // The first nine digits are the nanoseconds; later ones are below our resolution.
            for position in 0..9 {
                let digit = fraction[..count].get(position).map_or(0, |b| b - b'0');
                nanos = nanos * 10 + u32::from(digit);
            }
            rest = &fraction[count..];
        }
        let offset_seconds = match rest {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), offset @ ..] => {
                if offset.len() != 5 || offset[2] != b':' {
                    return Err(syntax("the offset must be Z or +HH:MM / -HH:MM"));
                }
                let offset_hour =
                    digits(offset, 0, 2).ok_or(syntax("the offset hour must be 2 digits"))?;
                let offset_minute =
                    digits(offset, 3, 2).ok_or(syntax("the offset minute must be 2 digits"))?;
                if offset_hour > 23 || offset_minute > 59 {
                    return Err(syntax("the offset is outside -23:59..+23:59"));
                }
                let magnitude = i64::from(offset_hour * 3600 + offset_minute * 60);
                if *sign == b'+' { magnitude } else { -magnitude }
            }
            [] => return Err(syntax("the time zone offset is missing (add Z for UTC)")),
            _ => return Err(syntax("unexpected characters after the time")),
        };
        let local = days_from_civil(i64::from(year), i64::from(month), i64::from(day)) * 86_400
            + i64::from(hour * 3600 + minute * 60 + second);
        // Local time = UTC + offset.
        UtcTimestamp::from_unix(local - offset_seconds, nanos)
    }
}

/// The number written by `len` ASCII digits at `start`, or `None` if any is not a digit.
fn digits(bytes: &[u8], start: usize, len: usize) -> Option<u32> {
    let field = bytes.get(start..start + len)?;
    field.iter().try_fold(0u32, |value, byte| {
        byte.is_ascii_digit()
            .then(|| value * 10 + u32::from(byte - b'0'))
    })
}

fn expect(bytes: &[u8], at: usize, want: u8, reason: &'static str) -> Result<(), TimestampError> {
    if bytes.get(at) == Some(&want) {
        Ok(())
    } else {
        Err(TimestampError::Syntax { reason })
    }
}

/// Days in `month` of `year` in the proleptic Gregorian calendar (RFC 3339 Appendix C).
fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's `days_from_civil`: the day count from 1970-01-01 of a proleptic Gregorian
/// date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_index = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a day count from
/// 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// RFC 3339 text for seconds since 1970, for times read from webpki and certificates: outside
/// the years 0000 to 9999 (which no X.509 time can be), the number of seconds.
pub(crate) fn rfc3339_or_seconds(unix_seconds: i64) -> String {
    match UtcTimestamp::from_unix_seconds(unix_seconds) {
        Ok(time) => time.to_string(),
        Err(_) => format!("{unix_seconds} s since 1970"),
    }
}
