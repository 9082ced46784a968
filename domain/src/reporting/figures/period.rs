//! A period of nights (`startDate`, `endDate`): its parameters, defaults and limits, and the
//! periods next to it.

use chrono::{NaiveDate, TimeDelta};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::EARLIEST_DATE;
use crate::Problems;

/// `d` moved by `days` (negative: back), saturating at chrono's range, which no parsed date (years
/// 1 to 9999) nor any period of them comes near.
pub(super) fn add_days(d: NaiveDate, days: i64) -> NaiveDate {
    TimeDelta::try_days(days)
        .and_then(|delta| d.checked_add_signed(delta))
        .unwrap_or(if days < 0 {
            NaiveDate::MIN
        } else {
            NaiveDate::MAX
        })
}

/// A period of nights, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    #[serde(rename = "startDate")]
    pub start: NaiveDate,
    #[serde(rename = "endDate")]
    pub end: NaiveDate,
}

impl Period {
    /// The default period: the 30 nights ending `today`, `[today − 29, today]`.
    pub fn default_ending(today: NaiveDate) -> Period {
        Period {
            start: add_days(today, -29),
            end: today,
        }
    }

    /// How many nights it holds (at least 1 once parsed).
    pub fn nights(self) -> i64 {
        (self.end - self.start).num_days() + 1
    }

    /// The period of as many nights that ends the day before this one starts.
    pub fn previous(self) -> Period {
        Period {
            start: add_days(self.start, -self.nights()),
            end: add_days(self.start, -1),
        }
    }

    /// The night after its last: the end of its half-open range of nights.
    pub fn to_exclusive(self) -> NaiveDate {
        add_days(self.end, 1)
    }

    /// `startDate` and `endDate` as sent (absent or empty: the default, [`PERIOD_DEFINITION`]);
    /// a malformed date is a problem on its field, an inverted period on `startDate`, one of
    /// more than `max_nights` on `endDate`.
    ///
    /// [`PERIOD_DEFINITION`]: super::PERIOD_DEFINITION
    pub fn parse(
        problems: &mut Problems,
        start: Option<&str>,
        end: Option<&str>,
        today: NaiveDate,
        max_nights: i64,
    ) -> Option<Period> {
        let start = date_param(problems, "startDate", start);
        let end = date_param(problems, "endDate", end);
        let (start, end) = (start?, end?);
        let period = match (start, end) {
            (Some(start), Some(end)) => Period { start, end },
            (Some(start), None) => Period { start, end: today },
            (None, Some(end)) => Period::default_ending(end),
            (None, None) => Period::default_ending(today),
        };
        if period.start < EARLIEST_DATE {
            // A spreadsheet shows no date before 1900, and a previous period must stay a date.
            problems.push(
                "startDate",
                "out_of_range",
                format!("the period must start on or after {EARLIEST_DATE}"),
            );
            return None;
        }
        if period.start > period.end {
            let end_is = if end.is_some() {
                ""
            } else {
                ", today by default"
            };
            problems.push(
                "startDate",
                "out_of_range",
                format!(
                    "startDate must not be after endDate ({}{end_is})",
                    period.end
                ),
            );
            return None;
        }
        if period.nights() > max_nights {
            problems.push(
                "endDate",
                "out_of_range",
                format!(
                    "the period from startDate to endDate (both included) may span at most \
                     {max_nights} nights, not {}",
                    period.nights()
                ),
            );
            return None;
        }
        Some(period)
    }

    /// `{"startDate": "YYYY-MM-DD", "endDate": "YYYY-MM-DD"}`.
    pub fn json(self) -> Value {
        json!({"startDate": self.start.to_string(), "endDate": self.end.to_string()})
    }
}

/// One optional date parameter: `Some(None)` when absent or empty, `None` when malformed (a
/// problem on `field`).
fn date_param(
    problems: &mut Problems,
    field: &str,
    raw: Option<&str>,
) -> Option<Option<NaiveDate>> {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Some(None);
    };
    match crate::record::parse_date(raw) {
        Ok(date) => Some(Some(date)),
        Err((code, message)) => {
            problems.push(field, code, format!("{field} {message}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{d, fields, period};
    use super::*;

    fn parse(start: Option<&str>, end: Option<&str>, max: i64) -> (Option<Period>, Problems) {
        let mut problems = Problems::new();
        let parsed = Period::parse(&mut problems, start, end, d("2026-03-31"), max);
        (parsed, problems)
    }

    #[test]
    fn a_period_defaults_to_the_30_nights_ending_today() {
        let (p, problems) = parse(None, None, 366);
        assert_eq!(p, Some(period("2026-03-02", "2026-03-31")));
        assert!(problems.is_empty());
        assert_eq!(p.unwrap().nights(), 30);
        // Empty values are absent.
        assert_eq!(
            parse(Some(""), Some(" "), 366).0,
            Some(period("2026-03-02", "2026-03-31"))
        );
        // Only a start: up to today. Only an end: the 30 nights ending it.
        assert_eq!(
            parse(Some("2026-03-10"), None, 366).0,
            Some(period("2026-03-10", "2026-03-31"))
        );
        assert_eq!(
            parse(None, Some("2026-01-31"), 366).0,
            Some(period("2026-01-02", "2026-01-31"))
        );
        assert_eq!(
            parse(Some("2026-03-01"), Some("2026-03-01"), 366)
                .0
                .map(Period::nights),
            Some(1)
        );
    }

    #[test]
    fn a_period_refuses_bad_dates_on_their_fields() {
        let (p, problems) = parse(Some("2026-3-1"), Some("tomorrow"), 366);
        assert_eq!(p, None);
        assert_eq!(
            fields(problems),
            vec![
                ("startDate".to_owned(), "invalid_format"),
                ("endDate".to_owned(), "invalid_format")
            ]
        );
        let (p, problems) = parse(Some("2026-04-01"), Some("2026-03-31"), 366);
        assert_eq!(p, None);
        assert_eq!(
            fields(problems),
            vec![("startDate".to_owned(), "out_of_range")]
        );
        // A start after today, no end: after the default end.
        let (p, problems) = parse(Some("2026-04-01"), None, 366);
        assert_eq!(p, None);
        assert_eq!(
            fields(problems),
            vec![("startDate".to_owned(), "out_of_range")]
        );
        // 366 nights pass, 367 do not; monthly charts go to 730.
        assert!(
            parse(Some("2025-03-31"), Some("2026-03-31"), 366)
                .0
                .is_some()
        );
        let (p, problems) = parse(Some("2025-03-30"), Some("2026-03-31"), 366);
        assert_eq!(p, None);
        assert_eq!(
            fields(problems),
            vec![("endDate".to_owned(), "out_of_range")]
        );
        assert!(
            parse(Some("2024-04-01"), Some("2026-03-31"), 730)
                .0
                .is_some()
        );
        assert!(
            parse(Some("2024-03-31"), Some("2026-03-31"), 730)
                .0
                .is_none()
        );
        let (_, problems) = parse(Some("0000-01-01"), None, 366);
        assert_eq!(
            fields(problems),
            vec![("startDate".to_owned(), "out_of_range")]
        );
    }

    #[test]
    fn the_previous_period_has_as_many_nights_and_ends_the_day_before() {
        let p = period("2026-03-01", "2026-03-31");
        assert_eq!(p.previous(), period("2026-01-29", "2026-02-28"));
        assert_eq!(p.previous().nights(), 31);
        assert_eq!(p.to_exclusive(), d("2026-04-01"));
        assert_eq!(
            p.json(),
            json!({"startDate": "2026-03-01", "endDate": "2026-03-31"})
        );
        assert_eq!(serde_json::to_value(p).unwrap(), p.json());
        assert_eq!(
            period("2024-03-01", "2024-03-01").previous(),
            period("2024-02-29", "2024-02-29")
        );
    }
}
