//! The reservations of the fake, kept in Hostaway's order so that a page costs what it returns:
//! every record is serialised once (its JSON text is what a page copies), and `order` holds the
//! records sorted by `(updatedOn, id)`, so `afterId` is a binary search and an unfiltered page a
//! slice. Filters (`listingId`, `channelId`, arrival and activity dates) scan the compact `order`
//! array, which is a few microseconds per thousand records.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{Datelike, NaiveDate, NaiveDateTime};
use serde_json::Value;

use crate::seed::{TIMESTAMP_FORMAT, midnight};

/// What a reservation is ordered and filtered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    /// `updatedOn`, unix seconds (0 when missing or malformed).
    pub updated: i64,
    pub id: i64,
    /// `latestActivityOn`, unix seconds (`updated` when missing).
    pub activity: i64,
    pub listing: i64,
    pub channel: i64,
    /// `arrivalDate`, days from the common era (`i32::MIN` when missing: no date filter matches).
    pub arrival: i32,
}

impl Meta {
    fn key(&self) -> (i64, i64) {
        (self.updated, self.id)
    }

    /// The meta of a record given as JSON; None without an integer `id`.
    pub(crate) fn of(value: &Value) -> Option<Meta> {
        let id = value.get("id")?.as_i64()?;
        let updated = value
            .get("updatedOn")
            .and_then(Value::as_str)
            .and_then(parse_timestamp)
            .unwrap_or(0);
        let activity = value
            .get("latestActivityOn")
            .and_then(Value::as_str)
            .and_then(parse_timestamp)
            .unwrap_or(updated);
        let int = |key: &str| value.get(key).and_then(Value::as_i64).unwrap_or(0);
        let arrival = value
            .get("arrivalDate")
            .and_then(Value::as_str)
            .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
            .map_or(i32::MIN, |d| d.num_days_from_ce());
        Some(Meta {
            updated,
            id,
            activity,
            listing: int("listingMapId"),
            channel: int("channelId"),
            arrival,
        })
    }
}

/// `YYYY-MM-DD HH:MM:SS` (or a bare date, midnight) as unix seconds.
pub(crate) fn parse_timestamp(text: &str) -> Option<i64> {
    NaiveDateTime::parse_from_str(text, TIMESTAMP_FORMAT)
        .map(|t| t.and_utc().timestamp())
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .map(midnight)
        })
}

struct Entry {
    meta: Meta,
    json: Arc<str>,
}

/// Which records a list request wants, besides the page bounds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    pub listing: Option<i64>,
    pub channel: Option<i64>,
    /// Unix seconds, inclusive.
    pub activity_from: Option<i64>,
    /// Unix seconds, exclusive.
    pub activity_to: Option<i64>,
    /// Days from the common era, inclusive both ends.
    pub arrival_from: Option<i32>,
    pub arrival_to: Option<i32>,
}

impl Filter {
    fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    fn matches(&self, m: &Meta) -> bool {
        self.listing.is_none_or(|l| m.listing == l)
            && self.channel.is_none_or(|c| m.channel == c)
            && self.activity_from.is_none_or(|t| m.activity >= t)
            && self.activity_to.is_none_or(|t| m.activity < t)
            && self.arrival_from.is_none_or(|d| m.arrival >= d)
            && self
                .arrival_to
                .is_none_or(|d| m.arrival != i32::MIN && m.arrival <= d)
    }
}

/// One list request.
#[derive(Debug, Clone)]
pub(crate) struct PageRequest {
    pub limit: usize,
    pub offset: usize,
    pub after_id: Option<i64>,
    /// `sortOrder=updatedOn`: oldest first. Otherwise Hostaway's default, newest first.
    pub ascending: bool,
    pub filter: Filter,
}

/// One page: the records' JSON, how many match in all, and how many come before the page.
pub(crate) struct Page {
    pub records: Vec<Arc<str>>,
    pub count: usize,
    pub offset: usize,
}

#[derive(Default)]
pub(crate) struct Store {
    /// Ascending `(updated, id)`; the default order reads it backwards.
    order: Vec<Meta>,
    records: HashMap<i64, Entry>,
}

impl Store {
    /// From serialised records; a later duplicate id replaces an earlier one.
    pub(crate) fn from_json(pairs: Vec<(Meta, String)>) -> Store {
        let mut records = HashMap::with_capacity(pairs.len());
        for (meta, json) in pairs {
            records.insert(
                meta.id,
                Entry {
                    meta,
                    json: Arc::from(json),
                },
            );
        }
        let mut order: Vec<Meta> = records.values().map(|e| e.meta).collect();
        order.sort_unstable_by_key(Meta::key);
        Store { order, records }
    }

    /// From JSON values; values without an integer `id` are skipped.
    pub(crate) fn from_values(values: Vec<Value>) -> Store {
        Store::from_json(
            values
                .iter()
                .filter_map(|v| Some((Meta::of(v)?, serde_json::to_string(v).ok()?)))
                .collect(),
        )
    }

    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// Inserts or replaces the record `meta.id`, at its place in the order.
    pub(crate) fn upsert(&mut self, meta: Meta, json: String) {
        if let Some(old) = self.records.remove(&meta.id)
            && let Ok(i) = self.order.binary_search_by_key(&old.meta.key(), Meta::key)
        {
            self.order.remove(i);
        }
        let (Ok(i) | Err(i)) = self.order.binary_search_by_key(&meta.key(), Meta::key);
        self.order.insert(i, meta);
        self.records.insert(
            meta.id,
            Entry {
                meta,
                json: Arc::from(json),
            },
        );
    }

    /// Removes the record `id`; answers it, None when there is none.
    pub(crate) fn remove(&mut self, id: i64) -> Option<Value> {
        let old = self.records.remove(&id)?;
        if let Ok(i) = self.order.binary_search_by_key(&old.meta.key(), Meta::key) {
            self.order.remove(i);
        }
        serde_json::from_str(&old.json).ok()
    }

    pub(crate) fn json(&self, id: i64) -> Option<Arc<str>> {
        self.records.get(&id).map(|e| e.json.clone())
    }

    pub(crate) fn value(&self, id: i64) -> Option<Value> {
        serde_json::from_str(&self.records.get(&id)?.json).ok()
    }

    /// Every record, by id.
    pub(crate) fn values(&self) -> Vec<Value> {
        let mut ids: Vec<i64> = self.records.keys().copied().collect();
        ids.sort_unstable();
        ids.into_iter().filter_map(|id| self.value(id)).collect()
    }

    pub(crate) fn max_updated(&self) -> Option<i64> {
        self.order.last().map(|m| m.updated)
    }

    pub(crate) fn max_id(&self) -> Option<i64> {
        self.records.keys().max().copied()
    }

    /// Index of `id` in `order` (ascending).
    fn position(&self, id: i64) -> Option<usize> {
        let entry = self.records.get(&id)?;
        self.order
            .binary_search_by_key(&entry.meta.key(), Meta::key)
            .ok()
    }

    /// The page `request` asks for. `afterId` starts right after that record's current place in
    /// the order (its `offset` ignored); an id the fake does not hold gives an empty page.
    pub(crate) fn page(&self, request: &PageRequest) -> Page {
        let n = self.order.len();
        let ascending = request.ascending;
        // Index in `order` of the p-th record of the requested order.
        let at = |p: usize| if ascending { p } else { n - 1 - p };
        // Position (in the requested order) of the first record after the cursor.
        let after = request.after_id.map(|id| match self.position(id) {
            Some(i) => (if ascending { i } else { n - 1 - i }) + 1,
            None => n,
        });
        let limit = request.limit;
        let json = |m: &Meta| self.records.get(&m.id).map(|e| e.json.clone());

        if request.filter.is_empty() {
            let start = after.unwrap_or(request.offset).min(n);
            let end = start.saturating_add(limit).min(n);
            let records = (start..end)
                .filter_map(|p| json(&self.order[at(p)]))
                .collect();
            return Page {
                records,
                count: n,
                offset: start,
            };
        }

        let mut count = 0;
        let mut before = 0;
        let mut records = Vec::new();
        for p in 0..n {
            let meta = &self.order[at(p)];
            if !request.filter.matches(meta) {
                continue;
            }
            count += 1;
            let skip = match after {
                Some(start) => p < start,
                None => before < request.offset,
            };
            if skip {
                before += 1;
            } else if records.len() < limit
                && let Some(text) = json(meta)
            {
                records.push(text);
            }
        }
        Page {
            records,
            count,
            offset: before,
        }
    }
}
