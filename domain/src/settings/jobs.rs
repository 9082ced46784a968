//! The job pipeline's tuning (`JOB_*`, `WORKER_CONCURRENCY`, `SHUTDOWN_GRACE_SECS`). (The
//! periodic jobs' intervals are declared beside each job: `jobs::Periodic`.)

use std::time::Duration;

use super::env::Env;

/// Tuning of the job pipeline; the defaults are what production runs with.
#[derive(Debug, Clone)]
pub struct JobSettings {
    /// How long a claimed job is leased to its worker; renewed while it runs. A worker that died
    /// loses its jobs to another after at most this long plus one reaper tick.
    pub lease: Duration,
    /// A QUEUED row whose id was handed to Redis this long ago and has not been claimed is pushed
    /// again (Redis lost it, or the process died between commit and push).
    pub redispatch_after: Duration,
    /// How often an idle worker asks Redis for work.
    pub poll_interval: Duration,
    /// Jobs one worker process runs at once per queue.
    pub concurrency: usize,
    /// At most this many deliveries are claimed in one statement (and fetched from Redis in
    /// one call), never more than `concurrency`. Claims are not held back to fill a batch: what
    /// arrived while the previous claim ran goes in the next.
    pub claim_batch: usize,
    /// Ends of runs are recorded in one statement once this many are waiting...
    pub complete_batch: usize,
    /// ...or once the first of them has waited this long, whichever comes first.
    pub complete_interval: Duration,
    /// On SIGTERM, how long in-flight jobs may take to finish before they are handed back.
    pub shutdown_grace: Duration,
}

/// The job pipeline's variables; problems go to `env` like every other setting's. A worker that
/// would run no job is refused by [`check_job_settings`].
pub(super) fn job_settings(env: &mut Env<'_>) -> JobSettings {
    JobSettings {
        lease: Duration::from_secs(env.parsed(
            "JOB_LEASE_SECS",
            15u64,
            "a whole number of seconds",
        )),
        redispatch_after: Duration::from_secs(env.parsed(
            "JOB_REDISPATCH_AFTER_SECS",
            5u64,
            "a whole number of seconds",
        )),
        poll_interval: Duration::from_millis(env.parsed(
            "JOB_POLL_INTERVAL_MS",
            20u64,
            "a whole number of milliseconds",
        )),
        concurrency: env.parsed("WORKER_CONCURRENCY", 64usize, "a whole number"),
        claim_batch: env.parsed("WORKER_CLAIM_BATCH", 32usize, "a whole number"),
        complete_batch: env.parsed("WORKER_COMPLETE_BATCH", 100usize, "a whole number"),
        complete_interval: Duration::from_millis(env.parsed(
            "WORKER_COMPLETE_INTERVAL_MS",
            5u64,
            "a whole number of milliseconds",
        )),
        shutdown_grace: Duration::from_secs(env.parsed(
            "SHUTDOWN_GRACE_SECS",
            15u64,
            "a whole number of seconds",
        )),
    }
}

/// The largest batches the settings accept: a statement over more rows holds its locks longer
/// than a batch saves, and a Redis fetch of more deliveries than that blocks Redis for longer.
pub const MAX_CLAIM_BATCH: usize = 1000;
pub const MAX_COMPLETE_BATCH: usize = 10_000;
/// An end waits at most this long to be written: far below any lease.
pub const MAX_COMPLETE_INTERVAL: Duration = Duration::from_secs(1);

/// What [`job_settings`] read and cannot be: a worker that runs no job at once, batches of
/// nothing or without bound, ends held back for longer than a lease.
pub(super) fn check_job_settings(env: &mut Env<'_>, jobs: &JobSettings) {
    if jobs.concurrency == 0 {
        env.problems
            .push("WORKER_CONCURRENCY must be at least 1".into());
    }
    if !(1..=MAX_CLAIM_BATCH).contains(&jobs.claim_batch) {
        env.problems.push(format!(
            "WORKER_CLAIM_BATCH must be from 1 to {MAX_CLAIM_BATCH}"
        ));
    }
    if !(1..=MAX_COMPLETE_BATCH).contains(&jobs.complete_batch) {
        env.problems.push(format!(
            "WORKER_COMPLETE_BATCH must be from 1 to {MAX_COMPLETE_BATCH}"
        ));
    }
    if jobs.complete_interval > MAX_COMPLETE_INTERVAL {
        env.problems.push(format!(
            "WORKER_COMPLETE_INTERVAL_MS must be at most {}",
            MAX_COMPLETE_INTERVAL.as_millis()
        ));
    }
}
