//! A request made an export: its request key, the locks, an identical export reused, the caller's
//! quota, and the export recorded with its job.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use super::ExportSpec;
use super::status::orphaned;
use crate::{Error, Result};

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
/// or COMPLETED with at least 10 minutes before it expires (time to download it; not an owner
/// statement, whose costs change without a sync). The newest.
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
           -- A statement also moves with the work orders completed since: reused only while
           -- being made.
           AND (e.kind <> 'ownerStatement' OR e.status = 'PROCESSING')
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
