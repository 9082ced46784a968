//! Drives the job pipeline the way the platform does (job rows written in a transaction, pushed
//! to Redis after commit) against running `worker-system` processes, and reads the outcome from
//! the job rows themselves. Three phases:
//! 1. throughput: `--jobs` diagnostic jobs from `--producers` concurrent producers as fast as
//!    they go, `--enqueue-batch` to a transaction (one statement, one Redis call: `JobBatch`);
//!    jobs/s from the first enqueue to the last SUCCEEDED, by the rows' timestamps;
//! 2. latency: a steady `--rate` jobs/s for `--seconds`, one job to a transaction as a request
//!    enqueues it; enqueue-to-finish p50/p99 from the rows' own timestamps
//!    (`finished_at - created_at`, both Postgres's clock);
//! 3. a quiet platform: `--quiet-jobs` single jobs, each enqueued once the one before has
//!    finished and a pause has passed; enqueue-to-start p50/p99 (`started_at - created_at`).

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use clap::Parser;
use jobs::{JobBatch, JobQueues, system::DiagnosticJob};
use sqlx::PgPool;

#[derive(Parser)]
struct Args {
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    #[arg(long, env = "REDIS_URL")]
    redis_url: String,
    #[arg(long, env = "REDIS_QUEUE_PREFIX", default_value = "villa")]
    prefix: String,
    #[arg(long, default_value_t = 10_000)]
    jobs: usize,
    #[arg(long, default_value_t = 4)]
    producers: usize,
    /// Jobs written per transaction in the throughput phase (1: one job, one statement, one
    /// Redis call each).
    #[arg(long, default_value_t = 100)]
    enqueue_batch: usize,
    #[arg(long, default_value_t = 50)]
    quiet_jobs: usize,
    #[arg(long, default_value_t = 200)]
    rate: u64,
    #[arg(long, default_value_t = 15)]
    seconds: u64,
}

/// Writes `count` diagnostic jobs in one transaction (one statement) and pushes them.
async fn enqueue(
    pool: &PgPool,
    queues: &JobQueues,
    note: &str,
    count: usize,
) -> anyhow::Result<()> {
    let job = DiagnosticJob {
        note: Some(note.to_owned()),
        ..Default::default()
    };
    let mut batch = JobBatch::default();
    for _ in 0..count {
        batch.add(&job)?;
    }
    let mut tx = pool.begin().await?;
    let enqueued = batch.enqueue(&mut tx).await?;
    tx.commit().await?;
    queues.push(&enqueued).await;
    Ok(())
}

/// Waits until no job is QUEUED or RUNNING. The check goes through the dispatcher's and the
/// reaper's partial indexes, so polling costs the database next to nothing.
async fn wait_drained(pool: &PgPool, limit: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        let busy: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'QUEUED')
                 OR EXISTS (SELECT 1 FROM jobs WHERE status = 'RUNNING')",
        )
        .fetch_one(pool)
        .await?;
        if !busy {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "jobs still unfinished after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

struct Outcome {
    succeeded: i64,
    /// From the first job's enqueue to the last job's finish, by Postgres's clock.
    span_secs: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

async fn outcome(pool: &PgPool, note: &str) -> anyhow::Result<Outcome> {
    let (succeeded, span_secs, p50_ms, p99_ms, max_ms): (i64, f64, f64, f64, f64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status = 'SUCCEEDED'),
                extract(epoch FROM max(finished_at) - min(created_at))::float8,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),
                percentile_cont(0.99) WITHIN GROUP (ORDER BY ms),
                max(ms)
         FROM (SELECT status, created_at, finished_at,
                      (extract(epoch FROM finished_at - created_at) * 1000)::float8 AS ms
               FROM jobs WHERE kind = 'system.diagnostic' AND payload->>'note' = $1) t",
    )
    .bind(note)
    .fetch_one(pool)
    .await?;
    Ok(Outcome {
        succeeded,
        span_secs,
        p50_ms,
        p99_ms,
        max_ms,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let pool = domain::db::connect(&args.database_url, (args.producers + 4) as u32).await?;
    let queues = JobQueues::new(&args.redis_url, &args.prefix)?;
    let run = format!("bench-{}", std::process::id());

    // Phase 1: throughput.
    let burst = format!("{run}-burst");
    let counter = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut producers = Vec::new();
    for _ in 0..args.producers {
        let (pool, queues, counter, note, total) = (
            pool.clone(),
            queues.clone(),
            counter.clone(),
            burst.clone(),
            args.jobs,
        );
        let batch = args.enqueue_batch.max(1);
        producers.push(tokio::spawn(async move {
            loop {
                let from = counter.fetch_add(batch, Ordering::Relaxed);
                if from >= total {
                    break;
                }
                enqueue(&pool, &queues, &note, batch.min(total - from)).await?;
            }
            anyhow::Ok(())
        }));
    }
    for p in producers {
        p.await??;
    }
    let enqueued_in = started.elapsed();
    wait_drained(&pool, Duration::from_secs(300)).await?;
    let o = outcome(&pool, &burst).await?;
    anyhow::ensure!(
        o.succeeded == args.jobs as i64,
        "only {} of {} jobs succeeded",
        o.succeeded,
        args.jobs
    );
    println!(
        "pipeline.jobs                 {}   ({} producers, {} jobs to a transaction)",
        args.jobs, args.producers, args.enqueue_batch
    );
    println!(
        "pipeline.enqueue_rate_per_s   {:.0}",
        args.jobs as f64 / enqueued_in.as_secs_f64()
    );
    println!(
        "pipeline.throughput_per_s     {:.0}   (first enqueue to last SUCCEEDED)",
        o.succeeded as f64 / o.span_secs
    );
    println!(
        "pipeline.burst_latency_ms     p50 {:.1}  p99 {:.1}  (saturated; not the latency target)",
        o.p50_ms, o.p99_ms
    );

    // Phase 2: steady rate.
    let steady = format!("{run}-steady");
    let total = args.rate * args.seconds;
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / args.rate as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut sent = Vec::with_capacity(total as usize);
    for _ in 0..total {
        tick.tick().await;
        let (pool, queues, note) = (pool.clone(), queues.clone(), steady.clone());
        sent.push(tokio::spawn(async move {
            enqueue(&pool, &queues, &note, 1).await
        }));
    }
    for s in sent {
        s.await??;
    }
    wait_drained(&pool, Duration::from_secs(120)).await?;
    let o = outcome(&pool, &steady).await?;
    anyhow::ensure!(
        o.succeeded == total as i64,
        "only {} of {total} jobs succeeded",
        o.succeeded
    );
    println!("pipeline.steady_rate_per_s    {}", args.rate);
    println!("pipeline.steady_jobs          {total}");
    println!(
        "pipeline.steady_latency_ms    p50 {:.1}  p99 {:.1}  max {:.1}  (enqueue to SUCCEEDED)",
        o.p50_ms, o.p99_ms, o.max_ms
    );

    // Phase 3: a quiet platform, one job at a time.
    let quiet = format!("{run}-quiet");
    for _ in 0..args.quiet_jobs {
        tokio::time::sleep(Duration::from_millis(200)).await;
        enqueue(&pool, &queues, &quiet, 1).await?;
        wait_drained(&pool, Duration::from_secs(30)).await?;
    }
    let (p50, p99, max): (f64, f64, f64) = sqlx::query_as(
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),
                percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), max(ms)
         FROM (SELECT (extract(epoch FROM started_at - created_at) * 1000)::float8 AS ms
               FROM jobs WHERE kind = 'system.diagnostic' AND payload->>'note' = $1) t",
    )
    .bind(&quiet)
    .fetch_one(&pool)
    .await?;
    println!("pipeline.quiet_jobs           {}", args.quiet_jobs);
    println!(
        "pipeline.quiet_start_ms       p50 {p50:.1}  p99 {p99:.1}  max {max:.1}  (enqueue to start, one job at a time)"
    );
    Ok(())
}
