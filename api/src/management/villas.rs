//! `/management/villas`: list (paging, status filter, substring search) and read.

use axum::{Json, extract::State};
use domain::{
    Problems,
    pagination::{PageRequest, Pagination},
    villas::{self, VillaDetail, VillaFilter, VillaListItem, VillaStatus},
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    error::AppError,
    extract::{ApiPath, ApiQuery},
    state::AppState,
};

/// Longest search term accepted.
const MAX_SEARCH_LEN: usize = 100;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VillaListQuery {
    /// Page number from 1 (default 1).
    page: Option<String>,
    /// Page size from 1 to 100 (default 20).
    limit: Option<String>,
    /// ACTIVE, DRAFT, IN_REVIEW, APPROVED, REJECTED, INACTIVE or ARCHIVED.
    status: Option<String>,
    /// Case-insensitive substring of name, villa code, city or country.
    search: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct VillaList {
    data: Vec<VillaListItem>,
    pagination: Pagination,
}

/// Lists villas, newest first. Unknown `status` values and out-of-range `page`/`limit` are 400.
#[utoipa::path(get, operation_id = "management_villas_list", path = "/management/villas", tag = "management", params(VillaListQuery),
    responses((status = 200, body = VillaList), (status = 400), (status = 401), (status = 403)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<VillaListQuery>,
) -> Result<Json<VillaList>, AppError> {
    let mut problems = Problems::new();
    let page = PageRequest::from_query(&mut problems, q.page.as_deref(), q.limit.as_deref());
    let status = q
        .status
        .as_deref()
        .and_then(|s| problems.check(VillaStatus::parse("status", s)));
    let search = q
        .search
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    if search
        .as_ref()
        .is_some_and(|s| s.chars().count() > MAX_SEARCH_LEN)
    {
        problems.push(
            "search",
            "too_long",
            format!("at most {MAX_SEARCH_LEN} characters"),
        );
    }
    problems.finish()?;
    let (data, total) = villas::list(&state.pool, &VillaFilter { status, search }, page).await?;
    Ok(Json(VillaList {
        data,
        pagination: Pagination {
            page: page.page,
            limit: page.limit,
            total,
        },
    }))
}

/// One villa.
#[utoipa::path(get, operation_id = "management_villas_get", path = "/management/villas/{id}", tag = "management", params(("id" = Uuid, Path)),
    responses((status = 200, body = VillaDetail), (status = 400), (status = 401), (status = 404)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<VillaDetail>, AppError> {
    Ok(Json(villas::get(&state.pool, id).await?))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get))
}
