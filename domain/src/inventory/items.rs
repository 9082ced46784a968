//! Stock items: what a property keeps at one of its locations. Their quantity changes only
//! through movements ([`super::movements`]); creating an item with a quantity records its
//! `INITIAL` movement in the same transaction.

use rust_decimal::Decimal;
use serde_json::Value;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::{CONDITIONS, UNITS};
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Problems, Result};

/// A new stock item.
pub const CREATE_FIELDS: &[FieldSpec] = &[
    required("name", "name", Kind::Text(200)),
    required("sku", "sku", Kind::Text(64)),
    required("category", "category", Kind::Text(60)),
    required("propertyId", "property_id", Kind::Uuid),
    required("locationId", "location_id", Kind::Uuid),
    required("unit", "unit", Kind::OneOf(UNITS)),
    field("quantity", "quantity", Kind::Amount(3)),
    field("minStock", "min_stock", Kind::Amount(3)),
    field("maxStock", "max_stock", Kind::Amount(3)),
    field("condition", "condition", Kind::OneOf(CONDITIONS)),
    field("unitCost", "unit_cost", Kind::Amount(4)),
    field("currency", "currency", Kind::Currency),
    field("expiryDate", "expiry_date", Kind::Date),
    field("description", "description", Kind::Text(2000)),
    // The item's own expected use (the supplies forecast): per stay, on its checkout day, and
    // per occupied night.
    field("usePerStay", "use_per_stay", Kind::Amount(3)),
    field("usePerNight", "use_per_night", Kind::Amount(3)),
];

/// What an update may change. The quantity is not among them: it moves with the ledger; the
/// location neither: stock moves between locations with a transfer.
pub const UPDATE_FIELDS: &[FieldSpec] = &[
    required("name", "name", Kind::Text(200)),
    required("sku", "sku", Kind::Text(64)),
    required("category", "category", Kind::Text(60)),
    required("unit", "unit", Kind::OneOf(UNITS)),
    field("minStock", "min_stock", Kind::Amount(3)),
    field("maxStock", "max_stock", Kind::Amount(3)),
    field("condition", "condition", Kind::OneOf(CONDITIONS)),
    field("unitCost", "unit_cost", Kind::Amount(4)),
    field("currency", "currency", Kind::Currency),
    field("expiryDate", "expiry_date", Kind::Date),
    field("description", "description", Kind::Text(2000)),
    // The item's own expected use (the supplies forecast): per stay, on its checkout day, and
    // per occupied night.
    field("usePerStay", "use_per_stay", Kind::Amount(3)),
    field("usePerNight", "use_per_night", Kind::Amount(3)),
];

/// The message of a 400 for `quantity` in an update.
pub const QUANTITY_IS_THE_LEDGERS: &str =
    "the quantity changes only through movements: post an ADJUSTMENT to /inventory/movements";

fn amount(patch: &Patch, column: &str) -> Option<Decimal> {
    patch
        .columns
        .get(column)
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

/// `maxStock` at least `minStock` (each as sent, or as stored when `stored` is given).
pub fn check_bounds(
    patch: &Patch,
    stored: Option<(Decimal, Option<Decimal>)>,
    problems: &mut Problems,
) {
    let min = match patch.columns.get("min_stock") {
        Some(Value::Null) => Some(Decimal::ZERO),
        Some(_) => amount(patch, "min_stock"),
        None => Some(stored.map_or(Decimal::ZERO, |s| s.0)),
    };
    let max = match patch.columns.get("max_stock") {
        Some(Value::Null) => None,
        Some(_) => amount(patch, "max_stock"),
        None => stored.and_then(|s| s.1),
    };
    if let (Some(min), Some(max)) = (min, max)
        && max < min
    {
        problems.push(
            "maxStock",
            "out_of_range",
            format!("must be at least minStock ({min})"),
        );
    }
}

/// The category code must name a category (a problem on `category` otherwise); answers it
/// upper-cased.
async fn check_category(conn: &mut PgConnection, patch: &mut Patch) -> Result<()> {
    let Some(code) = patch.columns.get("category").and_then(Value::as_str) else {
        return Ok(());
    };
    let code = code.to_uppercase();
    if !category_exists(conn, &code).await? {
        return Err(Error::invalid(
            "category",
            "invalid_value",
            format!("no category has the code {code}; GET /inventory/categories lists them"),
        ));
    }
    patch.columns.insert("category".into(), Value::String(code));
    Ok(())
}

/// The sku is taken at that location by another item in use.
fn duplicate_sku(err: sqlx::Error) -> Error {
    crate::on_refusal(err, crate::Refusal::Unique, || {
        Error::conflict(
            "DUPLICATE_SKU",
            "an item with this sku is already kept at this location",
        )
    })
}

/// Creates the item and, for a quantity above 0, its `INITIAL` movement. The property must exist
/// (404); the location must be one of the property's (400 on `locationId`).
pub async fn create(conn: &mut PgConnection, mut patch: Patch, by: &str) -> Result<Uuid> {
    let property = patch
        .uuid("property_id")
        .ok_or(Error::NotFound("property"))?;
    let location = patch
        .uuid("location_id")
        .ok_or(Error::NotFound("location"))?;
    super::properties::ensure_exists(conn, property).await?;
    let at: Option<Uuid> =
        sqlx::query_scalar("SELECT property_id FROM inventory_locations WHERE id = $1")
            .bind(location)
            .fetch_optional(&mut *conn)
            .await?;
    if at != Some(property) {
        return Err(Error::invalid(
            "locationId",
            "invalid_value",
            "must be a location of the property (propertyId)",
        ));
    }
    check_category(conn, &mut patch).await?;
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO inventory_items (id, property_id, location_id, name, sku, category, unit, quantity, min_stock,
                                      max_stock, condition, unit_cost, currency, expiry_date, description,
                                      use_per_stay, use_per_night)
         SELECT $1, property_id, location_id, name, sku, category, unit, coalesce(quantity, 0), coalesce(min_stock, 0),
                max_stock, condition, unit_cost, coalesce(currency, 'THB'), expiry_date, description,
                use_per_stay, use_per_night
         FROM jsonb_populate_record(NULL::inventory_items, $2)",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await
    .map_err(duplicate_sku)?;
    if let Some(quantity) = amount(&patch, "quantity").filter(|q| *q > Decimal::ZERO) {
        sqlx::query(
            "INSERT INTO inventory_movements (id, item_id, type, change, balance_after, unit_cost, created_by)
             SELECT $1, i.id, 'INITIAL', $2, i.quantity, i.unit_cost, $3 FROM inventory_items i WHERE i.id = $4",
        )
        .bind(Uuid::now_v7())
        .bind(quantity)
        .bind(by)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(id)
}

/// Changes what the patch holds; 404 for an archived or unknown item.
pub async fn update(conn: &mut PgConnection, id: Uuid, mut patch: Patch) -> Result<()> {
    let stored: Option<(Decimal, Option<Decimal>)> = sqlx::query_as(
        "SELECT min_stock, max_stock FROM inventory_items WHERE id = $1 AND archived_at IS NULL FOR UPDATE",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(stored) = stored else {
        return Err(Error::NotFound("item"));
    };
    let mut problems = Problems::new();
    check_bounds(&patch, Some(stored), &mut problems);
    problems.finish()?;
    check_category(conn, &mut patch).await?;
    sqlx::query(
        "UPDATE inventory_items i SET name = r.name, sku = r.sku, category = r.category, unit = r.unit,
                min_stock = coalesce(r.min_stock, 0), max_stock = r.max_stock, condition = r.condition,
                unit_cost = r.unit_cost, currency = coalesce(r.currency, 'THB'), expiry_date = r.expiry_date,
                description = r.description, use_per_stay = r.use_per_stay, use_per_night = r.use_per_night,
                updated_at = now()
         FROM jsonb_populate_record((SELECT s FROM inventory_items s WHERE s.id = $1), $2) r
         WHERE i.id = $1",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await
    .map_err(duplicate_sku)?;
    Ok(())
}

/// Archives the item: it leaves lists and reads, its movements stay in the reports.
pub async fn archive(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    let done = sqlx::query(
        "UPDATE inventory_items SET archived_at = now(), updated_at = now() WHERE id = $1 AND archived_at IS NULL",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("item"));
    }
    Ok(())
}

// An item row (alias `i`, its property `v`, its location `l`) as a list item.
macro_rules! item_view {
    () => {
        "jsonb_build_object('id', i.id, 'name', i.name, 'sku', i.sku, 'category', i.category,
            'propertyId', i.property_id, 'locationId', i.location_id,
            'property', jsonb_build_object('id', v.id, 'name', v.villa_name),
            'location', jsonb_build_object('id', l.id, 'name', l.name),
            'quantity', i.quantity, 'unit', i.unit, 'minStock', i.min_stock, 'maxStock', i.max_stock,
            'usePerStay', i.use_per_stay, 'usePerNight', i.use_per_night,
            'condition', i.condition, 'unitCost', i.unit_cost, 'currency', i.currency,
            'expiryDate', i.expiry_date, 'description', i.description,
            'lowStock', i.min_stock > 0 AND i.quantity <= i.min_stock,
            'value', round(i.quantity * i.unit_cost, 2),
            'createdAt', i.created_at, 'updatedAt', i.updated_at)"
    };
}

/// The filters of the item list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// A category code; its descendants are included.
    pub category: Option<String>,
    pub property_id: Option<Uuid>,
    pub location_id: Option<Uuid>,
    pub condition: Option<&'static str>,
    /// Only items at or below a minimum above 0.
    pub low_stock: bool,
    /// A part of the name or the sku, in any letter case.
    pub search: Option<String>,
}

impl Filter {
    /// The conditions of the filters given, each value bound ([`json_page`] says why only
    /// those).
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE i.archived_at IS NULL");
        if let Some(category) = &self.category {
            sql.push(" AND i.category IN (SELECT inventory_category_codes(")
                .push_bind(category.clone())
                .push("))");
        }
        if let Some(property) = self.property_id {
            sql.push(" AND i.property_id = ").push_bind(property);
        }
        if let Some(location) = self.location_id {
            sql.push(" AND i.location_id = ").push_bind(location);
        }
        if let Some(condition) = self.condition {
            sql.push(" AND i.condition = ").push_bind(condition);
        }
        if self.low_stock {
            sql.push(" AND i.min_stock > 0 AND i.quantity <= i.min_stock");
        }
        if let Some(search) = &self.search {
            let pattern = format!("%{}%", like_escape(search));
            sql.push(" AND (i.name ILIKE ")
                .push_bind(pattern.clone())
                .push(" OR i.sku ILIKE ")
                .push_bind(pattern)
                .push(")");
        }
    }
}

/// `text` with LIKE's wildcards taken literally.
pub fn like_escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// Whether a category code names a category.
pub async fn category_exists(conn: &mut PgConnection, code: &str) -> Result<bool> {
    Ok(
        sqlx::query_scalar::<_, bool>("SELECT true FROM inventory_categories WHERE code = $1")
            .bind(code)
            .fetch_optional(&mut *conn)
            .await?
            .is_some(),
    )
}

/// A page of items ordered by name, and the total matching the filter.
pub async fn list(conn: &mut PgConnection, f: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM inventory_items i",
        item: item_view!(),
        from: " FROM inventory_items i JOIN villas v ON v.id = i.property_id
                JOIN inventory_locations l ON l.id = i.location_id",
        order: "i.name, i.id",
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql)).await
}

/// One item in use with its location's path, its last 20 movements and its open alerts.
pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        item_view!(),
        " || jsonb_build_object('locationPath', inventory_location_path(i.location_id),
            'movements', coalesce((SELECT jsonb_agg(m.movement ORDER BY m.created_at DESC, m.id DESC) FROM (SELECT ",
        super::movements::movement_view!(),
        " AS movement, m.created_at, m.id FROM inventory_movements m WHERE m.item_id = i.id
               ORDER BY m.created_at DESC, m.id DESC LIMIT 20) m), '[]'),
            'openAlerts', (SELECT count(*) FROM inventory_alerts a WHERE a.item_id = i.id AND a.status <> 'RESOLVED'))
         FROM inventory_items i JOIN villas v ON v.id = i.property_id
         JOIN inventory_locations l ON l.id = i.location_id
         WHERE i.id = $1 AND i.archived_at IS NULL"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("item"))
}
