//! What an export asks for: its type, its format and its parameters (the spec stored with it).

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::reporting::figures::{self, Currency, Period};
use crate::reporting::reservations::ReservationFilter;
use crate::reporting::{CHANNELS, RESERVATION_STATUSES};
use crate::{Error, Result};

/// An export's `type`.
pub const EXPORT_TYPES: &[&str] = &[
    "reservations",
    "listings",
    "occupancy",
    "revenue",
    "ownerStatement",
];

/// An export's `format`.
pub const EXPORT_FORMATS: &[&str] = &["excel", "csv"];

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
    /// An owner's monthly statement (`domain::reporting::statements`): its lines, then the
    /// villas' and the owner's totals.
    #[serde(rename = "ownerStatement")]
    OwnerStatement,
}

impl ExportType {
    pub const ALL: [ExportType; 5] = [
        Self::Reservations,
        Self::Listings,
        Self::Occupancy,
        Self::Revenue,
        Self::OwnerStatement,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reservations => "reservations",
            Self::Listings => "listings",
            Self::Occupancy => "occupancy",
            Self::Revenue => "revenue",
            Self::OwnerStatement => "ownerStatement",
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
            Self::OwnerStatement => "Owner statement",
        }
    }

    /// The longest period the export may cover, in nights; `None` for reservations, whose
    /// check-in bounds are optional and unbounded, as the list's are.
    pub fn max_nights(self) -> Option<i64> {
        match self {
            // An owner statement is one calendar month (`month`), not a free period.
            Self::Reservations | Self::OwnerStatement => None,
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
            Self::OwnerStatement => {
                "The owner's statement of the month, as GET /reporting/owner-statements answers \
                 it: per villa (by name) its stays (by check-in), then its owner-billed costs, \
                 then its totals per currency; then the owner's totals per currency, each the \
                 sum of the villas' (Definitions below)."
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
    /// Owner statements only: the owner (the month is `startDate`..`endDate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<Uuid>,
    /// Owner statements only: the company's time zone when it was asked for
    /// (`BUSINESS_TIME_ZONE`), whose days say which work orders completed in the month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
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
    pub(super) fn check_stored(&self, id: Uuid) -> Result<()> {
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
        if self.kind == ExportType::OwnerStatement
            && (self.owner_id.is_none() || self.zone().is_none())
        {
            return Err(bad("owner or time zone"));
        }
        Ok(())
    }

    /// An owner statement's time zone.
    pub fn zone(&self) -> Option<crate::clock::BusinessZone> {
        self.time_zone.as_deref()?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{date, spec};
    use super::*;

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
}
