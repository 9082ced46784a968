//! What the upserts of the PMS's records (listings, reservations) share: their counts, and the
//! rows of a batch they write.

use std::collections::BTreeMap;

use serde::Serialize;

/// What an upsert of one batch did. `unchanged` records were not written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UpsertCounts {
    pub created: i64,
    pub updated: i64,
    pub unchanged: i64,
}

impl std::ops::AddAssign for UpsertCounts {
    fn add_assign(&mut self, other: Self) {
        self.created += other.created;
        self.updated += other.updated;
        self.unchanged += other.unchanged;
    }
}

/// The last occurrence of each PMS id, in PMS id order. One statement cannot touch a row twice
/// (ON CONFLICT refuses it), and the last one received is the newest; the order makes
/// concurrent upserts lock rows in one order.
pub(crate) fn last_of_each<T>(rows: &[T], pms_id: impl Fn(&T) -> i64) -> Vec<&T> {
    let mut last = BTreeMap::new();
    for row in rows {
        last.insert(pms_id(row), row);
    }
    last.into_values().collect()
}
