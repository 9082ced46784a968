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
//!
//! The parts: `spec` (what an export asks for: its type, format and parameters), `columns` (the
//! cells of a row and each export's columns, with their definitions), `rows` (the rows, streamed
//! from the figures or the reservation list), `definitions` (the Definitions sheet's lines),
//! `requests` (an export made, or an identical one reused, within the caller's quota), `status`
//! (what a client polls and downloads) and `job` (what the export's job and the expiry job
//! write).
//!
//! [`columns`]: fn@columns
//! [`rows`]: fn@rows
//! [`status`]: fn@status
//! [`figures`]: super::figures
//! [`reservations::export_stream`]: super::reservations::export_stream

mod columns;
mod definitions;
mod job;
mod requests;
mod rows;
mod spec;
mod status;

pub use columns::{Cell, CellKind, Column, columns};
pub use definitions::definitions;
pub use job::{
    EXPIRED_FILE_GRACE, complete, expired, fail, load, mark_expired, reopen, set_progress,
};
pub use requests::{
    CreatedExport, MAX_PROCESSING_PER_CALLER, create, lock_request, processing_count, request_text,
    reusable,
};
pub use rows::{buckets_for, count_rows, revenue_total_row, rows};
pub use spec::{EXPORT_FORMATS, EXPORT_TYPES, ExportFormat, ExportSpec, ExportType};
pub use status::{Download, EXPORT_STATUSES, download, list, status};

#[cfg(test)]
mod tests {
    //! The helpers of every file's tests.

    use chrono::NaiveDate;

    use super::{ExportFormat, ExportSpec, ExportType};
    use crate::reporting::figures::Currency;

    pub(super) fn date(raw: &str) -> NaiveDate {
        raw.parse().unwrap()
    }

    pub(super) fn spec(kind: ExportType) -> ExportSpec {
        ExportSpec {
            kind,
            format: ExportFormat::Excel,
            start_date: Some(date("2026-03-01")),
            end_date: Some(date("2026-03-31")),
            listing_ids: Vec::new(),
            currency: Currency::new_setting("THB").unwrap(),
            status: None,
            channel: None,
            owner_id: None,
            time_zone: None,
        }
    }
}
