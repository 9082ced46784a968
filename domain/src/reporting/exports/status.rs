//! What a client sees of an export: its derived status (the status route and the list), and what a
//! download finds.

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::ExportFormat;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::{Error, Result};

/// An export's states: PROCESSING → COMPLETED (→ EXPIRED) or FAILED.
pub const EXPORT_STATUSES: &[&str] = &["PROCESSING", "COMPLETED", "FAILED", "EXPIRED"];

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
pub(super) use orphaned;

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
/// (see the doc of `reporting::exports`); `downloadUrl` is set while the file can be downloaded;
/// `rowCount`, `sizeBytes`, `completedAt` and `expiresAt` once COMPLETED.
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

/// What a download of export `id` finds, by its derived status (see the doc of
/// `reporting::exports`); 404 for none.
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
