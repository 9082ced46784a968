//! The reporting figures, defined once: the dashboard (`/reporting/dashboard/...`), the listings'
//! `metrics` and the exports all read them from here, so that a figure on one screen is the figure
//! on every other and in the spreadsheet. [`DEFINITIONS`] states them for the OpenAPI description
//! and the export's Definitions sheet; this comment says how they are computed.
//!
//! A period `[start, end]` holds the nights dated `start` through `end` (a night is dated by its
//! evening); inside, a range of nights is half-open, `[from, to)` with `to = end + 1`. A stay
//! occupies the nights `[check_in, check_out)`; over a range it counts its overlap,
//! `least(check_out, to) - greatest(check_in, from)`. For the listings in scope ([`Scope`]):
//! - counted stays are the `CONFIRMED` reservations; `OWNER_STAY` nights block a listing's night
//!   (a set per listing: two owner stays on one night block it once); every other status counts
//!   for nothing. A stay without a night (checking out on its check-in day) counts for nothing;
//! - booked nights are the SUM of the counted stays' overlaps (what an accountant reproduces from
//!   the rows); priced nights the same over the stays in the answer's currency;
//! - revenue is, over the counted stays in the answer's currency, `total_amount × overlap /
//!   (check_out − check_in)`, exact in SQL (numeric, kept to 10 decimals), never converted;
//! - nights are the listings × the range's nights; available nights those less the owner nights;
//! - bookings are the counted stays checking in inside the range (any currency);
//! - occupancy = booked / available × 100, ADR = revenue / priced nights, RevPAR = revenue /
//!   available, each rounded to 2 decimals half away from zero at the end only, 0 for x / 0;
//! - `change` = (value − previous) / previous × 100 of the figures as shown (rounded to 2
//!   decimals), itself rounded to 2 decimals; null when the shown previous is 0.00, so that a
//!   reader recomputes it from the two numbers on the screen, and a previous of a few
//!   thousandths gives no change of millions of percent.
//!
//! One statement computes them for any contiguous set of ranges ([`Buckets`]): the metrics (the
//! previous period and the period), the chart series (days, weeks, months of both), the occupancy
//! calendar, a listing page's metrics and the exports' rows. A stay is mapped to the buckets it
//! touches with `width_bucket` over the buckets' first nights (a binary search), so the work is
//! per stay and bucket touched, never stays × buckets; the stays are read by the partial index
//! `pms_reservations_stays` (check_out, check_in, INCLUDE the columns read): an index-only scan.
//!
//! The parts: `period` (a period and its parameters), `currency`, `scope` (the listings in scope,
//! `listingIds`), `buckets` (a chart's type and granularity, the ranges and their labels), `sums`
//! (the sums and the figures made of them: ratios, rounding, change), `sql` (the statement and
//! its rows) and `views` (the dashboard's metrics, chart and occupancy); the limits and the
//! definitions as text are here.

mod buckets;
mod currency;
mod period;
mod scope;
mod sql;
mod sums;
mod views;

pub use buckets::{Buckets, ChartType, Granularity, label};
pub use currency::Currency;
pub use period::Period;
pub use scope::{Scope, listing_ids_of, parse_listing_ids};
pub use sql::{BucketFigures, ListingRef, TOTALS, figures, figures_stream};
pub use sums::{Figures, change, number, round2};
pub use views::{chart, metrics, occupancy};

use chrono::NaiveDate;

/// The longest period a figure covers, in nights.
pub const MAX_PERIOD_NIGHTS: i64 = 366;
/// The earliest first night of a period: spreadsheets know no date before 1900.
pub const EARLIEST_DATE: NaiveDate = NaiveDate::from_ymd_opt(1900, 1, 1).expect("a date");
/// The longest period of a monthly chart and of the revenue export (two years of months).
pub const MAX_MONTHLY_PERIOD_NIGHTS: i64 = 730;
/// The most listings a request may name.
pub const MAX_LISTING_IDS: usize = 500;
/// The chart `type`s.
pub const CHART_TYPES: &[&str] = &["revenue", "occupancy"];
/// The chart `period`s (the size of a bucket).
pub const CHART_PERIODS: &[&str] = &["daily", "weekly", "monthly"];
/// The currency of money figures when neither the request nor `REPORTING_CURRENCY` names one.
pub const DEFAULT_CURRENCY: &str = "THB";

/// The formulas as text, for OpenAPI descriptions and the export's Definitions sheet.
pub const DEFINITIONS: &str = "Listings in scope: those named by listingIds (any status), else \
every ACTIVE listing. Counted stays: their CONFIRMED reservations; OWNER_STAY nights are blocked \
nights; other statuses count for nothing. A stay occupies the nights from checkIn to the day before \
checkOut and counts only its nights inside the period. Booked nights: the sum of the counted \
stays' nights inside the period. Revenue: each counted stay's totalAmount spread evenly over its \
nights, summed over its nights inside the period. Money figures count only stays in the answer's \
currency, never converted: revenue, and the nights ADR divides by. Available nights: per listing, \
the period's nights less its owner-stay nights. Occupancy = booked nights / available nights × 100. \
ADR = revenue / booked nights of stays in the currency. RevPAR = revenue / available nights. \
Bookings: counted stays checking in inside the period (any currency). Figures are rounded to 2 \
decimals (half away from zero) at the end only; a division by 0 gives 0. previous: the same figure \
over the period of as many nights ending the day before startDate. change = (value − previous) / \
previous × 100 of the rounded figures (as shown), rounded to 2 decimals; null when the rounded \
previous is 0 (0.00).";

/// How the period of a figure is read, for OpenAPI descriptions.
pub const PERIOD_DEFINITION: &str = "startDate and endDate (YYYY-MM-DD) are both included: the \
period's nights are those dated startDate through endDate (a night is dated by its evening). \
Defaults: endDate today (the company's day, BUSINESS_TIME_ZONE), startDate 29 days before endDate \
(30 nights). startDate after endDate (400 on startDate) or a period of more than 366 nights (730 \
for monthly charts and the revenue export; 400 on endDate) is refused.";

/// How the currency of money figures is chosen, for OpenAPI descriptions.
pub const CURRENCY_DEFINITION: &str = "currency: an ISO 4217 code (3 letters, any letter case); \
default REPORTING_CURRENCY (THB unless configured). Money figures (revenue, ADR, RevPAR) count \
only the stays in this currency and never convert; stays in other currencies, or with none, still \
count for booked nights, occupancy and bookings.";

#[cfg(test)]
mod tests {
    //! The helpers of every file's tests, and the definitions' own test.

    use chrono::NaiveDate;
    use rust_decimal::Decimal;

    use super::*;
    use crate::{Error, Problems};

    pub(super) fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    pub(super) fn dec(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    pub(super) fn period(start: &str, end: &str) -> Period {
        Period {
            start: d(start),
            end: d(end),
        }
    }

    pub(super) fn fields(problems: Problems) -> Vec<(String, &'static str)> {
        match problems.finish() {
            Ok(()) => Vec::new(),
            Err(Error::Validation(fields)) => {
                fields.into_iter().map(|f| (f.field, f.code)).collect()
            }
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn the_definitions_stay_short_enough_to_quote() {
        assert!(DEFINITIONS.len() <= 1_500, "{}", DEFINITIONS.len());
        for term in ["CONFIRMED", "OWNER_STAY", "ADR", "RevPAR", "null"] {
            assert!(DEFINITIONS.contains(term), "{term}");
        }
        // The limits as the code has them (the revenue export's is `exports`' own check).
        assert!(
            PERIOD_DEFINITION.contains(&format!(
                "more than {MAX_PERIOD_NIGHTS} nights ({MAX_MONTHLY_PERIOD_NIGHTS} for monthly \
                 charts and the revenue export;"
            )),
            "{PERIOD_DEFINITION}"
        );
        assert!(CURRENCY_DEFINITION.contains("REPORTING_CURRENCY"));
    }
}
