//! Emergencies: reported with an URGENT work order opened in the same transaction, moved forward
//! only along REPORTED → ACKNOWLEDGED → RESPONDING → CONTAINED → RESOLVED, with the actions taken;
//! their timeline holds both in time order.

use serde_json::Value;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::CATEGORIES;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Result};

// A timeline entry (an `emergency_events` row, unaliased) as JSON.
macro_rules! event_json {
    () => {
        "jsonb_build_object('id', id, 'kind', kind, 'from', from_status, 'to', to_status, 'notes', notes,
            'action', action, 'performedBy', performed_by, 'recordedBy', recorded_by, 'at', created_at)"
    };
}

pub const SEVERITIES: &[&str] = &["LOW", "MEDIUM", "HIGH", "CRITICAL"];

/// In the only order an emergency moves through them.
pub const STATUSES: &[&str] = &[
    "REPORTED",
    "ACKNOWLEDGED",
    "RESPONDING",
    "CONTAINED",
    "RESOLVED",
];

pub const CREATE_FIELDS: &[FieldSpec] = &[
    required("villaId", "villa_id", Kind::Uuid),
    required("category", "category", Kind::OneOf(CATEGORIES)),
    required("severity", "severity", Kind::OneOf(SEVERITIES)),
    required("description", "description", Kind::Text(5000)),
    field("location", "location", Kind::Text(200)),
];

pub const STATUS_FIELDS: &[FieldSpec] = &[
    required("status", "status", Kind::OneOf(STATUSES)),
    field("notes", "notes", Kind::Text(2000)),
];

pub const ACTION_FIELDS: &[FieldSpec] = &[
    required("action", "action", Kind::Text(1000)),
    required("performedBy", "performed_by", Kind::Uuid),
];

fn text<'a>(patch: &'a Patch, column: &str) -> Option<&'a str> {
    patch.columns.get(column).and_then(Value::as_str)
}

/// The title of the work order an emergency opens: its severity and the start of its
/// description.
fn work_order_title(severity: &str, description: &str) -> String {
    let short: String = description.chars().take(150).collect();
    format!("Emergency ({severity}): {short}")
}

/// Reports an emergency (status REPORTED) and opens its URGENT work order in the same
/// transaction. Returns the emergency's id.
pub async fn report(conn: &mut PgConnection, patch: &Patch, by: &str) -> Result<Uuid> {
    let villa_id: Uuid = text(patch, "villa_id")
        .and_then(|s| s.parse().ok())
        .ok_or(Error::NotFound("villa"))?;
    crate::management::villas::ensure_exists(conn, villa_id).await?;
    let severity = text(patch, "severity").unwrap_or("HIGH");
    let description = text(patch, "description").unwrap_or_default();
    let work_order = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO work_orders (id, villa_id, title, description, category, priority, status, created_by)
         SELECT $1, villa_id, $2, description, category, 'URGENT', 'OPEN', $3
         FROM jsonb_populate_record(NULL::emergencies, $4)",
    )
    .bind(work_order)
    .bind(work_order_title(severity, description))
    .bind(by)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
         VALUES ($1, $2, NULL, 'OPEN', 'opened for an emergency', $3)",
    )
    .bind(Uuid::now_v7())
    .bind(work_order)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO emergencies (id, villa_id, category, severity, description, location, status, work_order_id, reported_by)
         SELECT $1, villa_id, category, severity, description, location, 'REPORTED', $2, $3
         FROM jsonb_populate_record(NULL::emergencies, $4)",
    )
    .bind(id)
    .bind(work_order)
    .bind(by)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    record_event(conn, id, None, Some("REPORTED"), None, by).await?;
    Ok(id)
}

async fn record_event(
    conn: &mut PgConnection,
    id: Uuid,
    from: Option<&str>,
    to: Option<&str>,
    notes: Option<&str>,
    by: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO emergency_events (id, emergency_id, kind, from_status, to_status, notes, recorded_by)
         VALUES ($1, $2, 'STATUS_CHANGE', $3, $4, $5, $6)",
    )
    .bind(Uuid::now_v7())
    .bind(id)
    .bind(from)
    .bind(to)
    .bind(notes)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

fn rank(status: &str) -> usize {
    STATUSES.iter().position(|s| *s == status).unwrap_or(0)
}

/// Moves the emergency forward (skipping ahead is allowed); staying, going back or leaving
/// RESOLVED is 409 `INVALID_STATUS_TRANSITION`.
pub async fn set_status(conn: &mut PgConnection, id: Uuid, patch: &Patch, by: &str) -> Result<()> {
    let from: String =
        sqlx::query_scalar("SELECT status FROM emergencies WHERE id = $1 FOR UPDATE")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(Error::NotFound("emergency"))?;
    let to = text(patch, "status").unwrap_or_default();
    if rank(to) <= rank(&from) {
        let next = &STATUSES[(rank(&from) + 1).min(STATUSES.len())..];
        let allowed = if next.is_empty() {
            "none: it is resolved".to_owned()
        } else {
            next.join(", ")
        };
        return Err(Error::conflict(
            "INVALID_STATUS_TRANSITION",
            format!(
                "an emergency moves forward only: a {from} one cannot become {to}; allowed next: {allowed}"
            ),
        ));
    }
    sqlx::query("UPDATE emergencies SET status = $2, updated_at = now() WHERE id = $1")
        .bind(id)
        .bind(to)
        .execute(&mut *conn)
        .await?;
    record_event(conn, id, Some(&from), Some(to), text(patch, "notes"), by).await
}

/// Logs an action taken on the emergency by a staff member (404 `STAFF_NOT_FOUND` otherwise);
/// answers it as a timeline entry.
pub async fn add_action(
    conn: &mut PgConnection,
    id: Uuid,
    patch: &Patch,
    by: &str,
) -> Result<Value> {
    let exists: Option<bool> = sqlx::query_scalar("SELECT true FROM emergencies WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    exists.ok_or(Error::NotFound("emergency"))?;
    let performer: Uuid = text(patch, "performed_by")
        .and_then(|s| s.parse().ok())
        .ok_or(Error::NotFound("staff"))?;
    let staff: Option<bool> = sqlx::query_scalar("SELECT true FROM staff WHERE id = $1")
        .bind(performer)
        .fetch_optional(&mut *conn)
        .await?;
    staff.ok_or(Error::NotFound("staff"))?;
    sqlx::query("UPDATE emergencies SET updated_at = now() WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(sqlx::query_scalar(concat!(
        "INSERT INTO emergency_events (id, emergency_id, kind, action, performed_by, recorded_by)
         SELECT $1, $2, 'ACTION', action, performed_by, $3 FROM jsonb_populate_record(NULL::emergency_events, $4)
         RETURNING ",
        event_json!()
    ))
    .bind(Uuid::now_v7())
    .bind(id)
    .bind(by)
    .bind(patch.to_value())
    .fetch_one(&mut *conn)
    .await?)
}

// An emergency row (alias `e`) as a list item.
macro_rules! emergency_item {
    () => {
        "jsonb_build_object('id', e.id, 'villaId', e.villa_id, 'villa', jsonb_build_object('id', v.id, 'name', v.villa_name),
            'category', e.category, 'severity', e.severity, 'description', e.description, 'location', e.location,
            'status', e.status, 'workOrderId', e.work_order_id, 'reportedBy', e.reported_by,
            'createdAt', e.created_at, 'updatedAt', e.updated_at)"
    };
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<&'static str>,
    pub severity: Option<&'static str>,
    pub villa_id: Option<Uuid>,
}

impl Filter {
    /// The conditions of the filters given, each value bound ([`json_page`] says why only
    /// those).
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(status) = self.status {
            sql.push(" AND e.status = ").push_bind(status);
        }
        if let Some(severity) = self.severity {
            sql.push(" AND e.severity = ").push_bind(severity);
        }
        if let Some(villa) = self.villa_id {
            sql.push(" AND e.villa_id = ").push_bind(villa);
        }
    }
}

/// A page of emergencies, newest first, and the total matching the filter.
pub async fn list(conn: &mut PgConnection, f: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM emergencies e",
        item: emergency_item!(),
        from: " FROM emergencies e JOIN villas v ON v.id = e.villa_id",
        order: "e.created_at DESC, e.id DESC",
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql)).await
}

/// One emergency with its timeline: status changes and actions in time order.
pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        emergency_item!(),
        " || jsonb_build_object('timeline', coalesce((SELECT jsonb_agg(",
        event_json!(),
        " ORDER BY created_at, id) FROM emergency_events WHERE emergency_id = e.id), '[]'))",
        " FROM emergencies e JOIN villas v ON v.id = e.villa_id WHERE e.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("emergency"))
}
