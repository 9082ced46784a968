//! `/api/owners`: a villa's owner.

use axum::extract::State;
use domain::{Problems, onboarding::records};
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Answer, DataMessage, Reply, bodies, documents::villa_id};
use crate::extract::Object;
use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath},
    state::AppState,
};

/// The villa's owner. 404 when the villa does not exist or has no owner yet.
#[utoipa::path(get, operation_id = "api_owners_get", path = "/api/owners/{villaId}", tag = "onboarding", params(("villaId" = Uuid, Path)),
    responses((status = 200, body = Answer<DataMessage<bodies::OnboardingOwner>>), (status = 404, description = "No such villa, or it has no owner yet")))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    let mut conn = state.pool.acquire().await?;
    let owner = records::owner_of_villa(&mut conn, villa_id)
        .await?
        .ok_or(AppError::NotFound("owner"))?;
    Ok(Reply::data(owner, "owner"))
}

/// Creates or updates the villa's owner: `villaId` (required) and the owner fields of wizard
/// step 2 (fields left out keep their value). Does not mark step 2; 201 when the owner was
/// created, 200 when updated.
#[utoipa::path(post, path = "/api/owners", tag = "onboarding", request_body = bodies::OwnerUpsertBody,
    responses((status = 201, body = Answer<bodies::OwnerSaved>, description = "Created"),
        (status = 200, body = Answer<bodies::OwnerSaved>, description = "Updated"),
        (status = 404, description = "No such villa")))]
pub async fn upsert(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Reply, AppError> {
    let mut problems = Problems::new();
    let villa_id = villa_id(&body, &mut problems);
    let patch = records::parse_owner(&body, "", &state.cipher, &mut problems);
    let villa_id = problems.finish_with(villa_id)?;
    let mut tx = state.pool.begin().await?;
    let existed = records::owner_of_villa(&mut tx, villa_id).await?.is_some();
    records::upsert_owner(&mut tx, villa_id, &patch).await?;
    let owner = records::owner_of_villa(&mut tx, villa_id).await?;
    tx.commit().await?;
    let reply = Reply::new(json!({
        "data": owner,
        "savedFields": patch.saved_fields,
        "message": if existed { "owner updated" } else { "owner created" },
    }));
    Ok(if existed { reply } else { reply.created() })
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get))
        .routes(routes!(upsert))
}
