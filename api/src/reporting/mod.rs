//! The reporting surface, mounted at `/reporting` (spec/operations-apis.md, "Reporting"): the
//! listings and reservations the PMS sync stores (`domain::reporting`), the dashboards of their
//! figures ([`dashboard`], one set of definitions: `domain::reporting::figures`), spreadsheet
//! exports made by jobs on the `exports` queue ([`export`], `jobs::exports`), the sync runs
//! themselves (jobs on the `pms` queue, `jobs::pms`), and health. Errors are `{error: {code,
//! message, retryAfter}}`.
//!
//! A route layer puts the per-caller rate limits ([`limits`]) on every route but health; inside
//! it, the listing, reservation and dashboard reads answer from the cache ([`cache`]) once they
//! have parsed their parameters, keyed on what they parsed (never the exports, whose state
//! changes while they are made); a cached answer still counts against its caller's limit. Both
//! keep their state in Redis so that every API replica shares one budget and one cache, and both
//! serve on, unlimited and uncached, while Redis is unreachable.

pub mod cache;
pub mod dashboard;
pub mod export;
pub mod health;
pub mod limits;
pub mod listings;
pub mod reservations;
pub mod statements;
pub mod sync;
pub mod webhooks;

use std::{
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    Json,
    http::{StatusCode, header},
    middleware,
    response::{IntoResponse, Response},
};
use redis::aio::ConnectionManager;
use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(sync::router())
        .merge(listings::router())
        .merge(reservations::router())
        .merge(dashboard::router())
        .merge(export::router())
        .merge(statements::router())
        .merge(health::router())
        // Route layers run only for matched routes, inside `auth::authorize` (the caller is
        // known).
        .route_layer(middleware::from_fn(limits::enforce))
        // Hostaway's deliveries carry no user's token, so no caller's limits: outside the layer.
        .merge(webhooks::router())
}

/// The answer to a request that started polled work (a sync run, an export): 202 with the work's
/// first state, `Location` naming its status route and `Retry-After` saying when to ask it.
pub fn accepted(location: String, retry_after_secs: u64, body: serde_json::Value) -> Response {
    (
        StatusCode::ACCEPTED,
        [
            (header::LOCATION, location),
            (header::RETRY_AFTER, retry_after_secs.to_string()),
        ],
        Json(body),
    )
        .into_response()
}

/// What the rate limits and the cache share: the Redis connection, the key prefix and what is
/// known of Redis' health.
pub struct Reporting {
    pub redis: ConnectionManager,
    /// `REDIS_QUEUE_PREFIX`: the keys are `{prefix}:reporting:...`.
    pub prefix: String,
    /// What the rate limits know of Redis' health, apart from the cache's: a slow cache write of
    /// a large answer must not switch the limits off.
    pub limits_gate: RedisGate,
    pub cache_gate: RedisGate,
}

impl Reporting {
    pub fn new(redis: ConnectionManager, prefix: &str) -> Self {
        Self {
            redis,
            prefix: prefix.to_owned(),
            limits_gate: RedisGate::default(),
            cache_gate: RedisGate::default(),
        }
    }
}

/// Every Redis call of a request waits at most this long.
pub const REDIS_TIMEOUT: Duration = Duration::from_millis(250);
/// After a failed Redis call, requests go without Redis this long (no time lost per request
/// while it is down), then try it again.
const REDIS_PAUSE: Duration = Duration::from_secs(5);
/// The failure is logged at most this often.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Whether the limits and the cache should try Redis now: not for a few seconds after a failure
/// (`REDIS_PAUSE`).
#[derive(Debug, Default)]
pub struct RedisGate(Mutex<GateState>);

#[derive(Debug, Default)]
struct GateState {
    closed_until: Option<Instant>,
    logged_at: Option<Instant>,
}

impl RedisGate {
    /// False while a recent failure says Redis is unreachable.
    pub fn open(&self) -> bool {
        let state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        state
            .closed_until
            .is_none_or(|until| Instant::now() >= until)
    }

    /// Records a failed call (`what` did not happen): Redis is left alone for a while, and the
    /// failure is logged unless one was logged recently.
    pub fn failed(&self, what: &str, error: &dyn std::fmt::Display) {
        let now = Instant::now();
        let log = {
            let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
            state.closed_until = Some(now + REDIS_PAUSE);
            let log = state
                .logged_at
                .is_none_or(|at| now.duration_since(at) >= LOG_EVERY);
            if log {
                state.logged_at = Some(now);
            }
            log
        };
        if log {
            tracing::warn!(%error, pause_secs = REDIS_PAUSE.as_secs(),
                "reporting: Redis unavailable, {what}; serving without it for a while");
        }
    }

    /// Runs one Redis call under [`REDIS_TIMEOUT`]; `None` (recorded as a failure) when it failed
    /// or took too long, or without trying while the gate is closed.
    pub async fn call<T>(
        &self,
        what: &str,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Option<T> {
        if !self.open() {
            return None;
        }
        match tokio::time::timeout(REDIS_TIMEOUT, call).await {
            Ok(Ok(value)) => Some(value),
            Ok(Err(e)) => {
                self.failed(what, &e);
                None
            }
            Err(_) => {
                let waited = format!("no answer within {} ms", REDIS_TIMEOUT.as_millis());
                self.failed(what, &waited);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_closes_the_gate_for_a_while() {
        let gate = RedisGate::default();
        assert!(gate.open());
        gate.failed("test", &"down");
        assert!(!gate.open());
    }
}
