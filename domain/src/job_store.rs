//! The job rows (migrations/0001_jobs.sql). Every state change is one conditional statement, so
//! two workers, a duplicate delivery or a reaper racing a finishing worker cannot both win.
//!
//! QUEUED --claim--> RUNNING --succeed--> SUCCEEDED
//!                      |--fail (attempts left)--> QUEUED (run_at = now + backoff)
//!                      |--fail (no attempts left)--> FAILED
//!                      |--lease expired (worker died)--> QUEUED, or FAILED if it was the last attempt
//!                      '--hand back (graceful shutdown)--> QUEUED, attempt not counted

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
}

impl JobStatus {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "QUEUED" => Self::Queued,
            "RUNNING" => Self::Running,
            "SUCCEEDED" => Self::Succeeded,
            "FAILED" => Self::Failed,
            _ => return None,
        })
    }
}

/// The prefix of a dedupe key that holds only while the job is queued (see [`claim`]).
pub const DEDUPE_WHILE_QUEUED: &str = "queued:";

/// A job to write. `dedupe_key` makes the enqueue a no-op when a job with that key exists.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub id: Uuid,
    pub kind: &'static str,
    pub queue: &'static str,
    pub payload: Value,
    pub max_attempts: i32,
    pub dedupe_key: Option<String>,
}

/// Inserts the row on the caller's connection (inside its transaction). Returns `None` when
/// `dedupe_key` was already taken: the work is already enqueued or done.
pub async fn insert(conn: &mut PgConnection, job: &NewJob) -> Result<Option<Uuid>, sqlx::Error> {
    let inserted = insert_many(conn, std::slice::from_ref(job)).await?;
    Ok(inserted.into_iter().next())
}

/// Inserts the rows in one statement on the caller's connection (inside its transaction) and
/// answers the ids of those inserted: a row whose `dedupe_key` was already taken, by an earlier
/// job or by a row before it in `jobs`, is left out.
///
/// Rows are inserted in the order of their dedupe keys, so that two transactions enqueueing the
/// same keys wait for each other in one order rather than deadlock.
pub async fn insert_many(
    conn: &mut PgConnection,
    jobs: &[NewJob],
) -> Result<Vec<Uuid>, sqlx::Error> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = jobs.iter().map(|j| j.id).collect();
    let kinds: Vec<&str> = jobs.iter().map(|j| j.kind).collect();
    let queues: Vec<&str> = jobs.iter().map(|j| j.queue).collect();
    let payloads: Vec<&Value> = jobs.iter().map(|j| &j.payload).collect();
    let max_attempts: Vec<i32> = jobs.iter().map(|j| j.max_attempts).collect();
    let dedupe_keys: Vec<Option<&str>> = jobs.iter().map(|j| j.dedupe_key.as_deref()).collect();
    sqlx::query_scalar(
        "INSERT INTO jobs (id, kind, queue, payload, max_attempts, dedupe_key, pushed_at, request_id)
         SELECT id, kind, queue, payload, max_attempts, dedupe_key, now(), $7
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::int4[], $6::text[])
              WITH ORDINALITY AS t(id, kind, queue, payload, max_attempts, dedupe_key, n)
         ORDER BY dedupe_key NULLS LAST, n
         ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
         RETURNING id",
    )
    .bind(ids)
    .bind(kinds)
    .bind(queues)
    .bind(payloads)
    .bind(max_attempts)
    .bind(dedupe_keys)
    // The request this enqueue serves, if any: the worker logs the run with it.
    .bind(crate::trace::current_request_id())
    .fetch_all(conn)
    .await
}

/// A job this worker now holds the lease of.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedJob {
    pub id: Uuid,
    pub kind: String,
    pub payload: Value,
    /// This run's number, from 1.
    pub attempts: i32,
    pub max_attempts: i32,
    pub queue: String,
    /// The id of the request that enqueued the job (`X-Request-ID`), if one did.
    pub request_id: Option<String>,
    /// Seconds from the run being due (enqueued, or its retry or wait over) to this claim.
    pub waited_secs: f64,
}

/// Takes, in one statement, those of `ids` that are QUEUED and due and that no other transaction
/// holds (`FOR NO KEY UPDATE SKIP LOCKED`: two workers claiming one batch never wait for each
/// other, and each row goes to one of them; a row a foreign key check holds is not skipped). Left out: duplicate deliveries, jobs another worker holds or
/// finished, retries whose backoff has not elapsed (the dispatcher pushes them when due).
///
/// A dedupe key starting with [`DEDUPE_WHILE_QUEUED`] is released here: such work is
/// de-duplicated only while it waits, so a change made while it runs enqueues another run.
pub async fn claim_many(
    conn: impl sqlx::PgExecutor<'_>,
    ids: &[Uuid],
    worker: &str,
    lease: Duration,
) -> Result<Vec<ClaimedJob>, sqlx::Error> {
    sqlx::query_as(
        "UPDATE jobs j
         SET status = 'RUNNING', attempts = j.attempts + 1, locked_by = $2,
             locked_until = now() + $3 * interval '1 millisecond',
             started_at = coalesce(j.started_at, now()), updated_at = now(),
             dedupe_key = CASE WHEN starts_with(j.dedupe_key, 'queued:') THEN NULL
                               ELSE j.dedupe_key END
         FROM (SELECT id FROM jobs
               WHERE id = ANY($1) AND status = 'QUEUED' AND run_at <= now()
               FOR NO KEY UPDATE SKIP LOCKED) claimable
         WHERE j.id = claimable.id
         RETURNING j.id, j.kind, j.payload, j.attempts, j.max_attempts, j.queue, j.request_id,
                   greatest(extract(epoch FROM now() - j.run_at), 0)::float8 AS waited_secs",
    )
    .bind(ids)
    .bind(worker)
    .bind(millis(lease))
    .fetch_all(conn)
    .await
}

/// How a run ended, as its row records it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// SUCCEEDED with the handler's result.
    Succeeded(Value),
    /// A failed run: back to QUEUED after `retry_in`, or FAILED when `retry_in` is `None`.
    Failed {
        error: String,
        retry_in: Option<Duration>,
    },
    /// The job must wait for another: QUEUED again after `after`, its attempt given back
    /// (waiting is not failing).
    Postponed { reason: String, after: Duration },
    /// Not run at all (its worker is stopping): QUEUED at once, its attempt given back.
    HandedBack,
}

/// The end of one run: the job, the attempt that ran (so that a late end never lands on a later
/// run of the same job), how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct EndOfRun {
    pub id: Uuid,
    pub attempt: i32,
    pub end: RunEnd,
}

/// Records the ends of runs `worker` holds the lease of, in one statement. Answers the ids
/// recorded; a run whose lease was lost (reaped, and maybe run again by another worker or by this
/// one) is not.
///
/// The statement looks each end up by primary key (a plan joining the ends with every running
/// row, chosen when the statistics said few run, was quadratic in the batch). It does not lock
/// in a set order, and needs not: the other multi-row updates of running rows (the reaper, the
/// lease keeper) skip locked rows, the hand-back runs after the last write, and one writer per
/// process writes at a time; the other multi-row updates of running rows (the reaper, the lease keeper) skip locked
/// rows, so none waits for another in a circle.
pub async fn record_ends(
    pool: &PgPool,
    worker: &str,
    ends: &[EndOfRun],
) -> Result<Vec<Uuid>, sqlx::Error> {
    if ends.is_empty() {
        return Ok(Vec::new());
    }
    let n = ends.len();
    let (mut ids, mut statuses, mut results, mut errors, mut delays, mut given_back) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let attempts: Vec<i32> = ends.iter().map(|e| e.attempt).collect();
    for EndOfRun { id, end, .. } in ends {
        let (status, result, error, delay, back): (&str, Option<&Value>, Option<&str>, _, bool) =
            match end {
                RunEnd::Succeeded(result) => ("SUCCEEDED", Some(result), None, None, false),
                RunEnd::Failed {
                    error,
                    retry_in: Some(after),
                } => ("QUEUED", None, Some(error), Some(millis(*after)), false),
                RunEnd::Failed {
                    error,
                    retry_in: None,
                } => ("FAILED", None, Some(error), None, false),
                RunEnd::Postponed { reason, after } => {
                    ("QUEUED", None, Some(reason), Some(millis(*after)), true)
                }
                RunEnd::HandedBack => ("QUEUED", None, None, Some(0), true),
            };
        ids.push(*id);
        statuses.push(status);
        results.push(result);
        errors.push(error);
        delays.push(delay);
        given_back.push(back);
    }
    sqlx::query_scalar(
        "WITH ended AS MATERIALIZED (
             SELECT * FROM unnest($2::uuid[], $3::text[], $4::jsonb[], $5::text[], $6::int8[],
                                  $7::bool[], $8::int4[])
                    AS e(id, status, result, error, delay_ms, given_back, attempt)
             ORDER BY id)
         UPDATE jobs j
         SET status = e.status,
             result = CASE WHEN e.status = 'SUCCEEDED' THEN e.result ELSE j.result END,
             progress = CASE WHEN e.status = 'SUCCEEDED' THEN 100 ELSE j.progress END,
             error = CASE WHEN e.status = 'SUCCEEDED' THEN NULL ELSE coalesce(e.error, j.error) END,
             attempts = CASE WHEN e.given_back THEN greatest(j.attempts - 1, 0) ELSE j.attempts END,
             run_at = CASE WHEN e.status = 'QUEUED'
                           THEN now() + e.delay_ms * interval '1 millisecond' ELSE j.run_at END,
             finished_at = CASE WHEN e.status = 'QUEUED' THEN NULL ELSE now() END,
             pushed_at = CASE WHEN e.status = 'QUEUED' THEN NULL ELSE j.pushed_at END,
             locked_by = NULL, locked_until = NULL, updated_at = now()
         FROM ended e
         WHERE j.id = e.id AND j.attempts = e.attempt AND j.locked_by = $1
           -- upper(): the same test (statuses are upper case), which the partial index of
           -- running rows cannot serve, so that no plan scans every running row per end.
           AND upper(j.status) = 'RUNNING'
         RETURNING j.id",
    )
    .bind(worker)
    .bind(ids)
    .bind(statuses)
    .bind(results)
    .bind(errors)
    .bind(delays)
    .bind(given_back)
    .bind(attempts)
    .fetch_all(pool)
    .await
}

/// The status of the job enqueued under `dedupe_key`, if there is one, and how long until it
/// is due (zero when it is due or running): a job that waits for it looks again then.
pub async fn status_by_dedupe_key(
    pool: &PgPool,
    dedupe_key: &str,
) -> Result<Option<(String, Duration)>, sqlx::Error> {
    let row: Option<(String, f64)> = sqlx::query_as(
        "SELECT status, greatest(extract(epoch FROM run_at - now()), 0)::float8
         FROM jobs WHERE dedupe_key = $1",
    )
    .bind(dedupe_key)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(status, due_in)| {
        (
            status,
            Duration::try_from_secs_f64(due_in).unwrap_or(Duration::ZERO),
        )
    }))
}

/// Reports progress (0-100) of a running job, for the status a frontend polls.
pub async fn set_progress(
    pool: &PgPool,
    id: Uuid,
    worker: &str,
    progress: u8,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE jobs SET progress = $3, updated_at = now()
         WHERE id = $1 AND locked_by = $2 AND status = 'RUNNING'",
    )
    .bind(id)
    .bind(worker)
    .bind(i16::from(progress.min(100)))
    .execute(pool)
    .await?;
    Ok(())
}

/// Renews the leases of `runs` (job id and attempt), the runs `worker` holds and has not ended:
/// one statement per worker process per tick. Only those, and only that attempt: a run whose end
/// could not be written, or that lost its lease and was claimed again, is left to expire. A row
/// locked at that moment (its end being recorded) is skipped: it is renewed next tick.
pub async fn renew_leases(
    pool: &PgPool,
    worker: &str,
    runs: &[(Uuid, i32)],
    lease: Duration,
) -> Result<u64, sqlx::Error> {
    if runs.is_empty() {
        return Ok(0);
    }
    let (ids, attempts): (Vec<Uuid>, Vec<i32>) = runs.iter().copied().unzip();
    let done = sqlx::query(
        "UPDATE jobs SET locked_until = now() + $2 * interval '1 millisecond'
         WHERE id IN (SELECT j.id FROM jobs j
                      JOIN unnest($3::uuid[], $4::int4[]) AS r(id, attempt)
                        ON r.id = j.id AND r.attempt = j.attempts
                      WHERE j.locked_by = $1 AND j.status = 'RUNNING'
                      FOR NO KEY UPDATE OF j SKIP LOCKED)",
    )
    .bind(worker)
    .bind(millis(lease))
    .bind(ids)
    .bind(attempts)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Graceful shutdown: jobs `worker` still runs go back to QUEUED without counting the attempt.
pub async fn hand_back(pool: &PgPool, worker: &str) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE jobs
         SET status = 'QUEUED', attempts = greatest(attempts - 1, 0), pushed_at = NULL,
             locked_by = NULL, locked_until = NULL, updated_at = now()
         WHERE locked_by = $1 AND status = 'RUNNING'",
    )
    .bind(worker)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Jobs whose worker stopped renewing its lease (it died) are queued again, or FAILED when that
/// was their last attempt. Returns how many were requeued. Rows locked at that moment (a late
/// end being recorded) are left to the next round.
pub async fn reap_expired_leases(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE jobs
         SET status = CASE WHEN attempts >= max_attempts THEN 'FAILED' ELSE 'QUEUED' END,
             finished_at = CASE WHEN attempts >= max_attempts THEN now() ELSE NULL END,
             error = 'the worker running this job stopped (lease ' || locked_by || ' expired)',
             pushed_at = NULL, locked_by = NULL, locked_until = NULL, updated_at = now()
         WHERE id IN (SELECT id FROM jobs WHERE status = 'RUNNING' AND locked_until < now()
                      FOR NO KEY UPDATE SKIP LOCKED)
           AND status = 'RUNNING' AND locked_until < now()",
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Picks QUEUED, due jobs of `queues` that need a (re)push and stamps them as pushed now, so that
/// several dispatchers never push one row in the same round. A row qualifies when it was never
/// pushed (retry, lease reaped, handed back), or was pushed longer than `stale_after` ago.
pub async fn take_for_dispatch(
    pool: &PgPool,
    queues: &[&str],
    stale_after: Duration,
    limit: i64,
) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    sqlx::query_as(
        "UPDATE jobs SET pushed_at = now()
         WHERE id IN (
             SELECT id FROM jobs
             WHERE status = 'QUEUED' AND queue = ANY($1) AND run_at <= now()
               AND coalesce(pushed_at, '-infinity'::timestamptz) < now() - $2 * interval '1 millisecond'
             ORDER BY coalesce(pushed_at, '-infinity'::timestamptz)
             LIMIT $3
             FOR NO KEY UPDATE SKIP LOCKED)
         RETURNING id, queue",
    )
    .bind(queues)
    .bind(millis(stale_after))
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// Undoes the pushed stamp of rows whose push failed, so the next round takes them at once.
pub async fn unmark_pushed(pool: &PgPool, ids: &[Uuid]) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE jobs SET pushed_at = NULL WHERE id = ANY($1) AND status = 'QUEUED'")
        .bind(ids)
        .execute(pool)
        .await?;
    Ok(())
}

/// Deletes finished jobs older than `age`; the scheduler runs it daily.
pub async fn purge_finished(pool: &PgPool, age: Duration) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "DELETE FROM jobs WHERE status IN ('SUCCEEDED', 'FAILED')
         AND finished_at < now() - $1 * interval '1 millisecond'",
    )
    .bind(millis(age))
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// What the status routes show of a job.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    pub id: Uuid,
    pub kind: String,
    pub queue: String,
    pub status: String,
    pub attempts: i32,
    pub max_attempts: i32,
    pub progress: i16,
    #[schema(value_type = Option<Object>)]
    pub result: Option<Value>,
    pub error: Option<String>,
    pub run_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! record_columns {
    () => {
        "id, kind, queue, status, attempts, max_attempts, progress, result, error,
         run_at, created_at, started_at, finished_at, updated_at"
    };
}

pub async fn get(pool: &PgPool, id: Uuid) -> Result<Option<JobRecord>, sqlx::Error> {
    sqlx::query_as(concat!(
        "SELECT ",
        record_columns!(),
        " FROM jobs WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await
}

/// Most recent jobs, optionally of one status and queue (operators' view).
pub async fn recent(
    pool: &PgPool,
    status: Option<JobStatus>,
    queue: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<JobRecord>, i64), sqlx::Error> {
    let status = status.map(|s| match s {
        JobStatus::Queued => "QUEUED",
        JobStatus::Running => "RUNNING",
        JobStatus::Succeeded => "SUCCEEDED",
        JobStatus::Failed => "FAILED",
    });
    let rows = sqlx::query_as(concat!(
        "SELECT ",
        record_columns!(),
        " FROM jobs
         WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR queue = $2)
         ORDER BY id DESC LIMIT $3 OFFSET $4"
    ))
    .bind(status)
    .bind(queue)
    .bind(limit)
    .bind(offset)
    .fetch_all(pool)
    .await?;
    let total = sqlx::query_scalar(
        "SELECT count(*) FROM jobs
         WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR queue = $2)",
    )
    .bind(status)
    .bind(queue)
    .fetch_one(pool)
    .await?;
    Ok((rows, total))
}

/// Count of jobs per queue and status, with the age of the oldest waiting one.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueCounts {
    pub queue: String,
    pub queued: i64,
    pub running: i64,
    pub succeeded: i64,
    pub failed: i64,
    /// Seconds the oldest due QUEUED job has waited.
    pub oldest_queued_secs: Option<f64>,
}

pub async fn counts_by_queue(pool: &PgPool) -> Result<Vec<QueueCounts>, sqlx::Error> {
    sqlx::query_as(
        "SELECT queue,
                count(*) FILTER (WHERE status = 'QUEUED') AS queued,
                count(*) FILTER (WHERE status = 'RUNNING') AS running,
                count(*) FILTER (WHERE status = 'SUCCEEDED') AS succeeded,
                count(*) FILTER (WHERE status = 'FAILED') AS failed,
                extract(epoch FROM now() - min(run_at) FILTER (WHERE status = 'QUEUED' AND run_at <= now()))::float8
                    AS oldest_queued_secs
         FROM jobs GROUP BY queue ORDER BY queue",
    )
    .fetch_all(pool)
    .await
}

/// One queue's jobs of one status, for the queue gauges ([`crate::metrics::QueueGauges`]).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct QueueGaugeRow {
    pub queue: String,
    /// `QUEUED`, `RUNNING` or `FAILED`.
    pub status: String,
    pub jobs: i64,
    /// QUEUED only: seconds the oldest due job has waited (none due: null).
    pub oldest_due_secs: Option<f64>,
}

/// The jobs queued, running and failed per queue, and the age of the oldest due queued job.
/// Each status is its own branch so that each reads only its partial index (`jobs_dispatch`,
/// `jobs_leased`, `jobs_failed`), never the finished rows that make up most of the table.
pub async fn queue_gauges(pool: &PgPool) -> Result<Vec<QueueGaugeRow>, sqlx::Error> {
    // bench/metrics.sh times this statement: keep the markers around it.
    // queue-gauges-sql-begin
    sqlx::query_as(
        "SELECT queue, 'QUEUED' AS status, count(*) AS jobs,
                extract(epoch FROM now() - min(run_at) FILTER (WHERE run_at <= now()))::float8
                    AS oldest_due_secs
         FROM jobs WHERE status = 'QUEUED' GROUP BY queue
         UNION ALL
         SELECT queue, 'RUNNING', count(*), NULL FROM jobs WHERE status = 'RUNNING' GROUP BY queue
         UNION ALL
         SELECT queue, 'FAILED', count(*), NULL FROM jobs WHERE status = 'FAILED' GROUP BY queue",
    )
    // queue-gauges-sql-end
    .fetch_all(pool)
    .await
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Operators' retry of a FAILED job: queued again with a fresh set of attempts. Returns false
/// when the job is not FAILED (nothing to retry).
pub async fn requeue_failed(conn: &mut PgConnection, id: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE jobs
         SET status = 'QUEUED', attempts = 0, error = NULL, result = NULL, progress = 0,
             run_at = now(), pushed_at = NULL, finished_at = NULL, updated_at = now()
         WHERE id = $1 AND status = 'FAILED'",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The kind and payload of the FAILED job `id`, its row locked until the transaction ends (so
/// that two retries of one job do not both reopen its record); `None` when it is not FAILED.
pub async fn lock_failed(
    conn: &mut PgConnection,
    id: Uuid,
) -> Result<Option<(String, serde_json::Value)>, sqlx::Error> {
    sqlx::query_as("SELECT kind, payload FROM jobs WHERE id = $1 AND status = 'FAILED' FOR UPDATE")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await
}
