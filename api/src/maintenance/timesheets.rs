//! `/maintenance/timesheets`: hours logged on work orders or, for unplanned work, on a villa;
//! never more than 24 per person and date.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        timesheets::{self, FIELDS, Filter},
        views,
    },
    pagination::Pagination,
    record::{SchemaUse, json_schema, parse_patch},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::id_filter;
use crate::query::date_filter;
use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::Object,
    extract::{ApiJson, ApiQuery},
    paging::JsonPageAnswer,
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TimesheetQuery {
    #[param(value_type = Option<uuid::Uuid>)]
    work_order_id: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    staff_id: Option<String>,
    /// From this date on (YYYY-MM-DD).
    #[param(value_type = Option<chrono::NaiveDate>)]
    start_date: Option<String>,
    /// Up to this date (YYYY-MM-DD).
    #[param(value_type = Option<chrono::NaiveDate>)]
    end_date: Option<String>,
}

/// A page of entries with the hours of every entry the filter matches (the OpenAPI description
/// of what `timesheets::list` answers).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // documents the JSON built in SQL
pub struct TimesheetPage {
    #[schema(value_type = Vec<views::Timesheet>)]
    data: Vec<Value>,
    pagination: Pagination,
    /// Over all pages.
    total_hours: f64,
}

/// Entries, the latest date first, with `totalHours` over every entry matching.
#[utoipa::path(get, operation_id = "maintenance_timesheets_list", path = "/maintenance/timesheets", tag = "maintenance",
    params(PageQuery, TimesheetQuery),
    responses((status = 200, body = TimesheetPage)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<TimesheetQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        work_order_id: id_filter(&mut problems, "workOrderId", q.work_order_id.as_deref()),
        staff_id: id_filter(&mut problems, "staffId", q.staff_id.as_deref()),
        start_date: date_filter(&mut problems, "startDate", q.start_date.as_deref()),
        end_date: date_filter(&mut problems, "endDate", q.end_date.as_deref()),
    };
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        timesheets::list(&mut conn, &filter, page).await?,
        page,
    ))
}

crate::computed_schema!(
    /// Hours (above 0, at most 24, in quarter hours) of an activity on a date not in the future;
    /// `workOrderId`, or `villaId` for unplanned work; optionally the staff member who worked.
    TimesheetBody => json_schema(FIELDS, SchemaUse::Create)
);

/// Logs hours. The hours one person (the staff member, or else the token's subject) logs for one
/// date never pass 24 (409 `DAILY_HOURS_EXCEEDED`).
#[utoipa::path(post, operation_id = "maintenance_timesheets_log", path = "/maintenance/timesheets", tag = "maintenance",
    request_body = TimesheetBody,
    responses((status = 201, body = views::Timesheet),
        (status = 404, description = "No such work order, villa or staff member"),
        (status = 409, description = "`DAILY_HOURS_EXCEEDED`")))]
pub async fn log(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(FIELDS, &body, "", true, &state.cipher, &mut problems);
    let work_order_sent = body.get("workOrderId").is_some_and(|v| !v.is_null());
    timesheets::check(
        &patch,
        work_order_sent,
        state.core.business_time_zone.today(),
        &mut problems,
    );
    problems.finish()?;
    let entry = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        let id = timesheets::log(&mut tx, &patch, &user.subject).await?;
        let entry = timesheets::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(entry)
    })
    .await?;
    Ok((StatusCode::CREATED, Json(entry)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, log))
}
