//! Where a run stands ([`Cursor`], saved with each page) and what it did ([`Totals`], [`Stored`]).

use domain::reporting::UpsertCounts;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

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
    pub(super) fn all_met(&self) -> bool {
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

    pub(super) fn to_value(self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({}))
    }
}

/// What one entity's part of an attempt did.
#[derive(Debug, Default, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Totals {
    fetched: i64,
    created: i64,
    updated: i64,
    unchanged: i64,
    /// Records that do not map (no id, no dates): logged and left out.
    skipped: i64,
    pages: i64,
    /// Records the PMS no longer has, retired by this attempt.
    pub(super) retired: i64,
}

impl Totals {
    /// Whether the attempt wrote a record: created, updated or retired one.
    pub(super) fn changed(&self) -> bool {
        self.created + self.updated + self.retired > 0
    }

    pub(super) fn add(&mut self, stored: &Stored) {
        self.fetched += stored.fetched;
        self.created += stored.counts.created;
        self.updated += stored.counts.updated;
        self.unchanged += stored.counts.unchanged;
        self.skipped += stored.skipped;
        self.pages += 1;
    }
}

pub(super) fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// What storing a page did (records met earlier in the run are not counted), and the cursor saved
/// with it.
pub(super) struct Stored {
    pub(super) counts: UpsertCounts,
    pub(super) fetched: i64,
    pub(super) skipped: i64,
    pub(super) cursor: Cursor,
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
}
