//! Times in UTC, computed without a time-zone database: for people (the
//! report, `lancet findings`) and for run ids.

/// `2026-11-26 04:15:02`: a time (seconds since 1970) in UTC, for people.
pub fn utc_time(unix: u64) -> String {
    if unix == 0 {
        return "-".into();
    }
    let (y, m, d, h, mi, sec) = utc_fields(unix);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{sec:02}")
}

/// Year, month, day, hour, minute and second (UTC) of a time in seconds
/// since 1970.
pub fn utc_fields(unix: u64) -> (i64, u32, u32, u64, u64, u64) {
    let (days, secs) = (unix / 86_400, unix % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    (y, m, d, secs / 3600, secs / 60 % 60, secs % 60)
}

/// Days since 1970-01-01 to a (year, month, day) date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_414), (2025, 11, 22));
        assert_eq!(super::civil_from_days(11_016), (2000, 2, 29));
    }
}
