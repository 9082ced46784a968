//! `/maintenance/emergencies`: report (with its URGENT work order), move forward, log actions,
//! list and read with the timeline.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        emergencies::{
            self, ACTION_FIELDS, CREATE_FIELDS, Filter, SEVERITIES, STATUS_FIELDS, STATUSES,
        },
        views,
    },
    record::{SchemaUse, json_schema, parse_patch},
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{id_filter, set_filter};
use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct EmergencyQuery {
    #[param(inline, value_type = Option<views::EmergencyStatus>)]
    status: Option<String>,
    #[param(inline, value_type = Option<views::Severity>)]
    severity: Option<String>,
    #[param(value_type = Option<Uuid>)]
    villa_id: Option<String>,
}

/// Emergencies, newest first.
#[utoipa::path(get, operation_id = "maintenance_emergencies_list", path = "/maintenance/emergencies", tag = "maintenance",
    params(PageQuery, EmergencyQuery),
    responses((status = 200, body = Page<views::EmergencyItem>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<EmergencyQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        status: set_filter(&mut problems, "status", q.status.as_deref(), STATUSES),
        severity: set_filter(&mut problems, "severity", q.severity.as_deref(), SEVERITIES),
        villa_id: id_filter(&mut problems, "villaId", q.villa_id.as_deref()),
    };
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        emergencies::list(&mut conn, &filter, page).await?,
        page,
    ))
}

/// One emergency with its timeline of status changes and actions in time order.
#[utoipa::path(get, operation_id = "maintenance_emergencies_get", path = "/maintenance/emergencies/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::EmergencyDetail)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(emergencies::get(&mut conn, id).await?))
}

crate::computed_schema!(
    /// An emergency to report.
    EmergencyCreate => json_schema(CREATE_FIELDS, SchemaUse::Create)
);

/// Reports an emergency (status REPORTED) and opens, in the same transaction, an URGENT work
/// order for it (`workOrderId`).
#[utoipa::path(post, operation_id = "maintenance_emergencies_report", path = "/maintenance/emergencies", tag = "maintenance",
    request_body = EmergencyCreate,
    responses((status = 201, body = views::EmergencyDetail), (status = 404, description = "No such villa")))]
pub async fn report(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(CREATE_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = emergencies::report(&mut tx, &patch, &user.subject).await?;
    let emergency = emergencies::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(emergency)))
}

crate::computed_schema!(
    /// The status to move to (forward only) and optional notes.
    EmergencyStatusBody => json_schema(STATUS_FIELDS, SchemaUse::Create)
);

/// Moves the emergency forward along REPORTED → ACKNOWLEDGED → RESPONDING → CONTAINED → RESOLVED
/// (skipping ahead is allowed); going back, staying or leaving RESOLVED is 409
/// `INVALID_STATUS_TRANSITION`.
#[utoipa::path(patch, operation_id = "maintenance_emergencies_status", path = "/maintenance/emergencies/{id}/status", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = EmergencyStatusBody,
    responses((status = 200, body = views::EmergencyDetail),
        (status = 409, description = "`INVALID_STATUS_TRANSITION`: the message names the allowed next states")))]
pub async fn set_status(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(STATUS_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let emergency = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        emergencies::set_status(&mut tx, id, &patch, &user.subject).await?;
        let emergency = emergencies::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(emergency)
    })
    .await?;
    Ok(Json(emergency))
}

crate::computed_schema!(
    /// An action taken, and the staff member who took it.
    EmergencyActionBody => json_schema(ACTION_FIELDS, SchemaUse::Create)
);

/// Logs an action taken by a staff member (404 `STAFF_NOT_FOUND` when there is none); answers
/// the timeline entry.
#[utoipa::path(post, operation_id = "maintenance_emergencies_action", path = "/maintenance/emergencies/{id}/actions", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = EmergencyActionBody,
    responses((status = 201, body = views::TimelineEntry),
        (status = 404, description = "No such emergency or staff member")))]
pub async fn add_action(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(ACTION_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let action = emergencies::add_action(&mut tx, id, &patch, &user.subject).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(action)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, report))
        .routes(routes!(get))
        .routes(routes!(set_status))
        .routes(routes!(add_action))
}
