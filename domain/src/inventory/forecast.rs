//! The supplies forecast: what each item of a villa will be used for, day by day, from the stays
//! on the books, and when its stock runs out.
//!
//! An item's expected use on a day is the sum of:
//! - the consumables of the task rules' occurrences due that day (`perStay + perNight × the
//!   stay's nights`, as completing the turnover draws them, `maintenance::consumables`), over the
//!   stays and rules the turnover generation reads (the same occurrence words,
//!   `maintenance::turnovers::rule_occurrences`), less the occurrences whose work order already
//!   drew them or was cancelled. A line names a SKU; of the villa's items with that SKU, the one
//!   holding the most draws it (as completion does);
//! - the item's own `usePerStay` on each stay's checkout day and `usePerNight` on each occupied
//!   night, over the villa's CONFIRMED stays and owner stays.
//!
//! The projected balance of a day is the quantity held now less the use of every day up to and
//! including it. The run-out date is the first day whose use brings it to 0 or below. The
//! quantity to order now is what brings the balance at the horizon back to `maxStock` (to
//! `minStock` for an item without a maximum), 0 when it is there already. Purchases and
//! transfers to come are not known to the platform and not counted.
//!
//! The alert evaluation (`inventory::alerts`) reads the same daily use over
//! `FORECAST_ALERT_DAYS`: an item whose projected balance at the end of that window is below its
//! minimum, or which runs out inside it, has a FORECAST_SHORTAGE alert, CRITICAL when it runs
//! out within `FORECAST_CRITICAL_DAYS`.

use std::collections::HashMap;

use chrono::{Days, NaiveDate};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::pagination::{JsonPage, PageRequest};
use crate::{Error, Result};

/// The longest horizon of the report, and of `FORECAST_ALERT_DAYS`.
pub const MAX_DAYS: u32 = 120;
/// The report's horizon when the request names none.
pub const DEFAULT_DAYS: u32 = 30;

/// The alert evaluation's windows (`FORECAST_ALERT_DAYS`, `FORECAST_CRITICAL_DAYS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlertWindows {
    pub alert_days: u32,
    pub critical_days: u32,
}

impl Default for AlertWindows {
    fn default() -> Self {
        Self {
            alert_days: 14,
            critical_days: 3,
        }
    }
}

/// The day `days` after `day` (the horizon's end, exclusive).
pub fn after(day: NaiveDate, days: u32) -> NaiveDate {
    day.checked_add_days(Days::new(u64::from(days)))
        .unwrap_or(NaiveDate::MAX)
}

// The expected use per item and day, over the days `[$3, $4)`: rows (item_id, day, qty). `$1` a
// property (NULL: every one), `$2` the items (uuid[]; NULL: every item of the property). A rule's
// line goes to the item of its SKU holding the most, so `$2` must hold, with an item, every item
// of its villa with its SKU ([`with_same_sku`]).
macro_rules! daily_use {
    () => {
        concat!(
            "WITH scope AS (
    SELECT i.id, i.property_id, i.sku, i.quantity, i.use_per_stay, i.use_per_night
    FROM inventory_items i
    WHERE i.archived_at IS NULL AND ($1::uuid IS NULL OR i.property_id = $1)
      AND ($2::uuid[] IS NULL OR i.id = ANY($2::uuid[]))),
stays AS (
    SELECT r.id, r.check_in, r.check_out, r.status, l.villa_id
    FROM pms_listings l JOIN pms_reservations r ON r.listing_pms_id = l.pms_id
    WHERE l.villa_id IN (SELECT DISTINCT property_id FROM scope)
      AND r.status IN ('CONFIRMED', 'OWNER_STAY')
      AND r.check_out >= $3::date - 31 AND r.check_in <= $4::date + 31),
rule_use AS (
    SELECT s.villa_id, c.line->>'itemSku' AS sku, o.due AS day,
           round(coalesce((c.line->>'perStay')::numeric, 0)
                 + coalesce((c.line->>'perNight')::numeric, 0) * (s.check_out - s.check_in), 3) AS qty
    FROM task_rules ru
    JOIN stays s ON ",
            crate::maintenance::turnovers::rule_applies_to_stay!(),
            "
    ",
            crate::maintenance::turnovers::rule_occurrences!(),
            "
    CROSS JOIN LATERAL jsonb_array_elements(ru.consumables) AS c (line)
    WHERE ru.archived_at IS NULL AND o.due >= $3::date AND o.due < $4::date
      AND NOT EXISTS (SELECT 1 FROM work_orders w
                      WHERE w.task_rule_id = ru.id AND w.reservation_id = s.id AND w.occurrence_index = o.idx
                        AND (w.consumables_drawn_at IS NOT NULL OR w.status = 'CANCELLED'))),
drawer AS (
    SELECT DISTINCT ON (property_id, sku) id, property_id, sku
    FROM scope ORDER BY property_id, sku, quantity DESC, id),
events AS (
    SELECT d.id AS item_id, u.day, u.qty
    FROM rule_use u JOIN drawer d ON d.property_id = u.villa_id AND d.sku = u.sku
    WHERE u.qty > 0
    UNION ALL
    SELECT i.id, s.check_out, i.use_per_stay
    FROM scope i JOIN stays s ON s.villa_id = i.property_id
    WHERE i.use_per_stay > 0 AND s.check_out >= $3::date AND s.check_out < $4::date
    UNION ALL
    SELECT i.id, greatest(s.check_in, $3::date) + n.k, i.use_per_night
    FROM scope i JOIN stays s ON s.villa_id = i.property_id
    CROSS JOIN LATERAL generate_series(0, least(s.check_out, $4::date) - greatest(s.check_in, $3::date) - 1) AS n (k)
    WHERE i.use_per_night > 0 AND s.check_out > $3::date AND s.check_in < $4::date)
SELECT item_id, day, sum(qty) AS qty FROM events GROUP BY item_id, day"
        )
    };
}

/// The expected use per item and day ([`report`]'s statement), public for `bench/forecast.sh`,
/// which has Postgres run it alone beside the route. `$1` a property, `$2` the items (uuid[];
/// NULL: all), `$3` the first day, `$4` the day after the last.
pub const DAILY_USE: &str = daily_use!();

// The FORECAST_SHORTAGE causes of an evaluation: (item_id, balance, run_out, severity,
// last_day). `$1` a property (NULL: every one), `$2` the items (uuid[], with their same-SKU
// siblings; NULL: all of the scope), `$3` today, `$4` the end of the alert window (exclusive),
// `$5` the end of the critical window (exclusive). An item with expected use in the window whose
// balance at its end is below the minimum, or which runs out inside it.
macro_rules! alert_causes {
    () => {
        concat!(
            "WITH daily AS (",
            daily_use!(),
            "),
cumulative AS (
    SELECT item_id, day, sum(qty) OVER (PARTITION BY item_id ORDER BY day) AS used FROM daily),
per_item AS (
    SELECT c.item_id, max(c.used) AS used, min(c.day) FILTER (WHERE c.used >= i.quantity) AS run_out
    FROM cumulative c JOIN inventory_items i ON i.id = c.item_id
    GROUP BY c.item_id)
SELECT p.item_id, i.quantity - p.used AS balance, p.run_out,
       CASE WHEN p.run_out < $5::date THEN 'CRITICAL' ELSE 'WARNING' END AS severity,
       $4::date - 1 AS last_day
FROM per_item p JOIN inventory_items i ON i.id = p.item_id
WHERE i.quantity - p.used < i.min_stock OR p.run_out IS NOT NULL"
        )
    };
}

/// The forecast's causes as a query, public for `bench/forecast.sh`, which has Postgres run it
/// alone beside the evaluation.
pub const ALERT_CAUSES_QUERY: &str = alert_causes!();

/// The forecast's causes as the session's temporary table `alert_forecast`, which the alert
/// statements read ([`super::alerts::evaluate`] drops it before and after).
pub(crate) const ALERT_CAUSES: &str =
    concat!("CREATE TEMP TABLE alert_forecast AS ", alert_causes!());

/// `items` and every item of their villas with one of their SKUs, not archived (and `items`
/// themselves whatever their state): what their forecast reads, since a rule's line goes to the
/// item of its SKU holding the most.
pub async fn with_same_sku(conn: &mut PgConnection, items: &[Uuid]) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM inventory_items WHERE id = ANY($1)
         UNION
         SELECT s.id FROM inventory_items i JOIN inventory_items s
           ON s.property_id = i.property_id AND s.sku = i.sku AND s.archived_at IS NULL
         WHERE i.id = ANY($1)",
    )
    .bind(items)
    .fetch_all(&mut *conn)
    .await?)
}

/// One item's line of the report.
#[derive(Debug, Clone, sqlx::FromRow)]
struct ItemRow {
    id: Uuid,
    name: String,
    sku: String,
    unit: String,
    quantity: Decimal,
    min_stock: Decimal,
    max_stock: Option<Decimal>,
    use_per_stay: Option<Decimal>,
    use_per_night: Option<Decimal>,
}

/// What one item's forecast comes to (the figures the report and the alert share).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Projection {
    /// `(day, use, balance at the end of the day)` for every day of the horizon.
    pub days: Vec<(NaiveDate, Decimal, Decimal)>,
    pub expected_use: Decimal,
    pub balance_at_horizon: Decimal,
    pub run_out: Option<NaiveDate>,
    /// The first day whose balance is below the minimum.
    pub below_minimum_on: Option<NaiveDate>,
    pub order_quantity: Decimal,
}

/// The projection of an item holding `quantity` over `days` days from `from`, given its use per
/// day (days without use absent).
pub fn project(
    from: NaiveDate,
    days: u32,
    quantity: Decimal,
    min_stock: Decimal,
    max_stock: Option<Decimal>,
    use_by_day: &HashMap<NaiveDate, Decimal>,
) -> Projection {
    let mut balance = quantity;
    let mut used = Decimal::ZERO;
    let mut out = Vec::with_capacity(days as usize);
    let (mut run_out, mut below) = (None, None);
    for n in 0..days {
        let day = after(from, n);
        let use_today = use_by_day.get(&day).copied().unwrap_or_default();
        balance -= use_today;
        used += use_today;
        if run_out.is_none() && used > Decimal::ZERO && used >= quantity {
            run_out = Some(day);
        }
        if below.is_none() && balance < min_stock {
            below = Some(day);
        }
        out.push((day, use_today, balance));
    }
    let target = max_stock.unwrap_or(min_stock);
    Projection {
        days: out,
        expected_use: used,
        balance_at_horizon: balance,
        run_out,
        below_minimum_on: below,
        order_quantity: (target - balance).max(Decimal::ZERO),
    }
}

/// The forecast of a property's items (404 `PROPERTY_NOT_FOUND` for no such villa), a page of
/// them by name, over `days` days from `today`.
pub async fn report(
    conn: &mut PgConnection,
    property: Uuid,
    today: NaiveDate,
    days: u32,
    page: PageRequest,
) -> Result<JsonPage> {
    let name: Option<String> = sqlx::query_scalar("SELECT villa_name FROM villas WHERE id = $1")
        .bind(property)
        .fetch_optional(&mut *conn)
        .await?;
    let name = name.ok_or(Error::NotFound("property"))?;
    let items: Vec<ItemRow> = sqlx::query_as(
        "SELECT id, name, sku, unit, quantity, min_stock, max_stock, use_per_stay, use_per_night
         FROM inventory_items WHERE property_id = $1 AND archived_at IS NULL
         ORDER BY name, id LIMIT $2 OFFSET $3",
    )
    .bind(property)
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(&mut *conn)
    .await?;
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM inventory_items WHERE property_id = $1 AND archived_at IS NULL",
    )
    .bind(property)
    .fetch_one(&mut *conn)
    .await?;
    let until = after(today, days);
    let page_ids: Vec<Uuid> = items.iter().map(|i| i.id).collect();
    let ids = with_same_sku(conn, &page_ids).await?;
    let rows: Vec<(Uuid, NaiveDate, Decimal)> = if ids.is_empty() {
        Vec::new()
    } else {
        sqlx::query_as(DAILY_USE)
            .bind(property)
            .bind(&ids)
            .bind(today)
            .bind(until)
            .fetch_all(&mut *conn)
            .await?
    };
    let mut use_of: HashMap<Uuid, HashMap<NaiveDate, Decimal>> = HashMap::new();
    for (item, day, qty) in rows {
        use_of.entry(item).or_default().insert(day, qty);
    }
    let empty = HashMap::new();
    let data: Vec<Value> = items
        .iter()
        .map(|item| {
            let p = project(
                today,
                days,
                item.quantity,
                item.min_stock,
                item.max_stock,
                use_of.get(&item.id).unwrap_or(&empty),
            );
            json!({
                "itemId": item.id,
                "name": item.name,
                "sku": item.sku,
                "unit": item.unit,
                "quantity": number(item.quantity),
                "minStock": number(item.min_stock),
                "maxStock": item.max_stock.map(number),
                "usePerStay": item.use_per_stay.map(number),
                "usePerNight": item.use_per_night.map(number),
                "expectedUse": number(p.expected_use),
                "balanceAtHorizon": number(p.balance_at_horizon),
                "runOutDate": p.run_out,
                "belowMinimumOn": p.below_minimum_on,
                "orderQuantity": number(p.order_quantity),
                "days": p.days.iter().map(|(day, used, balance)| json!({
                    "date": day, "use": number(*used), "balance": number(*balance),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let summary = json!({
        "property": {"id": property, "name": name},
        "from": today,
        "to": after(today, days.saturating_sub(1)),
        "days": days,
    });
    Ok(JsonPage {
        data: Value::Array(data).to_string(),
        total,
        summary: Some(summary.to_string()),
    })
}

use super::movements::number;

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn dec(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn a_projection_runs_out_on_the_day_the_use_reaches_the_stock() {
        let uses = HashMap::from([
            (d("2026-12-02"), dec("4")),
            (d("2026-12-03"), dec("6")),
            (d("2026-12-05"), dec("5")),
        ]);
        let p = project(
            d("2026-12-01"),
            5,
            dec("10"),
            dec("3"),
            Some(dec("20")),
            &uses,
        );
        assert_eq!(p.expected_use, dec("15"));
        assert_eq!(p.balance_at_horizon, dec("-5"));
        assert_eq!(p.run_out, Some(d("2026-12-03")), "4 + 6 uses the 10 held");
        assert_eq!(p.below_minimum_on, Some(d("2026-12-03")));
        assert_eq!(
            p.order_quantity,
            dec("25"),
            "from -5 back to the maximum of 20"
        );
        assert_eq!(
            p.days.iter().map(|x| x.2).collect::<Vec<_>>(),
            ["10", "6", "0", "0", "-5"].map(dec)
        );
    }

    #[test]
    fn an_item_that_lasts_needs_no_order_and_never_runs_out() {
        let p = project(
            d("2026-12-01"),
            3,
            dec("10"),
            dec("2"),
            None,
            &HashMap::new(),
        );
        assert_eq!((p.run_out, p.below_minimum_on), (None, None));
        assert_eq!(p.order_quantity, Decimal::ZERO);
        // Without a maximum, the order brings the balance to the minimum.
        let uses = HashMap::from([(d("2026-12-01"), dec("9.5"))]);
        let p = project(d("2026-12-01"), 3, dec("10"), dec("2"), None, &uses);
        assert_eq!(p.order_quantity, dec("1.5"));
        assert_eq!(p.run_out, None);
    }
}
