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
//! The reservations (most of a sync) go through a pipeline two pages deep, in passes that read
//! them oldest activity first, at most [`MAX_PASSES`] ([`reservations`]).
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
//!
//! The files: this one the attempt as a whole (taking the run, the listings, retiring what the run
//! did not meet, completing); [`reservations`] the reservations' pipeline two pages deep; [`pages`]
//! the storing of one page (mapping, the records met, its transaction); [`cursor`] where a run
//! stands and what it did; [`failure`] why an attempt stopped, as the job's error.

mod cursor;
mod failure;
mod pages;
mod reservations;

use std::{sync::Arc, time::Instant};

use chrono::{DateTime, Days, NaiveDate, TimeDelta, Utc};
use domain::reporting::{
    UpsertCounts,
    hostaway::{self, ListingRecord},
    listings,
    sync_runs::{self, Entity, RunState, SyncKind},
};
use serde_json::{Value, json};
use uuid::Uuid;

use self::{
    cursor::{Cursor, Stored, Totals},
    failure::Failure,
    pages::{Mapped, PageStore, begin_page, limit_len, map_page, page_key, pages_total, split},
};
use super::client::{PmsClient, PmsError};
use crate::maintenance::GenerateTurnovers;
use crate::{Job as _, JobContext, JobError};

/// Passes over the reservations, at most, in one run.
pub const MAX_PASSES: u32 = 3;
/// How long the invalidation of the reporting cache may take before the run completes anyway.
const INVALIDATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

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

/// What a run retired, per entity.
#[derive(Debug, Default, Clone, Copy)]
struct Retired {
    listings: i64,
    reservations: i64,
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
        // The stays changed: the turnover work orders follow, enqueued with the completion (an
        // attempt resuming another cannot tell what the earlier one wrote, so it enqueues too).
        let changed = listings.is_some_and(|t| t.changed())
            || reservations.is_some_and(|t| t.changed())
            || self.ctx.attempt > 1;
        let mut tx = self.ctx.pool.begin().await?;
        if !sync_runs::complete(&mut tx, self.id, &self.store.owner).await? {
            return Err(Failure::TakenOver);
        }
        let generation = if changed {
            Some(GenerateTurnovers::default().enqueue(&mut tx).await?)
        } else {
            None
        };
        tx.commit().await?;
        if let Some(generation) = generation {
            services.queues.push_in_background(vec![generation]);
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
            retired.reservations =
                domain::reporting::reservations::retire_unmet(&mut tx, self.id).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_activity_asked_for_starts_the_day_before_its_utc_date() {
        use chrono::TimeZone as _;
        let at = |h| Utc.with_ymd_and_hms(2024, 3, 1, h, 30, 0).unwrap();
        let day_before = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
        assert_eq!(activity_start(at(0)), day_before);
        assert_eq!(activity_start(at(23)), day_before);
    }
}
