//! A strict RFC 3339 `date-time` check for `added_at` (RFC 3339 §5.6), without a date library.

/// Why an `added_at` value is not an RFC 3339 date-time.
///
/// The text names the first rule the value breaks; it is shown in
/// [`CatalogError::BadAddedAt`](crate::CatalogError::BadAddedAt).
pub(crate) fn check_rfc3339(text: &str) -> Result<(), &'static str> {
    let bytes = text.as_bytes();
    // full-date "T" partial-time: YYYY-MM-DDTHH:MM:SS, 19 bytes before the fraction or offset.
    if bytes.len() < 20 {
        return Err("too short for YYYY-MM-DDTHH:MM:SSZ");
    }
    let year = digits(bytes, 0, 4).ok_or("the year must be 4 digits")?;
    expect(bytes, 4, b'-', "expected '-' after the year")?;
    let month = digits(bytes, 5, 2).ok_or("the month must be 2 digits")?;
    expect(bytes, 7, b'-', "expected '-' after the month")?;
    let day = digits(bytes, 8, 2).ok_or("the day must be 2 digits")?;
    // RFC 3339 §5.6 ABNF is case-insensitive, so `t` and `z` are the same as `T` and `Z`
    // (the note in §5.6 allowing a space is for applications that choose it; we do not).
    if !matches!(bytes[10], b'T' | b't') {
        return Err("expected 'T' between the date and the time");
    }
    let hour = digits(bytes, 11, 2).ok_or("the hour must be 2 digits")?;
    expect(bytes, 13, b':', "expected ':' after the hour")?;
    let minute = digits(bytes, 14, 2).ok_or("the minute must be 2 digits")?;
    expect(bytes, 16, b':', "expected ':' after the minute")?;
    let second = digits(bytes, 17, 2).ok_or("the second must be 2 digits")?;

    if !(1..=12).contains(&month) {
        return Err("the month is outside 01-12");
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err("the day does not exist in that month");
    }
    if hour > 23 {
        return Err("the hour is outside 00-23");
    }
    if minute > 59 {
        return Err("the minute is outside 00-59");
    }
    // 60 is a leap second (RFC 3339 §5.7).
    if second > 60 {
        return Err("the second is outside 00-60");
    }

    let mut rest = &bytes[19..];
    if let Some((b'.', fraction)) = rest.split_first() {
        let count = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return Err("expected digits after '.'");
        }
        rest = &fraction[count..];
    }
    match rest {
        [b'Z' | b'z'] => Ok(()),
        [b'+' | b'-', offset @ ..] => {
            if offset.len() != 5 || offset[2] != b':' {
                return Err("the offset must be Z or +HH:MM / -HH:MM");
            }
            let offset_hour = digits(offset, 0, 2).ok_or("the offset hour must be 2 digits")?;
            let offset_minute = digits(offset, 3, 2).ok_or("the offset minute must be 2 digits")?;
            if offset_hour > 23 || offset_minute > 59 {
                return Err("the offset is outside -23:59..+23:59");
            }
            Ok(())
        }
        [] => Err("the time zone offset is missing (add Z for UTC)"),
        _ => Err("unexpected characters after the time"),
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

fn expect(bytes: &[u8], at: usize, want: u8, message: &'static str) -> Result<(), &'static str> {
    if bytes.get(at) == Some(&want) {
        Ok(())
    } else {
        Err(message)
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

#[cfg(test)]
mod unit {
    use super::check_rfc3339;

    #[test]
    fn accepts_the_forms_rfc_3339_allows() {
        for ok in [
            "2026-06-01T00:00:00Z",
            "2026-06-01t00:00:00z",
            "2024-02-29T23:59:60.123456+05:30",
            "2000-02-29T12:00:00-00:00",
        ] {
            assert_eq!(check_rfc3339(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refuses_what_rfc_3339_does_not_allow() {
        for (bad, why) in [
            ("2026-06-01", "too short for YYYY-MM-DDTHH:MM:SSZ"),
            (
                "2026-06-01 00:00:00Z",
                "expected 'T' between the date and the time",
            ),
            ("2026-13-01T00:00:00Z", "the month is outside 01-12"),
            (
                "2100-02-29T00:00:00Z",
                "the day does not exist in that month",
            ),
            ("2026-06-01T24:00:00Z", "the hour is outside 00-23"),
            ("2026-06-01T00:00:00", "too short for YYYY-MM-DDTHH:MM:SSZ"),
            ("2026-06-01T00:00:00.Z", "expected digits after '.'"),
            (
                "2026-06-01T00:00:00+0100",
                "the offset must be Z or +HH:MM / -HH:MM",
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
            assert_eq!(check_rfc3339(bad), Err(why), "{bad}");
        }
    }
}
