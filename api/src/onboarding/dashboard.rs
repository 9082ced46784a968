//! `/api/dashboard/*`: aggregates and views of the onboarding data. Lists are paged (`page`,
//! `limit`) and answer `{success, data, pagination}`.

use axum::extract::State;
use domain::{
    onboarding::dashboard::{self, views},
    pagination::Pagination,
};
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Answer, DataMessage, DataPage, Reply};
use crate::paging::PageQuery;
use crate::{error::AppError, extract::ApiQuery, state::AppState};

fn paged(page: dashboard::Page, p: domain::pagination::PageRequest, what: &str) -> Reply {
    Reply::new(json!({
        "data": page.items,
        "pagination": Pagination { page: p.page, limit: p.limit, total: page.total },
        "message": format!("{} {what}", page.total),
    }))
}

/// Totals: villas, active villas, onboardings pending (not started), in progress and completed,
/// staff, documents, owners; `averageCompletionTime` is the mean hours from onboarding start to
/// completion; `mostSkippedFields` counts the optional fields (`ownerDetails.nationality`, ...)
/// left empty at completion, most skipped first (every such field: a bounded list).
#[utoipa::path(get, path = "/api/dashboard/stats", tag = "dashboard",
    responses((status = 200, body = Answer<DataMessage<views::DashboardStats>>)))]
pub async fn stats(State(state): State<AppState>) -> Result<Reply, AppError> {
    Ok(Reply::data(
        dashboard::stats(&state.pool).await?,
        "dashboard statistics",
    ))
}

/// Villas with their onboarding status, completion and owner name, newest first.
#[utoipa::path(get, path = "/api/dashboard/villas", tag = "dashboard", params(PageQuery),
    responses((status = 200, body = Answer<DataPage<Vec<views::DashboardVilla>>>)))]
pub async fn villas(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Reply, AppError> {
    let p = q.parse()?;
    Ok(paged(dashboard::villas(&state.pool, p).await?, p, "villas"))
}

/// Owners with the villas they own.
#[utoipa::path(get, path = "/api/dashboard/owners", tag = "dashboard", params(PageQuery),
    responses((status = 200, body = Answer<DataPage<Vec<views::DashboardOwner>>>)))]
pub async fn owners(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Reply, AppError> {
    let p = q.parse()?;
    Ok(paged(dashboard::owners(&state.pool, p).await?, p, "owners"))
}

/// Staff across all villas, with their assignments.
#[utoipa::path(get, path = "/api/dashboard/staff", tag = "dashboard", params(PageQuery),
    responses((status = 200, body = Answer<DataPage<Vec<views::DashboardStaff>>>)))]
pub async fn staff(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Reply, AppError> {
    let p = q.parse()?;
    Ok(paged(
        dashboard::staff(&state.pool, p).await?,
        p,
        "staff members",
    ))
}

/// Documents with their villa and expiry status (EXPIRED, EXPIRING_SOON within 30 days, VALID,
/// NO_EXPIRY), soonest expiry first.
#[utoipa::path(get, path = "/api/dashboard/documents", tag = "dashboard", params(PageQuery),
    responses((status = 200, body = Answer<DataPage<Vec<views::DashboardDocument>>>)))]
pub async fn documents(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Reply, AppError> {
    let p = q.parse()?;
    Ok(paged(
        dashboard::documents(&state.pool, p, state.core.business_time_zone.today()).await?,
        p,
        "documents",
    ))
}

/// Key metrics with the ten newest villas and owners.
#[utoipa::path(get, path = "/api/dashboard/management", tag = "dashboard",
    responses((status = 200, body = Answer<DataMessage<views::ManagementDashboard>>)))]
pub async fn management(State(state): State<AppState>) -> Result<Reply, AppError> {
    Ok(Reply::data(
        dashboard::management(&state.pool, state.core.business_time_zone.today()).await?,
        "management overview",
    ))
}

/// Onboarding counts by status, how many villas completed each step, and the onboardings in
/// progress (most recently updated first, paged).
#[utoipa::path(get, path = "/api/dashboard/onboarding-overview", tag = "dashboard", params(PageQuery),
    responses((status = 200, body = Answer<DataPage<views::OnboardingOverview>>, description = "`pagination` pages `inProgress`")))]
pub async fn onboarding_overview(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Reply, AppError> {
    let p = q.parse()?;
    let (mut overview, in_progress) = dashboard::onboarding_overview(&state.pool, p).await?;
    overview["inProgress"] = json!(in_progress.items);
    Ok(Reply::new(json!({
        "data": overview,
        "pagination": Pagination { page: p.page, limit: p.limit, total: in_progress.total },
        "message": "onboarding overview",
    })))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(stats))
        .routes(routes!(villas))
        .routes(routes!(owners))
        .routes(routes!(staff))
        .routes(routes!(documents))
        .routes(routes!(management))
        .routes(routes!(onboarding_overview))
}
