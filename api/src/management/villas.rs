//! `/management/villas`: list (paging, status filter, substring search), read, create, update,
//! delete. Same rows as the onboarding wizard's villas (`name` is its `villaName`).

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    management::villas::{self, VillaDetail, VillaFilter, VillaInput, VillaListItem, VillaStatus},
    pagination::Pagination,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::search_term;
use crate::{
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VillaListQuery {
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
#[utoipa::path(get, operation_id = "management_villas_list", path = "/management/villas", tag = "management", params(PageQuery, VillaListQuery),
    responses((status = 200, body = VillaList), (status = 400), (status = 401), (status = 403)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<VillaListQuery>,
) -> Result<Json<VillaList>, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let status = q
        .status
        .as_deref()
        .and_then(|s| problems.check(VillaStatus::parse("status", s)));
    let search = search_term(&mut problems, q.search.as_deref());
    problems.finish()?;
    let (data, total) = state
        .villa_reads
        .list(VillaFilter { status, search }, page)
        .await?;
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
    Ok(Json(state.villa_reads.get(id).await?))
}

crate::computed_schema!(
    /// A villa to create: management's names for the villa record.
    ManagementVillaCreate => villas::input_schema(domain::record::SchemaUse::Create)
);
crate::computed_schema!(
    /// The fields to change, and only those (`null` clears an optional field).
    ManagementVillaPatch => villas::input_schema(domain::record::SchemaUse::Patch)
);

/// Creates a villa. Every invalid field is listed in `details`.
#[utoipa::path(post, operation_id = "management_villas_create", path = "/management/villas", tag = "management",
    request_body = ManagementVillaCreate,
    responses((status = 201, body = VillaDetail), (status = 400), (status = 401), (status = 403), (status = 404, description = "No such owner")))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<VillaDetail>), AppError> {
    let mut problems = Problems::new();
    let input = VillaInput::parse(&body, true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = villas::create(&mut tx, &input).await?;
    let villa = villas::get(&mut *tx, id).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(villa)))
}

/// Changes the fields sent, and only those (`null` clears an optional field).
#[utoipa::path(patch, operation_id = "management_villas_update", path = "/management/villas/{id}", tag = "management",
    params(("id" = Uuid, Path)), request_body = ManagementVillaPatch,
    responses((status = 200, body = VillaDetail), (status = 400), (status = 401), (status = 403), (status = 404)))]
pub async fn update(
    State(state): State<AppState>,
    user: crate::auth::CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<VillaDetail>, AppError> {
    let mut problems = Problems::new();
    let input = VillaInput::parse(&body, false, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    villas::update(&mut tx, id, &input).await?;
    // Another threshold or another owner (whose threshold applies): the villa's open work
    // orders wait for the owner, or no longer, as their estimates now say.
    if input.changes_approval() {
        domain::maintenance::approvals::reassess_villas(&mut tx, &[id], &user.subject).await?;
    }
    let villa = villas::get(&mut *tx, id).await?;
    tx.commit().await?;
    Ok(Json(villa))
}

/// Deletes the villa and everything that belongs to it (onboarding record, contract, bank
/// details, OTA credentials, documents, photos, facilities, staff assignments), like the
/// onboarding API's delete; its document-store folder is removed by the documents worker. A villa
/// with operational history (stock items, assets, work orders, emergencies, timesheets,
/// planned-maintenance schedules, field notes) is kept: 409 `VILLA_IN_USE` with the count of
/// each kind in `error.inUse`; archive it instead (`status` ARCHIVED or INACTIVE).
#[utoipa::path(delete, operation_id = "management_villas_delete", path = "/management/villas/{id}", tag = "management",
    params(("id" = Uuid, Path)),
    responses((status = 204, description = "Deleted with everything that is its own"),
        (status = 409, description = "`VILLA_IN_USE`: the villa has operational history (stock items, stock transfers, assets, work orders, emergencies, timesheets, planned-maintenance schedules, field notes, linked PMS listings); `error.inUse` counts it by kind. Archive it instead.")))]
pub async fn delete(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<StatusCode, AppError> {
    crate::onboarding::villas::delete_with_folder(&state, id, None).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
}
