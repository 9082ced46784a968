//! The one process that runs cron (ARCHITECTURE.md: every process running a cron scheduler fires
//! its schedule, so only this binary does). It runs one table, [`table`]: each entry says when it
//! fires and what it does at a tick, and runs in a loop of its own. What a tick enqueues is
//! idempotent: the job's dedupe key names the tick and every scheduler names a tick alike, so two
//! schedulers running by mistake still enqueue one job per tick.
//!
//! The table:
//! - each periodic job (`jobs::Periodic`, declared beside the job with the setting of its
//!   interval), every that many seconds from start: planned-maintenance generation
//!   (`PM_GENERATE_INTERVAL_SECS`, default 900), the turnover work orders of the stays on the
//!   books (`TURNOVER_INTERVAL_SECS`, default 900), the stock alerts of every item
//!   (`ALERT_EVALUATION_INTERVAL_SECS`, default 900), the incremental PMS sync
//!   (`PMS_SYNC_INTERVAL_SECS`, default 900; nothing while the PMS is not configured) and the
//!   removal of expired reporting exports (`EXPORT_EXPIRY_INTERVAL_SECS`, default 3600). A tick
//!   is the interval's number since the epoch.
//! - `0 0 3 * * *` (cron, UTC, with seconds): purge finished job rows older than
//!   `JOB_RETENTION_DAYS` (default 14). Its line is written here rather than derived from the
//!   job: it runs at a time of day, not at an interval, and its payload carries that scheduler
//!   setting. A tick is the time's Unix timestamp.
//! - `0 */5 * * * *`: vacuum apalis task data of finished deliveries from Redis (the scheduler's
//!   own work, not a job).
//!
//! It serves its metrics on `METRICS_PORT` when that is set (`workers::metrics`).
//!
//! Every entry waits on tokio's clock. apalis-cron's `CronScheduler` waits with `futures-timer`,
//! whose one helper thread was seen stalled in workers (`workers::runtime`): the purge and the
//! vacuum would then stop without a word.

use std::{sync::Arc, time::Duration};

use anyhow::Context as _;
use apalis_core::backend::Vacuum as _;
use apalis_redis::RedisStorage;
use chrono::Utc;
use domain::settings::{CoreSettings, Lookup, SettingsError};
use futures::future::BoxFuture;
use jobs::{
    Job, JobQueues, Periodic, Queue, alerts::EvaluateStockAlerts, maintenance::GeneratePlannedWork,
    system::PurgeFinishedJobs,
};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// What the table's entries reach.
struct Scheduler {
    pool: PgPool,
    queues: JobQueues,
}

/// Everything the scheduler runs. A new periodic job is one line in `periodic_jobs`. Every
/// malformed interval setting is named in one error, so the process refuses to start.
fn table(lookup: Lookup<'_>, retention_days: u32) -> anyhow::Result<Vec<Entry>> {
    let periodic_jobs = [
        periodic::<GeneratePlannedWork>(lookup),
        periodic::<jobs::maintenance::GenerateTurnovers>(lookup),
        periodic::<EvaluateStockAlerts>(lookup),
        periodic::<jobs::pms::ScheduleSync>(lookup),
        periodic::<jobs::exports::ExpireExports>(lookup),
    ];
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    for entry in periodic_jobs {
        match entry {
            Ok(entry) => entries.push(entry),
            Err(SettingsError(found)) => problems.extend(found),
        }
    }
    if !problems.is_empty() {
        return Err(SettingsError(problems).into());
    }
    let purge = move |tick: String| PurgeFinishedJobs {
        older_than_days: retention_days,
        tick,
    };
    entries.push(Entry::job(Ticker::cron("0 0 3 * * *")?, purge));
    entries.push(Entry {
        name: "redis vacuum",
        ticker: Ticker::cron("0 */5 * * * *")?,
        action: Box::new(
            |s: Arc<Scheduler>, _tick: String| -> BoxFuture<'static, ()> { Box::pin(vacuum(s)) },
        ),
    });
    Ok(entries)
}

/// The entry of a periodic job: every `J::INTERVAL_SETTING` seconds, read where the job
/// declares it.
fn periodic<J: Periodic>(lookup: Lookup<'_>) -> Result<Entry, SettingsError> {
    let key = |tick: &str| J::for_tick(tick.to_owned()).dedupe_key();
    assert!(
        key("1s-1").is_some() && key("1s-1") != key("1s-2"),
        "{}: the dedupe key of a periodic job must name its tick (one job per tick)",
        J::KIND
    );
    Ok(Entry::job(Ticker::Every(J::interval(lookup)?), J::for_tick))
}

/// What an entry does at a tick, given the tick's name.
type Action = Box<dyn Fn(Arc<Scheduler>, String) -> BoxFuture<'static, ()> + Send + Sync>;

/// One line of the table.
struct Entry {
    /// What the logs call it: the job's kind, or the scheduler's own work.
    name: &'static str,
    ticker: Ticker,
    action: Action,
}

impl Entry {
    /// Enqueues the job `make` builds for each tick.
    fn job<J: Job>(ticker: Ticker, make: impl Fn(String) -> J + Send + Sync + 'static) -> Self {
        Entry {
            name: J::KIND,
            ticker,
            action: Box::new(
                move |s: Arc<Scheduler>, tick: String| -> BoxFuture<'static, ()> {
                    let job = make(tick.clone());
                    Box::pin(enqueue(s, job, tick))
                },
            ),
        }
    }
}

/// When an entry fires.
enum Ticker {
    /// Every this long, the first time at start.
    Every(Duration),
    /// At each time of a cron schedule (UTC, with seconds).
    Cron(Box<cron::Schedule>),
}

/// How long a wait for a cron time sleeps before it looks at the wall clock again, so that a
/// clock set forward or back (NTP, a resumed machine) moves the tick with it.
const CRON_RECHECK: Duration = Duration::from_secs(60);

impl Ticker {
    fn cron(expression: &str) -> anyhow::Result<Self> {
        let schedule = expression
            .parse::<cron::Schedule>()
            .with_context(|| format!("cron expression {expression:?}"))?;
        Ok(Ticker::Cron(Box::new(schedule)))
    }

    fn describe(&self) -> String {
        match self {
            Ticker::Every(every) => format!("every {}s", every.as_secs()),
            Ticker::Cron(schedule) => format!("cron {}", schedule.source()),
        }
    }
}

/// Runs `entry` at each of its ticks until `shutdown`; answers the entry's name. A tick's name is
/// the same in every scheduler process: the interval's number since the epoch (`900s-1950000`),
/// or the cron time's Unix timestamp.
async fn run(s: Arc<Scheduler>, entry: Entry, shutdown: CancellationToken) -> &'static str {
    let Entry {
        name,
        ticker,
        action,
    } = entry;
    match ticker {
        Ticker::Every(every) => {
            let secs = every.as_secs().max(1);
            let mut ticks = tokio::time::interval(Duration::from_secs(secs));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {},
                    _ = shutdown.cancelled() => return name,
                }
                let n = Utc::now().timestamp() / i64::try_from(secs).unwrap_or(i64::MAX);
                action(s.clone(), format!("{secs}s-{n}")).await;
            }
        }
        Ticker::Cron(schedule) => {
            let mut after = Utc::now();
            loop {
                let Some(at) = schedule.after(&after).next() else {
                    tracing::error!(entry = name, "the cron schedule has no further time");
                    return name;
                };
                loop {
                    let left = (at - Utc::now()).to_std().unwrap_or_default();
                    if left.is_zero() {
                        break;
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(left.min(CRON_RECHECK)) => {},
                        _ = shutdown.cancelled() => return name,
                    }
                }
                action(s.clone(), at.timestamp().to_string()).await;
                after = at.max(Utc::now());
            }
        }
    }
}

/// Enqueues one tick's job and pushes it; a failure is logged and the next tick tries again.
async fn enqueue<J: Job>(s: Arc<Scheduler>, job: J, tick: String) {
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
                %tick,
                kind = J::KIND,
                new = enqueued.inserted,
                "periodic job enqueued"
            );
        }
        Err(error) => {
            tracing::warn!(%error, %tick, kind = J::KIND, "periodic job not enqueued; next tick")
        }
    }
}

/// Removes the task data of finished deliveries from Redis, queue by queue.
async fn vacuum(s: Arc<Scheduler>) {
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
    let lookup = |name: &str| std::env::var(name).ok();
    let entries = table(&lookup, retention_days)?;
    let pool = domain::db::connect(&settings.database_url, 4)
        .await
        .context("DATABASE_URL: cannot connect to Postgres")?;
    let shutdown = domain::process::shutdown_token();
    // A port that cannot be bound stops the process at start, like a malformed setting.
    workers::metrics::spawn(&settings, pool.clone(), shutdown.clone()).await?;
    let scheduler = Arc::new(Scheduler {
        pool,
        queues: JobQueues::new(&settings.redis_url, &settings.redis_prefix).context("REDIS_URL")?,
    });
    let mut running = tokio::task::JoinSet::new();
    for entry in entries {
        tracing::info!(
            entry = entry.name,
            when = %entry.ticker.describe(),
            "scheduled"
        );
        running.spawn(run(scheduler.clone(), entry, shutdown.clone()));
    }
    tracing::info!("scheduler started");
    while let Some(ended) = running.join_next().await {
        if shutdown.is_cancelled() {
            continue;
        }
        // An entry's loop ends only at shutdown; one that ended otherwise (a panic) would
        // silently stop its work, so the process exits non-zero and its supervisor restarts it.
        let what = match ended {
            Ok(name) => format!("the loop of {name} ended"),
            Err(error) => format!("a loop failed: {error}"),
        };
        shutdown.cancel();
        running.shutdown().await;
        anyhow::bail!("scheduler stopping: {what}");
    }
    tracing::info!("scheduler stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unset(_: &str) -> Option<String> {
        None
    }

    fn generation_every_minute(name: &str) -> Option<String> {
        match name {
            "PM_GENERATE_INTERVAL_SECS" => Some("60".to_owned()),
            _ => None,
        }
    }

    fn malformed_intervals(name: &str) -> Option<String> {
        if name.ends_with("_INTERVAL_SECS") {
            Some("soon".to_owned())
        } else {
            None
        }
    }

    /// The table holds every periodic job, the purge and the vacuum, with the default intervals
    /// when nothing is set.
    #[test]
    fn the_table_runs_each_periodic_job_at_its_declared_interval() {
        let entries = table(&unset, 14).unwrap();
        let found = |name: &str| {
            entries
                .iter()
                .find(|e| e.name == name)
                .map(|e| e.ticker.describe())
        };
        assert_eq!(
            found(GeneratePlannedWork::KIND).as_deref(),
            Some("every 900s")
        );
        assert_eq!(
            found(jobs::maintenance::GenerateTurnovers::KIND).as_deref(),
            Some("every 900s")
        );
        assert_eq!(
            found(EvaluateStockAlerts::KIND).as_deref(),
            Some("every 900s")
        );
        assert_eq!(
            found(jobs::pms::ScheduleSync::KIND).as_deref(),
            Some("every 900s")
        );
        assert_eq!(
            found(jobs::exports::ExpireExports::KIND).as_deref(),
            Some("every 3600s")
        );
        assert_eq!(
            found(PurgeFinishedJobs::KIND).as_deref(),
            Some("cron 0 0 3 * * *")
        );
        assert_eq!(found("redis vacuum").as_deref(), Some("cron 0 */5 * * * *"));

        let entries = table(&generation_every_minute, 14).unwrap();
        let generation = entries
            .iter()
            .find(|e| e.name == GeneratePlannedWork::KIND)
            .unwrap();
        assert_eq!(generation.ticker.describe(), "every 60s");
    }

    /// A malformed interval stops the start, naming every variable at fault.
    #[test]
    fn malformed_intervals_are_all_named() {
        let Err(err) = table(&malformed_intervals, 14) else {
            panic!("malformed intervals were accepted");
        };
        let err = err.to_string();
        for var in [
            GeneratePlannedWork::INTERVAL_SETTING,
            jobs::maintenance::GenerateTurnovers::INTERVAL_SETTING,
            EvaluateStockAlerts::INTERVAL_SETTING,
            jobs::pms::ScheduleSync::INTERVAL_SETTING,
            jobs::exports::ExpireExports::INTERVAL_SETTING,
        ] {
            assert!(
                err.contains(&format!("{var} must be a whole number of seconds")),
                "{var} not named in: {err}"
            );
        }
    }
}
