//! The answer cache of the reporting reads (spec/operations-apis.md, "Limits": listings 10
//! minutes, reservations 2, dashboard 5), in Redis so that every replica shares it. Keys, values
//! and invalidation are `jobs::reporting_cache` (the sync invalidates too); this is what the
//! handlers serve from it and fill it with ([`answer`]).
//!
//! An answer is keyed on what its handler parsed ([`CacheKey`]), never on the query text: a
//! parameter the route does not read (`?x=1`, a client's cache-buster) is ignored, as every
//! route ignores it, and makes no entry of its own; two spellings of one value (`status=active`
//! and `ACTIVE`, an omitted currency and the default one) are one entry; and a default that
//! follows the company's day (a period ending today, the stays from today) is keyed by the date
//! it stood for, so that an entry made before midnight is not served after it.
//!
//! Only answers with status 200 are stored, up to [`MAX_CACHED_BYTES`]. The generation is read
//! with the entry before the handler's work runs, so before it reads the database: an answer
//! computed from data older than an invalidation is stored under the older generation and never
//! served. Redis unreachable: every answer is computed (`X-Cache: MISS`), never a failure.

use std::fmt::Display;

use axum::{
    body::{Body, HttpBody as _},
    http::{HeaderName, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use chrono::NaiveDate;
use domain::{pagination::PageRequest, reporting::figures::Period};
use jobs::reporting_cache::{self, Entry, Lookup};
use uuid::Uuid;

use crate::{error::AppError, state::AppState};

/// Larger answers are served but not stored.
pub const MAX_CACHED_BYTES: usize = 8 * 1024 * 1024;

/// An invalidation waits longer than a read ([`super::REDIS_TIMEOUT`]): a stale answer served
/// for minutes costs more than a slow write.
const INVALIDATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// `HIT` for an answer from the cache, `MISS` for one computed now.
pub const X_CACHE: HeaderName = HeaderName::from_static("x-cache");

/// The version of the cached answers' shapes, part of every key: raise it when a cached route
/// answers a new shape, so that a release never serves an answer stored by the one before it
/// (2: `/dashboard/occupancy` has each listing's `nightly`).
const ANSWER_SHAPES: u32 = 2;

/// What a cached answer is keyed on: the route's path with its ids as parsed, then every
/// parameter its handler read, as parsed (defaults applied, in one spelling), in the order the
/// handler adds them. Each value is percent-encoded, so no value can pass for another parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    path: String,
    params: Vec<(&'static str, String)>,
}

impl CacheKey {
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            params: Vec::new(),
        }
    }

    pub fn param(mut self, name: &'static str, value: impl Display) -> Self {
        self.params.push((name, value.to_string()));
        self
    }

    /// A filter: absent (no filter) leaves it out.
    pub fn filter(self, name: &'static str, value: Option<impl Display>) -> Self {
        match value {
            Some(value) => self.param(name, value),
            None => self,
        }
    }

    /// `page` and `limit`, defaults applied.
    pub fn page(self, page: PageRequest) -> Self {
        self.param("page", page.page).param("limit", page.limit)
    }

    /// `startDate` and `endDate` as the period they stood for: with a default, the dates of that
    /// day.
    pub fn period(self, period: Period) -> Self {
        self.param("startDate", period.start)
            .param("endDate", period.end)
    }

    /// The company's date the answer was computed on (`BUSINESS_TIME_ZONE`), for an answer that
    /// depends on it otherwise than through a period.
    pub fn today(self, today: NaiveDate) -> Self {
        self.param("today", today)
    }

    /// `listingIds` as parsed (each once, in their order: the answer echoes them); none, every
    /// ACTIVE listing.
    pub fn listing_ids(self, ids: &[Uuid]) -> Self {
        if ids.is_empty() {
            return self;
        }
        let ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        self.param("listingIds", ids.join(","))
    }

    /// `<path>?<name>=<value>&...`, the request part of the entry's key.
    fn request(&self) -> String {
        let query = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(
                self.params
                    .iter()
                    .map(|(name, value)| (*name, value.as_str())),
            )
            .finish();
        format!("{}?{query}", self.path)
    }
}

/// The answer under `key`: from the cache when it holds a current one (`X-Cache: HIT`), else
/// computed by `work` (`X-Cache: MISS`) and, when 200 and small enough, stored for the route's
/// duration. `work` runs only on a miss and after the generation was read. Call it once the
/// request's parameters are parsed: a refused request never reaches the cache.
pub async fn answer<R: IntoResponse>(
    state: &AppState,
    key: CacheKey,
    work: impl Future<Output = Result<R, AppError>>,
) -> Response {
    let Some(ttl) = reporting_cache::ttl_of(&key.path) else {
        return miss(work.await.into_response());
    };
    let reporting = &state.reporting;
    let key = reporting_cache::entry_key(
        &reporting.prefix,
        &format!("v{ANSWER_SHAPES}:{}", key.request()),
    );
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
    let res = work.await.into_response();
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

    use super::*;

    fn date(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn keys_hold_the_parsed_parameters_in_the_handlers_order() {
        let key = CacheKey::new("/reporting/listings")
            .page(PageRequest { page: 2, limit: 20 })
            .filter("status", Some("ACTIVE"))
            .filter("search", None::<&str>)
            .period(Period {
                start: date("2026-03-01"),
                end: date("2026-03-30"),
            })
            .param("currency", "THB");
        assert_eq!(
            key.request(),
            "/reporting/listings?page=2&limit=20&status=ACTIVE&startDate=2026-03-01&endDate=2026-03-30&currency=THB"
        );
        // A value cannot pass for another parameter.
        let forged = CacheKey::new("/reporting/listings").filter("search", Some("a&status=ACTIVE"));
        assert_eq!(
            forged.request(),
            "/reporting/listings?search=a%26status%3DACTIVE"
        );
        let id: Uuid = "0198a000-0000-7000-8000-000000000001".parse().unwrap();
        assert_eq!(
            CacheKey::new("/reporting/dashboard/occupancy")
                .listing_ids(&[id, id])
                .listing_ids(&[])
                .request(),
            format!("/reporting/dashboard/occupancy?listingIds={id}%2C{id}")
        );
    }

    /// The defaults that follow the company's day are keyed by the date they stood for: the
    /// same request made the day after is another entry.
    #[test]
    fn a_default_of_today_is_keyed_by_the_date() {
        let defaulted = |today: &str| {
            let mut problems = domain::Problems::new();
            let period = Period::parse(&mut problems, None, None, date(today), 366).unwrap();
            CacheKey::new("/reporting/dashboard/metrics")
                .period(period)
                .request()
        };
        assert_eq!(
            defaulted("2026-03-30"),
            "/reporting/dashboard/metrics?startDate=2026-03-01&endDate=2026-03-30"
        );
        assert_ne!(defaulted("2026-03-30"), defaulted("2026-03-31"));
        let upcoming = |today: &str| {
            CacheKey::new("/reporting/dashboard/reservations")
                .today(date(today))
                .request()
        };
        assert_ne!(upcoming("2026-03-30"), upcoming("2026-03-31"));
    }

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
