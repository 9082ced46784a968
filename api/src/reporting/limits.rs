//! The reporting surface's rate limits (spec/operations-apis.md, "Limits"): per caller (the
//! token's subject) and per class of route, `/reporting/dashboard*` 120 requests a minute,
//! `/reporting/listings*` 60, `/reporting/sync/*` 5 and every other route 60; health is not
//! limited.
//!
//! "120 a minute" holds for every 60 seconds, not on average: each caller and class has a
//! sliding-window log in Redis (`jobs::sliding_window`, the PMS limiter's), under
//! `{prefix}:reporting:rate-log:<class>:<subject>`, one script per request on Redis' own clock, so
//! that every API replica shares one budget and replicas whose clocks differ still agree. A
//! request is admitted while fewer than the limit were admitted in the last 60 s; a refused one
//! waits for the oldest of those to leave the window, and does not count. While Redis is
//! unreachable requests are served unlimited ([`super::RedisGate`]): a limit is worth less than an
//! answer.

use std::{sync::Arc, time::Duration};

use axum::{
    extract::Request,
    http::{HeaderMap, HeaderName, HeaderValue, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use jobs::sliding_window::{self, Slot};

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
    /// Requests the caller may still send at once: the limit less those of the last minute.
    pub remaining: u64,
    /// Seconds until the whole allowance is back (the last admitted request leaves the window).
    pub reset_secs: u64,
    /// Refused: seconds until this request would be allowed, when the oldest request of the
    /// window leaves it (at least 1). Allowed: seconds until the next one would be (0 while some
    /// remain).
    pub wait_secs: u64,
}

impl Decision {
    /// The decision on a request of a class limited to `limit` a window, from the slot the log
    /// answered.
    fn of(limit: u32, slot: &Slot) -> Decision {
        let seconds = |d: Duration| u64::try_from(d.as_millis().div_ceil(1000)).unwrap_or(u64::MAX);
        let remaining = u64::from(limit).saturating_sub(slot.in_window);
        let wait_secs = if !slot.admitted {
            seconds(slot.oldest_leaves).max(1)
        } else if remaining == 0 {
            seconds(slot.oldest_leaves)
        } else {
            0
        };
        Decision {
            allowed: slot.admitted,
            limit,
            remaining,
            reset_secs: seconds(slot.newest_leaves),
            wait_secs,
        }
    }

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

/// The key of `subject`'s log for `class`. Not the `reporting:rate:` of the GCRA this log
/// replaced: a string left under that name for up to a minute after an upgrade would make every
/// script on it fail (a sorted-set command on a string), switching the limits off meanwhile.
fn key(prefix: &str, class: Class, subject: &str) -> String {
    format!("{prefix}:reporting:rate-log:{}:{subject}", class.name)
}

/// Takes one request of `class` from `subject`'s allowance; `None` when Redis could not say (the
/// request goes unlimited).
pub async fn take(reporting: &Reporting, class: Class, subject: &str) -> Option<Decision> {
    let key = key(&reporting.prefix, class, subject);
    let slot = reporting
        .limits_gate
        .call(
            "rate limits not applied",
            sliding_window::take(&reporting.redis, &key, class.limit, WINDOW),
        )
        .await?;
    Some(Decision::of(class.limit, &slot))
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
        let mut res = AppError::TooManyRequests {
            code: "RATE_LIMIT_EXCEEDED",
            message: "too many requests".to_owned(),
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

    #[test]
    fn decisions_from_the_log() {
        let slot = |admitted, in_window, oldest_ms, newest_ms| Slot {
            admitted,
            in_window,
            oldest_leaves: Duration::from_millis(oldest_ms),
            newest_leaves: Duration::from_millis(newest_ms),
        };
        // The first of the minute: the whole allowance is back in 60 s.
        let first = Decision::of(5, &slot(true, 1, 60_000, 60_000));
        assert_eq!((first.allowed, first.remaining), (true, 4));
        assert_eq!((first.reset_secs, first.wait_secs), (60, 0));
        // The last one the window holds: the next waits for the oldest to leave it.
        let last = Decision::of(5, &slot(true, 5, 47_200, 60_000));
        assert_eq!((last.allowed, last.remaining), (true, 0));
        assert_eq!((last.reset_secs, last.wait_secs), (60, 48));
        // Refused: a slot frees when the oldest leaves; never less than a second.
        let refused = Decision::of(5, &slot(false, 5, 47_200, 59_000));
        assert_eq!((refused.allowed, refused.remaining), (false, 0));
        assert_eq!((refused.reset_secs, refused.wait_secs), (59, 48));
        assert_eq!(Decision::of(5, &slot(false, 5, 1, 900)).wait_secs, 1);
        // A limit lowered below what the window holds: nothing remains, not an underflow.
        assert_eq!(Decision::of(5, &slot(false, 9, 1_000, 2_000)).remaining, 0);
    }
}
