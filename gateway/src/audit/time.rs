//! RFC 3339 timestamps in UTC, without a calendar dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (RFC 3339, UTC, microseconds).
///
/// A clock set before 1970 is written as the epoch: the audit chain does not depend on the time,
/// and a wrong clock must not stop the gateway from recording.
pub(crate) fn rfc3339_utc(time: SystemTime) -> String {
    let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since_epoch.as_secs();
    let micros = since_epoch.subsec_micros();
    let days = seconds / 86_400;
    let second_of_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for non-negative day counts).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
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
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn known_instants() {
        let at =
            |secs: u64, micros: u64| UNIX_EPOCH + Duration::from_micros(secs * 1_000_000 + micros);
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        // `date -u -d @951782400` → 2000-02-29 00:00:00 (a leap day of a century leap year).
        assert_eq!(
            rfc3339_utc(at(951_782_400, 7)),
            "2000-02-29T00:00:00.000007Z"
        );
        // `date -u -d @1796028050` → 2026-11-30 08:40:50.
        assert_eq!(
            rfc3339_utc(at(1_796_028_050, 123_456)),
            "2026-11-30T08:40:50.123456Z"
        );
        // `date -u -d @4107542399` → 2100-02-28 23:59:59 (2100 is not a leap year).
        assert_eq!(
            rfc3339_utc(at(4_107_542_399, 0)),
            "2100-02-28T23:59:59.000000Z"
        );
        assert_eq!(
            rfc3339_utc(at(4_107_542_400, 0)),
            "2100-03-01T00:00:00.000000Z"
        );
    }
}
