//! The PMS's request budget, shared by every worker (and the API's health probe): Hostaway
//! answers 429 past 15 requests per 10 seconds per IP address and 20 per account, so every
//! process that calls it takes a slot here first.
//!
//! The budget is a sliding-window log in Redis ([`crate::sliding_window`], which the reporting
//! API's rate limits take their slots from too): one sorted set per account whose members are the
//! requests of the last window, scored by when they were let through, and one Lua script that
//! prunes, counts and admits or answers how long until the oldest leaves the window, on Redis' own
//! clock. When Redis cannot be reached the process keeps to the same numbers on its own (an in-process log),
//! which holds the budget for a single worker, the usual deployment of `worker-pms`.
//!
//! Each wait for a slot is recorded in `villa_pms_rate_limiter_wait_seconds`.

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use domain::metrics::names;
use redis::aio::ConnectionManager;

use crate::sliding_window;

/// How long one call to Redis may take before the local log decides instead.
const REDIS_TIMEOUT: Duration = Duration::from_millis(500);
/// After Redis failed, how long the local log decides alone (no connection attempt per request
/// while Redis is down).
const REDIS_PAUSE: Duration = Duration::from_secs(5);

/// A slot before each request to one PMS account. Cheap to clone; limit 0 lets everything through.
#[derive(Clone)]
pub struct RateLimiter {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    redis: ConnectionManager,
    key: String,
    limit: u32,
    window: Duration,
    local: Mutex<LocalLog>,
    /// Until when Redis is left alone after a failure.
    redis_paused_until: Mutex<Option<Instant>>,
    /// Whether the current outage was logged (once per outage, not once per request).
    outage_logged: AtomicBool,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            None => f.write_str("RateLimiter(unlimited)"),
            Some(inner) => f
                .debug_struct("RateLimiter")
                .field("key", &inner.key)
                .field("limit", &inner.limit)
                .field("window", &inner.window)
                .finish(),
        }
    }
}

impl RateLimiter {
    /// `limit` requests per `window` for everyone using `key`; `limit` 0 means no limit.
    ///
    /// The window is padded a little (a fortieth, at most 250 ms): a slot is taken when a request
    /// leaves, the PMS counts it when it arrives, and requests that left a window apart can
    /// arrive closer together than that.
    pub fn new(redis: ConnectionManager, key: String, limit: u32, window: Duration) -> Self {
        if limit == 0 {
            return Self::unlimited();
        }
        let window = padded(window.max(Duration::from_millis(1)));
        Self {
            inner: Some(Arc::new(Inner {
                redis,
                key,
                limit,
                window,
                local: Mutex::new(LocalLog::default()),
                redis_paused_until: Mutex::new(None),
                outage_logged: AtomicBool::new(false),
            })),
        }
    }

    pub fn unlimited() -> Self {
        Self { inner: None }
    }

    /// The key of an account's log: `{prefix}:pms:rate:<client id>`.
    pub fn key(redis_prefix: &str, client_id: &str) -> String {
        format!("{redis_prefix}:pms:rate:{client_id}")
    }

    /// Waits until the budget allows one more request, and takes that slot.
    pub async fn acquire(&self) {
        let _waiting = WaitRecorder(Instant::now());
        let Some(inner) = &self.inner else {
            return;
        };
        loop {
            let wait = inner.try_acquire().await;
            if wait.is_zero() {
                return;
            }
            tokio::time::sleep(wait).await;
        }
    }
}

/// Records how long [`RateLimiter::acquire`] waited when it ends, also when its caller gave up
/// waiting (a timeout dropped it): that time was spent all the same.
struct WaitRecorder(Instant);

impl Drop for WaitRecorder {
    fn drop(&mut self) {
        metrics::histogram!(names::PMS_LIMITER_WAIT).record(self.0.elapsed().as_secs_f64());
    }
}

impl Inner {
    /// Zero when the slot was taken, else how long to wait before asking again.
    async fn try_acquire(&self) -> Duration {
        if !self.redis_paused() {
            match self.ask_redis().await {
                Ok(wait) => {
                    if self.outage_logged.swap(false, Ordering::Relaxed) {
                        tracing::info!(key = %self.key, "PMS rate limiter: Redis answers again");
                    }
                    return wait;
                }
                Err(error) => {
                    if let Ok(mut until) = self.redis_paused_until.lock() {
                        *until = Some(Instant::now() + REDIS_PAUSE);
                    }
                    if !self.outage_logged.swap(true, Ordering::Relaxed) {
                        tracing::warn!(key = %self.key, %error,
                            "PMS rate limiter: Redis unreachable, this process keeps to the limit on its own");
                    }
                }
            }
        }
        match self.local.lock() {
            Ok(mut log) => log.try_take(self.limit, self.window, Instant::now()),
            // A panic while the lock was held: wait a full window rather than risk a 429 storm.
            Err(_) => self.window,
        }
    }

    fn redis_paused(&self) -> bool {
        match self.redis_paused_until.lock() {
            Ok(until) => until.is_some_and(|t| Instant::now() < t),
            Err(_) => false,
        }
    }

    async fn ask_redis(&self) -> Result<Duration, String> {
        let slot = sliding_window::take(&self.redis, &self.key, self.limit, self.window);
        match tokio::time::timeout(REDIS_TIMEOUT, slot).await {
            Ok(Ok(slot)) => Ok(slot.wait()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer within {REDIS_TIMEOUT:?}")),
        }
    }
}

/// The window with its safety pad.
fn padded(window: Duration) -> Duration {
    window + (window / 40).min(Duration::from_millis(250))
}

/// The same sliding-window log as [`sliding_window`]'s script, in this process only.
#[derive(Debug, Default)]
struct LocalLog {
    sent: VecDeque<Instant>,
}

impl LocalLog {
    /// Zero when the request may go now (and it is logged), else how long until a slot frees up.
    fn try_take(&mut self, limit: u32, window: Duration, now: Instant) -> Duration {
        while self
            .sent
            .front()
            .is_some_and(|&at| now.saturating_duration_since(at) >= window)
        {
            self.sent.pop_front();
        }
        if self.sent.len() < usize::try_from(limit).unwrap_or(usize::MAX) {
            self.sent.push_back(now);
            return Duration::ZERO;
        }
        match self.sent.front() {
            Some(&oldest) => (oldest + window)
                .saturating_duration_since(now)
                .max(Duration::from_millis(1)),
            None => Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_log_lets_the_limit_through_then_waits_for_the_oldest() {
        let window = Duration::from_secs(10);
        let start = Instant::now();
        let mut log = LocalLog::default();
        for i in 0..3 {
            let at = start + Duration::from_secs(i);
            assert_eq!(log.try_take(3, window, at), Duration::ZERO);
        }
        let at = start + Duration::from_secs(4);
        assert_eq!(log.try_take(3, window, at), Duration::from_secs(6));
        // The refused request was not logged: once the first leaves, one slot is free.
        let at = start + Duration::from_secs(10);
        assert_eq!(log.try_take(3, window, at), Duration::ZERO);
        assert_eq!(log.try_take(3, window, at), Duration::from_secs(1));
    }

    #[test]
    fn the_window_is_padded_a_little() {
        assert_eq!(
            padded(Duration::from_secs(10)),
            Duration::from_millis(10_250)
        );
        assert_eq!(padded(Duration::from_secs(1)), Duration::from_millis(1025));
        assert_eq!(RateLimiter::key("villa", "10450"), "villa:pms:rate:10450");
    }
}
