//! `added_at`: an RFC 3339 `date-time` (RFC 3339 §5.6), read with `server-identity`'s
//! `UtcTimestamp`, the workspace's one RFC 3339 type.

use server_identity::{TimestampError, UtcTimestamp};

/// Parses an `added_at` value; the error names the first rule the value breaks, as
/// [`CatalogError::BadAddedAt`](crate::CatalogError::BadAddedAt) shows it.
pub(crate) fn check_rfc3339(text: &str) -> Result<UtcTimestamp, &'static str> {
    text.parse::<UtcTimestamp>().map_err(|error| match error {
        TimestampError::Syntax { reason } => reason,
        TimestampError::OutOfRange { .. } => {
            "the offset moves it outside the years 0000-9999 in UTC"
        }
        _ => "it is not a time RFC 3339 can write",
    })
}

#[cfg(test)]
mod unit {
    use super::check_rfc3339;

    #[test]
    fn accepts_the_forms_rfc_3339_allows() {
        let utc = |text: &str| check_rfc3339(text).map(|time| time.to_string());
        assert_eq!(
            utc("2024-02-29T23:30:00.5+05:30").as_deref(),
            Ok("2024-02-29T18:00:00.5Z")
        );
        for ok in [
            "2026-06-01T00:00:00Z",
            "2026-06-01t00:00:00z",
            "2024-02-29T23:59:60.123456+05:30",
            "2000-02-29T12:00:00-00:00",
        ] {
            assert!(check_rfc3339(ok).is_ok(), "{ok}");
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
            (
                "0000-01-01T00:00:00+00:01",
                "the offset moves it outside the years 0000-9999 in UTC",
            ),
        ] {
            assert_eq!(check_rfc3339(bad).err(), Some(why), "{bad}");
        }
    }
}
