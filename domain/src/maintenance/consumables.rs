//! Turnover consumables: completing a generated work order draws its rule's consumables from the
//! villa's stock through the ledger (`inventory::movements::apply`), once, and records what it
//! wanted, drew and lacked on the work order.

use rust_decimal::Decimal;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::Result;
use crate::inventory::movements::{self, NewMovement};

/// Draws the consumables of work order `id`, which the caller has locked and is completing: only
/// a generated one (rule and stay still set) whose consumables were never drawn. The claim on
/// `consumables_drawn_at` is conditional, so a reopened work order completed again, or a second
/// completion at the same moment, draws nothing. For each line of the rule (as it is now),
/// `perStay + perNight × nights` of the villa's item with that SKU: one `USE` movement from the
/// non-archived item holding the most (several locations: that one only), at most what it holds;
/// the rest is the line's shortfall. Answers the items drawn from (their alerts to evaluate).
pub async fn draw(conn: &mut PgConnection, id: Uuid, by: &str) -> Result<Vec<Uuid>> {
    let claimed: Option<(Uuid, String)> = sqlx::query_as(
        "WITH claimed AS (
            UPDATE work_orders SET consumables_drawn_at = now()
            WHERE id = $1 AND consumables_drawn_at IS NULL
              AND task_rule_id IS NOT NULL AND reservation_id IS NOT NULL
            RETURNING villa_id, task_rule_id)
         SELECT c.villa_id, r.name FROM claimed c JOIN task_rules r ON r.id = c.task_rule_id",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((villa, rule_name)) = claimed else {
        return Ok(Vec::new());
    };
    // Each line's wanted quantity, exact to 3 places (no trailing zeros, as a posted movement's),
    // in the rule's order.
    let lines: Vec<(String, Decimal)> = sqlx::query_as(
        "SELECT c->>'itemSku',
                trim_scale(round(coalesce((c->>'perStay')::numeric, 0)
                      + coalesce((c->>'perNight')::numeric, 0) * (s.check_out - s.check_in), 3))
         FROM work_orders w
         JOIN task_rules r ON r.id = w.task_rule_id
         JOIN pms_reservations s ON s.id = w.reservation_id
         CROSS JOIN LATERAL jsonb_array_elements(r.consumables) WITH ORDINALITY e(c, k)
         WHERE w.id = $1 ORDER BY k",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let notes = format!("turnover consumables of rule \"{rule_name}\"");
    let mut skus = Vec::with_capacity(lines.len());
    let mut wanted_all = Vec::with_capacity(lines.len());
    let mut drawn_all = Vec::with_capacity(lines.len());
    let mut items = Vec::new();
    for (sku, wanted) in lines {
        // Locked, then sorted here: FOR UPDATE answers each row's latest quantity, but an ORDER
        // BY in the same statement may have sorted the versions it first saw.
        let mut held: Vec<(Uuid, Decimal)> = sqlx::query_as(
            "SELECT id, quantity FROM inventory_items
             WHERE property_id = $1 AND sku = $2 AND archived_at IS NULL
             ORDER BY id FOR UPDATE",
        )
        .bind(villa)
        .bind(&sku)
        .fetch_all(&mut *conn)
        .await?;
        held.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut drawn = Decimal::ZERO;
        if let Some(&(item, available)) = held.first() {
            drawn = wanted.min(available);
            if drawn > Decimal::ZERO {
                movements::apply(
                    conn,
                    &NewMovement {
                        item_id: item,
                        kind: "USE",
                        change: -drawn,
                        unit_cost: None,
                        notes: Some(notes.clone()),
                        reference_type: Some("WORK_ORDER"),
                        reference_id: Some(id.to_string()),
                        transfer_id: None,
                        work_order_id: Some(id),
                        archived_too: false,
                    },
                    by,
                )
                .await?;
                items.push(item);
            }
        }
        skus.push(sku);
        wanted_all.push(wanted);
        drawn_all.push(drawn);
    }
    sqlx::query(
        "UPDATE work_orders SET consumables = (
             SELECT coalesce(jsonb_agg(jsonb_build_object('itemSku', t.sku, 'wanted', trim_scale(t.wanted),
                 'drawn', trim_scale(t.drawn), 'shortfall', trim_scale(t.wanted - t.drawn)) ORDER BY t.k), '[]')
             FROM unnest($2::text[], $3::numeric[], $4::numeric[]) WITH ORDINALITY t(sku, wanted, drawn, k))
         WHERE id = $1",
    )
    .bind(id)
    .bind(&skus)
    .bind(&wanted_all)
    .bind(&drawn_all)
    .execute(&mut *conn)
    .await?;
    items.dedup();
    Ok(items)
}
