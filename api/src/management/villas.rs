//! `/management/villas`: list (paging, status filter, substring search), read, create, update,
//! delete. Same rows as the onboarding wizard's villas (`name` is its `villaName`).

use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    pagination::{PageRequest, Pagination},
    villas::{self, VillaDetail, VillaFilter, VillaInput, VillaListItem, VillaStatus},
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::search_term;
use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath, ApiQuery},
    onboarding::Object,
    state::AppState,
};

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

/// The closed set of `propertyType` (the same as `domain::onboarding::records::PROPERTY_TYPES`,
/// checked by a test), for the OpenAPI document.
#[derive(ToSchema)]
#[schema(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(dead_code)] // documents the enumeration
pub enum PropertyType {
    Villa,
    Apartment,
    House,
    Condo,
    Resort,
}

/// The closed set of `villaStyle` (the same as `domain::onboarding::records::VILLA_STYLES`).
#[derive(ToSchema)]
#[schema(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(dead_code)] // documents the enumeration
pub enum VillaStyle {
    Modern,
    Traditional,
    Balinese,
    Mediterranean,
    Tropical,
    Colonial,
    Contemporary,
    Minimalist,
    Rustic,
}

/// The body of a villa create or update: management's names for the villa record.
#[derive(ToSchema)]
#[schema(as = ManagementVillaInput)]
#[allow(dead_code)] // documents the body; the handler reads it as a partial record
#[schema(rename_all = "camelCase")]
pub struct VillaBody {
    /// Required to create.
    name: String,
    /// Required to create.
    property_type: PropertyType,
    villa_style: Option<VillaStyle>,
    /// Required to create; 1 to 50.
    bedrooms: i32,
    /// Required to create; 1 to 50.
    bathrooms: i32,
    /// Required to create; 1 to 100.
    max_guests: i32,
    /// Generated (`VL-000001`, ...) when not given; unique.
    villa_code: Option<String>,
    /// DRAFT by default. A villa whose onboarding is in progress cannot be made ACTIVE.
    status: Option<VillaStatus>,
    /// An owner from `/management/owners` (`null` unlinks).
    owner_id: Option<Uuid>,
    address: Option<String>,
    city: Option<String>,
    country: Option<String>,
    postal_code: Option<String>,
    description: Option<String>,
    latitude: Option<f64>,
    longitude: Option<f64>,
    land_area_sqm: Option<f64>,
    living_area_sqm: Option<f64>,
    year_built: Option<i32>,
    /// HH:MM
    check_in_time: Option<String>,
    /// HH:MM
    check_out_time: Option<String>,
}

/// Creates a villa. Every invalid field is listed in `details`.
#[utoipa::path(post, operation_id = "management_villas_create", path = "/management/villas", tag = "management",
    request_body = VillaBody,
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
    params(("id" = Uuid, Path)), request_body = VillaBody,
    responses((status = 200, body = VillaDetail), (status = 400), (status = 401), (status = 403), (status = 404)))]
pub async fn update(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<VillaDetail>, AppError> {
    let mut problems = Problems::new();
    let input = VillaInput::parse(&body, false, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    villas::update(&mut tx, id, &input).await?;
    let villa = villas::get(&mut *tx, id).await?;
    tx.commit().await?;
    Ok(Json(villa))
}

/// Deletes the villa and everything that belongs to it (onboarding record, contract, bank
/// details, OTA credentials, documents, photos, facilities, staff assignments), like the
/// onboarding API's delete; its document-store folder is removed by the documents worker.
#[utoipa::path(delete, operation_id = "management_villas_delete", path = "/management/villas/{id}", tag = "management",
    params(("id" = Uuid, Path)),
    responses((status = 204), (status = 400), (status = 401), (status = 403), (status = 404)))]
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

#[cfg(test)]
mod tests {
    use domain::onboarding::records::{PROPERTY_TYPES, VILLA_STYLES};
    use utoipa::PartialSchema as _;

    /// The documented enumerations are the ones the checks enforce.
    #[test]
    fn documented_enumerations_match_the_checked_ones() {
        for (schema, values) in [
            (super::PropertyType::schema(), PROPERTY_TYPES),
            (super::VillaStyle::schema(), VILLA_STYLES),
        ] {
            let json = serde_json::to_value(schema).unwrap();
            assert_eq!(json["enum"], serde_json::json!(values), "{json}");
        }
    }
}
