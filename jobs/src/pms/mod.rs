//! Queue `pms`: the synchronisation with the property-management system (Hostaway's public API
//! v1), run by `worker-pms`.
//!
//! A sync is a run (`domain::reporting::sync_runs`) that a client triggers (`POST
//! /reporting/sync/trigger`) or the scheduler starts every `PMS_SYNC_INTERVAL_SECS`
//! ([`ScheduleSync`]); [`trigger`] writes the run and its job ([`SyncPms`]) in the caller's
//! transaction, one run at a time. The job reads the PMS through [`PmsClient`] (its token, the
//! request budget every worker shares, retries: [`client`], [`limiter`]) and stores what it
//! reads page by page, resuming where a previous attempt stopped ([`sync`]).

pub mod client;
pub mod limiter;
mod sync;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use domain::reporting::sync_runs::{self, Entity, Started, SyncKind};

pub use client::{PmsClient, PmsError, PmsPage};
pub use limiter::RateLimiter;
pub use sync::MAX_PASSES;

use crate::{Enqueued, Job, JobContext, JobError, Queue};

/// Who the runs the scheduler starts name as their trigger.
pub const SCHEDULER: &str = "scheduler";

/// Runs (or resumes) one sync run. Idempotent: records are upserted by PMS id, and a run that is
/// already finished is left alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncPms {
    pub sync_id: Uuid,
}

impl Job for SyncPms {
    const KIND: &'static str = "pms.sync";
    const QUEUE: Queue = Queue::Pms;
    const MAX_ATTEMPTS: i32 = 5;

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("{}:{}", Self::KIND, self.sync_id))
    }

    /// The failed run is run again (`sync_runs::reopen`), unless another is going.
    async fn reopen(&self, conn: &mut sqlx::PgConnection) -> Result<(), domain::Error> {
        domain::reporting::sync_runs::reopen(conn, self.sync_id).await
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        sync::run(self.sync_id, &ctx).await
    }
}

/// Starts an incremental sync of the listings and the reservations, if the PMS is configured and
/// no sync is running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleSync {
    /// The scheduler tick (one job per tick, however many schedulers fire).
    pub tick: String,
}

/// The scheduler starts a sync every `PMS_SYNC_INTERVAL_SECS`.
impl crate::Periodic for ScheduleSync {
    const INTERVAL_SETTING: &'static str = "PMS_SYNC_INTERVAL_SECS";
    const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(900);

    fn for_tick(tick: String) -> Self {
        Self { tick }
    }
}

impl Job for ScheduleSync {
    const KIND: &'static str = "pms.schedule_sync";
    const QUEUE: Queue = Queue::Pms;

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("{}:tick:{}", Self::KIND, self.tick))
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        if !ctx.services.pms.is_configured() {
            return Ok(json!({"skipped": "PMS not configured", "tick": self.tick}));
        }
        let mut tx = ctx.pool.begin().await?;
        let triggered = trigger(&mut tx, SyncKind::Incremental, &Entity::ALL, SCHEDULER).await?;
        tx.commit().await?;
        if let Some(enqueued) = triggered.enqueued {
            ctx.services.queues.push(&[enqueued]).await;
        }
        let (new, run) = match &triggered.started {
            Started::New(run) => (true, run),
            Started::AlreadyActive(run) => (false, run),
        };
        Ok(json!({
            "tick": self.tick,
            "syncId": run.id,
            "new": new,
            "status": run.status,
        }))
    }
}

/// What [`trigger`] did.
#[derive(Debug, Clone)]
pub struct Trigger {
    /// The new run, or the active one (nothing written then).
    pub started: Started,
    /// The new run's job: push it once the caller's transaction has committed.
    pub enqueued: Option<Enqueued>,
}

/// Starts a sync run of `kind` over `entities` in the caller's transaction and enqueues its job,
/// unless a run is active: then that run is answered and nothing is written. `by` is who
/// triggered it (a token subject, or [`SCHEDULER`]).
pub async fn trigger(
    conn: &mut PgConnection,
    kind: SyncKind,
    entities: &[Entity],
    by: &str,
) -> Result<Trigger, domain::Error> {
    let started = sync_runs::start(conn, kind, entities, by).await?;
    let enqueued = match &started {
        Started::New(run) => {
            let enqueued = SyncPms { sync_id: run.id }.enqueue(conn).await?;
            // A new run's id is new: its dedupe key cannot be taken, so the job row exists.
            if enqueued.inserted {
                sync_runs::attach_job(conn, run.id, enqueued.id).await?;
            }
            Some(enqueued)
        }
        Started::AlreadyActive(_) => None,
    };
    Ok(Trigger { started, enqueued })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Periodic;

    #[test]
    fn one_job_per_run_and_per_tick() {
        let id = Uuid::nil();
        assert_eq!(
            SyncPms { sync_id: id }.dedupe_key().as_deref(),
            Some("pms.sync:00000000-0000-0000-0000-000000000000")
        );
        assert_eq!(
            ScheduleSync::for_tick("900s-1".to_owned())
                .dedupe_key()
                .as_deref(),
            Some("pms.schedule_sync:tick:900s-1")
        );
        assert_eq!(
            serde_json::to_value(SyncPms { sync_id: id }).unwrap(),
            json!({"syncId": "00000000-0000-0000-0000-000000000000"})
        );
        assert_eq!(ScheduleSync::INTERVAL_SETTING, "PMS_SYNC_INTERVAL_SECS");
    }
}
