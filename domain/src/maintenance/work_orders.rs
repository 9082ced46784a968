//! Work orders: create, list, read, update with explicit status transitions (every change in the
//! history), assignment to a technician or a vendor, comments.

use serde_json::Value;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::{PRIORITIES, WORK_ORDER_CATEGORIES};
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Result};

pub const STATUSES: &[&str] = &[
    "OPEN",
    "ASSIGNED",
    "IN_PROGRESS",
    "ON_HOLD",
    "AWAITING_APPROVAL",
    "COMPLETED",
    "CANCELLED",
];

/// The statuses a work order may move to from `from` through an update. ASSIGNED is reached only
/// through an assignment (`POST /work-orders/:id/assign`).
pub fn next_statuses(from: &str) -> &'static [&'static str] {
    match from {
        "OPEN" => &["IN_PROGRESS", "CANCELLED"],
        "ASSIGNED" => &["IN_PROGRESS", "OPEN", "CANCELLED"],
        "IN_PROGRESS" => &["ON_HOLD", "COMPLETED", "CANCELLED"],
        "ON_HOLD" => &["IN_PROGRESS", "CANCELLED"],
        "COMPLETED" => &["IN_PROGRESS"],
        // The owner's decision moves it on (`approvals`); a manager may still cancel it.
        "AWAITING_APPROVAL" => &["CANCELLED"],
        _ => &[],
    }
}

/// The member an update moving a work order from `from` to `to` must carry: `holdReason` to put
/// it on hold, `reason` to reopen a completed one.
pub fn required_note(from: &str, to: &str) -> Option<&'static str> {
    match (from, to) {
        (_, "ON_HOLD") => Some("holdReason"),
        ("COMPLETED", _) => Some("reason"),
        _ => None,
    }
}

/// The moves an update may make from `from`, each with the member it must carry: the detail's
/// `nextStatuses`, so that a client offers what the API allows and asks for what it needs.
pub fn moves_from(from: &str) -> Value {
    next_statuses(from)
        .iter()
        .map(|to| serde_json::json!({"status": to, "requires": required_note(from, to)}))
        .collect()
}

/// A new work order.
pub const CREATE_FIELDS: &[FieldSpec] = &[
    required("title", "title", Kind::Text(200)),
    required("villaId", "villa_id", Kind::Uuid),
    required("category", "category", Kind::OneOf(WORK_ORDER_CATEGORIES)),
    required("priority", "priority", Kind::OneOf(PRIORITIES)),
    field("description", "description", Kind::Text(5000)),
    field("assetId", "asset_id", Kind::Uuid),
    field("dueDate", "due_date", Kind::Timestamp),
];

/// What an update may change besides the status (a required field cannot be cleared).
pub const UPDATE_FIELDS: &[FieldSpec] = &[
    required("title", "title", Kind::Text(200)),
    field("description", "description", Kind::Text(5000)),
    required("priority", "priority", Kind::OneOf(PRIORITIES)),
    required("category", "category", Kind::OneOf(WORK_ORDER_CATEGORIES)),
    field("dueDate", "due_date", Kind::Timestamp),
];

/// Creates a work order in status OPEN from a checked [`CREATE_FIELDS`] patch; its first history
/// entry records who opened it. The villa must exist (404) and the asset, when given, belong to it
/// (400 on `assetId`).
pub async fn create(conn: &mut PgConnection, patch: &Patch, by: &str) -> Result<Uuid> {
    let villa_id = patch.uuid("villa_id").ok_or(Error::NotFound("villa"))?;
    crate::management::villas::ensure_exists(conn, villa_id).await?;
    if let Some(asset_id) = patch.uuid("asset_id") {
        check_asset_of_villa(conn, asset_id, villa_id).await?;
    }
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO work_orders (id, status, created_by, villa_id, asset_id, title, description, category, priority, due_date)
         SELECT $1, 'OPEN', $2, villa_id, asset_id, title, description, category, priority, due_date
         FROM jsonb_populate_record(NULL::work_orders, $3)",
    )
    .bind(id)
    .bind(by)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    record_history(conn, id, None, "OPEN", None, by).await?;
    Ok(id)
}

/// The asset exists and belongs to the villa, else a 400 on `assetId`.
pub async fn check_asset_of_villa(
    conn: &mut PgConnection,
    asset_id: Uuid,
    villa_id: Uuid,
) -> Result<()> {
    let owner: Option<Uuid> = sqlx::query_scalar("SELECT villa_id FROM assets WHERE id = $1")
        .bind(asset_id)
        .fetch_optional(&mut *conn)
        .await?;
    match owner {
        Some(v) if v == villa_id => Ok(()),
        Some(_) => Err(Error::invalid(
            "assetId",
            "invalid_value",
            "the asset belongs to another villa",
        )),
        None => Err(Error::invalid("assetId", "not_found", "no such asset")),
    }
}

pub(super) async fn record_history(
    conn: &mut PgConnection,
    id: Uuid,
    from: Option<&str>,
    to: &str,
    reason: Option<&str>,
    by: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(Uuid::now_v7())
    .bind(id)
    .bind(from)
    .bind(to)
    .bind(reason)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A checked update: fields to change and, optionally, the status to move to with what that
/// move needs.
#[derive(Debug, Clone, Default)]
pub struct Update {
    pub patch: Patch,
    pub status: Option<&'static str>,
    /// Needed to put a work order ON_HOLD.
    pub hold_reason: Option<String>,
    /// Kept when it is COMPLETED.
    pub completion_notes: Option<String>,
    /// Needed to reopen a COMPLETED work order; recorded with any move.
    pub reason: Option<String>,
}

/// `NotFound("work order")` unless it exists (for reads of a work order's sub-resources).
pub async fn ensure_exists(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    let found: Option<bool> = sqlx::query_scalar("SELECT true FROM work_orders WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    found.map(|_| ()).ok_or(Error::NotFound("work order"))
}

/// Locks the work order and answers its status (404 when there is none).
pub(super) async fn lock(conn: &mut PgConnection, id: Uuid) -> Result<String> {
    sqlx::query_scalar("SELECT status FROM work_orders WHERE id = $1 FOR UPDATE")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("work order"))
}

fn refused_move(from: &str, to: &str) -> Error {
    let next = next_statuses(from);
    let allowed = if next.is_empty() {
        "none: it is final".to_owned()
    } else {
        next.join(", ")
    };
    let via_assign = if to == "ASSIGNED" {
        " (ASSIGNED is reached through POST /work-orders/{id}/assign)"
    } else {
        ""
    };
    Error::conflict(
        "INVALID_STATUS_TRANSITION",
        format!("a {from} work order cannot become {to}{via_assign}; allowed next: {allowed}"),
    )
}

/// Applies an update under the work order's row lock: the fields, then the status move (checked
/// against [`next_statuses`], recorded in the history). Setting the status it already has changes
/// nothing. Completing a generated work order draws its rule's consumables (once,
/// [`super::consumables::draw`]); answers the inventory items drawn from, whose stock alerts the
/// caller evaluates.
pub async fn update(conn: &mut PgConnection, id: Uuid, u: &Update, by: &str) -> Result<Vec<Uuid>> {
    let from = lock(conn, id).await?;
    if !u.patch.is_empty() {
        sqlx::query(
            "UPDATE work_orders w SET (title, description, priority, category, due_date) =
                 (SELECT title, description, priority, category, due_date FROM jsonb_populate_record(w, $2)),
                 updated_at = now()
             WHERE id = $1",
        )
        .bind(id)
        .bind(u.patch.to_value())
        .execute(&mut *conn)
        .await?;
    }
    let Some(to) = u.status.filter(|to| *to != from) else {
        return Ok(Vec::new());
    };
    if from == "AWAITING_APPROVAL" && to != "CANCELLED" {
        return Err(Error::conflict(
            "OWNER_APPROVAL_REQUIRED",
            format!(
                "the owner-billed estimate is above the villa's approval threshold: the work order cannot become {to} \
before the owner approves (POST /maintenance/work-orders/{{id}}/approval-requests sends the owner a link; \
POST /maintenance/work-orders/{{id}}/approval records an approval given by phone)"
            ),
        ));
    }
    if !next_statuses(&from).contains(&to) {
        return Err(refused_move(&from, to));
    }
    if to == "COMPLETED" {
        check_checklist_answered(conn, id).await?;
    }
    match required_note(&from, to) {
        Some("holdReason") if u.hold_reason.is_none() => {
            return Err(Error::invalid(
                "holdReason",
                "required",
                "holdReason is required to put a work order ON_HOLD",
            ));
        }
        Some("reason") if u.reason.is_none() => {
            return Err(Error::invalid(
                "reason",
                "required",
                "reason is required to reopen a COMPLETED work order",
            ));
        }
        _ => {}
    }
    sqlx::query(
        "UPDATE work_orders SET status = $2,
             hold_reason = CASE WHEN $2 = 'ON_HOLD' THEN $3 ELSE NULL END,
             completion_notes = CASE WHEN $2 = 'COMPLETED' THEN $4 ELSE completion_notes END,
             completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() ELSE NULL END,
             -- Back to OPEN from ASSIGNED takes the work order from its assignee.
             assignee_type = CASE WHEN $2 = 'OPEN' THEN NULL ELSE assignee_type END,
             assignee_staff_id = CASE WHEN $2 = 'OPEN' THEN NULL ELSE assignee_staff_id END,
             assignee_vendor_id = CASE WHEN $2 = 'OPEN' THEN NULL ELSE assignee_vendor_id END,
             status_before_approval = NULL,
             updated_at = now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(to)
    .bind(&u.hold_reason)
    .bind(&u.completion_notes)
    .execute(&mut *conn)
    .await?;
    let reason = match to {
        "ON_HOLD" => u.hold_reason.as_deref(),
        "COMPLETED" => u.reason.as_deref().or(u.completion_notes.as_deref()),
        _ => u.reason.as_deref(),
    };
    record_history(conn, id, Some(&from), to, reason, by).await?;
    if to == "COMPLETED" {
        return super::consumables::draw(conn, id, by).await;
    }
    Ok(Vec::new())
}

/// A work order whose checklist has an unanswered item cannot be COMPLETED: 409
/// `CHECKLIST_INCOMPLETE` naming the items (their texts in the message, `items` beside it). Runs
/// under the work order's row lock, which answering an item also takes.
async fn check_checklist_answered(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    let open: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT id, text FROM work_order_checklist_items
         WHERE work_order_id = $1 AND result IS NULL ORDER BY position",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    if open.is_empty() {
        return Ok(());
    }
    let texts: Vec<String> = open.iter().map(|(_, t)| format!("\"{t}\"")).collect();
    Err(Error::ConflictWith {
        code: "CHECKLIST_INCOMPLETE",
        message: format!(
            "the checklist has {} unanswered item(s): {}",
            open.len(),
            texts.join(", ")
        ),
        details: serde_json::json!({
            "items": open.iter().map(|(id, text)| serde_json::json!({"id": id, "text": text})).collect::<Vec<_>>(),
        }),
    })
}

/// Who a work order is assigned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assignee {
    Technician(Uuid),
    Vendor(Uuid),
}

/// Assigns the work order: an OPEN one becomes ASSIGNED, one in another open state keeps its
/// state and changes hands, a COMPLETED or CANCELLED one is refused (409). The assignee must
/// exist as a staff member or a vendor (404 `STAFF_NOT_FOUND` / `VENDOR_NOT_FOUND`).
pub async fn assign(
    conn: &mut PgConnection,
    id: Uuid,
    assignee: Assignee,
    due_date: Option<&str>,
    by: &str,
) -> Result<()> {
    let from = lock(conn, id).await?;
    if matches!(from.as_str(), "COMPLETED" | "CANCELLED") {
        return Err(Error::conflict(
            "INVALID_STATUS_TRANSITION",
            format!("a {from} work order cannot be assigned"),
        ));
    }
    let (kind, staff, vendor) = match assignee {
        Assignee::Technician(s) => {
            let found: Option<bool> = sqlx::query_scalar("SELECT true FROM staff WHERE id = $1")
                .bind(s)
                .fetch_optional(&mut *conn)
                .await?;
            found.ok_or(Error::NotFound("staff"))?;
            ("TECHNICIAN", Some(s), None)
        }
        Assignee::Vendor(v) => {
            let found: Option<bool> = sqlx::query_scalar("SELECT true FROM vendors WHERE id = $1")
                .bind(v)
                .fetch_optional(&mut *conn)
                .await?;
            found.ok_or(Error::NotFound("vendor"))?;
            ("VENDOR", None, Some(v))
        }
    };
    let to = if from == "OPEN" {
        "ASSIGNED"
    } else {
        from.as_str()
    };
    sqlx::query(
        "UPDATE work_orders SET status = $2, assignee_type = $3, assignee_staff_id = $4, assignee_vendor_id = $5,
             due_date = coalesce($6::timestamptz, due_date), updated_at = now(),
             -- Assigned while it waits for the owner: the approval returns it ASSIGNED.
             status_before_approval = CASE WHEN status_before_approval = 'OPEN' THEN 'ASSIGNED' ELSE status_before_approval END
         WHERE id = $1",
    )
    .bind(id)
    .bind(to)
    .bind(kind)
    .bind(staff)
    .bind(vendor)
    .bind(due_date)
    .execute(&mut *conn)
    .await?;
    if to != from {
        record_history(conn, id, Some(&from), to, None, by).await?;
    }
    Ok(())
}

/// Adds a comment; answers it.
pub async fn comment(
    conn: &mut PgConnection,
    id: Uuid,
    content: &str,
    kind: &str,
    author: &str,
) -> Result<Value> {
    let exists: Option<bool> = sqlx::query_scalar("SELECT true FROM work_orders WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    exists.ok_or(Error::NotFound("work order"))?;
    Ok(sqlx::query_scalar(
        "INSERT INTO work_order_comments (id, work_order_id, content, type, author) VALUES ($1, $2, $3, $4, $5)
         RETURNING jsonb_build_object('id', id, 'workOrderId', work_order_id, 'content', content, 'type', type,
             'author', author, 'createdAt', created_at)",
    )
    .bind(Uuid::now_v7())
    .bind(id)
    .bind(content)
    .bind(kind)
    .bind(author)
    .fetch_one(&mut *conn)
    .await?)
}

/// The list's filters, already checked.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<&'static str>,
    pub priority: Option<&'static str>,
    pub category: Option<&'static str>,
    pub villa_id: Option<Uuid>,
    /// A staff member or a vendor.
    pub assignee_id: Option<Uuid>,
    pub schedule_id: Option<Uuid>,
    pub source: Option<&'static str>,
    pub reservation_id: Option<Uuid>,
    pub task_rule_id: Option<Uuid>,
    /// Due on or after this day, and on or before `due_to` (the company's days in `zone`); a work
    /// order without a due date matches neither.
    pub due_from: Option<chrono::NaiveDate>,
    pub due_to: Option<chrono::NaiveDate>,
    pub zone: crate::clock::BusinessZone,
}

// A work order row's (alias `w`) assignee: `{id, name, type}`, or null. The housekeeping board
// shows it the same way.
macro_rules! work_order_assignee {
    () => {
        "CASE
                WHEN w.assignee_staff_id IS NOT NULL THEN (SELECT jsonb_build_object('id', s.id,
                    'name', concat_ws(' ', s.first_name, s.last_name), 'type', 'TECHNICIAN') FROM staff s WHERE s.id = w.assignee_staff_id)
                WHEN w.assignee_vendor_id IS NOT NULL THEN (SELECT jsonb_build_object('id', vd.id,
                    'name', vd.company_name, 'type', 'VENDOR') FROM vendors vd WHERE vd.id = w.assignee_vendor_id)
                END"
    };
}
pub(crate) use work_order_assignee;

// A cost line row (alias `c`) as the API shows it.
macro_rules! cost_line {
    () => {
        "jsonb_build_object('id', c.id, 'workOrderId', c.work_order_id, 'kind', c.kind,
            'description', c.description, 'amount', c.amount, 'currency', c.currency, 'billTo', c.bill_to,
            'estimate', c.estimate, 'createdBy', c.created_by, 'createdAt', c.created_at, 'updatedAt', c.updated_at)"
    };
}
pub(crate) use cost_line;

// A work order's (alias `w`) totals per currency and `billTo`: estimated, actual and both.
macro_rules! cost_totals {
    () => {
        "coalesce((SELECT jsonb_agg(jsonb_build_object('currency', t.currency, 'billTo', t.bill_to,
                'estimated', t.estimated, 'actual', t.actual, 'total', t.estimated + t.actual)
                ORDER BY t.currency, t.bill_to)
            FROM (SELECT c.currency, c.bill_to,
                    coalesce(sum(c.amount) FILTER (WHERE c.estimate), 0) AS estimated,
                    coalesce(sum(c.amount) FILTER (WHERE NOT c.estimate), 0) AS actual
                  FROM work_order_costs c WHERE c.work_order_id = w.id GROUP BY c.currency, c.bill_to) t), '[]')"
    };
}

// A work order's (alias `w`) approval steps, oldest first.
macro_rules! approval_steps {
    () => {
        "coalesce((SELECT jsonb_agg(jsonb_build_object('id', a.id, 'channel', a.channel, 'estimate', a.estimate,
                'requestedBy', a.requested_by, 'requestedAt', a.requested_at, 'expiresAt', a.expires_at,
                'emailTo', a.email_to, 'emailSentAt', a.email_sent_at, 'supersededAt', a.superseded_at,
                'decision', a.decision, 'decidedAt', a.decided_at, 'note', a.note, 'decidedFrom', a.decided_from,
                'decidedBy', a.decided_by) ORDER BY a.requested_at, a.id)
            FROM work_order_approvals a WHERE a.work_order_id = w.id), '[]')"
    };
}

// A work order row (alias `w`) as a list item.
macro_rules! work_order_item {
    () => {
        concat!("jsonb_build_object('id', w.id, 'title', w.title, 'status', w.status, 'priority', w.priority,
            'category', w.category, 'villaId', w.villa_id, 'assetId', w.asset_id,
            'assigneeId', coalesce(w.assignee_staff_id, w.assignee_vendor_id), 'assigneeType', w.assignee_type,
            'villa', jsonb_build_object('id', v.id, 'name', v.villa_name),
            'assignee', ",
            work_order_assignee!(),
            ",
            'dueDate', w.due_date, 'source', w.source, 'reservationId', w.reservation_id,
            'taskRuleId', w.task_rule_id, 'sameDayTurnover', w.same_day_turnover,
            'reservationChanged', w.reservation_changed, 'parentWorkOrderId', w.parent_work_order_id,
            'createdAt', w.created_at)")
    };
}

impl Filter {
    /// The conditions of the filters given, each value bound ([`json_page`] says why only
    /// those).
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(status) = self.status {
            sql.push(" AND w.status = ").push_bind(status);
        }
        if let Some(priority) = self.priority {
            sql.push(" AND w.priority = ").push_bind(priority);
        }
        if let Some(category) = self.category {
            sql.push(" AND w.category = ").push_bind(category);
        }
        if let Some(villa_id) = self.villa_id {
            sql.push(" AND w.villa_id = ").push_bind(villa_id);
        }
        if let Some(assignee_id) = self.assignee_id {
            sql.push(" AND (w.assignee_staff_id = ")
                .push_bind(assignee_id)
                .push(" OR w.assignee_vendor_id = ")
                .push_bind(assignee_id)
                .push(")");
        }
        if let Some(schedule_id) = self.schedule_id {
            sql.push(" AND w.schedule_id = ").push_bind(schedule_id);
        }
        if let Some(source) = self.source {
            sql.push(" AND w.source = ").push_bind(source);
        }
        if let Some(reservation_id) = self.reservation_id {
            sql.push(" AND w.reservation_id = ")
                .push_bind(reservation_id);
        }
        if let Some(task_rule_id) = self.task_rule_id {
            sql.push(" AND w.task_rule_id = ").push_bind(task_rule_id);
        }
        if let Some(from) = self.due_from {
            sql.push(" AND w.due_date >= ")
                .push_bind(from)
                .push("::date::timestamp AT TIME ZONE ")
                .push_bind(self.zone.name())
                .push("::text");
        }
        if let Some(to) = self.due_to {
            sql.push(" AND w.due_date < (")
                .push_bind(to)
                .push("::date + 1)::timestamp AT TIME ZONE ")
                .push_bind(self.zone.name())
                .push("::text");
        }
    }
}

/// A page of work orders, newest first, and the total matching the filter (the count needs no
/// villa: the foreign key guarantees it).
pub async fn list(conn: &mut PgConnection, f: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM work_orders w",
        item: work_order_item!(),
        from: " FROM work_orders w JOIN villas v ON v.id = w.villa_id",
        order: "w.created_at DESC, w.id DESC",
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql)).await
}

/// One work order with its description, asset, schedule, comments, status history, timesheet
/// entries and total hours, checklist, follow-ups and drawn consumables.
pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        work_order_item!(),
        " || jsonb_build_object('description', w.description,
            'asset', (SELECT jsonb_build_object('id', a.id, 'name', a.name) FROM assets a WHERE a.id = w.asset_id),
            'holdReason', w.hold_reason, 'completionNotes', w.completion_notes,
            'completedAt', w.completed_at, 'scheduleId', w.schedule_id, 'occurrenceDate', w.occurrence_date,
            'emergencyId', (SELECT e.id FROM emergencies e WHERE e.work_order_id = w.id),
            'createdBy', w.created_by, 'updatedAt', w.updated_at,
            'comments', coalesce((SELECT jsonb_agg(jsonb_build_object('id', c.id, 'workOrderId', c.work_order_id,
                'content', c.content, 'type', c.type, 'author', c.author, 'createdAt', c.created_at) ORDER BY c.created_at, c.id)
                FROM work_order_comments c WHERE c.work_order_id = w.id), '[]'),
            'history', coalesce((SELECT jsonb_agg(jsonb_build_object('from', h.from_status, 'to', h.to_status,
                'reason', h.reason, 'changedBy', h.changed_by, 'changedAt', h.changed_at) ORDER BY h.changed_at, h.id)
                FROM work_order_history h WHERE h.work_order_id = w.id), '[]'),
            'timesheets', coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'hours', t.hours,
                'activityType', t.activity_type, 'date', t.work_date, 'staffId', t.staff_id, 'loggedBy', t.logged_by,
                'notes', t.notes) ORDER BY t.work_date, t.created_at, t.id)
                FROM timesheets t WHERE t.work_order_id = w.id), '[]'),
            'totalHours', (SELECT coalesce(sum(t.hours), 0) FROM timesheets t WHERE t.work_order_id = w.id),
            'checklist', coalesce((SELECT jsonb_agg(jsonb_build_object('id', i.id, 'text', i.text, 'kind', i.kind,
                'result', i.result, 'notes', i.notes, 'answeredBy', i.answered_by, 'answeredAt', i.answered_at,
                'fieldNoteId', i.field_note_id, 'followUpWorkOrderId', i.follow_up_work_order_id) ORDER BY i.position)
                FROM work_order_checklist_items i WHERE i.work_order_id = w.id), '[]'),
            'followUps', coalesce((SELECT jsonb_agg(jsonb_build_object('id', f.id, 'title', f.title, 'status', f.status)
                ORDER BY f.created_at, f.id) FROM work_orders f WHERE f.parent_work_order_id = w.id), '[]'),
            'consumables', w.consumables,
            'costs', coalesce((SELECT jsonb_agg(",
        cost_line!(),
        " ORDER BY c.created_at, c.id) FROM work_order_costs c WHERE c.work_order_id = w.id), '[]'),
            'costTotals', ",
        cost_totals!(),
        ",
            'approvalThreshold', CASE WHEN v.approval_threshold_amount IS NOT NULL
                THEN jsonb_build_object('amount', v.approval_threshold_amount, 'currency', v.approval_threshold_currency)
                ELSE (SELECT jsonb_build_object('amount', o.approval_threshold_amount, 'currency', o.approval_threshold_currency)
                      FROM owners o WHERE o.id = v.owner_id AND o.approval_threshold_amount IS NOT NULL) END,
            'approvalSkipped', w.approval_skipped,
            'statusBeforeApproval', w.status_before_approval,
            'approvals', ",
        approval_steps!(),
        ")",
        " FROM work_orders w JOIN villas v ON v.id = w.villa_id WHERE w.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("work order"))
    .map(|mut detail: Value| {
        let moves = moves_from(detail["status"].as_str().unwrap_or(""));
        detail["nextStatuses"] = moves;
        detail
    })
}
