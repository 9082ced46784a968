//! Handing job ids to Redis. Redis is only the transport: a push that fails is logged and left to
//! the dispatcher, never reported to the client whose change was committed.

use std::time::Duration;

use apalis::prelude::TaskBuilder;
use apalis_redis::{Config, ConnectionManager, RedisTask};
use redis::aio::ConnectionManagerConfig;
use uuid::Uuid;

use crate::{Enqueued, Queue};

/// Push side of the queues. Cheap to clone; connects lazily and reconnects on its own, so the
/// API starts and keeps accepting work while Redis is down.
#[derive(Clone)]
pub struct JobQueues {
    conn: ConnectionManager,
    prefix: String,
}

impl std::fmt::Debug for JobQueues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobQueues")
            .field("prefix", &self.prefix)
            .finish()
    }
}

/// A connection manager with timeouts long enough for a loaded Redis (apalis-redis issue 76:
/// redis-rs's 500 ms default response timeout can stop a worker pool) and short enough that a
/// dead Redis does not hold a request.
pub fn connection_manager(redis_url: &str) -> redis::RedisResult<ConnectionManager> {
    let client = redis::Client::open(redis_url)?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(5)))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_secs(2));
    client.get_connection_manager_lazy(config)
}

impl JobQueues {
    pub fn new(redis_url: &str, prefix: &str) -> redis::RedisResult<Self> {
        Ok(Self {
            conn: connection_manager(redis_url)?,
            prefix: prefix.to_owned(),
        })
    }

    pub fn connection(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// The apalis configuration of `queue`, shared by pushers and workers.
    ///
    /// - `lock_tasks(false)`: apalis's Redis-side task leases would duplicate the Postgres lease
    ///   that actually decides who runs a job (`job_store::claim_many`), at one more script per batch.
    /// - `emit_events(false)`: nothing subscribes to apalis's pub/sub notifications.
    /// - `batch_size(32)`: one fetch script brings up to 32 deliveries; a worker's consumer sets
    ///   its own, `WORKER_CLAIM_BATCH`, so that one fetch makes one claim statement.
    /// - `heartbeat_interval(1 s)`: after a fetch comes back empty, apalis-core parks the worker's
    ///   stream until something wakes it; a task finishing just before the waker is registered
    ///   wakes nobody, and the next heartbeat is then the only wake-up. At the default 30 s, a
    ///   delivery pushed to an idle worker could wait that long (seen in the upload tests); at 1 s
    ///   it waits at most a second, for one small script per second per queue.
    /// - `missed_heartbeats(300)`: keeps apalis's orphan timeout at 300 s, as before (the Postgres
    ///   lease decides about dead workers anyway).
    pub fn config(&self, queue: Queue) -> Config {
        Config::default()
            .queue(self.queue_key(queue))
            .lock_tasks(false)
            .emit_events(false)
            .batch_size(32)
            .heartbeat_interval(std::time::Duration::from_secs(1))
            .missed_heartbeats(300)
    }

    pub fn queue_key(&self, queue: Queue) -> String {
        format!("{}:{}", self.prefix, queue.name())
    }

    /// Pushes job ids of one queue. Each push is a new apalis task (a fresh ULID): apalis stores
    /// task data with HSETNX, so reusing an id could silently drop a re-push.
    pub async fn push_ids(&self, queue: Queue, ids: &[Uuid]) -> Result<(), apalis_redis::Error> {
        if ids.is_empty() {
            return Ok(());
        }
        let tasks: Vec<RedisTask> = ids
            .iter()
            .map(|id| TaskBuilder::new(serde_json::to_vec(id).unwrap_or_default()).build())
            .collect();
        let config = self.config(queue);
        let mut conn = self.conn.clone();
        apalis_redis::queries::push_tasks(&mut conn, &config, &tasks).await?;
        self.promote_scheduled(queue).await?;
        Ok(())
    }

    /// Moves every delivery of `queue` waiting in apalis's scheduled set to its active list,
    /// 1,000 at a time and at most 10,000 per script; answers how many moved.
    ///
    /// apalis-redis 1.0 puts every pushed task in the scheduled set (its push makes `run_at` at
    /// least "now"), and its fetch script moves the due ones to the active list in one Lua
    /// `unpack`, which Redis refuses beyond about 8,000 values ("too many results to unpack"):
    /// with a larger backlog every fetch fails and the consumer never takes work again (seen in
    /// `bench/pipeline.sh`: 100,000 jobs enqueued at 40,000 a second). Nothing here is scheduled
    /// for later (a retry waits in Postgres), so after each push, and at each dispatcher round,
    /// the whole set moves over.
    pub async fn promote_scheduled(&self, queue: Queue) -> redis::RedisResult<u64> {
        static PROMOTE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
            redis::Script::new(
                r"
                local moved = 0
                for _ = 1, 10 do
                    local ids = redis.call('zrange', KEYS[1], 0, 999)
                    if #ids == 0 then break end
                    redis.call('rpush', KEYS[2], unpack(ids))
                    redis.call('zrem', KEYS[1], unpack(ids))
                    moved = moved + #ids
                end
                if moved > 0 then
                    redis.call('del', KEYS[3])
                    redis.call('lpush', KEYS[3], 1)
                end
                return moved",
            )
        });
        // At most 10,000 a call, so that a large backlog does not hold Redis in one script.
        const PER_CALL: u64 = 10_000;
        let config = self.config(queue);
        let mut conn = self.conn.clone();
        let mut moved = 0;
        loop {
            let now: u64 = PROMOTE
                .key(config.scheduled_jobs_set())
                .key(config.active_jobs_list())
                .key(config.signal_list())
                .invoke_async(&mut conn)
                .await?;
            moved += now;
            if now < PER_CALL {
                return Ok(moved);
            }
        }
    }

    /// Pushes what a committed transaction enqueued: one Redis call per queue, the queues'
    /// calls at once. Never fails: if Redis does not take it now, the dispatcher will (the rows
    /// are already durable).
    pub async fn push(&self, enqueued: &[Enqueued]) {
        let pushes = Queue::ALL.into_iter().map(|queue| async move {
            let ids: Vec<Uuid> = enqueued
                .iter()
                .filter(|e| e.inserted && e.queue == queue)
                .map(|e| e.id)
                .collect();
            if let Err(error) = self.push_ids(queue, &ids).await {
                tracing::warn!(queue = queue.name(), count = ids.len(), %error,
                    "push to Redis failed; the dispatcher will push these jobs");
            }
        });
        futures::future::join_all(pushes).await;
    }

    /// [`push`](Self::push) without waiting: what request handlers use, so that a slow or absent
    /// Redis never delays an answer about work that is already committed.
    pub fn push_in_background(&self, enqueued: Vec<Enqueued>) {
        if enqueued.iter().any(|e| e.inserted) {
            let queues = self.clone();
            tokio::spawn(async move { queues.push(&enqueued).await });
        }
    }

    /// Waiting deliveries in Redis (active list plus scheduled set) for one queue.
    pub async fn backlog(&self, queue: Queue) -> redis::RedisResult<u64> {
        let (active, scheduled) = self.backlog_by_place(queue).await?;
        Ok(active + scheduled)
    }

    /// [`backlog`](Self::backlog) apart: deliveries in apalis's active list, and in its
    /// scheduled set (which [`promote_scheduled`](Self::promote_scheduled) keeps empty).
    pub async fn backlog_by_place(&self, queue: Queue) -> redis::RedisResult<(u64, u64)> {
        let config = self.config(queue);
        let mut conn = self.conn.clone();
        redis::pipe()
            .cmd("LLEN")
            .arg(config.active_jobs_list())
            .cmd("ZCARD")
            .arg(config.scheduled_jobs_set())
            .query_async(&mut conn)
            .await
    }

    pub async fn ping(&self) -> redis::RedisResult<()> {
        let mut conn = self.conn.clone();
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .map(|_| ())
    }
}
