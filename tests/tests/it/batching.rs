//! The pipeline in batches (issue 31): jobs enqueued many to a statement, claimed many to a
//! statement, their ends written many to a statement; and every guarantee of the one-at-a-time
//! pipeline kept: a worker killed with ends not yet written, Redis wiped mid-burst, two workers
//! racing over one batch.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::Duration,
};

use domain::job_store::{self, EndOfRun, RunEnd};
use jobs::{Job, JobBatch, JobContext, JobError, JobQueues, JobRegistry, Queue};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{RedisServer, TestWorker, core_settings, eventually, unique_prefix};
use uuid::Uuid;

/// A job that records each of its runs (which worker, which attempt), after `sleep_ms`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Counted {
    n: u32,
    #[serde(default)]
    sleep_ms: u64,
}

impl Job for Counted {
    const KIND: &'static str = "test.counted";
    const QUEUE: Queue = Queue::System;
    const MAX_ATTEMPTS: i32 = 3;

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        sqlx::query("INSERT INTO counted_runs (job_id, attempt, worker) VALUES ($1, $2, $3)")
            .bind(ctx.job_id)
            .bind(ctx.attempt)
            .bind(&*ctx.worker)
            .execute(&ctx.pool)
            .await?;
        tokio::time::sleep(Duration::from_millis(self.sleep_ms)).await;
        Ok(json!({"n": self.n}))
    }
}

/// One per subject, for the dedupe keys of a batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PerSubject {
    subject: u32,
}

impl Job for PerSubject {
    const KIND: &'static str = "test.per_subject";
    const QUEUE: Queue = Queue::System;

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("subject:{}", self.subject))
    }

    async fn run(self, _ctx: JobContext) -> Result<Value, JobError> {
        Ok(Value::Null)
    }
}

fn registry() -> JobRegistry {
    JobRegistry::new()
        .register::<Counted>()
        .register::<PerSubject>()
}

/// The runs table, and a record of every write that ended a job as SUCCEEDED: what "each
/// outcome recorded once" is checked against.
async fn create_tables(pool: &PgPool) {
    for statement in [
        "CREATE TABLE counted_runs (job_id uuid, attempt int, worker text)",
        "CREATE TABLE success_writes (job_id uuid, worker text)",
        "CREATE FUNCTION note_success() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO success_writes VALUES (NEW.id, OLD.locked_by); RETURN NEW; END $$",
        "CREATE TRIGGER note_success AFTER UPDATE OF status ON jobs FOR EACH ROW
         WHEN (NEW.status = 'SUCCEEDED' AND OLD.status IS DISTINCT FROM 'SUCCEEDED')
         EXECUTE FUNCTION note_success()",
    ] {
        sqlx::query(statement).execute(pool).await.unwrap();
    }
}

/// Enqueues `count` counted jobs, `per_statement` to a transaction, and pushes each batch.
async fn enqueue_counted(
    pool: &PgPool,
    queues: &JobQueues,
    count: u32,
    per_statement: u32,
    sleep_ms: u64,
) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for start in (0..count).step_by(per_statement as usize) {
        let mut batch = JobBatch::default();
        for n in start..(start + per_statement).min(count) {
            batch.add(&Counted { n, sleep_ms }).unwrap();
        }
        let mut tx = pool.begin().await.unwrap();
        let enqueued = batch.enqueue(&mut tx).await.unwrap();
        tx.commit().await.unwrap();
        queues.push(&enqueued).await;
        ids.extend(enqueued.iter().map(|e| e.id));
    }
    ids
}

async fn count(pool: &PgPool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

async fn wait_for(pool: &PgPool, sql: &'static str, expected: i64, timeout: Duration) -> i64 {
    eventually(timeout, || async {
        (count(pool, sql).await == expected).then_some(())
    })
    .await;
    count(pool, sql).await
}

/// Inserts `n` QUEUED jobs straight into the table (no Redis): for the claim races.
async fn queued_rows(pool: &PgPool, n: u32) -> Vec<Uuid> {
    queued_rows_sleeping(pool, n, 0).await
}

async fn queued_rows_sleeping(pool: &PgPool, n: u32, sleep_ms: u64) -> Vec<Uuid> {
    let mut batch = JobBatch::default();
    for n in 0..n {
        batch.add(&Counted { n, sleep_ms }).unwrap();
    }
    let mut conn = pool.acquire().await.unwrap();
    let enqueued = batch.enqueue(&mut conn).await.unwrap();
    enqueued.iter().map(|e| e.id).collect()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_batch_is_one_statement_with_its_dedupe_keys_and_its_transaction(pool: PgPool) {
    // A key taken before the batch, and one taken twice inside it.
    let mut tx = pool.begin().await.unwrap();
    let earlier = PerSubject { subject: 1 }.enqueue(&mut tx).await.unwrap();
    tx.commit().await.unwrap();
    assert!(earlier.inserted);

    let mut batch = JobBatch::default();
    for subject in [1, 2, 3, 2, 4] {
        batch.add(&PerSubject { subject }).unwrap();
    }
    batch.add(&Counted { n: 7, sleep_ms: 0 }).unwrap();
    let mut tx = pool.begin().await.unwrap();
    let enqueued = batch.enqueue(&mut tx).await.unwrap();
    let inserted: Vec<bool> = enqueued.iter().map(|e| e.inserted).collect();
    assert_eq!(inserted, [false, true, true, false, true, true]);
    assert!(enqueued.iter().all(|e| e.queue == Queue::System));
    // Rolled back: none of them exists, and their keys are free again.
    tx.rollback().await.unwrap();
    assert_eq!(count(&pool, "SELECT count(*) FROM jobs").await, 1);

    let mut batch = JobBatch::default();
    for subject in [2, 3] {
        batch.add(&PerSubject { subject }).unwrap();
    }
    let mut tx = pool.begin().await.unwrap();
    let enqueued = batch.enqueue(&mut tx).await.unwrap();
    tx.commit().await.unwrap();
    assert!(enqueued.iter().all(|e| e.inserted));
    assert_eq!(count(&pool, "SELECT count(*) FROM jobs").await, 3);
}

/// Workers whose ends wait far longer than the test: killed, nothing of the runs is written.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_worker_killed_with_ends_not_yet_written_has_those_jobs_run_again_and_recorded_once(
    pool: PgPool,
) {
    create_tables(&pool).await;
    let mut core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    // A short lease (renewed every 2.7 s, long enough for a loaded machine), so that the rerun
    // comes quickly; ends held back for a minute, so that the kill finds every one unwritten.
    core.jobs.lease = Duration::from_secs(8);
    core.jobs.complete_interval = Duration::from_secs(60);
    core.jobs.complete_batch = 10_000;
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let doomed = TestWorker::start(pool.clone(), &core, registry());
    let ids = enqueue_counted(&pool, &queues, 60, 20, 0).await;

    let ran = wait_for(
        &pool,
        "SELECT count(DISTINCT job_id) FROM counted_runs",
        60,
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(ran, 60, "the doomed worker ran every job");
    // Every run ended, none of the ends is written: the rows still say RUNNING, under its lease.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM jobs WHERE status = 'RUNNING' AND locked_by IS NOT NULL"
        )
        .await,
        60
    );
    assert_eq!(count(&pool, "SELECT count(*) FROM success_writes").await, 0);
    doomed.kill().await;

    let mut settings = core_settings(&core.redis_url, &core.redis_prefix);
    settings.jobs.lease = Duration::from_secs(8);
    let rescuer = TestWorker::start(pool.clone(), &settings, registry());
    let succeeded = wait_for(
        &pool,
        "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'",
        60,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(succeeded, 60);
    // Each job ran twice (once by each worker), and its success was written once, by the
    // rescuer, with its result.
    let runs: Vec<(Uuid, i64, i64)> = sqlx::query_as(
        "SELECT job_id, count(*), count(DISTINCT worker) FROM counted_runs GROUP BY job_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(runs.len(), 60);
    assert!(
        runs.iter()
            .all(|&(_, runs, workers)| runs == 2 && workers == 2),
        "{runs:?}"
    );
    let writes: Vec<(Uuid, String)> = sqlx::query_as("SELECT job_id, worker FROM success_writes")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(writes.len(), 60, "one success written per job");
    assert!(writes.iter().all(|(_, worker)| *worker == rescuer.name));
    let rows: Vec<(Uuid, i32, Value)> =
        sqlx::query_as("SELECT id, attempts, result FROM jobs ORDER BY id")
            .fetch_all(&pool)
            .await
            .unwrap();
    let n_of: HashMap<Uuid, u32> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| (*id, n as u32))
        .collect();
    for (id, attempts, result) in rows {
        assert_eq!(attempts, 2);
        assert_eq!(result, json!({"n": n_of[&id]}));
    }
    rescuer.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_redis_wiped_mid_burst_loses_no_job_and_runs_none_twice(pool: PgPool) {
    create_tables(&pool).await;
    let redis = RedisServer::start();
    let core = core_settings(&redis.url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    // Enqueued before the worker starts, so that the wipe finds most of them still in Redis;
    // 20 ms each, 16 at once: the burst lasts about 4 s, the wipe comes after about 0.2 s.
    let ids = enqueue_counted(&pool, &queues, 3_000, 500, 20).await;
    assert_eq!(queues.backlog(Queue::System).await.unwrap(), 3_000);
    let worker = TestWorker::start(pool.clone(), &core, registry());
    let some_done = eventually(Duration::from_secs(20), || async {
        (count(
            &pool,
            "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'",
        )
        .await
            >= 100)
            .then_some(())
    })
    .await;
    assert!(some_done.is_some());
    redis.flushall().await;
    let done_at_wipe = count(
        &pool,
        "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'",
    )
    .await;
    assert!(done_at_wipe < 3_000, "the burst was over before the wipe");

    let succeeded = wait_for(
        &pool,
        "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'",
        3_000,
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(succeeded, 3_000, "{done_at_wipe} had succeeded at the wipe");
    let ran: HashSet<Uuid> = sqlx::query_scalar("SELECT job_id FROM counted_runs")
        .fetch_all(&pool)
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(ran, ids.iter().copied().collect());
    assert_eq!(
        count(&pool, "SELECT count(*) FROM counted_runs").await,
        3_000,
        "a job ran twice"
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM success_writes").await,
        3_000
    );
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn two_workers_each_delivered_the_whole_batch_run_each_job_once(pool: PgPool) {
    create_tables(&pool).await;
    // Two workers on two Redis queues of their own, each given every id of one batch at the
    // same moment: they claim over the same rows at once, through the real runtime.
    let redis = tests::shared_redis_url();
    let settings = [unique_prefix(), unique_prefix()].map(|prefix| core_settings(&redis, &prefix));
    let ids = queued_rows_sleeping(&pool, 400, 20).await;
    let workers = settings
        .each_ref()
        .map(|core| TestWorker::start(pool.clone(), core, registry()));
    // Both consumers up and asking before the batch arrives (a loaded machine starts threads
    // late); 20 ms a job, 16 at once: alone, one worker would need half a second.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pushers = settings.each_ref().map(|core| {
        let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
        let ids = ids.clone();
        async move { queues.push_ids(Queue::System, &ids).await.unwrap() }
    });
    let [a, b] = pushers;
    tokio::join!(a, b);
    let succeeded = wait_for(
        &pool,
        "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'",
        400,
        Duration::from_secs(30),
    )
    .await;
    assert_eq!(succeeded, 400);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(&pool, "SELECT count(*) FROM counted_runs").await, 400);
    assert_eq!(
        count(&pool, "SELECT count(DISTINCT job_id) FROM counted_runs").await,
        400
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM success_writes").await,
        400
    );
    assert_eq!(
        count(&pool, "SELECT max(attempts)::int8 FROM jobs").await,
        1
    );
    // Both took part: the race was real, not one worker draining its queue before the other.
    let by_worker: Vec<i64> =
        sqlx::query_scalar("SELECT count(*) FROM counted_runs GROUP BY worker")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(by_worker.len(), 2, "{by_worker:?}");
    for worker in workers {
        worker.shutdown().await;
    }
}

/// Each job claimed once when two claims of one batch start together (what the statement's
/// conditions guarantee whatever the locking); the next test forces the overlap SKIP LOCKED is
/// for.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn two_claims_of_one_batch_released_together_take_each_job_once(pool: PgPool) {
    let lease = Duration::from_secs(15);
    for round in 0..10 {
        let ids = Arc::new(queued_rows(&pool, 300).await);
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let claims = ["a", "b"].map(|worker| {
            let (pool, ids, barrier) = (pool.clone(), ids.clone(), barrier.clone());
            tokio::spawn(async move {
                let mut conn = pool.acquire().await.unwrap();
                barrier.wait().await;
                let worker = format!("{worker}-{round}");
                job_store::claim_many(&mut *conn, &ids, &worker, lease)
                    .await
                    .unwrap()
            })
        });
        let [a, b] = claims;
        let (a, b) = (a.await.unwrap(), b.await.unwrap());
        let a: HashSet<Uuid> = a.iter().map(|j| j.id).collect();
        let b: HashSet<Uuid> = b.iter().map(|j| j.id).collect();
        assert!(a.is_disjoint(&b), "round {round}: a job claimed by both");
        assert_eq!(
            a.len() + b.len(),
            300,
            "round {round}: a job claimed by neither"
        );
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_claim_meeting_a_batch_held_by_another_takes_the_rest_without_waiting(pool: PgPool) {
    let lease = Duration::from_secs(15);
    let ids = queued_rows(&pool, 300).await;
    // The first claim's transaction is held open over the first 200.
    let mut first = pool.begin().await.unwrap();
    let held = job_store::claim_many(&mut *first, &ids[..200], "first", lease)
        .await
        .unwrap();
    assert_eq!(held.len(), 200);
    // The second arrives for all 300 while the first is open: it takes the 100 others at once.
    let second = tokio::time::timeout(
        Duration::from_secs(5),
        job_store::claim_many(&pool, &ids, "second", lease),
    )
    .await
    .expect("the second claim waited for the first")
    .unwrap();
    let second: HashSet<Uuid> = second.iter().map(|j| j.id).collect();
    assert_eq!(second, ids[200..].iter().copied().collect());
    first.commit().await.unwrap();
    // Committed, the first's 200 are its own: a third claim finds nothing left.
    let third = job_store::claim_many(&pool, &ids, "third", lease)
        .await
        .unwrap();
    assert!(third.is_empty());
    assert_eq!(
        count(&pool, "SELECT count(*) FROM jobs WHERE locked_by = 'first'").await,
        200
    );
    // Rolled back instead, a claim leaves its jobs to the next.
    let more = queued_rows(&pool, 50).await;
    let mut aborted = pool.begin().await.unwrap();
    assert_eq!(
        job_store::claim_many(&mut *aborted, &more, "aborted", lease)
            .await
            .unwrap()
            .len(),
        50
    );
    aborted.rollback().await.unwrap();
    assert_eq!(
        job_store::claim_many(&pool, &more, "next", lease)
            .await
            .unwrap()
            .len(),
        50
    );
}

/// A row as an end leaves it: status, attempts, error, result, and whether it waits.
type EndedRow = (String, i32, Option<String>, Option<Value>, bool);

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn ends_are_recorded_only_on_the_run_they_end(pool: PgPool) {
    let lease = Duration::from_secs(15);
    let ids = queued_rows(&pool, 5).await;
    let claimed = job_store::claim_many(&pool, &ids, "slow", lease)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 5);
    let expire = |id: Uuid| {
        let pool = pool.clone();
        async move {
            sqlx::query("UPDATE jobs SET locked_until = now() - interval '1 second' WHERE id = $1")
                .bind(id)
                .execute(&pool)
                .await
                .unwrap();
        }
    };
    // The first job's lease runs out and another worker takes it over; the second's runs out
    // and the same worker claims it again (attempt 2).
    expire(ids[0]).await;
    expire(ids[1]).await;
    assert_eq!(job_store::reap_expired_leases(&pool).await.unwrap(), 2);
    let taken = job_store::claim_many(&pool, &ids[..1], "rescuer", lease)
        .await
        .unwrap();
    assert_eq!(taken.len(), 1);
    let again = job_store::claim_many(&pool, &ids[1..2], "slow", lease)
        .await
        .unwrap();
    assert_eq!(again[0].attempts, 2);

    let end = |n: usize, end: RunEnd| EndOfRun {
        id: ids[n],
        attempt: 1,
        end,
    };
    let ends = vec![
        end(0, RunEnd::Succeeded(json!({"late": true}))),
        end(1, RunEnd::Succeeded(json!({"late": true}))),
        end(2, RunEnd::Succeeded(json!({"ok": 1}))),
        end(
            3,
            RunEnd::Failed {
                error: "boom".into(),
                retry_in: Some(Duration::from_secs(60)),
            },
        ),
        end(
            4,
            RunEnd::Postponed {
                reason: "waits for another".into(),
                after: Duration::from_secs(5),
            },
        ),
    ];
    let recorded: HashSet<Uuid> = job_store::record_ends(&pool, "slow", &ends)
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(recorded, ids[2..].iter().copied().collect());
    let rows: HashMap<Uuid, EndedRow> =
        sqlx::query_as("SELECT id, status, attempts, error, result, run_at > now() FROM jobs")
            .fetch_all(&pool)
            .await
            .unwrap()
            .into_iter()
            .map(
                |(id, s, a, e, r, later): (
                    Uuid,
                    String,
                    i32,
                    Option<String>,
                    Option<Value>,
                    bool,
                )| { (id, (s, a, e, r, later)) },
            )
            .collect();
    // The late ends touched neither the rescuer's run nor the same worker's second run.
    for late in &ids[..2] {
        assert_eq!(rows[late].0, "RUNNING");
        assert_eq!(rows[late].3, None);
    }
    assert_eq!(
        rows[&ids[2]],
        ("SUCCEEDED".into(), 1, None, Some(json!({"ok": 1})), false)
    );
    // A retry counts its attempt and waits its backoff; a wait gives the attempt back.
    assert_eq!(
        rows[&ids[3]],
        ("QUEUED".into(), 1, Some("boom".into()), None, true)
    );
    assert_eq!(
        rows[&ids[4]],
        (
            "QUEUED".into(),
            0,
            Some("waits for another".into()),
            None,
            true
        )
    );
    // The second run's own end is recorded.
    let second = [EndOfRun {
        id: ids[1],
        attempt: 2,
        end: RunEnd::Succeeded(json!({"second": true})),
    }];
    assert_eq!(
        job_store::record_ends(&pool, "slow", &second)
            .await
            .unwrap(),
        [ids[1]]
    );
}

/// apalis-redis's fetch moves every due delivery of the scheduled set to its active list in one
/// Lua `unpack`, which fails beyond about 8,000: a larger backlog used to fail every fetch, and
/// the worker never took work again. Pushes now leave the set empty.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_backlog_larger_than_one_lua_unpack_is_fetched_and_run(pool: PgPool) {
    create_tables(&pool).await;
    let redis = RedisServer::start();
    let core = core_settings(&redis.url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let ids = enqueue_counted(&pool, &queues, 12_000, 1_000, 0).await;
    assert_eq!(queues.backlog(Queue::System).await.unwrap(), 12_000);
    assert_eq!(
        queues.backlog_by_place(Queue::System).await.unwrap(),
        (12_000, 0)
    );

    let worker = TestWorker::start(pool.clone(), &core, registry());
    let succeeded = wait_for(
        &pool,
        "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'",
        12_000,
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(succeeded, 12_000);
    assert_eq!(
        count(&pool, "SELECT count(*) FROM counted_runs").await,
        12_000
    );
    assert_eq!(ids.len(), 12_000);
    worker.shutdown().await;
}

/// A backlog already in the scheduled set (pushed by apalis's own push, as every process did
/// before) is moved over by the worker's dispatcher, and runs.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_scheduled_backlog_left_by_an_older_pusher_is_moved_over_and_run(pool: PgPool) {
    create_tables(&pool).await;
    let redis = RedisServer::start();
    let core = core_settings(&redis.url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let ids = queued_rows(&pool, 9_000).await;
    let tasks: Vec<apalis_redis::RedisTask> = ids
        .iter()
        .map(|id| {
            apalis_core::task::builder::TaskBuilder::new(serde_json::to_vec(id).unwrap()).build()
        })
        .collect();
    let mut conn = queues.connection();
    apalis_redis::queries::push_tasks(&mut conn, &queues.config(Queue::System), &tasks)
        .await
        .unwrap();

    let worker = TestWorker::start(pool.clone(), &core, registry());
    let succeeded = wait_for(
        &pool,
        "SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'",
        9_000,
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(succeeded, 9_000);
    assert_eq!(
        count(&pool, "SELECT count(*) FROM counted_runs").await,
        9_000
    );
    worker.shutdown().await;
}
