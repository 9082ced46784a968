//! Transfers between two locations (of one property or of two). Creating one takes every line
//! out of the source at once (`TRANSFER_OUT`), all or nothing; the stock is then in transit until
//! the destination receives it (`TRANSFER_IN` into the item with the same sku there, created when
//! there is none) or the transfer is cancelled (the stock goes back to the source).

use rust_decimal::Decimal;
use serde_json::{Map, Value};
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::movements::{self, NewMovement};
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{members, parse_amount};
use crate::{Error, Problems, Result};

/// At most this many lines per transfer.
pub const MAX_LINES: usize = 200;

/// A transfer to create, checked.
#[derive(Debug, Clone)]
pub struct NewTransfer {
    pub source: Uuid,
    pub destination: Uuid,
    /// (item, quantity), each item once.
    pub lines: Vec<(Uuid, Decimal)>,
    pub notes: Option<String>,
}

fn quantity_member(
    body: &Map<String, Value>,
    key: &str,
    name: &str,
    allow_zero: bool,
    problems: &mut Problems,
) -> Option<Decimal> {
    match body.get(key) {
        None | Some(Value::Null) => {
            problems.push(name, "required", format!("{name} is required"));
            None
        }
        Some(raw) => match parse_amount(raw, 3, false) {
            Ok(q) if q.is_zero() && !allow_zero => {
                problems.push(name, "out_of_range", "must be greater than 0");
                None
            }
            Ok(q) => Some(q),
            Err((code, message)) => {
                problems.push(name, code, message);
                None
            }
        },
    }
}

/// Checks a transfer body: two different locations, 1 to [`MAX_LINES`] lines, each item once
/// with a positive quantity.
pub fn parse(body: &Map<String, Value>, problems: &mut Problems) -> Option<NewTransfer> {
    let source = members::uuid(body, "sourceLocationId", "sourceLocationId", problems);
    let destination = members::uuid(
        body,
        "destinationLocationId",
        "destinationLocationId",
        problems,
    );
    if source.is_some() && source == destination {
        problems.push(
            "destinationLocationId",
            "invalid_value",
            "must be another location than sourceLocationId",
        );
    }
    let mut lines = Vec::new();
    let mut seen = Vec::new();
    if let Some(items) = members::items(body.get("items"), "items", MAX_LINES, problems) {
        if items.is_empty() {
            problems.push("items", "required", "at least one item is required");
        }
        for (i, item) in items.iter().enumerate() {
            let Some(obj) = members::object(item, "items", i, problems) else {
                continue;
            };
            let prefix = format!("items[{i}]");
            let id = members::uuid(obj, "itemId", &format!("{prefix}.itemId"), problems);
            let quantity = quantity_member(
                obj,
                "quantity",
                &format!("{prefix}.quantity"),
                false,
                problems,
            );
            if let Some(id) = id {
                if seen.contains(&id) {
                    problems.push(
                        format!("{prefix}.itemId"),
                        "duplicate",
                        "each item once per transfer",
                    );
                    continue;
                }
                seen.push(id);
            }
            if let (Some(id), Some(q)) = (id, quantity) {
                lines.push((id, q));
            }
        }
    }
    let notes = members::text(body, "notes", "", 2000, problems);
    Some(NewTransfer {
        source: source?,
        destination: destination?,
        lines,
        notes,
    })
}

/// Takes every line out of the source and records the transfer IN_TRANSIT. Both locations must
/// exist (404); every item must be kept at the source (400 on its line); a short line is 409
/// `INSUFFICIENT_STOCK` naming it, and then nothing moves (the caller's transaction is dropped).
pub async fn create(conn: &mut PgConnection, t: &NewTransfer, by: &str) -> Result<Uuid> {
    for location in [t.source, t.destination] {
        let found: Option<bool> =
            sqlx::query_scalar("SELECT true FROM inventory_locations WHERE id = $1")
                .bind(location)
                .fetch_optional(&mut *conn)
                .await?;
        if found.is_none() {
            return Err(Error::NotFound("location"));
        }
    }
    let ids: Vec<Uuid> = t.lines.iter().map(|(id, _)| *id).collect();
    let at_source: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM inventory_items WHERE id = ANY($1) AND location_id = $2 AND archived_at IS NULL",
    )
    .bind(&ids)
    .bind(t.source)
    .fetch_all(&mut *conn)
    .await?;
    let mut problems = Problems::new();
    for (i, (id, _)) in t.lines.iter().enumerate() {
        if !at_source.contains(id) {
            problems.push(
                format!("items[{i}].itemId"),
                "invalid_value",
                "no item in use with this id is kept at the source location",
            );
        }
    }
    problems.finish()?;
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO inventory_transfers (id, source_location_id, destination_location_id, notes, created_by)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id)
    .bind(t.source)
    .bind(t.destination)
    .bind(&t.notes)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    // Lines are taken in item order, so two transfers sharing items lock them in the same order.
    let mut order: Vec<usize> = (0..t.lines.len()).collect();
    order.sort_by_key(|&i| t.lines[i].0);
    for i in order {
        let (item, quantity) = t.lines[i];
        let out = NewMovement {
            item_id: item,
            kind: "TRANSFER_OUT",
            change: -quantity,
            unit_cost: None,
            notes: None,
            reference_type: Some("TRANSFER"),
            reference_id: Some(id.to_string()),
            transfer_id: Some(id),
            work_order_id: None,
            archived_too: false,
        };
        movements::apply(conn, &out, by).await?;
        sqlx::query(
            "INSERT INTO inventory_transfer_lines (transfer_id, line, item_id, quantity) VALUES ($1, $2, $3, $4)",
        )
        .bind(id)
        .bind(i32::try_from(i).unwrap_or(i32::MAX))
        .bind(item)
        .bind(quantity)
        .execute(&mut *conn)
        .await?;
    }
    Ok(id)
}

/// Locks a transfer that is IN_TRANSIT and answers its destination; 404 for none, 409
/// `INVALID_TRANSFER_STATE` for another state.
async fn lock_in_transit(conn: &mut PgConnection, id: Uuid, doing: &str) -> Result<Uuid> {
    let row: Option<(String, Uuid)> = sqlx::query_as(
        "SELECT status, destination_location_id FROM inventory_transfers WHERE id = $1 FOR UPDATE",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        None => Err(Error::NotFound("transfer")),
        Some((status, destination)) if status == "IN_TRANSIT" => Ok(destination),
        Some((other, _)) => Err(Error::conflict(
            "INVALID_TRANSFER_STATE",
            format!("the transfer is {other}; only a transfer IN_TRANSIT can be {doing}"),
        )),
    }
}

#[derive(sqlx::FromRow)]
struct Line {
    item_id: Uuid,
    quantity: Decimal,
}

async fn lines(conn: &mut PgConnection, id: Uuid) -> Result<Vec<Line>> {
    Ok(sqlx::query_as(
        "SELECT item_id, quantity FROM inventory_transfer_lines WHERE transfer_id = $1 ORDER BY item_id",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?)
}

/// What a receipt says of one line.
#[derive(Debug, Clone)]
pub struct Received {
    pub item_id: Uuid,
    pub quantity: Decimal,
    pub notes: Option<String>,
}

/// Checks a receipt body: `items`, one entry per line (matched against the transfer later).
pub fn parse_receipt(body: &Map<String, Value>, problems: &mut Problems) -> Vec<Received> {
    let mut out = Vec::new();
    if let Some(items) = members::items(body.get("items"), "items", MAX_LINES, problems) {
        for (i, item) in items.iter().enumerate() {
            let Some(obj) = members::object(item, "items", i, problems) else {
                continue;
            };
            let prefix = format!("items[{i}]");
            let id = members::uuid(obj, "itemId", &format!("{prefix}.itemId"), problems);
            let quantity = quantity_member(
                obj,
                "receivedQuantity",
                &format!("{prefix}.receivedQuantity"),
                true,
                problems,
            );
            let notes = members::text(obj, "notes", &format!("{prefix}."), 1000, problems);
            if let Some(id) = id
                && out.iter().any(|r: &Received| r.item_id == id)
            {
                problems.push(format!("{prefix}.itemId"), "duplicate", "each line once");
                continue;
            }
            if let (Some(item_id), Some(quantity)) = (id, quantity) {
                out.push(Received {
                    item_id,
                    quantity,
                    notes,
                });
            }
        }
    }
    out
}

/// Receives an in-transit transfer: each line's received quantity (0 to what was sent) enters
/// the destination item with the same sku, created like the source item when there is none.
pub async fn receive(
    conn: &mut PgConnection,
    id: Uuid,
    receipt: &[Received],
    by: &str,
) -> Result<()> {
    let destination = lock_in_transit(conn, id, "received").await?;
    let sent = lines(conn, id).await?;
    let mut problems = Problems::new();
    for (i, r) in receipt.iter().enumerate() {
        match sent.iter().find(|l| l.item_id == r.item_id) {
            None => problems.push(
                format!("items[{i}].itemId"),
                "invalid_value",
                "this item is not a line of the transfer",
            ),
            Some(line) if r.quantity > line.quantity => problems.push(
                format!("items[{i}].receivedQuantity"),
                "out_of_range",
                format!("at most what was sent ({})", line.quantity.normalize()),
            ),
            Some(_) => {}
        }
    }
    for line in &sent {
        if !receipt.iter().any(|r| r.item_id == line.item_id) {
            problems.push(
                "items",
                "required",
                format!(
                    "the line of item {} is missing: one entry per line",
                    line.item_id
                ),
            );
        }
    }
    problems.finish()?;
    let mut short = false;
    for line in &sent {
        let Some(r) = receipt.iter().find(|r| r.item_id == line.item_id) else {
            continue;
        };
        short |= r.quantity < line.quantity;
        let mut target = None;
        if r.quantity > Decimal::ZERO {
            let item = destination_item(conn, line.item_id, destination).await?;
            let cost: Option<Decimal> = sqlx::query_scalar(
                "SELECT s.unit_cost FROM inventory_items s JOIN inventory_items d ON d.id = $2
                 WHERE s.id = $1 AND s.currency = d.currency",
            )
            .bind(line.item_id)
            .bind(item)
            .fetch_optional(&mut *conn)
            .await?
            .flatten();
            let incoming = NewMovement {
                item_id: item,
                kind: "TRANSFER_IN",
                change: r.quantity,
                unit_cost: cost,
                notes: r.notes.clone(),
                reference_type: Some("TRANSFER"),
                reference_id: Some(id.to_string()),
                transfer_id: Some(id),
                work_order_id: None,
                archived_too: false,
            };
            movements::apply(conn, &incoming, by).await?;
            target = Some(item);
        }
        sqlx::query(
            "UPDATE inventory_transfer_lines SET received_quantity = $3, destination_item_id = $4, notes = $5
             WHERE transfer_id = $1 AND item_id = $2",
        )
        .bind(id)
        .bind(line.item_id)
        .bind(r.quantity)
        .bind(target)
        .bind(&r.notes)
        .execute(&mut *conn)
        .await?;
    }
    sqlx::query(
        "UPDATE inventory_transfers SET status = $2, received_by = $3, received_at = now() WHERE id = $1",
    )
    .bind(id)
    .bind(if short {
        "RECEIVED_WITH_DISCREPANCY"
    } else {
        "RECEIVED"
    })
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The item in use with the source item's sku at the destination location, created (same name,
/// category, unit, unit cost, currency; no stock yet) when there is none.
async fn destination_item(
    conn: &mut PgConnection,
    source_item: Uuid,
    destination: Uuid,
) -> Result<Uuid> {
    // ON CONFLICT on the one-sku-per-location index: two receipts creating it at once end with one.
    sqlx::query(
        "INSERT INTO inventory_items (id, property_id, location_id, name, sku, category, unit, unit_cost, currency,
                                      condition, expiry_date, description)
         SELECT $3, l.property_id, l.id, s.name, s.sku, s.category, s.unit, s.unit_cost, s.currency,
                s.condition, s.expiry_date, s.description
         FROM inventory_items s, inventory_locations l WHERE s.id = $1 AND l.id = $2
         ON CONFLICT (location_id, sku) WHERE archived_at IS NULL DO NOTHING",
    )
    .bind(source_item)
    .bind(destination)
    .bind(Uuid::now_v7())
    .execute(&mut *conn)
    .await?;
    Ok(sqlx::query_scalar(
        "SELECT d.id FROM inventory_items d JOIN inventory_items s ON s.sku = d.sku
         WHERE s.id = $1 AND d.location_id = $2 AND d.archived_at IS NULL",
    )
    .bind(source_item)
    .bind(destination)
    .fetch_one(&mut *conn)
    .await?)
}

/// Cancels an in-transit transfer: every line goes back into its source item.
pub async fn cancel(conn: &mut PgConnection, id: Uuid, by: &str) -> Result<()> {
    lock_in_transit(conn, id, "cancelled").await?;
    for line in lines(conn, id).await? {
        let back = NewMovement {
            item_id: line.item_id,
            kind: "TRANSFER_IN",
            change: line.quantity,
            unit_cost: None,
            notes: Some("transfer cancelled".into()),
            reference_type: Some("TRANSFER"),
            reference_id: Some(id.to_string()),
            transfer_id: Some(id),
            work_order_id: None,
            archived_too: true,
        };
        movements::apply(conn, &back, by).await?;
    }
    sqlx::query(
        "UPDATE inventory_transfers SET status = 'CANCELLED', cancelled_by = $2, cancelled_at = now() WHERE id = $1",
    )
    .bind(id)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The items of a transfer, for the alerts to evaluate after it moved them.
pub async fn touched_items(conn: &mut PgConnection, id: Uuid) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar(
        "SELECT item_id FROM inventory_transfer_lines WHERE transfer_id = $1
         UNION SELECT destination_item_id FROM inventory_transfer_lines
               WHERE transfer_id = $1 AND destination_item_id IS NOT NULL",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?)
}

// A transfer row (alias `t`) as the API shows it.
macro_rules! transfer_view {
    () => {
        "jsonb_build_object('id', t.id, 'status', t.status,
            'sourceLocationId', t.source_location_id, 'destinationLocationId', t.destination_location_id,
            'sourceLocation', (SELECT jsonb_build_object('id', l.id, 'name', l.name, 'propertyId', l.property_id,
                'path', inventory_location_path(l.id)) FROM inventory_locations l WHERE l.id = t.source_location_id),
            'destinationLocation', (SELECT jsonb_build_object('id', l.id, 'name', l.name, 'propertyId', l.property_id,
                'path', inventory_location_path(l.id)) FROM inventory_locations l WHERE l.id = t.destination_location_id),
            'items', (SELECT coalesce(jsonb_agg(jsonb_build_object('itemId', tl.item_id, 'name', i.name, 'sku', i.sku,
                    'unit', i.unit, 'sent', tl.quantity, 'received', tl.received_quantity,
                    'discrepancy', tl.quantity - tl.received_quantity, 'destinationItemId', tl.destination_item_id,
                    'notes', tl.notes) ORDER BY tl.line), '[]')
                FROM inventory_transfer_lines tl JOIN inventory_items i ON i.id = tl.item_id WHERE tl.transfer_id = t.id),
            'notes', t.notes, 'createdBy', t.created_by, 'createdAt', t.created_at,
            'receivedBy', t.received_by, 'receivedAt', t.received_at,
            'cancelledBy', t.cancelled_by, 'cancelledAt', t.cancelled_at)"
    };
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        transfer_view!(),
        " FROM inventory_transfers t WHERE t.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("transfer"))
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<&'static str>,
    /// The source or the destination.
    pub location_id: Option<Uuid>,
}

impl Filter {
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(status) = self.status {
            sql.push(" AND t.status = ").push_bind(status);
        }
        if let Some(location) = self.location_id {
            sql.push(" AND (t.source_location_id = ")
                .push_bind(location)
                .push(" OR t.destination_location_id = ")
                .push_bind(location)
                .push(")");
        }
    }
}

/// A page of transfers, newest first.
pub async fn list(conn: &mut PgConnection, f: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM inventory_transfers t",
        item: transfer_view!(),
        from: " FROM inventory_transfers t",
        order: "t.created_at DESC, t.id DESC",
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql)).await
}
