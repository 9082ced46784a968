//! The worker side of the job pipeline.
//!
//! - **Consumers**: per queue, an apalis worker over the Redis queue. Each delivery carries a job
//!   id; the consumer claims the row (a conditional update, so duplicates are no-ops), runs the
//!   kind's handler and records SUCCEEDED, a retry with backoff, or FAILED. Deliveries always end
//!   `Ok` for apalis: the outcome lives in Postgres, and apalis's own retries (25 by default)
//!   would only duplicate ours.
//! - **Dispatcher**: pushes rows that need it (never pushed, retry due, pushed but not claimed
//!   after `redispatch_after` while Redis holds no backlog) and requeues jobs whose lease expired
//!   because their worker died.
//! - **Lease keeper**: renews the leases of this process's running jobs.
//! - **Supervisor**: a consumer that stops on a Redis error (Redis restarted, unreachable) is
//!   built again after a backoff, so the process outlives Redis outages.
//! - **Shutdown**: on the token, consumers stop taking work, in-flight jobs get
//!   `shutdown_grace` to finish, and what is still running is handed back to the queue.

use std::{sync::Arc, time::Duration};

use apalis::prelude::*;
use apalis_redis::RedisStorage;
use domain::{job_store, settings::JobSettings};
use futures::future::join_all;
use jobs::{JobContext, JobQueues, JobRegistry, JobServices, Queue};
use sqlx::PgPool;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

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
    use anyhow::Context as _;
    let settings = domain::settings::CoreSettings::from_env()?;
    domain::process::init_logging(settings.log_json);
    let pool = domain::db::connect(&settings.database_url, settings.db_max_connections)
        .await
        .context("DATABASE_URL: cannot connect to Postgres")?;
    let rt = Arc::new(Runtime {
        pool,
        services: Arc::new(JobServices::from_settings(&settings)),
        queues: JobQueues::new(&settings.redis_url, &settings.redis_prefix).context("REDIS_URL")?,
        registry,
        settings: settings.jobs.clone(),
        name: process_name(family).into(),
    });
    run(rt, domain::process::shutdown_token()).await;
    Ok(())
}

pub fn process_name(family: &str) -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".to_owned());
    let nonce = &Uuid::new_v4().simple().to_string()[..8];
    format!("{family}-{host}-{}-{nonce}", std::process::id())
}

/// Runs the worker until `shutdown` is cancelled, then drains as described in the module docs.
pub async fn run(rt: Arc<Runtime>, shutdown: CancellationToken) {
    let queues = rt.registry.queues();
    tracing::info!(worker = %rt.name, queues = ?queues.iter().map(|q| q.name()).collect::<Vec<_>>(), "worker starting");

    // Lease renewal must outlive the consumers' drain, so it has its own token.
    let keeper_stop = CancellationToken::new();
    let keeper = tokio::spawn(lease_keeper(rt.clone(), keeper_stop.clone()));
    let dispatcher = tokio::spawn(dispatcher(rt.clone(), queues.clone(), shutdown.clone()));
    let consumers: Vec<JoinHandle<()>> = queues
        .iter()
        .map(|&q| tokio::spawn(supervise_consumer(rt.clone(), q, shutdown.clone())))
        .collect();

    shutdown.cancelled().await;
    let grace = rt.settings.shutdown_grace;
    if tokio::time::timeout(grace, join_all(consumers))
        .await
        .is_err()
    {
        tracing::warn!(
            ?grace,
            "in-flight jobs did not finish within the grace period"
        );
    }
    keeper_stop.cancel();
    let _ = keeper.await;
    let _ = dispatcher.await;
    match job_store::hand_back(&rt.pool, &rt.name).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(count = n, "handed unfinished jobs back to the queue"),
        Err(error) => tracing::error!(%error, "hand back failed; leases will expire instead"),
    }
    tracing::info!(worker = %rt.name, "worker stopped");
}

/// Builds the apalis worker of `queue` again whenever it ends with an error, with backoff.
async fn supervise_consumer(rt: Arc<Runtime>, queue: Queue, shutdown: CancellationToken) {
    let mut generation = 0u32;
    let mut backoff = Duration::from_millis(200);
    while !shutdown.is_cancelled() {
        generation += 1;
        let started = tokio::time::Instant::now();
        let storage = RedisStorage::<Uuid>::new(rt.queues.connection())
            .with_config(rt.queues.config(queue))
            .poll_with_interval(rt.settings.poll_interval);
        let stop = shutdown.clone();
        let worker = WorkerBuilder::new(format!("{}-{}-{generation}", rt.name, queue.name()))
            .backend(storage)
            .data(rt.clone())
            .concurrency(rt.settings.concurrency)
            .build(deliver);
        let outcome = worker
            .run_until(async move {
                stop.cancelled().await;
                Ok::<(), std::io::Error>(())
            })
            .await;
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
}

/// One delivery from Redis: claim, run, record.
async fn deliver(job_id: Uuid, rt: Data<Arc<Runtime>>) -> Result<(), BoxDynError> {
    process(&rt, job_id).await;
    Ok(())
}

/// Claims and runs one job; what it returns is only for tests and logs.
pub async fn process(rt: &Runtime, job_id: Uuid) -> Option<Result<(), String>> {
    let claimed = match job_store::claim(&rt.pool, job_id, &rt.name, rt.settings.lease).await {
        Ok(Some(job)) => job,
        Ok(None) => {
            tracing::debug!(%job_id, "delivery skipped: job not claimable (duplicate, taken or not due)");
            return None;
        }
        Err(error) => {
            // The row stays QUEUED; the dispatcher pushes it again.
            tracing::warn!(%job_id, %error, "claim failed");
            return None;
        }
    };
    let ctx = JobContext {
        pool: rt.pool.clone(),
        services: rt.services.clone(),
        job_id,
        attempt: claimed.attempts,
        max_attempts: claimed.max_attempts,
        worker: rt.name.clone(),
    };
    let started = std::time::Instant::now();
    // A panicking handler is a failed run, not a dead worker.
    let outcome = tokio::spawn(rt.registry.run(&claimed.kind, claimed.payload, ctx))
        .await
        .unwrap_or_else(|join_error| {
            Err(jobs::JobError::retry(format!(
                "handler panicked: {join_error}"
            )))
        });
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let recorded = match &outcome {
        Ok(result) => {
            tracing::info!(%job_id, kind = %claimed.kind, attempt = claimed.attempts, elapsed_ms, "job succeeded");
            job_store::succeed(&rt.pool, job_id, &rt.name, result).await
        }
        Err(error) if error.wait.is_some() => {
            tracing::debug!(%job_id, kind = %claimed.kind, reason = %error.message, "job waits");
            job_store::postpone(
                &rt.pool,
                job_id,
                &rt.name,
                &error.message,
                error.wait.unwrap_or_default(),
            )
            .await
        }
        Err(error) => {
            let retry_in = (error.retryable && claimed.attempts < claimed.max_attempts)
                .then(|| jobs::backoff(rt.registry.backoff_base(&claimed.kind), claimed.attempts));
            tracing::warn!(%job_id, kind = %claimed.kind, attempt = claimed.attempts,
                max_attempts = claimed.max_attempts, error = %error.message, ?retry_in, elapsed_ms, "job failed");
            job_store::fail(&rt.pool, job_id, &rt.name, &error.message, retry_in).await
        }
    };
    match recorded {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(%job_id, "outcome not recorded: the lease was lost to another worker")
        }
        // The lease expires and the job runs again; handlers are idempotent.
        Err(error) => tracing::error!(%job_id, %error, "outcome not recorded"),
    }
    Some(outcome.map(|_| ()).map_err(|e| e.message))
}

async fn lease_keeper(rt: Arc<Runtime>, stop: CancellationToken) {
    let every = rt.settings.lease / 3;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {},
            _ = stop.cancelled() => return,
        }
        if let Err(error) = job_store::renew_leases(&rt.pool, &rt.name, rt.settings.lease).await {
            tracing::warn!(%error, "lease renewal failed");
        }
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
