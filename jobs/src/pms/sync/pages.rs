//! Storing one page: its records mapped ([`map_page`]) and split by whether the run met them
//! before ([`split`]), upserted, and the run's progress and resume point saved with them, in the
//! page's transaction ([`begin_page`], [`PageStore`]); and the page-size arithmetic.

use std::{collections::HashSet, sync::Arc};

use domain::reporting::{
    UpsertCounts,
    hostaway::ReservationRecord,
    reservations,
    sync_runs::{self, Entity, PageDone},
};
use serde_json::Value;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::sync::oneshot;
use uuid::Uuid;

use super::{
    cursor::{Cursor, Stored, count},
    failure::Failure,
};
use crate::pms::client::{PmsPage, int_of};

/// What a page's task needs of the run: owned, so that the task can outlive a borrow of the
/// attempt (`tokio::spawn`).
#[derive(Clone)]
pub(super) struct PageStore {
    pub(super) pool: PgPool,
    pub(super) id: Uuid,
    /// This attempt as the run names its holder (`sync_runs::begin`).
    pub(super) owner: Arc<str>,
}

/// The page sent before a page, as that page waits for it.
pub(super) struct Previous {
    pub(super) key: i64,
    pub(super) committed: oneshot::Receiver<Cursor>,
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
    pub(super) async fn reservations(
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
    pub(super) async fn save<R>(
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
pub(super) struct Mapped<R> {
    records: Vec<R>,
    /// The ids of the page's records, sorted and distinct, those that do not map included (their
    /// raw `id`): a record left out is met all the same.
    pub(super) ids: Vec<i64>,
    /// The raw ids of the records that do not map (`None`: it has none).
    skipped: Vec<Option<i64>>,
}

pub(super) fn map_page<R>(
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
pub(super) struct Split<R> {
    pub(super) fresh: Vec<R>,
    pub(super) again: Vec<R>,
    skipped: usize,
    /// Ids met for the first time (the records that do not map included).
    pub(super) first_met: u64,
}

/// Splits `page` by `first`, the ids of the page the run meets for the first time
/// (`sync_runs::first_met`). A record twice in the page is fresh once, then met again.
pub(super) fn split<R>(page: Mapped<R>, pms_id: fn(&R) -> i64, first: Vec<i64>) -> Split<R> {
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

pub(super) fn limit_len(limit: u32) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// The pages the PMS announces: its `totalPages`, else its `count` over the page size.
pub(super) fn pages_total(page: &PmsPage, limit: u32) -> Option<i64> {
    page.total_pages.or_else(|| {
        let count = u64::try_from(page.count?.max(0)).ok()?;
        i64::try_from(count.div_ceil(u64::from(limit.max(1)))).ok()
    })
}

/// The transaction of one page: its records, the run's progress and its resume point. It does
/// not wait for its commit to reach the disk (`synchronous_commit = off`): a page lost with a
/// crash of Postgres is lost with its resume point, so the run asks the PMS for it again; the
/// records are the PMS's, never only ours. The wait was most of a page's commit time. It holds
/// the advisory lock `key` until it is over: a page of reservations sent after it waits for it
/// in Postgres by taking that lock ([`PageStore::reservations`]); a lock nobody waits for (a
/// page of listings) costs nothing.
pub(super) async fn begin_page(
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
pub(super) fn page_key() -> i64 {
    Uuid::new_v4().as_u64_pair().0.cast_signed()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
}
