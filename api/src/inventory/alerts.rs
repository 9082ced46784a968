//! `/inventory/alerts`: stock alerts raised by the alerts jobs, acknowledged and resolved by
//! people.

use crate::paging::PageQuery;
use axum::{Json, extract::State};
use domain::{
    Problems,
    inventory::{
        ALERT_SORTS, ALERT_STATUS_FILTERS, ALERT_TYPES, RESOLUTION_ACTIONS,
        alerts::{self, Filter},
        views,
    },
    record::members,
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    query::{id_filter, set_filter},
    state::AppState,
};

fn status_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(ALERT_STATUS_FILTERS)
}

fn sort_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(ALERT_SORTS)
}

fn type_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(ALERT_TYPES)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AlertQuery {
    /// A status, or `OPEN`: ACTIVE and ACKNOWLEDGED, the alerts someone still has to handle.
    #[param(schema_with = status_param)]
    status: Option<String>,
    /// `NEWEST` first (default), or `SEVERITY`: CRITICAL first, the newest first within each.
    #[param(schema_with = sort_param)]
    sort: Option<String>,
    #[serde(rename = "type")]
    #[param(rename = "type", schema_with = type_param)]
    kind: Option<String>,
    #[param(value_type = Option<Uuid>)]
    property_id: Option<String>,
    #[param(value_type = Option<Uuid>)]
    item_id: Option<String>,
}

/// Alerts, newest first or by severity.
#[utoipa::path(get, operation_id = "inventory_alerts_list", path = "/inventory/alerts", tag = "inventory",
    params(PageQuery, AlertQuery),
    responses((status = 200, body = Page<views::Alert>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<AlertQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        status: set_filter(
            &mut problems,
            "status",
            q.status.as_deref(),
            ALERT_STATUS_FILTERS,
        ),
        kind: set_filter(&mut problems, "type", q.kind.as_deref(), ALERT_TYPES),
        property_id: id_filter(&mut problems, "propertyId", q.property_id.as_deref()),
        item_id: id_filter(&mut problems, "itemId", q.item_id.as_deref()),
    };
    let sort =
        set_filter(&mut problems, "sort", q.sort.as_deref(), ALERT_SORTS).unwrap_or("NEWEST");
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        alerts::list(&mut conn, &filter, sort, page).await?,
        page,
    ))
}

/// One alert.
#[utoipa::path(get, operation_id = "inventory_alerts_get", path = "/inventory/alerts/{id}", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::Alert)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(alerts::get(&mut conn, id).await?))
}

/// ACTIVE → ACKNOWLEDGED (409 `INVALID_ALERT_STATE` otherwise).
#[utoipa::path(post, operation_id = "inventory_alerts_acknowledge", path = "/inventory/alerts/{id}/acknowledge", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::Alert), (status = 409, description = "INVALID_ALERT_STATE")))]
pub async fn acknowledge(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut tx = state.pool.begin().await?;
    alerts::acknowledge(&mut tx, id, &user.subject).await?;
    let alert = alerts::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Json(alert))
}

crate::computed_schema!(
    /// What was done about the alert.
    AlertResolution => json!({
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": {"type": "string", "enum": RESOLUTION_ACTIONS},
            "notes": {"type": ["string", "null"], "maxLength": 2000}
        }
    })
);

/// An open alert (ACTIVE or ACKNOWLEDGED) → RESOLVED with the action taken (409
/// `INVALID_ALERT_STATE` when already resolved).
///
/// The resolution holds while the cause lasts: the evaluations raise no new alert for this item
/// and type until the cause clears and comes back (restocked above the minimum and then below it
/// again, repaired and then damaged again, a new expiry date coming near), or until it gets worse
/// than the severity the alert was resolved at (a LOW_STOCK WARNING reaching 0, an EXPIRY
/// WARNING whose date passes), which raises a new CRITICAL alert at once.
#[utoipa::path(post, operation_id = "inventory_alerts_resolve", path = "/inventory/alerts/{id}/resolve", tag = "inventory",
    params(("id" = Uuid, Path)), request_body = AlertResolution,
    responses((status = 200, body = views::Alert), (status = 409, description = "INVALID_ALERT_STATE")))]
pub async fn resolve(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let action = match body.get("action") {
        None | Some(Value::Null) => {
            problems.push("action", "required", "action is required");
            None
        }
        Some(Value::String(s)) => problems.closed("action", s, RESOLUTION_ACTIONS),
        Some(_) => {
            problems.push("action", "invalid_type", "must be a string");
            None
        }
    };
    let notes = members::text(&body, "notes", "", 2000, &mut problems);
    let action = problems.finish_with(action)?;
    let mut tx = state.pool.begin().await?;
    alerts::resolve(&mut tx, id, action, notes.as_deref(), &user.subject).await?;
    let alert = alerts::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Json(alert))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get))
        .routes(routes!(acknowledge))
        .routes(routes!(resolve))
}
