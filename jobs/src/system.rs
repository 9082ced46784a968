//! Queue `system`: platform housekeeping and the pipeline's diagnostic job.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Job, JobContext, JobError, Queue};

/// Proves the pipeline end to end: an operator enqueues one (`POST /admin/jobs/diagnostic`) and
/// watches it reach SUCCEEDED. `sleep_ms` and `fail_attempts` exercise slow and failing work
/// (the first `fail_attempts` runs fail), which is how the pipeline's own tests and benchmark
/// drive it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiagnosticJob {
    #[serde(default)]
    pub sleep_ms: u64,
    #[serde(default)]
    pub fail_attempts: u32,
    #[serde(default)]
    pub note: Option<String>,
}

/// Longest sleep a diagnostic job may ask for.
pub const MAX_DIAGNOSTIC_SLEEP_MS: u64 = 60_000;

impl Job for DiagnosticJob {
    const KIND: &'static str = "system.diagnostic";
    const QUEUE: Queue = Queue::System;
    const MAX_ATTEMPTS: i32 = 3;
    const BACKOFF_BASE: Duration = Duration::from_millis(500);

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        if self.sleep_ms > 0 {
            tokio::time::sleep(Duration::from_millis(
                self.sleep_ms.min(MAX_DIAGNOSTIC_SLEEP_MS),
            ))
            .await;
        }
        if i64::from(ctx.attempt) <= i64::from(self.fail_attempts) {
            return Err(JobError::retry(format!(
                "diagnostic failure requested for attempt {} of {}",
                ctx.attempt, ctx.max_attempts
            )));
        }
        Ok(json!({ "attempt": ctx.attempt, "worker": &*ctx.worker, "note": self.note }))
    }
}

/// Deletes finished job rows older than `older_than_days`; the scheduler enqueues it daily.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PurgeFinishedJobs {
    pub older_than_days: u32,
    /// The scheduler tick this run belongs to: one job per tick, however many schedulers fire.
    pub tick: String,
}

impl Job for PurgeFinishedJobs {
    const KIND: &'static str = "system.purge_finished_jobs";
    const QUEUE: Queue = Queue::System;

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("{}:{}", Self::KIND, self.tick))
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let age = Duration::from_secs(u64::from(self.older_than_days) * 86_400);
        let deleted = domain::job_store::purge_finished(&ctx.pool, age).await?;
        Ok(json!({ "deleted": deleted }))
    }
}
