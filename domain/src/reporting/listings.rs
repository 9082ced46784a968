//! The PMS's listings as stored by the sync, and as `/reporting/listings` shows them. The sync
//! upserts them by PMS id, a page at a time, writing only what changed; it links a listing to
//! the villa whose code is the listing's internal name, unless someone linked it by hand
//! ([`link_villa`]), which holds through later syncs. A listing a completed full sync did not
//! meet is gone from the PMS: it is retired ([`retire_unmet`]), INACTIVE and `removed_from_pms`,
//! until a sync meets it again.

use serde_json::Value;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::figures::Period;
use super::hostaway::ListingRecord;
use super::metrics::{self, MetricsCurrency};
use super::sync_runs::Entity;
use super::upserts::{UpsertCounts, last_of_each};
use crate::inventory::items::like_escape;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::{Error, Result};

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Inserts the listings not stored yet and updates those that changed, in one statement; a
/// listing whose stored fields, record and villa link are all the same is not written (its
/// `synced_at` stays). Duplicate PMS ids in `rows`: the last one counts. The villa link is the
/// villa whose code equals the internal name in any letter case, unless the listing was linked
/// by hand. A retired listing met again is back: its status is the PMS's, `removed_from_pms`
/// false.
pub async fn upsert_listings(
    conn: &mut PgConnection,
    rows: &[ListingRecord],
) -> Result<UpsertCounts> {
    let rows = last_of_each(rows, |r| r.pms_id);
    if rows.is_empty() {
        return Ok(UpsertCounts::default());
    }
    let ids: Vec<Uuid> = rows.iter().map(|_| Uuid::now_v7()).collect();
    let pms_ids: Vec<i64> = rows.iter().map(|r| r.pms_id).collect();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let statuses: Vec<&str> = rows.iter().map(|r| r.status).collect();
    let bedrooms: Vec<Option<i32>> = rows.iter().map(|r| r.bedrooms).collect();
    let locations: Vec<Option<&str>> = rows.iter().map(|r| r.location.as_deref()).collect();
    let currencies: Vec<Option<&str>> = rows.iter().map(|r| r.currency.as_deref()).collect();
    let internal_names: Vec<Option<&str>> =
        rows.iter().map(|r| r.internal_name.as_deref()).collect();
    let raws: Vec<&Value> = rows.iter().map(|r| &r.raw).collect();
    let (created, updated): (i64, i64) = sqlx::query_as(
        "WITH upserted AS (
            INSERT INTO pms_listings AS l (id, pms_id, name, status, bedrooms, location, currency, internal_name,
                                           villa_id, raw, synced_at)
            SELECT t.id, t.pms_id, t.name, t.status, t.bedrooms, t.location, t.currency, t.internal_name,
                   (SELECT v.id FROM villas v WHERE lower(v.villa_code) = lower(t.internal_name)
                    ORDER BY v.villa_code LIMIT 1),
                   t.raw, now()
            FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[],
                        $8::text[], $9::jsonb[])
                 AS t (id, pms_id, name, status, bedrooms, location, currency, internal_name, raw)
            ORDER BY t.pms_id
            ON CONFLICT (pms_id) DO UPDATE SET
                name = EXCLUDED.name, status = EXCLUDED.status, bedrooms = EXCLUDED.bedrooms,
                location = EXCLUDED.location, currency = EXCLUDED.currency, internal_name = EXCLUDED.internal_name,
                villa_id = CASE WHEN l.villa_linked_by_hand THEN l.villa_id ELSE EXCLUDED.villa_id END,
                raw = EXCLUDED.raw, removed_from_pms = false, synced_at = now()
            WHERE (l.name, l.status, l.bedrooms, l.location, l.currency, l.internal_name, l.raw, l.villa_id,
                   l.removed_from_pms)
                  IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.status, EXCLUDED.bedrooms, EXCLUDED.location,
                                    EXCLUDED.currency, EXCLUDED.internal_name, EXCLUDED.raw,
                                    CASE WHEN l.villa_linked_by_hand THEN l.villa_id ELSE EXCLUDED.villa_id END,
                                    false)
            RETURNING xmax = 0 AS inserted)
         SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM upserted",
    )
    .bind(ids)
    .bind(pms_ids)
    .bind(names)
    .bind(statuses)
    .bind(bedrooms)
    .bind(locations)
    .bind(currencies)
    .bind(internal_names)
    .bind(raws)
    .fetch_one(&mut *conn)
    .await?;
    Ok(UpsertCounts {
        created,
        updated,
        unchanged: count(rows.len()) - created - updated,
    })
}

/// Retires the listings run `run_id` did not meet (`sync_runs::first_met`): INACTIVE and
/// `removed_from_pms`, so that they leave the figures of every ACTIVE listing; their villa link
/// stays. Call it once a full run has read every listing, in the transaction that counts them
/// (`sync_runs::save_retired`). Answers how many it retired (those retired before are not
/// counted again).
pub async fn retire_unmet(conn: &mut PgConnection, run_id: Uuid) -> Result<i64> {
    let retired = sqlx::query(
        "UPDATE pms_listings l SET status = 'INACTIVE', removed_from_pms = true, synced_at = now()
         WHERE NOT l.removed_from_pms
           AND NOT EXISTS (SELECT 1 FROM pms_sync_seen s
                           WHERE s.run_id = $1 AND s.entity = $2 AND s.pms_id = l.pms_id)",
    )
    .bind(run_id)
    .bind(Entity::Listings.as_str())
    .execute(&mut *conn)
    .await?;
    Ok(i64::try_from(retired.rows_affected()).unwrap_or(i64::MAX))
}

// A listing row (alias `l`) as the API shows it, less its `metrics` ([`super::metrics`] adds
// them: they come from the one statement of the figures).
macro_rules! listing_view {
    () => {
        "jsonb_build_object('id', l.id, 'pmsId', l.pms_id, 'name', l.name, 'status', l.status,
            'bedrooms', l.bedrooms, 'location', l.location, 'currency', l.currency, 'villaId', l.villa_id,
            'removedFromPms', l.removed_from_pms, 'lastSyncedAt', l.synced_at)"
    };
}

/// The filters of the listing list.
#[derive(Debug, Clone, Default)]
pub struct ListingFilter {
    /// ACTIVE or INACTIVE.
    pub status: Option<&'static str>,
    /// A part of the name, the internal name or the location, in any letter case.
    pub search: Option<String>,
}

impl ListingFilter {
    /// The conditions of the filters given, each value bound ([`json_page`] says why only
    /// those).
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(status) = self.status {
            sql.push(" AND l.status = ").push_bind(status);
        }
        if let Some(search) = &self.search {
            let pattern = format!("%{}%", like_escape(search));
            sql.push(" AND (l.name ILIKE ")
                .push_bind(pattern.clone())
                .push(" OR l.internal_name ILIKE ")
                .push_bind(pattern.clone())
                .push(" OR l.location ILIKE ")
                .push_bind(pattern)
                .push(")");
        }
    }
}

/// A page of listings ordered by name (in any letter case), each with its `metrics` over
/// `period` in `currency` (each listing's own, or the one asked: [`MetricsCurrency`];
/// [`super::figures`]), and the total matching the filter.
pub async fn list_listings(
    conn: &mut PgConnection,
    filter: &ListingFilter,
    page: PageRequest,
    period: Period,
    currency: &MetricsCurrency,
) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM pms_listings l",
        item: listing_view!(),
        from: " FROM pms_listings l",
        order: "lower(l.name), l.id",
    };
    let listings = json_page(conn, &list, page, |sql| filter.push_conditions(sql)).await?;
    metrics::add_to_page(conn, listings, period, currency).await
}

/// One listing as the list shows it, plus its `internalName`; 404 for none.
pub async fn get_listing(
    conn: &mut PgConnection,
    id: Uuid,
    period: Period,
    currency: &MetricsCurrency,
) -> Result<Value> {
    let listing: Value = sqlx::query_scalar(concat!(
        "SELECT ",
        listing_view!(),
        " || jsonb_build_object('internalName', l.internal_name) FROM pms_listings l WHERE l.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("listing"))?;
    metrics::add_to_listing(conn, listing, period, currency).await
}

/// Links the listing to a villa, or unlinks it (`None`), by hand: later syncs keep this link
/// (an unlinked listing stays unlinked). An unknown listing is 404; an unknown villa is 400 on
/// `villaId`.
pub async fn link_villa(conn: &mut PgConnection, id: Uuid, villa_id: Option<Uuid>) -> Result<()> {
    let unknown_villa = || Error::invalid("villaId", "invalid_value", "no villa has this id");
    // One statement: the listing's and the villa's existence are read where the update is
    // written; a villa deleted meanwhile is the foreign key's refusal.
    let (listing_exists, villa_exists): (bool, bool) = sqlx::query_as(
        "WITH villa AS (SELECT id FROM villas WHERE id = $2),
              linked AS (
                UPDATE pms_listings SET villa_id = $2, villa_linked_by_hand = true
                WHERE id = $1 AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM villa))
                RETURNING 1)
         SELECT EXISTS (SELECT 1 FROM pms_listings WHERE id = $1),
                $2::uuid IS NULL OR EXISTS (SELECT 1 FROM villa)",
    )
    .bind(id)
    .bind(villa_id)
    .fetch_one(&mut *conn)
    .await
    .map_err(|err| crate::on_refusal(err, crate::Refusal::ForeignKey, unknown_villa))?;
    if !listing_exists {
        return Err(Error::NotFound("listing"));
    }
    if !villa_exists {
        return Err(unknown_villa());
    }
    Ok(())
}
