//! `/management/owners`: owners of villas, individuals or companies. An owner can own several
//! villas (link one with the villa's `ownerId`); the owner that onboarding step 2 writes is one
//! of them.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    management::owners::{self, OwnerFilter},
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Page, created, search_term};
use crate::{
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct OwnerListQuery {
    /// INDIVIDUAL or COMPANY.
    owner_type: Option<String>,
    /// Case-insensitive substring of first and last name, company name or email.
    search: Option<String>,
}

/// Lists owners, newest first, each with the ids of its villas (`villaIds`).
#[utoipa::path(get, operation_id = "management_owners_list", path = "/management/owners", tag = "management", params(PageQuery, OwnerListQuery),
    responses((status = 200, body = super::Page<super::ManagementOwner>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<OwnerListQuery>,
) -> Result<Json<Page<Value>>, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
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
    responses((status = 200, body = super::ManagementOwner)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(owners::get(&mut conn, id).await?))
}

/// Creates an owner. Every invalid or missing field is listed in `details`.
#[utoipa::path(post, operation_id = "management_owners_create", path = "/management/owners", tag = "management",
    request_body = OwnerCreate,
    responses((status = 201, body = super::ManagementOwner)))]
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
    params(("id" = Uuid, Path)), request_body = OwnerPatchBody,
    responses((status = 200, body = super::ManagementOwner)))]
pub async fn update(
    State(state): State<AppState>,
    user: crate::auth::CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut tx = state.pool.begin().await?;
    let stored = owners::lock(&mut tx, id).await?;
    let mut problems = Problems::new();
    let patch = owners::parse(&body, Some(&stored), &state.cipher, &mut problems);
    problems.finish()?;
    owners::update(&mut tx, id, &patch).await?;
    // The owner's threshold applies to their villas without one of their own.
    if patch.saved_fields.iter().any(|f| f == "approvalThreshold") {
        let villas: Vec<Uuid> = stored
            .get("villa_ids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str()?.parse().ok())
            .collect();
        domain::maintenance::approvals::reassess_villas(&mut tx, &villas, &user.subject).await?;
    }
    let owner = owners::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Json(owner))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update))
}

crate::computed_schema!(
    /// A new owner. INDIVIDUAL needs firstName, lastName and phone; COMPANY needs companyName,
    /// registrationNumber and contactPerson. Phones are stored in E.164 form.
    OwnerCreate => with_terms(domain::record::json_schema(
        domain::onboarding::records::OWNER_FIELDS,
        domain::record::SchemaUse::Create,
    ))
);
crate::computed_schema!(
    /// The fields to change (the per-type requirements are checked on the owner as it will be).
    OwnerPatchBody => with_terms(domain::record::json_schema(
        domain::onboarding::records::OWNER_FIELDS,
        domain::record::SchemaUse::Patch,
    ))
);

/// A body's schema with the owner's management terms (optional members).
fn with_terms(mut schema: Value) -> Value {
    if let (Some(props), Value::Object(terms)) = (
        schema["properties"].as_object_mut(),
        domain::management::terms::terms_schema(true),
    ) {
        props.extend(terms);
    }
    schema
}
