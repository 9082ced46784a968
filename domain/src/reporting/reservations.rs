//! The PMS's reservations as stored by the sync, and as `/reporting/reservations` shows them. The
//! sync upserts them by PMS id, a page at a time, writing only what changed. A reservation names
//! its listing by PMS id (`listing_pms_id`), so it may arrive before its listing: the listing is
//! joined when read. A reservation a completed full sync did not meet is gone from the PMS: it is
//! retired ([`retire_unmet`]), REMOVED, until a sync meets it again.

use chrono::NaiveDate;
use futures::{StreamExt as _, stream::BoxStream};
use rust_decimal::Decimal;
use serde_json::Value;
use sqlx::{Execute as _, PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::hostaway::ReservationRecord;
use super::sync_runs::Entity;
pub use super::upserts::UpsertCounts;
use super::upserts::last_of_each;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::{Error, Result};

/// Inserts the reservations not stored yet and updates those that changed, in one statement; a
/// reservation whose stored fields and record are all the same is not written (its `synced_at`
/// stays), nor one whose stored `updatedOn` is newer than the record's. Duplicate PMS ids in
/// `rows`: the last one counts. A REMOVED reservation met again differs by its status: it is
/// back with the PMS's.
pub async fn upsert_reservations(
    conn: &mut PgConnection,
    rows: &[ReservationRecord],
) -> Result<UpsertCounts> {
    let rows = last_of_each(rows, |r| r.pms_id);
    if rows.is_empty() {
        return Ok(UpsertCounts::default());
    }
    let ids: Vec<Uuid> = rows.iter().map(|_| Uuid::now_v7()).collect();
    let pms_ids: Vec<i64> = rows.iter().map(|r| r.pms_id).collect();
    let listings: Vec<Option<i64>> = rows.iter().map(|r| r.listing_pms_id).collect();
    let guests: Vec<Option<&str>> = rows.iter().map(|r| r.guest_name.as_deref()).collect();
    let check_ins: Vec<NaiveDate> = rows.iter().map(|r| r.check_in).collect();
    let check_outs: Vec<NaiveDate> = rows.iter().map(|r| r.check_out).collect();
    let nights: Vec<i32> = rows.iter().map(|r| r.nights).collect();
    let channels: Vec<&str> = rows.iter().map(|r| r.channel).collect();
    let channel_ids: Vec<Option<i64>> = rows.iter().map(|r| r.channel_id).collect();
    let channel_names: Vec<Option<&str>> = rows.iter().map(|r| r.channel_name.as_deref()).collect();
    let totals: Vec<Decimal> = rows.iter().map(|r| r.total_amount).collect();
    let nets: Vec<Decimal> = rows.iter().map(|r| r.net_amount).collect();
    let taxes: Vec<Decimal> = rows.iter().map(|r| r.tax_amount).collect();
    let channel_commissions: Vec<Decimal> = rows.iter().map(|r| r.channel_commission).collect();
    let hostaway_commissions: Vec<Decimal> = rows.iter().map(|r| r.hostaway_commission).collect();
    let currencies: Vec<Option<&str>> = rows.iter().map(|r| r.currency.as_deref()).collect();
    let statuses: Vec<&str> = rows.iter().map(|r| r.status).collect();
    let pms_statuses: Vec<Option<&str>> = rows.iter().map(|r| r.pms_status.as_deref()).collect();
    // The raw record goes as text into a `json` column: Postgres only checks it is JSON, where
    // `jsonb` would build its binary form, which took 40 % of a 1,000-record page's time (the
    // bind phase, measured). Serialised from one `Value`, the same record gives the same text,
    // which is what "unchanged" compares.
    let raws: Vec<String> = rows.iter().map(|r| r.raw.to_string()).collect();
    let (created, updated): (i64, i64) = sqlx::query_as(
        "WITH upserted AS (
            INSERT INTO pms_reservations AS r (id, pms_id, listing_pms_id, guest_name, check_in, check_out, nights,
                channel, channel_id, channel_name, total_amount, net_amount, tax_amount, channel_commission,
                hostaway_commission, currency, status, pms_status, raw, synced_at)
            SELECT t.id, t.pms_id, t.listing_pms_id, t.guest_name, t.check_in, t.check_out, t.nights,
                   t.channel, t.channel_id, t.channel_name, t.total_amount, t.net_amount, t.tax_amount,
                   t.channel_commission, t.hostaway_commission, t.currency, t.status, t.pms_status, t.raw::json, now()
            FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::text[], $5::date[], $6::date[], $7::int[],
                        $8::text[], $9::bigint[], $10::text[], $11::numeric[], $12::numeric[], $13::numeric[],
                        $14::numeric[], $15::numeric[], $16::text[], $17::text[], $18::text[], $19::text[])
                 AS t (id, pms_id, listing_pms_id, guest_name, check_in, check_out, nights, channel, channel_id,
                       channel_name, total_amount, net_amount, tax_amount, channel_commission,
                       hostaway_commission, currency, status, pms_status, raw)
            ORDER BY t.pms_id
            ON CONFLICT (pms_id) DO UPDATE SET
                listing_pms_id = EXCLUDED.listing_pms_id, guest_name = EXCLUDED.guest_name,
                check_in = EXCLUDED.check_in, check_out = EXCLUDED.check_out, nights = EXCLUDED.nights,
                channel = EXCLUDED.channel, channel_id = EXCLUDED.channel_id, channel_name = EXCLUDED.channel_name,
                total_amount = EXCLUDED.total_amount, net_amount = EXCLUDED.net_amount,
                tax_amount = EXCLUDED.tax_amount, channel_commission = EXCLUDED.channel_commission,
                hostaway_commission = EXCLUDED.hostaway_commission, currency = EXCLUDED.currency,
                status = EXCLUDED.status, pms_status = EXCLUDED.pms_status, raw = EXCLUDED.raw, synced_at = now()
            WHERE (r.listing_pms_id, r.guest_name, r.check_in, r.check_out, r.nights, r.channel, r.channel_id,
                   r.channel_name, r.total_amount, r.net_amount, r.tax_amount, r.channel_commission,
                   r.hostaway_commission, r.currency, r.status, r.pms_status, r.raw::text)
                  IS DISTINCT FROM (EXCLUDED.listing_pms_id, EXCLUDED.guest_name, EXCLUDED.check_in,
                   EXCLUDED.check_out, EXCLUDED.nights, EXCLUDED.channel, EXCLUDED.channel_id,
                   EXCLUDED.channel_name, EXCLUDED.total_amount, EXCLUDED.net_amount, EXCLUDED.tax_amount,
                   EXCLUDED.channel_commission, EXCLUDED.hostaway_commission, EXCLUDED.currency,
                   EXCLUDED.status, EXCLUDED.pms_status, EXCLUDED.raw::text)
              -- Never an older version over a newer one (webhooks repeat and arrive out of
              -- order): Hostaway's `updatedOn`, 'YYYY-MM-DD hh:mm:ss', compared byte by byte
              -- (not by the database's collation), which orders that format by time.
              AND (r.raw->>'updatedOn' IS NULL OR EXCLUDED.raw->>'updatedOn' IS NULL
                   OR (EXCLUDED.raw->>'updatedOn') COLLATE \"C\" >= (r.raw->>'updatedOn') COLLATE \"C\")
            RETURNING xmax = 0 AS inserted)
         SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM upserted",
    )
    .bind(ids)
    .bind(pms_ids)
    .bind(listings)
    .bind(guests)
    .bind(check_ins)
    .bind(check_outs)
    .bind(nights)
    .bind(channels)
    .bind(channel_ids)
    .bind(channel_names)
    .bind(totals)
    .bind(nets)
    .bind(taxes)
    .bind(channel_commissions)
    .bind(hostaway_commissions)
    .bind(currencies)
    .bind(statuses)
    .bind(pms_statuses)
    .bind(raws)
    .fetch_one(&mut *conn)
    .await?;
    let written = created + updated;
    Ok(UpsertCounts {
        created,
        updated,
        unchanged: i64::try_from(rows.len()).unwrap_or(i64::MAX) - written,
    })
}

/// Retires the reservations run `run_id` did not meet (`sync_runs::first_met`): REMOVED, which
/// counts for nothing in any figure; `pms_status` keeps what the PMS last said. Call it once a
/// full run has read every reservation, in the transaction that counts them
/// (`sync_runs::save_retired`). Answers how many it retired (those retired before are not
/// counted again).
pub async fn retire_unmet(conn: &mut PgConnection, run_id: Uuid) -> Result<i64> {
    let retired = sqlx::query(
        "UPDATE pms_reservations r SET status = 'REMOVED', synced_at = now()
         WHERE r.status <> 'REMOVED'
           AND NOT EXISTS (SELECT 1 FROM pms_sync_seen s
                           WHERE s.run_id = $1 AND s.entity = $2 AND s.pms_id = r.pms_id)",
    )
    .bind(run_id)
    .bind(Entity::Reservations.as_str())
    .execute(&mut *conn)
    .await?;
    Ok(i64::try_from(retired.rows_affected()).unwrap_or(i64::MAX))
}

// A reservation row (alias `r`, its listing `l` when known) as the list shows it.
macro_rules! reservation_view {
    () => {
        "jsonb_build_object('id', r.id, 'pmsId', r.pms_id, 'guestName', r.guest_name,
            'listing', CASE WHEN l.id IS NULL THEN NULL ELSE jsonb_build_object('id', l.id, 'name', l.name) END,
            'listingPmsId', r.listing_pms_id, 'checkIn', r.check_in, 'checkOut', r.check_out, 'nights', r.nights,
            'channel', r.channel, 'channelName', r.channel_name, 'totalAmount', r.total_amount,
            'netAmount', r.net_amount, 'currency', r.currency, 'status', r.status, 'pmsStatus', r.pms_status,
            'lastSyncedAt', r.synced_at)"
    };
}

macro_rules! reservation_from {
    () => {
        " FROM pms_reservations r LEFT JOIN pms_listings l ON l.pms_id = r.listing_pms_id"
    };
}

/// The filters of the reservation list (and of the reservations export, which lists the same).
#[derive(Debug, Clone, Default)]
pub struct ReservationFilter {
    /// Our listing's id (not its PMS id).
    pub listing_id: Option<Uuid>,
    /// Any of these listings (our ids); empty: no such filter. With `listing_id`, both apply.
    pub listing_ids: Vec<Uuid>,
    pub status: Option<&'static str>,
    pub channel: Option<&'static str>,
    /// Check-in on or after.
    pub start: Option<NaiveDate>,
    /// Check-in on or before.
    pub end: Option<NaiveDate>,
}

impl ReservationFilter {
    /// The `WHERE` clause of the filters given over `pms_reservations r`, each value bound
    /// ([`json_page`] says why only those): the list, its count and the export read through it,
    /// so that they agree.
    pub fn push_filter(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(listing) = self.listing_id {
            // By the listing's PMS id: the index on (listing_pms_id, check_in) serves it.
            sql.push(
                " AND r.listing_pms_id = (SELECT fl.pms_id FROM pms_listings fl WHERE fl.id = ",
            )
            .push_bind(listing)
            .push(")");
        }
        if !self.listing_ids.is_empty() {
            sql.push(
                " AND r.listing_pms_id IN (SELECT fl.pms_id FROM pms_listings fl WHERE fl.id = ANY(",
            )
            .push_bind(self.listing_ids.clone())
            .push("::uuid[]))");
        }
        if let Some(status) = self.status {
            sql.push(" AND r.status = ").push_bind(status);
        }
        if let Some(channel) = self.channel {
            sql.push(" AND r.channel = ").push_bind(channel);
        }
        if let Some(start) = self.start {
            sql.push(" AND r.check_in >= ").push_bind(start);
        }
        if let Some(end) = self.end {
            sql.push(" AND r.check_in <= ").push_bind(end);
        }
    }
}

/// The list's order, newest check-in first (the export's too).
const LIST_ORDER: &str = "r.check_in DESC, r.id DESC";

/// A page of reservations, the latest check-in first, and the total matching the filter.
pub async fn list_reservations(
    conn: &mut PgConnection,
    f: &ReservationFilter,
    page: PageRequest,
) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM pms_reservations r",
        item: reservation_view!(),
        from: reservation_from!(),
        order: LIST_ORDER,
    };
    json_page(conn, &list, page, |sql| f.push_filter(sql)).await
}

/// How many reservations the filter matches (the export's row count).
pub async fn count_reservations(conn: &mut PgConnection, f: &ReservationFilter) -> Result<i64> {
    let mut sql = QueryBuilder::new("SELECT count(*) FROM pms_reservations r");
    f.push_filter(&mut sql);
    Ok(sql.build_query_scalar().fetch_one(&mut *conn).await?)
}

/// A reservation as the export writes it: typed columns, not JSON.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ReservationRow {
    pub id: Uuid,
    pub pms_id: i64,
    /// Our listing's id, when the listing is stored.
    pub listing_id: Option<Uuid>,
    pub listing_pms_id: Option<i64>,
    pub listing_name: Option<String>,
    pub guest_name: Option<String>,
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub nights: i32,
    pub channel: String,
    pub channel_name: Option<String>,
    pub status: String,
    pub total_amount: Decimal,
    pub net_amount: Decimal,
    pub currency: Option<String>,
}

/// The reservations of the filter as [`ReservationRow`]s, streamed: the list's rows (same
/// `FROM`, conditions and order as [`list_reservations`]) without its pages.
pub fn export_stream<'c>(
    conn: &'c mut PgConnection,
    f: &ReservationFilter,
) -> BoxStream<'c, Result<ReservationRow>> {
    let mut sql = QueryBuilder::new(concat!(
        "SELECT r.id, r.pms_id, l.id AS listing_id, r.listing_pms_id, l.name AS listing_name, r.guest_name,
            r.check_in, r.check_out, r.nights, r.channel, r.channel_name, r.status, r.total_amount,
            r.net_amount, r.currency",
        reservation_from!()
    ));
    f.push_filter(&mut sql);
    sql.push(" ORDER BY ").push(LIST_ORDER);
    // The statement and its values leave the builder, so that the stream owns them rather than
    // borrowing a builder (or the filter) that ends with this call.
    let mut query = sql.build();
    let arguments = match query.take_arguments() {
        Ok(arguments) => arguments.unwrap_or_default(),
        Err(err) => {
            let err = Error::Internal(anyhow::anyhow!("binding the reservation filter: {err}"));
            return futures::stream::once(async move { Err::<ReservationRow, _>(err) }).boxed();
        }
    };
    let statement = query.sql();
    sqlx::query_as_with::<_, ReservationRow, _>(statement, arguments)
        .fetch(conn)
        .map(|row| row.map_err(Error::from))
        .boxed()
}

/// `{data: [reservation, ...]}`: the reservations of `status` arriving from `today` on or in
/// progress (`check_out > today`), the soonest check-in first, at most `limit`, each as the list
/// shows it.
pub async fn upcoming(
    conn: &mut PgConnection,
    today: NaiveDate,
    status: &str,
    limit: i64,
) -> Result<Value> {
    let data: Value = sqlx::query_scalar(concat!(
        "SELECT coalesce(jsonb_agg(p.item ORDER BY p.n), '[]'::jsonb) FROM (SELECT ",
        reservation_view!(),
        " AS item, row_number() OVER (ORDER BY r.check_in, r.id) AS n",
        reservation_from!(),
        " WHERE r.status = $1 AND r.check_out > $2::date ORDER BY r.check_in, r.id LIMIT $3) p"
    ))
    .bind(status)
    .bind(today)
    .bind(limit)
    .fetch_one(&mut *conn)
    .await?;
    Ok(serde_json::json!({ "data": data }))
}

/// One reservation as the list shows it, plus its `taxAmount`, `channelCommissionAmount` and
/// `hostawayCommissionAmount`; 404 for none.
pub async fn get_reservation(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        reservation_view!(),
        " || jsonb_build_object('taxAmount', r.tax_amount, 'channelCommissionAmount', r.channel_commission,
            'hostawayCommissionAmount', r.hostaway_commission)",
        reservation_from!(),
        " WHERE r.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("reservation"))
}
