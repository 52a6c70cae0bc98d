//! Timestamps to seconds since 1970-01-01 UTC, and calendar months.
//!
//! A timestamp is a number or ISO 8601 text (`2024-05-01T12:00:00Z`,
//! `2024-05-01 12:00:00.250+02:00`, `2024-05-01`). Numbers are seconds, milliseconds,
//! microseconds or nanoseconds, told by their size when no unit is given (below 1e11:
//! seconds, which covers dates to the year 5138 and small synthetic clocks; below 1e14:
//! ms; below 1e17: us; else ns). A log whose timestamps mix sizes, numbers and text, or
//! text with and without a zone is refused at the first event that differs: the same
//! instant written two ways would otherwise be hours or years apart. Text without a
//! zone is read as UTC.

/// How the log writes its timestamps (fixed by the first one).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Style {
    Number(f64),
    Zoned,
    Naive,
}

impl Style {
    fn describe(self) -> String {
        match self {
            Style::Number(1.0) => "numbers in seconds".into(),
            Style::Number(1e-3) => "numbers in milliseconds".into(),
            Style::Number(1e-6) => "numbers in microseconds".into(),
            Style::Number(_) => "numbers in nanoseconds".into(),
            Style::Zoned => "text with a time zone".into(),
            Style::Naive => "text without a time zone".into(),
        }
    }
}

/// Reads the timestamps of one log, checking they are all written one way.
#[derive(Clone)]
pub(crate) struct Clock {
    forced: Option<f64>,
    word: &'static str,
    first: Option<(Style, u64)>,
}

/// Seconds per unit of a number, by its size.
fn scale_of(v: f64) -> f64 {
    let a = v.abs();
    if a < 1e11 {
        1.0
    } else if a < 1e14 {
        1e-3
    } else if a < 1e17 {
        1e-6
    } else {
        1e-9
    }
}

impl Clock {
    /// A clock for numbers in `forced` seconds per unit (`None`: by size), whose
    /// places are called `word` (line, row).
    pub(crate) fn new(forced: Option<f64>, word: &'static str) -> Clock {
        Clock {
            forced,
            word,
            first: None,
        }
    }

    /// Seconds since the epoch of a timestamp found at `place`; the error is a message.
    pub(crate) fn seconds(&mut self, t: &super::log::Time<'_>, place: u64) -> Result<f64, String> {
        use super::log::Time;
        let (secs, style) = match t {
            Time::Number(v) => {
                if !v.is_finite() {
                    return Err(format!("timestamp must be a finite number, got {v}"));
                }
                let scale = self.forced.unwrap_or_else(|| scale_of(*v));
                (v * scale, Style::Number(scale))
            }
            Time::Text(s) => match s.trim().parse::<f64>() {
                Ok(v) => return self.seconds(&Time::Number(v), place),
                Err(_) => {
                    let (secs, zoned) = parse_iso(s.trim()).ok_or_else(|| {
                        format!("timestamp '{s}' is neither a number nor ISO 8601 text")
                    })?;
                    (secs, if zoned { Style::Zoned } else { Style::Naive })
                }
            },
        };
        match self.first {
            None => self.first = Some((style, place)),
            Some((first, _)) if first == style => {}
            Some((first, at)) => {
                return Err(format!(
                    "timestamps written two ways: this one is {}, the first ({} {at}) {}; \
                     write them one way (or give the unit of numbers)",
                    style.describe(),
                    self.word,
                    first.describe()
                ))
            }
        }
        Ok(secs)
    }

    /// [`Clock::seconds`] of a number once the first timestamp has been read (as
    /// numbers), without its checks and messages: `None` where the number needs them
    /// (not finite, or in another unit than the first, or no timestamp read yet).
    #[cfg(feature = "arrow")]
    #[inline]
    pub(crate) fn number_seconds(&self, v: f64) -> Option<f64> {
        let scale = self.forced.unwrap_or_else(|| scale_of(v));
        match self.first {
            Some((Style::Number(s), _)) if s == scale && v.is_finite() => Some(v * scale),
            _ => None,
        }
    }

    /// Whether the first timestamp has been read (the way all others must be written).
    pub(crate) fn is_set(&self) -> bool {
        self.first.is_some()
    }

    /// How the log writes its timestamps (`numbers in seconds`, `text with a time
    /// zone`, ...), fixed by the first; None before any.
    pub(crate) fn style(&self) -> Option<String> {
        self.first.map(|(style, _)| style.describe())
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The (year, month) of a day since 1970-01-01.
pub(crate) fn civil_month(days: i64) -> (i64, u32) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m)
}

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// ISO 8601 text (`2024-05-01T12:00:00Z`; no zone: UTC) as seconds since the epoch.
pub fn parse_time_text(s: &str) -> Option<f64> {
    parse_iso(s.trim()).map(|(t, _)| t)
}

/// Seconds since the epoch as ISO 8601 UTC text, whole seconds (`2024-05-01T12:00:00Z`).
pub fn format_time(t: f64) -> String {
    let secs = t.floor() as i64;
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (y, m) = civil_month(days);
    let d = days - days_from_civil(y, m, 1) + 1;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// ISO 8601 text as (seconds since the epoch, whether it names a zone).
pub(crate) fn parse_iso(s: &str) -> Option<(f64, bool)> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&b[..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut secs = days_from_civil(y, m as u32, d as u32) as f64 * 86400.0;
    let mut rest = &b[10..];
    if rest.is_empty() {
        return Some((secs, false));
    }
    if rest[0] != b'T' && rest[0] != b' ' {
        return None;
    }
    rest = &rest[1..];
    if rest.len() < 5 || rest[2] != b':' {
        return None;
    }
    let (hh, mm) = (digits(&rest[..2])?, digits(&rest[3..5])?);
    if hh > 23 || mm > 59 {
        return None;
    }
    secs += (hh * 3600 + mm * 60) as f64;
    rest = &rest[5..];
    if rest.first() == Some(&b':') {
        let end = rest[1..]
            .iter()
            .position(|c| !(c.is_ascii_digit() || *c == b'.'))
            .map_or(rest.len(), |p| p + 1);
        let sec: f64 = std::str::from_utf8(&rest[1..end]).ok()?.parse().ok()?;
        if !(0.0..61.0).contains(&sec) {
            return None;
        }
        secs += sec;
        rest = &rest[end..];
    }
    match rest {
        [] => Some((secs, false)),
        [b'Z'] | [b'z'] => Some((secs, true)),
        [sign @ (b'+' | b'-'), zone @ ..] => {
            let (h, m) = match zone.len() {
                5 if zone[2] == b':' => (digits(&zone[..2])?, digits(&zone[3..])?),
                4 => (digits(&zone[..2])?, digits(&zone[2..])?),
                2 => (digits(zone)?, 0),
                _ => return None,
            };
            let offset = (h * 3600 + m * 60) as f64;
            Some((
                if *sign == b'+' {
                    secs - offset
                } else {
                    secs + offset
                },
                true,
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::log::Time;
    use super::*;

    #[test]
    fn iso_text_and_calendar() {
        // 2024-05-01T00:00:00Z is 1714521600 (date -u -d 2024-05-01 +%s)
        assert_eq!(parse_iso("2024-05-01"), Some((1714521600.0, false)));
        assert_eq!(
            parse_iso("2024-05-01T12:00:00Z"),
            Some((1714564800.0, true))
        );
        assert_eq!(
            parse_iso("2024-05-01 14:00:00.5+02:00"),
            Some((1714564800.5, true))
        );
        assert_eq!(
            parse_iso("2024-05-01T07:00-0500"),
            Some((1714564800.0, true))
        );
        assert_eq!(parse_iso("2024-13-01"), None);
        assert_eq!(parse_iso("yesterday"), None);
        assert_eq!(civil_month(days_from_civil(2024, 2, 29)), (2024, 2));
        assert_eq!(civil_month(days_from_civil(1969, 12, 31)), (1969, 12));
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(format_time(1714564800.7), "2024-05-01T12:00:00Z");
        assert_eq!(format_time(951782400.0), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn units_are_told_by_size_and_never_mixed() {
        let mut c = Clock::new(None, "line");
        assert_eq!(
            c.seconds(&Time::Number(1714521600000.0), 1),
            Ok(1714521600.0)
        );
        let e = c.seconds(&Time::Number(1714521600.0), 2).unwrap_err();
        assert!(e.contains("seconds") && e.contains("milliseconds"), "{e}");
        let mut c = Clock::new(None, "line");
        assert!(c.seconds(&Time::Text("2024-05-01T00:00:00Z"), 1).is_ok());
        let e = c
            .seconds(&Time::Text("2024-05-01T00:00:00"), 2)
            .unwrap_err();
        assert!(e.contains("without a time zone"), "{e}");
        let mut c = Clock::new(Some(1e-3), "line");
        assert_eq!(c.seconds(&Time::Number(5.0), 1), Ok(0.005));
        assert_eq!(c.seconds(&Time::Text("2500"), 2), Ok(2.5));
    }
}
