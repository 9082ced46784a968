//! A worker whose timers stop firing keeps taking work (issue: a `worker-media` stopped
//! fetching about 90 s after start, alive, its jobs `QUEUED` for minutes).
//!
//! The cause: apalis wakes an idle consumer only with `futures-timer` delays (its poll interval
//! and its heartbeat), all served by one global helper thread; when that thread stops delivering
//! wake-ups the consumer never asks Redis again. This test reproduces it by wedging that thread
//! (a delay whose waker blocks), then checks that jobs pushed meanwhile still run promptly.
//!
//! Its own test binary (so its own process): the wedge stops every `futures-timer` timer of the
//! process, which must not touch the other tests.

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, mpsc},
    task::{Context, Wake, Waker},
    time::Duration,
};

use jobs::{Job, JobQueues, JobRegistry, Queue, system::DiagnosticJob};
use sqlx::PgPool;
use tests::{TestWorker, core_settings, eventually, job_status, unique_prefix};
use uuid::Uuid;

/// A waker that, once woken, blocks the waking thread until the test releases it.
struct BlockingWaker {
    entered: Mutex<mpsc::Sender<()>>,
    release: Mutex<mpsc::Receiver<()>>,
}

impl Wake for BlockingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        let _ = self.entered.lock().unwrap().send(());
        // Returns once the test drops its sender.
        let _ = self.release.lock().unwrap().recv();
    }
}

/// Wedges futures-timer's global thread until the returned sender is dropped.
fn wedge_futures_timer() -> (mpsc::Sender<()>, futures_timer::Delay) {
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let waker = Waker::from(Arc::new(BlockingWaker {
        entered: Mutex::new(entered_tx),
        release: Mutex::new(release_rx),
    }));
    let mut delay = futures_timer::Delay::new(Duration::from_millis(1));
    assert!(
        Pin::new(&mut delay)
            .poll(&mut Context::from_waker(&waker))
            .is_pending()
    );
    entered_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the timer thread never fired the delay");
    (release_tx, delay)
}

async fn enqueue(pool: &PgPool, queues: &JobQueues) -> Uuid {
    let mut tx = pool.begin().await.unwrap();
    let enqueued = DiagnosticJob {
        sleep_ms: 0,
        fail_attempts: 0,
        note: None,
    }
    .enqueue(&mut tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    queues.push(&[enqueued]).await;
    enqueued.id
}

async fn all_succeed(pool: &PgPool, ids: &[Uuid], within: Duration) -> bool {
    eventually(within, || async {
        for id in ids {
            if job_status(pool, *id).await.as_deref() != Some("SUCCEEDED") {
                return None;
            }
        }
        Some(())
    })
    .await
    .is_some()
}

/// A worker of diagnostic jobs on a private queue prefix, shown to take work.
async fn live_worker(pool: &PgPool) -> (JobQueues, TestWorker) {
    let core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let worker = TestWorker::start(
        pool.clone(),
        &core,
        JobRegistry::new().register::<DiagnosticJob>(),
    );
    let first = enqueue(pool, &queues).await;
    assert!(all_succeed(pool, &[first], Duration::from_secs(10)).await);
    (queues, worker)
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_worker_whose_timer_thread_stops_still_takes_work(pool: PgPool) {
    let (queues, worker) = live_worker(&pool).await;

    let (release, _delay) = wedge_futures_timer();
    // Let the consumer go idle: its last fetch came back empty and it waits to be woken.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(enqueue(&pool, &queues).await);
    }
    // Well within the dispatcher's re-push (5 s): the pushes themselves are taken.
    let taken = all_succeed(&pool, &ids, Duration::from_secs(4)).await;
    let statuses: Vec<_> =
        futures::future::join_all(ids.iter().map(|id| job_status(&pool, *id))).await;
    drop(release);
    assert!(
        taken,
        "jobs pushed while the timer thread was wedged: {statuses:?}"
    );
    worker.shutdown().await;
}

/// The scheduler's Redis vacuum (one suspect) deletes only finished tasks' data: a live
/// consumer stays registered and keeps taking work after it.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_redis_vacuum_leaves_live_workers_registered(pool: PgPool) {
    use apalis_core::backend::Vacuum as _;
    let (queues, worker) = live_worker(&pool).await;

    let config = queues.config(Queue::System);
    let registered = || {
        let key = config.workers_set();
        let mut conn = queues.connection();
        async move {
            let names: Vec<String> = redis::cmd("ZRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .unwrap();
            names
        }
    };
    let before = registered().await;
    assert_eq!(before.len(), 1, "{before:?}");
    assert!(before[0].starts_with(&worker.name), "{before:?}");

    // What the scheduler's vacuum tick does for every queue.
    let mut storage =
        apalis_redis::RedisStorage::<Uuid>::new(queues.connection()).with_config(config.clone());
    // The job's row says SUCCEEDED a moment before apalis acknowledges the delivery in Redis
    // (the outcome is recorded inside the handler): vacuum until that acknowledgement is there.
    let mut removed = 0;
    for _ in 0..50 {
        removed += storage.vacuum().await.unwrap();
        if removed >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(removed >= 1, "the finished delivery's data is vacuumed");
    assert_eq!(registered().await, before);

    let second = enqueue(&pool, &queues).await;
    assert!(all_succeed(&pool, &[second], Duration::from_secs(5)).await);
    worker.shutdown().await;
}
