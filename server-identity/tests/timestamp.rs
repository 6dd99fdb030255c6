//! `UtcTimestamp`: known instants (checked with `date -u -d @N`), every RFC 3339 form and
//! refusal with its exact reason, offsets, leap seconds, fractions and precision, the range,
//! `SystemTime` both ways, and a property: Display then parse is the identity.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use server_identity::{TimestampError, UtcTimestamp};

fn at(seconds: i64) -> UtcTimestamp {
    UtcTimestamp::from_unix_seconds(seconds).unwrap()
}

fn parse(text: &str) -> Result<UtcTimestamp, TimestampError> {
    text.parse()
}

#[test]
fn known_instants() {
    for (seconds, text) in [
        (0, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        // `date -u -d @951782400`: a leap day of a century leap year.
        (951_782_400, "2000-02-29T00:00:00Z"),
        (1_780_272_000, "2026-06-01T00:00:00Z"),
        // `date -u -d @4107542399` / `@4107542400`: 2100 is not a leap year.
        (4_107_542_399, "2100-02-28T23:59:59Z"),
        (4_107_542_400, "2100-03-01T00:00:00Z"),
        (253_402_300_799, "9999-12-31T23:59:59Z"),
        (-62_167_219_200, "0000-01-01T00:00:00Z"),
    ] {
        assert_eq!(at(seconds).to_string(), text);
        assert_eq!(parse(text), Ok(at(seconds)), "{text}");
        assert_eq!(at(seconds).unix_seconds(), seconds);
    }
    assert_eq!(UtcTimestamp::UNIX_EPOCH, at(0));
    assert_eq!(format!("{:?}", at(0)), "UtcTimestamp(1970-01-01T00:00:00Z)");
}

#[test]
fn offsets_fractions_case_and_leap_seconds() {
    let june = at(1_780_272_000);
    for text in [
        "2026-06-01T00:00:00Z",
        "2026-06-01t00:00:00z",
        "2026-06-01T02:00:00+02:00",
        "2026-05-31T19:30:00-04:30",
        "2026-06-01T00:00:00-00:00",
        "2026-06-01T00:00:00.000Z",
        // A leap second is the instant after :59, as POSIX counts it.
        "2026-05-31T23:59:60Z",
    ] {
        assert_eq!(parse(text), Ok(june), "{text}");
    }
    let t = parse("2024-02-29T23:59:59.1234567891234+05:30").unwrap();
    assert_eq!(t.subsec_nanos(), 123_456_789);
    assert_eq!(t.to_string(), "2024-02-29T18:29:59.123456789Z");
    assert_eq!(format!("{t:.6}"), "2024-02-29T18:29:59.123456Z");
    assert_eq!(format!("{t:.0}"), "2024-02-29T18:29:59Z");
    assert_eq!(format!("{t:.12}"), "2024-02-29T18:29:59.123456789000Z");
    let half = UtcTimestamp::from_unix(0, 500_000_000).unwrap();
    assert_eq!(half.to_string(), "1970-01-01T00:00:00.5Z");
    assert_eq!(format!("{:.6}", at(0)), "1970-01-01T00:00:00.000000Z");
    assert!(at(0) < half && half < at(1));
}

#[test]
fn refusals_name_the_rule() {
    for (bad, reason) in [
        ("2026-06-01", "too short for YYYY-MM-DDTHH:MM:SSZ"),
        (
            "2026-06-01 00:00:00Z",
            "expected 'T' between the date and the time",
        ),
        ("2026/06-01T00:00:00Z", "expected '-' after the year"),
        ("2026-06/01T00:00:00Z", "expected '-' after the month"),
        ("2026-06-01T00.00:00Z", "expected ':' after the hour"),
        ("2026-06-01T00:00.00Z", "expected ':' after the minute"),
        ("2026-1x-01T00:00:00Z", "the month must be 2 digits"),
        ("2026-06-x1T00:00:00Z", "the day must be 2 digits"),
        ("2026-06-01Tx0:00:00Z", "the hour must be 2 digits"),
        ("2026-06-01T00:x0:00Z", "the minute must be 2 digits"),
        ("2026-06-01T00:00:x0Z", "the second must be 2 digits"),
        ("2026-13-01T00:00:00Z", "the month is outside 01-12"),
        ("2026-00-01T00:00:00Z", "the month is outside 01-12"),
        (
            "2100-02-29T00:00:00Z",
            "the day does not exist in that month",
        ),
        (
            "2026-04-31T00:00:00Z",
            "the day does not exist in that month",
        ),
        ("2026-06-01T24:00:00Z", "the hour is outside 00-23"),
        ("2026-06-01T00:60:00Z", "the minute is outside 00-59"),
        ("2026-06-01T00:00:61Z", "the second is outside 00-60"),
        ("2026-06-01T00:00:00", "too short for YYYY-MM-DDTHH:MM:SSZ"),
        ("2026-06-01T00:00:00.Z", "expected digits after '.'"),
        (
            "2026-06-01T00:00:00+0100",
            "the offset must be Z or +HH:MM / -HH:MM",
        ),
        (
            "2026-06-01T00:00:00+x1:00",
            "the offset hour must be 2 digits",
        ),
        (
            "2026-06-01T00:00:00+01:x0",
            "the offset minute must be 2 digits",
        ),
        (
            "2026-06-01T00:00:00+24:00",
            "the offset is outside -23:59..+23:59",
        ),
        (
            "2026-06-01T00:00:00.5",
            "the time zone offset is missing (add Z for UTC)",
        ),
        (
            "2026-06-01T00:00:00Zjunk",
            "unexpected characters after the time",
        ),
        ("２０２6-06-01T00:00:00Z", "the year must be 4 digits"),
    ] {
        assert_eq!(parse(bad), Err(TimestampError::Syntax { reason }), "{bad}");
    }
    assert_eq!(
        parse("2026-13-01T00:00:00Z").unwrap_err().to_string(),
        "not an RFC 3339 date-time (the month is outside 01-12); expected \
         YYYY-MM-DDTHH:MM:SS[.fraction] then Z or +HH:MM/-HH:MM, e.g. 2026-06-01T00:00:00Z"
    );
}

#[test]
fn the_range_is_the_years_rfc_3339_can_write() {
    assert_eq!(
        parse("0000-01-01T00:00:00+00:01"),
        Err(TimestampError::OutOfRange {
            unix_seconds: -62_167_219_260
        })
    );
    assert_eq!(
        parse("9999-12-31T23:59:60Z"),
        Err(TimestampError::OutOfRange {
            unix_seconds: 253_402_300_800
        })
    );
    assert_eq!(
        UtcTimestamp::from_unix_seconds(i64::MAX),
        Err(TimestampError::OutOfRange {
            unix_seconds: i128::from(i64::MAX)
        })
    );
    assert_eq!(
        UtcTimestamp::from_unix(0, 1_000_000_000),
        Err(TimestampError::Nanos {
            nanos: 1_000_000_000
        })
    );
    assert_eq!(
        TimestampError::OutOfRange { unix_seconds: -1 }.to_string(),
        "-1 s since 1970 is outside 0000-01-01T00:00:00Z..9999-12-31T23:59:59Z, which is all \
         RFC 3339 can write"
    );
    assert_eq!(
        TimestampError::Nanos { nanos: 7 }.to_string(),
        "7 ns is not a fraction of a second (at most 999999999)"
    );
}

#[test]
fn system_time_both_ways() {
    let after = UNIX_EPOCH + Duration::new(1_796_028_050, 123_456_000);
    let t = UtcTimestamp::from_system_time(after).unwrap();
    assert_eq!(format!("{t:.6}"), "2026-11-30T08:40:50.123456Z");
    assert_eq!(SystemTime::from(t), after);
    // 1.25 s before the epoch.
    let before = UNIX_EPOCH - Duration::new(1, 250_000_000);
    let t = UtcTimestamp::from_system_time(before).unwrap();
    assert_eq!((t.unix_seconds(), t.subsec_nanos()), (-2, 750_000_000));
    assert_eq!(t.to_string(), "1969-12-31T23:59:58.75Z");
    assert_eq!(SystemTime::from(t), before);
    assert!(UtcTimestamp::from_system_time(SystemTime::now()).is_ok());
}

proptest! {
    #[test]
    fn display_then_parse_is_the_identity(
        seconds in -62_167_219_200i64..=253_402_300_799,
        nanos in 0u32..1_000_000_000,
    ) {
        let t = UtcTimestamp::from_unix(seconds, nanos).unwrap();
        prop_assert_eq!(t.to_string().parse::<UtcTimestamp>(), Ok(t));
        let whole = UtcTimestamp::from_unix_seconds(seconds).unwrap();
        prop_assert_eq!(format!("{t:.0}").parse::<UtcTimestamp>(), Ok(whole));
    }

    /// The fraction, written from the number, is what the string-based writing gave: nine
    /// digits, padded or truncated to the precision, or trimmed of trailing zeros without one.
    #[test]
    fn fractions_are_padded_truncated_or_trimmed(
        nanos in prop_oneof![0u32..1_000_000_000, Just(0u32), Just(500_000_000), Just(7_000)],
        digits in 0usize..=12,
    ) {
        let t = UtcTimestamp::from_unix(0, nanos).unwrap();
        let nine = format!("{nanos:09}");
        let padded = format!("{nine:0<digits$}")[..digits].to_owned();
        let fraction = |text: String| if text.is_empty() { text } else { format!(".{text}") };
        prop_assert_eq!(
            format!("{t:.digits$}"),
            format!("1970-01-01T00:00:00{}Z", fraction(padded))
        );
        prop_assert_eq!(
            t.to_string(),
            format!("1970-01-01T00:00:00{}Z", fraction(nine.trim_end_matches('0').to_owned()))
        );
    }
}
