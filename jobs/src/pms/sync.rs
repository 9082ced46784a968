//! One attempt of a sync run ([`super::SyncPms`]): the listings by offset pages, then the
//! reservations by `afterId` pages, each page mapped (`domain::reporting::hostaway`), upserted and
//! recorded (progress and resume point, `sync_runs::save_page`) in one transaction. A later
//! attempt, after a crash or a failure, resumes from the saved point.
//!
//! Counting: a record met again (it moved behind the cursor, a later pass, an attempt resuming
//! after another) is upserted again (its newest data wins) but counted once. Which records the run
//! has met is kept in Postgres (`sync_runs::first_met`, in the page's transaction), not in the
//! worker, so the counts are exact across attempts and workers; a record that does not map counts
//! as met too (by its raw `id`), else every run would read the reservations again for it.
//!
//! One attempt at a time: the attempt names itself when it takes the run (`<worker>#<attempt>`),
//! and a page or the completion of an attempt that lost the run (its lease lapsed and another
//! attempt took the run over) is refused: that attempt stops without touching the run.
//!
//! Throughput: while a page of listings is being stored, the next one is already being fetched
//! (its offset is known as soon as the page arrives), so that part takes about the longer of the
//! PMS's time and Postgres's, not their sum.
//!
//! The reservations (most of a sync) go through a pipeline two pages deep: with one page's
//! transaction at a time, the sync waited on round trips (Postgres busy two thirds of one core,
//! the worker a fifth of another). Each page is fetched, parsed and mapped in a task of its own as
//! soon as the page before it arrived (its `afterId` is that page's last id), and stored by a task
//! of its own; so the worker's work on a page, Postgres's on the page before and the commit of the
//! one before that overlap, on more than one core. What a page stored alone guaranteed holds:
//! - A page's transaction may write its records beside the transaction of the page before it, but
//!   saves its progress and resume point, and commits, only once that one committed, building on
//!   what that one saved (the records met); if that one did not commit, it rolls back. So the
//!   resume point never passes a page that is not stored, and pages are counted in order.
//! - The two transactions touch different rows: a page holding a record that the page before it
//!   holds too (the record moved between the two requests) begins only once that one committed;
//!   the run's row is written by a page only once the page before it committed.
//! - Postgres sees the wait of a page for the page before it: the earlier holds an advisory lock
//!   for its whole transaction, which the later takes (shared) before it waits for its outcome. A
//!   cycle of waits through another transaction (a second attempt of the run, after a lapsed
//!   lease, storing the same records) is then a deadlock that Postgres breaks, not a hang.
//! - A page that may end a pass (short, empty, or not advancing) is stored alone, once every page
//!   before it committed, since whether the pass is over depends on the records met; so is every
//!   other decision that reads them. A page that fails stops the page after it, whose transaction,
//!   not committed, rolls back as its task is dropped; a PMS that fails lets the page in flight
//!   commit first (the next attempt resumes after it).
//!
//! Reservations are read oldest activity first: one that changes during the pass moves behind the
//! cursor and is met again with its change. Only the record the cursor names moving can hide
//! records (the PMS then answers what follows its new place); so when a pass met fewer distinct
//! reservations than the PMS counts, another pass reads them from the start (at most
//! [`MAX_PASSES`]).
//!
//! Retirement: a full run, once every page is stored, retires what it did not meet (the PMS no
//! longer has it: Hostaway stops returning a deleted record), in one transaction that also counts
//! them (`retired`); then the cache is invalidated and the run completes, so that a client that
//! sees COMPLETED never reads an answer from before the retirement. An attempt resumed after that
//! transaction retires nothing more (what was retired is not retired again); a run that fails
//! after it (only the invalidation and COMPLETED were left) keeps what it retired, which the PMS
//! no longer had when every page was stored. (Retiring in the transaction that writes COMPLETED
//! would leave a moment when a client sees COMPLETED and is served an answer cached before the
//! retirement.) Only the entities
//! the run read in full are retired: those it asked for, and whose last pass met at least as many
//! records as the PMS counted (a listing moving between offset pages, or a reservation hidden by a
//! moving cursor, would otherwise be retired while the PMS still has it). What counts as met is
//! `pms_sync_seen`, written in each page's transaction, so an attempt resumed after a crash
//! retires exactly what no attempt met; a run whose records met were lost with a crash of
//! Postgres retires nothing (`sync_runs::seen_intact`).

use std::{cmp::Ordering, collections::HashSet, sync::Arc, time::Instant};
use tracing::Instrument as _;

use chrono::{DateTime, Days, NaiveDate, TimeDelta, Utc};
use domain::reporting::{
    UpsertCounts,
    hostaway::{self, ListingRecord, ReservationRecord},
    listings, reservations,
    sync_runs::{self, Entity, PageDone, RunState, SyncKind},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::{PgPool, Postgres, Transaction};
use tokio::sync::oneshot;
use tokio_util::task::AbortOnDropHandle;
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
    /// Distinct listings met by the run so far (as [`ReservationsCursor::met`]).
    pub met: u64,
    /// The most listings the PMS counted (its `count`) during the run.
    pub expected: Option<i64>,
}

impl ListingsCursor {
    /// Whether the run met every listing the PMS counted: only then may it retire the others.
    fn all_met(&self) -> bool {
        self.done
            && self
                .expected
                .is_none_or(|c| self.met >= u64::try_from(c).unwrap_or(0))
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ReservationsCursor {
    /// The last id received: the next page follows it. `None` at the start of a pass.
    pub after_id: Option<i64>,
    pub done: bool,
    /// Passes finished.
    pub passes: u32,
    /// Distinct reservations met by the run so far, every attempt together (those that do not
    /// map included): what the run's rows of `pms_sync_seen` hold, added up in the transactions
    /// that write them. (Those rows are unlogged: after a crash of Postgres they are gone while
    /// this count stays, so records met again are counted again; nothing is lost.)
    pub met: u64,
    /// The most reservations the PMS counted (its `count`) during the run.
    pub expected: Option<i64>,
    /// Pages stored by the passes before the current one: the progress's `pagesTotal` adds them
    /// to the pages the PMS announces for the current pass, so it stays above `pagesDone`.
    pub pages_before: i64,
    /// Pages stored by the current pass.
    pub pass_pages: i64,
    /// The last pass ended normally (not on pages that do not advance) having met at least as
    /// many reservations as the PMS counted: only then may the run retire the others.
    pub all_met: bool,
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
    /// Records the PMS no longer has, retired by this attempt.
    retired: i64,
}

impl Totals {
    fn add(&mut self, stored: &Stored) {
        self.fetched += stored.fetched;
        self.created += stored.counts.created;
        self.updated += stored.counts.updated;
        self.unchanged += stored.counts.unchanged;
        self.skipped += stored.skipped;
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
    /// The run is no longer this attempt's: another attempt took it over (this one's lease
    /// lapsed), or it finished. Nothing of the page at hand was kept.
    #[error("another worker took over this run")]
    TakenOver,
    /// Every page is stored but the reporting cache still holds answers from before the sync:
    /// the run must not read COMPLETED yet (a client seeing it would then read older data).
    #[error("the reporting cache was not invalidated: {0}")]
    CacheNotInvalidated(String),
    /// A task of the attempt (a page's request or its transaction) panicked or was stopped.
    #[error("a task of the sync stopped: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The page sent before this one was not stored, so this one was not either (it may not
    /// pass it). The failure of that page is the one reported.
    #[error("the page before this one was not stored")]
    PageBeforeLost,
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
            Failure::TakenOver => JobError::retry(Failure::TakenOver.to_string()),
            Failure::CacheNotInvalidated(_) | Failure::Task(_) | Failure::PageBeforeLost => {
                JobError::retry(self.to_string())
            }
        }
    }
}

/// Runs (or resumes) the sync run `sync_id`. On a failure that ends the job (a fatal one, or the
/// last attempt), the run is marked FAILED with the reason before the error is returned; not when
/// another attempt took the run over (that one finishes it).
pub(super) async fn run(sync_id: Uuid, ctx: &JobContext) -> Result<Value, JobError> {
    let started = Instant::now();
    // This attempt, as the run names its holder: only it may save pages and finish the run.
    let owner = format!("{}#{}", ctx.worker, ctx.attempt);
    let state = {
        let mut conn = ctx.pool.acquire().await?;
        sync_runs::begin(&mut conn, sync_id, &owner).await?
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
                store: PageStore {
                    pool: ctx.pool.clone(),
                    id: sync_id,
                    owner: Arc::from(owner.as_str()),
                },
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
        Err(Failure::TakenOver) => {
            // The run is another attempt's (or over): it must not be marked FAILED from here.
            // This attempt's job outcome is refused by the job store anyway once the job is
            // another worker's.
            tracing::warn!(%sync_id, %owner, "another worker took over the PMS sync run; this attempt stops");
            Err(Failure::TakenOver.into_job_error())
        }
        Err(failure) => {
            let error = failure.into_job_error();
            if !error.retryable || ctx.attempt >= ctx.max_attempts {
                mark_failed(ctx, sync_id, &owner, &error.message).await;
            } else {
                tracing::warn!(%sync_id, attempt = ctx.attempt, error = %error.message,
                    "PMS sync attempt failed; the job will resume it");
            }
            Err(error)
        }
    }
}

/// Marks the run FAILED, if this attempt still holds it. A failure to do so is logged: the run
/// still reads FAILED once its job does (`sync_runs::status`).
async fn mark_failed(ctx: &JobContext, sync_id: Uuid, owner: &str, reason: &str) {
    tracing::warn!(%sync_id, %reason, "PMS sync failed");
    let marked = async {
        let mut conn = ctx.pool.acquire().await?;
        sync_runs::fail(&mut conn, sync_id, Some(owner), reason).await
    }
    .await;
    match marked {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(%sync_id, "the failed sync run is finished or held by another attempt; left as it is");
        }
        Err(error) => {
            tracing::warn!(%sync_id, %error, "the failed sync run could not be marked FAILED");
        }
    }
}

/// The `latestActivityStart` asked of the PMS for the activity since `since`: the day before its
/// UTC date. Hostaway takes a date, and may read it in the account's time zone; west of UTC that
/// date begins hours after the UTC one, so the day before makes sure nothing since `since` is
/// left out (a few records more are read, and found unchanged).
fn activity_start(since: DateTime<Utc>) -> NaiveDate {
    let date = since.date_naive();
    date.checked_sub_days(Days::new(1)).unwrap_or(date)
}

/// One attempt of one run.
struct Attempt<'a> {
    ctx: &'a JobContext,
    client: PmsClient,
    id: Uuid,
    /// Stores pages as this attempt (its holder's name), from tasks of their own.
    store: PageStore,
    page_size: u32,
    /// Where the run stands. For the reservations, while pages are in flight, it is ahead of
    /// what is committed: the resume point and the count of the PMS are those of the last page
    /// sent, the records met and the pages of the pass those of the last page committed (see
    /// [`Attempt::settle`]); once no page is in flight, it is what the last page saved.
    cursor: Cursor,
}

/// What a page's task needs of the run: owned, so that the task can outlive a borrow of the
/// attempt (`tokio::spawn`).
#[derive(Clone)]
struct PageStore {
    pool: PgPool,
    id: Uuid,
    /// This attempt as the run names its holder (`sync_runs::begin`).
    owner: Arc<str>,
}

/// What a run retired, per entity.
#[derive(Debug, Default, Clone, Copy)]
struct Retired {
    listings: i64,
    reservations: i64,
}

/// What storing a page did (records met earlier in the run are not counted), and the cursor saved
/// with it.
struct Stored {
    counts: UpsertCounts,
    fetched: i64,
    skipped: i64,
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
        let mut listings = if wants(Entity::Listings) {
            Some(self.listings().await?)
        } else {
            None
        };
        let mut reservations = if wants(Entity::Reservations) {
            Some(self.reservations(since.map(activity_start)).await?)
        } else {
            None
        };
        // Every page is committed. What a full run did not meet goes before the cache does.
        if state.kind == SyncKind::Full {
            let retired = self
                .retire(listings.is_some(), reservations.is_some())
                .await?;
            if let Some(totals) = listings.as_mut() {
                totals.retired = retired.listings;
            }
            if let Some(totals) = reservations.as_mut() {
                totals.retired = retired.reservations;
            }
        }
        // The cache goes before the run says COMPLETED, so that a client that sees COMPLETED
        // never reads an answer cached before it (nor before what the run retired).
        let services = &self.ctx.services;
        let invalidated = match tokio::time::timeout(
            INVALIDATE_TIMEOUT,
            crate::reporting_cache::invalidate(&services.redis, &services.redis_prefix),
        )
        .await
        {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err("Redis did not answer in time".to_owned()),
        };
        if let Err(reason) = invalidated {
            // The run reads COMPLETED only once the cache is invalidated, so a client that sees
            // it never reads an older cached answer: the next attempt (all pages are stored, it
            // only invalidates and completes) tries again. On the last attempt the data win:
            // complete anyway; the stale entries expire within their 2 to 10 minutes.
            if self.ctx.attempt < self.ctx.max_attempts {
                return Err(Failure::CacheNotInvalidated(reason));
            }
            tracing::warn!(sync_id = %self.id, %reason,
                "reporting cache not invalidated on the last attempt; completing, entries expire on their own");
        }
        let mut conn = self.ctx.pool.acquire().await?;
        if !sync_runs::complete(&mut conn, self.id, &self.store.owner).await? {
            return Err(Failure::TakenOver);
        }
        Ok(json!({
            "syncId": self.id,
            "type": state.kind.as_str(),
            "activitySince": since,
            "latestActivityStart": since.map(activity_start),
            "listings": listings,
            "reservations": reservations,
            "passes": self.cursor.reservations.passes,
        }))
    }

    /// The activity an incremental run asks for: since the last completed sync of the
    /// reservations started, less `PMS_SYNC_MARGIN_SECS`; kept in the run so that a resumed
    /// attempt asks for the same. The PMS is asked from the day before that instant's UTC date
    /// ([`activity_start`]). `None` (everything) for a full run, or before any such sync.
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

    /// Retires, in one transaction that counts them, the listings (with `listings`) and the
    /// reservations (with `reservations`) the run did not meet, of those it read in full (see
    /// the module's doc). Nothing when the run's records met were lost with a crash of Postgres.
    async fn retire(&self, listings: bool, reservations: bool) -> Result<Retired, Failure> {
        let mut retired = Retired::default();
        let listings = listings && self.read_in_full(Entity::Listings);
        let reservations = reservations && self.read_in_full(Entity::Reservations);
        if !listings && !reservations {
            return Ok(retired);
        }
        let mut tx = self.ctx.pool.begin().await?;
        if !sync_runs::seen_intact(&mut tx, self.id).await? {
            tracing::warn!(sync_id = %self.id,
                "the records the sync met were lost (Postgres restarted after a crash); none retired");
            tx.rollback().await?;
            return Ok(retired);
        }
        if listings {
            retired.listings = listings::retire_unmet(&mut tx, self.id).await?;
        }
        if reservations {
            retired.reservations = reservations::retire_unmet(&mut tx, self.id).await?;
        }
        for (wanted, entity, n) in [
            (listings, Entity::Listings, retired.listings),
            (reservations, Entity::Reservations, retired.reservations),
        ] {
            if wanted
                && !sync_runs::save_retired(&mut tx, self.id, &self.store.owner, entity, n).await?
            {
                tx.rollback().await?;
                return Err(Failure::TakenOver);
            }
        }
        tx.commit().await?;
        if retired.listings + retired.reservations > 0 {
            tracing::info!(sync_id = %self.id, listings = retired.listings,
                reservations = retired.reservations, "records the PMS no longer has retired");
        }
        Ok(retired)
    }

    /// Whether the run met every record of `entity` the PMS counted; logged when not.
    fn read_in_full(&self, entity: Entity) -> bool {
        let (all_met, met) = match entity {
            Entity::Listings => (self.cursor.listings.all_met(), self.cursor.listings.met),
            Entity::Reservations => (
                self.cursor.reservations.all_met,
                self.cursor.reservations.met,
            ),
        };
        if !all_met {
            tracing::warn!(sync_id = %self.id, entity = entity.as_str(),
                "the sync met fewer records than the PMS counted (some moved while it read them, or have no id); none of them retired");
        }
        // A PMS that answers nothing at all is far likelier glitching (an empty first page, an
        // account switched) than emptied: retiring every record on its word would zero every
        // figure until the next full sync. Nothing is retired; the next sync that meets records
        // decides.
        if all_met && met == 0 {
            tracing::warn!(sync_id = %self.id, entity = entity.as_str(),
                "the PMS returned no record at all; none retired");
            return false;
        }
        all_met
    }

    /// Every listing, by offset pages (the list is small: read in full by every run).
    async fn listings(&mut self) -> Result<Totals, Failure> {
        let mut totals = Totals::default();
        if self.cursor.listings.done {
            return Ok(totals);
        }
        let limit = self.page_size;
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
            let mapped = map_page(
                page.records,
                hostaway::map_listing,
                |r| r.pms_id,
                "listing",
                self.id,
            );
            let mut at = self.cursor;
            at.listings.offset = offset;
            at.listings.done = done;
            at.listings.expected = at.listings.expected.max(page.count);
            let client = &self.client;
            let next = async {
                if done {
                    None
                } else {
                    Some(client.listings_page(offset, limit).await)
                }
            };
            let (stored, next) = tokio::join!(self.store_listings(mapped, pages_total, at), next);
            let stored = stored?;
            totals.add(&stored);
            self.cursor = stored.cursor;
            match next {
                None => return Ok(totals),
                Some(next) => page = next?,
            }
        }
    }

    /// The reservations (those with activity since `since` when given), by `afterId` pages in
    /// the order of their last change: a pipeline two pages deep (see the module's doc).
    async fn reservations(&mut self, since: Option<NaiveDate>) -> Result<Totals, Failure> {
        let mut totals = Totals::default();
        if self.cursor.reservations.done {
            return Ok(totals);
        }
        let limit = self.page_size;
        // Pages this attempt asked for in the current pass.
        let mut pages_in_pass = 0u64;
        // The page whose transaction runs and is not known to be committed yet: one at most, so
        // that two transactions run at once with the one being sent.
        let mut in_flight: Option<InFlight> = None;
        let mut fetch = self.fetch_reservations(self.cursor.reservations.after_id, since);
        loop {
            let page = match fetch.await? {
                Ok(page) => page,
                Err(error) => {
                    // The page in flight is valid: it is kept (as when pages were stored one at
                    // a time), so that the next attempt resumes after it.
                    self.drain(&mut in_flight, &mut totals).await?;
                    return Err(error.into());
                }
            };
            let received = page.received;
            pages_in_pass += 1;
            let last_id = page.last_id;
            // The resume point of the last page sent: the pages in flight are taken as stored
            // (should one fail, the attempt stops).
            let after_id = self.cursor.reservations.after_id;
            let expected = self.cursor.reservations.expected.max(page.count);
            self.cursor.reservations.expected = expected;
            let expected = expected.map(|c| u64::try_from(c).unwrap_or(0));
            // A PMS that answers the same page again (it ignores the cursor), or pages without
            // end, ends the pass rather than the worker.
            let stuck = received > 0 && (last_id.is_none() || last_id == after_id);
            let endless = pages_in_pass > page_bound(expected, limit);
            if stuck || endless {
                tracing::warn!(sync_id = %self.id, ?last_id, pages_in_pass, "the PMS's reservation pages do not advance; ending the pass");
            }
            // The pages of the earlier passes, and those the PMS announces for this one.
            let pages_total = page
                .pages_total
                .map(|n| n.saturating_add(self.cursor.reservations.pages_before));
            if received > 0 {
                if last_id.is_some() {
                    self.cursor.reservations.after_id = last_id;
                }
                if received >= limit_len(limit) && !stuck && !endless {
                    // A full page that advances does not end the pass, whatever it held: the
                    // next page is fetched, and this one stored beside the page before it.
                    let next = self.fetch_reservations(self.cursor.reservations.after_id, since);
                    if in_flight
                        .as_ref()
                        .is_some_and(|before| shares_any(&before.ids, &page.mapped.ids))
                    {
                        // A record moved between the two pages: beside each other, that page
                        // could wait in Postgres for a row this one wrote first, while this one
                        // waits for that one's commit (a deadlock, which Postgres would break by
                        // failing one of them). This one begins once that one is over.
                        self.drain(&mut in_flight, &mut totals).await?;
                    }
                    let (before, previous) = match in_flight.take() {
                        Some(before) => (
                            Some(before.task),
                            Some(Previous {
                                key: before.key,
                                committed: before.committed,
                            }),
                        ),
                        None => (None, None),
                    };
                    let sent = self.send_page(page.mapped, pages_total, previous).await?;
                    if let Some(before) = before {
                        // Its commit, while this page's records go in.
                        self.settle(before, &mut totals).await?;
                    }
                    in_flight = Some(sent);
                    fetch = next;
                    continue;
                }
            }
            // Whether the pass is over depends on the records met, every page's before this
            // one included: the pipeline empties first.
            self.drain(&mut in_flight, &mut totals).await?;
            if received > 0 {
                // This page may end the pass: that depends on the records met, its own included.
                let sent = self.send_page(page.mapped, pages_total, None).await?;
                self.settle(sent.task, &mut totals).await?;
            }
            // The pass is over at an empty page, or at a short one once every record counted was
            // met (a short page alone may be a PMS capping `limit`). An empty page is not stored:
            // an attempt resumed before the next page is stored asks for it again.
            let met = self.cursor.reservations.met;
            let over = received == 0 || stuck || endless || expected.is_some_and(|c| met >= c);
            if !over {
                fetch = self.fetch_reservations(self.cursor.reservations.after_id, since);
                continue;
            }
            let state = &mut self.cursor.reservations;
            state.passes += 1;
            state.all_met = !stuck && !endless && expected.is_none_or(|c| met >= c);
            if expected.is_some_and(|c| met < c) && state.passes < MAX_PASSES {
                tracing::info!(sync_id = %self.id, met, expected = ?state.expected, passes = state.passes,
                    "reservations moved during the pass; reading them again from the start");
                // Saved with the new pass's first page.
                state.after_id = None;
                state.pages_before = state.pages_before.saturating_add(state.pass_pages);
                state.pass_pages = 0;
                pages_in_pass = 0;
                fetch = self.fetch_reservations(None, since);
            } else {
                state.done = true;
                return Ok(totals);
            }
        }
    }

    /// Asks for the page of reservations after `after_id` in a task of its own, which also
    /// parses and maps it: the worker's share of a page's work runs beside the storing of the
    /// pages before it. Dropping the handle stops the task.
    fn fetch_reservations(
        &self,
        after_id: Option<i64>,
        since: Option<NaiveDate>,
    ) -> AbortOnDropHandle<Result<Fetched, PmsError>> {
        let client = self.client.clone();
        let (sync_id, limit) = (self.id, self.page_size);
        // In the run's span: its lines (a PMS retry) name the job and its request.
        AbortOnDropHandle::new(tokio::spawn(
            async move {
                let page = client.reservations_page(after_id, limit, since).await?;
                Ok::<_, PmsError>(Fetched::of(page, limit, sync_id))
            }
            .in_current_span(),
        ))
    }

    /// Begins the transaction of a page of reservations and hands it to a task that stores the
    /// page, with the cursor as it stands (see [`PageStore::reservations`] for `previous`).
    ///
    /// The transaction begins here, before the task exists, so that it holds its advisory lock
    /// before the next page is sent: a page that waits for this one then always finds the lock
    /// taken, and waits in Postgres until this transaction is over.
    async fn send_page(
        &self,
        page: Mapped<ReservationRecord>,
        pages_total: Option<i64>,
        previous: Option<Previous>,
    ) -> Result<InFlight, Failure> {
        let key = page_key();
        let tx = begin_page(&self.store.pool, key).await?;
        // The next page is compared with these before it runs beside this one.
        let ids = page.ids.clone();
        let (commit_sender, committed) = oneshot::channel();
        let store = self.store.clone().reservations(
            tx,
            page,
            pages_total,
            self.cursor,
            previous,
            commit_sender,
        );
        Ok(InFlight {
            task: AbortOnDropHandle::new(tokio::spawn(store.in_current_span())),
            ids,
            key,
            committed,
        })
    }

    /// Waits for a page sent earlier to be stored and takes in what it did. Of its cursor, only
    /// what the page itself added is taken (the records met, the pages of the pass): the rest
    /// (resume point, the PMS's count) was the cursor's when the page was sent, and may have
    /// moved on since with the page sent after it.
    async fn settle(
        &mut self,
        task: AbortOnDropHandle<Result<Stored, Failure>>,
        totals: &mut Totals,
    ) -> Result<(), Failure> {
        let stored = task.await??;
        totals.add(&stored);
        let state = &mut self.cursor.reservations;
        state.met = stored.cursor.reservations.met;
        state.pass_pages = stored.cursor.reservations.pass_pages;
        Ok(())
    }

    /// Waits until no page is in flight: every page sent is stored (or the attempt stops).
    async fn drain(
        &mut self,
        in_flight: &mut Option<InFlight>,
        totals: &mut Totals,
    ) -> Result<(), Failure> {
        match in_flight.take() {
            Some(page) => self.settle(page.task, totals).await,
            None => Ok(()),
        }
    }

    /// Stores a page of listings and the run's progress (the records met too), in one
    /// transaction.
    async fn store_listings(
        &self,
        page: Mapped<ListingRecord>,
        pages_total: Option<i64>,
        mut cursor: Cursor,
    ) -> Result<Stored, Failure> {
        let mut tx = begin_page(&self.ctx.pool, page_key()).await?;
        let first = sync_runs::first_met(&mut tx, self.id, Entity::Listings, &page.ids).await?;
        let split = split(page, |r| r.pms_id, first);
        cursor.listings.met = cursor.listings.met.saturating_add(split.first_met);
        let counts = if split.fresh.is_empty() {
            UpsertCounts::default()
        } else {
            listings::upsert_listings(&mut tx, &split.fresh).await?
        };
        if !split.again.is_empty() {
            listings::upsert_listings(&mut tx, &split.again).await?;
        }
        self.store
            .save(tx, Entity::Listings, &split, counts, pages_total, cursor)
            .await
    }
}

/// A page of reservations as its fetching task hands it over: what the pass needs to know of the
/// answer, and its records mapped.
struct Fetched {
    received: usize,
    /// The last id of the page: the next page follows it.
    last_id: Option<i64>,
    /// The answer's `count`.
    count: Option<i64>,
    /// The pages the PMS announces for the pass ([`pages_total`]).
    pages_total: Option<i64>,
    mapped: Mapped<ReservationRecord>,
}

impl Fetched {
    fn of(page: PmsPage, limit: u32, sync_id: Uuid) -> Fetched {
        let received = page.records.len();
        let last_id = page
            .records
            .iter()
            .rev()
            .find_map(|r| r.get("id").and_then(int_of));
        let pages_total = pages_total(&page, limit);
        let mapped = map_page(
            page.records,
            hostaway::map_reservation,
            |r| r.pms_id,
            "reservation",
            sync_id,
        );
        Fetched {
            received,
            last_id,
            count: page.count,
            pages_total,
            mapped,
        }
    }
}

/// A page of reservations whose transaction runs in its task.
struct InFlight {
    task: AbortOnDropHandle<Result<Stored, Failure>>,
    /// The ids of its records (sorted, distinct).
    ids: Vec<i64>,
    /// Its advisory lock, held until its transaction is over.
    key: i64,
    /// Its cursor once it committed; closed without one if it did not.
    committed: oneshot::Receiver<Cursor>,
}

/// The page sent before a page, as that page waits for it.
struct Previous {
    key: i64,
    committed: oneshot::Receiver<Cursor>,
}

impl PageStore {
    /// Stores a page of reservations and the run's progress (the records met, the page counted
    /// in its pass) in `tx`, begun by [`begin_page`], and answers its cursor on
    /// `committed` once committed.
    ///
    /// With `previous`, the page sent before this one may still be storing: this page's records
    /// go in beside it (they are not its records), but this page saves its progress and resume
    /// point, built on that page's records met and pages, and commits, only once that page
    /// committed; if that page did not, this one rolls back.
    async fn reservations(
        self,
        mut tx: Transaction<'static, Postgres>,
        page: Mapped<ReservationRecord>,
        pages_total: Option<i64>,
        mut cursor: Cursor,
        previous: Option<Previous>,
        committed: oneshot::Sender<Cursor>,
    ) -> Result<Stored, Failure> {
        let first = sync_runs::first_met(&mut tx, self.id, Entity::Reservations, &page.ids).await?;
        let split = split(page, |r| r.pms_id, first);
        let counts = if split.fresh.is_empty() {
            UpsertCounts::default()
        } else {
            reservations::upsert_reservations(&mut tx, &split.fresh).await?
        };
        if !split.again.is_empty() {
            reservations::upsert_reservations(&mut tx, &split.again).await?;
        }
        if let Some(previous) = previous {
            // First in Postgres, for as long as that page's transaction lasts (it took the lock
            // before this page was sent), so that Postgres sees this wait in any cycle of waits;
            // then here, for its outcome, which follows at once.
            sqlx::query("SELECT pg_advisory_xact_lock_shared($1)")
                .bind(previous.key)
                .execute(&mut *tx)
                .await?;
            let Ok(before) = previous.committed.await else {
                tx.rollback().await?;
                return Err(Failure::PageBeforeLost);
            };
            cursor.reservations.met = before.reservations.met;
            cursor.reservations.pass_pages = before.reservations.pass_pages;
        }
        let state = &mut cursor.reservations;
        state.met = state.met.saturating_add(split.first_met);
        state.pass_pages = state.pass_pages.saturating_add(1);
        let stored = self
            .save(
                tx,
                Entity::Reservations,
                &split,
                counts,
                pages_total,
                cursor,
            )
            .await?;
        // No page waits for this one when it is the last sent.
        let _ = committed.send(stored.cursor);
        Ok(stored)
    }

    /// Adds the page to the run's progress with the resume point after it, and commits; unless
    /// the run is no longer this attempt's: then nothing of the page is kept.
    async fn save<R>(
        &self,
        mut tx: Transaction<'static, Postgres>,
        entity: Entity,
        split: &Split<R>,
        counts: UpsertCounts,
        pages_total: Option<i64>,
        cursor: Cursor,
    ) -> Result<Stored, Failure> {
        let saved = cursor.to_value();
        let stored = Stored {
            counts,
            fetched: count(split.fresh.len()),
            skipped: count(split.skipped),
            cursor,
        };
        let page = PageDone {
            entity,
            counts,
            fetched: stored.fetched,
            skipped: stored.skipped,
            pages_total,
            cursor: &saved,
        };
        if !sync_runs::save_page(&mut tx, self.id, &self.owner, &page).await? {
            tx.rollback().await?;
            return Err(Failure::TakenOver);
        }
        tx.commit().await?;
        Ok(stored)
    }
}

/// A page's records, mapped, with every id the page names.
struct Mapped<R> {
    records: Vec<R>,
    /// The ids of the page's records, sorted and distinct, those that do not map included (their
    /// raw `id`): a record left out is met all the same.
    ids: Vec<i64>,
    /// The raw ids of the records that do not map (`None`: it has none).
    skipped: Vec<Option<i64>>,
}

fn map_page<R>(
    records: Vec<Value>,
    map: fn(Value) -> Result<R, String>,
    pms_id: fn(&R) -> i64,
    what: &str,
    sync_id: Uuid,
) -> Mapped<R> {
    let mut page = Mapped {
        records: Vec::with_capacity(records.len()),
        ids: Vec::with_capacity(records.len()),
        skipped: Vec::new(),
    };
    for raw in records {
        let raw_id = raw.get("id").and_then(int_of);
        match map(raw) {
            Ok(record) => {
                page.ids.push(pms_id(&record));
                page.records.push(record);
            }
            Err(why) => {
                tracing::warn!(%sync_id, ?raw_id, %why, "a PMS {what} does not map; skipped");
                page.ids.extend(raw_id);
                page.skipped.push(raw_id);
            }
        }
    }
    page.ids.sort_unstable();
    page.ids.dedup();
    page
}

/// A page's records by whether the run meets them for the first time (counted) or met them
/// before (stored again, for their newest data, but not counted); and how many records that do
/// not map it meets for the first time (or cannot tell: they have no id).
struct Split<R> {
    fresh: Vec<R>,
    again: Vec<R>,
    skipped: usize,
    /// Ids met for the first time (the records that do not map included).
    first_met: u64,
}

/// Splits `page` by `first`, the ids of the page the run meets for the first time
/// (`sync_runs::first_met`). A record twice in the page is fresh once, then met again.
fn split<R>(page: Mapped<R>, pms_id: fn(&R) -> i64, first: Vec<i64>) -> Split<R> {
    let first_met = u64::try_from(first.len()).unwrap_or(u64::MAX);
    let mut first: HashSet<i64> = first.into_iter().collect();
    let skipped = page
        .skipped
        .iter()
        .filter(|&&id| id.is_none_or(|id| first.contains(&id)))
        .count();
    let mut split = Split {
        fresh: Vec::with_capacity(page.records.len()),
        again: Vec::new(),
        skipped,
        first_met,
    };
    for record in page.records {
        if first.remove(&pms_id(&record)) {
            split.fresh.push(record);
        } else {
            split.again.push(record);
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

/// The transaction of one page: its records, the run's progress and its resume point. It does
/// not wait for its commit to reach the disk (`synchronous_commit = off`): a page lost with a
/// crash of Postgres is lost with its resume point, so the run asks the PMS for it again; the
/// records are the PMS's, never only ours. The wait was most of a page's commit time. It holds
/// the advisory lock `key` until it is over: a page of reservations sent after it waits for it
/// in Postgres by taking that lock ([`PageStore::reservations`]); a lock nobody waits for (a
/// page of listings) costs nothing.
async fn begin_page(
    pool: &PgPool,
    key: i64,
) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // `set_config(.., true)` is `SET LOCAL`, which cannot share a statement.
    sqlx::query("SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock($1)")
        .bind(key)
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}

/// The advisory lock of a page: random, so that pages of other attempts seldom have the same
/// (which only makes one wait for the other, as Postgres sees).
fn page_key() -> i64 {
    Uuid::new_v4().as_u64_pair().0.cast_signed()
}

/// Whether two sorted lists of distinct ids have one in common.
fn shares_any(a: &[i64], b: &[i64]) -> bool {
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => return true,
        }
    }
    false
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
                met: 98,
                expected: Some(100),
            },
            reservations: ReservationsCursor {
                after_id: Some(4711),
                done: false,
                passes: 1,
                met: 250,
                expected: Some(1200),
                pages_before: 24,
                pass_pages: 3,
                all_met: false,
            },
        };
        let saved = cursor.to_value();
        assert_eq!(
            saved,
            json!({
                "listings": {"offset": 100, "done": true, "met": 98, "expected": 100},
                "reservations": {"afterId": 4711, "done": false, "passes": 1, "met": 250,
                    "expected": 1200, "pagesBefore": 24, "passPages": 3, "allMet": false},
            })
        );
        assert_eq!(Cursor::from_value(&saved, id), cursor);
    }

    #[test]
    fn listings_are_read_in_full_once_as_many_as_the_pms_counts_were_met() {
        let read = |done, met, expected| {
            ListingsCursor {
                offset: 0,
                done,
                met,
                expected,
            }
            .all_met()
        };
        assert!(read(true, 36, Some(36)));
        assert!(read(true, 37, Some(36)));
        // One moved between two offset pages and was not met: it may still be in the PMS.
        assert!(!read(true, 35, Some(36)));
        assert!(!read(false, 36, Some(36)));
        assert!(read(true, 0, None));
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

    /// A record is `{"id": n}`; it maps unless it also says `"bad": true`.
    fn map(v: Value) -> Result<i64, String> {
        match (v.get("id").and_then(Value::as_i64), v.get("bad")) {
            (Some(id), None) => Ok(id),
            _ => Err("does not map".to_owned()),
        }
    }

    #[test]
    fn a_page_names_every_id_it_holds_those_that_do_not_map_included() {
        let records = vec![
            json!({"id": 3}),
            json!({"id": 1}),
            json!({"id": 7, "bad": true}),
            json!({"bad": true}),
            json!({"id": 3}),
        ];
        let page = map_page(records, map, |id| *id, "record", Uuid::nil());
        assert_eq!(page.records, vec![3, 1, 3]);
        assert_eq!(page.ids, vec![1, 3, 7]);
        assert_eq!(page.skipped, vec![Some(7), None]);
    }

    #[test]
    fn records_met_again_are_stored_but_not_counted() {
        let records = vec![
            json!({"id": 1}),
            json!({"id": 2}),
            json!({"id": 9, "bad": true}),
            json!({"id": 1}),
        ];
        // The run meets 1, 2 and 9 for the first time.
        let page = map_page(records, map, |id| *id, "record", Uuid::nil());
        let first = split(page, |id| *id, vec![1, 2, 9]);
        assert_eq!(
            (first.fresh, first.again, first.skipped, first.first_met),
            (vec![1, 2], vec![1], 1, 3)
        );
        // Then 2 and 9 again (and a record without an id, which cannot be told apart), 3 anew.
        let records = vec![
            json!({"id": 2}),
            json!({"id": 3}),
            json!({"id": 9, "bad": true}),
            json!({"bad": true}),
        ];
        let page = map_page(records, map, |id| *id, "record", Uuid::nil());
        let second = split(page, |id| *id, vec![3]);
        assert_eq!(
            (second.fresh, second.again, second.skipped, second.first_met),
            (vec![3], vec![2], 1, 1)
        );
    }

    #[test]
    fn pages_share_a_record_when_their_ids_meet() {
        assert!(!shares_any(&[], &[]));
        assert!(!shares_any(&[1, 2, 3], &[]));
        assert!(!shares_any(&[1, 3, 5], &[2, 4, 6]));
        assert!(!shares_any(&[1, 2], &[3, 4]));
        assert!(shares_any(&[1, 5, 9], &[2, 9]));
        assert!(shares_any(&[7], &[1, 2, 7]));
        assert!(shares_any(&[-4, 0], &[-4]));
    }

    #[test]
    fn the_activity_asked_for_starts_the_day_before_its_utc_date() {
        use chrono::TimeZone as _;
        let at = |h| Utc.with_ymd_and_hms(2024, 3, 1, h, 30, 0).unwrap();
        let day_before = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        assert_eq!(activity_start(at(0)), day_before);
        assert_eq!(activity_start(at(23)), day_before);
    }
}
