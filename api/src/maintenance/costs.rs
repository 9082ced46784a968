//! `/maintenance/work-orders/{id}/costs`: a work order's cost lines
//! (`domain::maintenance::costs`). Adding, changing or removing a line reassesses the owner's
//! approval: the work order answers in full so the client sees an AWAITING_APPROVAL at once.

use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        costs::{self, COST_FIELDS},
        views, work_orders,
    },
    record::{SchemaUse, json_schema, parse_patch},
};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::{CurrentUser, permissions},
    error::{AppError, retry_transient},
    extract::{ApiJson, ApiPath, ApiQuery, Object},
    paging::{JsonPageAnswer, Page, PageQuery},
    state::AppState,
};

crate::computed_schema!(
    /// A cost line: every member is required.
    CostLineCreate => json_schema(COST_FIELDS, SchemaUse::Create)
);
crate::computed_schema!(
    /// The members of a cost line to change.
    CostLineUpdate => json_schema(COST_FIELDS, SchemaUse::Patch)
);

/// The work order's cost lines, oldest first.
#[utoipa::path(get, operation_id = "maintenance_work_orders_costs_list", path = "/maintenance/work-orders/{id}/costs", tag = "maintenance",
    params(("id" = Uuid, Path), PageQuery),
    responses((status = 200, body = Page<views::CostLine>), (status = 404, description = "No such work order")))]
pub async fn list(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(paging): ApiQuery<PageQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        costs::list(&mut conn, id, page).await?,
        page,
    ))
}

/// Adds a cost line and answers the work order. An owner-billed estimate above the villa's
/// approval threshold (or in another currency than the threshold's) puts an open work order in
/// AWAITING_APPROVAL; an emergency's is flagged `approvalSkipped: EMERGENCY` instead.
#[utoipa::path(post, operation_id = "maintenance_work_orders_costs_create", path = "/maintenance/work-orders/{id}/costs", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = CostLineCreate,
    responses((status = 201, body = views::WorkOrderDetail),
        (status = 404, description = "No such work order"),
        (status = 409, description = "`TOO_MANY_COST_LINES`: the work order holds 200 already")))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(COST_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let order = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        costs::create(&mut tx, id, &patch, &user.subject).await?;
        let order = work_orders::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(order)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(order)))
}

/// Changes the members sent of a cost line and answers the work order (the approval is
/// reassessed as on a new line). While the work order awaits the owner's approval, only managers
/// and admins change its lines (409 `OWNER_APPROVAL_PENDING`).
#[utoipa::path(patch, operation_id = "maintenance_work_orders_costs_update", path = "/maintenance/work-orders/{id}/costs/{costId}", tag = "maintenance",
    params(("id" = Uuid, Path), ("costId" = Uuid, Path)), request_body = CostLineUpdate,
    responses((status = 200, body = views::WorkOrderDetail),
        (status = 404, description = "No such work order, or no such line on it"),
        (status = 409, description = "`OWNER_APPROVAL_PENDING`: the work order awaits the owner's approval and the caller is not a manager or an admin")))]
pub async fn update(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath((id, cost_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(COST_FIELDS, &body, "", false, &state.cipher, &mut problems);
    if patch.is_empty() && problems.is_empty() {
        problems.push(
            "body",
            "required",
            "nothing to change: send at least one member of the cost line",
        );
    }
    problems.finish()?;
    let manager = permissions::may_cancel_work_orders(&user.roles);
    let order = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        costs::update(&mut tx, id, cost_id, &patch, manager, &user.subject).await?;
        let order = work_orders::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(order)
    })
    .await?;
    Ok(Json(order))
}

/// Removes a cost line and answers the work order; a waiting work order whose estimate no longer
/// needs the owner goes back to its status before. Managers and admins only (deleting).
#[utoipa::path(delete, operation_id = "maintenance_work_orders_costs_delete", path = "/maintenance/work-orders/{id}/costs/{costId}", tag = "maintenance",
    params(("id" = Uuid, Path), ("costId" = Uuid, Path)),
    responses((status = 200, body = views::WorkOrderDetail),
        (status = 403, description = "Managers and admins only"),
        (status = 404, description = "No such work order, or no such line on it")))]
pub async fn delete(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath((id, cost_id)): ApiPath<(Uuid, Uuid)>,
) -> Result<Json<Value>, AppError> {
    let manager = permissions::may_cancel_work_orders(&user.roles);
    let order = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        costs::delete(&mut tx, id, cost_id, manager, &user.subject).await?;
        let order = work_orders::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(order)
    })
    .await?;
    Ok(Json(order))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, delete))
}
