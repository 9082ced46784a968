//! Planned maintenance: templates (the platform ships a starting set), schedules of a template on
//! an asset, and the generation of the work order of every occurrence due within the lead time.
//!
//! Generation is idempotent: a unique index on (schedule, occurrence date) means one work order
//! per occurrence whatever the number of runs, workers or retries, and the insert is set-based
//! (one statement for every schedule), so thousands of schedules due at once take one round trip.
//! Its work is what is due, not how long schedules have run: each SCHEDULED_DATE schedule keeps
//! its cursor (`next_due`, the first occurrence not generated yet), a tick reads only the
//! schedules whose cursor falls within the horizon and the occurrences from there, and moves the
//! cursor past the horizon in the same statement.

use chrono::{Days, Months, NaiveDate};
use serde_json::Value;
use sqlx::{Connection as _, PgConnection};
use uuid::Uuid;

use super::{CATEGORIES, PRIORITIES};
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Problems, Result};

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

/// How far back a schedule may start: a year and a day. Its occurrences older than
/// `PM_CATCH_UP_DAYS` get no work order anyway, and a start further back is a typing mistake (a
/// DAILY schedule from 0001-01-01, once accepted, never produced a single work order).
pub const MAX_START_DAYS_BACK: u64 = 366;
/// How far ahead a schedule may start: ten years (further is a typing mistake too).
pub const MAX_START_YEARS_AHEAD: u32 = 10;

/// `startDate` from [`MAX_START_DAYS_BACK`] days before `today` (the company's day) to
/// [`MAX_START_YEARS_AHEAD`] years after it; a problem on `startDate` otherwise. A start that is
/// not a date is already a problem of the field table.
pub fn check_start(patch: &Patch, today: NaiveDate, problems: &mut Problems) {
    let Some(start) = patch
        .columns
        .get("start_date")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<NaiveDate>().ok())
    else {
        return;
    };
    let earliest = today
        .checked_sub_days(Days::new(MAX_START_DAYS_BACK))
        .unwrap_or(NaiveDate::MIN);
    let latest = today
        .checked_add_months(Months::new(12 * MAX_START_YEARS_AHEAD))
        .unwrap_or(NaiveDate::MAX);
    if start < earliest {
        problems.push(
            "startDate",
            "out_of_range",
            format!("must be {earliest} or later (at most {MAX_START_DAYS_BACK} days ago)"),
        );
    } else if start > latest {
        problems.push(
            "startDate",
            "out_of_range",
            format!("must be {latest} or earlier (at most {MAX_START_YEARS_AHEAD} years ahead)"),
        );
    }
}

/// The occurrences a generation run covers, both ends included: from today less
/// `PM_CATCH_UP_DAYS` to today plus `PM_LEAD_DAYS`, "today" being the company's day
/// (`BUSINESS_TIME_ZONE`). An occurrence missed longer ago than the catch-up (a schedule created
/// with an old start, a platform stopped for weeks) gets no work order: stale work would bury
/// the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The earliest occurrence that still gets a work order.
    pub from: NaiveDate,
    /// The latest: the lead time ahead.
    pub until: NaiveDate,
}

impl Window {
    pub fn new(today: NaiveDate, catch_up_days: u32, lead_days: u32) -> Self {
        Self {
            from: today
                .checked_sub_days(Days::new(u64::from(catch_up_days)))
                .unwrap_or(NaiveDate::MIN),
            until: today
                .checked_add_days(Days::new(u64::from(lead_days)))
                .unwrap_or(NaiveDate::MAX),
        }
    }
}

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
pub async fn templates(conn: &mut PgConnection, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM pm_templates t",
        item: template_json!(),
        from: " FROM pm_templates t",
        order: "t.name, t.id",
    };
    json_page(conn, &list, page, |_| {}).await
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
/// template's default; `basis` defaults to SCHEDULED_DATE. A SCHEDULED_DATE schedule's cursor
/// starts at its first occurrence within `window` (or later), so that its `nextDueDate` names
/// the first occurrence that will get a work order, not one the catch-up bound skips.
pub async fn create_schedule(
    conn: &mut PgConnection,
    patch: &Patch,
    by: &str,
    window: Window,
) -> Result<Uuid> {
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
    // The first occurrence on or after the later of the start and the catch-up bound: steps are
    // at most pm_max_days apart, so it lies within that many days.
    sqlx::query(
        "INSERT INTO pm_schedules (id, template_id, asset_id, frequency, start_date, basis, assignee_id, created_by,
                                   next_due)
         SELECT $1, r.template_id, r.asset_id, c.frequency, r.start_date, c.basis, r.assignee_id, $3,
                CASE WHEN c.basis = 'SCHEDULED_DATE' THEN
                    (SELECT min(o.occurrence) FROM pm_occurrences(r.start_date, c.frequency,
                        greatest(r.start_date, $5) - 1, greatest(r.start_date, $5) - 1 + pm_max_days(c.frequency)) o)
                END
         FROM jsonb_populate_record(NULL::pm_schedules, $4) r,
              LATERAL (SELECT coalesce(r.frequency, $2) AS frequency,
                              coalesce(r.basis, 'SCHEDULED_DATE') AS basis) c",
    )
    .bind(id)
    .bind(default_frequency)
    .bind(by)
    .bind(patch.to_value())
    .bind(window.from)
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

// A schedule row (alias `s`, its template `t`, its asset `a`) as JSON, with its next due date:
// for SCHEDULED_DATE its cursor, the first occurrence not generated yet; for COMPLETED_DATE the
// start, then the open work order's occurrence, then the day counted from its completion.
macro_rules! schedule_json {
    () => {
        "jsonb_build_object('id', s.id, 'templateId', s.template_id,
            'template', jsonb_build_object('id', t.id, 'name', t.name),
            'assetId', s.asset_id, 'asset', jsonb_build_object('id', a.id, 'name', a.name), 'villaId', a.villa_id,
            'frequency', s.frequency, 'startDate', s.start_date, 'basis', s.basis, 'assigneeId', s.assignee_id,
            'workOrders', (SELECT count(*) FROM work_orders w WHERE w.schedule_id = s.id),
            'nextDueDate', CASE
                WHEN s.basis = 'SCHEDULED_DATE' THEN s.next_due
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
pub async fn schedules(conn: &mut PgConnection, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM pm_schedules s",
        item: schedule_json!(),
        from: " FROM pm_schedules s JOIN pm_templates t ON t.id = s.template_id JOIN assets a ON a.id = s.asset_id",
        order: "s.created_at DESC, s.id DESC",
    };
    json_page(conn, &list, page, |_| {}).await
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

// The generation statement; `$only` is empty, or restricts it to the schedule `$4`.
//
// `scheduled`: the SCHEDULED_DATE schedules whose cursor falls within the horizon (the partial
// index on `next_due` finds them: a tick reads what is due, not every schedule), and `due` their
// occurrences from the cursor or the catch-up bound, whichever is later, to the horizon. A
// COMPLETED_DATE schedule has at most one occurrence pending, counted from the last completion
// (its start at first), so it is read as before and generated however late it is: there is no
// backlog to bound. `advanced` moves each cursor to the first occurrence past the horizon, in
// the same statement as the inserts (never backwards: `greatest`, should a run with an older
// horizon finish last). The inserts run in one order (schedule, occurrence) so that two runs at
// once wait for each other's rows in the same order and cannot deadlock; the second one's
// conflicting rows are skipped by the unique index once the first commits.
macro_rules! generate_sql {
    ($only:literal) => {
        concat!(
            "WITH scheduled AS (
                 SELECT s.id, s.start_date, s.frequency, s.next_due FROM pm_schedules s
                 WHERE s.basis = 'SCHEDULED_DATE' AND s.next_due <= $2",
            $only,
            "
             ),
             due AS (
                 SELECT d.id AS schedule_id, o.occurrence
                 FROM scheduled d, pm_occurrences(d.start_date, d.frequency, greatest(d.next_due, $1) - 1, $2) o
                 UNION ALL
                 SELECT s.id, CASE WHEN last.id IS NULL THEN s.start_date
                                   ELSE (greatest(coalesce(last.completed_at, last.updated_at)::date, last.occurrence_date)
                                         + pm_interval(s.frequency))::date END
                 FROM pm_schedules s
                 LEFT JOIN LATERAL (SELECT w.id, w.status, w.occurrence_date, w.completed_at, w.updated_at FROM work_orders w
                                    WHERE w.schedule_id = s.id ORDER BY w.occurrence_date DESC LIMIT 1) last ON true
                 WHERE s.basis = 'COMPLETED_DATE'",
            $only,
            "
                   AND (last.id IS NULL OR last.status IN ('COMPLETED', 'CANCELLED'))
             ),
             advanced AS (
                 UPDATE pm_schedules s
                 SET next_due = greatest(s.next_due, (SELECT min(o.occurrence)
                     FROM pm_occurrences(s.start_date, s.frequency, $2, $2 + pm_max_days(s.frequency)) o))
                 FROM scheduled d WHERE s.id = d.id
             ),
             created AS (
                 INSERT INTO work_orders (id, villa_id, asset_id, title, description, category, priority, status,
                                          assignee_type, assignee_staff_id, due_date, schedule_id, occurrence_date, created_by, source)
                 SELECT uuid_v7(), a.villa_id, a.id, t.name, t.description, t.category, t.priority,
                        CASE WHEN s.assignee_id IS NULL THEN 'OPEN' ELSE 'ASSIGNED' END,
                        CASE WHEN s.assignee_id IS NULL THEN NULL ELSE 'TECHNICIAN' END, s.assignee_id,
                        d.occurrence::timestamptz, s.id, d.occurrence, $3, 'PLANNED'
                 FROM due d JOIN pm_schedules s ON s.id = d.schedule_id
                 JOIN pm_templates t ON t.id = s.template_id JOIN assets a ON a.id = s.asset_id
                 WHERE d.occurrence <= $2
                 ORDER BY d.schedule_id, d.occurrence
                 ON CONFLICT (schedule_id, occurrence_date) WHERE schedule_id IS NOT NULL DO NOTHING
                 RETURNING id, status
             ),
             history AS (
                 INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
                 SELECT uuid_v7(), id, NULL, status, 'planned maintenance', $3 FROM created
                 RETURNING 1
             )
             SELECT count(*) FROM history"
        )
    };
}

/// Creates the work order of every occurrence within `window` that has none yet, of every
/// schedule (or only `schedule`): title, description, category and priority from the template,
/// villa and asset from the asset, due on the occurrence date, ASSIGNED to the schedule's
/// assignee when it has one. A COMPLETED_DATE schedule gets its next occurrence only once the
/// previous work order is completed (or cancelled). Returns how many were created.
pub async fn generate(
    conn: &mut PgConnection,
    window: Window,
    schedule: Option<Uuid>,
) -> Result<u64> {
    // Only the filter given is written (`domain::pagination::json_page` says why).
    let sql = match schedule {
        None => generate_sql!(""),
        Some(_) => generate_sql!(" AND s.id = $4"),
    };
    let mut query = sqlx::query_scalar::<sqlx::Postgres, i64>(sql)
        .bind(window.from)
        .bind(window.until)
        .bind(GENERATOR);
    if let Some(id) = schedule {
        query = query.bind(id);
    }
    let mut tx = conn.begin().await?;
    // Postgres cannot tell how few occurrences each schedule yields (a set-returning function of
    // the row), so it costs the statement past `jit_above_cost` and spent about a second
    // compiling it on every tick, even one with nothing due: longer than running it.
    sqlx::query("SET LOCAL jit = off").execute(&mut *tx).await?;
    let created = query.fetch_one(&mut *tx).await?;
    tx.commit().await?;
    Ok(u64::try_from(created).unwrap_or(0))
}
