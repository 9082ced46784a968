//! Timesheets: hours logged against a work order, or against a villa for unplanned work. The
//! hours one person logs for one date never exceed 24: each entry adds to that person's day in
//! `timesheet_days` in the same transaction, and a CHECK there refuses the 25th hour whatever the
//! concurrency.

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde_json::Value;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use crate::pagination::{JsonPage, ListSql, PageRequest, json_page_with_summary};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Problems, Result};

pub const ACTIVITY_TYPES: &[&str] = &[
    "REPAIR",
    "INSPECTION",
    "PREVENTIVE",
    "INSTALLATION",
    "CLEANING",
    "TRAVEL",
    "OTHER",
];

pub const FIELDS: &[FieldSpec] = &[
    required("hours", "hours", Kind::Decimal { min: 0, max: 24 }),
    required("activityType", "activity_type", Kind::OneOf(ACTIVITY_TYPES)),
    required("date", "work_date", Kind::Date),
    field("notes", "notes", Kind::Text(2000)),
    field("workOrderId", "work_order_id", Kind::Uuid),
    field("villaId", "villa_id", Kind::Uuid),
    field("staffId", "staff_id", Kind::Uuid),
];

/// What the field table cannot say: hours above 0 in quarter hours, a date not in the future
/// (`today`), and a villa for work without a work order (`work_order_sent`: the body named one,
/// valid or not).
pub fn check(patch: &Patch, work_order_sent: bool, today: NaiveDate, problems: &mut Problems) {
    if let Some(hours) = patch
        .columns
        .get("hours")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<Decimal>().ok())
        && (hours <= Decimal::ZERO || (hours * Decimal::from(4)).fract() != Decimal::ZERO)
    {
        problems.push(
            "hours",
            "invalid_value",
            "hours must be more than 0 and in quarter hours (0.25, 0.5, ...), at most 24",
        );
    }
    if let Some(date) = patch
        .columns
        .get("work_date")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<NaiveDate>().ok())
        && date > today
    {
        problems.push("date", "out_of_range", "date must not be in the future");
    }
    let has = |column: &str| patch.columns.get(column).is_some_and(|v| !v.is_null());
    if !work_order_sent && !has("villa_id") {
        problems.push(
            "villaId",
            "required",
            "villaId is required for work without a workOrderId",
        );
    }
}

/// Records an entry. The work order, villa and staff member must exist (404); with a work order
/// the villa is the work order's (a different `villaId` is 400). The person's day may not pass 24
/// hours (409 `DAILY_HOURS_EXCEEDED`). Returns the entry's id.
pub async fn log(conn: &mut PgConnection, patch: &Patch, by: &str) -> Result<Uuid> {
    let mut villa = patch.uuid("villa_id");
    if let Some(order) = patch.uuid("work_order_id") {
        let order_villa: Uuid =
            sqlx::query_scalar("SELECT villa_id FROM work_orders WHERE id = $1")
                .bind(order)
                .fetch_optional(&mut *conn)
                .await?
                .ok_or(Error::NotFound("work order"))?;
        if villa.is_some_and(|v| v != order_villa) {
            return Err(Error::invalid(
                "villaId",
                "invalid_value",
                "the work order is of another villa",
            ));
        }
        villa = Some(order_villa);
    }
    let villa = villa.ok_or(Error::NotFound("villa"))?;
    crate::management::villas::ensure_exists(conn, villa).await?;
    let staff = match patch.uuid("staff_id") {
        Some(staff) => {
            let found: Option<bool> = sqlx::query_scalar("SELECT true FROM staff WHERE id = $1")
                .bind(staff)
                .fetch_optional(&mut *conn)
                .await?;
            found.ok_or(Error::NotFound("staff"))?;
            Some(staff)
        }
        // Logged from the person's own token: the staff member whose login it is, so that one
        // person's day is one budget however the hours were logged.
        None => {
            sqlx::query_scalar("SELECT id FROM staff WHERE identity_subject = $1")
                .bind(by)
                .fetch_optional(&mut *conn)
                .await?
        }
    };
    let person = staff.map_or_else(|| format!("user:{by}"), |s| format!("staff:{s}"));
    let day = sqlx::query(
        "INSERT INTO timesheet_days (person, work_date, hours)
         SELECT $1, work_date, hours FROM jsonb_populate_record(NULL::timesheets, $2)
         ON CONFLICT (person, work_date) DO UPDATE SET hours = timesheet_days.hours + excluded.hours",
    )
    .bind(&person)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await
    .map_err(|e| {
        crate::on_refusal(e, crate::Refusal::Check, || {
            Error::conflict(
                "DAILY_HOURS_EXCEEDED",
                "this would log more than 24 hours for one person on one date",
            )
        })
    });
    day?;
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO timesheets (id, work_order_id, villa_id, staff_id, person, logged_by, hours, activity_type, work_date, notes)
         SELECT $1, work_order_id, $2, $6, $3, $4, hours, activity_type, work_date, notes
         FROM jsonb_populate_record(NULL::timesheets, $5)",
    )
    .bind(id)
    .bind(villa)
    .bind(&person)
    .bind(by)
    .bind(patch.to_value())
    .bind(staff)
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

macro_rules! timesheet_json {
    () => {
        "jsonb_build_object('id', t.id, 'workOrderId', t.work_order_id, 'villaId', t.villa_id, 'staffId', t.staff_id,
            'loggedBy', t.logged_by, 'hours', t.hours, 'activityType', t.activity_type, 'date', t.work_date,
            'notes', t.notes, 'createdAt', t.created_at)"
    };
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub work_order_id: Option<Uuid>,
    pub staff_id: Option<Uuid>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
}

impl Filter {
    /// The conditions of the filters given, each value bound ([`json_page`] says why only
    /// those).
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(order) = self.work_order_id {
            sql.push(" AND t.work_order_id = ").push_bind(order);
        }
        if let Some(staff) = self.staff_id {
            sql.push(" AND t.staff_id = ").push_bind(staff);
        }
        if let Some(start) = self.start_date {
            sql.push(" AND t.work_date >= ").push_bind(start);
        }
        if let Some(end) = self.end_date {
            sql.push(" AND t.work_date <= ").push_bind(end);
        }
    }
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        timesheet_json!(),
        " FROM timesheets t WHERE t.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("timesheet"))
}

/// A page of entries, the latest date first, the total, and `totalHours` over every entry
/// matching (the answer's summary).
pub async fn list(conn: &mut PgConnection, f: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM timesheets t",
        item: timesheet_json!(),
        from: " FROM timesheets t",
        order: "t.work_date DESC, t.created_at DESC, t.id DESC",
    };
    json_page_with_summary(
        conn,
        &list,
        "jsonb_build_object('totalHours', coalesce(sum(t.hours), 0))",
        page,
        |sql| f.push_conditions(sql),
    )
    .await
}
