//! `/inventory/transfers`: stock moving between locations, in transit until received.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    inventory::{
        TRANSFER_STATUSES,
        transfers::{self, Filter},
        views,
    },
    record::AMOUNT_MAX,
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::evaluate_alerts_of;
use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    query::{id_filter, set_filter},
    state::AppState,
};

fn status_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(TRANSFER_STATUSES)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TransferQuery {
    #[param(schema_with = status_param)]
    status: Option<String>,
    /// The source or the destination.
    #[param(value_type = Option<Uuid>)]
    location_id: Option<String>,
}

/// Transfers, newest first.
#[utoipa::path(get, operation_id = "inventory_transfers_list", path = "/inventory/transfers", tag = "inventory",
    params(PageQuery, TransferQuery),
    responses((status = 200, body = Page<views::Transfer>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<TransferQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        status: set_filter(
            &mut problems,
            "status",
            q.status.as_deref(),
            TRANSFER_STATUSES,
        ),
        location_id: id_filter(&mut problems, "locationId", q.location_id.as_deref()),
    };
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        transfers::list(&mut conn, &filter, page).await?,
        page,
    ))
}

/// One transfer with its lines.
#[utoipa::path(get, operation_id = "inventory_transfers_get", path = "/inventory/transfers/{id}", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::Transfer)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(transfers::get(&mut conn, id).await?))
}

fn quantity_schema(description: &str, minimum: i64) -> Value {
    json!({"type": "number", "minimum": minimum, "maximum": AMOUNT_MAX, "description": description})
}

crate::computed_schema!(
    /// A transfer: items kept at the source, each once, with the quantity sent.
    TransferCreate => json!({
        "type": "object",
        "required": ["sourceLocationId", "destinationLocationId", "items"],
        "properties": {
            "sourceLocationId": {"type": "string", "format": "uuid"},
            "destinationLocationId": {"type": "string", "format": "uuid", "description": "Another location, of any property."},
            "items": {"type": "array", "minItems": 1, "maxItems": transfers::MAX_LINES, "items": {
                "type": "object", "required": ["itemId", "quantity"],
                "properties": {
                    "itemId": {"type": "string", "format": "uuid"},
                    "quantity": quantity_schema("Greater than 0, at most 3 decimal places.", 0)
                }
            }},
            "notes": {"type": ["string", "null"], "maxLength": 2000}
        }
    })
);

/// Sends stock: every line leaves the source at once (TRANSFER_OUT), all or nothing; the
/// transfer is IN_TRANSIT. A short line is 409 `INSUFFICIENT_STOCK` naming its item.
#[utoipa::path(post, operation_id = "inventory_transfers_create", path = "/inventory/transfers", tag = "inventory",
    request_body = TransferCreate,
    responses((status = 201, body = views::Transfer), (status = 404, description = "No such location"),
        (status = 409, description = "INSUFFICIENT_STOCK")))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let transfer = transfers::parse(&body, &mut problems);
    let transfer = problems.finish_with(transfer)?;
    let (view, evaluation) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        let id = transfers::create(&mut tx, &transfer, &user.subject).await?;
        let touched = transfers::touched_items(&mut tx, id).await?;
        let evaluation = evaluate_alerts_of(&mut tx, touched).await?;
        let view = transfers::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok((view, evaluation))
    })
    .await?;
    state.queues.push_in_background(evaluation);
    Ok((StatusCode::CREATED, Json(view)))
}

crate::computed_schema!(
    /// A receipt: one entry per line of the transfer, with what arrived (0 to what was sent).
    TransferReceipt => json!({
        "type": "object",
        "required": ["items"],
        "properties": {
            "items": {"type": "array", "maxItems": transfers::MAX_LINES, "items": {
                "type": "object", "required": ["itemId", "receivedQuantity"],
                "properties": {
                    "itemId": {"type": "string", "format": "uuid", "description": "The item as sent (the source's)."},
                    "receivedQuantity": quantity_schema("From 0 to what was sent, at most 3 decimal places.", 0),
                    "notes": {"type": ["string", "null"], "maxLength": 1000}
                }
            }}
        }
    })
);

/// Receives an in-transit transfer: each received quantity enters the destination item with the
/// same sku (created when there is none); RECEIVED, or RECEIVED_WITH_DISCREPANCY when a line
/// came short. 409 `INVALID_TRANSFER_STATE` unless IN_TRANSIT.
#[utoipa::path(post, operation_id = "inventory_transfers_receive", path = "/inventory/transfers/{id}/receive", tag = "inventory",
    params(("id" = Uuid, Path)), request_body = TransferReceipt,
    responses((status = 200, body = views::Transfer), (status = 409, description = "INVALID_TRANSFER_STATE")))]
pub async fn receive(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let receipt = transfers::parse_receipt(&body, &mut problems);
    problems.finish()?;
    let (view, evaluation) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        transfers::receive(&mut tx, id, &receipt, &user.subject).await?;
        let touched = transfers::touched_items(&mut tx, id).await?;
        let evaluation = evaluate_alerts_of(&mut tx, touched).await?;
        let view = transfers::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok((view, evaluation))
    })
    .await?;
    state.queues.push_in_background(evaluation);
    Ok(Json(view))
}

/// Cancels an in-transit transfer: its stock goes back to the source. 409
/// `INVALID_TRANSFER_STATE` unless IN_TRANSIT.
#[utoipa::path(post, operation_id = "inventory_transfers_cancel", path = "/inventory/transfers/{id}/cancel", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::Transfer), (status = 409, description = "INVALID_TRANSFER_STATE")))]
pub async fn cancel(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let (view, evaluation) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        transfers::cancel(&mut tx, id, &user.subject).await?;
        let touched = transfers::touched_items(&mut tx, id).await?;
        let evaluation = evaluate_alerts_of(&mut tx, touched).await?;
        let view = transfers::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok((view, evaluation))
    })
    .await?;
    state.queues.push_in_background(evaluation);
    Ok(Json(view))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get))
        .routes(routes!(receive))
        .routes(routes!(cancel))
}
