//! What the jobs write: the export job's load, progress, completion and failure, an operator's
//! retry, and the expiry job's removal of expired files.

use std::time::Duration;

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::ExportSpec;
use crate::{Error, Result};

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
