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
        shutdown_grace: Duration::from_secs(env.parsed(
            "SHUTDOWN_GRACE_SECS",
            15u64,
            "a whole number of seconds",
        )),
    }
}

/// What [`job_settings`] read and cannot be: a worker that runs no job at once.
pub(super) fn check_job_settings(env: &mut Env<'_>, jobs: &JobSettings) {
    if jobs.concurrency == 0 {
        env.problems
            .push("WORKER_CONCURRENCY must be at least 1".into());
    }
}
