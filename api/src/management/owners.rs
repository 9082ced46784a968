//! `/management/owners`: owners of villas, individuals or companies. An owner can own several
//! villas (link one with the villa's `ownerId`); the owner that onboarding step 2 writes is one
//! of them.

use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    owners::{self, OwnerFilter},
    pagination::PageRequest,
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Page, created, search_term};
use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath, ApiQuery},
    onboarding::Object,
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct OwnerListQuery {
    /// Page number from 1 (default 1).
    page: Option<String>,
    /// Page size from 1 to 100 (default 20).
    limit: Option<String>,
    /// INDIVIDUAL or COMPANY.
    owner_type: Option<String>,
    /// Case-insensitive substring of first and last name, company name or email.
    search: Option<String>,
}

/// Lists owners, newest first, each with the ids of its villas (`villaIds`).
#[utoipa::path(get, operation_id = "management_owners_list", path = "/management/owners", tag = "management", params(OwnerListQuery),
    responses((status = 200, body = super::Page), (status = 400), (status = 401), (status = 403)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<OwnerListQuery>,
) -> Result<Json<Page>, AppError> {
    let mut problems = Problems::new();
    let page = PageRequest::from_query(&mut problems, q.page.as_deref(), q.limit.as_deref());
    let owner_type = q
        .owner_type
        .as_deref()
        .and_then(|t| problems.check(owners::parse_owner_type(t)));
    let search = search_term(&mut problems, q.search.as_deref());
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let filter = OwnerFilter { owner_type, search };
    let (data, total) = owners::list(&mut conn, &filter, page).await?;
    Ok(Page::new(data, page, total))
}

/// One owner.
#[utoipa::path(get, operation_id = "management_owners_get", path = "/management/owners/{id}", tag = "management", params(("id" = Uuid, Path)),
    responses((status = 200, body = Object), (status = 400), (status = 401), (status = 404)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(owners::get(&mut conn, id).await?))
}

/// An owner's fields. INDIVIDUAL needs firstName, lastName and phone; COMPANY needs companyName,
/// registrationNumber and contactPerson.
#[derive(ToSchema)]
#[allow(dead_code)] // documents the body; the handler reads it as a partial record
#[schema(rename_all = "camelCase")]
pub struct OwnerBody {
    /// INDIVIDUAL or COMPANY; required to create.
    owner_type: String,
    first_name: Option<String>,
    last_name: Option<String>,
    /// International (E.164) format, `+66812345678`; spaces, dashes and dots between digits are
    /// accepted and removed.
    phone: Option<String>,
    company_name: Option<String>,
    registration_number: Option<String>,
    contact_person: Option<String>,
    email: Option<String>,
    alternative_phone: Option<String>,
    nationality: Option<String>,
    passport_number: Option<String>,
    tax_id: Option<String>,
    company_tax_id: Option<String>,
    address: Option<String>,
    city: Option<String>,
    country: Option<String>,
    postal_code: Option<String>,
    preferred_language: Option<String>,
    /// EMAIL, PHONE, WHATSAPP or SMS.
    communication_preference: Option<String>,
    notes: Option<String>,
}

/// Creates an owner. Every invalid or missing field is listed in `details`.
#[utoipa::path(post, operation_id = "management_owners_create", path = "/management/owners", tag = "management",
    request_body = OwnerBody,
    responses((status = 201, body = Object), (status = 400), (status = 401), (status = 403)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = owners::parse(&body, None, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = owners::create(&mut tx, &patch, None).await?;
    let owner = owners::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok(created(owner))
}

/// Changes the fields sent; the owner must still have what its type needs afterwards.
#[utoipa::path(patch, operation_id = "management_owners_update", path = "/management/owners/{id}", tag = "management",
    params(("id" = Uuid, Path)), request_body = OwnerBody,
    responses((status = 200, body = Object), (status = 400), (status = 401), (status = 403), (status = 404)))]
pub async fn update(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut tx = state.pool.begin().await?;
    let stored = owners::lock(&mut tx, id).await?;
    let mut problems = Problems::new();
    let patch = owners::parse(&body, Some(&stored), &state.cipher, &mut problems);
    problems.finish()?;
    owners::update(&mut tx, id, &patch).await?;
    let owner = owners::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Json(owner))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update))
}
