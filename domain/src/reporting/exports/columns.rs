//! The cells of an export's rows, and each export's columns: header, kind, width and definition.

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::ExportType;

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

const OWNER_STATEMENT_COLUMNS: &[Column] = &[
    column(
        "Villa",
        CellKind::Text,
        28.0,
        "The owner's villa the line is of; \"All villas\" on the owner's totals.",
    ),
    column(
        "Line",
        CellKind::Text,
        14.0,
        "Stay, Owner cost, Villa total (one per currency) or Owner total (one per currency).",
    ),
    column(
        "Reference",
        CellKind::Text,
        38.0,
        "A stay: the reservation's id in the PMS. An owner cost: the work order's id.",
    ),
    column(
        "Description",
        CellKind::Text,
        48.0,
        "A stay: the listing, the guest, the channel and the dates. An owner cost: the work \
         order's title, then the cost line's description and kind.",
    ),
    column(
        "Date",
        CellKind::Date,
        12.0,
        "A stay: its check-in. An owner cost: the company's day its work order was completed.",
    ),
    column(
        "Nights",
        CellKind::Int,
        8.0,
        "A stay's nights inside the month; on a total, the sum of its stays' nights in that currency.",
    ),
    column(
        "Currency",
        CellKind::Text,
        10.0,
        "The currency of the line's amounts (ISO 4217); a total is per currency, never converted. \
         Empty for a stay the PMS gave no currency (nights only).",
    ),
    column(
        "Gross",
        CellKind::Money,
        14.0,
        "The stay's totalAmount spread evenly over its nights, the month's nights' share, to the \
         cent (the dashboard's revenue); on a total, the sum of its lines.",
    ),
    column(
        "Channel commission",
        CellKind::Money,
        18.0,
        "The stay's channelCommission spread the same way; on a total, the sum of its lines.",
    ),
    column("Net", CellKind::Money, 14.0, "Gross − Channel commission."),
    column(
        "Owner costs",
        CellKind::Money,
        14.0,
        "An owner-billed actual cost of a work order completed in the month; on a total, the \
         sum of its lines.",
    ),
    column(
        "Management fee",
        CellKind::Money,
        16.0,
        "On a villa's total: managementFeePercent of its Net, to the cent; on the owner's \
         total, the sum of the villas'.",
    ),
    column(
        "Balance",
        CellKind::Money,
        14.0,
        "On a total: Net − Management fee − Owner costs, owed to the owner (negative: owed by \
         the owner).",
    ),
];

/// The columns of an export of `kind`, in order: the header row, the Definitions sheet's table
/// and the CSV header. Each money column's currency is the row's Currency column.
pub fn columns(kind: ExportType) -> &'static [Column] {
    match kind {
        ExportType::Reservations => RESERVATION_COLUMNS,
        ExportType::Listings => LISTING_COLUMNS,
        ExportType::Occupancy => OCCUPANCY_COLUMNS,
        ExportType::Revenue => REVENUE_COLUMNS,
        ExportType::OwnerStatement => OWNER_STATEMENT_COLUMNS,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

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
}
