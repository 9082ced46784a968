//! Spreadsheet exports of the reporting data (`POST /reporting/export`), as polled jobs. The route
//! stores the request, defaults applied ([`ExportSpec`]), with its job ([`create`]); the job
//! (`jobs::exports`) reads it back ([`load`]), streams the rows from Postgres ([`rows`]) into an
//! Excel workbook or a CSV file, stores the file under `Exports/` and completes the export
//! ([`complete`]); the client polls [`status`] and downloads the file ([`download`]) until it
//! expires, when the expiry job removes it ([`expired`], [`mark_expired`]).
//!
//! The listings, occupancy and revenue exports are the dashboard's figures ([`figures`]) per
//! listing and per night, month or period, and each column states its formula ([`columns`]) in
//! the workbook's Definitions sheet. The reservations export lists what `GET
//! /reporting/reservations` lists for the same filters, in its order
//! ([`reservations::export_stream`]).
//!
//! An export's status is derived where it is read, as a sync run's is ([`super::sync_runs`]): a
//! COMPLETED export past its `expires_at` reads EXPIRED before the expiry job has removed its
//! file, and a PROCESSING export whose job is over without it (failed for good, or gone) reads
//! FAILED with the job's error.

use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use futures::StreamExt;
use futures::stream::BoxStream;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::figures::{
    self, BucketFigures, Buckets, Currency, Figures, Granularity, ListingRef, Period, Scope,
};
use super::reservations::{self, ReservationFilter, ReservationRow};
use super::{CHANNELS, RESERVATION_STATUSES};
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::{Error, Result};

/// An export's `type`.
pub const EXPORT_TYPES: &[&str] = &["reservations", "listings", "occupancy", "revenue"];

/// An export's `format`.
pub const EXPORT_FORMATS: &[&str] = &["excel", "csv"];

/// An export's states: PROCESSING → COMPLETED (→ EXPIRED) or FAILED.
pub const EXPORT_STATUSES: &[&str] = &["PROCESSING", "COMPLETED", "FAILED", "EXPIRED"];

/// What an export lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportType {
    /// One row per reservation, as `GET /reporting/reservations` lists them.
    Reservations,
    /// One row per listing in scope, with its figures over the period.
    Listings,
    /// One row per listing in scope and night of the period.
    Occupancy,
    /// One row per listing in scope and month of the period, then a Total row.
    Revenue,
}

impl ExportType {
    pub const ALL: [ExportType; 4] = [
        Self::Reservations,
        Self::Listings,
        Self::Occupancy,
        Self::Revenue,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reservations => "reservations",
            Self::Listings => "listings",
            Self::Occupancy => "occupancy",
            Self::Revenue => "revenue",
        }
    }

    /// One of [`EXPORT_TYPES`], in any letter case.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(raw))
    }

    /// The name of the workbook's data sheet.
    pub fn title(self) -> &'static str {
        match self {
            Self::Reservations => "Reservations",
            Self::Listings => "Listings",
            Self::Occupancy => "Occupancy",
            Self::Revenue => "Revenue",
        }
    }

    /// The longest period the export may cover, in nights; `None` for reservations, whose
    /// check-in bounds are optional and unbounded, as the list's are.
    pub fn max_nights(self) -> Option<i64> {
        match self {
            Self::Reservations => None,
            Self::Listings | Self::Occupancy => Some(figures::MAX_PERIOD_NIGHTS),
            // Months, as a monthly chart's: two years side by side is a common comparison, and
            // its rows stay few (listings × 25 months, fewer than an occupancy export's nights).
            Self::Revenue => Some(figures::MAX_MONTHLY_PERIOD_NIGHTS),
        }
    }

    /// What one row of the export is, for the Definitions sheet.
    pub fn rows_description(self) -> &'static str {
        match self {
            Self::Reservations => {
                "One row per reservation matching the filters, exactly as GET \
                 /reporting/reservations lists them for the same filters, latest check-in first."
            }
            Self::Listings => {
                "One row per listing in scope with its figures over the period, ordered by name."
            }
            Self::Occupancy => {
                "One row per listing in scope and night of the period, ordered by listing name, \
                 then night."
            }
            Self::Revenue => {
                "One row per listing in scope and calendar month of the period (the first and \
                 last months count only their nights inside the period), ordered by listing \
                 name, then month; then one Total row over every listing and the whole period, \
                 whose figures are computed as GET /reporting/dashboard/metrics computes them \
                 for the same period, listings and currency (that route answers periods of up \
                 to 366 nights)."
            }
        }
    }
}

/// The file an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// An Excel workbook (`.xlsx`): the data sheet and a Definitions sheet.
    Excel,
    /// UTF-8 CSV with a header row.
    Csv,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 2] = [Self::Excel, Self::Csv];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Excel => "excel",
            Self::Csv => "csv",
        }
    }

    /// One of [`EXPORT_FORMATS`], in any letter case.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        Self::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(raw))
    }

    /// The file name's extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Excel => "xlsx",
            Self::Csv => "csv",
        }
    }

    /// The download's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Excel => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            Self::Csv => "text/csv; charset=utf-8",
        }
    }
}

/// What an export contains: stored as the export's `params`, and read back by each attempt of
/// its job, so that every attempt writes the same file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExportSpec {
    #[serde(rename = "type")]
    pub kind: ExportType,
    pub format: ExportFormat,
    /// Reservations: the optional check-in bounds of `GET /reporting/reservations` (both
    /// inclusive). The other types: the period, both inclusive, always set (defaults applied).
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    /// Empty: every ACTIVE listing (reservations: every reservation).
    #[serde(default)]
    pub listing_ids: Vec<Uuid>,
    /// The currency of the money figures of the listings and revenue exports (the reservations
    /// export shows each reservation's own currency).
    pub currency: Currency,
    /// Reservations only: one of [`RESERVATION_STATUSES`].
    pub status: Option<String>,
    /// Reservations only: one of [`CHANNELS`].
    pub channel: Option<String>,
}

/// The member of `set` that `value` is, if any.
fn member(set: &'static [&'static str], value: Option<&str>) -> Option<&'static str> {
    let value = value?;
    set.iter().copied().find(|s| *s == value)
}

impl ExportSpec {
    /// What the download is called: `<type>_<start>_<end>.<ext>`; a reservations export
    /// without both bounds is `reservations_from_<start>`, `reservations_to_<end>` or
    /// `reservations_all`.
    pub fn file_name(&self) -> String {
        let (kind, ext) = (self.kind.as_str(), self.format.extension());
        match (self.start_date, self.end_date) {
            (Some(start), Some(end)) => format!("{kind}_{start}_{end}.{ext}"),
            (Some(start), None) => format!("{kind}_from_{start}.{ext}"),
            (None, Some(end)) => format!("{kind}_to_{end}.{ext}"),
            (None, None) => format!("{kind}_all.{ext}"),
        }
    }

    /// The period, when both bounds are set (always, but for reservations).
    pub fn period(&self) -> Option<Period> {
        Some(Period {
            start: self.start_date?,
            end: self.end_date?,
        })
    }

    /// The reservation list's filter of a reservations export: its listings, status, channel
    /// and check-in bounds.
    pub fn reservation_filter(&self) -> ReservationFilter {
        ReservationFilter {
            listing_ids: self.listing_ids.clone(),
            status: member(RESERVATION_STATUSES, self.status.as_deref()),
            channel: member(CHANNELS, self.channel.as_deref()),
            start: self.start_date,
            end: self.end_date,
            ..ReservationFilter::default()
        }
    }

    /// Checks a spec read back from the database: the route only stores valid ones, but a
    /// status or channel the filter cannot name would silently widen a reservations export.
    fn check_stored(&self, id: Uuid) -> Result<()> {
        let known = |set: &'static [&'static str], value: &Option<String>| {
            value.is_none() || member(set, value.as_deref()).is_some()
        };
        let bad = |what: &str| {
            Error::Internal(anyhow::anyhow!(
                "export {id} was stored with an invalid {what}"
            ))
        };
        if !known(RESERVATION_STATUSES, &self.status) {
            return Err(bad("status"));
        }
        if !known(CHANNELS, &self.channel) {
            return Err(bad("channel"));
        }
        if self.kind != ExportType::Reservations && self.period().is_none() {
            return Err(bad("period"));
        }
        Ok(())
    }
}

/// One cell of an export's row, typed for the workbook.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    /// A whole number: a count of nights or bookings, a PMS id.
    Int(i64),
    Date(NaiveDate),
    /// An amount, shown with 2 decimals; its currency is the row's Currency column.
    Money(Decimal),
    /// A figure shown with 2 decimals that is not money: a percentage (73.33).
    Number(Decimal),
    /// No value (the PMS gave none).
    Empty,
}

impl Cell {
    /// What the cell holds; `None` for [`Cell::Empty`], which fits a column of any kind.
    pub fn kind(&self) -> Option<CellKind> {
        match self {
            Self::Text(_) => Some(CellKind::Text),
            Self::Int(_) => Some(CellKind::Int),
            Self::Date(_) => Some(CellKind::Date),
            Self::Money(_) => Some(CellKind::Money),
            Self::Number(_) => Some(CellKind::Number),
            Self::Empty => None,
        }
    }
}

/// The kind of a column's cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CellKind {
    Text,
    Int,
    Date,
    Money,
    Number,
}

impl CellKind {
    /// How the Definitions sheet names the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "Text",
            Self::Int => "Whole number",
            Self::Date => "Date",
            Self::Money => "Money (2 decimals)",
            Self::Number => "Number (2 decimals)",
        }
    }
}

/// One column of an export: its header, the kind of its cells, its width in the workbook
/// (characters) and its definition (the Definitions sheet).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    pub header: &'static str,
    pub kind: CellKind,
    pub width: f64,
    pub definition: &'static str,
}

const fn column(
    header: &'static str,
    kind: CellKind,
    width: f64,
    definition: &'static str,
) -> Column {
    Column {
        header,
        kind,
        width,
        definition,
    }
}

// What several exports' columns mean. The figures' definitions are those of `figures` (one set
// everywhere), written for a row: "the row's nights" are the period's (listings), or a month's
// nights inside the period (revenue); the Nights column of each export says which.

const LISTING_ID: &str = "Our id of the listing (a UUID), as /reporting/listings shows it.";
const LISTING_PMS_ID: &str = "The listing's id in the PMS (Hostaway's listing id).";
const LISTING_NAME: &str = "The listing's name in the PMS.";
const BOOKED_NIGHTS: &str = "Nights of counted stays (status CONFIRMED, in any currency) among \
the row's nights: the sum over the listing's CONFIRMED reservations of least(checkOut, last \
night + 1) − greatest(checkIn, first night), where positive. A stay occupies the nights from its \
checkIn to the day before its checkOut. A sum: two confirmed stays on one night count 2.";
const AVAILABLE_NIGHTS: &str = "Nights less owner nights: the nights among the row's nights \
covered by at least one OWNER_STAY reservation of the listing, each counted once (blocked \
nights, not available).";
const OCCUPANCY: &str = "Booked nights / Available nights × 100, rounded to 2 decimals (half away \
from zero); 0 when Available nights is 0.";
const BOOKINGS: &str = "Counted stays (status CONFIRMED, in any currency) of the listing whose \
checkIn is one of the row's nights (first night ≤ checkIn ≤ last night).";
const REVENUE: &str = "The sum over the listing's CONFIRMED reservations in the row's Currency of \
totalAmount × (its nights among the row's nights) / (checkOut − checkIn): each stay's total \
spread evenly over its nights. Summed exactly, rounded to 2 decimals (half away from zero) only \
at the end. Stays in another currency, or with none, are left out, never converted.";
const ADR: &str = "Average daily rate: Revenue / priced nights, the priced nights being the \
booked nights of the stays in the row's Currency only (a stay left out of Revenue leaves its \
nights out of ADR too, else ADR would mix currencies). From the unrounded Revenue, rounded to 2 \
decimals (half away from zero); 0 when there are no priced nights.";
const REVPAR: &str = "Revenue per available night: Revenue / Available nights, from the \
unrounded Revenue, rounded to 2 decimals (half away from zero); 0 when Available nights is 0.";
const FIGURES_CURRENCY: &str = "The currency of Revenue, ADR and RevPAR: the export's currency \
(the request's currency, else the setting REPORTING_CURRENCY). Only stays in this currency count \
for money.";

const RESERVATION_COLUMNS: &[Column] = &[
    column(
        "Reservation ID",
        CellKind::Text,
        38.0,
        "Our id of the reservation (a UUID), as /reporting/reservations shows it.",
    ),
    column(
        "PMS ID",
        CellKind::Int,
        12.0,
        "The reservation's id in the PMS (Hostaway's reservation id).",
    ),
    column(
        "Listing",
        CellKind::Text,
        32.0,
        "The name of the reservation's listing; empty when that listing is not stored.",
    ),
    column(
        "Listing PMS ID",
        CellKind::Int,
        14.0,
        "The PMS id of the reservation's listing.",
    ),
    column(
        "Guest",
        CellKind::Text,
        26.0,
        "The guest's name, as the PMS states it.",
    ),
    column(
        "Check-in",
        CellKind::Date,
        12.0,
        "The day of arrival: the stay's first night.",
    ),
    column(
        "Check-out",
        CellKind::Date,
        12.0,
        "The day of departure: the stay occupies the nights from Check-in to the day before \
         Check-out.",
    ),
    column(
        "Nights",
        CellKind::Int,
        8.0,
        "The stay's nights as the PMS states them (else Check-out − Check-in). The figures \
         count a stay's nights as Check-out − Check-in.",
    ),
    column(
        "Channel",
        CellKind::Text,
        14.0,
        "The booking channel: AIRBNB, BOOKING_COM, VRBO, EXPEDIA, DIRECT, GOOGLE or OTHER.",
    ),
    column(
        "Channel name",
        CellKind::Text,
        18.0,
        "The channel's name, as the PMS states it.",
    ),
    column(
        "Status",
        CellKind::Text,
        13.0,
        "CONFIRMED: a counted stay, in every figure. OWNER_STAY: the owner's stay, whose nights \
         are blocked (not available). Every other status (PENDING, CANCELLED, INQUIRY, \
         DECLINED, EXPIRED, UNKNOWN, and REMOVED: no longer in the PMS) counts for nothing in \
         the figures.",
    ),
    column(
        "Total amount",
        CellKind::Money,
        14.0,
        "The stay's total price as the PMS states it, in the row's Currency. The figures spread \
         it evenly over the stay's nights (Check-out − Check-in).",
    ),
    column(
        "Net amount",
        CellKind::Money,
        14.0,
        "Total amount less taxes, the channel's commission and the PMS's commission, as the PMS \
         states them, in the row's Currency.",
    ),
    column(
        "Currency",
        CellKind::Text,
        10.0,
        "The currency of the amounts (ISO 4217), as the PMS states it; empty when it gives none \
         (such a stay counts for nights, never for money). Amounts are never converted.",
    ),
];

const LISTING_COLUMNS: &[Column] = &[
    column("Listing ID", CellKind::Text, 38.0, LISTING_ID),
    column("PMS ID", CellKind::Int, 12.0, LISTING_PMS_ID),
    column("Listing", CellKind::Text, 32.0, LISTING_NAME),
    column(
        "Status",
        CellKind::Text,
        10.0,
        "ACTIVE, or INACTIVE when the PMS archived the listing. Without a listing filter, the \
         export covers every ACTIVE listing.",
    ),
    column(
        "Bedrooms",
        CellKind::Int,
        10.0,
        "The listing's bedrooms, as the PMS states them; empty when it does not.",
    ),
    column(
        "Location",
        CellKind::Text,
        24.0,
        "The listing's city and country, as the PMS states them.",
    ),
    column(
        "Nights",
        CellKind::Int,
        8.0,
        "The row's nights: the nights of the period, startDate to endDate, both inclusive \
         (endDate − startDate + 1); a night is dated by its evening.",
    ),
    column("Booked nights", CellKind::Int, 14.0, BOOKED_NIGHTS),
    column("Available nights", CellKind::Int, 16.0, AVAILABLE_NIGHTS),
    column("Occupancy (%)", CellKind::Number, 14.0, OCCUPANCY),
    column("Bookings", CellKind::Int, 10.0, BOOKINGS),
    column("Revenue", CellKind::Money, 16.0, REVENUE),
    column("ADR", CellKind::Money, 12.0, ADR),
    column("RevPAR", CellKind::Money, 12.0, REVPAR),
    column("Currency", CellKind::Text, 10.0, FIGURES_CURRENCY),
];

const OCCUPANCY_COLUMNS: &[Column] = &[
    column(
        "Date",
        CellKind::Date,
        12.0,
        "The night, dated by its evening: a stay occupies the nights from its checkIn to the \
         day before its checkOut.",
    ),
    column("Listing ID", CellKind::Text, 38.0, LISTING_ID),
    column("PMS ID", CellKind::Int, 12.0, LISTING_PMS_ID),
    column("Listing", CellKind::Text, 32.0, LISTING_NAME),
    column(
        "Booked nights",
        CellKind::Int,
        14.0,
        "Counted stays (status CONFIRMED, in any currency) of the listing occupying this night \
         (checkIn ≤ Date < checkOut): 0 or 1, more only where the PMS let confirmed stays \
         overlap (booked nights are a sum).",
    ),
    column(
        "Owner-stay night",
        CellKind::Int,
        16.0,
        "1 when at least one OWNER_STAY reservation of the listing occupies this night (a \
         blocked night, not available), else 0.",
    ),
    column(
        "Available nights",
        CellKind::Int,
        16.0,
        "1 − Owner-stay night.",
    ),
    column(
        "Occupancy (%)",
        CellKind::Number,
        14.0,
        "Booked nights / Available nights × 100, rounded to 2 decimals (half away from zero); \
         0 on a blocked night.",
    ),
];

const REVENUE_COLUMNS: &[Column] = &[
    column(
        "Month",
        CellKind::Text,
        24.0,
        "The calendar month (YYYY-MM) of the row's nights: the month's nights inside the \
         period, so the first and last months may be partial. On the Total row: the period, \
         startDate – endDate.",
    ),
    column("Listing ID", CellKind::Text, 38.0, LISTING_ID),
    column("PMS ID", CellKind::Int, 12.0, LISTING_PMS_ID),
    column(
        "Listing",
        CellKind::Text,
        32.0,
        "The listing's name in the PMS; \"Total\" on the last row, whose figures are those of \
         every listing over the whole period, computed from the unrounded sums exactly as \
         /reporting/dashboard/metrics computes them (for up to 366 nights, the same figures it \
         answers): its counts are the sums of the rows', its \
         Revenue may differ by a cent from the sum of the rounded rows, and its ratios \
         (Occupancy, ADR, RevPAR) are those of its sums, not sums of the rows' ratios.",
    ),
    column(
        "Nights",
        CellKind::Int,
        8.0,
        "The number of the row's nights: the month's nights inside the period (a night is \
         dated by its evening). On the Total row: listings × the nights of the period.",
    ),
    column("Booked nights", CellKind::Int, 14.0, BOOKED_NIGHTS),
    column("Available nights", CellKind::Int, 16.0, AVAILABLE_NIGHTS),
    column("Revenue", CellKind::Money, 16.0, REVENUE),
    column("Occupancy (%)", CellKind::Number, 14.0, OCCUPANCY),
    column("ADR", CellKind::Money, 12.0, ADR),
    column("RevPAR", CellKind::Money, 12.0, REVPAR),
    column("Bookings", CellKind::Int, 10.0, BOOKINGS),
    column("Currency", CellKind::Text, 10.0, FIGURES_CURRENCY),
];

/// The columns of an export of `kind`, in order: the header row, the Definitions sheet's table
/// and the CSV header. Each money column's currency is the row's Currency column.
pub fn columns(kind: ExportType) -> &'static [Column] {
    match kind {
        ExportType::Reservations => RESERVATION_COLUMNS,
        ExportType::Listings => LISTING_COLUMNS,
        ExportType::Occupancy => OCCUPANCY_COLUMNS,
        ExportType::Revenue => REVENUE_COLUMNS,
    }
}

/// The buckets the figures of an export are computed over: the period (listings), its nights
/// (occupancy), its calendar months (revenue); `None` for reservations, which have no figures.
pub fn buckets_for(spec: &ExportSpec) -> Option<Buckets> {
    let period = spec.period()?;
    match spec.kind {
        ExportType::Reservations => None,
        ExportType::Listings => Some(Buckets::whole(period)),
        ExportType::Occupancy => Some(Buckets::split(period, Granularity::Daily)),
        ExportType::Revenue => Some(Buckets::split(period, Granularity::Monthly)),
    }
}

fn missing_period(kind: ExportType) -> Error {
    Error::Internal(anyhow::anyhow!("a {} export needs a period", kind.as_str()))
}

/// How many rows the export's file will have, the revenue export's Total row included (the
/// job's progress). Counted in a statement of its own, before the rows are read: a sync
/// meanwhile may make it a little off, which only the progress shows.
pub async fn count_rows(conn: &mut PgConnection, spec: &ExportSpec) -> Result<i64> {
    if spec.kind == ExportType::Reservations {
        return reservations::count_reservations(conn, &spec.reservation_filter()).await;
    }
    let buckets = buckets_for(spec).ok_or_else(|| missing_period(spec.kind))?;
    // The listings in scope, as `figures` reads them.
    let listings: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pms_listings l
         WHERE CASE WHEN cardinality($1::uuid[]) = 0 THEN l.status = 'ACTIVE'
                    ELSE l.id = ANY($1) END",
    )
    .bind(&spec.listing_ids)
    .fetch_one(&mut *conn)
    .await?;
    let per_listing = i64::try_from(buckets.len()).unwrap_or(i64::MAX);
    let total_row = i64::from(spec.kind == ExportType::Revenue);
    Ok(listings
        .saturating_mul(per_listing)
        .saturating_add(total_row))
}

/// The rows of the export, in order, streamed from Postgres so that a large export is never
/// held in memory; the revenue export's Total row is not among them ([`revenue_total_row`]).
/// `scope` is the export's listings ([`Scope::resolve`] of its `listingIds`) and `buckets` its
/// [`buckets_for`]; a reservations export reads neither (any value does).
pub fn rows<'c>(
    conn: &'c mut PgConnection,
    spec: &'c ExportSpec,
    scope: &'c Scope,
    buckets: &'c Buckets,
) -> BoxStream<'c, Result<Vec<Cell>>> {
    let currency = &spec.currency;
    match spec.kind {
        ExportType::Reservations => reservations::export_stream(conn, &spec.reservation_filter())
            .map(|row| row.map(reservation_cells))
            .boxed(),
        ExportType::Listings => figures::figures_stream(conn, scope, buckets, currency)
            .map(move |row| row.and_then(|row| listing_cells(row, currency)))
            .boxed(),
        ExportType::Occupancy => figures::figures_stream(conn, scope, buckets, currency)
            .map(move |row| row.and_then(|row| occupancy_cells(row, buckets)))
            .boxed(),
        ExportType::Revenue => figures::figures_stream(conn, scope, buckets, currency)
            .map(move |row| row.and_then(|row| revenue_cells(row, buckets, currency)))
            .boxed(),
    }
}

fn text(value: Option<String>) -> Cell {
    value.map_or(Cell::Empty, Cell::Text)
}

fn reservation_cells(r: ReservationRow) -> Vec<Cell> {
    vec![
        Cell::Text(r.id.to_string()),
        Cell::Int(r.pms_id),
        text(r.listing_name),
        r.listing_pms_id.map_or(Cell::Empty, Cell::Int),
        text(r.guest_name),
        Cell::Date(r.check_in),
        Cell::Date(r.check_out),
        Cell::Int(i64::from(r.nights)),
        Cell::Text(r.channel),
        text(r.channel_name),
        Cell::Text(r.status),
        Cell::Money(r.total_amount),
        Cell::Money(r.net_amount),
        text(r.currency),
    ]
}

/// The listing of a per-listing row: `figures_stream` gives one to every row.
fn listing_of(row: BucketFigures) -> Result<(ListingRef, Figures, usize)> {
    match row.listing {
        Some(listing) => Ok((listing, row.figures, row.bucket)),
        None => Err(Error::Internal(anyhow::anyhow!(
            "a figures row per listing came without its listing"
        ))),
    }
}

fn listing_cells(row: BucketFigures, currency: &Currency) -> Result<Vec<Cell>> {
    let (listing, f, _) = listing_of(row)?;
    Ok(vec![
        Cell::Text(listing.id.to_string()),
        Cell::Int(listing.pms_id),
        Cell::Text(listing.name),
        Cell::Text(listing.status),
        listing
            .bedrooms
            .map_or(Cell::Empty, |b| Cell::Int(i64::from(b))),
        text(listing.location),
        Cell::Int(f.nights),
        Cell::Int(f.booked_nights),
        Cell::Int(f.available_nights()),
        Cell::Number(f.occupancy()),
        Cell::Int(f.bookings),
        Cell::Money(f.revenue_rounded()),
        Cell::Money(f.adr()),
        Cell::Money(f.revpar()),
        Cell::Text(currency.as_str().to_owned()),
    ])
}

fn occupancy_cells(row: BucketFigures, buckets: &Buckets) -> Result<Vec<Cell>> {
    let (listing, f, bucket) = listing_of(row)?;
    let (night, _) = buckets.range(bucket);
    Ok(vec![
        Cell::Date(night),
        Cell::Text(listing.id.to_string()),
        Cell::Int(listing.pms_id),
        Cell::Text(listing.name),
        Cell::Int(f.booked_nights),
        Cell::Int(f.owner_nights),
        Cell::Int(f.available_nights()),
        Cell::Number(f.occupancy()),
    ])
}

/// The figures' columns of a revenue row, from Nights on.
fn revenue_figures(f: &Figures, currency: &Currency) -> [Cell; 9] {
    [
        Cell::Int(f.nights),
        Cell::Int(f.booked_nights),
        Cell::Int(f.available_nights()),
        Cell::Money(f.revenue_rounded()),
        Cell::Number(f.occupancy()),
        Cell::Money(f.adr()),
        Cell::Money(f.revpar()),
        Cell::Int(f.bookings),
        Cell::Text(currency.as_str().to_owned()),
    ]
}

fn revenue_cells(row: BucketFigures, buckets: &Buckets, currency: &Currency) -> Result<Vec<Cell>> {
    let (listing, f, bucket) = listing_of(row)?;
    let (first_night, _) = buckets.range(bucket);
    let mut cells = vec![
        Cell::Text(figures::label(Granularity::Monthly, first_night)),
        Cell::Text(listing.id.to_string()),
        Cell::Int(listing.pms_id),
        Cell::Text(listing.name),
    ];
    cells.extend(revenue_figures(&f, currency));
    Ok(cells)
}

/// The revenue export's last row: every listing in scope over the whole period, with the
/// figures `GET /reporting/dashboard/metrics` computes for the same period, listings and
/// currency (the same computation, unrounded until the end; the route answers up to 366 nights,
/// the export takes 730).
pub async fn revenue_total_row(
    conn: &mut PgConnection,
    spec: &ExportSpec,
    scope: &Scope,
) -> Result<Vec<Cell>> {
    let period = spec.period().ok_or_else(|| missing_period(spec.kind))?;
    let whole = Buckets::whole(period);
    let rows = figures::figures(conn, scope, &whole, &spec.currency, false).await?;
    // No row when no listing is in scope: every figure is 0.
    let total = rows
        .into_iter()
        .next()
        .map(|row| row.figures)
        .unwrap_or_default();
    let mut cells = vec![
        Cell::Text(format!("{} – {}", period.start, period.end)),
        Cell::Empty,
        Cell::Empty,
        Cell::Text("Total".to_owned()),
    ];
    cells.extend(revenue_figures(&total, &spec.currency));
    Ok(cells)
}

/// Longest text of listing names the Definitions sheet shows (an Excel cell holds 32,767
/// characters); the data rows name every listing anyway.
const MAX_NAMES_TEXT: usize = 4_000;

fn name_list(names: &[String]) -> String {
    let mut text = String::new();
    for (shown, name) in names.iter().enumerate() {
        if text.len() + name.len() > MAX_NAMES_TEXT {
            text.push_str(&format!(" … and {} more", names.len() - shown));
            break;
        }
        if shown > 0 {
            text.push_str(", ");
        }
        text.push_str(name);
    }
    text
}

/// The label and value lines the Definitions sheet shows before its table of columns: what the
/// export is, its period and filters, when it was made, and the formulas
/// ([`figures::DEFINITIONS`]). `scope_names` are the names of the listings in scope, those of
/// the listing filter or every ACTIVE listing's (empty: the lines say which listings without
/// naming them).
pub fn definitions(
    spec: &ExportSpec,
    scope_names: &[String],
    generated_at: DateTime<Utc>,
) -> Vec<(String, String)> {
    let is_reservations = spec.kind == ExportType::Reservations;
    let period = match (is_reservations, spec.start_date, spec.end_date) {
        (true, Some(start), Some(end)) => format!("Check-in from {start} to {end}, both inclusive"),
        (true, Some(start), None) => format!("Check-in on or after {start}"),
        (true, None, Some(end)) => format!("Check-in on or before {end}"),
        (true, None, None) => "Every check-in date".to_owned(),
        (false, Some(start), Some(end)) => format!(
            "{start} to {end}: {} nights, both dates inclusive (a night is dated by its evening)",
            Period { start, end }.nights()
        ),
        (false, _, _) => "Not set".to_owned(),
    };
    let code = spec.currency.as_str();
    let currency = match spec.kind {
        ExportType::Reservations => {
            "Each reservation's own (the Currency column); amounts are never converted".to_owned()
        }
        ExportType::Occupancy => "None: occupancy has no money figures".to_owned(),
        ExportType::Listings | ExportType::Revenue => format!(
            "{code}: money figures count only the stays in {code}; stays in other currencies \
             are left out, never converted"
        ),
    };
    let everyone = if is_reservations {
        "Every listing (no listing filter)"
    } else {
        "Every ACTIVE listing"
    };
    let listings = if !spec.listing_ids.is_empty() {
        // The names when the caller has them, else the ids.
        let ids: Vec<String> = spec.listing_ids.iter().map(Uuid::to_string).collect();
        let named = if scope_names.is_empty() {
            &ids[..]
        } else {
            scope_names
        };
        format!(
            "{} named by the listing filter: {}",
            named.len(),
            name_list(named)
        )
    } else if scope_names.is_empty() {
        everyone.to_owned()
    } else {
        format!(
            "{everyone} ({}): {}",
            scope_names.len(),
            name_list(scope_names)
        )
    };
    let mut lines = vec![
        (
            "Export".to_owned(),
            format!(
                "{} ({}). {}",
                spec.kind.title(),
                spec.format.as_str(),
                spec.kind.rows_description()
            ),
        ),
        ("Period".to_owned(), period),
        ("Currency".to_owned(), currency),
        ("Listings".to_owned(), listings),
    ];
    if is_reservations {
        let any = || "Any".to_owned();
        lines.push(("Status".to_owned(), spec.status.clone().unwrap_or_else(any)));
        lines.push((
            "Channel".to_owned(),
            spec.channel.clone().unwrap_or_else(any),
        ));
    }
    lines.push((
        "Generated at (UTC)".to_owned(),
        generated_at.format("%Y-%m-%d %H:%M:%S").to_string(),
    ));
    lines.push(("Formulas".to_owned(), figures::DEFINITIONS.to_owned()));
    lines
}

// Whether export `e` (its job `j` left-joined) is still PROCESSING although no job will finish
// it: its job failed for good, succeeded without completing it, or is gone (the scheduler purges
// finished jobs); or it never got a job, 5 minutes on (the route writes the export and its job
// in one transaction, so this is only a caller's bug). As `sync_runs`' orphaned runs.
macro_rules! orphaned {
    () => {
        "(e.status = 'PROCESSING' AND CASE WHEN e.job_id IS NULL
            THEN e.created_at < now() - interval '5 minutes'
            ELSE j.id IS NULL OR j.status IN ('SUCCEEDED', 'FAILED') END)"
    };
}

/// What [`create`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedExport {
    pub id: Uuid,
    /// PROCESSING, or COMPLETED for an identical request's export answered again
    /// ([`reusable`]).
    pub status: &'static str,
    pub created_at: DateTime<Utc>,
}

/// How many exports one caller may have PROCESSING at once: each holds a core and two database
/// connections of `worker-exports` while it is made, and four at a time fill a process.
pub const MAX_PROCESSING_PER_CALLER: i64 = 3;

/// What an export request asks for, as one text: its type, format and params (defaults applied,
/// listing ids sorted, so that the same listings named in another order ask the same). The
/// database keeps its md5 (`request_key`).
pub fn request_text(spec: &ExportSpec) -> Result<String> {
    let mut spec = spec.clone();
    spec.listing_ids.sort_unstable();
    let params = serde_json::to_value(&spec).map_err(|e| Error::Internal(e.into()))?;
    Ok(serde_json::json!([spec.kind.as_str(), spec.format.as_str(), params]).to_string())
}

/// Serialises the requests of one caller, and of one request text, until the transaction ends:
/// two identical requests at once make one export, and a caller's quota is counted with no
/// request of theirs between the count and the insert. Always in this order (caller, then
/// request), so that two transactions never wait for each other crosswise.
pub async fn lock_request(conn: &mut PgConnection, requested_by: &str, text: &str) -> Result<()> {
    sqlx::query(
        "SELECT pg_advisory_xact_lock(hashtextextended('export-caller:' || $1, 0)),
                pg_advisory_xact_lock(hashtextextended('export-request:' || md5($2), 0))",
    )
    .bind(requested_by)
    .bind(text)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The export an identical request already made or is making, if it can serve this one: made
/// after the last completed sync (from the same data), and PROCESSING with its job still going,
/// or COMPLETED with at least 10 minutes before it expires (time to download it). The newest.
pub async fn reusable(conn: &mut PgConnection, text: &str) -> Result<Option<CreatedExport>> {
    let found: Option<(Uuid, String, DateTime<Utc>)> = sqlx::query_as(concat!(
        "SELECT e.id, e.status, e.created_at
         FROM reporting_exports e LEFT JOIN jobs j ON j.id = e.job_id
         WHERE e.request_key = md5($1)
           AND e.status IN ('PROCESSING', 'COMPLETED')
           AND NOT ",
        orphaned!(),
        "
           AND (e.status = 'PROCESSING' OR e.expires_at > now() + interval '10 minutes')
           AND e.created_at > coalesce((SELECT max(finished_at) FROM pms_sync_runs
                                        WHERE status = 'COMPLETED'), '-infinity')
         ORDER BY e.created_at DESC
         LIMIT 1"
    ))
    .bind(text)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(found.map(|(id, status, created_at)| CreatedExport {
        id,
        status: if status == "COMPLETED" {
            "COMPLETED"
        } else {
            "PROCESSING"
        },
        created_at,
    }))
}

/// How many of `requested_by`'s exports are being made (PROCESSING, their job still going).
pub async fn processing_count(conn: &mut PgConnection, requested_by: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT count(*) FROM reporting_exports e LEFT JOIN jobs j ON j.id = e.job_id
         WHERE e.requested_by = $1 AND e.status = 'PROCESSING' AND NOT ",
        orphaned!()
    ))
    .bind(requested_by)
    .fetch_one(&mut *conn)
    .await?)
}

/// Records export `id` of `spec`, PROCESSING, run by job `job_id`: in the transaction that
/// enqueued the job, so that neither exists without the other.
pub async fn create(
    conn: &mut PgConnection,
    id: Uuid,
    spec: &ExportSpec,
    requested_by: &str,
    job_id: Uuid,
) -> Result<CreatedExport> {
    let params = serde_json::to_value(spec).map_err(|e| Error::Internal(e.into()))?;
    let created_at: DateTime<Utc> = sqlx::query_scalar(
        "INSERT INTO reporting_exports
             (id, kind, format, params, file_name, job_id, requested_by, request_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, md5($8))
         RETURNING created_at",
    )
    .bind(id)
    .bind(spec.kind.as_str())
    .bind(spec.format.as_str())
    .bind(params)
    .bind(spec.file_name())
    .bind(job_id)
    .bind(requested_by)
    .bind(request_text(spec)?)
    .fetch_one(&mut *conn)
    .await?;
    Ok(CreatedExport {
        id,
        status: "PROCESSING",
        created_at,
    })
}

// Why an orphaned export failed: the job's error when it failed.
macro_rules! orphan_error {
    () => {
        "CASE WHEN e.job_id IS NULL THEN 'no job was enqueued for the export'
            WHEN j.id IS NULL THEN 'the export job is gone'
            WHEN j.status = 'FAILED' THEN coalesce(j.error, 'the export job failed')
            ELSE 'the export job ended without finishing the export' END"
    };
}

// The status a client sees: EXPIRED as soon as a COMPLETED export's time is up (the expiry job
// removes the file later), FAILED for an orphaned export.
macro_rules! shown_status {
    () => {
        concat!(
            "CASE WHEN e.status = 'COMPLETED' AND e.expires_at <= now() THEN 'EXPIRED' WHEN ",
            orphaned!(),
            " THEN 'FAILED' ELSE e.status END"
        )
    };
}

macro_rules! shown_error {
    () => {
        concat!(
            "CASE WHEN ",
            orphaned!(),
            " THEN ",
            orphan_error!(),
            " ELSE e.error END"
        )
    };
}

// An export (alias `e`, its job `j` left-joined) as the status route shows it.
macro_rules! export_view {
    () => {
        concat!(
            "jsonb_build_object('exportId', e.id, 'type', e.kind, 'format', e.format,
                'status', ",
            shown_status!(),
            ", 'progress', e.progress, 'rowCount', e.row_count, 'fileName', e.file_name,
                'downloadUrl', CASE WHEN e.status = 'COMPLETED' AND e.expires_at > now()
                    THEN '/reporting/export/' || e.id::text || '/download' END,
                'error', ",
            shown_error!(),
            ", 'createdAt', e.created_at, 'completedAt', e.completed_at, 'expiresAt', e.expires_at,
                'sizeBytes', e.size_bytes, 'startDate', e.params -> 'startDate',
                'endDate', e.params -> 'endDate',
                'listingIds', coalesce(e.params -> 'listingIds', '[]'),
                'requestedBy', e.requested_by)"
        )
    };
}

macro_rules! export_from {
    () => {
        " FROM reporting_exports e LEFT JOIN jobs j ON j.id = e.job_id"
    };
}

/// The export as `GET /reporting/export/{id}` shows it: `{exportId, type, format, status,
/// progress, rowCount, fileName, downloadUrl, error, createdAt, completedAt, expiresAt,
/// sizeBytes, startDate, endDate, listingIds, requestedBy}`; 404 for none. `status` is derived
/// (see the module's doc); `downloadUrl` is set while the file can be downloaded; `rowCount`,
/// `sizeBytes`, `completedAt` and `expiresAt` once COMPLETED.
pub async fn status(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        export_view!(),
        export_from!(),
        " WHERE e.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("export"))
}

/// A page of exports, the newest first, each as [`status`] shows it.
pub async fn list(conn: &mut PgConnection, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM reporting_exports e",
        item: export_view!(),
        from: export_from!(),
        order: "e.created_at DESC, e.id DESC",
    };
    json_page(conn, &list, page, |_| {}).await
}

/// What a download of an export finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Download {
    /// The file is there to stream: the object at `storage_path` (a path of the document store).
    Ready {
        storage_path: String,
        file_name: String,
        format: ExportFormat,
        size_bytes: Option<i64>,
    },
    /// Still being written.
    Processing,
    /// It failed, for this reason.
    Failed(String),
    /// Its time is up: the file is (or is about to be) removed.
    Expired,
}

/// What a download of export `id` finds, by its derived status (see the module's doc); 404 for
/// none.
pub async fn download(conn: &mut PgConnection, id: Uuid) -> Result<Download> {
    type Row = (
        String,
        Option<String>,
        Option<String>,
        String,
        String,
        Option<i64>,
    );
    let row: Option<Row> = sqlx::query_as(concat!(
        "SELECT ",
        shown_status!(),
        ", ",
        shown_error!(),
        ", e.storage_path, e.file_name, e.format, e.size_bytes",
        export_from!(),
        " WHERE e.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let (status, error, storage_path, file_name, format, size_bytes) =
        row.ok_or(Error::NotFound("export"))?;
    Ok(match (status.as_str(), storage_path) {
        ("COMPLETED", Some(storage_path)) => Download::Ready {
            storage_path,
            file_name,
            format: ExportFormat::parse(&format).ok_or_else(|| {
                Error::Internal(anyhow::anyhow!(
                    "export {id} has an unknown format {format}"
                ))
            })?,
            size_bytes,
        },
        ("PROCESSING", _) => Download::Processing,
        ("FAILED", _) => Download::Failed(error.unwrap_or_else(|| "the export failed".to_owned())),
        // COMPLETED without a file cannot be stored (a CHECK); EXPIRED has none.
        _ => Download::Expired,
    })
}

/// The export as its job reads it: its spec and its stored status (the job has work only while
/// it is PROCESSING); `None` when there is no such export.
pub async fn load(conn: &mut PgConnection, id: Uuid) -> Result<Option<(ExportSpec, String)>> {
    let row: Option<(Value, String)> =
        sqlx::query_as("SELECT params, status FROM reporting_exports WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some((params, status)) = row else {
        return Ok(None);
    };
    let spec: ExportSpec = serde_json::from_value(params).map_err(|e| {
        Error::Internal(anyhow::anyhow!(
            "export {id} has unreadable parameters: {e}"
        ))
    })?;
    spec.check_stored(id)?;
    Ok(Some((spec, status)))
}

/// Records the share of rows written (0 to 100) while the export is PROCESSING.
pub async fn set_progress(conn: &mut PgConnection, id: Uuid, percent: i16) -> Result<()> {
    sqlx::query(
        "UPDATE reporting_exports SET progress = $2 WHERE id = $1 AND status = 'PROCESSING'",
    )
    .bind(id)
    .bind(percent.clamp(0, 100))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// PROCESSING → COMPLETED: the file of `row_count` rows and `size_bytes` bytes is at
/// `storage_path`, downloadable for `retention` from now. `false`, and nothing written, when the
/// export was no longer PROCESSING (another attempt completed it, or it failed).
pub async fn complete(
    conn: &mut PgConnection,
    id: Uuid,
    row_count: i64,
    storage_path: &str,
    size_bytes: i64,
    retention: Duration,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE reporting_exports SET status = 'COMPLETED', progress = 100, row_count = $2,
            storage_path = $3, size_bytes = $4, error = NULL, completed_at = now(),
            expires_at = now() + make_interval(secs => $5)
         WHERE id = $1 AND status = 'PROCESSING'",
    )
    .bind(id)
    .bind(row_count)
    .bind(storage_path)
    .bind(size_bytes)
    .bind(retention.as_secs_f64())
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// PROCESSING → FAILED with the reason, by the attempt of its job that holds it (`worker`, run
/// `attempt`): an export no longer PROCESSING is left as it is, and so is one whose job another
/// attempt holds (a stale attempt whose lease lapsed must not fail the export an operator's
/// retry reopened and a new attempt is making).
pub async fn fail(
    conn: &mut PgConnection,
    id: Uuid,
    error: &str,
    worker: &str,
    attempt: i32,
) -> Result<()> {
    sqlx::query(
        "UPDATE reporting_exports e SET status = 'FAILED', error = $2
         WHERE e.id = $1 AND e.status = 'PROCESSING'
           AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = e.job_id AND j.status = 'RUNNING'
                       AND j.locked_by = $3 AND j.attempts = $4)",
    )
    .bind(id)
    .bind(error)
    .bind(worker)
    .bind(attempt)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// An operator's retry of the export's failed job (`POST /admin/jobs/{id}/retry`), in the
/// transaction that queues the job again: a FAILED export is made again from the start
/// (PROCESSING, its error and progress cleared); one still PROCESSING (its job failed before it
/// could say so) is left to the job. A COMPLETED or EXPIRED export has nothing to make again: a
/// conflict saying to request a new export.
pub async fn reopen(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    let status: Option<String> = sqlx::query_scalar(
        "UPDATE reporting_exports e
         SET status = 'PROCESSING', error = NULL, progress = 0
         FROM (SELECT id, status AS before FROM reporting_exports WHERE id = $1 FOR UPDATE) b
         WHERE e.id = b.id AND b.before IN ('FAILED', 'PROCESSING')
         RETURNING b.before",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    if status.is_some() {
        return Ok(());
    }
    let now: Option<String> =
        sqlx::query_scalar("SELECT status FROM reporting_exports WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    Err(match now {
        None => Error::conflict(
            "NOTHING_TO_RETRY",
            format!("export {id} no longer exists: request a new export (POST /reporting/export)"),
        ),
        Some(status) => Error::conflict(
            "NOTHING_TO_RETRY",
            format!(
                "export {id} is {status}, not FAILED: there is nothing to make again; request a new export (POST /reporting/export)"
            ),
        ),
    })
}

/// How long an expired export's file stays in the store: it reads EXPIRED (410) from
/// `expires_at` on, but a download that began just before goes on to its end.
pub const EXPIRED_FILE_GRACE: Duration = Duration::from_secs(3600);

/// Up to `limit` COMPLETED exports whose time is up by more than [`EXPIRED_FILE_GRACE`], the
/// longest expired first: their ids and where their files are.
pub async fn expired(conn: &mut PgConnection, limit: i64) -> Result<Vec<(Uuid, Option<String>)>> {
    Ok(sqlx::query_as(
        "SELECT id, storage_path FROM reporting_exports
         WHERE status = 'COMPLETED' AND expires_at <= now() - make_interval(secs => $2)
         ORDER BY expires_at, id
         LIMIT $1",
    )
    .bind(limit)
    .bind(EXPIRED_FILE_GRACE.as_secs_f64())
    .fetch_all(&mut *conn)
    .await?)
}

/// COMPLETED → EXPIRED once its file is removed: the export no longer names a file.
pub async fn mark_expired(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    sqlx::query(
        "UPDATE reporting_exports SET status = 'EXPIRED', storage_path = NULL
         WHERE id = $1 AND status = 'COMPLETED'",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use serde_json::json;

    use super::*;

    fn date(raw: &str) -> NaiveDate {
        raw.parse().unwrap()
    }

    fn spec(kind: ExportType) -> ExportSpec {
        ExportSpec {
            kind,
            format: ExportFormat::Excel,
            start_date: Some(date("2026-03-01")),
            end_date: Some(date("2026-03-31")),
            listing_ids: Vec::new(),
            currency: Currency::new_setting("THB").unwrap(),
            status: None,
            channel: None,
        }
    }

    fn listing() -> ListingRef {
        ListingRef {
            id: Uuid::nil(),
            pms_id: 40160,
            name: "Villa Mango".to_owned(),
            status: "ACTIVE".to_owned(),
            bedrooms: None,
            location: Some("Phuket, Thailand".to_owned()),
            currency: Some("THB".to_owned()),
        }
    }

    fn figures_row(bucket: usize) -> BucketFigures {
        BucketFigures {
            bucket,
            listing: Some(listing()),
            figures: Figures {
                revenue: Decimal::new(1_000_000, 3),
                booked_nights: 3,
                priced_nights: 3,
                owner_nights: 1,
                nights: 31,
                bookings: 1,
            },
        }
    }

    /// Every cell fits its column: the kind the header promises, or empty.
    fn assert_fits(kind: ExportType, cells: &[Cell]) {
        let columns = columns(kind);
        assert_eq!(cells.len(), columns.len(), "{kind:?}");
        for (cell, column) in cells.iter().zip(columns) {
            if let Some(cell_kind) = cell.kind() {
                assert_eq!(cell_kind, column.kind, "{kind:?} {}", column.header);
            }
        }
    }

    #[test]
    fn types_and_formats_parse_in_any_case() {
        for (i, name) in EXPORT_TYPES.iter().enumerate() {
            assert_eq!(ExportType::parse(name), Some(ExportType::ALL[i]));
            assert_eq!(ExportType::ALL[i].as_str(), *name);
        }
        assert_eq!(ExportType::parse(" Revenue "), Some(ExportType::Revenue));
        assert_eq!(ExportType::parse("invoices"), None);
        assert_eq!(ExportFormat::parse("EXCEL"), Some(ExportFormat::Excel));
        assert_eq!(ExportFormat::parse("csv"), Some(ExportFormat::Csv));
        assert_eq!(ExportFormat::parse("pdf"), None);
        assert_eq!(ExportFormat::Csv.content_type(), "text/csv; charset=utf-8");
        // Revenue is by month, as a monthly chart: two years.
        assert_eq!(ExportType::Revenue.max_nights(), Some(730));
        assert_eq!(ExportType::Listings.max_nights(), Some(366));
        assert_eq!(ExportType::Occupancy.max_nights(), Some(366));
        assert_eq!(ExportType::Reservations.max_nights(), None);
    }

    #[test]
    fn file_names_say_the_type_and_period() {
        assert_eq!(
            spec(ExportType::Revenue).file_name(),
            "revenue_2026-03-01_2026-03-31.xlsx"
        );
        let mut reservations = spec(ExportType::Reservations);
        reservations.format = ExportFormat::Csv;
        assert_eq!(
            reservations.file_name(),
            "reservations_2026-03-01_2026-03-31.csv"
        );
        reservations.end_date = None;
        assert_eq!(reservations.file_name(), "reservations_from_2026-03-01.csv");
        reservations.start_date = None;
        assert_eq!(reservations.file_name(), "reservations_all.csv");
        reservations.end_date = Some(date("2026-04-30"));
        assert_eq!(reservations.file_name(), "reservations_to_2026-04-30.csv");
        assert_eq!(reservations.period(), None);
    }

    #[test]
    fn the_spec_is_stored_as_the_request_spells_it() {
        let mut s = spec(ExportType::Reservations);
        s.listing_ids = vec![Uuid::nil()];
        s.status = Some("CONFIRMED".to_owned());
        let stored = serde_json::to_value(&s).unwrap();
        assert_eq!(
            stored,
            json!({
                "type": "reservations", "format": "excel", "startDate": "2026-03-01",
                "endDate": "2026-03-31", "listingIds": [Uuid::nil()], "currency": "THB",
                "status": "CONFIRMED", "channel": null
            })
        );
        let back: ExportSpec = serde_json::from_value(stored).unwrap();
        assert_eq!(back, s);
        back.check_stored(Uuid::nil()).unwrap();

        let filter = back.reservation_filter();
        assert_eq!(filter.listing_ids, vec![Uuid::nil()]);
        assert_eq!(filter.status, Some("CONFIRMED"));
        assert_eq!(filter.channel, None);
        assert_eq!(filter.start, Some(date("2026-03-01")));
        assert_eq!(filter.end, Some(date("2026-03-31")));

        let mut bad = s.clone();
        bad.channel = Some("FAX".to_owned());
        assert!(bad.check_stored(Uuid::nil()).is_err());
        let mut no_period = spec(ExportType::Listings);
        no_period.end_date = None;
        assert!(no_period.check_stored(Uuid::nil()).is_err());
    }

    #[test]
    fn every_export_has_distinct_defined_columns_and_a_currency_beside_money() {
        for kind in ExportType::ALL {
            let columns = columns(kind);
            let headers: HashSet<&str> = columns.iter().map(|c| c.header).collect();
            assert_eq!(headers.len(), columns.len(), "{kind:?}");
            assert!(
                columns
                    .iter()
                    .all(|c| !c.definition.is_empty() && c.width > 0.0)
            );
            if columns.iter().any(|c| c.kind == CellKind::Money) {
                assert!(headers.contains("Currency"), "{kind:?}");
            }
        }
    }

    #[test]
    fn rows_fit_their_columns() {
        let reservation = ReservationRow {
            id: Uuid::nil(),
            pms_id: 77,
            listing_id: None,
            listing_pms_id: Some(40160),
            listing_name: None,
            guest_name: Some("Ann".to_owned()),
            check_in: date("2026-02-27"),
            check_out: date("2026-03-02"),
            nights: 3,
            channel: "AIRBNB".to_owned(),
            channel_name: None,
            status: "CONFIRMED".to_owned(),
            total_amount: Decimal::new(300_000, 2),
            net_amount: Decimal::new(250_000, 2),
            currency: Some("THB".to_owned()),
        };
        let cells = reservation_cells(reservation);
        assert_fits(ExportType::Reservations, &cells);
        assert_eq!(cells[5], Cell::Date(date("2026-02-27")));
        assert_eq!(cells[2], Cell::Empty);

        let thb = Currency::new_setting("THB").unwrap();
        let cells = listing_cells(figures_row(0), &thb).unwrap();
        assert_fits(ExportType::Listings, &cells);
        assert_eq!(cells[4], Cell::Empty);
        // 30 available nights (31 less 1 owner night); revenue rounded only at the end.
        assert_eq!(cells[8], Cell::Int(30));
        assert_eq!(cells[11], Cell::Money(Decimal::new(100_000, 2)));

        let period = spec(ExportType::Occupancy).period().unwrap();
        let daily = Buckets::split(period, Granularity::Daily);
        let cells = occupancy_cells(figures_row(2), &daily).unwrap();
        assert_fits(ExportType::Occupancy, &cells);
        assert_eq!(cells[0], Cell::Date(date("2026-03-03")));

        let monthly = Buckets::split(period, Granularity::Monthly);
        let cells = revenue_cells(figures_row(0), &monthly, &thb).unwrap();
        assert_fits(ExportType::Revenue, &cells);
        assert_eq!(cells[0], Cell::Text("2026-03".to_owned()));

        let no_listing = BucketFigures {
            listing: None,
            ..figures_row(0)
        };
        assert!(listing_cells(no_listing, &thb).is_err());
    }

    #[test]
    fn the_definitions_state_the_period_the_filters_and_the_formulas() {
        let at = "2026-04-01T08:30:00Z".parse::<DateTime<Utc>>().unwrap();
        let lines = definitions(
            &spec(ExportType::Revenue),
            &["A".to_owned(), "B".to_owned()],
            at,
        );
        let value = |label: &str| {
            lines
                .iter()
                .find(|(l, _)| l == label)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert!(value("Period").starts_with("2026-03-01 to 2026-03-31: 31 nights"));
        assert!(value("Currency").starts_with("THB"));
        assert_eq!(value("Listings"), "Every ACTIVE listing (2): A, B");
        assert_eq!(value("Generated at (UTC)"), "2026-04-01 08:30:00");
        assert_eq!(value("Formulas"), figures::DEFINITIONS);
        assert!(!lines.iter().any(|(l, _)| l == "Status"));

        let mut reservations = spec(ExportType::Reservations);
        reservations.start_date = None;
        reservations.end_date = None;
        reservations.channel = Some("AIRBNB".to_owned());
        let lines = definitions(&reservations, &[], at);
        let labels: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Export",
                "Period",
                "Currency",
                "Listings",
                "Status",
                "Channel",
                "Generated at (UTC)",
                "Formulas"
            ]
        );
        assert_eq!(lines[1].1, "Every check-in date");
        assert_eq!(lines[3].1, "Every listing (no listing filter)");
        assert_eq!(lines[4].1, "Any");
        assert_eq!(lines[5].1, "AIRBNB");
    }

    #[test]
    fn long_lists_of_names_are_cut() {
        let names: Vec<String> = (0..2_000).map(|i| format!("Villa {i:04}")).collect();
        let text = name_list(&names);
        assert!(text.len() < MAX_NAMES_TEXT + 40);
        assert!(text.starts_with("Villa 0000, Villa 0001"));
        assert!(text.ends_with("more"));
    }
}
