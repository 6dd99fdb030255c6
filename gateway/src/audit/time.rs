//! RFC 3339 timestamps in UTC for audit entries, written by `server_identity::UtcTimestamp`
//! (the workspace's one RFC 3339 implementation).

use std::time::{SystemTime, UNIX_EPOCH};

use server_identity::UtcTimestamp;

/// `time` as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (RFC 3339, UTC, microseconds), as
/// [`write_rfc3339_utc`] writes it (the tests' reading of it).
#[cfg(test)]
pub(crate) fn rfc3339_utc(time: SystemTime) -> String {
    let mut text = Vec::with_capacity(27);
    write_rfc3339_utc(time, &mut text);
    // Digits, `-`, `:`, `T`, `.` and `Z` only.
    String::from_utf8(text).unwrap_or_default()
}

/// `time` as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (RFC 3339, UTC, microseconds), written at the end
/// of `out` (an entry's member, written in place: no string is made for it).
///
/// A clock outside the years 0000 to 9999 is written as the epoch: the audit chain does not
/// depend on the time, and a wrong clock must not stop the gateway from recording.
pub(crate) fn write_rfc3339_utc(time: SystemTime, out: &mut Vec<u8>) {
    use std::io::Write;
    let at = UtcTimestamp::from_system_time(time)
        .or_else(|_| UtcTimestamp::from_system_time(UNIX_EPOCH));
    match at {
        // Writing into a `Vec` cannot fail.
        Ok(at) => {
            let _ = write!(out, "{at:.6}");
        }
        Err(_) => out.extend_from_slice(b"1970-01-01T00:00:00.000000Z"),
    }
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
        // Before the epoch is a real instant too, not the epoch.
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH - Duration::from_secs(86_400)),
            "1969-12-31T00:00:00.000000Z"
        );
    }
}
