//! Queue `exports`: the reporting API's spreadsheet exports (`POST /reporting/export`), run by
//! `worker-exports`.
//!
//! [`start`] writes the export's row (`domain::reporting::exports`, status `PROCESSING`) and its
//! job ([`ExportJob`]) in the caller's transaction; a client polls the row and downloads the file
//! once it is `COMPLETED`. The job reads everything in one read-only snapshot (the count, the
//! rows, the revenue export's Total row: they agree even while a sync writes), streams the rows
//! from Postgres in chunks through a bounded channel to a writer on a blocking thread ([`xlsx`]
//! in constant-memory mode, or [`csv`]), so a million rows hold a few megabytes; then it puts the
//! file in the document store under `Exports/` and completes the row. A worker killed mid-export
//! loses nothing: the row is still `PROCESSING`, the job runs again and writes the file anew.
//! Completed files expire after `EXPORT_RETENTION_DAYS`; [`ExpireExports`] removes them every
//! `EXPORT_EXPIRY_INTERVAL_SECS`.

pub mod csv;
pub mod xlsx;

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use chrono::Utc;
use domain::{
    reporting::{
        exports::{self, Cell, CreatedExport, ExportFormat, ExportSpec, ExportType},
        figures::{Buckets, Period, Scope},
    },
    storage::{SafeName, StoragePath, export_path},
};
use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgConnection;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::{Enqueued, Job, JobContext, JobError, Queue};

/// Rows sent to the writer at a time.
const CHUNK_ROWS: usize = 1_000;
/// Chunks waiting for the writer, at most: with the chunk being read and the one being written,
/// about ten thousand rows in memory whatever the export's size.
const CHANNEL_CHUNKS: usize = 8;
/// The export's progress is written when it moved by this many percent...
const PROGRESS_STEP: u8 = 5;
/// ... and this long after the last write, at the earliest.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// How long a progress write waits for a database connection before it is skipped (the next
/// chunk tries again): progress never holds the rows up.
const PROGRESS_CONNECTION_WAIT: Duration = Duration::from_millis(250);
/// Exports one worker builds at once (`JobServices::export_slots`). Each holds two database
/// connections and keeps a core busy while it writes: more at once would starve the pool (and the
/// lease renewals that share it), so the others wait their turn, leased, without using up an
/// attempt. It is also `worker-exports`' default `WORKER_CONCURRENCY`, so that a process claims
/// no more exports than it builds and a second replica gets the rest.
pub const CONCURRENT_EXPORTS: usize = 4;
/// Expired exports handled per statement by [`ExpireExports`].
const EXPIRE_BATCH: i64 = 100;
/// The store's folder of exports: [`ExpireExports`] removes nothing outside it.
const EXPORTS_FOLDER: &str = "Exports/";

/// Builds one export's file. Idempotent: an export that is no longer `PROCESSING` (completed by an
/// earlier run, expired, or deleted) is left alone, and a run writes the whole file anew, under
/// the same name, whatever an earlier attempt left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportJob {
    pub export_id: Uuid,
}

impl Job for ExportJob {
    const KIND: &'static str = "exports.build";
    const QUEUE: Queue = Queue::Exports;
    const MAX_ATTEMPTS: i32 = 3;

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("export:{}", self.export_id))
    }

    /// The failed export is made again from the start (`exports::reopen`).
    async fn reopen(&self, conn: &mut PgConnection) -> Result<(), domain::Error> {
        exports::reopen(conn, self.export_id).await
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let outcome = build(self.export_id, &ctx).await;
        if let Err(error) = &outcome
            && error.wait.is_none()
            && (!error.retryable || ctx.attempt >= ctx.max_attempts)
        {
            // The job ends FAILED with this run: the export says so at once, with the reason.
            let failed: Result<(), domain::Error> = async {
                let mut conn = ctx.pool.acquire().await?;
                exports::fail(
                    &mut conn,
                    self.export_id,
                    &error.message,
                    &ctx.worker,
                    ctx.attempt,
                )
                .await
            }
            .await;
            if let Err(fail_error) = failed {
                tracing::warn!(export_id = %self.export_id, error = %fail_error,
                    "the failed export could not be marked FAILED; its status reads the job's");
            }
        }
        outcome
    }
}

/// What an export request started.
pub enum Started {
    /// A new export: push its job (`JobQueues::push`) once the transaction has committed.
    New(CreatedExport, Enqueued),
    /// An identical request's export, PROCESSING or COMPLETED, which serves this one
    /// (`exports::reusable`): nothing new to make.
    Existing(CreatedExport),
}

/// How long a caller at the quota is asked to wait: about what a large export takes.
const QUOTA_RETRY_AFTER_SECS: u64 = 30;

/// Starts an export of `spec` in the caller's transaction (its row and its job), or answers the
/// export an identical request already made or is making. A caller with
/// [`exports::MAX_PROCESSING_PER_CALLER`] exports being made is refused (429
/// `EXPORT_QUOTA_EXCEEDED`): a few callers must not keep every export slot.
pub async fn start(
    conn: &mut PgConnection,
    spec: &ExportSpec,
    requested_by: &str,
) -> Result<Started, domain::Error> {
    let text = exports::request_text(spec)?;
    exports::lock_request(conn, requested_by, &text).await?;
    if let Some(existing) = exports::reusable(conn, &text).await? {
        return Ok(Started::Existing(existing));
    }
    let processing = exports::processing_count(conn, requested_by).await?;
    if processing >= exports::MAX_PROCESSING_PER_CALLER {
        return Err(domain::Error::QuotaExceeded {
            code: "EXPORT_QUOTA_EXCEEDED",
            message: format!(
                "you have {processing} exports being made, the most one caller may have at once ({}); ask again once one has finished",
                exports::MAX_PROCESSING_PER_CALLER
            ),
            retry_after_secs: QUOTA_RETRY_AFTER_SECS,
        });
    }
    let id = Uuid::now_v7();
    let enqueued = ExportJob { export_id: id }.enqueue(conn).await?;
    let created = exports::create(conn, id, spec, requested_by, enqueued.id).await?;
    Ok(Started::New(created, enqueued))
}

/// One run of [`ExportJob`].
async fn build(export_id: Uuid, ctx: &JobContext) -> Result<Value, JobError> {
    let _slot = ctx
        .services
        .export_slots
        .acquire()
        .await
        .map_err(|e| JobError::retry(format!("no export slot: {e}")))?;
    let started = Instant::now();
    let mut snapshot = ctx
        .pool
        .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .await?;
    let Some((spec, status)) = exports::load(&mut snapshot, export_id).await? else {
        return Ok(json!({"skipped": "export deleted", "exportId": export_id}));
    };
    if status != "PROCESSING" {
        return Ok(json!({"skipped": format!("export is {status}"), "exportId": export_id}));
    }
    let scope = match Scope::resolve(&mut snapshot, spec.listing_ids.clone()).await {
        Ok(scope) => scope,
        // A listing the export names was deleted since it was requested: no run can do it.
        Err(domain::Error::Validation(problems)) => {
            let reasons: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
            return Err(JobError::fatal(format!(
                "the export's listings changed since it was requested: {}",
                reasons.join("; ")
            )));
        }
        Err(other) => return Err(other.into()),
    };
    // The file's rows, the revenue export's Total row included.
    let expected = u64::try_from(exports::count_rows(&mut snapshot, &spec).await?).unwrap_or(0);
    if matches!(spec.format, ExportFormat::Excel) && expected > xlsx::MAX_ROWS {
        return Err(JobError::fatal(format!(
            "the export has {expected} rows, more than an Excel worksheet holds ({}): choose a \
             shorter period, fewer listings, or the csv format",
            xlsx::MAX_ROWS
        )));
    }
    // The revenue export ends with its Total row (the period's figures, as the dashboard's).
    let total_rows = u64::from(matches!(spec.kind, ExportType::Revenue));
    let names = scope.names(&mut snapshot).await?;
    let definitions = exports::definitions(&spec, &names, Utc::now());
    // `rows` takes buckets for every type; a reservations export is not bucketed and ignores them.
    let buckets = exports::buckets_for(&spec).unwrap_or_else(|| {
        Buckets::whole(Period::default_ending(
            ctx.services.business_time_zone.today(),
        ))
    });

    remove_earlier_files(export_id).await;
    let file = TempFile::new(export_id, spec.format.extension());
    let (rows_in, rows_out) = mpsc::channel::<Vec<Vec<Cell>>>(CHANNEL_CHUNKS);
    let writer = {
        let (path, abandoned) = (file.path.clone(), file.abandoned.clone());
        let (format, sheet, columns) =
            (spec.format, spec.kind.title(), exports::columns(spec.kind));
        // The writer's lines belong to the export's run (its span: job and request ids).
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || {
            let _run = span.enter();
            let mut rows_out = rows_out;
            let rows = std::iter::from_fn(move || rows_out.blocking_recv()).flatten();
            let written = match format {
                ExportFormat::Excel => xlsx::write_xlsx(&path, sheet, columns, &definitions, rows),
                ExportFormat::Csv => csv::write_csv(&path, columns, rows),
            };
            // The run stopped while this wrote (the worker is shutting down): nobody removes
            // the file it just saved but this thread.
            if abandoned.load(Ordering::SeqCst) {
                let _ = std::fs::remove_file(&path);
            }
            written
        })
    };
    let mut progress = Progress::new(ctx, export_id, expected);
    let fed = feed(
        &mut snapshot,
        &spec,
        &scope,
        &buckets,
        rows_in,
        &mut progress,
    )
    .await;
    // Everything is read: the snapshot ends before the writer's save, which can take a while.
    if let Err(error) = snapshot.rollback().await {
        tracing::debug!(%export_id, %error, "ending the export's snapshot");
    }
    let written = writer
        .await
        .map_err(|e| JobError::retry(format!("the export's writer stopped: {e}")))?;
    let sent = fed?;
    let written =
        written.map_err(|e| JobError::retry(format!("writing the export's file: {e}")))?;
    let Some(sent) = sent else {
        return Err(JobError::retry("the export's writer stopped taking rows"));
    };
    if written != sent + total_rows {
        return Err(JobError::retry(format!(
            "the writer wrote {written} rows of {}",
            sent + total_rows
        )));
    }
    let size = tokio::fs::metadata(&file.path)
        .await
        .map_err(|e| JobError::retry(format!("the written export is not readable: {e}")))?
        .len();

    let name = SafeName::parse("fileName", &format!("{export_id}-{}", spec.file_name()))?;
    let path = export_path(&name);
    let mut conn = ctx.pool.acquire().await?;
    // Another run finished it meanwhile (this one lost its lease but went on): the file in the
    // store is that run's; this one's stays out.
    if !still_processing(&mut conn, export_id).await? {
        return Ok(json!({"skipped": "finished by another run", "exportId": export_id}));
    }
    ctx.services.store.put_file(&path, &file.path).await?;
    // The rows below the header, the Total row included (as `count_rows` counts them).
    let row_count = i64::try_from(written).unwrap_or(i64::MAX);
    let size_bytes = i64::try_from(size).unwrap_or(i64::MAX);
    let completed = exports::complete(
        &mut conn,
        export_id,
        row_count,
        path.as_str(),
        size_bytes,
        ctx.services.export_retention,
    )
    .await?;
    if !completed {
        // It stopped being PROCESSING between the check and now. A completed export's file is
        // at the same path: it stays; any other's goes.
        if !is_completed(&mut conn, export_id).await? {
            ctx.services.store.delete(&path).await?;
        }
        return Ok(json!({"skipped": "finished by another run", "exportId": export_id}));
    }
    Ok(json!({
        "exportId": export_id,
        "type": spec.kind.as_str(),
        "format": spec.format.as_str(),
        "rows": row_count,
        "bytes": size_bytes,
        "storagePath": path.as_str(),
        "millis": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }))
}

/// Streams the export's rows from `conn` to the writer in chunks, the revenue export's Total row
/// last, writing the progress on the way. Answers the data rows sent (the Total row not
/// counted), or `None` when the writer stopped taking them (its own result says why).
async fn feed(
    conn: &mut PgConnection,
    spec: &ExportSpec,
    scope: &Scope,
    buckets: &Buckets,
    rows_in: mpsc::Sender<Vec<Vec<Cell>>>,
    progress: &mut Progress<'_>,
) -> Result<Option<u64>, JobError> {
    let mut sent: u64 = 0;
    let mut chunk = Vec::with_capacity(CHUNK_ROWS);
    {
        let mut rows = exports::rows(conn, spec, scope, buckets);
        while let Some(row) = rows.try_next().await? {
            chunk.push(row);
            if chunk.len() == CHUNK_ROWS {
                let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_ROWS));
                if rows_in.send(full).await.is_err() {
                    return Ok(None);
                }
                sent += CHUNK_ROWS as u64;
                progress.rows_sent(sent).await;
            }
        }
    }
    sent += chunk.len() as u64;
    if matches!(spec.kind, ExportType::Revenue) {
        chunk.push(exports::revenue_total_row(conn, spec, scope).await?);
    }
    if !chunk.is_empty() && rows_in.send(chunk).await.is_err() {
        return Ok(None);
    }
    Ok(Some(sent))
}

/// The export's progress (0-99 while rows flow; completing it makes it 100), written on a
/// connection of its own.
struct Progress<'a> {
    ctx: &'a JobContext,
    export_id: Uuid,
    total: u64,
    reported: u8,
    at: Instant,
}

impl<'a> Progress<'a> {
    fn new(ctx: &'a JobContext, export_id: Uuid, total: u64) -> Self {
        Self {
            ctx,
            export_id,
            total,
            reported: 0,
            at: Instant::now(),
        }
    }

    async fn rows_sent(&mut self, sent: u64) {
        let percent = percent_of(sent, self.total);
        let moved = percent >= self.reported.saturating_add(PROGRESS_STEP);
        if !moved || self.at.elapsed() < PROGRESS_EVERY {
            return;
        }
        let conn = tokio::time::timeout(PROGRESS_CONNECTION_WAIT, self.ctx.pool.acquire()).await;
        let Ok(Ok(mut conn)) = conn else {
            return;
        };
        match exports::set_progress(&mut conn, self.export_id, i16::from(percent)).await {
            Ok(()) => {
                self.reported = percent;
                self.at = Instant::now();
            }
            Err(error) => {
                tracing::warn!(export_id = %self.export_id, %error, "export progress not written")
            }
        }
    }
}

/// `done` of `total` in percent, at most 99: 100 is for the completed export.
fn percent_of(done: u64, total: u64) -> u8 {
    if total == 0 {
        return 0;
    }
    u8::try_from(done.min(total) * 99 / total).unwrap_or(99)
}

async fn still_processing(conn: &mut PgConnection, export_id: Uuid) -> Result<bool, JobError> {
    let loaded = exports::load(conn, export_id).await?;
    Ok(loaded.is_some_and(|(_, status)| status == "PROCESSING"))
}

async fn is_completed(conn: &mut PgConnection, export_id: Uuid) -> Result<bool, JobError> {
    let loaded = exports::load(conn, export_id).await?;
    Ok(loaded.is_some_and(|(_, status)| status == "COMPLETED"))
}

/// The start of the names of an export's temporary files: `villa-export-<id>-`.
fn temp_prefix(export_id: Uuid) -> String {
    format!("villa-export-{export_id}-")
}

/// Removes what earlier runs of the export left in the temporary folder (a worker killed
/// mid-export leaves its half-written file).
async fn remove_earlier_files(export_id: Uuid) {
    let prefix = temp_prefix(export_id);
    let Ok(mut entries) = tokio::fs::read_dir(std::env::temp_dir()).await else {
        return;
    };
    while let Ok(Some(entry)) = entries.next_entry().await {
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(&prefix));
        if ours {
            remove_quietly(&entry.path());
        }
    }
}

fn remove_quietly(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "temporary export file not removed")
        }
    }
}

/// The file a run writes before it goes to the store; removed however the run ends.
struct TempFile {
    path: PathBuf,
    /// Set when the run is over: a writer still running then removes what it saves.
    abandoned: Arc<AtomicBool>,
}

impl TempFile {
    fn new(export_id: Uuid, extension: &str) -> Self {
        let name = format!(
            "{}{}.{extension}",
            temp_prefix(export_id),
            Uuid::new_v4().simple()
        );
        Self {
            path: std::env::temp_dir().join(name),
            abandoned: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.abandoned.store(true, Ordering::SeqCst);
        remove_quietly(&self.path);
    }
}

/// Removes the files of the exports whose retention is over and marks them `EXPIRED`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpireExports {
    /// The scheduler tick (one job per tick, however many schedulers fire).
    pub tick: String,
}

/// The scheduler removes expired exports every `EXPORT_EXPIRY_INTERVAL_SECS`.
impl crate::Periodic for ExpireExports {
    const INTERVAL_SETTING: &'static str = "EXPORT_EXPIRY_INTERVAL_SECS";
    const DEFAULT_INTERVAL: Duration = Duration::from_secs(3600);

    fn for_tick(tick: String) -> Self {
        Self { tick }
    }
}

impl Job for ExpireExports {
    const KIND: &'static str = "exports.expire";
    const QUEUE: Queue = Queue::Exports;

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("{}:tick:{}", Self::KIND, self.tick))
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let mut conn = ctx.pool.acquire().await?;
        let (mut expired, mut removed) = (0u64, 0u64);
        // An export met twice means marking it did not take: stop rather than loop.
        let mut met = HashSet::new();
        loop {
            let batch = exports::expired(&mut conn, EXPIRE_BATCH).await?;
            let last = batch.len() < usize::try_from(EXPIRE_BATCH).unwrap_or(usize::MAX);
            let fresh: Vec<(Uuid, Option<String>)> = batch
                .into_iter()
                .filter(|(id, _)| met.insert(*id))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for (id, stored) in fresh {
                let path = stored
                    .as_deref()
                    .and_then(StoragePath::from_stored)
                    .filter(|p| p.as_str().starts_with(EXPORTS_FOLDER));
                match (path, stored) {
                    (Some(path), _) => {
                        ctx.services.store.delete(&path).await?;
                        removed += 1;
                    }
                    (None, Some(stored)) => tracing::warn!(
                        export_id = %id,
                        %stored,
                        "an expired export's path is outside the exports folder: left in place"
                    ),
                    (None, None) => {}
                }
                exports::mark_expired(&mut conn, id).await?;
                expired += 1;
            }
            if last {
                break;
            }
        }
        let stale = remove_stale_temp_files(STALE_TEMP_AFTER).await;
        // The store's own temporary files, left by any writer killed mid-write (an export's,
        // an upload's): a failure to sweep is no reason to fail the expiry.
        let store_stale = ctx
            .services
            .store
            .sweep_stale_temp_files(STALE_TEMP_AFTER)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the store's stale temporary files could not be swept");
                0
            });
        Ok(
            json!({"tick": self.tick, "expired": expired, "filesRemoved": removed,
            "staleTempFilesRemoved": stale, "storeTempFilesRemoved": store_stale}),
        )
    }
}

/// A temporary export file not written for this long belongs to no running export: a run writes
/// its file continuously and removes it when it ends, so only a killed process leaves one (and
/// its retry, on another machine or never, would not remove it).
const STALE_TEMP_AFTER: Duration = Duration::from_secs(3600);

/// Removes this machine's temporary export files not modified for `after`; how many.
async fn remove_stale_temp_files(after: Duration) -> u64 {
    let Ok(mut entries) = tokio::fs::read_dir(std::env::temp_dir()).await else {
        return 0;
    };
    let mut removed = 0;
    while let Ok(Some(entry)) = entries.next_entry().await {
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with("villa-export-"));
        let stale = ours && domain::storage::untouched_for(&entry, after).await;
        if stale {
            remove_quietly(&entry.path());
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Periodic;

    #[test]
    fn one_job_per_export_and_per_tick() {
        let id = Uuid::nil();
        assert_eq!(
            ExportJob { export_id: id }.dedupe_key().as_deref(),
            Some("export:00000000-0000-0000-0000-000000000000")
        );
        assert_eq!(
            serde_json::to_value(ExportJob { export_id: id }).unwrap(),
            json!({"exportId": "00000000-0000-0000-0000-000000000000"})
        );
        assert_eq!(
            ExpireExports::for_tick("3600s-7".to_owned())
                .dedupe_key()
                .as_deref(),
            Some("exports.expire:tick:3600s-7")
        );
        assert_eq!(
            ExpireExports::INTERVAL_SETTING,
            "EXPORT_EXPIRY_INTERVAL_SECS"
        );
    }

    #[test]
    fn progress_stays_below_100_until_the_export_completes() {
        assert_eq!(percent_of(0, 0), 0);
        assert_eq!(percent_of(0, 10), 0);
        assert_eq!(percent_of(5, 10), 49);
        assert_eq!(percent_of(10, 10), 99);
        assert_eq!(percent_of(12, 10), 99);
        assert_eq!(percent_of(1_000_000, 1_000_001), 98);
    }

    #[test]
    fn a_run_removes_its_file_however_it_ends() {
        let id = Uuid::now_v7();
        let file = TempFile::new(id, "csv");
        let path = file.path.clone();
        assert!(
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&temp_prefix(id)) && n.ends_with(".csv"))
        );
        std::fs::write(&path, b"x").unwrap();
        drop(file);
        assert!(!path.exists());
    }
}
