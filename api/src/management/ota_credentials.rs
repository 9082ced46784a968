//! `/management/villas/{villaId}/ota-credentials`: the villa's credentials on online travel
//! agencies. Passwords are encrypted at rest and never returned (`hasPassword` says whether one is
//! stored).

use axum::{Json, extract::State, http::StatusCode};
use domain::{Problems, onboarding::records};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Items, created};
use crate::{
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath},
    state::AppState,
};

/// The villa's OTA credentials (without passwords), by platform.
#[utoipa::path(get, operation_id = "management_ota_credentials_list", path = "/management/villas/{villaId}/ota-credentials", tag = "management",
    params(("villaId" = Uuid, Path)),
    responses((status = 200, body = Items<domain::onboarding::records::OtaCredentialView>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Json<Items<Value>>, AppError> {
    let mut conn = state.pool.acquire().await?;
    domain::management::villas::ensure_exists(&mut conn, villa_id).await?;
    Ok(Json(Items {
        data: records::ota_credentials(&mut conn, villa_id).await?,
    }))
}

/// Adds a credential to the villa. Answers it without the password.
#[utoipa::path(post, operation_id = "management_ota_credentials_create", path = "/management/villas/{villaId}/ota-credentials", tag = "management",
    params(("villaId" = Uuid, Path)), request_body = OtaCredentialBody,
    responses((status = 201, body = domain::onboarding::records::OtaCredentialView)))]
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

crate::computed_schema!(
    /// A credential: platform and propertyId required; the password (which the caller may send
    /// already encrypted) is encrypted again at rest and never returned.
    OtaCredentialBody => {
        let mut schema = domain::onboarding::records::ota_credential_schema();
        schema["required"] = serde_json::json!(["platform", "propertyId"]);
        schema["properties"]["propertyId"] = serde_json::json!({"type": "string", "minLength": 1, "maxLength": 255, "pattern": "\\S"});
        if let Some(props) = schema["properties"].as_object_mut() {
            props.remove("id");
        }
        schema
    }
);
