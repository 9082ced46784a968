//! Assets of a villa and their health: every reading is kept, the latest shows on the asset,
//! with its warranty state and its open work orders.

use chrono::NaiveDate;
use serde_json::Value;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::{CATEGORIES, CONDITIONS};
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Result};

/// A new asset.
pub const CREATE_FIELDS: &[FieldSpec] = &[
    required("name", "name", Kind::Text(200)),
    required("category", "category", Kind::OneOf(CATEGORIES)),
    required("villaId", "villa_id", Kind::Uuid),
    field("brand", "brand", Kind::Text(100)),
    field("model", "model", Kind::Text(100)),
    field("serialNumber", "serial_number", Kind::Text(100)),
    field("location", "location", Kind::Text(200)),
    field("purchaseDate", "purchase_date", Kind::Date),
    field("warrantyEndDate", "warranty_end_date", Kind::Date),
    field("condition", "condition", Kind::OneOf(CONDITIONS)),
];

/// A health reading.
pub const HEALTH_FIELDS: &[FieldSpec] = &[
    required(
        "healthScore",
        "health_score",
        Kind::Int { min: 0, max: 100 },
    ),
    required("condition", "condition", Kind::OneOf(CONDITIONS)),
    field("notes", "notes", Kind::Text(2000)),
];

/// The warranty cannot end before the purchase (a problem on `warrantyEndDate`).
pub fn check_dates(patch: &Patch, problems: &mut crate::Problems) {
    if let (Some(Value::String(bought)), Some(Value::String(ends))) = (
        patch.columns.get("purchase_date"),
        patch.columns.get("warranty_end_date"),
    ) && ends < bought
    {
        // ISO dates compare as text.
        problems.push(
            "warrantyEndDate",
            "out_of_range",
            "must not be before purchaseDate",
        );
    }
}

pub async fn create(conn: &mut PgConnection, patch: &Patch) -> Result<Uuid> {
    let villa_id = patch.uuid("villa_id").ok_or(Error::NotFound("villa"))?;
    crate::management::villas::ensure_exists(conn, villa_id).await?;
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO assets (id, villa_id, name, category, brand, model, serial_number, location, purchase_date,
                             warranty_end_date, condition)
         SELECT $1, villa_id, name, category, brand, model, serial_number, location, purchase_date,
                warranty_end_date, condition
         FROM jsonb_populate_record(NULL::assets, $2)",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// Records a health reading and makes it the asset's current health.
pub async fn record_health(
    conn: &mut PgConnection,
    id: Uuid,
    patch: &Patch,
    by: &str,
) -> Result<()> {
    let updated = sqlx::query(
        "UPDATE assets a SET health_score = r.health_score, condition = r.condition, updated_at = now()
         FROM jsonb_populate_record(NULL::asset_health_readings, $2) r WHERE a.id = $1",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(Error::NotFound("asset"));
    }
    sqlx::query(
        "INSERT INTO asset_health_readings (id, asset_id, health_score, condition, notes, recorded_by)
         SELECT $1, $2, health_score, condition, notes, $3 FROM jsonb_populate_record(NULL::asset_health_readings, $4)",
    )
    .bind(Uuid::now_v7())
    .bind(id)
    .bind(by)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

// An asset row (alias `a`) as a list item, with its warranty state on `$1`, today (the company's
// day, bound: never the database session's `current_date`).
macro_rules! asset_item {
    () => {
        "jsonb_build_object('id', a.id, 'name', a.name, 'category', a.category, 'villaId', a.villa_id,
            'villa', jsonb_build_object('id', v.id, 'name', v.villa_name),
            'brand', a.brand, 'model', a.model, 'serialNumber', a.serial_number, 'location', a.location,
            'purchaseDate', a.purchase_date, 'warrantyEndDate', a.warranty_end_date,
            'healthScore', a.health_score, 'condition', a.condition,
            'warrantyStatus', CASE WHEN a.warranty_end_date IS NULL THEN 'NONE'
                                   WHEN a.warranty_end_date >= $1::date THEN 'ACTIVE' ELSE 'EXPIRED' END,
            'warrantyDaysLeft', CASE WHEN a.warranty_end_date >= $1::date THEN a.warranty_end_date - $1::date END,
            'createdAt', a.created_at, 'updatedAt', a.updated_at)"
    };
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub villa_id: Option<Uuid>,
    pub category: Option<&'static str>,
    pub condition: Option<&'static str>,
}

impl Filter {
    /// The conditions of the filters given, each value bound ([`json_page`] says why only
    /// those), after `today`: bound first, it is `$1` of the whole statement (the first value
    /// [`json_page`] binds is the first its conditions bind), which the item's warranty fields
    /// read.
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>, today: NaiveDate) {
        sql.push(" WHERE ")
            .push_bind(today)
            .push("::date IS NOT NULL");
        if let Some(villa) = self.villa_id {
            sql.push(" AND a.villa_id = ").push_bind(villa);
        }
        if let Some(category) = self.category {
            sql.push(" AND a.category = ").push_bind(category);
        }
        if let Some(condition) = self.condition {
            sql.push(" AND a.condition = ").push_bind(condition);
        }
    }
}

/// A page of assets, newest first, and the total matching the filter; warranties as of `today`.
pub async fn list(
    conn: &mut PgConnection,
    f: &Filter,
    page: PageRequest,
    today: NaiveDate,
) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM assets a",
        item: asset_item!(),
        from: " FROM assets a JOIN villas v ON v.id = a.villa_id",
        order: "a.created_at DESC, a.id DESC",
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql, today)).await
}

/// One asset with its readings (newest first) and the count of its open work orders; its
/// warranty as of `today`.
pub async fn get(conn: &mut PgConnection, id: Uuid, today: NaiveDate) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        asset_item!(),
        " || jsonb_build_object(
            'healthHistory', coalesce((SELECT jsonb_agg(jsonb_build_object('healthScore', r.health_score,
                'condition', r.condition, 'notes', r.notes, 'recordedBy', r.recorded_by, 'recordedAt', r.recorded_at)
                ORDER BY r.recorded_at DESC, r.id DESC) FROM asset_health_readings r WHERE r.asset_id = a.id), '[]'),
            'openWorkOrders', (SELECT count(*) FROM work_orders w WHERE w.asset_id = a.id
                AND w.status NOT IN ('COMPLETED', 'CANCELLED')))",
        " FROM assets a JOIN villas v ON v.id = a.villa_id WHERE a.id = $2"
    ))
    .bind(today)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("asset"))
}
