//! Time values of a `time` column: a year (`2018`, `2018.0`) or an ISO date (`2025-03-14`,
//! `2025-03`, `2025/03/14`, `2025-03-14T10:00:00Z`).
//!
//! Only unambiguous forms are accepted: `03/04/2025` could be March or April, so it is an error
//! that names the row and column rather than a silent guess. A full date must exist on the
//! calendar (chrono checks it): `2025-02-31` is an error, not February.

use serde::Serialize;
use std::fmt;

/// The time bucket that dates are grouped into for trends (`[trends] period`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeriodUnit {
    /// The default.
    #[default]
    Year,
    Quarter,
    Month,
}

impl PeriodUnit {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "year" => Some(Self::Year),
            "quarter" => Some(Self::Quarter),
            "month" => Some(Self::Month),
            _ => None,
        }
    }
}

impl fmt::Display for PeriodUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Year => "year",
            Self::Quarter => "quarter",
            Self::Month => "month",
        })
    }
}

/// Why a cell is not a time value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error("empty time value")]
    Empty,
    #[error("{0:?} is not a year or an ISO date (expected e.g. 2018 or 2025-03-14)")]
    NotATime(String),
    #[error("{raw:?} is not a date on the calendar ({year}-{month:02} has no day {day})")]
    NotOnCalendar {
        raw: String,
        year: i32,
        month: u32,
        day: u32,
    },
}

/// A parsed time value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeValue {
    pub year: i32,
    /// 1..=12 when the value was a date.
    pub month: Option<u8>,
}

impl TimeValue {
    /// Parses a cell. The error says what was expected.
    pub fn parse(raw: &str) -> Result<TimeValue, TimeError> {
        let s = raw.trim();
        let bad = || TimeError::NotATime(s.to_string());
        if s.is_empty() {
            return Err(TimeError::Empty);
        }
        // A year, possibly written as a float by a spreadsheet or pandas.
        let year_part = s.strip_suffix(".0").unwrap_or(s);
        if year_part.len() == 4 && year_part.bytes().all(|b| b.is_ascii_digit()) {
            let year: i32 = year_part.parse().map_err(|_| bad())?;
            return check_year(year, None).ok_or_else(bad);
        }
        let date = s.split(['T', ' ']).next().unwrap_or(s);
        let sep = if date.contains('-') { '-' } else { '/' };
        let parts: Vec<&str> = date.split(sep).collect();
        if parts.len() < 2 || parts.len() > 3 || parts[0].len() != 4 {
            return Err(bad());
        }
        let num = |p: &str, max: u32| -> Option<u32> {
            if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            p.parse().ok().filter(|v| (1..=max).contains(v))
        };
        let year: i32 = parts[0].parse().map_err(|_| bad())?;
        let month = num(parts[1], 12).ok_or_else(bad)?;
        if parts.len() == 3 {
            let day = num(parts[2], 31).ok_or_else(bad)?;
            if chrono::NaiveDate::from_ymd_opt(year, month, day).is_none() {
                return Err(TimeError::NotOnCalendar {
                    raw: s.to_string(),
                    year,
                    month,
                    day,
                });
            }
        }
        check_year(year, Some(month as u8)).ok_or_else(bad)
    }

    /// The period label of this value: `2018`, `2025-Q1` or `2025-03`.
    /// A bare year stays a year under quarter and month buckets.
    pub fn period(&self, unit: PeriodUnit) -> String {
        match (unit, self.month) {
            (PeriodUnit::Year, _) | (_, None) => format!("{}", self.year),
            (PeriodUnit::Quarter, Some(m)) => format!("{}-Q{}", self.year, (m - 1) / 3 + 1),
            (PeriodUnit::Month, Some(m)) => format!("{}-{:02}", self.year, m),
        }
    }
}

fn check_year(year: i32, month: Option<u8>) -> Option<TimeValue> {
    (1000..=9999)
        .contains(&year)
        .then_some(TimeValue { year, month })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years_and_dates() {
        assert_eq!(
            TimeValue::parse("2018").unwrap(),
            TimeValue {
                year: 2018,
                month: None
            }
        );
        assert_eq!(TimeValue::parse(" 2018.0 ").unwrap().year, 2018);
        let d = TimeValue::parse("2025-03-14").unwrap();
        assert_eq!(
            d,
            TimeValue {
                year: 2025,
                month: Some(3)
            }
        );
        assert_eq!(d.period(PeriodUnit::Quarter), "2025-Q1");
        assert_eq!(d.period(PeriodUnit::Month), "2025-03");
        assert_eq!(d.period(PeriodUnit::Year), "2025");
        assert_eq!(TimeValue::parse("2025/11/02").unwrap().month, Some(11));
        assert_eq!(
            TimeValue::parse("2024-02-29").unwrap().month,
            Some(2),
            "a leap day"
        );
        assert_eq!(
            TimeValue::parse("2025-12-01T10:00:00Z").unwrap().month,
            Some(12)
        );
    }

    #[test]
    fn ambiguous_or_junk_values_are_errors() {
        for bad in [
            "",
            "n/a",
            "03/04/2025",
            "2025-13-01",
            "20180",
            "١٩٩٩",
            "2025-1x",
            "2025-02-31",
            "2023-02-29",
            "2025-04-31",
        ] {
            assert!(TimeValue::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
