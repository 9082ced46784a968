//! The one process that runs cron (ARCHITECTURE.md: every process running a cron scheduler fires
//! its schedule, so only this binary does). Each tick enqueues idempotent work: the job's dedupe
//! key names the tick, so two schedulers running by mistake still enqueue one job per tick.
//!
//! Schedules (UTC, with seconds):
//! - `0 0 3 * * *`: purge finished job rows older than `JOB_RETENTION_DAYS` (default 14).
//! - `0 */5 * * * *`: vacuum apalis task data of finished deliveries from Redis.
//! - every `PM_GENERATE_INTERVAL_SECS` (default 900): generate planned-maintenance work orders;
//! - every `ALERT_EVALUATION_INTERVAL_SECS` (default 900): evaluate the stock alerts of every
//!   item (the ticks are the interval's number since the epoch, so every scheduler names them
//!   alike).

use std::{str::FromStr, sync::Arc};

use anyhow::Context as _;
use apalis::prelude::*;
use apalis_core::backend::Vacuum as _;
use apalis_cron::{CronScheduler, Tick};
use apalis_redis::RedisStorage;
use cron::Schedule;
use domain::settings::CoreSettings;
use jobs::{
    Job, JobQueues, Queue, alerts::EvaluateStockAlerts, maintenance::GeneratePlannedWork,
    system::PurgeFinishedJobs,
};
use sqlx::PgPool;
use uuid::Uuid;

struct Scheduler {
    pool: PgPool,
    queues: JobQueues,
    retention_days: u32,
}

async fn purge_tick(tick: Tick, s: Data<Arc<Scheduler>>) -> Result<(), BoxDynError> {
    let job = PurgeFinishedJobs {
        older_than_days: s.retention_days,
        tick: tick.get_timestamp().to_string(),
    };
    let mut tx = s.pool.begin().await?;
    let enqueued = job.enqueue(&mut tx).await?;
    tx.commit().await?;
    s.queues.push(&[enqueued]).await;
    tracing::info!(
        tick = tick.get_timestamp(),
        new = enqueued.inserted,
        "purge of finished jobs enqueued"
    );
    Ok(())
}

/// Enqueues the job `make` builds for each tick every `every`, on tokio's clock, until
/// `shutdown`. The tick is the interval's number since the epoch, so every scheduler names it
/// alike and the job's dedupe key makes one job per tick.
async fn periodically<J: Job>(
    s: Arc<Scheduler>,
    every: std::time::Duration,
    make: impl Fn(String) -> J,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {},
            _ = shutdown.cancelled() => return,
        }
        let tick =
            chrono::Utc::now().timestamp() / i64::try_from(every.as_secs().max(1)).unwrap_or(1);
        let job = make(format!("{}s-{tick}", every.as_secs()));
        let enqueued = async {
            let mut tx = s.pool.begin().await?;
            let enqueued = job.enqueue(&mut tx).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(enqueued)
        }
        .await;
        match enqueued {
            Ok(enqueued) => {
                s.queues.push(&[enqueued]).await;
                tracing::info!(
                    tick,
                    kind = J::KIND,
                    new = enqueued.inserted,
                    "periodic job enqueued"
                );
            }
            Err(error) => {
                tracing::warn!(%error, kind = J::KIND, "periodic job not enqueued; next tick")
            }
        }
    }
}

async fn vacuum_tick(_tick: Tick, s: Data<Arc<Scheduler>>) -> Result<(), BoxDynError> {
    for queue in Queue::ALL {
        let mut storage =
            RedisStorage::<Uuid>::new(s.queues.connection()).with_config(s.queues.config(queue));
        match storage.vacuum().await {
            Ok(n) if n > 0 => tracing::info!(
                queue = queue.name(),
                removed = n,
                "vacuumed finished deliveries"
            ),
            Ok(_) => {}
            Err(error) => tracing::warn!(queue = queue.name(), %error, "vacuum failed"),
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = CoreSettings::from_env()?;
    domain::process::init_logging(settings.log_json);
    let retention_days = match std::env::var("JOB_RETENTION_DAYS") {
        Ok(v) => v
            .trim()
            .parse()
            .context("JOB_RETENTION_DAYS must be a whole number of days")?,
        Err(_) => 14,
    };
    let pool = domain::db::connect(&settings.database_url, 4)
        .await
        .context("DATABASE_URL: cannot connect to Postgres")?;
    let scheduler = Arc::new(Scheduler {
        pool,
        queues: JobQueues::new(&settings.redis_url, &settings.redis_prefix).context("REDIS_URL")?,
        retention_days,
    });
    let shutdown = domain::process::shutdown_token();
    let purge = WorkerBuilder::new("scheduler-purge-finished-jobs")
        .backend(CronScheduler::new(Schedule::from_str("0 0 3 * * *")?))
        .data(scheduler.clone())
        .build(purge_tick);
    let vacuum = WorkerBuilder::new("scheduler-redis-vacuum")
        .backend(CronScheduler::new(Schedule::from_str("0 */5 * * * *")?))
        .data(scheduler.clone())
        .build(vacuum_tick);
    tracing::info!("scheduler started");
    let generation = tokio::spawn(periodically(
        scheduler.clone(),
        settings.planned_maintenance.generate_every,
        |tick| GeneratePlannedWork {
            tick: Some(tick),
            schedule_id: None,
        },
        shutdown.clone(),
    ));
    let alerts = tokio::spawn(periodically(
        scheduler.clone(),
        settings.stock_alerts.evaluate_every,
        |tick| EvaluateStockAlerts {
            item_id: None,
            tick: Some(tick),
        },
        shutdown.clone(),
    ));
    let (a, b) = tokio::join!(
        purge.run_until(until(shutdown.clone())),
        vacuum.run_until(until(shutdown.clone()))
    );
    let _ = generation.await;
    let _ = alerts.await;
    a?;
    b?;
    tracing::info!("scheduler stopped");
    Ok(())
}

async fn until(token: tokio_util::sync::CancellationToken) -> Result<(), std::io::Error> {
    token.cancelled().await;
    Ok(())
}
