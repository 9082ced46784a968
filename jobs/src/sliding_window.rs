//! The platform's one rate-limit algorithm in Redis, a sliding-window log: the PMS's request
//! budget (`pms::limiter`, shared by every worker) and the reporting API's per-caller limits
//! (the API's `reporting::limits`, shared by every replica) both take their slots here.
//!
//! A budget is one sorted set whose members are the requests admitted in the last window, scored
//! by when they were admitted. One Lua script prunes the set, counts it and either admits the
//! request or leaves the set as it was, and answers when its oldest and newest members leave the
//! window; the time is Redis' own (`TIME`), so the callers' clocks never matter. So any window of
//! that length holds at most the limit, however the requests are spread over time and over the
//! processes sharing the key, and a refused request costs nothing of the budget.

use std::{sync::LazyLock, time::Duration};

use redis::aio::ConnectionManager;
use uuid::Uuid;

/// Takes a slot from the log `KEYS[1]`: `ARGV[1]` requests per `ARGV[2]` milliseconds; `ARGV[3]`
/// makes the member unique (two requests in one millisecond are two members). Answers {admitted
/// (1 or 0), requests in the window (this one included when admitted), milliseconds until the
/// oldest of them leaves the window, milliseconds until the newest does} (both 0 when the window
/// is empty). A member scored `t` counts during `[t, t + window)`.
static SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  admitted = 1
end
local function leaves(entry)
  if entry[2] == nil then
    return 0
  end
  return math.max(0, tonumber(entry[2]) + window - now)
end
local oldest = leaves(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES'))
local newest = leaves(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES'))
return {admitted, count, oldest, newest}
",
    )
});

/// What [`take`] answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Whether the request was admitted (and counted); a refused one was not counted.
    pub admitted: bool,
    /// Requests in the window now, this one included when admitted.
    pub in_window: u64,
    /// Until the oldest request in the window leaves it: when a full window frees a slot.
    pub oldest_leaves: Duration,
    /// Until the newest leaves it: when the whole budget is back.
    pub newest_leaves: Duration,
}

impl Slot {
    /// Zero when the request was admitted, else how long until a slot frees up (at least 1 ms).
    pub fn wait(&self) -> Duration {
        if self.admitted {
            Duration::ZERO
        } else {
            self.oldest_leaves.max(Duration::from_millis(1))
        }
    }
}

/// Takes a slot of the budget `key`, `limit` requests per `window`, in one round trip.
pub async fn take(
    redis: &ConnectionManager,
    key: &str,
    limit: u32,
    window: Duration,
) -> redis::RedisResult<Slot> {
    let mut conn = redis.clone();
    let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
    let member = Uuid::new_v4().simple().to_string();
    let (admitted, in_window, oldest_ms, newest_ms): (i64, i64, i64, i64) = SCRIPT
        .key(key)
        .arg(limit)
        .arg(window_ms)
        .arg(member)
        .invoke_async(&mut conn)
        .await?;
    let millis = |ms: i64| Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    Ok(Slot {
        admitted: admitted == 1,
        in_window: u64::try_from(in_window).unwrap_or(0),
        oldest_leaves: millis(oldest_ms),
        newest_leaves: millis(newest_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_waits_for_the_oldest_to_leave() {
        let slot = |admitted, oldest| Slot {
            admitted,
            in_window: 3,
            oldest_leaves: Duration::from_millis(oldest),
            newest_leaves: Duration::from_secs(60),
        };
        assert_eq!(slot(true, 500).wait(), Duration::ZERO);
        assert_eq!(slot(false, 500).wait(), Duration::from_millis(500));
        assert_eq!(slot(false, 0).wait(), Duration::from_millis(1));
    }
}
