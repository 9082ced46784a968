//! An operator's retry of a FAILED job (`POST /admin/jobs/{id}/retry`): the job row is queued
//! again with fresh attempts and, in the same transaction, the record the job works on is
//! reopened by its kind ([`Job::reopen`]), so that the rerun does the work instead of skipping
//! a record its failure closed.

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::{Job, exports::ExportJob, pms::SyncPms};

/// Queues the FAILED job `id` again; `false` when there is no FAILED job of that id. The caller
/// pushes the id to the job's queue once this has returned (committed). A kind's refusal (an
/// export already COMPLETED, another sync running) is its conflict, and nothing changes.
pub async fn retry_failed(pool: &PgPool, id: Uuid) -> Result<bool, domain::Error> {
    let mut tx = pool.begin().await?;
    let Some((kind, payload)) = domain::job_store::lock_failed(&mut tx, id).await? else {
        return Ok(false);
    };
    match kind.as_str() {
        ExportJob::KIND => reopen::<ExportJob>(&mut tx, payload).await?,
        SyncPms::KIND => reopen::<SyncPms>(&mut tx, payload).await?,
        // Kinds without a record of their own (Job::reopen's default).
        _ => {}
    }
    domain::job_store::requeue_failed(&mut tx, id).await?;
    tx.commit().await?;
    Ok(true)
}

async fn reopen<J: Job>(
    conn: &mut PgConnection,
    payload: serde_json::Value,
) -> Result<(), domain::Error> {
    let job: J = serde_json::from_value(payload).map_err(|e| {
        domain::Error::Internal(anyhow::anyhow!(
            "a {} job's payload does not read: {e}",
            J::KIND
        ))
    })?;
    job.reopen(conn).await
}
