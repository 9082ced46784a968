//! In-memory request monitoring (onboarding spec, "Internal and monitoring"): the last 100
//! requests, call counts and latency per route, and the requests slower than a threshold
//! (`SLOW_REQUEST_MS`). Lost on restart by design; per process, not shared between replicas.
//! (The Prometheus HTTP metrics are recorded further out, in `http::log_requests`, so that they
//! see the answers of the panic, timeout and body-limit layers too.)

use std::{
    collections::{HashMap, VecDeque},
    net::SocketAddr,
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    extract::{ConnectInfo, MatchedPath, Request, State},
    middleware::Next,
    response::Response,
};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{http::REQUEST_ID, state::AppState};

/// How many requests (and slow requests) are kept.
pub const HISTORY: usize = 100;

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    /// The route as registered (`/api/villas/{id}`); `null` for unknown routes.
    pub route: Option<String>,
    pub status: u16,
    pub duration_ms: f64,
    pub client_address: Option<String>,
    pub request_id: Option<String>,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteStats {
    pub method: String,
    pub route: String,
    pub calls: u64,
    /// Responses with a 4xx or 5xx status.
    pub errors: u64,
    pub average_ms: f64,
    pub max_ms: f64,
    #[serde(skip)]
    total_ms: f64,
}

#[derive(Default)]
struct Inner {
    recent: VecDeque<RequestRecord>,
    slow: VecDeque<RequestRecord>,
    routes: HashMap<(String, String), RouteStats>,
}

pub struct Monitor {
    inner: Mutex<Inner>,
    slow_threshold: Duration,
    started: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MonitoringSnapshot {
    pub since: DateTime<Utc>,
    pub slow_threshold_ms: u64,
    pub total_requests: u64,
    /// Newest first.
    pub recent_requests: Vec<RequestRecord>,
    /// Most called first.
    pub routes: Vec<RouteStats>,
    /// Newest first.
    pub slow_requests: Vec<RequestRecord>,
}

impl Monitor {
    pub fn new(slow_threshold: Duration) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            slow_threshold,
            started: Utc::now(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding this lock cannot leave the statistics inconsistent in a way that
        // matters; keep serving them.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn record(&self, r: RequestRecord) {
        let slow = r.duration_ms >= self.slow_threshold.as_secs_f64() * 1000.0;
        let mut inner = self.lock();
        if let Some(route) = &r.route {
            let s = inner
                .routes
                .entry((r.method.clone(), route.clone()))
                .or_insert_with(|| RouteStats {
                    method: r.method.clone(),
                    route: route.clone(),
                    ..RouteStats::default()
                });
            s.calls += 1;
            if r.status >= 400 {
                s.errors += 1;
            }
            s.total_ms += r.duration_ms;
            s.max_ms = s.max_ms.max(r.duration_ms);
            s.average_ms = s.total_ms / s.calls as f64;
        }
        if slow {
            if inner.slow.len() == HISTORY {
                inner.slow.pop_back();
            }
            inner.slow.push_front(r.clone());
        }
        if inner.recent.len() == HISTORY {
            inner.recent.pop_back();
        }
        inner.recent.push_front(r);
    }

    pub fn snapshot(&self) -> MonitoringSnapshot {
        let inner = self.lock();
        let mut routes: Vec<RouteStats> = inner.routes.values().cloned().collect();
        routes.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.route.cmp(&b.route)));
        MonitoringSnapshot {
            since: self.started,
            slow_threshold_ms: u64::try_from(self.slow_threshold.as_millis()).unwrap_or(u64::MAX),
            total_requests: routes.iter().map(|r| r.calls).sum(),
            recent_requests: inner.recent.iter().cloned().collect(),
            routes,
            slow_requests: inner.slow.iter().cloned().collect(),
        }
    }
}

/// Middleware on every route: records the request once its response is ready.
pub async fn record(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().to_string();
    let path = crate::http::loggable_path(req.uri().path());
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned());
    let client_address = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip().to_string());
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let res = next.run(req).await;
    let elapsed = started.elapsed();
    let status = res.status().as_u16();
    state.monitor.record(RequestRecord {
        method,
        path,
        route,
        status,
        duration_ms: elapsed.as_secs_f64() * 1000.0,
        client_address,
        request_id,
        at: Utc::now(),
    });
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: usize, ms: f64) -> RequestRecord {
        RequestRecord {
            method: "GET".into(),
            path: format!("/api/villas/{i}"),
            route: Some("/api/villas/{id}".into()),
            status: if i.is_multiple_of(10) { 404 } else { 200 },
            duration_ms: ms,
            client_address: None,
            request_id: None,
            at: Utc::now(),
        }
    }

    #[test]
    fn keeps_the_last_hundred_and_counts_every_call() {
        let m = Monitor::new(Duration::from_millis(50));
        for i in 0..150 {
            m.record(rec(i, if i == 149 { 80.0 } else { 1.0 }));
        }
        let s = m.snapshot();
        assert_eq!(s.recent_requests.len(), HISTORY);
        assert_eq!(s.recent_requests[0].path, "/api/villas/149");
        assert_eq!(s.routes[0].calls, 150);
        assert_eq!(s.routes[0].errors, 15);
        assert_eq!(s.slow_requests.len(), 1);
    }
}
