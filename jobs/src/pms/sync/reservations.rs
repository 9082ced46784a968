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

use std::cmp::Ordering;

use chrono::NaiveDate;
use domain::reporting::hostaway::{self, ReservationRecord};
use tokio::sync::oneshot;
use tokio_util::task::AbortOnDropHandle;
use tracing::Instrument as _;
use uuid::Uuid;

use super::{
    Attempt, MAX_PASSES,
    cursor::{Cursor, Stored, Totals},
    failure::Failure,
    pages::{Mapped, Previous, begin_page, limit_len, map_page, page_key, pages_total},
};
use crate::pms::client::{PmsError, PmsPage, int_of};

impl Attempt<'_> {
    /// The reservations (those with activity since `since` when given), by `afterId` pages in
    /// the order of their last change: a pipeline two pages deep (see the module's doc).
    pub(super) async fn reservations(
        &mut self,
        since: Option<NaiveDate>,
    ) -> Result<Totals, Failure> {
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
    ///
    /// [`PageStore::reservations`]: super::pages::PageStore::reservations
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
    fn a_pass_is_bounded_by_what_the_pms_counts() {
        assert_eq!(page_bound(Some(1000), 100), 43);
        assert_eq!(page_bound(Some(0), 100), 13);
        assert_eq!(page_bound(None, 100), u64::MAX);
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
}
