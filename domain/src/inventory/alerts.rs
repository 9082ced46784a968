//! Stock alerts. The alerts jobs evaluate items ([`evaluate`]): a cause present opens an alert
//! (or refreshes the open one), a cause gone resolves the open alert as `AUTO_RESOLVED`. People
//! acknowledge and resolve them, and a person's resolution holds while the cause lasts: no new
//! alert for that item and type until the cause clears and comes back, or gets worse than the
//! severity it was resolved at (a LOW_STOCK WARNING reaching 0, an expiry date passing).
//!
//! Both rules rest on one row per item and type holding its "slot" (`cause_present`, unique per
//! item and type among the rows holding one): the alert an evaluation raised keeps it, open or
//! resolved by a person, until an evaluation sees the cause gone or, for a resolved alert, worse.
//! Every evaluation and every resolution meets on that row (its index entry and its lock), so
//! concurrent evaluations end with one alert, and a resolution committed while an evaluation runs
//! is seen by it (migrations/0010_alert_resolution.sql).

use chrono::NaiveDate;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::{Error, Result};

/// The alerts of items that should have one: (type, severity, message, threshold, projected
/// balance, run-out date) per cause. `$1`: the items (uuid[]) or all (NULL); `$2`: days before expiry that
/// raise an EXPIRY alert; `$3`: today, the company's day (`BUSINESS_TIME_ZONE`), not the database
/// session's. The forecast's causes are the evaluation's temporary table `alert_forecast`
/// ([`super::forecast::ALERT_CAUSES`]), computed once per evaluation.
macro_rules! causes {
    () => {
        "
    SELECT i.id AS item_id, c.type, c.severity, c.message, i.quantity, c.threshold,
           NULL::numeric AS projected_balance, NULL::date AS run_out_date
    FROM inventory_items i
    CROSS JOIN LATERAL (VALUES
        ('LOW_STOCK', i.min_stock > 0 AND i.quantity <= i.min_stock,
         CASE WHEN i.quantity = 0 THEN 'CRITICAL' ELSE 'WARNING' END,
         CASE WHEN i.quantity = 0 THEN i.name || ' is out of stock (minimum ' || trim_scale(i.min_stock) || ' ' || i.unit || ')'
              ELSE i.name || ': ' || trim_scale(i.quantity) || ' ' || i.unit || ' left, at or below the minimum of '
                   || trim_scale(i.min_stock) END,
         i.min_stock),
        ('CONDITION', i.condition IN ('POOR', 'DAMAGED'), 'WARNING',
         i.name || ' is in ' || lower(coalesce(i.condition, '')) || ' condition', NULL::numeric),
        ('EXPIRY', i.expiry_date <= $3::date + $2::int,
         CASE WHEN i.expiry_date < $3::date THEN 'CRITICAL' ELSE 'WARNING' END,
         CASE WHEN i.expiry_date < $3::date THEN i.name || ' expired on ' || i.expiry_date
              ELSE i.name || ' expires on ' || i.expiry_date END,
         NULL::numeric)
    ) AS c (type, present, severity, message, threshold)
    WHERE i.archived_at IS NULL AND c.present AND ($1::uuid[] IS NULL OR i.id = ANY($1::uuid[]))
    UNION ALL
    SELECT i.id, 'FORECAST_SHORTAGE', f.severity,
           CASE WHEN f.run_out IS NOT NULL
                THEN i.name || ' runs out on ' || f.run_out || ' at the use the stays on the books imply ('
                     || trim_scale(i.quantity) || ' ' || i.unit || ' held, ' || trim_scale(f.balance) || ' projected by '
                     || f.last_day || ')'
                ELSE i.name || ': ' || trim_scale(f.balance) || ' ' || i.unit || ' projected by ' || f.last_day
                     || ', below the minimum of ' || trim_scale(i.min_stock) END,
           i.quantity, i.min_stock, f.balance, f.run_out
    FROM alert_forecast f JOIN inventory_items i ON i.id = f.item_id
    WHERE i.archived_at IS NULL AND ($1::uuid[] IS NULL OR i.id = ANY($1::uuid[]))"
    };
}

/// What one evaluation did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Evaluated {
    /// New alerts raised.
    pub opened: i64,
    /// Open alerts whose cause went away, resolved `AUTO_RESOLVED`.
    pub resolved: i64,
    /// Alerts a person resolved whose cause has since cleared or got worse: their cause raises a
    /// new alert again (at once when it got worse).
    pub released: i64,
}

fn count(rows: u64) -> i64 {
    i64::try_from(rows).unwrap_or(i64::MAX)
}

/// Evaluates one item (or every item with `None`) on `today` (the company's day): resolves
/// (`AUTO_RESOLVED`) the open alerts whose cause is gone, the item's archival included; frees the
/// slot of the alerts a person resolved whose cause is gone or worse than when they resolved it;
/// then opens an alert for every cause present whose slot is free, and refreshes the open ones.
///
/// Race-free as one statement per step, whatever runs at the same time: the upsert's conflict
/// with the slot's row (unique index) decides between inserting and updating, under that row's
/// lock and on its latest version, so many evaluations of a fresh cause insert one alert, and an
/// alert resolved by a person while the evaluation ran stays resolved. A check for an existing
/// alert followed by an insert would let every concurrent evaluation see none and insert its own.
pub async fn evaluate(
    conn: &mut PgConnection,
    item: Option<Uuid>,
    expiry_days: u32,
    forecast: super::forecast::AlertWindows,
    today: NaiveDate,
) -> Result<Evaluated> {
    // The statements run one by one, each committing, as they always have (a person's
    // resolution waits for one statement, not for the whole evaluation); the forecast's causes
    // are a temporary table of this session, dropped before and after.
    let drop_causes = "DROP TABLE IF EXISTS pg_temp.alert_forecast";
    sqlx::query(drop_causes).execute(&mut *conn).await?;
    let done = evaluate_with_causes(conn, item, expiry_days, forecast, today).await;
    sqlx::query(drop_causes).execute(&mut *conn).await?;
    done
}

/// [`evaluate`] once the forecast's causes are dropped: computes them, then the three
/// statements. One item's evaluation covers the items of its villa with its SKU: which of them a
/// rule's line is drawn from changes with any of them.
async fn evaluate_with_causes(
    conn: &mut PgConnection,
    item: Option<Uuid>,
    expiry_days: u32,
    forecast: super::forecast::AlertWindows,
    today: NaiveDate,
) -> Result<Evaluated> {
    let days = i32::try_from(expiry_days).unwrap_or(i32::MAX);
    let items: Option<Vec<Uuid>> = match item {
        Some(item) => Some(super::forecast::with_same_sku(conn, &[item]).await?),
        None => None,
    };
    sqlx::query(super::forecast::ALERT_CAUSES)
        .bind(None::<Uuid>)
        .bind(&items)
        .bind(today)
        .bind(super::forecast::after(today, forecast.alert_days))
        .bind(super::forecast::after(today, forecast.critical_days))
        .execute(&mut *conn)
        .await?;
    let item = items;
    // Freed slots first, so that the upsert below raises their new alert in this same run.
    let resolved = sqlx::query(concat!(
        "UPDATE inventory_alerts a SET status = 'RESOLVED', resolution_action = 'AUTO_RESOLVED',
                resolved_by = 'system', resolved_at = now(), cause_present = false, updated_at = now()
         WHERE a.status <> 'RESOLVED' AND ($1::uuid[] IS NULL OR a.item_id = ANY($1::uuid[]))
           AND NOT EXISTS (SELECT 1 FROM (",
        causes!(),
        ") causes WHERE causes.item_id = a.item_id AND causes.type = a.type)"
    ))
    .bind(&item)
    .bind(days)
    .bind(today)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    // A resolved alert keeps its slot while its cause is present at no worse a severity than it
    // was resolved at (its `severity` is frozen at the resolution: only open alerts are refreshed).
    let released = sqlx::query(concat!(
        "UPDATE inventory_alerts a SET cause_present = false
         WHERE a.cause_present AND a.status = 'RESOLVED' AND ($1::uuid[] IS NULL OR a.item_id = ANY($1::uuid[]))
           AND NOT EXISTS (SELECT 1 FROM (",
        causes!(),
        ") causes WHERE causes.item_id = a.item_id AND causes.type = a.type
                AND NOT (causes.severity = 'CRITICAL' AND a.severity <> 'CRITICAL'))"
    ))
    .bind(&item)
    .bind(days)
    .bind(today)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    // In item and type order: concurrent full evaluations lock the rows they meet in one order.
    // A slot held by a resolved alert is locked and left as it is (the update's WHERE is checked
    // on the row's latest version).
    let opened: i64 = sqlx::query_scalar(concat!(
        "WITH upserted AS (
            INSERT INTO inventory_alerts (id, item_id, type, severity, message, current_quantity, threshold,
                projected_balance, run_out_date)
            SELECT uuid_v7(), item_id, type, severity, message, quantity, threshold, projected_balance, run_out_date
            FROM (",
        causes!(),
        ") causes ORDER BY item_id, type
            ON CONFLICT (item_id, type) WHERE cause_present DO UPDATE
                SET severity = EXCLUDED.severity, message = EXCLUDED.message,
                    current_quantity = EXCLUDED.current_quantity, threshold = EXCLUDED.threshold,
                    projected_balance = EXCLUDED.projected_balance, run_out_date = EXCLUDED.run_out_date,
                    updated_at = now()
                WHERE inventory_alerts.status <> 'RESOLVED'
                  AND (inventory_alerts.severity, inventory_alerts.message, inventory_alerts.current_quantity,
                       inventory_alerts.threshold, inventory_alerts.projected_balance, inventory_alerts.run_out_date)
                      IS DISTINCT FROM (EXCLUDED.severity, EXCLUDED.message, EXCLUDED.current_quantity,
                       EXCLUDED.threshold, EXCLUDED.projected_balance, EXCLUDED.run_out_date)
            RETURNING xmax = 0 AS inserted)
         SELECT count(*) FILTER (WHERE inserted) FROM upserted"
    ))
    .bind(&item)
    .bind(days)
    .bind(today)
    .fetch_one(&mut *conn)
    .await?;
    Ok(Evaluated {
        opened,
        resolved: count(resolved),
        released: count(released),
    })
}

// An alert row (alias `a`, its item `i`, property `v`, location `l`) as the API shows it.
macro_rules! alert_view {
    () => {
        "jsonb_build_object('id', a.id, 'type', a.type, 'status', a.status, 'severity', a.severity,
            'itemId', a.item_id, 'propertyId', i.property_id, 'locationId', i.location_id,
            'item', jsonb_build_object('id', i.id, 'name', i.name, 'sku', i.sku),
            'property', jsonb_build_object('id', v.id, 'name', v.villa_name),
            'location', jsonb_build_object('id', l.id, 'name', l.name),
            'message', a.message, 'currentQuantity', a.current_quantity, 'threshold', a.threshold,
            'projectedBalance', a.projected_balance, 'runOutDate', a.run_out_date,
            'expiryDate', i.expiry_date, 'condition', i.condition,
            'createdAt', a.created_at, 'updatedAt', a.updated_at,
            'acknowledgedBy', a.acknowledged_by, 'acknowledgedAt', a.acknowledged_at,
            'resolvedBy', a.resolved_by, 'resolvedAt', a.resolved_at,
            'resolutionAction', a.resolution_action, 'resolutionNotes', a.resolution_notes)"
    };
}

macro_rules! alert_from {
    () => {
        " FROM inventory_alerts a JOIN inventory_items i ON i.id = a.item_id
          JOIN villas v ON v.id = i.property_id JOIN inventory_locations l ON l.id = i.location_id"
    };
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<serde_json::Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        alert_view!(),
        alert_from!(),
        " WHERE a.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("alert"))
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// A status, or `OPEN` for ACTIVE and ACKNOWLEDGED.
    pub status: Option<&'static str>,
    pub kind: Option<&'static str>,
    pub property_id: Option<Uuid>,
    pub item_id: Option<Uuid>,
}

impl Filter {
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        match self.status {
            Some("OPEN") => {
                sql.push(" AND a.status IN ('ACTIVE', 'ACKNOWLEDGED')");
            }
            Some(status) => {
                sql.push(" AND a.status = ").push_bind(status);
            }
            None => {}
        }
        if let Some(kind) = self.kind {
            sql.push(" AND a.type = ").push_bind(kind);
        }
        if let Some(property) = self.property_id {
            sql.push(" AND i.property_id = ").push_bind(property);
        }
        if let Some(item) = self.item_id {
            sql.push(" AND a.item_id = ").push_bind(item);
        }
    }
}

/// A page of alerts, newest first, or by severity (`sort` is one of `ALERT_SORTS`): CRITICAL
/// first, then the newest within a severity.
pub async fn list(
    conn: &mut PgConnection,
    f: &Filter,
    sort: &str,
    page: PageRequest,
) -> Result<JsonPage> {
    let order = match sort {
        "SEVERITY" => "(a.severity = 'CRITICAL') DESC, a.created_at DESC, a.id DESC",
        _ => "a.created_at DESC, a.id DESC",
    };
    let list = ListSql {
        count_from: " FROM inventory_alerts a JOIN inventory_items i ON i.id = a.item_id",
        item: alert_view!(),
        from: alert_from!(),
        order,
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql)).await
}

/// The alert's status, locked; 404 for none.
async fn lock(conn: &mut PgConnection, id: Uuid) -> Result<String> {
    sqlx::query_scalar("SELECT status FROM inventory_alerts WHERE id = $1 FOR UPDATE")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("alert"))
}

/// ACTIVE → ACKNOWLEDGED; anything else is 409 `INVALID_ALERT_STATE`.
pub async fn acknowledge(conn: &mut PgConnection, id: Uuid, by: &str) -> Result<()> {
    let status = lock(conn, id).await?;
    if status != "ACTIVE" {
        return Err(Error::conflict(
            "INVALID_ALERT_STATE",
            format!("the alert is {status}; only an ACTIVE alert can be acknowledged"),
        ));
    }
    sqlx::query(
        "UPDATE inventory_alerts SET status = 'ACKNOWLEDGED', acknowledged_by = $2, acknowledged_at = now(),
                updated_at = now() WHERE id = $1",
    )
    .bind(id)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// An open alert (ACTIVE or ACKNOWLEDGED) → RESOLVED with the action taken; a resolved one is 409
/// `INVALID_ALERT_STATE`. The alert keeps its slot (`cause_present`), so the evaluations raise
/// nothing new for its item and type while the cause lasts at no worse a severity ([`evaluate`]).
pub async fn resolve(
    conn: &mut PgConnection,
    id: Uuid,
    action: &str,
    notes: Option<&str>,
    by: &str,
) -> Result<()> {
    let status = lock(conn, id).await?;
    if status == "RESOLVED" {
        return Err(Error::conflict(
            "INVALID_ALERT_STATE",
            "the alert is already RESOLVED",
        ));
    }
    sqlx::query(
        "UPDATE inventory_alerts SET status = 'RESOLVED', resolution_action = $2, resolution_notes = $3,
                resolved_by = $4, resolved_at = now(), updated_at = now() WHERE id = $1",
    )
    .bind(id)
    .bind(action)
    .bind(notes)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
