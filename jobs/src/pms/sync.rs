//! One attempt of a sync run ([`super::SyncPms`]): the listings by offset pages, then the
//! reservations by `afterId` pages, each page mapped (`domain::reporting::hostaway`), upserted and
//! recorded (progress and resume point, `sync_runs::save_page`) in one transaction. A later
//! attempt, after a crash or a failure, resumes from the saved point; a record already stored
//! and met again is upserted again (its newest data wins) but counted once.
//!
//! Throughput: while a page is being stored, the next one is already being fetched (its cursor is
//! known as soon as the page arrives), so a sync takes about the longer of the PMS's time and
//! Postgres's, not their sum.
//!
//! Reservations are read oldest activity first: one that changes during the pass moves behind the
//! cursor and is met again with its change. Only the record the cursor names moving can hide
//! records (the PMS then answers what follows its new place); so when a pass met fewer distinct
//! reservations than the PMS counts, another pass reads them from the start (at most
//! [`MAX_PASSES`]).

use std::{collections::HashSet, time::Instant};

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use domain::reporting::{
    UpsertCounts,
    hostaway::{self, ListingRecord, ReservationRecord},
    listings, reservations,
    sync_runs::{self, Entity, PageDone, RunState, SyncKind},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use super::client::{PmsClient, PmsError, PmsPage, int_of};
use crate::{JobContext, JobError};

/// Passes over the reservations, at most, in one run.
pub const MAX_PASSES: u32 = 3;
/// How long the invalidation of the reporting cache may take before the run completes anyway.
const INVALIDATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Where a run stands, saved with each page (`pms_sync_runs.cursor`, private to the worker).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Cursor {
    pub listings: ListingsCursor,
    pub reservations: ReservationsCursor,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ListingsCursor {
    /// The offset of the next page.
    pub offset: u64,
    pub done: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ReservationsCursor {
    /// The last id received: the next page follows it. `None` at the start of a pass.
    pub after_id: Option<i64>,
    pub done: bool,
    /// Passes finished.
    pub passes: u32,
    /// Distinct reservations met by the run so far.
    pub met: u64,
    /// The most reservations the PMS counted (its `count`) during the run.
    pub expected: Option<i64>,
}

impl Cursor {
    /// The saved cursor; one that does not read (`{}` at first, or written by another version)
    /// starts over, which stores nothing twice (upserts by PMS id).
    pub(crate) fn from_value(value: &Value, sync_id: Uuid) -> Cursor {
        match serde_json::from_value(value.clone()) {
            Ok(cursor) => cursor,
            Err(error) => {
                tracing::warn!(%sync_id, %error, "the sync's saved cursor does not read; starting over");
                Cursor::default()
            }
        }
    }

    fn to_value(self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({}))
    }
}

/// What one entity's part of an attempt did.
#[derive(Debug, Default, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
struct Totals {
    fetched: i64,
    created: i64,
    updated: i64,
    unchanged: i64,
    /// Records that do not map (no id, no dates): logged and left out.
    skipped: i64,
    pages: i64,
}

impl Totals {
    fn add(&mut self, fetched: usize, counts: UpsertCounts, skipped: usize) {
        self.fetched += count(fetched);
        self.created += counts.created;
        self.updated += counts.updated;
        self.unchanged += counts.unchanged;
        self.skipped += count(skipped);
        self.pages += 1;
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Why an attempt stopped.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    Pms(#[from] PmsError),
    #[error(transparent)]
    Domain(#[from] domain::Error),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Domain(e.into())
    }
}

impl Failure {
    /// Refused credentials fail the run at once (no attempt can succeed until someone changes
    /// them); the PMS or the database being away is tried again with the job's backoff.
    fn into_job_error(self) -> JobError {
        match self {
            Failure::Pms(e @ (PmsError::Unauthorized(_) | PmsError::NotConfigured)) => {
                JobError::fatal(e.to_string())
            }
            Failure::Pms(e) => JobError::retry(e.to_string()),
            Failure::Domain(e) => JobError::from(e),
        }
    }
}

/// Runs (or resumes) the sync run `sync_id`. On a failure that ends the job (a fatal one, or the
/// last attempt), the run is marked FAILED with the reason before the error is returned.
pub(super) async fn run(sync_id: Uuid, ctx: &JobContext) -> Result<Value, JobError> {
    let started = Instant::now();
    let state = {
        let mut conn = ctx.pool.acquire().await?;
        sync_runs::begin(&mut conn, sync_id).await?
    };
    let Some(state) = state else {
        return Ok(json!({"syncId": sync_id, "skipped": "the run is already finished"}));
    };
    let services = &ctx.services;
    let outcome = match PmsClient::new(
        &services.pms,
        ctx.pool.clone(),
        services.redis.clone(),
        &services.redis_prefix,
        services.cipher.clone(),
        services.http.clone(),
    ) {
        Some(client) => {
            Attempt {
                ctx,
                client,
                id: sync_id,
                page_size: services.pms.page_size.max(1),
                cursor: Cursor::from_value(&state.cursor, sync_id),
            }
            .run(&state)
            .await
        }
        None => Err(Failure::Pms(PmsError::NotConfigured)),
    };
    match outcome {
        Ok(mut result) => {
            result["millis"] =
                json!(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
            Ok(result)
        }
        Err(failure) => {
            let error = failure.into_job_error();
            if !error.retryable || ctx.attempt >= ctx.max_attempts {
                mark_failed(ctx, sync_id, &error.message).await;
            } else {
                tracing::warn!(%sync_id, attempt = ctx.attempt, error = %error.message,
                    "PMS sync attempt failed; the job will resume it");
            }
            Err(error)
        }
    }
}

/// Marks the run FAILED. A failure to do so is logged: the run still reads FAILED once its job
/// does (`sync_runs::status`).
async fn mark_failed(ctx: &JobContext, sync_id: Uuid, reason: &str) {
    tracing::warn!(%sync_id, %reason, "PMS sync failed");
    let marked = async {
        let mut conn = ctx.pool.acquire().await?;
        sync_runs::fail(&mut conn, sync_id, reason).await
    }
    .await;
    if let Err(error) = marked {
        tracing::warn!(%sync_id, %error, "the failed sync run could not be marked FAILED");
    }
}

/// One attempt of one run.
struct Attempt<'a> {
    ctx: &'a JobContext,
    client: PmsClient,
    id: Uuid,
    page_size: u32,
    cursor: Cursor,
}

impl Attempt<'_> {
    async fn run(mut self, state: &RunState) -> Result<Value, Failure> {
        let wants = |entity: Entity| state.entities.contains(&entity);
        let since = if wants(Entity::Reservations) {
            self.activity_since(state).await?
        } else {
            None
        };
        let listings = if wants(Entity::Listings) {
            Some(self.listings().await?)
        } else {
            None
        };
        let reservations = if wants(Entity::Reservations) {
            Some(self.reservations(since.map(|t| t.date_naive())).await?)
        } else {
            None
        };
        // Every page is committed. The cache goes before the run says COMPLETED, so that a client
        // that sees COMPLETED never reads an answer cached before it.
        let services = &self.ctx.services;
        match tokio::time::timeout(
            INVALIDATE_TIMEOUT,
            crate::reporting_cache::invalidate(&services.redis, &services.redis_prefix),
        )
        .await
        {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => {
                tracing::warn!(sync_id = %self.id, %error, "reporting cache not invalidated after a sync; entries expire on their own");
            }
            Err(_) => {
                tracing::warn!(sync_id = %self.id, "reporting cache invalidation timed out; entries expire on their own");
            }
        }
        let mut conn = self.ctx.pool.acquire().await?;
        sync_runs::complete(&mut conn, self.id).await?;
        Ok(json!({
            "syncId": self.id,
            "type": state.kind.as_str(),
            "activitySince": since,
            "listings": listings,
            "reservations": reservations,
            "passes": self.cursor.reservations.passes,
        }))
    }

    /// The activity an incremental run asks for: since the last completed sync of the
    /// reservations started, less `PMS_SYNC_MARGIN_SECS`; kept in the run so that a resumed
    /// attempt asks for the same. `None` (everything) for a full run, or before any such sync.
    async fn activity_since(&self, state: &RunState) -> Result<Option<DateTime<Utc>>, Failure> {
        if state.activity_since.is_some() || state.kind != SyncKind::Incremental {
            return Ok(state.activity_since);
        }
        let mut conn = self.ctx.pool.acquire().await?;
        let Some(last) = sync_runs::incremental_since(&mut conn).await? else {
            return Ok(None);
        };
        let margin =
            TimeDelta::from_std(self.ctx.services.pms.sync_margin).unwrap_or(TimeDelta::MAX);
        let since = last.checked_sub_signed(margin);
        if since.is_some() {
            sync_runs::set_activity_since(&mut conn, self.id, since).await?;
        }
        Ok(since)
    }

    /// Every listing, by offset pages (the list is small: read in full by every run).
    async fn listings(&mut self) -> Result<Totals, Failure> {
        let mut totals = Totals::default();
        if self.cursor.listings.done {
            return Ok(totals);
        }
        let limit = self.page_size;
        let mut seen = HashSet::new();
        let mut page = self
            .client
            .listings_page(self.cursor.listings.offset, limit)
            .await?;
        loop {
            let received = page.records.len();
            let offset = self.cursor.listings.offset + u64::try_from(received).unwrap_or(0);
            let done = received == 0
                || match page.count {
                    Some(count) => offset >= u64::try_from(count).unwrap_or(0),
                    None => received < limit_len(limit),
                };
            let pages_total = pages_total(&page, limit);
            let mapped = split(
                page.records,
                hostaway::map_listing,
                |r| r.pms_id,
                &mut seen,
                "listing",
                self.id,
            );
            self.cursor.listings = ListingsCursor { offset, done };
            let cursor = self.cursor.to_value();
            let client = &self.client;
            let next = async {
                if done {
                    None
                } else {
                    Some(client.listings_page(offset, limit).await)
                }
            };
            let (stored, next) =
                tokio::join!(self.store_listings(&mapped, pages_total, &cursor), next);
            totals.add(mapped.fresh.len(), stored?, mapped.skipped);
            match next {
                None => return Ok(totals),
                Some(next) => page = next?,
            }
        }
    }

    /// The reservations (those with activity since `since` when given), by `afterId` pages in
    /// the order of their last change.
    async fn reservations(&mut self, since: Option<NaiveDate>) -> Result<Totals, Failure> {
        let mut totals = Totals::default();
        if self.cursor.reservations.done {
            return Ok(totals);
        }
        let limit = self.page_size;
        // Distinct reservations met by earlier attempts (this one's are in `seen`).
        let met_before = self.cursor.reservations.met;
        let mut seen = HashSet::new();
        let mut pages_in_pass = 0u64;
        let mut page = self
            .client
            .reservations_page(self.cursor.reservations.after_id, limit, since)
            .await?;
        loop {
            let mut state = self.cursor.reservations;
            let received = page.records.len();
            pages_in_pass += 1;
            let last_id = page
                .records
                .iter()
                .rev()
                .find_map(|r| r.get("id").and_then(int_of));
            state.expected = state.expected.max(page.count);
            let pages_total = pages_total(&page, limit);
            let mapped = split(
                page.records,
                hostaway::map_reservation,
                |r| r.pms_id,
                &mut seen,
                "reservation",
                self.id,
            );
            state.met = met_before + u64::try_from(seen.len()).unwrap_or(0);
            let expected = state.expected.map(|c| u64::try_from(c).unwrap_or(0));
            // A PMS that answers the same page again (it ignores the cursor), or pages without
            // end, ends the pass rather than the worker.
            let stuck = received > 0 && (last_id.is_none() || last_id == state.after_id);
            let endless = pages_in_pass > page_bound(expected, limit);
            if stuck || endless {
                tracing::warn!(sync_id = %self.id, ?last_id, pages_in_pass, "the PMS's reservation pages do not advance; ending the pass");
            }
            // The pass is over at an empty page, or at a short one once every record counted was
            // met (a short page alone may be a PMS capping `limit`).
            let over = received == 0
                || stuck
                || endless
                || (received < limit_len(limit) && expected.is_some_and(|c| state.met >= c));
            let fetch_after = if !over {
                state.after_id = last_id;
                Some(last_id)
            } else {
                state.passes += 1;
                if expected.is_some_and(|c| state.met < c) && state.passes < MAX_PASSES {
                    tracing::info!(sync_id = %self.id, met = state.met, expected = ?state.expected, passes = state.passes,
                        "reservations moved during the pass; reading them again from the start");
                    state.after_id = None;
                    pages_in_pass = 0;
                    Some(None)
                } else {
                    state.done = true;
                    None
                }
            };
            self.cursor.reservations = state;
            let client = &self.client;
            let next = async {
                match fetch_after {
                    Some(after) => Some(client.reservations_page(after, limit, since).await),
                    None => None,
                }
            };
            if received == 0 {
                // Nothing to store: the new cursor is saved with the next page that has records
                // (an attempt resumed before that asks for this empty page again).
                match next.await {
                    None => return Ok(totals),
                    Some(next) => {
                        page = next?;
                        continue;
                    }
                }
            }
            let cursor = self.cursor.to_value();
            let (stored, next) =
                tokio::join!(self.store_reservations(&mapped, pages_total, &cursor), next);
            totals.add(mapped.fresh.len(), stored?, mapped.skipped);
            match next {
                None => return Ok(totals),
                Some(next) => page = next?,
            }
        }
    }

    /// Stores a page of listings and the run's progress, in one transaction.
    async fn store_listings(
        &self,
        split: &Split<ListingRecord>,
        pages_total: Option<i64>,
        cursor: &Value,
    ) -> Result<UpsertCounts, Failure> {
        let mut tx = self.ctx.pool.begin().await?;
        let counts = if split.fresh.is_empty() {
            UpsertCounts::default()
        } else {
            listings::upsert_listings(&mut tx, &split.fresh).await?
        };
        if !split.again.is_empty() {
            listings::upsert_listings(&mut tx, &split.again).await?;
        }
        let page = PageDone {
            entity: Entity::Listings,
            counts,
            fetched: count(split.fresh.len()),
            pages_total,
            cursor,
        };
        sync_runs::save_page(&mut tx, self.id, &page).await?;
        tx.commit().await?;
        Ok(counts)
    }

    /// Stores a page of reservations and the run's progress, in one transaction.
    async fn store_reservations(
        &self,
        split: &Split<ReservationRecord>,
        pages_total: Option<i64>,
        cursor: &Value,
    ) -> Result<UpsertCounts, Failure> {
        let mut tx = self.ctx.pool.begin().await?;
        let counts = if split.fresh.is_empty() {
            UpsertCounts::default()
        } else {
            reservations::upsert_reservations(&mut tx, &split.fresh).await?
        };
        if !split.again.is_empty() {
            reservations::upsert_reservations(&mut tx, &split.again).await?;
        }
        let page = PageDone {
            entity: Entity::Reservations,
            counts,
            fetched: count(split.fresh.len()),
            pages_total,
            cursor,
        };
        sync_runs::save_page(&mut tx, self.id, &page).await?;
        tx.commit().await?;
        Ok(counts)
    }
}

/// A page's records, mapped: those the run meets for the first time (counted), those it met
/// before (stored again, for their newest data, but not counted), and how many did not map.
struct Split<R> {
    fresh: Vec<R>,
    again: Vec<R>,
    skipped: usize,
}

fn split<R>(
    records: Vec<Value>,
    map: fn(Value) -> Result<R, String>,
    pms_id: fn(&R) -> i64,
    seen: &mut HashSet<i64>,
    what: &str,
    sync_id: Uuid,
) -> Split<R> {
    let mut split = Split {
        fresh: Vec::with_capacity(records.len()),
        again: Vec::new(),
        skipped: 0,
    };
    for raw in records {
        match map(raw) {
            Ok(record) if seen.insert(pms_id(&record)) => split.fresh.push(record),
            Ok(record) => split.again.push(record),
            Err(why) => {
                split.skipped += 1;
                tracing::warn!(%sync_id, %why, "a PMS {what} does not map; skipped");
            }
        }
    }
    split
}

fn limit_len(limit: u32) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The pages the PMS announces: its `totalPages`, else its `count` over the page size.
fn pages_total(page: &PmsPage, limit: u32) -> Option<i64> {
    page.total_pages.or_else(|| {
        let count = u64::try_from(page.count?.max(0)).ok()?;
        i64::try_from(count.div_ceil(u64::from(limit.max(1)))).ok()
    })
}

/// More pages than this in one pass means the PMS is not advancing: three times what its count
/// needs, and some. Without a count, only a page that repeats ends a pass early.
fn page_bound(expected: Option<u64>, limit: u32) -> u64 {
    match expected {
        Some(expected) => (expected / u64::from(limit.max(1)) + 1)
            .saturating_mul(3)
            .saturating_add(10),
        None => u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_round_trips_and_starts_empty() {
        let id = Uuid::nil();
        assert_eq!(Cursor::from_value(&json!({}), id), Cursor::default());
        let cursor = Cursor {
            listings: ListingsCursor {
                offset: 100,
                done: true,
            },
            reservations: ReservationsCursor {
                after_id: Some(4711),
                done: false,
                passes: 1,
                met: 250,
                expected: Some(1200),
            },
        };
        let saved = cursor.to_value();
        assert_eq!(
            saved,
            json!({
                "listings": {"offset": 100, "done": true},
                "reservations": {"afterId": 4711, "done": false, "passes": 1, "met": 250,
                    "expected": 1200},
            })
        );
        assert_eq!(Cursor::from_value(&saved, id), cursor);
    }

    #[test]
    fn a_partial_or_foreign_cursor_reads_with_defaults() {
        let id = Uuid::nil();
        let partial = Cursor::from_value(&json!({"listings": {"offset": 50, "done": false}}), id);
        assert_eq!(partial.listings.offset, 50);
        assert_eq!(partial.reservations, ReservationsCursor::default());
        let started = Cursor::from_value(
            &json!({"reservations": {"afterId": null, "passes": 2}, "other": 1}),
            id,
        );
        assert_eq!(started.reservations.after_id, None);
        assert_eq!(started.reservations.passes, 2);
        // Unreadable: start over.
        assert_eq!(
            Cursor::from_value(&json!({"listings": {"offset": "ten"}}), id),
            Cursor::default()
        );
        assert_eq!(Cursor::from_value(&json!([1, 2]), id), Cursor::default());
    }

    #[test]
    fn pages_total_comes_from_the_answer_or_its_count() {
        let page = |count, total_pages| PmsPage {
            records: Vec::new(),
            count,
            total_pages,
        };
        assert_eq!(pages_total(&page(Some(101), Some(7)), 50), Some(7));
        assert_eq!(pages_total(&page(Some(101), None), 50), Some(3));
        assert_eq!(pages_total(&page(Some(100), None), 50), Some(2));
        assert_eq!(pages_total(&page(Some(0), None), 50), Some(0));
        assert_eq!(pages_total(&page(None, None), 50), None);
    }

    #[test]
    fn a_pass_is_bounded_by_what_the_pms_counts() {
        assert_eq!(page_bound(Some(1000), 100), 43);
        assert_eq!(page_bound(Some(0), 100), 13);
        assert_eq!(page_bound(None, 100), u64::MAX);
    }

    #[test]
    fn records_met_again_are_stored_but_not_counted() {
        let mut seen = HashSet::new();
        let records = vec![json!(1), json!(2), json!("bad"), json!(1)];
        let map = |v: Value| v.as_i64().ok_or_else(|| "no id".to_owned());
        let first = split(records, map, |id| *id, &mut seen, "record", Uuid::nil());
        assert_eq!(
            (first.fresh, first.again, first.skipped),
            (vec![1, 2], vec![1], 1)
        );
        let second = split(
            vec![json!(2), json!(3)],
            map,
            |id| *id,
            &mut seen,
            "record",
            Uuid::nil(),
        );
        assert_eq!((second.fresh, second.again), (vec![3], vec![2]));
    }
}
