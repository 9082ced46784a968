//! The answer cache of the reporting reads (spec/operations-apis.md, "Limits": listings 10
//! minutes, reservations 2, dashboard 5), in Redis so that every replica shares it. Keys, values
//! and invalidation are `jobs::reporting_cache` (the sync invalidates too); this is the route
//! layer that serves from it and fills it.
//!
//! Only GET answers with status 200 are stored, up to [`MAX_CACHED_BYTES`]. The generation is
//! read with the entry before the handler runs, so before it reads the database: an answer
//! computed from data older than an invalidation is stored under the older generation and never
//! served. Redis unreachable: every answer is computed (`X-Cache: MISS`), never a failure.

use axum::{
    body::{Body, HttpBody as _},
    extract::Request,
    http::{HeaderName, HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use jobs::reporting_cache::{self, Entry, Lookup};

use crate::{error::AppError, state::AppState};

/// Larger answers are served but not stored.
pub const MAX_CACHED_BYTES: usize = 8 * 1024 * 1024;

/// An invalidation waits longer than a read ([`super::REDIS_TIMEOUT`]): a stale answer served
/// for minutes costs more than a slow write.
const INVALIDATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// `HIT` for an answer from the cache, `MISS` for one computed now.
pub const X_CACHE: HeaderName = HeaderName::from_static("x-cache");

/// Route layer of the reporting router, inside the rate limits (a cached answer counts too).
pub async fn serve(req: Request, next: Next) -> Response {
    if req.method() != Method::GET {
        return next.run(req).await;
    }
    let path = req.uri().path().to_owned();
    let Some(ttl) = reporting_cache::ttl_of(&path) else {
        return next.run(req).await;
    };
    let Some(state) = req.extensions().get::<AppState>().cloned() else {
        return next.run(req).await;
    };
    let reporting = &state.reporting;
    let key = reporting_cache::entry_key(&reporting.prefix, &path, req.uri().query());
    let lookup = reporting
        .cache_gate
        .call(
            "answers not cached",
            reporting_cache::get(&reporting.redis, &reporting.prefix, &key),
        )
        .await;
    let generation = match lookup {
        Some(Lookup {
            hit: Some(entry), ..
        }) => return cached_answer(entry),
        Some(Lookup { generation, .. }) => Some(generation),
        None => None,
    };
    let res = next.run(req).await;
    let Some(generation) = generation.filter(|_| res.status() == StatusCode::OK) else {
        return miss(res);
    };
    let (mut parts, body) = res.into_parts();
    parts
        .headers
        .insert(X_CACHE, HeaderValue::from_static("MISS"));
    // The answers of these routes are whole strings: their size is known before reading them.
    let small = body
        .size_hint()
        .upper()
        .is_some_and(|size| size <= MAX_CACHED_BYTES as u64);
    if !small {
        return Response::from_parts(parts, body);
    }
    let bytes = match axum::body::to_bytes(body, MAX_CACHED_BYTES).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return AppError::Internal(anyhow::anyhow!("reading an answer to cache it: {e}"))
                .into_response();
        }
    };
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    reporting
        .cache_gate
        .call(
            "answer not cached",
            reporting_cache::put(
                &reporting.redis,
                &key,
                generation,
                content_type,
                &bytes,
                ttl,
            ),
        )
        .await;
    Response::from_parts(parts, Body::from(bytes))
}

/// The stored answer, as it was answered.
fn cached_answer(entry: Entry) -> Response {
    let content_type = HeaderValue::from_str(&entry.content_type)
        .unwrap_or_else(|_| HeaderValue::from_static("application/json"));
    let mut res = Response::new(Body::from(entry.body));
    res.headers_mut().insert(header::CONTENT_TYPE, content_type);
    res.headers_mut()
        .insert(X_CACHE, HeaderValue::from_static("HIT"));
    res
}

fn miss(mut res: Response) -> Response {
    res.headers_mut()
        .insert(X_CACHE, HeaderValue::from_static("MISS"));
    res
}

/// Makes every cached reporting answer stale, after a change they show (a listing linked to a
/// villa; the sync invalidates after a run itself). A failure is logged, not answered: the change
/// is committed, and the entries still expire after their duration.
pub async fn invalidate(state: &AppState, after: &str) {
    let reporting = &state.reporting;
    let done = tokio::time::timeout(
        INVALIDATE_TIMEOUT,
        reporting_cache::invalidate(&reporting.redis, &reporting.prefix),
    )
    .await;
    match done {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::error!(error = %e, "reporting: cached answers not invalidated after {after}");
        }
        Err(_) => tracing::error!(
            "reporting: cached answers not invalidated after {after}: Redis did not answer within {} ms",
            INVALIDATE_TIMEOUT.as_millis()
        ),
    }
}

#[cfg(test)]
mod tests {
    use jobs::reporting_cache::ttl_of;

    /// An export's answers change while its job runs, and its file is not JSON: never cached.
    #[test]
    fn exports_are_never_cached() {
        for path in [
            "/reporting/export",
            "/reporting/export/0198a000-0000-7000-8000-000000000001",
            "/reporting/export/0198a000-0000-7000-8000-000000000001/download",
        ] {
            assert_eq!(ttl_of(path), None, "{path}");
        }
        for path in [
            "/reporting/dashboard/metrics",
            "/reporting/dashboard/charts",
            "/reporting/dashboard/occupancy",
            "/reporting/dashboard/reservations",
        ] {
            assert!(ttl_of(path).is_some(), "{path}");
        }
    }
}
