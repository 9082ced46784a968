//! The job pipeline (ARCHITECTURE.md, "Long-running work") end to end: outbox row, Redis,
//! worker, status update; and what happens when Redis or a worker fails.

use std::time::{Duration, Instant};

use jobs::{Job, JobContext, JobError, JobQueues, JobRegistry, Queue, system::DiagnosticJob};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{RedisServer, TestWorker, core_settings, eventually, job_status, unique_prefix};
use uuid::Uuid;

/// A job kind of the tests' own that records every run it makes, so a test can count runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Probe {
    sleep_ms: u64,
}

impl Job for Probe {
    const KIND: &'static str = "test.probe";
    const QUEUE: Queue = Queue::System;
    const MAX_ATTEMPTS: i32 = 3;

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        sqlx::query("INSERT INTO probe_runs (job_id, attempt, worker) VALUES ($1, $2, $3)")
            .bind(ctx.job_id)
            .bind(ctx.attempt)
            .bind(&*ctx.worker)
            .execute(&ctx.pool)
            .await?;
        tokio::time::sleep(Duration::from_millis(self.sleep_ms)).await;
        Ok(json!({"slept": self.sleep_ms}))
    }
}

fn registry() -> JobRegistry {
    JobRegistry::new()
        .register::<DiagnosticJob>()
        .register::<Probe>()
}

async fn create_probe_table(pool: &PgPool) {
    sqlx::query("CREATE TABLE probe_runs (job_id uuid, attempt int, worker text, at timestamptz DEFAULT now())")
        .execute(pool)
        .await
        .unwrap();
}

async fn runs(pool: &PgPool, id: Uuid) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM probe_runs WHERE job_id = $1")
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Enqueues `job` in its own committed transaction and pushes it, as a handler would.
async fn enqueue<J: Job>(pool: &PgPool, queues: &JobQueues, job: &J) -> Uuid {
    let mut tx = pool.begin().await.unwrap();
    let enqueued = job.enqueue(&mut tx).await.unwrap();
    tx.commit().await.unwrap();
    queues.push(&[enqueued]).await;
    enqueued.id
}

async fn wait_status(pool: &PgPool, id: Uuid, status: &str, timeout: Duration) -> bool {
    eventually(timeout, || async {
        (job_status(pool, id).await.as_deref() == Some(status)).then_some(())
    })
    .await
    .is_some()
}

struct Row {
    status: String,
    attempts: i32,
    error: Option<String>,
    result: Option<Value>,
}

async fn row(pool: &PgPool, id: Uuid) -> Row {
    let (status, attempts, error, result): (String, i32, Option<String>, Option<Value>) =
        sqlx::query_as("SELECT status, attempts, error, result FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_one(pool)
            .await
            .unwrap();
    Row {
        status,
        attempts,
        error,
        result,
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_job_enqueued_in_a_rolled_back_transaction_never_runs(pool: PgPool) {
    create_probe_table(&pool).await;
    let core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let worker = TestWorker::start(pool.clone(), &core, registry());

    let mut tx = pool.begin().await.unwrap();
    let enqueued = Probe { sleep_ms: 0 }.enqueue(&mut tx).await.unwrap();
    // Even if the id reaches Redis (a push made too early), the row does not exist once the
    // transaction rolls back, so no worker can claim it.
    queues.push(&[enqueued]).await;
    tx.rollback().await.unwrap();

    // A control job committed after it must run, proving the worker was live all along.
    let control = enqueue(&pool, &queues, &Probe { sleep_ms: 0 }).await;
    assert!(wait_status(&pool, control, "SUCCEEDED", Duration::from_secs(20)).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(runs(&pool, enqueued.id).await, 0);
    assert_eq!(job_status(&pool, enqueued.id).await, None);
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_committed_job_runs_exactly_once_even_when_pushed_twice(pool: PgPool) {
    create_probe_table(&pool).await;
    let core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let id = enqueue(&pool, &queues, &Probe { sleep_ms: 200 }).await;
    queues.push_ids(Queue::System, &[id, id]).await.unwrap();
    // Two workers, so the duplicate deliveries can really race.
    let a = TestWorker::start(pool.clone(), &core, registry());
    let b = TestWorker::start(pool.clone(), &core, registry());
    assert!(wait_status(&pool, id, "SUCCEEDED", Duration::from_secs(20)).await);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(runs(&pool, id).await, 1);
    let r = row(&pool, id).await;
    assert_eq!((r.status.as_str(), r.attempts), ("SUCCEEDED", 1));
    assert_eq!(r.result, Some(json!({"slept": 200})));
    a.shutdown().await;
    b.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_failing_job_retries_with_backoff_and_ends_failed_with_its_error(pool: PgPool) {
    let core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let worker = TestWorker::start(pool.clone(), &core, registry());
    let started = Instant::now();
    let always = enqueue(
        &pool,
        &queues,
        &DiagnosticJob {
            fail_attempts: 99,
            ..Default::default()
        },
    )
    .await;
    let once = enqueue(
        &pool,
        &queues,
        &DiagnosticJob {
            fail_attempts: 1,
            ..Default::default()
        },
    )
    .await;

    assert!(wait_status(&pool, always, "FAILED", Duration::from_secs(20)).await);
    let r = row(&pool, always).await;
    assert_eq!(r.attempts, DiagnosticJob::MAX_ATTEMPTS);
    assert_eq!(
        r.error.as_deref(),
        Some("diagnostic failure requested for attempt 3 of 3")
    );
    // Backoff of 0.5 s then 1 s between the three runs.
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );

    assert!(wait_status(&pool, once, "SUCCEEDED", Duration::from_secs(20)).await);
    let r = row(&pool, once).await;
    assert_eq!(r.attempts, 2);
    assert_eq!(r.error, None);
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_job_whose_worker_was_killed_mid_run_runs_again_within_30_seconds(pool: PgPool) {
    create_probe_table(&pool).await;
    // Production settings: 15 s lease.
    let core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let doomed = TestWorker::start(pool.clone(), &core, registry());
    let id = enqueue(&pool, &queues, &Probe { sleep_ms: 60_000 }).await;
    // Mid-run: the handler has started its work.
    let started = eventually(Duration::from_secs(20), || async {
        (runs(&pool, id).await == 1).then_some(())
    })
    .await;
    assert!(started.is_some());
    let doomed_name: String = sqlx::query_scalar("SELECT locked_by FROM jobs WHERE id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    doomed.kill().await;
    let killed_at = Instant::now();

    // The job's payload still sleeps a minute; make the rerun quick so the test measures the
    // takeover, not the sleep.
    sqlx::query("UPDATE jobs SET payload = '{\"sleep_ms\": 0}' WHERE id = $1")
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
    let rescuer = TestWorker::start(pool.clone(), &core, registry());
    assert!(wait_status(&pool, id, "SUCCEEDED", Duration::from_secs(40)).await);
    let took = killed_at.elapsed();
    assert!(took < Duration::from_secs(30), "rerun took {took:?}");
    let workers: Vec<String> =
        sqlx::query_scalar("SELECT worker FROM probe_runs WHERE job_id = $1 ORDER BY at")
            .bind(id)
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(workers.len(), 2, "{workers:?} (doomed: {doomed_name})");
    assert_eq!(workers[0], doomed_name);
    assert_ne!(workers[1], doomed_name);
    assert_eq!(row(&pool, id).await.attempts, 2);
    rescuer.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn jobs_committed_while_redis_was_down_run_once_it_is_back(pool: PgPool) {
    create_probe_table(&pool).await;
    let mut redis = RedisServer::start();
    let core = core_settings(&redis.url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let worker = TestWorker::start(pool.clone(), &core, registry());
    redis.stop();

    // The push fails; the commit stands.
    let ids = [
        enqueue(&pool, &queues, &Probe { sleep_ms: 0 }).await,
        enqueue(&pool, &queues, &Probe { sleep_ms: 0 }).await,
    ];
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(job_status(&pool, ids[0]).await.as_deref(), Some("QUEUED"));

    redis.restart();
    for id in ids {
        assert!(
            wait_status(&pool, id, "SUCCEEDED", Duration::from_secs(30)).await,
            "job {id} never ran"
        );
        assert_eq!(runs(&pool, id).await, 1);
    }
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn jobs_lost_by_a_redis_flushall_still_run(pool: PgPool) {
    create_probe_table(&pool).await;
    let redis = RedisServer::start();
    let core = core_settings(&redis.url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let id = enqueue(&pool, &queues, &Probe { sleep_ms: 0 }).await;
    assert_eq!(queues.backlog(Queue::System).await.unwrap(), 1);
    redis.flushall().await;
    assert_eq!(queues.backlog(Queue::System).await.unwrap(), 0);

    let worker = TestWorker::start(pool.clone(), &core, registry());
    assert!(wait_status(&pool, id, "SUCCEEDED", Duration::from_secs(30)).await);
    assert_eq!(runs(&pool, id).await, 1);
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_worker_survives_a_redis_restart(pool: PgPool) {
    create_probe_table(&pool).await;
    let mut redis = RedisServer::start();
    let core = core_settings(&redis.url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let worker = TestWorker::start(pool.clone(), &core, registry());
    let before = enqueue(&pool, &queues, &Probe { sleep_ms: 0 }).await;
    assert!(wait_status(&pool, before, "SUCCEEDED", Duration::from_secs(20)).await);

    redis.stop();
    tokio::time::sleep(Duration::from_secs(2)).await;
    redis.restart();
    let after = enqueue(&pool, &queues, &Probe { sleep_ms: 0 }).await;
    assert!(
        wait_status(&pool, after, "SUCCEEDED", Duration::from_secs(30)).await,
        "the worker did not come back"
    );
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn graceful_shutdown_finishes_short_work_and_hands_back_long_work(pool: PgPool) {
    create_probe_table(&pool).await;
    let mut core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    core.jobs.shutdown_grace = Duration::from_secs(2);
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let first = TestWorker::start(pool.clone(), &core, registry());
    let short = enqueue(&pool, &queues, &Probe { sleep_ms: 1_000 }).await;
    let long = enqueue(&pool, &queues, &Probe { sleep_ms: 30_000 }).await;
    assert!(wait_status(&pool, short, "RUNNING", Duration::from_secs(20)).await);
    assert!(wait_status(&pool, long, "RUNNING", Duration::from_secs(20)).await);

    first.shutdown().await;
    assert_eq!(job_status(&pool, short).await.as_deref(), Some("SUCCEEDED"));
    let r = row(&pool, long).await;
    assert_eq!(
        (r.status.as_str(), r.attempts),
        ("QUEUED", 0),
        "handed back without counting the attempt"
    );

    sqlx::query("UPDATE jobs SET payload = '{\"sleep_ms\": 0}' WHERE id = $1")
        .bind(long)
        .execute(&pool)
        .await
        .unwrap();
    let second = TestWorker::start(pool.clone(), &core, registry());
    assert!(wait_status(&pool, long, "SUCCEEDED", Duration::from_secs(20)).await);
    assert_eq!(row(&pool, long).await.attempts, 1);
    second.shutdown().await;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct OncePerSubject {
    subject: String,
}

impl Job for OncePerSubject {
    const KIND: &'static str = "test.once_per_subject";
    const QUEUE: Queue = Queue::System;

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("once:{}", self.subject))
    }

    async fn run(self, _ctx: JobContext) -> Result<Value, JobError> {
        Ok(Value::Null)
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn work_with_a_dedupe_key_is_enqueued_once_under_concurrency(pool: PgPool) {
    let mut handles = Vec::new();
    for _ in 0..12 {
        let pool = pool.clone();
        handles.push(tokio::spawn(async move {
            let mut tx = pool.begin().await.unwrap();
            let e = OncePerSubject {
                subject: "villa-1".into(),
            }
            .enqueue(&mut tx)
            .await
            .unwrap();
            tx.commit().await.unwrap();
            e.inserted
        }));
    }
    let mut inserted = 0;
    for h in handles {
        inserted += usize::from(h.await.unwrap());
    }
    assert_eq!(inserted, 1);
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 1);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_job_of_an_undecodable_payload_fails_at_once(pool: PgPool) {
    let core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let worker = TestWorker::start(pool.clone(), &core, registry());
    let id = Uuid::now_v7();
    sqlx::query("INSERT INTO jobs (id, kind, queue, payload, max_attempts) VALUES ($1, 'system.diagnostic', 'system', '{\"sleepMs\": \"soon\"}', 5)")
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
    queues.push_ids(Queue::System, &[id]).await.unwrap();
    assert!(wait_status(&pool, id, "FAILED", Duration::from_secs(20)).await);
    let r = row(&pool, id).await;
    assert_eq!(r.attempts, 1, "a payload that cannot decode is not retried");
    assert!(r.error.unwrap().contains("does not decode"));
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_api_accepts_work_at_once_while_redis_is_down_and_it_runs_later(pool: PgPool) {
    let mut redis = RedisServer::start();
    let app = tests::TestApp::spawn_with(
        pool.clone(),
        tests::TestAppOptions {
            redis_url: redis.url(),
            ..Default::default()
        },
    )
    .await;
    redis.stop();
    let started = Instant::now();
    let (status, job) = tests::json(
        app.post_json(
            "/admin/jobs/diagnostic",
            "admin",
            &json!({"note": "redis down"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 202, "{job}");
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "the answer waited for Redis: {:?}",
        started.elapsed()
    );
    assert_eq!(job["status"], "QUEUED");

    redis.restart();
    let worker = app.worker(registry());
    let id: Uuid = job["id"].as_str().unwrap().parse().unwrap();
    assert!(wait_status(&pool, id, "SUCCEEDED", Duration::from_secs(30)).await);
    let (_, seen) = tests::json(app.get(&format!("/admin/jobs/{id}"), "admin").await).await;
    assert_eq!(seen["status"], "SUCCEEDED");
    assert_eq!(seen["result"]["note"], "redis down");
    worker.shutdown().await;
}
