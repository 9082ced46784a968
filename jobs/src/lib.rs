//! Long-running work (ARCHITECTURE.md, "Long-running work").
//!
//! A job is a row in Postgres (`domain::job_store`), written in the same transaction as the
//! change that needs it, and an id pushed to its apalis Redis queue after that transaction
//! commits. Workers (crate `workers`) claim the row with a conditional update, run the kind's
//! handler and record the outcome; a dispatcher pushes again whatever Redis lost. One module per
//! kind of job: its payload, its queue, how it is enqueued and the function that does the work,
//! and for work the scheduler enqueues at an interval, its [`Periodic`] impl.

pub mod alerts;
pub mod documents;
pub mod exports;
pub mod mail;
pub mod maintenance;
pub mod media;
pub mod pms;
pub mod queue;
pub mod registry;
pub mod reporting_cache;
pub mod retry;
pub mod sliding_window;
pub mod system;
pub mod transport;

use std::time::Duration;

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

pub use queue::Queue;
pub use registry::{JobContext, JobError, JobRegistry, JobServices};
pub use transport::JobQueues;

/// A kind of job. Implementors are the payload; `run` does the work and must be idempotent: a
/// job can run more than once (a worker died after the work but before recording it).
pub trait Job: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// Stable name stored in the row (`documents.upload`, ...). Never rename one that has landed.
    const KIND: &'static str;
    const QUEUE: Queue;
    /// Runs before the row says FAILED.
    const MAX_ATTEMPTS: i32 = 5;
    /// Backoff before retry n is `BACKOFF_BASE * 2^(n-1)`, at most [`MAX_BACKOFF`].
    const BACKOFF_BASE: Duration = Duration::from_secs(2);

    /// Work that must exist once per subject returns a key; enqueueing again is then a no-op.
    fn dedupe_key(&self) -> Option<String> {
        None
    }

    fn run(self, ctx: JobContext) -> impl Future<Output = Result<Value, JobError>> + Send;

    /// An operator's retry of this job once FAILED (`POST /admin/jobs/{id}/retry`, [`retry`]),
    /// in the transaction that queues it again. A job that works on a record of its own which
    /// its failure closed (an export, a sync run: FAILED, which a rerun would skip) reopens it
    /// here, or refuses the retry with a conflict saying what to do instead. Most jobs have no
    /// such record.
    fn reopen(
        &self,
        _conn: &mut PgConnection,
    ) -> impl Future<Output = Result<(), domain::Error>> + Send {
        async { Ok(()) }
    }

    /// Writes the job row on `conn`, which should be the transaction of the change that needs
    /// the work. Push the returned handle with [`JobQueues::push`] once that transaction has
    /// committed; if that push never happens, the dispatcher pushes the row a few seconds later.
    /// Several jobs go in one statement with [`JobBatch`].
    fn enqueue(
        &self,
        conn: &mut PgConnection,
    ) -> impl Future<Output = Result<Enqueued, sqlx::Error>> + Send {
        async move {
            let mut batch = JobBatch::default();
            batch.add(self)?;
            let mut enqueued = batch.enqueue(conn).await?;
            Ok(enqueued.remove(0))
        }
    }
}

/// Jobs of any kinds written in one statement: what work that fans out (a photo batch, the
/// alert evaluation of many items) enqueues. Push the answer with [`JobQueues::push`] once the
/// transaction has committed: one Redis call per queue, whatever the number of jobs.
#[derive(Debug, Default)]
pub struct JobBatch {
    queues: Vec<Queue>,
    rows: Vec<domain::job_store::NewJob>,
}

impl JobBatch {
    /// Adds `job`; fails only when its payload cannot be serialized.
    pub fn add<J: Job>(&mut self, job: &J) -> Result<&mut Self, sqlx::Error> {
        self.queues.push(J::QUEUE);
        self.rows.push(domain::job_store::NewJob {
            id: Uuid::now_v7(),
            kind: J::KIND,
            queue: J::QUEUE.name(),
            payload: serde_json::to_value(job).map_err(|e| sqlx::Error::Encode(Box::new(e)))?,
            max_attempts: J::MAX_ATTEMPTS,
            dedupe_key: job.dedupe_key(),
        });
        Ok(self)
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the rows on `conn` in one statement. Answers one handle per job added, in order;
    /// a job whose dedupe key was taken (before, or by an earlier job of the batch) is
    /// `inserted: false`.
    pub async fn enqueue(self, conn: &mut PgConnection) -> Result<Vec<Enqueued>, sqlx::Error> {
        let inserted: std::collections::HashSet<Uuid> =
            domain::job_store::insert_many(conn, &self.rows)
                .await?
                .into_iter()
                .collect();
        Ok(self
            .queues
            .into_iter()
            .zip(self.rows)
            .map(|(queue, row)| Enqueued {
                queue,
                id: row.id,
                inserted: inserted.contains(&row.id),
            })
            .collect())
    }
}

/// A job the scheduler enqueues at a fixed interval. Declared beside the job, with the setting
/// that names its interval, so that the scheduler's table (`workers/src/bin/scheduler.rs`) needs
/// one line per periodic job: `periodic::<TheJob>(lookup)`.
pub trait Periodic: Job {
    /// The environment variable giving the interval in whole seconds (at least 1).
    const INTERVAL_SETTING: &'static str;
    /// The interval when [`INTERVAL_SETTING`](Self::INTERVAL_SETTING) is not set.
    const DEFAULT_INTERVAL: Duration;

    /// The job of one tick. Its [`dedupe_key`](Job::dedupe_key) must name `tick`: every scheduler
    /// names a tick alike, so that is what makes one job per tick however many schedulers fire.
    fn for_tick(tick: String) -> Self;

    /// The interval configured in `lookup` (the process environment in the scheduler). Read
    /// through `domain::settings`, so a malformed value is an error naming the variable and the
    /// scheduler refuses to start.
    fn interval(
        lookup: domain::settings::Lookup<'_>,
    ) -> Result<Duration, domain::settings::SettingsError> {
        domain::settings::seconds_setting(lookup, Self::INTERVAL_SETTING, Self::DEFAULT_INTERVAL)
    }
}

pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// A job row written by [`Job::enqueue`], to push once its transaction has committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "push the job after the transaction commits, or it waits for the dispatcher"]
pub struct Enqueued {
    pub queue: Queue,
    pub id: Uuid,
    /// False when the dedupe key already existed: nothing new to push.
    pub inserted: bool,
}

/// The backoff before the next run after failed run number `attempt` (from 1).
pub fn backoff(base: Duration, attempt: i32) -> Duration {
    let exp = u32::try_from(attempt.saturating_sub(1))
        .unwrap_or(0)
        .min(16);
    base.saturating_mul(1u32 << exp).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let b = Duration::from_secs(2);
        assert_eq!(backoff(b, 1), Duration::from_secs(2));
        assert_eq!(backoff(b, 2), Duration::from_secs(4));
        assert_eq!(backoff(b, 4), Duration::from_secs(16));
        assert_eq!(backoff(b, 40), MAX_BACKOFF);
    }
}
