//! Sync runs: what a client triggers and polls (`/reporting/sync/...`), and the record the sync
//! job (`jobs::pms`) keeps of its work. STARTED (triggered, its job queued) → RUNNING (a worker
//! took it) → COMPLETED or FAILED (with the reason).
//!
//! One sync at a time: a unique index over the active runs (STARTED or RUNNING) decides between
//! concurrent triggers, and [`start`] answers the active run instead of a second one. A run's
//! progress and its resume point (`cursor`) are saved in the transaction that stores each page
//! ([`save_page`]), so a worker killed mid-sync loses nothing and counts nothing twice: the next
//! attempt of the job resumes from the cursor. A run whose job is over without it (the job failed
//! for good, or is gone) reads FAILED with the job's error, and [`reconcile`] writes that down
//! before a new run starts, so a dead run never blocks the next.
//!
//! One attempt at a time: [`begin`] names the attempt that takes the run (`owner`), and only that
//! attempt may save a page ([`save_page`]) or finish the run ([`complete`], [`fail`]). A worker
//! whose lease lapsed while another took the job over learns it at its next page (its transaction
//! is rolled back) instead of running the sync beside the other.
//!
//! Counting: the ids a run has met are kept per entity in `pms_sync_seen` ([`first_met`], in the
//! page's transaction), so a record met again (it moved behind the cursor, a later pass, another
//! attempt) is stored again but counted once, across attempts and workers. A run's rows go when it
//! finishes.
//!
//! Retirement: what a full run did not meet, the PMS no longer has (Hostaway stops returning a
//! deleted record). Once every page is stored, the run retires those records of the entities it
//! read in full ([`super::listings::retire_unmet`], [`super::reservations::retire_unmet`]) and
//! counts them ([`save_retired`]) in one transaction. `pms_sync_seen` is unlogged: a crash of
//! Postgres empties it, so each run writes a row of its own there when it starts ([`start`]), and
//! a run that no longer finds it ([`seen_intact`]) retires nothing.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::UpsertCounts;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::{Error, Result};

/// The `entity` of the row a run writes in `pms_sync_seen` when it starts: while it is there, the
/// run's records met are whole ([`seen_intact`]).
const SEEN_MARK: &str = "run";

/// A sync's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SyncKind {
    /// Every listing and every reservation.
    Full,
    /// Every listing, and the reservations with activity since the last completed sync (less a
    /// safety margin).
    Incremental,
}

impl SyncKind {
    pub const ALL: [SyncKind; 2] = [Self::Full, Self::Incremental];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Incremental => "incremental",
        }
    }

    /// `full` or `incremental`, in any letter case.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(raw))
    }
}

/// What a sync reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Entity {
    Listings,
    Reservations,
}

impl Entity {
    /// In the order a sync reads them: listings first, so that reservations find their listing.
    pub const ALL: [Entity; 2] = [Self::Listings, Self::Reservations];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Listings => "listings",
            Self::Reservations => "reservations",
        }
    }

    /// `listings` or `reservations`, in any letter case.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        Self::ALL
            .into_iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(raw))
    }
}

/// What a trigger answers of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRunHead {
    pub id: Uuid,
    /// STARTED or RUNNING for an active run.
    pub status: String,
    pub started_at: DateTime<Utc>,
}

/// What [`start`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// A new run, STARTED: enqueue its job and [`attach_job`] in the same transaction.
    New(SyncRunHead),
    /// A run was already active: nothing was written.
    AlreadyActive(SyncRunHead),
}

impl Started {
    pub fn head(&self) -> &SyncRunHead {
        match self {
            Self::New(head) | Self::AlreadyActive(head) => head,
        }
    }
}

// Whether run `s` (its job `j` left-joined) is still STARTED or RUNNING although no job will
// finish it: its job failed for good, succeeded without finishing it, or is gone (the scheduler
// purges finished jobs); or it never got a job, 5 minutes on (a trigger writes the run and its
// job in one transaction, so this is only a caller's bug, which must not block every later sync).
macro_rules! orphaned {
    () => {
        "(s.status IN ('STARTED', 'RUNNING') AND CASE WHEN s.job_id IS NULL
            THEN s.started_at < now() - interval '5 minutes'
            ELSE j.id IS NULL OR j.status IN ('SUCCEEDED', 'FAILED') END)"
    };
}

// Why an orphaned run failed: the job's error when it failed.
macro_rules! orphan_error {
    () => {
        "CASE WHEN s.job_id IS NULL THEN 'no job was enqueued for the sync'
            WHEN j.id IS NULL THEN 'the sync job is gone'
            WHEN j.status = 'FAILED' THEN coalesce(j.error, 'the sync job failed')
            ELSE 'the sync job ended without finishing the sync' END"
    };
}

// A run (alias `s`, its job `j` left-joined) as the status route shows it: every entity asked
// for has its progress (zeros before its first page; `pagesTotal` null while unknown).
macro_rules! run_view {
    () => {
        concat!(
            "jsonb_build_object('syncId', s.id, 'type', s.kind, 'entities', to_jsonb(s.entities),
                'status', CASE WHEN ",
            orphaned!(),
            " THEN 'FAILED' ELSE s.status END,
                'startedAt', s.started_at,
                'finishedAt', CASE WHEN ",
            orphaned!(),
            " THEN coalesce(j.finished_at, now()) ELSE s.finished_at END,
                'progress', coalesce((SELECT jsonb_object_agg(e.entity, jsonb_build_object(
                    'fetched', coalesce((s.progress -> e.entity ->> 'fetched')::bigint, 0),
                    'created', coalesce((s.progress -> e.entity ->> 'created')::bigint, 0),
                    'updated', coalesce((s.progress -> e.entity ->> 'updated')::bigint, 0),
                    'unchanged', coalesce((s.progress -> e.entity ->> 'unchanged')::bigint, 0),
                    'skipped', coalesce((s.progress -> e.entity ->> 'skipped')::bigint, 0),
                    'retired', coalesce((s.progress -> e.entity ->> 'retired')::bigint, 0),
                    'pagesDone', coalesce((s.progress -> e.entity ->> 'pagesDone')::bigint, 0),
                    'pagesTotal', (s.progress -> e.entity ->> 'pagesTotal')::bigint))
                  FROM unnest(s.entities) AS e (entity)), '{}'),
                'error', CASE WHEN ",
            orphaned!(),
            " THEN ",
            orphan_error!(),
            " ELSE s.error END,
                'triggeredBy', s.triggered_by, 'activitySince', s.activity_since)"
        )
    };
}

macro_rules! run_from {
    () => {
        " FROM pms_sync_runs s LEFT JOIN jobs j ON j.id = s.job_id"
    };
}

/// Marks FAILED, with the job's error, the active run whose job is over without it (see the
/// module's doc), and forgets the records it met. Returns how many runs it failed (0 or 1).
pub async fn reconcile(conn: &mut PgConnection) -> Result<u64> {
    let failed: i64 = sqlx::query_scalar(concat!(
        "WITH failed AS (
           UPDATE pms_sync_runs t SET status = 'FAILED', finished_at = o.finished_at, error = o.error
           FROM (SELECT s.id, coalesce(j.finished_at, now()) AS finished_at, ",
        orphan_error!(),
        " AS error",
        run_from!(),
        " WHERE ",
        orphaned!(),
        ") o
           WHERE t.id = o.id AND t.status IN ('STARTED', 'RUNNING')
           RETURNING t.id),
         forgotten AS (DELETE FROM pms_sync_seen WHERE run_id IN (SELECT id FROM failed))
         SELECT count(*) FROM failed"
    ))
    .fetch_one(&mut *conn)
    .await?;
    Ok(u64::try_from(failed).unwrap_or(0))
}

type HeadRow = (Uuid, String, DateTime<Utc>);

fn head((id, status, started_at): HeadRow) -> SyncRunHead {
    SyncRunHead {
        id,
        status,
        started_at,
    }
}

/// Starts a run (STARTED) of `kind` over `entities` inside the caller's transaction, unless one
/// is active: then nothing is written and that run is answered. A dead active run is failed
/// first ([`reconcile`]). Concurrent triggers meet on the unique index of the active run: the
/// insert waits for the other transaction and does nothing if it committed a run, so no error
/// aborts the caller's transaction. `entities` must not be empty (400 on `entities`).
pub async fn start(
    conn: &mut PgConnection,
    kind: SyncKind,
    entities: &[Entity],
    triggered_by: &str,
) -> Result<Started> {
    let names: Vec<&str> = Entity::ALL
        .into_iter()
        .filter(|e| entities.contains(e))
        .map(Entity::as_str)
        .collect();
    if names.is_empty() {
        return Err(Error::invalid(
            "entities",
            "required",
            "name at least one of listings, reservations",
        ));
    }
    reconcile(conn).await?;
    // The active run may finish between the insert and the read: then the insert is tried again.
    for _ in 0..3 {
        let inserted: Option<HeadRow> = sqlx::query_as(
            "INSERT INTO pms_sync_runs (id, kind, entities, status, triggered_by)
             VALUES ($1, $2, $3, 'STARTED', $4)
             ON CONFLICT ((true)) WHERE status IN ('STARTED', 'RUNNING') DO NOTHING
             RETURNING id, status, started_at",
        )
        .bind(Uuid::now_v7())
        .bind(kind.as_str())
        .bind(&names)
        .bind(triggered_by)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = inserted {
            // The mark that the run's records met are whole (see the module's doc).
            sqlx::query(
                "INSERT INTO pms_sync_seen (run_id, entity, pms_id) VALUES ($1, $2, 0)
                 ON CONFLICT DO NOTHING",
            )
            .bind(row.0)
            .bind(SEEN_MARK)
            .execute(&mut *conn)
            .await?;
            return Ok(Started::New(head(row)));
        }
        let active: Option<HeadRow> = sqlx::query_as(
            "SELECT id, status, started_at FROM pms_sync_runs WHERE status IN ('STARTED', 'RUNNING')",
        )
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = active {
            return Ok(Started::AlreadyActive(head(row)));
        }
    }
    Err(Error::Internal(anyhow::anyhow!(
        "the active sync run kept changing while a sync was triggered"
    )))
}

/// Records the job that runs the sync (in the transaction that enqueued it).
pub async fn attach_job(conn: &mut PgConnection, sync_id: Uuid, job_id: Uuid) -> Result<()> {
    let done = sqlx::query("UPDATE pms_sync_runs SET job_id = $2 WHERE id = $1")
        .bind(sync_id)
        .bind(job_id)
        .execute(&mut *conn)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("sync run"));
    }
    Ok(())
}

/// The run as the status route shows it: `{syncId, type, entities, status, startedAt,
/// finishedAt, progress: {listings?, reservations?}, error, triggeredBy, activitySince}`, each
/// progress `{fetched, created, updated, unchanged, skipped, retired, pagesDone, pagesTotal}`; 404 for
/// none. A run whose job is over without it reads FAILED with the job's error.
pub async fn status(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        run_view!(),
        run_from!(),
        " WHERE s.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("sync run"))
}

/// A page of runs, the latest started first, each as [`status`] shows it.
pub async fn list(conn: &mut PgConnection, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM pms_sync_runs s",
        item: run_view!(),
        from: run_from!(),
        order: "s.started_at DESC, s.id DESC",
    };
    json_page(conn, &list, page, |_| {}).await
}

/// The last run that finished (COMPLETED or FAILED) as health shows it: `{syncId, status,
/// finishedAt}`; `None` before the first.
pub async fn last_finished(conn: &mut PgConnection) -> Result<Option<Value>> {
    Ok(sqlx::query_scalar(
        "SELECT jsonb_build_object('syncId', id, 'status', status, 'finishedAt', finished_at)
         FROM pms_sync_runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC, id DESC LIMIT 1",
    )
    .fetch_optional(&mut *conn)
    .await?)
}

/// A run as the worker resumes it.
#[derive(Debug, Clone)]
pub struct RunState {
    pub id: Uuid,
    pub kind: SyncKind,
    /// In the order a sync reads them ([`Entity::ALL`]).
    pub entities: Vec<Entity>,
    /// RUNNING.
    pub status: String,
    /// Where the previous attempt stopped (`{}` at first).
    pub cursor: Value,
    pub started_at: DateTime<Utc>,
    pub activity_since: Option<DateTime<Utc>>,
}

type StateRow = (
    Uuid,
    String,
    Vec<String>,
    String,
    Value,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
);

/// The attempt `owner` of the sync job takes the run: STARTED (or RUNNING, a previous attempt's)
/// → RUNNING, with its resume point. From then on only `owner` may save pages and finish the run:
/// a previous attempt still alive (its lease lapsed) is refused at its next page. `None` when the
/// run is finished (or unknown): there is nothing to do.
pub async fn begin(conn: &mut PgConnection, id: Uuid, owner: &str) -> Result<Option<RunState>> {
    let row: Option<StateRow> = sqlx::query_as(
        "UPDATE pms_sync_runs SET status = 'RUNNING', owner = $2
         WHERE id = $1 AND status IN ('STARTED', 'RUNNING')
         RETURNING id, kind, entities, status, cursor, started_at, activity_since",
    )
    .bind(id)
    .bind(owner)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((id, kind, entities, status, cursor, started_at, activity_since)) = row else {
        return Ok(None);
    };
    let kind = SyncKind::parse(&kind).ok_or_else(|| {
        Error::Internal(anyhow::anyhow!("sync run {id} has an unknown type {kind}"))
    })?;
    let entities = Entity::ALL
        .into_iter()
        .filter(|e| entities.iter().any(|name| name == e.as_str()))
        .collect();
    Ok(Some(RunState {
        id,
        kind,
        entities,
        status,
        cursor,
        started_at,
        activity_since,
    }))
}

/// Records the `latestActivityStart` an incremental run asks for (`None`: it reads everything).
pub async fn set_activity_since(
    conn: &mut PgConnection,
    id: Uuid,
    at: Option<DateTime<Utc>>,
) -> Result<()> {
    sqlx::query("UPDATE pms_sync_runs SET activity_since = $2 WHERE id = $1")
        .bind(id)
        .bind(at)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Records that run `id` met the records `ids` of `entity` (in the transaction that stores their
/// page) and answers those it meets for the first time: only they are counted in the run's
/// progress. Duplicates in `ids` are allowed (one is answered at most once); sorting them keeps
/// concurrent transactions from locking the same ids in opposite orders.
pub async fn first_met(
    conn: &mut PgConnection,
    id: Uuid,
    entity: Entity,
    ids: &[i64],
) -> Result<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO pms_sync_seen (run_id, entity, pms_id)
         SELECT $1, $2, u.id FROM unnest($3::bigint[]) AS u (id)
         ON CONFLICT DO NOTHING
         RETURNING pms_id",
    )
    .bind(id)
    .bind(entity.as_str())
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?)
}

/// One page stored by the worker.
#[derive(Debug, Clone, Copy)]
pub struct PageDone<'a> {
    pub entity: Entity,
    /// What the page's upsert did (records met earlier in the run not counted again).
    pub counts: UpsertCounts,
    /// Records received in the page and met for the first time by the run.
    pub fetched: i64,
    /// Records of the page that do not map (left out), met for the first time by the run (or
    /// without an id).
    pub skipped: i64,
    /// The pages the PMS announces, when it does (`None` keeps the figure known so far); for
    /// reservations read in more than one pass, the pages of the earlier passes included.
    pub pages_total: Option<i64>,
    /// Where to resume after this page.
    pub cursor: &'a Value,
}

/// Adds a page to the run's progress (its counts, `pagesDone` + 1, `pagesTotal`) and saves the
/// resume point. Call it in the transaction that upserted the page: a run resumed after a crash
/// then neither loses nor counts a page twice.
///
/// `false`, and nothing written, when the run is no longer `owner`'s (another attempt took it
/// over, or it is finished): roll the transaction back and stop.
pub async fn save_page(
    conn: &mut PgConnection,
    id: Uuid,
    owner: &str,
    page: &PageDone<'_>,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE pms_sync_runs SET cursor = $8,
            progress = jsonb_set(progress, ARRAY[$2::text], coalesce(progress -> $2::text, '{}') || jsonb_build_object(
                'fetched', coalesce((progress -> $2::text ->> 'fetched')::bigint, 0) + $3,
                'created', coalesce((progress -> $2::text ->> 'created')::bigint, 0) + $4,
                'updated', coalesce((progress -> $2::text ->> 'updated')::bigint, 0) + $5,
                'unchanged', coalesce((progress -> $2::text ->> 'unchanged')::bigint, 0) + $6,
                'skipped', coalesce((progress -> $2::text ->> 'skipped')::bigint, 0) + $10,
                'pagesDone', coalesce((progress -> $2::text ->> 'pagesDone')::bigint, 0) + 1,
                'pagesTotal', coalesce($7::bigint, (progress -> $2::text ->> 'pagesTotal')::bigint)))
         WHERE id = $1 AND status = 'RUNNING' AND owner = $9",
    )
    .bind(id)
    .bind(page.entity.as_str())
    .bind(page.fetched)
    .bind(page.counts.created)
    .bind(page.counts.updated)
    .bind(page.counts.unchanged)
    .bind(page.pages_total)
    .bind(page.cursor)
    .bind(owner)
    .bind(page.skipped)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether the records run `id` met are all still recorded: its mark, written when it started
/// ([`start`]), is there. A crash of Postgres empties the unlogged `pms_sync_seen`, mark
/// included; a run that lost what it met must not retire what it seems not to have met.
pub async fn seen_intact(conn: &mut PgConnection, id: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pms_sync_seen WHERE run_id = $1 AND entity = $2 AND pms_id = 0)",
    )
    .bind(id)
    .bind(SEEN_MARK)
    .fetch_one(&mut *conn)
    .await?)
}

/// Adds `retired` records of `entity` to the run's progress (`retired`). Call it in the
/// transaction that retired them: they are then counted once, whichever attempt retires.
///
/// `false`, and nothing written, when the run is no longer `owner`'s (as [`save_page`]): roll
/// the transaction back and stop.
pub async fn save_retired(
    conn: &mut PgConnection,
    id: Uuid,
    owner: &str,
    entity: Entity,
    retired: i64,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE pms_sync_runs SET progress = jsonb_set(progress, ARRAY[$2::text],
            coalesce(progress -> $2::text, '{}') || jsonb_build_object('retired',
                coalesce((progress -> $2::text ->> 'retired')::bigint, 0) + $3))
         WHERE id = $1 AND status = 'RUNNING' AND owner = $4",
    )
    .bind(id)
    .bind(entity.as_str())
    .bind(retired)
    .bind(owner)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// RUNNING → COMPLETED, by the attempt `owner` that holds the run; the records it met are
/// forgotten. `false`, and nothing written, when the run is no longer `owner`'s (another attempt
/// took it over, or it is finished).
pub async fn complete(conn: &mut PgConnection, id: Uuid, owner: &str) -> Result<bool> {
    let done: i64 = sqlx::query_scalar(
        "WITH done AS (
           UPDATE pms_sync_runs SET status = 'COMPLETED', finished_at = now(), error = NULL
           WHERE id = $1 AND status = 'RUNNING' AND owner = $2
           RETURNING id),
         forgotten AS (DELETE FROM pms_sync_seen WHERE run_id IN (SELECT id FROM done))
         SELECT count(*) FROM done",
    )
    .bind(id)
    .bind(owner)
    .fetch_one(&mut *conn)
    .await?;
    Ok(done == 1)
}

/// → FAILED with the reason; the records the run met are forgotten. With `owner` (the worker),
/// only a RUNNING run that attempt holds; with `None`, any active run (STARTED or RUNNING).
/// `false`, and nothing written, when there is no such run (already finished, or another attempt
/// holds it).
pub async fn fail(
    conn: &mut PgConnection,
    id: Uuid,
    owner: Option<&str>,
    error: &str,
) -> Result<bool> {
    let done: i64 = sqlx::query_scalar(
        "WITH done AS (
           UPDATE pms_sync_runs SET status = 'FAILED', finished_at = now(), error = $3
           WHERE id = $1 AND CASE WHEN $2::text IS NULL THEN status IN ('STARTED', 'RUNNING')
                                  ELSE status = 'RUNNING' AND owner = $2 END
           RETURNING id),
         forgotten AS (DELETE FROM pms_sync_seen WHERE run_id IN (SELECT id FROM done))
         SELECT count(*) FROM done",
    )
    .bind(id)
    .bind(owner)
    .bind(error)
    .fetch_one(&mut *conn)
    .await?;
    Ok(done == 1)
}

/// When the newest COMPLETED run that read reservations started: an incremental sync asks for
/// the reservations with activity since then (less a margin). `None` before the first.
pub async fn incremental_since(conn: &mut PgConnection) -> Result<Option<DateTime<Utc>>> {
    Ok(sqlx::query_scalar(
        "SELECT max(started_at) FROM pms_sync_runs
         WHERE status = 'COMPLETED' AND 'reservations' = ANY (entities)",
    )
    .fetch_one(&mut *conn)
    .await?)
}

/// An operator's retry of the run's failed job (`POST /admin/jobs/{id}/retry`), in the
/// transaction that queues the job again: the FAILED run is RUNNING again, its error and end
/// cleared, and the job runs it again from the start (progress and resume point cleared: the
/// records a run met were forgotten when it failed, and a run counts, and a full one retires,
/// by what it met; unchanged records cost no write). One sync at a time: while another run is
/// active the retry is a conflict saying to wait for it or trigger a new sync.
pub async fn reopen(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    // A run whose job is over without it reads FAILED but may still say RUNNING: settled first.
    reconcile(conn).await?;
    let active: Option<Uuid> = sqlx::query_scalar(
        "SELECT id FROM pms_sync_runs WHERE status IN ('STARTED', 'RUNNING') AND id <> $1",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(other) = active {
        return Err(Error::conflict(
            "SYNC_IN_PROGRESS",
            format!(
                "sync run {other} is going; retry this one once it has finished, or trigger a new sync (POST /reporting/sync/trigger)"
            ),
        ));
    }
    let reopened = sqlx::query(
        "UPDATE pms_sync_runs
         SET status = 'RUNNING', error = NULL, finished_at = NULL, owner = NULL,
             progress = '{}', cursor = '{}'
         WHERE id = $1 AND status = 'FAILED'",
    )
    .bind(id)
    .execute(&mut *conn)
    .await
    .map_err(|e| {
        // Another run began between the check and the update (the one-active index).
        crate::on_refusal(e, crate::Refusal::Unique, || {
            Error::conflict(
                "SYNC_IN_PROGRESS",
                "another sync run is going; retry this one once it has finished, or trigger a new sync (POST /reporting/sync/trigger)",
            )
        })
    })?;
    if reopened.rows_affected() == 0 {
        return Err(Error::conflict(
            "NOTHING_TO_RETRY",
            format!(
                "sync run {id} is COMPLETED or gone: trigger a new sync (POST /reporting/sync/trigger)"
            ),
        ));
    }
    // Run from the start, it meets every record again: what it meets is recorded afresh, with
    // the mark that lets a completed full run retire what it did not meet (`seen_intact`).
    sqlx::query("DELETE FROM pms_sync_seen WHERE run_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("INSERT INTO pms_sync_seen (run_id, entity, pms_id) VALUES ($1, $2, 0)")
        .bind(id)
        .bind(SEEN_MARK)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
