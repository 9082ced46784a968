//! The reporting surface's rate limits (spec/operations-apis.md, "Limits"): per caller (the
//! token's subject) and per class of route, `/reporting/dashboard*` 120 requests a minute,
//! `/reporting/listings*` 60, `/reporting/sync/*` 5 and every other route 60; health is not
//! limited.
//!
//! Counted in Redis so that every API replica shares one budget: one GCRA script per request
//! (the caller's theoretical arrival time under `{prefix}:reporting:rate:<class>:<subject>`,
//! advanced by one emission interval per request, a burst of the whole minute's allowance), on
//! Redis' own clock so that replicas whose clocks differ still agree. While Redis is unreachable
//! requests are served unlimited ([`super::RedisGate`]): a limit is worth less than an answer.

use std::{
    sync::{Arc, LazyLock},
    time::Duration,
};

use axum::{
    extract::Request,
    http::{HeaderMap, HeaderName, HeaderValue, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use super::Reporting;
use crate::{auth::CurrentUser, error::AppError, state::AppState};

/// A class of routes sharing one allowance per caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    /// In the Redis key.
    pub name: &'static str,
    /// Requests allowed per [`WINDOW`].
    pub limit: u32,
}

pub const DASHBOARD: Class = Class {
    name: "dashboard",
    limit: 120,
};
pub const LISTINGS: Class = Class {
    name: "listings",
    limit: 60,
};
pub const SYNC: Class = Class {
    name: "sync",
    limit: 5,
};
pub const DEFAULT: Class = Class {
    name: "default",
    limit: 60,
};

/// The period every limit is stated over.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The class of the route at `path`; `None` for the routes that are not limited.
pub fn class_of(path: &str) -> Option<Class> {
    let rest = path.strip_prefix("/reporting/")?;
    if rest == "health" {
        return None;
    }
    Some(if rest.starts_with("dashboard") {
        DASHBOARD
    } else if rest.starts_with("listings") {
        LISTINGS
    } else if rest.starts_with("sync/") {
        SYNC
    } else {
        DEFAULT
    })
}

/// The answer of the limiter for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    /// Requests the caller may still send at once.
    pub remaining: u64,
    /// Seconds until the whole allowance is back.
    pub reset_secs: u64,
    /// Refused: seconds until this request would be allowed (at least 1). Allowed: seconds until
    /// the next one would be (0 while some remain).
    pub wait_secs: u64,
}

impl Decision {
    /// `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.
    fn write(&self, headers: &mut HeaderMap) {
        headers.insert(
            HeaderName::from_static("ratelimit-limit"),
            HeaderValue::from(self.limit),
        );
        headers.insert(
            HeaderName::from_static("ratelimit-remaining"),
            HeaderValue::from(self.remaining),
        );
        headers.insert(
            HeaderName::from_static("ratelimit-reset"),
            HeaderValue::from(self.reset_secs),
        );
    }
}

/// GCRA with a burst of the whole allowance: KEYS[1] holds the caller's theoretical arrival time
/// in milliseconds; ARGV[1] is the limit, ARGV[2] the window in milliseconds. Answers {allowed,
/// remaining, milliseconds until the allowance is whole again, milliseconds to wait (refused:
/// for this request; allowed: for the next one)}. A refused request changes nothing.
static GCRA: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local interval = math.max(1, math.floor(period / limit))
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1]) or 0) or 0
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - period
if now < allow_at then
  return {0, 0, tat - now, allow_at - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', new_tat - now)
local remaining = math.floor((now + period - new_tat) / interval)
local wait = 0
if remaining == 0 then wait = new_tat + interval - period - now end
return {1, remaining, new_tat - now, wait}
",
    )
});

/// Takes one request of `class` from `subject`'s allowance; `None` when Redis could not say (the
/// request goes unlimited).
pub async fn take(reporting: &Reporting, class: Class, subject: &str) -> Option<Decision> {
    let key = format!(
        "{}:reporting:rate:{}:{subject}",
        reporting.prefix, class.name
    );
    let window_ms = u64::try_from(WINDOW.as_millis()).unwrap_or(60_000);
    let mut conn = reporting.redis.clone();
    let (allowed, remaining, reset_ms, wait_ms): (i64, i64, i64, i64) = reporting
        .limits_gate
        .call(
            "rate limits not applied",
            GCRA.key(&key)
                .arg(class.limit)
                .arg(window_ms)
                .invoke_async(&mut conn),
        )
        .await?;
    let seconds = |ms: i64| u64::try_from(ms).unwrap_or(0).div_ceil(1000);
    let allowed = allowed == 1;
    Some(Decision {
        allowed,
        limit: class.limit,
        remaining: u64::try_from(remaining).unwrap_or(0),
        reset_secs: seconds(reset_ms),
        wait_secs: if allowed {
            seconds(wait_ms)
        } else {
            seconds(wait_ms).max(1)
        },
    })
}

/// Route layer of the reporting router (inside `auth::authorize`, so the caller is known):
/// refuses a request past its caller's allowance with 429 `RATE_LIMIT_EXCEEDED` (`retryAfter`
/// and `Retry-After` in whole seconds), and writes the `RateLimit-*` headers on every answer it
/// counted, errors included. A `Retry-After` that an answer sets (a sync run still going) is
/// raised to the wait the caller's allowance needs, so that a client polling as told is never
/// refused.
pub async fn enforce(req: Request, next: Next) -> Response {
    let Some(class) = class_of(req.uri().path()) else {
        return next.run(req).await;
    };
    let (Some(state), Some(user)) = (
        req.extensions().get::<AppState>().cloned(),
        req.extensions().get::<Arc<CurrentUser>>().cloned(),
    ) else {
        // A public route (not limited), or the app was built without the state extension.
        return next.run(req).await;
    };
    let Some(decision) = take(&state.reporting, class, &user.subject).await else {
        return next.run(req).await;
    };
    if !decision.allowed {
        let mut res = AppError::RateLimited {
            retry_after_secs: decision.wait_secs,
        }
        .into_response();
        decision.write(res.headers_mut());
        return res;
    }
    let mut res = next.run(req).await;
    decision.write(res.headers_mut());
    if res.status().is_success() && decision.wait_secs > 0 {
        let asked = res
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if asked.is_some_and(|asked| asked < decision.wait_secs) {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(decision.wait_secs));
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_by_route() {
        assert_eq!(class_of("/reporting/dashboard/metrics"), Some(DASHBOARD));
        assert_eq!(class_of("/reporting/listings"), Some(LISTINGS));
        assert_eq!(class_of("/reporting/listings/x"), Some(LISTINGS));
        assert_eq!(class_of("/reporting/sync/trigger"), Some(SYNC));
        assert_eq!(class_of("/reporting/sync/status/x"), Some(SYNC));
        assert_eq!(class_of("/reporting/reservations"), Some(DEFAULT));
        assert_eq!(class_of("/reporting/export"), Some(DEFAULT));
        assert_eq!(class_of("/reporting/export/x/download"), Some(DEFAULT));
        assert_eq!(
            class_of("/reporting/dashboard/reservations"),
            Some(DASHBOARD)
        );
        assert_eq!(class_of("/reporting/health"), None);
        assert_eq!(class_of("/inventory/items"), None);
    }
}
