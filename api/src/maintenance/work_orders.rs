//! `/maintenance/work-orders`: list, read, create, update (with the status transitions of
//! `domain::maintenance::work_orders::next_statuses`), assign, comment.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        ASSIGNEE_TYPES, COMMENT_TYPES, PRIORITIES, SOURCES, WORK_ORDER_CATEGORIES, views,
        work_orders::{self, Assignee, CREATE_FIELDS, Filter, STATUSES, UPDATE_FIELDS, Update},
    },
    record::{Kind, SchemaUse, json_schema, members, parse_patch},
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{id_filter, set_filter};
use crate::query::date_filter;
use crate::{
    auth::{CurrentUser, permissions},
    error::{AppError, retry_transient},
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct WorkOrderQuery {
    #[param(inline, value_type = Option<views::WorkOrderStatus>)]
    status: Option<String>,
    #[param(inline, value_type = Option<views::Priority>)]
    priority: Option<String>,
    #[param(schema_with = super::work_order_category_param)]
    category: Option<String>,
    #[param(value_type = Option<Uuid>)]
    villa_id: Option<String>,
    /// A staff member or a vendor.
    #[param(value_type = Option<Uuid>)]
    assignee_id: Option<String>,
    /// The planned-maintenance schedule that generated it.
    #[param(value_type = Option<Uuid>)]
    schedule_id: Option<String>,
    /// Where it came from: MANUAL, PLANNED, TURNOVER or INSPECTION.
    #[param(inline, value_type = Option<views::WorkOrderSource>)]
    source: Option<String>,
    /// The PMS stay a turnover is for.
    #[param(value_type = Option<Uuid>)]
    reservation_id: Option<String>,
    /// The task rule that generated it.
    #[param(value_type = Option<Uuid>)]
    task_rule_id: Option<String>,
    /// Due on or after this day (inclusive; the company's day, `BUSINESS_TIME_ZONE`).
    #[param(value_type = Option<chrono::NaiveDate>)]
    due_from: Option<String>,
    /// Due on or before this day (inclusive; the company's day).
    #[param(value_type = Option<chrono::NaiveDate>)]
    due_to: Option<String>,
}

/// Work orders, newest first, with the filters given.
#[utoipa::path(get, operation_id = "maintenance_work_orders_list", path = "/maintenance/work-orders", tag = "maintenance",
    params(PageQuery, WorkOrderQuery),
    responses((status = 200, body = Page<views::WorkOrderItem>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<WorkOrderQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        status: set_filter(&mut problems, "status", q.status.as_deref(), STATUSES),
        priority: set_filter(&mut problems, "priority", q.priority.as_deref(), PRIORITIES),
        category: set_filter(
            &mut problems,
            "category",
            q.category.as_deref(),
            WORK_ORDER_CATEGORIES,
        ),
        villa_id: id_filter(&mut problems, "villaId", q.villa_id.as_deref()),
        assignee_id: id_filter(&mut problems, "assigneeId", q.assignee_id.as_deref()),
        schedule_id: id_filter(&mut problems, "scheduleId", q.schedule_id.as_deref()),
        source: set_filter(&mut problems, "source", q.source.as_deref(), SOURCES),
        reservation_id: id_filter(&mut problems, "reservationId", q.reservation_id.as_deref()),
        task_rule_id: id_filter(&mut problems, "taskRuleId", q.task_rule_id.as_deref()),
        due_from: date_filter(&mut problems, "dueFrom", q.due_from.as_deref()),
        due_to: date_filter(&mut problems, "dueTo", q.due_to.as_deref()),
        zone: state.core.business_time_zone,
    };
    if let (Some(from), Some(to)) = (filter.due_from, filter.due_to)
        && to < from
    {
        problems.push("dueTo", "out_of_range", "must not be before dueFrom");
    }
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let found = work_orders::list(&mut conn, &filter, page).await?;
    Ok(JsonPageAnswer::new(found, page))
}

/// One work order with its description, asset, comments, status history, timesheet entries, total
/// hours, checklist, follow-ups and drawn consumables.
#[utoipa::path(get, operation_id = "maintenance_work_orders_get", path = "/maintenance/work-orders/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::WorkOrderDetail)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(work_orders::get(&mut conn, id).await?))
}

crate::computed_schema!(
    /// A new work order: it starts OPEN.
    WorkOrderCreate => json_schema(CREATE_FIELDS, SchemaUse::Create)
);

/// Opens a work order (status OPEN). The villa must exist (404 `VILLA_NOT_FOUND`); an asset must
/// belong to that villa (400 on `assetId`).
#[utoipa::path(post, operation_id = "maintenance_work_orders_create", path = "/maintenance/work-orders", tag = "maintenance",
    request_body = WorkOrderCreate,
    responses((status = 201, body = views::WorkOrderDetail), (status = 404, description = "No such villa")))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(CREATE_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = work_orders::create(&mut tx, &patch, &user.subject).await?;
    let order = work_orders::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(order)))
}

crate::computed_schema!(
    /// The fields to change and, optionally, the status to move to. ON_HOLD needs `holdReason`;
    /// COMPLETED keeps `completionNotes`; reopening a COMPLETED work order needs `reason`.
    WorkOrderUpdate => {
        let mut schema = json_schema(UPDATE_FIELDS, SchemaUse::Patch);
        let props = schema["properties"].as_object_mut().expect("an object schema");
        props.insert("status".into(), json!({"type": "string", "enum": STATUSES,
            "description": "OPEN -> IN_PROGRESS, CANCELLED; ASSIGNED -> IN_PROGRESS, OPEN (unassigns), CANCELLED; \
IN_PROGRESS -> ON_HOLD, COMPLETED, CANCELLED; ON_HOLD -> IN_PROGRESS, CANCELLED; COMPLETED -> IN_PROGRESS (reopen); \
CANCELLED is final. ASSIGNED only through assign; only managers and admins cancel."}));
        props.insert("holdReason".into(), json!({"type": ["string", "null"], "maxLength": 2000}));
        props.insert("completionNotes".into(), json!({"type": ["string", "null"], "maxLength": 5000}));
        props.insert("reason".into(), json!({"type": ["string", "null"], "maxLength": 2000}));
        schema
    }
);

/// Changes the fields sent and, with `status`, moves the work order along its transitions (409
/// `INVALID_STATUS_TRANSITION` naming the allowed next states otherwise); every move is in the
/// history with who, when and why. Cancelling is for managers and admins (403 otherwise).
/// Completing a generated work order draws its task rule's consumables from the villa's stock,
/// once (`USE` movements with `workOrderId`; what was short in `consumables`).
#[utoipa::path(patch, operation_id = "maintenance_work_orders_update", path = "/maintenance/work-orders/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = WorkOrderUpdate,
    responses((status = 200, body = views::WorkOrderDetail),
        (status = 403, description = "Cancelling needs a manager or an admin"),
        (status = 409, description = "`INVALID_STATUS_TRANSITION`: the message names the allowed next states; \
`CHECKLIST_INCOMPLETE`: COMPLETED with an unanswered checklist item, the message naming them and `items` listing them; \
`OWNER_APPROVAL_REQUIRED`: an AWAITING_APPROVAL work order may only be cancelled until the owner decides")))]
pub async fn update(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(
        UPDATE_FIELDS,
        &body,
        "",
        false,
        &state.cipher,
        &mut problems,
    );
    let status = match body.get("status") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => problems.closed("status", s, STATUSES),
        Some(_) => {
            problems.push("status", "invalid_type", "status must be a string");
            None
        }
    };
    let hold_reason = members::text(&body, "holdReason", "", 2000, &mut problems);
    let completion_notes = members::text(&body, "completionNotes", "", 5000, &mut problems);
    let reason = members::text(&body, "reason", "", 2000, &mut problems);
    problems.finish()?;
    if status == Some("CANCELLED") && !permissions::may_cancel_work_orders(&user.roles) {
        return Err(AppError::Forbidden(
            "only managers and admins cancel work orders".into(),
        ));
    }
    let change = Update {
        patch,
        status,
        hold_reason,
        completion_notes,
        reason,
    };
    let (order, evaluation) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        let drawn = work_orders::update(&mut tx, id, &change, &user.subject).await?;
        // A work order reopened, or otherwise back in an open status, is judged against its
        // owner-billed estimate again (lines added while it was COMPLETED, say).
        domain::maintenance::approvals::reassess(&mut tx, id, &user.subject).await?;
        // The stock alerts of what a turnover's consumables drew, as every movement enqueues them.
        let evaluation = crate::inventory::evaluate_alerts_of(&mut tx, drawn).await?;
        let order = work_orders::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok((order, evaluation))
    })
    .await?;
    state.queues.push_in_background(evaluation);
    Ok(Json(order))
}

crate::computed_schema!(
    /// Who takes the work order: a staff member (TECHNICIAN) or a vendor (VENDOR).
    WorkOrderAssignment => json!({
        "type": "object",
        "required": ["assigneeId", "assigneeType"],
        "properties": {
            "assigneeId": {"type": "string", "format": "uuid"},
            "assigneeType": {"type": "string", "enum": ASSIGNEE_TYPES},
            "dueDate": {"type": ["string", "null"], "format": "date-time", "description": "RFC 3339"},
        },
    })
);

/// Assigns the work order to a technician (a staff member) or a vendor: an OPEN one becomes
/// ASSIGNED, one in another open state keeps its state and changes hands, a COMPLETED or
/// CANCELLED one is 409. The assignee must exist (404 `STAFF_NOT_FOUND` / `VENDOR_NOT_FOUND`).
#[utoipa::path(post, operation_id = "maintenance_work_orders_assign", path = "/maintenance/work-orders/{id}/assign", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = WorkOrderAssignment,
    responses((status = 200, body = views::WorkOrderDetail),
        (status = 404, description = "No such work order, staff member or vendor"),
        (status = 409, description = "The work order is COMPLETED or CANCELLED")))]
pub async fn assign(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    const FIELDS: &[domain::record::FieldSpec] = &[
        domain::record::required("assigneeId", "assignee_id", Kind::Uuid),
        domain::record::required("assigneeType", "assignee_type", Kind::OneOf(ASSIGNEE_TYPES)),
        domain::record::field("dueDate", "due_date", Kind::Timestamp),
    ];
    let mut problems = Problems::new();
    let patch = parse_patch(FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let text = |column: &str| patch.columns.get(column).and_then(Value::as_str);
    let assignee_id: Uuid = text("assignee_id")
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| AppError::invalid("assigneeId", "required", "assigneeId is required"))?;
    let assignee = match text("assignee_type") {
        Some("VENDOR") => Assignee::Vendor(assignee_id),
        _ => Assignee::Technician(assignee_id),
    };
    let due_date = text("due_date").map(str::to_owned);
    let order = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        work_orders::assign(&mut tx, id, assignee, due_date.as_deref(), &user.subject).await?;
        let order = work_orders::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(order)
    })
    .await?;
    Ok(Json(order))
}

crate::computed_schema!(
    /// A comment; PUBLIC unless `type` says INTERNAL.
    CommentBody => json!({
        "type": "object",
        "required": ["content"],
        "properties": {
            "content": {"type": "string", "minLength": 1, "maxLength": 5000, "pattern": "\\S"},
            "type": {"type": ["string", "null"], "enum": [COMMENT_TYPES[0], COMMENT_TYPES[1], null]},
        },
    })
);

/// Adds a comment; its author is the token's subject.
#[utoipa::path(post, operation_id = "maintenance_work_orders_comment", path = "/maintenance/work-orders/{id}/comments", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = CommentBody,
    responses((status = 201, body = views::Comment)))]
pub async fn comment(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let content = members::text(&body, "content", "", 5000, &mut problems);
    if content.is_none() && problems.is_empty() {
        problems.push(
            "content",
            "required",
            "content is required (1 to 5000 characters)",
        );
    }
    let kind = match body.get("type") {
        None | Some(Value::Null) => Some("PUBLIC"),
        Some(Value::String(s)) => problems.closed("type", s, COMMENT_TYPES),
        Some(_) => {
            problems.push("type", "invalid_type", "type must be a string");
            None
        }
    };
    let (content, kind) = problems.finish_with((|| Some((content?, kind?)))())?;
    let mut conn = state.pool.acquire().await?;
    let comment = work_orders::comment(&mut conn, id, &content, kind, &user.subject).await?;
    Ok((StatusCode::CREATED, Json(comment)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update))
        .routes(routes!(assign))
        .routes(routes!(comment))
}
