//! `/management/villas/{villaId}/ota-credentials`: the villa's credentials on online travel
//! agencies. Passwords are encrypted at rest and never returned (`hasPassword` says whether one is
//! stored).

use axum::{Json, extract::State, http::StatusCode};
use domain::{Problems, onboarding::records};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Items, created};
use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath},
    onboarding::Object,
    state::AppState,
};

/// The villa's OTA credentials (without passwords), by platform.
#[utoipa::path(get, operation_id = "management_ota_credentials_list", path = "/management/villas/{villaId}/ota-credentials", tag = "management",
    params(("villaId" = Uuid, Path)),
    responses((status = 200, body = Items), (status = 400), (status = 401), (status = 403), (status = 404)))]
pub async fn list(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Json<Items>, AppError> {
    let mut conn = state.pool.acquire().await?;
    domain::villas::ensure_exists(&mut conn, villa_id).await?;
    Ok(Json(Items {
        data: records::ota_credentials(&mut conn, villa_id).await?,
    }))
}

#[derive(ToSchema)]
#[allow(dead_code)] // documents the body
#[schema(rename_all = "camelCase")]
pub struct OtaCredentialBody {
    /// AIRBNB, BOOKING_COM, EXPEDIA, VRBO, AGODA, TRIP_COM, GOOGLE, DIRECT or OTHER.
    platform: String,
    /// The villa's identifier on that platform.
    property_id: String,
    /// As the caller encrypted it (at most 4096 characters); encrypted again at rest, never
    /// returned.
    password: Option<String>,
    username: Option<String>,
    listing_url: Option<String>,
    /// Default true.
    is_active: Option<bool>,
}

/// Adds a credential to the villa. Answers it without the password.
#[utoipa::path(post, operation_id = "management_ota_credentials_create", path = "/management/villas/{villaId}/ota-credentials", tag = "management",
    params(("villaId" = Uuid, Path)), request_body = OtaCredentialBody,
    responses((status = 201, body = Object), (status = 400), (status = 401), (status = 403), (status = 404)))]
pub async fn create(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = records::parse_ota_credential(&body, &state.cipher, &mut problems);
    drop(body);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let credential = records::add_ota_credential(&mut conn, villa_id, &patch).await?;
    Ok(created(credential))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create))
}
