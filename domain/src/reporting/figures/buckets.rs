//! The ranges figures are summed over: a chart's type and granularity, the buckets of a period
//! (with the previous period's), and their labels.

use chrono::{Datelike as _, Days, Months, NaiveDate};
use serde::{Deserialize, Serialize};

use super::period::{Period, add_days};
use super::{MAX_MONTHLY_PERIOD_NIGHTS, MAX_PERIOD_NIGHTS};

/// What a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChartType {
    Revenue,
    Occupancy,
}

impl ChartType {
    pub const ALL: [ChartType; 2] = [Self::Revenue, Self::Occupancy];

    /// `revenue` or `occupancy`, in any letter case.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        Self::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(raw))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Revenue => "revenue",
            Self::Occupancy => "occupancy",
        }
    }

    /// The name of the chart's dataset.
    pub fn label(self) -> &'static str {
        match self {
            Self::Revenue => "Revenue",
            Self::Occupancy => "Occupancy",
        }
    }
}

/// The size of a chart's buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    Daily,
    /// Weeks from Monday to Sunday.
    Weekly,
    /// Calendar months.
    Monthly,
}

impl Granularity {
    pub const ALL: [Granularity; 3] = [Self::Daily, Self::Weekly, Self::Monthly];

    /// `daily`, `weekly` or `monthly`, in any letter case.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        Self::ALL
            .into_iter()
            .find(|g| g.as_str().eq_ignore_ascii_case(raw))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Daily => "daily",
            Self::Weekly => "weekly",
            Self::Monthly => "monthly",
        }
    }

    /// The longest period a chart of these buckets may cover.
    pub fn max_nights(self) -> i64 {
        match self {
            Self::Monthly => MAX_MONTHLY_PERIOD_NIGHTS,
            Self::Daily | Self::Weekly => MAX_PERIOD_NIGHTS,
        }
    }

    /// The first night of the bucket after the one holding `d`; `None` past chrono's range.
    fn next_start(self, d: NaiveDate) -> Option<NaiveDate> {
        match self {
            Self::Daily => d.checked_add_days(Days::new(1)),
            Self::Weekly => {
                d.checked_add_days(Days::new(7 - u64::from(d.weekday().num_days_from_monday())))
            }
            Self::Monthly => d.with_day(1)?.checked_add_months(Months::new(1)),
        }
    }
}

/// Contiguous ranges of nights: bucket i is `[starts[i], starts[i + 1])`, the last ends at `to`
/// (excluded). Never empty once built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buckets {
    pub(super) starts: Vec<NaiveDate>,
    pub(super) to: NaiveDate,
}

impl Buckets {
    /// The whole period as one bucket.
    pub fn whole(period: Period) -> Buckets {
        Buckets {
            starts: vec![period.start],
            to: period.to_exclusive(),
        }
    }

    /// Buckets of `g` over the period (weeks start on Monday, months on the 1st); the first and
    /// the last hold only the period's nights (partial).
    pub fn split(period: Period, g: Granularity) -> Buckets {
        let mut starts = vec![period.start];
        let mut current = period.start;
        while let Some(next) = g.next_start(current).filter(|next| *next <= period.end) {
            starts.push(next);
            current = next;
        }
        Buckets {
            starts,
            to: period.to_exclusive(),
        }
    }

    /// The previous period's buckets followed by this period's (of `g`, or the whole period):
    /// bucket i of the previous half is bucket i of the current half moved back by the period's
    /// nights, so both halves have equal length and line up label by label.
    pub fn with_previous(period: Period, g: Option<Granularity>) -> Buckets {
        let current = match g {
            Some(g) => Self::split(period, g),
            None => Self::whole(period),
        };
        let nights = period.nights();
        let mut starts: Vec<NaiveDate> = current
            .starts
            .iter()
            .map(|d| add_days(*d, -nights))
            .collect();
        starts.extend_from_slice(&current.starts);
        Buckets {
            starts,
            to: current.to,
        }
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The nights `[from, to)` of bucket `i` (an empty range past the last).
    pub fn range(&self, i: usize) -> (NaiveDate, NaiveDate) {
        let from = self.starts.get(i).copied().unwrap_or(self.to);
        let to = self.starts.get(i + 1).copied().unwrap_or(self.to);
        (from, to)
    }

    /// Each bucket's first night.
    pub fn starts(&self) -> &[NaiveDate] {
        &self.starts
    }
}

/// A bucket's label: the day (`YYYY-MM-DD`), the week's Monday (`YYYY-MM-DD`, also for a first
/// week that the period starts after its Monday), or the month (`YYYY-MM`).
pub fn label(g: Granularity, bucket_start: NaiveDate) -> String {
    match g {
        Granularity::Daily => bucket_start.format("%Y-%m-%d").to_string(),
        Granularity::Weekly => add_days(
            bucket_start,
            -i64::from(bucket_start.weekday().num_days_from_monday()),
        )
        .format("%Y-%m-%d")
        .to_string(),
        Granularity::Monthly => format!("{:04}-{:02}", bucket_start.year(), bucket_start.month()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{d, period};
    use super::super::{CHART_PERIODS, CHART_TYPES};
    use super::*;

    #[test]
    fn chart_types_and_periods_parse_in_any_case() {
        assert_eq!(ChartType::parse("Revenue"), Some(ChartType::Revenue));
        assert_eq!(ChartType::parse(" occupancy "), Some(ChartType::Occupancy));
        assert_eq!(ChartType::parse("adr"), None);
        assert_eq!(ChartType::Occupancy.label(), "Occupancy");
        assert_eq!(Granularity::parse("WEEKLY"), Some(Granularity::Weekly));
        assert_eq!(Granularity::parse("yearly"), None);
        assert_eq!(Granularity::Monthly.max_nights(), 730);
        assert_eq!(Granularity::Daily.max_nights(), 366);
        let types: Vec<&str> = ChartType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(types, CHART_TYPES);
        let periods: Vec<&str> = Granularity::ALL.iter().map(|g| g.as_str()).collect();
        assert_eq!(periods, CHART_PERIODS);
    }

    fn ranges(b: &Buckets) -> Vec<(String, String)> {
        (0..b.len())
            .map(|i| {
                let (from, to) = b.range(i);
                (from.to_string(), to.to_string())
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn weeks_start_on_monday_and_the_edges_are_partial() {
        // 2026-03-04 is a Wednesday; 2026-03-09 and 2026-03-16 are Mondays.
        let b = Buckets::split(period("2026-03-04", "2026-03-17"), Granularity::Weekly);
        assert_eq!(
            ranges(&b),
            pairs(&[
                ("2026-03-04", "2026-03-09"),
                ("2026-03-09", "2026-03-16"),
                ("2026-03-16", "2026-03-18"),
            ])
        );
        let labels: Vec<String> = b
            .starts()
            .iter()
            .map(|s| label(Granularity::Weekly, *s))
            .collect();
        assert_eq!(labels, ["2026-03-02", "2026-03-09", "2026-03-16"]);
        // A period starting on a Monday: its first week is whole.
        let b = Buckets::split(period("2026-03-09", "2026-03-15"), Granularity::Weekly);
        assert_eq!(ranges(&b), pairs(&[("2026-03-09", "2026-03-16")]));
    }

    #[test]
    fn months_start_on_the_first_and_days_are_nights() {
        let b = Buckets::split(period("2026-01-15", "2026-03-10"), Granularity::Monthly);
        assert_eq!(
            ranges(&b),
            pairs(&[
                ("2026-01-15", "2026-02-01"),
                ("2026-02-01", "2026-03-01"),
                ("2026-03-01", "2026-03-11"),
            ])
        );
        let labels: Vec<String> = b
            .starts()
            .iter()
            .map(|s| label(Granularity::Monthly, *s))
            .collect();
        assert_eq!(labels, ["2026-01", "2026-02", "2026-03"]);
        // Across a year's end, and a leap February.
        let b = Buckets::split(period("2023-12-31", "2024-03-01"), Granularity::Monthly);
        assert_eq!(
            ranges(&b),
            pairs(&[
                ("2023-12-31", "2024-01-01"),
                ("2024-01-01", "2024-02-01"),
                ("2024-02-01", "2024-03-01"),
                ("2024-03-01", "2024-03-02"),
            ])
        );
        let b = Buckets::split(period("2026-02-27", "2026-03-01"), Granularity::Daily);
        assert_eq!(b.len(), 3);
        assert_eq!(
            ranges(&b),
            pairs(&[
                ("2026-02-27", "2026-02-28"),
                ("2026-02-28", "2026-03-01"),
                ("2026-03-01", "2026-03-02"),
            ])
        );
        assert_eq!(label(Granularity::Daily, d("2026-03-01")), "2026-03-01");
        let b = Buckets::whole(period("2026-03-01", "2026-03-31"));
        assert_eq!(ranges(&b), pairs(&[("2026-03-01", "2026-04-01")]));
        assert!(!b.is_empty());
        assert_eq!(b.range(5), (d("2026-04-01"), d("2026-04-01")));
    }

    #[test]
    fn the_previous_buckets_line_up_with_the_current_ones() {
        let p = period("2026-03-01", "2026-03-31");
        let b = Buckets::with_previous(p, None);
        assert_eq!(
            ranges(&b),
            pairs(&[("2026-01-29", "2026-03-01"), ("2026-03-01", "2026-04-01")])
        );
        let b = Buckets::with_previous(
            period("2026-03-04", "2026-03-17"),
            Some(Granularity::Weekly),
        );
        // 14 nights back: the previous half is the current one moved back two weeks.
        assert_eq!(
            ranges(&b),
            pairs(&[
                ("2026-02-18", "2026-02-23"),
                ("2026-02-23", "2026-03-02"),
                ("2026-03-02", "2026-03-04"),
                ("2026-03-04", "2026-03-09"),
                ("2026-03-09", "2026-03-16"),
                ("2026-03-16", "2026-03-18"),
            ])
        );
        let b = Buckets::with_previous(p, Some(Granularity::Monthly));
        assert_eq!(
            ranges(&b),
            pairs(&[("2026-01-29", "2026-03-01"), ("2026-03-01", "2026-04-01")])
        );
        let b = Buckets::with_previous(p, Some(Granularity::Daily));
        assert_eq!(b.len(), 62);
        assert_eq!(b.range(0), (d("2026-01-29"), d("2026-01-30")));
        assert_eq!(b.range(30), (d("2026-02-28"), d("2026-03-01")));
        assert_eq!(b.range(31), (d("2026-03-01"), d("2026-03-02")));
    }
}
