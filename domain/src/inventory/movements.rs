//! The ledger. Every change of an item's quantity is a movement written by [`apply`], in one
//! statement that changes the quantity only if it stays at or above 0 and records the movement
//! with the balance it left: Postgres re-checks that condition on the latest version of the row
//! when concurrent movements queue on it, so the stock never goes negative and no movement is
//! lost, and at every moment the quantity is the sum of the movements.

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::{POSTED_MOVEMENT_TYPES, REFERENCE_TYPES};
use crate::clock::BusinessZone;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{members, parse_amount};
use crate::{Error, Problems, Result};

// A movement row (alias `m`) as the API shows it.
macro_rules! movement_view {
    () => {
        "jsonb_build_object('id', m.id, 'itemId', m.item_id, 'type', m.type,
            'quantity', CASE WHEN m.type = 'ADJUSTMENT' THEN m.change ELSE abs(m.change) END,
            'change', m.change, 'balanceAfter', m.balance_after, 'unitCost', m.unit_cost, 'notes', m.notes,
            'referenceType', m.reference_type, 'referenceId', m.reference_id, 'transferId', m.transfer_id,
            'workOrderId', m.work_order_id, 'createdBy', m.created_by, 'createdAt', m.created_at)"
    };
}
pub(crate) use movement_view;

/// A movement to write.
#[derive(Debug, Clone)]
pub struct NewMovement {
    pub item_id: Uuid,
    pub kind: &'static str,
    /// The signed change of the quantity (never 0).
    pub change: Decimal,
    /// The price of stock coming in (a purchase, a transfer); the item's unit cost becomes the
    /// weighted average of the stock held and the stock added.
    pub unit_cost: Option<Decimal>,
    pub notes: Option<String>,
    pub reference_type: Option<&'static str>,
    pub reference_id: Option<String>,
    pub transfer_id: Option<Uuid>,
    /// The work order whose consumables it draws (`maintenance::consumables`).
    pub work_order_id: Option<Uuid>,
    /// Also into an archived item (stock coming back from a cancelled transfer).
    pub archived_too: bool,
}

/// Writes the movement and the item's new quantity in one statement. 404 for an unknown (or
/// archived) item; 409 `INSUFFICIENT_STOCK` with `available` and `requested` when the stock
/// would go below 0, and then nothing is written.
pub async fn apply(conn: &mut PgConnection, m: &NewMovement, by: &str) -> Result<Value> {
    let written: Option<Value> = sqlx::query_scalar(concat!(
        "WITH item AS (
            UPDATE inventory_items i SET quantity = i.quantity + $2,
                unit_cost = CASE WHEN $3::numeric IS NULL OR $2 < 0 THEN i.unit_cost
                                 WHEN i.unit_cost IS NULL OR i.quantity + $2 = 0 THEN $3
                                 ELSE round((i.quantity * i.unit_cost + $2 * $3) / (i.quantity + $2), 4) END,
                updated_at = now()
            WHERE i.id = $1 AND (i.archived_at IS NULL OR $10) AND i.quantity + $2 >= 0
            RETURNING i.id, i.quantity, i.unit_cost),
         m AS (
            INSERT INTO inventory_movements (id, item_id, type, change, balance_after, unit_cost, notes,
                                             reference_type, reference_id, transfer_id, work_order_id, created_by)
            SELECT $4, item.id, $5, $2, item.quantity, coalesce($3, item.unit_cost), $6, $7, $8, $9, $12, $11
            FROM item
            RETURNING *)
         SELECT ",
        movement_view!(),
        " FROM m"
    ))
    .bind(m.item_id)
    .bind(m.change)
    .bind(m.unit_cost)
    .bind(Uuid::now_v7())
    .bind(m.kind)
    .bind(&m.notes)
    .bind(m.reference_type)
    .bind(&m.reference_id)
    .bind(m.transfer_id)
    .bind(m.archived_too)
    .bind(by)
    .bind(m.work_order_id)
    .fetch_optional(&mut *conn)
    .await
    .map_err(too_large)?;
    if let Some(movement) = written {
        return Ok(movement);
    }
    let available: Option<Decimal> = sqlx::query_scalar(
        "SELECT quantity FROM inventory_items WHERE id = $1 AND (archived_at IS NULL OR $2)",
    )
    .bind(m.item_id)
    .bind(m.archived_too)
    .fetch_optional(&mut *conn)
    .await?;
    match available {
        None => Err(Error::NotFound("item")),
        Some(available) => Err(insufficient(m.item_id, available, -m.change)),
    }
}

/// A quantity or cost past what a column holds (`22003`, numeric overflow): many large purchases
/// into one item. A 400 on `quantity`, not a 500.
pub fn too_large(err: sqlx::Error) -> Error {
    crate::on_refusal(err, crate::Refusal::Data, || {
        Error::invalid(
            "quantity",
            "out_of_range",
            "the item's quantity or cost would pass the largest the ledger keeps (999,999,999,999)",
        )
    })
}

/// 409 `INSUFFICIENT_STOCK` with the figures.
pub fn insufficient(item: Uuid, available: Decimal, requested: Decimal) -> Error {
    Error::ConflictWith {
        code: "INSUFFICIENT_STOCK",
        message: format!(
            "item {item} holds {} and {} was requested",
            available.normalize(),
            requested.normalize()
        ),
        details: json!({
            "itemId": item,
            "available": number(available),
            "requested": number(requested),
        }),
    }
}

/// A decimal as a JSON number (for error details; stored figures go through Postgres).
pub fn number(d: Decimal) -> Value {
    serde_json::from_str(&d.normalize().to_string()).unwrap_or(Value::Null)
}

/// Checks a posted movement: `type` one of [`POSTED_MOVEMENT_TYPES`]; `quantity` positive with
/// at most 3 decimal places (signed and non-zero for ADJUSTMENT); `unitCost` (PURCHASE only)
/// not negative; `referenceType` one of [`REFERENCE_TYPES`] with a `referenceId`.
pub fn parse(body: &Map<String, Value>, problems: &mut Problems) -> Option<NewMovement> {
    let item_id = members::uuid(body, "itemId", "itemId", problems);
    let kind = match body.get("type") {
        None | Some(Value::Null) => {
            problems.push("type", "required", "type is required");
            None
        }
        Some(Value::String(s)) => {
            let upper = s.trim().to_uppercase();
            if matches!(upper.as_str(), "INITIAL" | "TRANSFER_IN" | "TRANSFER_OUT") {
                problems.push(
                    "type",
                    "invalid_value",
                    format!(
                        "{upper} movements are written by the platform; post one of {}",
                        POSTED_MOVEMENT_TYPES.join(", ")
                    ),
                );
                None
            } else {
                problems.closed("type", &upper, POSTED_MOVEMENT_TYPES)
            }
        }
        Some(_) => {
            problems.push("type", "invalid_type", "must be a string");
            None
        }
    };
    let adjustment = kind == Some("ADJUSTMENT");
    let quantity = match body.get("quantity") {
        None | Some(Value::Null) => {
            problems.push("quantity", "required", "quantity is required");
            None
        }
        Some(raw) => match parse_amount(raw, 3, true) {
            Ok(q) if q.is_zero() => {
                problems.push("quantity", "out_of_range", "must not be 0");
                None
            }
            Ok(q) if q < Decimal::ZERO && !adjustment => {
                problems.push(
                    "quantity",
                    "out_of_range",
                    "must be positive (only an ADJUSTMENT is signed)",
                );
                None
            }
            Ok(q) => Some(q),
            Err((code, message)) => {
                problems.push("quantity", code, message);
                None
            }
        },
    };
    let unit_cost = match body.get("unitCost") {
        None | Some(Value::Null) => None,
        Some(raw) => match parse_amount(raw, 4, false) {
            Ok(_) if kind.is_some() && kind != Some("PURCHASE") => {
                problems.push(
                    "unitCost",
                    "invalid_value",
                    "only a PURCHASE carries a unit cost",
                );
                None
            }
            Ok(c) => Some(c),
            Err((code, message)) => {
                problems.push("unitCost", code, message);
                None
            }
        },
    };
    let notes = members::text(body, "notes", "", 2000, problems);
    let reference_type = match body.get("referenceType") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => problems.closed("referenceType", s, REFERENCE_TYPES),
        Some(_) => {
            problems.push("referenceType", "invalid_type", "must be a string");
            None
        }
    };
    let reference_id = members::text(body, "referenceId", "", 100, problems);
    if reference_type.is_some() && reference_id.is_none() {
        problems.push(
            "referenceId",
            "required",
            "referenceId is required with a referenceType",
        );
    }
    if reference_type == Some("WORK_ORDER")
        && let Some(id) = &reference_id
        && id.parse::<Uuid>().is_err()
    {
        problems.push(
            "referenceId",
            "invalid_format",
            "a WORK_ORDER reference is the work order's id (a UUID)",
        );
    }
    let change = match (kind, quantity) {
        (Some("PURCHASE" | "RETURN" | "ADJUSTMENT"), Some(q)) => q,
        (Some(_), Some(q)) => -q,
        _ => return None,
    };
    Some(NewMovement {
        item_id: item_id?,
        kind: kind?,
        change,
        unit_cost,
        notes,
        reference_type,
        reference_id,
        transfer_id: None,
        work_order_id: None,
        archived_too: false,
    })
}

/// A `WORK_ORDER` reference must name a maintenance work order (a problem on `referenceId`).
pub async fn check_reference(conn: &mut PgConnection, m: &NewMovement) -> Result<()> {
    if m.reference_type != Some("WORK_ORDER") {
        return Ok(());
    }
    let id: Option<Uuid> = m.reference_id.as_deref().and_then(|s| s.parse().ok());
    let found: Option<bool> = sqlx::query_scalar("SELECT true FROM work_orders WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    if found.is_none() {
        return Err(Error::invalid(
            "referenceId",
            "invalid_value",
            "no maintenance work order has this id",
        ));
    }
    Ok(())
}

/// The filters of the movement list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub item_id: Option<Uuid>,
    pub kind: Option<&'static str>,
    pub property_id: Option<Uuid>,
    /// From this date, inclusive.
    pub start_date: Option<NaiveDate>,
    /// To this date, inclusive.
    pub end_date: Option<NaiveDate>,
    /// Whose days the dates are: the company's (`BUSINESS_TIME_ZONE`).
    pub zone: BusinessZone,
}

impl Filter {
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(item) = self.item_id {
            sql.push(" AND m.item_id = ").push_bind(item);
        }
        if let Some(kind) = self.kind {
            sql.push(" AND m.type = ").push_bind(kind);
        }
        if let Some(property) = self.property_id {
            sql.push(" AND i.property_id = ").push_bind(property);
        }
        if let Some(start) = self.start_date {
            sql.push(" AND m.created_at >= ")
                .push_bind(start)
                .push("::date::timestamp AT TIME ZONE ")
                .push_bind(self.zone.name())
                .push("::text");
        }
        if let Some(end) = self.end_date {
            sql.push(" AND m.created_at < (")
                .push_bind(end)
                .push("::date + 1)::timestamp AT TIME ZONE ")
                .push_bind(self.zone.name())
                .push("::text");
        }
    }
}

/// A page of movements, newest first, with their item and property.
pub async fn list(conn: &mut PgConnection, f: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM inventory_movements m JOIN inventory_items i ON i.id = m.item_id",
        item: concat!(
            movement_view!(),
            " || jsonb_build_object('item', jsonb_build_object('id', i.id, 'name', i.name, 'sku', i.sku),
               'propertyId', i.property_id, 'property', jsonb_build_object('id', v.id, 'name', v.villa_name))"
        ),
        from: " FROM inventory_movements m JOIN inventory_items i ON i.id = m.item_id
                JOIN villas v ON v.id = i.property_id",
        order: "m.created_at DESC, m.id DESC",
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql)).await
}
