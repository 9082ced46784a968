//! The worker side of the job pipeline.
//!
//! - **Consumers**: per queue, an apalis worker over the Redis queue, fetching up to
//!   `WORKER_CLAIM_BATCH` deliveries at once. Each delivery carries a job id; the consumer claims
//!   the row (in the process's next claim batch, a conditional update, so duplicates are
//!   no-ops), runs the kind's handler and hands its end (SUCCEEDED, a retry with backoff, FAILED)
//!   to the process's end writer, which records ends in batches ([`crate::batching`]).
//!   Deliveries always end `Ok` for apalis: the outcome lives in Postgres, and apalis's own
//!   retries (25 by default) would only duplicate ours.
//! - **Dispatcher**: pushes rows that need it (never pushed, retry due, pushed but not claimed
//!   after `redispatch_after` while Redis holds no backlog) and requeues jobs whose lease expired
//!   because their worker died.
//! - **Lease keeper** ([`crate::batching`]): renews the leases of the runs this process claimed
//!   and has not ended.
//! - **Supervisor**: a consumer that stops on a Redis error (Redis restarted, unreachable) is
//!   built again after a backoff, so the process outlives Redis outages.
//! - **Polling on tokio's clock, and a watchdog**: apalis wakes an idle consumer with timers of
//!   `futures-timer`, whose one global helper thread was seen parked for good while the process
//!   lived on: the consumer then never asked Redis for work again and stopped heartbeating (300 s
//!   later another worker's heartbeat dropped its registration, hence "worker not registered" at
//!   SIGTERM; the scheduler's vacuum only deletes finished tasks' data). So consumers are woken
//!   by a tokio interval ([`TokioPoll`]), which also records each time the consumer asks for
//!   work. A watchdog on tokio's clock rebuilds a consumer that has not asked for `lease / 2`
//!   while it had free slots and Redis answered, and if the rebuilt one does not ask either,
//!   [`run`] ends with [`Stalled`] so the process exits non-zero and its supervisor restarts it:
//!   within `JOB_LEASE_SECS` either way.
//! - **Shutdown**: on the token, consumers stop taking work, in-flight jobs get
//!   `shutdown_grace` to finish, the ends handed over are written, and what is still running is
//!   handed back to the queue.
//! - **Observability**: each run is logged inside a span naming the job, its queue and the
//!   request that enqueued it, and is counted in the job metrics (`domain::metrics::names`).

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use apalis::prelude::*;
use apalis_redis::RedisStorage;
use domain::{
    job_store::{self, RunEnd},
    metrics::names,
    settings::JobSettings,
};
use futures::future::join_all;
use jobs::{JobContext, JobQueues, JobRegistry, JobServices, Queue};
use metrics::{counter, histogram};
use sqlx::PgPool;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use crate::batching::{Batching, Claims, Ended, Ends};

/// Everything a delivery needs, shared by the consumers of one process.
pub struct Runtime {
    pub pool: PgPool,
    pub services: Arc<JobServices>,
    pub queues: JobQueues,
    pub registry: JobRegistry,
    pub settings: JobSettings,
    /// Unique per process: the lease owner written in `jobs.locked_by` and the apalis worker name.
    pub name: Arc<str>,
}

/// How often the dispatcher looks for rows to push and leases to reap.
const DISPATCH_EVERY: Duration = Duration::from_millis(500);
/// A row pushed this long ago is pushed again even while Redis reports a backlog.
const REDISPATCH_DESPITE_BACKLOG: Duration = Duration::from_secs(60);

/// Builds the runtime of a worker binary from its settings and runs it until SIGTERM/SIGINT.
pub async fn main(family: &str, registry: JobRegistry) -> anyhow::Result<()> {
    main_claiming(family, registry, None).await
}

/// [`main`] for a family whose jobs are heavy: without `WORKER_CONCURRENCY` set, the process
/// claims at most `default_concurrency` jobs at once (not the platform's default), so that work
/// it could not start yet stays queued for another replica.
pub async fn main_claiming(
    family: &str,
    registry: JobRegistry,
    default_concurrency: Option<usize>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let mut settings = domain::settings::CoreSettings::from_env()?;
    if let Some(default) = default_concurrency
        && std::env::var_os("WORKER_CONCURRENCY").is_none()
    {
        settings.jobs.concurrency = default;
    }
    domain::process::init_logging(settings.log_json);
    let pool = domain::db::connect(&settings.database_url, settings.db_max_connections)
        .await
        .context("DATABASE_URL: cannot connect to Postgres")?;
    let shutdown = domain::process::shutdown_token();
    // A port that cannot be bound stops the process at start, like a malformed setting.
    crate::metrics::spawn(&settings, pool.clone(), shutdown.clone()).await?;
    let rt = Arc::new(Runtime {
        pool,
        services: Arc::new(JobServices::from_settings(&settings)),
        queues: JobQueues::new(&settings.redis_url, &settings.redis_prefix).context("REDIS_URL")?,
        registry,
        settings: settings.jobs.clone(),
        name: process_name(family).into(),
    });
    // A stalled consumer or a stopped batcher ends the process with an error: exit status 1,
    // and its supervisor (Procfile runner, compose's restart policy, Kubernetes) starts a fresh
    // one.
    run(rt, shutdown).await?;
    Ok(())
}

/// A consumer asked for no work for too long, even after it was rebuilt.
#[derive(Debug, thiserror::Error)]
#[error(
    "the consumer of queue `{queue}` stopped asking for work ({idle:?} idle with free slots while Redis answered), even after it was rebuilt"
)]
pub struct Stalled {
    pub queue: &'static str,
    pub idle: Duration,
}

pub fn process_name(family: &str) -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".to_owned());
    let nonce = &Uuid::new_v4().simple().to_string()[..8];
    format!("{family}-{host}-{}-{nonce}", std::process::id())
}

/// Why a worker ended before it was told to: it cannot take work any more.
#[derive(Debug, thiserror::Error)]
pub enum WorkerFailure {
    #[error(transparent)]
    Stalled(#[from] Stalled),
    #[error("a batcher of the job pipeline (claims, ends or leases) stopped; see the error before")]
    BatchersStopped,
}

/// Runs the worker until `shutdown` is cancelled, then drains as described in the module docs.
/// Ends early, after the same drain, with [`WorkerFailure`] when a consumer stalls for good or
/// a batcher stops.
pub async fn run(rt: Arc<Runtime>, shutdown: CancellationToken) -> Result<(), WorkerFailure> {
    let queues = rt.registry.queues();
    tracing::info!(worker = %rt.name, queues = ?queues.iter().map(|q| q.name()).collect::<Vec<_>>(), "worker starting");

    // Claims, ends and leases of runs go through the process's batchers; they outlive the
    // consumers' drain, so that every end of a run that finished is written (and every run
    // still going renewed) until the hand-back.
    let batching = Batching::start(&rt.pool, rt.name.clone(), &rt.settings);
    // Cancelled by the shutdown signal, by a consumer that stalled for good, or by a batcher
    // that stopped.
    let stop = shutdown.child_token();
    let batchers_failed = batching.failed();
    tokio::spawn({
        let (failed, stop) = (batchers_failed.clone(), stop.clone());
        async move {
            tokio::select! {
                _ = failed.cancelled() => stop.cancel(),
                _ = stop.cancelled() => {}
            }
        }
    });
    let dispatcher = tokio::spawn(dispatcher(rt.clone(), queues.clone(), stop.clone()));
    let consumers: Vec<JoinHandle<Result<(), Stalled>>> = queues
        .iter()
        .map(|&q| {
            let (rt, stop) = (rt.clone(), stop.clone());
            let consumer = Arc::new(Consumer {
                rt: rt.clone(),
                health: Health::new(),
                claims: batching.claims.clone(),
                ends: batching.ends.clone(),
            });
            tokio::spawn(async move {
                let outcome = supervise_consumer(consumer, q, stop.clone()).await;
                if outcome.is_err() {
                    stop.cancel();
                }
                outcome
            })
        })
        .collect();

    stop.cancelled().await;
    let grace = rt.settings.shutdown_grace;
    let mut stalled = None;
    match tokio::time::timeout(grace, join_all(consumers)).await {
        Ok(outcomes) => {
            stalled = outcomes
                .into_iter()
                .find_map(|o| o.ok().and_then(Result::err));
        }
        Err(_) => tracing::warn!(
            ?grace,
            "in-flight jobs did not finish within the grace period"
        ),
    }
    let batchers_stopped = batchers_failed.is_cancelled();
    batching.close().await;
    let _ = dispatcher.await;
    match job_store::hand_back(&rt.pool, &rt.name).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(count = n, "handed unfinished jobs back to the queue"),
        Err(error) => tracing::error!(%error, "hand back failed; leases will expire instead"),
    }
    let failure = match stalled {
        Some(stalled) => WorkerFailure::Stalled(stalled),
        None if batchers_stopped => WorkerFailure::BatchersStopped,
        None => {
            tracing::info!(worker = %rt.name, "worker stopped");
            return Ok(());
        }
    };
    tracing::error!(worker = %rt.name, %failure, "worker stopping: it cannot take work");
    Err(failure)
}

/// What the deliveries of one queue's consumer need.
struct Consumer {
    rt: Arc<Runtime>,
    health: Health,
    claims: Claims,
    ends: Ends,
}

/// What the watchdog of a consumer reads.
struct Health {
    /// Deliveries being processed: a consumer with every slot busy rightly asks for nothing.
    in_flight: AtomicUsize,
    /// When the consumer last asked its backend for work.
    asked: Liveness,
}

impl Health {
    fn new() -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            asked: Liveness::new(),
        }
    }
}

/// A moment on tokio's clock, shared between threads: milliseconds since `epoch`.
#[derive(Clone)]
struct Liveness {
    epoch: tokio::time::Instant,
    last_ms: Arc<AtomicU64>,
}

impl Liveness {
    fn new() -> Self {
        Self {
            epoch: tokio::time::Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    fn touch(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.fetch_max(ms, Ordering::Relaxed);
    }

    fn idle_for(&self) -> Duration {
        self.epoch
            .elapsed()
            .saturating_sub(Duration::from_millis(self.last_ms.load(Ordering::Relaxed)))
    }
}

/// apalis's poll strategy on tokio's clock: wakes the consumer every `poll_interval` (ticks
/// missed while busy are not made up), and records each time the consumer asks for work.
pub struct TokioPoll {
    interval: tokio::time::Interval,
    asked: Liveness,
}

impl TokioPoll {
    fn new(every: Duration, asked: Liveness) -> Self {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Self { interval, asked }
    }
}

impl PollStrategy for TokioPoll {
    fn poll_drive(&mut self, cx: &mut Context<'_>, _: &PollSnapshot) -> Poll<Option<()>> {
        self.asked.touch();
        // Consume the ticks that are due, so that the last poll registers the waker for the
        // next one. apalis polls the backend after this whatever it answers.
        while self.interval.poll_tick(cx).is_ready() {}
        Poll::Pending
    }
}

/// Completes when the consumer has not asked for work for `stall_after` while it had a free
/// slot and Redis answered (a consumer waiting on an unreachable Redis is not stalled: it ends on
/// its own with an error and is rebuilt). Checks on tokio's clock, once a second; answers how
/// long the consumer had been idle.
async fn watchdog(
    consumer: &Health,
    concurrency: usize,
    stall_after: Duration,
    queues: &JobQueues,
) -> Duration {
    let mut every = tokio::time::interval(Duration::from_secs(1).min(stall_after / 2));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let idle = consumer.asked.idle_for();
        if idle < stall_after || consumer.in_flight.load(Ordering::Relaxed) >= concurrency {
            continue;
        }
        if tokio::time::timeout(Duration::from_secs(2), queues.ping())
            .await
            .is_ok_and(|r| r.is_ok())
        {
            return consumer.asked.idle_for();
        }
    }
}

/// Builds the apalis worker of `queue` again whenever it ends with an error (with backoff) or
/// stalls (at once). Two stalls in a row, with no work asked for in between, are [`Stalled`].
async fn supervise_consumer(
    consumer: Arc<Consumer>,
    queue: Queue,
    shutdown: CancellationToken,
) -> Result<(), Stalled> {
    let rt = consumer.rt.clone();
    let mut generation = 0u32;
    let mut backoff = Duration::from_millis(200);
    let stall_after = (rt.settings.lease / 2).max(Duration::from_secs(2));
    // One Redis fetch brings what one claim takes.
    let fetch_batch = rt
        .settings
        .claim_batch
        .clamp(1, rt.settings.concurrency.max(1));
    let mut stalled_before = false;
    while !shutdown.is_cancelled() {
        generation += 1;
        let started = tokio::time::Instant::now();
        consumer.health.asked.touch();
        let storage = RedisStorage::<Uuid>::new(rt.queues.connection())
            .with_config(rt.queues.config(queue).batch_size(fetch_batch))
            .poll_with_strategy(TokioPoll::new(
                rt.settings.poll_interval,
                consumer.health.asked.clone(),
            ));
        let stop = shutdown.clone();
        let worker = WorkerBuilder::new(format!("{}-{}-{generation}", rt.name, queue.name()))
            .backend(storage)
            .data(consumer.clone())
            .concurrency(rt.settings.concurrency)
            .build(deliver);
        let outcome = tokio::select! {
            outcome = worker.run_until(async move {
                stop.cancelled().await;
                Ok::<(), std::io::Error>(())
            }) => outcome,
            idle = watchdog(&consumer.health, rt.settings.concurrency, stall_after, &rt.queues) => {
                // The worker's future is dropped here; deliveries it started run on in their
                // own tasks and record their outcome.
                if stalled_before {
                    return Err(Stalled { queue: queue.name(), idle });
                }
                stalled_before = true;
                tracing::error!(queue = queue.name(), ?idle,
                    "consumer stopped asking for work with free slots; starting it again");
                continue;
            }
        };
        stalled_before = false;
        if shutdown.is_cancelled() {
            break;
        }
        match outcome {
            Ok(()) => tracing::warn!(queue = queue.name(), "consumer ended; starting it again"),
            Err(error) => tracing::warn!(queue = queue.name(), %error, ?backoff,
                "consumer stopped (Redis unavailable?); starting it again"),
        }
        if started.elapsed() > Duration::from_secs(30) {
            backoff = Duration::from_millis(200);
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {},
            _ = shutdown.cancelled() => break,
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
    Ok(())
}

/// One delivery from Redis: claim, run, record. The work runs in a task of its own, so that it
/// finishes and records its outcome even when the watchdog drops the consumer that fetched it.
async fn deliver(job_id: Uuid, consumer: Data<Arc<Consumer>>) -> Result<(), BoxDynError> {
    let consumer = Arc::clone(&consumer);
    consumer.health.in_flight.fetch_add(1, Ordering::Relaxed);
    let work = tokio::spawn(async move {
        process(&consumer, job_id).await;
        consumer.health.in_flight.fetch_sub(1, Ordering::Relaxed);
    });
    let _ = work.await;
    Ok(())
}

/// Claims (in the process's next claim batch), runs and hands over the end of one job.
async fn process(consumer: &Consumer, job_id: Uuid) {
    let rt = &consumer.rt;
    let Some(claimed) = consumer.claims.claim(job_id).await else {
        tracing::debug!(%job_id, "delivery skipped: job not claimable (duplicate, taken or not due)");
        return;
    };
    // Taken apart: the payload goes to the handler, the rest names the run.
    let job_store::ClaimedJob {
        kind,
        payload,
        attempts,
        max_attempts,
        queue,
        request_id,
        waited_secs,
        ..
    } = claimed;
    histogram!(names::JOB_QUEUE_WAIT, "queue" => queue.clone(), "kind" => kind.clone())
        .record(waited_secs.max(0.0));
    // At ERROR level so that the lines of the run carry its fields whatever the log filter: a
    // span whose level is filtered out is never entered (api::http::log_requests says more).
    let span = tracing::error_span!(
        "job",
        job_id = %job_id,
        kind = %kind,
        queue = %queue,
        request_id = request_id.as_deref().unwrap_or("")
    );
    let ctx = JobContext {
        pool: rt.pool.clone(),
        services: rt.services.clone(),
        job_id,
        attempt: attempts,
        max_attempts,
        worker: rt.name.clone(),
    };
    let started = std::time::Instant::now();
    // The handler runs in a task of its own, which does not inherit the caller's span. It runs
    // as the work of the enqueuing request too, so that jobs it enqueues in turn carry the id.
    let handler = domain::trace::with_request_id(
        request_id.clone().unwrap_or_default(),
        rt.registry.run(&kind, payload, ctx),
    )
    .instrument(span.clone());
    // A panicking handler is a failed run, not a dead worker.
    let outcome = tokio::spawn(handler).await.unwrap_or_else(|join_error| {
        Err(jobs::JobError::retry(format!(
            "handler panicked: {join_error}"
        )))
    });
    let elapsed = started.elapsed();
    let elapsed_ms = elapsed.as_millis() as u64;
    histogram!(names::JOB_RUN_DURATION, "queue" => queue.clone(), "kind" => kind.clone())
        .record(elapsed.as_secs_f64());
    let (ended, end) = {
        let _entered = span.enter();
        match outcome {
            Ok(result) => {
                tracing::info!(attempt = attempts, elapsed_ms, "job succeeded");
                ("succeeded", RunEnd::Succeeded(result))
            }
            Err(error) if error.wait.is_some() => {
                tracing::debug!(reason = %error.message, "job waits");
                let after = error.wait.unwrap_or_default();
                let reason = error.message;
                ("postponed", RunEnd::Postponed { reason, after })
            }
            Err(error) => {
                let retry_in = (error.retryable && attempts < max_attempts)
                    .then(|| jobs::backoff(rt.registry.backoff_base(&kind), attempts));
                tracing::warn!(attempt = attempts, max_attempts,
                    error = %error.message, ?retry_in, elapsed_ms, "job failed");
                let ended = if retry_in.is_some() {
                    "retried"
                } else {
                    "failed"
                };
                let error = error.message;
                (ended, RunEnd::Failed { error, retry_in })
            }
        }
    };
    // Counted as the run ended, whether or not its end gets recorded: a run whose lease was lost
    // still did (or failed) its work, and the row's next run is counted on its own.
    counter!(names::JOBS_FINISHED, "queue" => queue, "kind" => kind, "outcome" => ended)
        .increment(1);
    let handed_over = consumer
        .ends
        .hand_over(Ended {
            end: job_store::EndOfRun {
                id: job_id,
                attempt: attempts,
                end,
            },
            span: span.clone(),
        })
        .await;
    if !handed_over {
        crate::batching::unrecorded("stopping");
        // The worker is stopping and its last ends are written: the hand-back requeues this job
        // (or its lease expires), and it runs again; handlers are idempotent.
        span.in_scope(|| tracing::warn!("outcome not recorded: the worker is stopping"));
    }
}

async fn dispatcher(rt: Arc<Runtime>, queues: Vec<Queue>, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(DISPATCH_EVERY) => {},
            _ = shutdown.cancelled() => return,
        }
        if let Err(error) = dispatch_once(&rt, &queues).await {
            tracing::warn!(%error, "dispatch round failed");
        }
    }
}

/// One dispatcher round; public so tests can drive it deterministically.
pub async fn dispatch_once(rt: &Runtime, queues: &[Queue]) -> anyhow::Result<usize> {
    let reaped = job_store::reap_expired_leases(&rt.pool).await?;
    if reaped > 0 {
        tracing::warn!(
            count = reaped,
            "requeued jobs whose worker stopped renewing its lease"
        );
    }
    let mut pushed = 0;
    for &queue in queues {
        // A backlog left in apalis's scheduled set (pushed by a process older than the fix, or
        // whose promotion failed) would fail every fetch once past ~8,000: move it over first.
        if let Err(error) = rt.queues.promote_scheduled(queue).await {
            tracing::warn!(queue = queue.name(), %error, "moving scheduled deliveries failed");
            continue;
        }
        // While Redis holds a backlog, a row pushed a few seconds ago is most likely still in
        // it; pushing it again would only add duplicates. Redis that lost its data has none.
        let stale_after = match rt.queues.backlog(queue).await {
            Ok(0) => rt.settings.redispatch_after,
            Ok(_) => REDISPATCH_DESPITE_BACKLOG,
            Err(_) => continue, // Redis unreachable: nothing can be pushed this round
        };
        loop {
            let due =
                job_store::take_for_dispatch(&rt.pool, &[queue.name()], stale_after, 500).await?;
            if due.is_empty() {
                break;
            }
            let ids: Vec<Uuid> = due.iter().map(|(id, _)| *id).collect();
            if let Err(error) = rt.queues.push_ids(queue, &ids).await {
                job_store::unmark_pushed(&rt.pool, &ids).await?;
                return Err(error.into());
            }
            pushed += ids.len();
            if ids.len() < 500 {
                break;
            }
        }
    }
    if pushed > 0 {
        tracing::info!(count = pushed, "dispatcher pushed jobs");
    }
    Ok(pushed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queues() -> JobQueues {
        let url =
            std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
        JobQueues::new(&url, "watchdog-test").unwrap()
    }

    /// A consumer that stops asking for work with free slots is reported once `stall_after`
    /// has passed, not before.
    #[tokio::test]
    async fn a_consumer_that_stops_asking_is_reported() {
        let health = Health::new();
        health.asked.touch();
        let started = tokio::time::Instant::now();
        let idle = watchdog(&health, 4, Duration::from_secs(2), &queues()).await;
        assert!(idle >= Duration::from_secs(2), "{idle:?}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
    }

    /// A consumer that asks, or whose every slot is busy, is left alone.
    #[tokio::test]
    async fn a_consumer_that_asks_or_is_saturated_is_not_stalled() {
        let asking = Health::new();
        let toucher = asking.asked.clone();
        let touching = tokio::spawn(async move {
            loop {
                toucher.touch();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let queues = self::queues();
        let watched = watchdog(&asking, 4, Duration::from_secs(1), &queues);
        assert!(
            tokio::time::timeout(Duration::from_secs(3), watched)
                .await
                .is_err()
        );
        touching.abort();

        let saturated = Health::new();
        saturated.in_flight.store(4, Ordering::Relaxed);
        let watched = watchdog(&saturated, 4, Duration::from_secs(1), &queues);
        assert!(
            tokio::time::timeout(Duration::from_secs(3), watched)
                .await
                .is_err()
        );
    }

    /// While Redis does not answer, a consumer that does not ask is waiting on Redis, not
    /// stalled: it ends with an error on its own and is rebuilt with backoff.
    #[tokio::test]
    async fn no_stall_is_reported_while_redis_is_unreachable() {
        let health = Health::new();
        let unreachable = JobQueues::new("redis://127.0.0.1:1", "watchdog-test").unwrap();
        let watched = watchdog(&health, 4, Duration::from_secs(1), &unreachable);
        assert!(
            tokio::time::timeout(Duration::from_secs(4), watched)
                .await
                .is_err()
        );
    }
}
