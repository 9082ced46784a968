//! Planned maintenance: templates (the platform ships a starting set), schedules of a template on
//! an asset, and the generation of the work order of every occurrence due within the lead time.
//!
//! Generation is idempotent: a unique index on (schedule, occurrence date) means one work order
//! per occurrence whatever the number of runs, workers or retries, and the insert is set-based
//! (one statement for every schedule), so thousands of schedules due at once take one round trip.

use chrono::NaiveDate;
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{CATEGORIES, PRIORITIES};
use crate::pagination::PageRequest;
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Result};

pub const FREQUENCIES: &[&str] = &[
    "DAILY",
    "WEEKLY",
    "BIWEEKLY",
    "MONTHLY",
    "QUARTERLY",
    "SEMIANNUAL",
    "ANNUAL",
];

/// SCHEDULED_DATE: each occurrence follows the previous due date. COMPLETED_DATE: the next one
/// counts from when the previous work order was completed.
pub const BASES: &[&str] = &["SCHEDULED_DATE", "COMPLETED_DATE"];

/// Who the generated work orders say created them.
pub const GENERATOR: &str = "planned-maintenance";

pub const TEMPLATE_FIELDS: &[FieldSpec] = &[
    required("name", "name", Kind::Text(200)),
    required("category", "category", Kind::OneOf(CATEGORIES)),
    required("priority", "priority", Kind::OneOf(PRIORITIES)),
    required(
        "defaultFrequency",
        "default_frequency",
        Kind::OneOf(FREQUENCIES),
    ),
    field("description", "description", Kind::Text(5000)),
    field(
        "estimatedHours",
        "estimated_hours",
        Kind::Decimal { min: 0, max: 1000 },
    ),
];

pub const SCHEDULE_FIELDS: &[FieldSpec] = &[
    required("templateId", "template_id", Kind::Uuid),
    required("assetId", "asset_id", Kind::Uuid),
    required("startDate", "start_date", Kind::Date),
    field("frequency", "frequency", Kind::OneOf(FREQUENCIES)),
    field("assigneeId", "assignee_id", Kind::Uuid),
    field("basis", "basis", Kind::OneOf(BASES)),
];

/// Most checklist items a template holds, and the longest one.
pub const MAX_CHECKLIST: usize = 100;
pub const MAX_CHECKLIST_ITEM: usize = 500;

macro_rules! template_json {
    () => {
        "jsonb_build_object('id', t.id, 'name', t.name, 'description', t.description, 'category', t.category,
            'priority', t.priority, 'estimatedHours', t.estimated_hours, 'checklist', to_jsonb(t.checklist),
            'defaultFrequency', t.default_frequency, 'builtin', t.builtin, 'createdAt', t.created_at)"
    };
}

/// A page of templates by name, and the total.
pub async fn templates(conn: &mut PgConnection, page: PageRequest) -> Result<(Vec<Value>, i64)> {
    let rows = sqlx::query_scalar(concat!(
        "SELECT ",
        template_json!(),
        " FROM pm_templates t ORDER BY t.name, t.id LIMIT $1 OFFSET $2"
    ))
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(&mut *conn)
    .await?;
    let total = sqlx::query_scalar("SELECT count(*) FROM pm_templates")
        .fetch_one(&mut *conn)
        .await?;
    Ok((rows, total))
}

/// Adds a template; its name is unique (400 on `name`).
pub async fn create_template(
    conn: &mut PgConnection,
    patch: &Patch,
    checklist: &[String],
) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "INSERT INTO pm_templates AS t (id, name, description, category, priority, estimated_hours, checklist, default_frequency)
         SELECT $1, name, description, category, priority, estimated_hours, $2, default_frequency
         FROM jsonb_populate_record(NULL::pm_templates, $3)
         RETURNING ",
        template_json!()
    ))
    .bind(Uuid::now_v7())
    .bind(checklist)
    .bind(patch.to_value())
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| {
        crate::on_unique_violation(e, "name", "a template of this name exists already")
    })
}

/// Creates a schedule: the template, the asset and the assignee (a staff member) must exist (404
/// `TEMPLATE_NOT_FOUND`, `ASSET_NOT_FOUND`, `STAFF_NOT_FOUND`); without `frequency` it takes the
/// template's default; `basis` defaults to SCHEDULED_DATE.
pub async fn create_schedule(conn: &mut PgConnection, patch: &Patch, by: &str) -> Result<Uuid> {
    let template = patch
        .uuid("template_id")
        .ok_or(Error::NotFound("template"))?;
    let default_frequency: String =
        sqlx::query_scalar("SELECT default_frequency FROM pm_templates WHERE id = $1")
            .bind(template)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(Error::NotFound("template"))?;
    let asset = patch.uuid("asset_id").ok_or(Error::NotFound("asset"))?;
    let found: Option<bool> = sqlx::query_scalar("SELECT true FROM assets WHERE id = $1")
        .bind(asset)
        .fetch_optional(&mut *conn)
        .await?;
    found.ok_or(Error::NotFound("asset"))?;
    if let Some(staff) = patch.uuid("assignee_id") {
        let found: Option<bool> = sqlx::query_scalar("SELECT true FROM staff WHERE id = $1")
            .bind(staff)
            .fetch_optional(&mut *conn)
            .await?;
        found.ok_or(Error::NotFound("staff"))?;
    }
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pm_schedules (id, template_id, asset_id, frequency, start_date, basis, assignee_id, created_by)
         SELECT $1, template_id, asset_id, coalesce(frequency, $2), start_date, coalesce(basis, 'SCHEDULED_DATE'),
                assignee_id, $3
         FROM jsonb_populate_record(NULL::pm_schedules, $4)",
    )
    .bind(id)
    .bind(default_frequency)
    .bind(by)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

// A schedule row (alias `s`, its template `t`, its asset `a`) as JSON, with its next due date:
// for SCHEDULED_DATE the first occurrence without a work order yet; for COMPLETED_DATE the
// start, then the open work order's occurrence, then the day counted from its completion.
macro_rules! schedule_json {
    () => {
        "jsonb_build_object('id', s.id, 'templateId', s.template_id,
            'template', jsonb_build_object('id', t.id, 'name', t.name),
            'assetId', s.asset_id, 'asset', jsonb_build_object('id', a.id, 'name', a.name), 'villaId', a.villa_id,
            'frequency', s.frequency, 'startDate', s.start_date, 'basis', s.basis, 'assigneeId', s.assignee_id,
            'workOrders', (SELECT count(*) FROM work_orders w WHERE w.schedule_id = s.id),
            'nextDueDate', CASE
                WHEN s.basis = 'SCHEDULED_DATE' THEN (SELECT occurrence FROM pm_occurrences(s.start_date, s.frequency,
                    coalesce((SELECT max(w.occurrence_date) FROM work_orders w WHERE w.schedule_id = s.id), s.start_date - 1),
                    coalesce((SELECT max(w.occurrence_date) FROM work_orders w WHERE w.schedule_id = s.id), s.start_date - 1) + 400)
                    LIMIT 1)
                ELSE (SELECT CASE WHEN last.id IS NULL THEN s.start_date
                                  WHEN last.status NOT IN ('COMPLETED', 'CANCELLED') THEN last.occurrence_date
                                  ELSE (greatest(coalesce(last.completed_at, last.updated_at)::date, last.occurrence_date)
                                        + pm_interval(s.frequency))::date END
                      FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT w.id, w.status, w.occurrence_date, w.completed_at, w.updated_at
                          FROM work_orders w WHERE w.schedule_id = s.id ORDER BY w.occurrence_date DESC LIMIT 1) last ON true)
                END,
            'createdBy', s.created_by, 'createdAt', s.created_at)"
    };
}

/// A page of schedules, newest first, and the total.
pub async fn schedules(conn: &mut PgConnection, page: PageRequest) -> Result<(Vec<Value>, i64)> {
    let rows = sqlx::query_scalar(concat!(
        "SELECT ",
        schedule_json!(),
        " FROM pm_schedules s JOIN pm_templates t ON t.id = s.template_id JOIN assets a ON a.id = s.asset_id
          ORDER BY s.created_at DESC, s.id DESC LIMIT $1 OFFSET $2"
    ))
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(&mut *conn)
    .await?;
    let total = sqlx::query_scalar("SELECT count(*) FROM pm_schedules")
        .fetch_one(&mut *conn)
        .await?;
    Ok((rows, total))
}

pub async fn schedule(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        schedule_json!(),
        " FROM pm_schedules s JOIN pm_templates t ON t.id = s.template_id JOIN assets a ON a.id = s.asset_id
          WHERE s.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("schedule"))
}

/// Creates the work order of every occurrence due by `until` (today plus the lead time) that has
/// none yet, of every schedule (or only `schedule`): title, description, category and priority
/// from the template, villa and asset from the asset, due on the occurrence date, ASSIGNED to
/// the schedule's assignee when it has one. A COMPLETED_DATE schedule gets its next occurrence
/// only once the previous work order is completed (or cancelled). Returns how many were created.
pub async fn generate(
    conn: &mut PgConnection,
    until: NaiveDate,
    schedule: Option<Uuid>,
) -> Result<u64> {
    let created: i64 = sqlx::query_scalar(
        "WITH due AS (
             SELECT s.id AS schedule_id, o.occurrence
             FROM pm_schedules s, pm_occurrences(s.start_date, s.frequency, s.start_date - 1, $1) o
             WHERE s.basis = 'SCHEDULED_DATE' AND s.start_date <= $1 AND ($2::uuid IS NULL OR s.id = $2)
             UNION ALL
             SELECT s.id, CASE WHEN last.id IS NULL THEN s.start_date
                               ELSE (greatest(coalesce(last.completed_at, last.updated_at)::date, last.occurrence_date)
                                     + pm_interval(s.frequency))::date END
             FROM pm_schedules s
             LEFT JOIN LATERAL (SELECT w.id, w.status, w.occurrence_date, w.completed_at, w.updated_at FROM work_orders w
                                WHERE w.schedule_id = s.id ORDER BY w.occurrence_date DESC LIMIT 1) last ON true
             WHERE s.basis = 'COMPLETED_DATE' AND ($2::uuid IS NULL OR s.id = $2)
               AND (last.id IS NULL OR last.status IN ('COMPLETED', 'CANCELLED'))
         ),
         created AS (
             INSERT INTO work_orders (id, villa_id, asset_id, title, description, category, priority, status,
                                      assignee_type, assignee_staff_id, due_date, schedule_id, occurrence_date, created_by)
             SELECT uuid_v7(), a.villa_id, a.id, t.name, t.description, t.category, t.priority,
                    CASE WHEN s.assignee_id IS NULL THEN 'OPEN' ELSE 'ASSIGNED' END,
                    CASE WHEN s.assignee_id IS NULL THEN NULL ELSE 'TECHNICIAN' END, s.assignee_id,
                    d.occurrence::timestamptz, s.id, d.occurrence, $3
             FROM due d JOIN pm_schedules s ON s.id = d.schedule_id
             JOIN pm_templates t ON t.id = s.template_id JOIN assets a ON a.id = s.asset_id
             WHERE d.occurrence <= $1
             ON CONFLICT (schedule_id, occurrence_date) WHERE schedule_id IS NOT NULL DO NOTHING
             RETURNING id, status
         ),
         history AS (
             INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
             SELECT uuid_v7(), id, NULL, status, 'planned maintenance', $3 FROM created
             RETURNING 1
         )
         SELECT count(*) FROM history",
    )
    .bind(until)
    .bind(schedule)
    .bind(GENERATOR)
    .fetch_one(&mut *conn)
    .await?;
    Ok(u64::try_from(created).unwrap_or(0))
}
