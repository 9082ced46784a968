//! The reporting API's answer cache in Redis, shared by every API replica. It lives here rather
//! than in `api` because the PMS sync invalidates it when a run completes, so that a client that
//! reads `COMPLETED` never reads an answer older than that run.
//!
//! An entry is one GET answer (status 200) under
//! `{prefix}:reporting:cache:v<shapes>:<path>?<parameters>` (`v<shapes>`: the version of the
//! answers' shapes, raised when a cached route answers a new one),
//! holding `<generation>\n<content-type>\n<body>`. The API writes the path and parameters as its
//! handler parsed them (its `reporting::cache::CacheKey`), never the query text as sent: a
//! parameter the route does not read adds no entry, and a default that follows the company's day
//! is in the key as the date it stood for.
//! The generation is a number at `{prefix}:reporting:cache:generation`; [`invalidate`] raises it,
//! and an entry counts only while its generation is the current one. The API reads the generation
//! before its handler reads the database and stores the answer under that generation, so an
//! answer read from data older than an invalidation can never be served after it.

use std::{sync::LazyLock, time::Duration};

use redis::aio::ConnectionManager;

/// How long listing answers are kept (the reporting spec's cache durations).
pub const LISTINGS_TTL: Duration = Duration::from_secs(600);
/// How long reservation answers are kept.
pub const RESERVATIONS_TTL: Duration = Duration::from_secs(120);
/// How long dashboard answers are kept.
pub const DASHBOARD_TTL: Duration = Duration::from_secs(300);

/// How long the GET answers of `path` are kept; `None` for the routes that are not cached.
pub fn ttl_of(path: &str) -> Option<Duration> {
    let rest = path.strip_prefix("/reporting/")?;
    if rest.starts_with("listings") {
        Some(LISTINGS_TTL)
    } else if rest.starts_with("reservations") {
        Some(RESERVATIONS_TTL)
    } else if rest.starts_with("dashboard") {
        Some(DASHBOARD_TTL)
    } else {
        None
    }
}

/// The key of the current generation.
pub fn generation_key(prefix: &str) -> String {
    format!("{prefix}:reporting:cache:generation")
}

/// The key of the answer to `request`: the route's path and its parameters as parsed
/// (`/reporting/listings?page=1&limit=20&...`).
pub fn entry_key(prefix: &str, request: &str) -> String {
    format!("{prefix}:reporting:cache:{request}")
}

/// A stored answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub content_type: String,
    pub body: Vec<u8>,
}

/// What [`get`] read, in one round trip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The current generation: store a fresh answer under this one (read before the database).
    pub generation: u64,
    /// The stored answer, only when it was stored under the current generation.
    pub hit: Option<Entry>,
}

/// Reads the generation and the entry together. A generation missing (Redis restarted, the key
/// evicted) starts again from Redis' clock in milliseconds, never a number an earlier entry may
/// carry.
static LOOKUP: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local generation = redis.call('GET', KEYS[1])
if not generation then
  local t = redis.call('TIME')
  generation = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  redis.call('SET', KEYS[1], generation)
end
return {generation, redis.call('GET', KEYS[2])}
",
    )
});

/// Raises the generation: by one, and at least to Redis' clock in milliseconds, so that a
/// generation lost and started again from the clock still never comes back to an earlier number.
static INVALIDATE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = tonumber(redis.call('GET', KEYS[1]) or 0) or 0
local generation = string.format('%.0f', math.max(current + 1, now))
redis.call('SET', KEYS[1], generation)
return generation
",
    )
});

/// The current generation and the entry under `key` (from [`entry_key`]), if it is current.
pub async fn get(redis: &ConnectionManager, prefix: &str, key: &str) -> redis::RedisResult<Lookup> {
    let mut conn = redis.clone();
    let (generation, stored): (String, Option<Vec<u8>>) = LOOKUP
        .key(generation_key(prefix))
        .key(key)
        .invoke_async(&mut conn)
        .await?;
    // The script writes the generation itself, so it is always a number.
    let generation = generation.trim().parse::<u64>().unwrap_or(0);
    let hit = stored.and_then(|value| parse_entry(value, generation));
    Ok(Lookup { generation, hit })
}

/// The entry `value` holds when it was stored under `generation`.
fn parse_entry(value: Vec<u8>, generation: u64) -> Option<Entry> {
    let first = value.iter().position(|b| *b == b'\n')?;
    let stored: u64 = std::str::from_utf8(&value[..first]).ok()?.parse().ok()?;
    if stored != generation {
        return None;
    }
    let second = first + 1 + value[first + 1..].iter().position(|b| *b == b'\n')?;
    let content_type = std::str::from_utf8(&value[first + 1..second])
        .ok()?
        .to_owned();
    Some(Entry {
        content_type,
        body: value[second + 1..].to_vec(),
    })
}

/// Stores an answer under `key` for `ttl`, labelled with the generation read before the answer
/// was computed.
pub async fn put(
    redis: &ConnectionManager,
    key: &str,
    generation: u64,
    content_type: &str,
    body: &[u8],
    ttl: Duration,
) -> redis::RedisResult<()> {
    let head = format!("{generation}\n{content_type}\n");
    let mut value = Vec::with_capacity(head.len() + body.len());
    value.extend_from_slice(head.as_bytes());
    value.extend_from_slice(body);
    let mut conn = redis.clone();
    redis::cmd("SET")
        .arg(key)
        .arg(value)
        .arg("EX")
        .arg(ttl.as_secs().max(1))
        .query_async::<()>(&mut conn)
        .await
}

/// Makes every stored answer stale at once (a sync completed, a listing was linked to a villa).
/// Returns the new generation.
pub async fn invalidate(redis: &ConnectionManager, prefix: &str) -> redis::RedisResult<u64> {
    let mut conn = redis.clone();
    let generation: String = INVALIDATE
        .key(generation_key(prefix))
        .invoke_async(&mut conn)
        .await?;
    Ok(generation.trim().parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_under_the_prefix() {
        assert_eq!(
            entry_key("p", "/reporting/listings?page=2&limit=20"),
            "p:reporting:cache:/reporting/listings?page=2&limit=20"
        );
        assert_eq!(generation_key("p"), "p:reporting:cache:generation");
    }

    #[test]
    fn durations_by_route() {
        assert_eq!(ttl_of("/reporting/listings"), Some(LISTINGS_TTL));
        assert_eq!(ttl_of("/reporting/listings/x"), Some(LISTINGS_TTL));
        assert_eq!(ttl_of("/reporting/reservations/x"), Some(RESERVATIONS_TTL));
        assert_eq!(ttl_of("/reporting/dashboard/metrics"), Some(DASHBOARD_TTL));
        assert_eq!(ttl_of("/reporting/sync/runs"), None);
        assert_eq!(ttl_of("/reporting/health"), None);
        assert_eq!(ttl_of("/inventory/items"), None);
    }

    #[test]
    fn an_entry_counts_only_under_its_generation() {
        let value = b"7\napplication/json\n{\"a\":\n1}".to_vec();
        assert_eq!(
            parse_entry(value.clone(), 7),
            Some(Entry {
                content_type: "application/json".into(),
                body: b"{\"a\":\n1}".to_vec(),
            })
        );
        assert_eq!(parse_entry(value, 8), None);
        assert_eq!(parse_entry(b"garbage".to_vec(), 0), None);
    }
}
