//! The wall clock as the results record it: seconds since the Unix epoch, and the UTC
//! stamp in the names of results directories.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, now (0 on a clock before 1970).
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Resolution of CLOCK_MONOTONIC (the clock of `std::time::Instant` on Linux, which
/// times every run), ns; None when the kernel does not say.
pub fn monotonic_resolution_ns() -> Option<u64> {
    let res = nix::time::clock_getres(nix::time::ClockId::CLOCK_MONOTONIC).ok()?;
    u64::try_from(res.tv_sec() as i128 * 1_000_000_000 + res.tv_nsec() as i128).ok()
}

/// `20261130T111428Z` for a Unix time (UTC, proleptic Gregorian).
pub fn utc_stamp(unix_s: i64) -> String {
    let days = unix_s.div_euclid(86_400);
    let secs = unix_s.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_796_037_268), "20261130T111428Z");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
        assert!(unix_now() > 1_700_000_000.0);
        assert!(monotonic_resolution_ns().is_some_and(|ns| ns > 0 && ns <= 1_000_000_000));
    }
}
