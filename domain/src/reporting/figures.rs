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

use std::collections::HashSet;

use chrono::{Datelike as _, Days, Months, NaiveDate, TimeDelta};
use futures::{StreamExt as _, stream::BoxStream};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::{Error, Problems, Result};

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

/// `d` moved by `days` (negative: back), saturating at chrono's range, which no parsed date (years
/// 1 to 9999) nor any period of them comes near.
fn add_days(d: NaiveDate, days: i64) -> NaiveDate {
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

/// The currency of an answer's money figures: an ISO 4217 code, upper case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency(String);

impl Currency {
    /// The `field` of a request: absent or empty gives `default`; anything but 3 ASCII letters
    /// is a problem on `field`.
    pub fn parse(
        problems: &mut Problems,
        field: &str,
        raw: Option<&str>,
        default: &Currency,
    ) -> Option<Currency> {
        let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
            return Some(default.clone());
        };
        let parsed = Self::new_setting(raw);
        if parsed.is_none() {
            problems.push(
                field,
                "invalid_format",
                format!("{field} must be a 3-letter ISO 4217 currency code such as THB or USD"),
            );
        }
        parsed
    }

    /// 3 ASCII letters in any letter case (surrounding blanks ignored), upper-cased.
    pub fn new_setting(raw: &str) -> Option<Currency> {
        let raw = raw.trim();
        (raw.len() == 3 && raw.bytes().all(|b| b.is_ascii_alphabetic()))
            .then(|| Currency(raw.to_ascii_uppercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// [`DEFAULT_CURRENCY`].
impl Default for Currency {
    fn default() -> Self {
        Currency(DEFAULT_CURRENCY.to_owned())
    }
}

impl TryFrom<String> for Currency {
    type Error = String;

    fn try_from(raw: String) -> Result<Self, String> {
        Self::new_setting(&raw).ok_or_else(|| format!("{raw:?} is not a 3-letter currency code"))
    }
}

impl From<Currency> for String {
    fn from(currency: Currency) -> String {
        currency.0
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `listingIds` of a query, comma-separated (`a,b,c`); absent or empty: none (every ACTIVE
/// listing). A malformed id, an empty member or more than [`MAX_LISTING_IDS`] is a problem on
/// `field`. The same id twice counts once; the order is kept.
pub fn parse_listing_ids(problems: &mut Problems, field: &str, raw: Option<&str>) -> Vec<Uuid> {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    listing_ids_of(problems, field, raw.split(','))
}

/// The listing ids of a list of members (a query's comma-separated ones, a body's array of
/// strings), with the problems of [`parse_listing_ids`].
pub fn listing_ids_of<'a>(
    problems: &mut Problems,
    field: &str,
    members: impl IntoIterator<Item = &'a str>,
) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = Vec::new();
    // Duplicates found by hashing: scanning `ids` for each member is quadratic in the input.
    let mut seen: HashSet<Uuid> = HashSet::new();
    let mut malformed: Vec<String> = Vec::new();
    let mut empty = false;
    for member in members {
        let member = member.trim();
        if member.is_empty() {
            empty = true;
            continue;
        }
        match member.parse::<Uuid>() {
            Ok(id) if seen.insert(id) => ids.push(id),
            Ok(_) => {}
            // Quoted and cut short: the message names the first few without echoing the input.
            Err(_) if malformed.len() < 5 => {
                malformed.push(format!("{:?}", member.chars().take(40).collect::<String>()))
            }
            Err(_) => {}
        }
    }
    if empty {
        problems.push(
            field,
            "invalid_format",
            format!(
                "{field} must be listing ids (UUIDs) separated by commas, with no empty member"
            ),
        );
    }
    if !malformed.is_empty() {
        let shown: Vec<&str> = malformed.iter().map(String::as_str).collect();
        problems.push(
            field,
            "invalid_format",
            format!(
                "{field} must hold listing ids (UUIDs): {} is not one",
                shown.join(", ")
            ),
        );
    }
    if ids.len() > MAX_LISTING_IDS {
        problems.push(
            field,
            "out_of_range",
            format!(
                "{field} may name at most {MAX_LISTING_IDS} listings, not {}",
                ids.len()
            ),
        );
    }
    ids
}

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

/// The listings figures are about.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Empty: every ACTIVE listing; else exactly these (any status).
    pub listing_ids: Vec<Uuid>,
}

impl Scope {
    /// The scope of `listing_ids` (duplicates dropped), once each is known to be a listing: an
    /// unknown one is a validation error on `listingIds` naming it.
    pub async fn resolve(conn: &mut PgConnection, listing_ids: Vec<Uuid>) -> Result<Scope> {
        let mut ids = listing_ids;
        let mut seen: HashSet<Uuid> = HashSet::with_capacity(ids.len());
        ids.retain(|id| seen.insert(*id));
        if ids.is_empty() {
            return Ok(Scope::default());
        }
        if ids.len() > MAX_LISTING_IDS {
            return Err(Error::invalid(
                "listingIds",
                "out_of_range",
                format!("listingIds may name at most {MAX_LISTING_IDS} listings"),
            ));
        }
        let unknown: Vec<Uuid> = sqlx::query_scalar(
            "SELECT t.id FROM unnest($1::uuid[]) WITH ORDINALITY AS t (id, n)
             WHERE NOT EXISTS (SELECT 1 FROM pms_listings l WHERE l.id = t.id)
             ORDER BY t.n",
        )
        .bind(&ids)
        .fetch_all(&mut *conn)
        .await?;
        if !unknown.is_empty() {
            let named: Vec<String> = unknown.iter().map(Uuid::to_string).collect();
            return Err(Error::invalid(
                "listingIds",
                "invalid_value",
                format!("no listing has the id {}", named.join(", ")),
            ));
        }
        Ok(Scope { listing_ids: ids })
    }

    /// The names of the listings the scope names, by name (none: every ACTIVE listing, which
    /// the caller says in words), for an export's Definitions sheet.
    pub async fn names(&self, conn: &mut PgConnection) -> Result<Vec<String>> {
        if self.listing_ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_scalar(
            "SELECT name FROM pms_listings WHERE id = ANY($1) ORDER BY lower(name), id",
        )
        .bind(self.listing_ids.as_slice())
        .fetch_all(conn)
        .await?)
    }

    /// `null` for every ACTIVE listing, else the ids.
    pub fn json(&self) -> Value {
        if self.listing_ids.is_empty() {
            Value::Null
        } else {
            json!(self.listing_ids)
        }
    }
}

/// Contiguous ranges of nights: bucket i is `[starts[i], starts[i + 1])`, the last ends at `to`
/// (excluded). Never empty once built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buckets {
    starts: Vec<NaiveDate>,
    to: NaiveDate,
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

/// The sums over a range of nights, before any division or rounding.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// Exact (numeric, 10 decimals).
    pub revenue: Decimal,
    pub booked_nights: i64,
    /// Booked nights of the stays in the answer's currency (ADR's divisor).
    pub priced_nights: i64,
    pub owner_nights: i64,
    /// Listings × the range's nights.
    pub nights: i64,
    pub bookings: i64,
}

impl Figures {
    /// Nights less owner nights.
    pub fn available_nights(&self) -> i64 {
        (self.nights - self.owner_nights).max(0)
    }

    pub fn revenue_rounded(&self) -> Decimal {
        round2(self.revenue)
    }

    /// Booked / available × 100, rounded to 2 decimals; 0 without available nights.
    pub fn occupancy(&self) -> Decimal {
        ratio(
            Decimal::from(self.booked_nights) * Decimal::ONE_HUNDRED,
            self.available_nights(),
        )
    }

    /// Revenue / priced nights, rounded to 2 decimals; 0 without priced nights.
    pub fn adr(&self) -> Decimal {
        ratio(self.revenue, self.priced_nights)
    }

    /// Revenue / available nights, rounded to 2 decimals; 0 without available nights.
    pub fn revpar(&self) -> Decimal {
        ratio(self.revenue, self.available_nights())
    }
}

/// `numerator / denominator` rounded to 2 decimals, 0 when the denominator is 0.
fn ratio(numerator: Decimal, denominator: i64) -> Decimal {
    if denominator == 0 {
        return Decimal::ZERO;
    }
    numerator
        .checked_div(Decimal::from(denominator))
        .map(round2)
        .unwrap_or_default()
}

/// 2 decimals, half away from zero (0.005 → 0.01).
pub fn round2(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// (value − previous) / previous × 100 of the figures rounded to 2 decimals (as they are shown:
/// [`DEFINITIONS`]), rounded to 2 decimals; `None` when the rounded previous is 0 (0.00). The
/// figures may be given rounded or not: they are rounded here first.
pub fn change(value: Decimal, previous: Decimal) -> Option<Decimal> {
    let (value, previous) = (round2(value), round2(previous));
    if previous.is_zero() {
        return None;
    }
    (value - previous)
        .checked_mul(Decimal::ONE_HUNDRED)
        .and_then(|d| d.checked_div(previous))
        .map(round2)
}

/// The JSON number of a (2-decimal) figure.
pub fn number(d: Decimal) -> Value {
    // Through the decimal text: the f64 nearest to 73.33 prints as 73.33.
    Value::from(d.to_string().parse::<f64>().unwrap_or_default())
}

/// [`change`] as JSON: a number, or `null`.
fn change_json(value: Decimal, previous: Decimal) -> Value {
    change(value, previous).map_or(Value::Null, number)
}

/// A listing in scope, as the per-listing figures name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingRef {
    pub id: Uuid,
    pub pms_id: i64,
    pub name: String,
    pub status: String,
    pub bedrooms: Option<i32>,
    pub location: Option<String>,
    /// The listing's own currency in the PMS (the figures' currency is the answer's).
    pub currency: Option<String>,
}

/// The figures of one bucket, of one listing or of every listing in scope.
#[derive(Debug, Clone)]
pub struct BucketFigures {
    /// Index in the [`Buckets`].
    pub bucket: usize,
    /// `None`: every listing in scope together.
    pub listing: Option<ListingRef>,
    pub figures: Figures,
}

/// The listings in scope (alias `l` of `pms_listings`): those of `$1` (a `uuid[]`), or every
/// ACTIVE one when `$1` is empty.
macro_rules! in_scope {
    () => {
        "CASE WHEN cardinality($1::uuid[]) = 0 THEN l.status = 'ACTIVE' ELSE l.id = ANY($1::uuid[]) END"
    };
}

// The statement's binds: $1 the scope's listing ids (uuid[]), $2 the buckets' first nights
// (date[], ascending), $3 the night after the last bucket (date), $4 the currency (text).
//
// `buckets`: (i, b_from, b_to), i from 1 as the array's subscripts.
// `parts`: one row per counted stay and bucket it touches: its nights inside the bucket, its own
// nights, its amount, whether it is in the currency and whether it checks in inside the bucket.
// The buckets touched are those of its first and last night inside the range (`width_bucket`
// over the buckets' first nights), and every one between: a set-returning call in the select
// list (one ProjectSet node) rather than a LATERAL function scan, which cost ~40 % of the
// metrics statement (re-scanned per stay, measured on 100,000 stays). Currencies are stored
// upper-cased (`hostaway`), so the comparison needs no function. The scope is a semi-join on
// `pms_listings` rather than a CTE, so that the scan of the stays may run in parallel.
// `owner`: per bucket and listing, the distinct nights inside the range that owner stays block
// (offsets from the range's first night, so the series is of integers, not of timestamps).
macro_rules! figures_with {
    () => {
        concat!(
            "WITH buckets AS (
    SELECT g.i, ($2::date[])[g.i] AS b_from, coalesce(($2::date[])[g.i + 1], $3::date) AS b_to
    FROM generate_subscripts($2::date[], 1) AS g (i)),
parts AS (
    SELECT x.listing_pms_id, x.i,
           least(x.check_out, coalesce(($2::date[])[x.i + 1], $3::date))
               - greatest(x.check_in, ($2::date[])[x.i]) AS nights,
           x.check_out - x.check_in AS stay_nights,
           x.total_amount,
           coalesce(x.currency = $4::text, false) AS priced,
           x.check_in >= ($2::date[])[x.i] AS checks_in
    FROM (SELECT r.listing_pms_id, r.check_in, r.check_out, r.total_amount, r.currency,
                 generate_series(width_bucket(greatest(r.check_in, ($2::date[])[1]), $2::date[]),
                                 width_bucket(least(r.check_out, $3::date) - 1, $2::date[])) AS i
          FROM pms_reservations r
          WHERE r.status = 'CONFIRMED' AND r.check_out > ($2::date[])[1] AND r.check_in < $3::date
            AND r.check_out > r.check_in
            AND r.listing_pms_id IN (SELECT l.pms_id FROM pms_listings l WHERE ",
            in_scope!(),
            ")) x),
owner AS (
    SELECT width_bucket(($2::date[])[1] + d.k, $2::date[]) AS i, d.listing_pms_id, count(*) AS nights
    FROM (SELECT DISTINCT r.listing_pms_id, n.k
          FROM pms_reservations r
          CROSS JOIN LATERAL generate_series(
              greatest(r.check_in, ($2::date[])[1]) - ($2::date[])[1],
              least(r.check_out, $3::date) - ($2::date[])[1] - 1) AS n (k)
          WHERE r.status = 'OWNER_STAY' AND r.check_out > ($2::date[])[1] AND r.check_in < $3::date
            AND r.listing_pms_id IN (SELECT l.pms_id FROM pms_listings l WHERE ",
            in_scope!(),
            ")) d
    GROUP BY 1, 2)"
        )
    };
}

// The sums of `parts` (alias `p`) per group. A stay wholly inside the bucket adds its amount
// as it is (no division).
macro_rules! part_sums {
    () => {
        "sum(p.nights) AS booked, sum(p.nights) FILTER (WHERE p.priced) AS priced,
         sum(CASE WHEN p.nights = p.stay_nights THEN p.total_amount
                  ELSE p.total_amount * p.nights / p.stay_nights END) FILTER (WHERE p.priced) AS revenue,
         count(*) FILTER (WHERE p.checks_in) AS bookings"
    };
}

// The figure columns from the sums (`k`) and the owner nights (`ow`). The revenue is kept to 10
// decimals: a division's repeating decimals would pass the 28 digits a Decimal holds, and 10
// decimals change no figure rounded to 2.
macro_rules! figure_columns {
    () => {
        "coalesce(k.booked, 0)::bigint AS booked_nights, coalesce(k.priced, 0)::bigint AS priced_nights,
         coalesce(round(k.revenue, 10), 0) AS revenue, coalesce(k.bookings, 0)::bigint AS bookings,
         coalesce(ow.nights, 0)::bigint AS owner_nights"
    };
}

/// Per bucket, every listing in scope together. Public for `bench/reporting.sh`, which has
/// Postgres run it alone beside the route (`reporting-sql`).
pub const TOTALS: &str = concat!(
    figures_with!(),
    "
SELECT b.i, NULL::uuid AS listing_id, NULL::bigint AS pms_id, NULL::text AS name, NULL::text AS status,
       NULL::integer AS bedrooms, NULL::text AS location, NULL::text AS listing_currency,
       (b.b_to - b.b_from)::bigint * (SELECT count(*) FROM pms_listings l WHERE ",
    in_scope!(),
    ") AS nights, ",
    figure_columns!(),
    "
FROM buckets b
LEFT JOIN (SELECT p.i, ",
    part_sums!(),
    " FROM parts p GROUP BY p.i) k ON k.i = b.i
LEFT JOIN (SELECT o.i, sum(o.nights) AS nights FROM owner o GROUP BY o.i) ow ON ow.i = b.i
ORDER BY b.i"
);

/// Per listing in scope and bucket, every listing present.
const BY_LISTING: &str = concat!(
    figures_with!(),
    ",
scope AS (
    SELECT l.id, l.pms_id, l.name, l.status, l.bedrooms, l.location, l.currency
    FROM pms_listings l WHERE ",
    in_scope!(),
    ")
SELECT b.i, s.id AS listing_id, s.pms_id, s.name, s.status, s.bedrooms, s.location,
       s.currency AS listing_currency, (b.b_to - b.b_from)::bigint AS nights, ",
    figure_columns!(),
    "
FROM scope s
CROSS JOIN buckets b
LEFT JOIN (SELECT p.listing_pms_id, p.i, ",
    part_sums!(),
    " FROM parts p GROUP BY p.listing_pms_id, p.i) k ON k.listing_pms_id = s.pms_id AND k.i = b.i
LEFT JOIN owner ow ON ow.listing_pms_id = s.pms_id AND ow.i = b.i
ORDER BY lower(s.name), s.id, b.i"
);

/// A row of [`TOTALS`] or [`BY_LISTING`].
#[derive(sqlx::FromRow)]
struct FigureRow {
    i: i32,
    listing_id: Option<Uuid>,
    pms_id: Option<i64>,
    name: Option<String>,
    status: Option<String>,
    bedrooms: Option<i32>,
    location: Option<String>,
    listing_currency: Option<String>,
    nights: i64,
    booked_nights: i64,
    priced_nights: i64,
    revenue: Decimal,
    bookings: i64,
    owner_nights: i64,
}

impl From<FigureRow> for BucketFigures {
    fn from(row: FigureRow) -> Self {
        let listing = row.listing_id.map(|id| ListingRef {
            id,
            pms_id: row.pms_id.unwrap_or_default(),
            name: row.name.unwrap_or_default(),
            status: row.status.unwrap_or_default(),
            bedrooms: row.bedrooms,
            location: row.location,
            currency: row.listing_currency,
        });
        BucketFigures {
            // SQL's subscripts start at 1.
            bucket: usize::try_from(row.i - 1).unwrap_or_default(),
            listing,
            figures: Figures {
                revenue: row.revenue,
                booked_nights: row.booked_nights,
                priced_nights: row.priced_nights,
                owner_nights: row.owner_nights,
                nights: row.nights,
                bookings: row.bookings,
            },
        }
    }
}

/// The one statement behind every figure. `by_listing` false: one row per bucket (the listings
/// in scope summed), in bucket order; true: one row per listing in scope and bucket, every
/// listing present even without stays, ordered by name (any letter case), id, bucket.
pub async fn figures(
    conn: &mut PgConnection,
    scope: &Scope,
    buckets: &Buckets,
    currency: &Currency,
    by_listing: bool,
) -> Result<Vec<BucketFigures>> {
    let rows: Vec<FigureRow> = sqlx::query_as(if by_listing { BY_LISTING } else { TOTALS })
        .bind(&scope.listing_ids)
        .bind(&buckets.starts)
        .bind(buckets.to)
        .bind(currency.as_str())
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.into_iter().map(BucketFigures::from).collect())
}

/// The rows of [`figures`] by listing as a stream (the exports), so that a large export never
/// holds them all.
pub fn figures_stream<'c>(
    conn: &'c mut PgConnection,
    scope: &'c Scope,
    buckets: &'c Buckets,
    currency: &'c Currency,
) -> BoxStream<'c, Result<BucketFigures>> {
    sqlx::query_as::<_, FigureRow>(BY_LISTING)
        .bind(&scope.listing_ids)
        .bind(&buckets.starts)
        .bind(buckets.to)
        .bind(currency.as_str())
        .fetch(conn)
        .map(|row| row.map(BucketFigures::from).map_err(Error::from))
        .boxed()
}

/// The figures of buckets 0 and 1 of a [`Buckets::with_previous`] of the whole period: (previous,
/// current).
fn previous_and_current(rows: &[BucketFigures]) -> (Figures, Figures) {
    let of = |bucket: usize| {
        rows.iter()
            .find(|r| r.bucket == bucket)
            .map(|r| r.figures)
            .unwrap_or_default()
    };
    (of(0), of(1))
}

/// `/dashboard/metrics`: `{period: {startDate, endDate}, previousPeriod: {...}, currency,
/// listingIds: [..] | null, revenue: {total, previous, change}, occupancy: {rate, previous,
/// change}, adr: {value, previous, change}, bookings: {count, previous, change}, revpar: {value,
/// previous, change}, nights: {booked, available, previousBooked, previousAvailable, priced,
/// previousPriced}}`.
pub async fn metrics(
    conn: &mut PgConnection,
    scope: &Scope,
    period: Period,
    currency: &Currency,
) -> Result<Value> {
    let buckets = Buckets::with_previous(period, None);
    let rows = figures(conn, scope, &buckets, currency, false).await?;
    let (previous, current) = previous_and_current(&rows);
    // The figures as shown (rounded), and the change between those.
    let trio = |value: Decimal, before: Decimal| {
        (number(value), number(before), change_json(value, before))
    };
    let (revenue, revenue_before, revenue_change) =
        trio(current.revenue_rounded(), previous.revenue_rounded());
    let (occupancy, occupancy_before, occupancy_change) =
        trio(current.occupancy(), previous.occupancy());
    let (adr, adr_before, adr_change) = trio(current.adr(), previous.adr());
    let (revpar, revpar_before, revpar_change) = trio(current.revpar(), previous.revpar());
    Ok(json!({
        "period": period.json(),
        "previousPeriod": period.previous().json(),
        "currency": currency.as_str(),
        "listingIds": scope.json(),
        "revenue": {"total": revenue, "previous": revenue_before, "change": revenue_change},
        "occupancy": {"rate": occupancy, "previous": occupancy_before, "change": occupancy_change},
        "adr": {"value": adr, "previous": adr_before, "change": adr_change},
        "bookings": {
            "count": current.bookings,
            "previous": previous.bookings,
            "change": change_json(Decimal::from(current.bookings), Decimal::from(previous.bookings)),
        },
        "revpar": {"value": revpar, "previous": revpar_before, "change": revpar_change},
        "nights": {
            "booked": current.booked_nights,
            "available": current.available_nights(),
            "previousBooked": previous.booked_nights,
            "previousAvailable": previous.available_nights(),
            "priced": current.priced_nights,
            "previousPriced": previous.priced_nights,
        },
    }))
}

/// `/dashboard/charts`: `{type, period, startDate, endDate, currency, labels: [..], datasets:
/// [{label: "Revenue" | "Occupancy", data: [..]}, {label: "Previous period", data: [..],
/// startDate, endDate}]}`, one value per label: revenue (rounded) or occupancy per bucket.
pub async fn chart(
    conn: &mut PgConnection,
    scope: &Scope,
    period: Period,
    chart: ChartType,
    g: Granularity,
    currency: &Currency,
) -> Result<Value> {
    let current = Buckets::split(period, g);
    let count = current.len();
    let buckets = Buckets::with_previous(period, Some(g));
    let rows = figures(conn, scope, &buckets, currency, false).await?;
    let mut values = vec![Figures::default(); buckets.len()];
    for row in rows {
        if let Some(slot) = values.get_mut(row.bucket) {
            *slot = row.figures;
        }
    }
    let value = |f: &Figures| match chart {
        ChartType::Revenue => number(f.revenue_rounded()),
        ChartType::Occupancy => number(f.occupancy()),
    };
    let (before, now) = values.split_at(count.min(values.len()));
    let labels: Vec<String> = current.starts().iter().map(|d| label(g, *d)).collect();
    let previous = period.previous();
    Ok(json!({
        "type": chart.as_str(),
        "period": g.as_str(),
        "startDate": period.start.to_string(),
        "endDate": period.end.to_string(),
        "currency": currency.as_str(),
        "labels": labels,
        "datasets": [
            {"label": chart.label(), "data": now.iter().map(&value).collect::<Vec<Value>>()},
            {
                "label": "Previous period",
                "data": before.iter().map(&value).collect::<Vec<Value>>(),
                "startDate": previous.start.to_string(),
                "endDate": previous.end.to_string(),
            },
        ],
    }))
}

/// `/dashboard/occupancy`: `{startDate, endDate, calendar: [{date, occupancy, bookedNights,
/// availableNights}] one per night, byProperty: [{listingId, pmsId, name, occupancy,
/// bookedNights, availableNights}] highest occupancy first, then by name}`. No money: the
/// currency plays no part.
pub async fn occupancy(conn: &mut PgConnection, scope: &Scope, period: Period) -> Result<Value> {
    let currency = Currency::default();
    let nights = Buckets::split(period, Granularity::Daily);
    let calendar: Vec<Value> = figures(conn, scope, &nights, &currency, false)
        .await?
        .into_iter()
        .map(|row| {
            let (date, _) = nights.range(row.bucket);
            json!({
                "date": date.to_string(),
                "occupancy": number(row.figures.occupancy()),
                "bookedNights": row.figures.booked_nights,
                "availableNights": row.figures.available_nights(),
            })
        })
        .collect();
    let mut listings = figures(conn, scope, &Buckets::whole(period), &currency, true).await?;
    // Stable: equal occupancies stay in the statement's order, by name.
    listings.sort_by_key(|row| std::cmp::Reverse(row.figures.occupancy()));
    let by_property: Vec<Value> = listings
        .into_iter()
        .filter_map(|row| {
            let listing = row.listing?;
            Some(json!({
                "listingId": listing.id,
                "pmsId": listing.pms_id,
                "name": listing.name,
                "occupancy": number(row.figures.occupancy()),
                "bookedNights": row.figures.booked_nights,
                "availableNights": row.figures.available_nights(),
            }))
        })
        .collect();
    Ok(json!({
        "startDate": period.start.to_string(),
        "endDate": period.end.to_string(),
        "calendar": calendar,
        "byProperty": by_property,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn dec(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn period(start: &str, end: &str) -> Period {
        Period {
            start: d(start),
            end: d(end),
        }
    }

    fn parse(start: Option<&str>, end: Option<&str>, max: i64) -> (Option<Period>, Problems) {
        let mut problems = Problems::new();
        let parsed = Period::parse(&mut problems, start, end, d("2026-03-31"), max);
        (parsed, problems)
    }

    fn fields(problems: Problems) -> Vec<(String, &'static str)> {
        match problems.finish() {
            Ok(()) => Vec::new(),
            Err(Error::Validation(fields)) => {
                fields.into_iter().map(|f| (f.field, f.code)).collect()
            }
            Err(other) => panic!("{other}"),
        }
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

    #[test]
    fn currencies_are_three_letters_upper_cased() {
        let thb = Currency::default();
        assert_eq!(thb.as_str(), "THB");
        let mut problems = Problems::new();
        assert_eq!(
            Currency::parse(&mut problems, "currency", Some(" usd "), &thb),
            Currency::new_setting("USD")
        );
        assert_eq!(
            Currency::parse(&mut problems, "currency", None, &thb),
            Some(thb.clone())
        );
        assert_eq!(
            Currency::parse(&mut problems, "currency", Some(""), &thb),
            Some(thb.clone())
        );
        assert!(problems.is_empty());
        for bad in ["US", "USDD", "U$D", "ÉUR", "12A"] {
            let mut problems = Problems::new();
            assert_eq!(
                Currency::parse(&mut problems, "currency", Some(bad), &thb),
                None,
                "{bad}"
            );
            assert_eq!(
                fields(problems),
                vec![("currency".to_owned(), "invalid_format")]
            );
        }
        assert_eq!(Currency::new_setting("idr").unwrap().to_string(), "IDR");
        assert_eq!(serde_json::to_value(&thb).unwrap(), json!("THB"));
        assert_eq!(
            serde_json::from_value::<Currency>(json!("eur"))
                .unwrap()
                .as_str(),
            "EUR"
        );
        assert!(serde_json::from_value::<Currency>(json!("euro")).is_err());
    }

    #[test]
    fn listing_ids_are_comma_separated_uuids() {
        let a = Uuid::now_v7();
        let b = Uuid::now_v7();
        let mut problems = Problems::new();
        assert_eq!(
            parse_listing_ids(&mut problems, "listingIds", None),
            Vec::<Uuid>::new()
        );
        assert_eq!(
            parse_listing_ids(&mut problems, "listingIds", Some(" ")),
            Vec::<Uuid>::new()
        );
        assert_eq!(
            parse_listing_ids(
                &mut problems,
                "listingIds",
                Some(format!("{a}, {b},{a}").as_str())
            ),
            vec![a, b]
        );
        assert!(problems.is_empty());
        let mut problems = Problems::new();
        parse_listing_ids(
            &mut problems,
            "listingIds",
            Some(format!("{a},,{b}").as_str()),
        );
        assert_eq!(
            fields(problems),
            vec![("listingIds".to_owned(), "invalid_format")]
        );
        let mut problems = Problems::new();
        parse_listing_ids(
            &mut problems,
            "listingIds",
            Some(format!("{a},villa-7").as_str()),
        );
        let Err(Error::Validation(errors)) = problems.finish() else {
            panic!("a validation error expected")
        };
        assert!(
            errors[0].message.contains("\"villa-7\""),
            "{}",
            errors[0].message
        );
        let many: Vec<String> = (0..=MAX_LISTING_IDS)
            .map(|_| Uuid::now_v7().to_string())
            .collect();
        let mut problems = Problems::new();
        parse_listing_ids(&mut problems, "listingIds", Some(&many.join(",")));
        assert_eq!(
            fields(problems),
            vec![("listingIds".to_owned(), "out_of_range")]
        );
        let mut problems = Problems::new();
        assert_eq!(
            listing_ids_of(&mut problems, "listingIds", [a.to_string().as_str()]),
            vec![a]
        );
    }

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

    #[test]
    fn figures_round_at_the_end_and_divide_by_zero_to_zero() {
        let f = Figures {
            revenue: dec("1000.0000000000") / Decimal::from(3),
            booked_nights: 11,
            priced_nights: 7,
            owner_nights: 3,
            nights: 33,
            bookings: 2,
        };
        assert_eq!(f.available_nights(), 30);
        assert_eq!(f.revenue_rounded(), dec("333.33"));
        // 11 / 30 = 36.666…
        assert_eq!(f.occupancy(), dec("36.67"));
        // 333.333… / 7 = 47.619…: from the exact revenue, not from 333.33.
        assert_eq!(f.adr(), dec("47.62"));
        // 333.333… / 30 = 11.111…
        assert_eq!(f.revpar(), dec("11.11"));
        let none = Figures::default();
        assert_eq!(none.occupancy(), Decimal::ZERO);
        assert_eq!(none.adr(), Decimal::ZERO);
        assert_eq!(none.revpar(), Decimal::ZERO);
        // Owner stays blocking more than the nights leave none available, never fewer.
        let blocked = Figures {
            booked_nights: 2,
            owner_nights: 40,
            nights: 31,
            ..Figures::default()
        };
        assert_eq!(blocked.available_nights(), 0);
        assert_eq!(blocked.occupancy(), Decimal::ZERO);
        assert_eq!(round2(dec("0.005")), dec("0.01"));
        assert_eq!(round2(dec("-0.005")), dec("-0.01"));
        assert_eq!(round2(dec("2.675")), dec("2.68"));
        assert_eq!(round2(dec("2.6749999")), dec("2.67"));
    }

    #[test]
    fn change_is_null_when_previous_is_zero() {
        assert_eq!(change(dec("150"), dec("100")), Some(dec("50")));
        assert_eq!(change(dec("50"), dec("100")), Some(dec("-50")));
        assert_eq!(change(dec("0"), dec("100")), Some(dec("-100")));
        assert_eq!(change(dec("100"), dec("0")), None);
        assert_eq!(change(dec("0"), dec("0")), None);
        // 2 / 3 − 1 = −33.333…
        assert_eq!(change(dec("2"), dec("3")), Some(dec("-33.33")));
        assert_eq!(change(dec("73.33"), dec("64.52")), Some(dec("13.65")));
        assert_eq!(change_json(dec("1"), dec("0")), Value::Null);
        assert_eq!(number(dec("73.33")), json!(73.33));
        assert_eq!(number(dec("0")), json!(0.0));
    }

    #[test]
    fn change_is_computed_from_the_figures_as_shown() {
        // RevPAR 15,166.666… / 88 = 172.348… shown 172.35, beside 7,500 / 93 = 80.645… shown
        // 80.65: (172.35 − 80.65) / 80.65 × 100 = 113.7011… → 113.70, what a reader gets from the
        // two numbers (the unrounded ones would give 113.7121… → 113.71).
        let revenue = dec("15166.6666666667");
        assert_eq!(
            change(revenue / Decimal::from(88), dec("7500") / Decimal::from(93)),
            Some(dec("113.70"))
        );
        // Both shown as 100.00: no change (the unrounded 0.008 % would show as 0.01).
        assert_eq!(change(dec("100.004"), dec("99.996")), Some(Decimal::ZERO));
        // A previous shown as 0.00 is 0: null, not (100 − 0.004) / 0.004 × 100 = 2,499,900.
        assert_eq!(change(dec("100"), dec("0.004")), None);
        assert_eq!(change_json(dec("100"), dec("0.0049999")), Value::Null);
        assert_eq!(change(dec("100"), dec("-0.004")), None);
        // 0.005 is shown as 0.01: (100 − 0.01) / 0.01 × 100.
        assert_eq!(change(dec("100"), dec("0.005")), Some(dec("999900")));
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
