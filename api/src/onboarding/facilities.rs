//! `/api/facilities`: a villa's facilities checklist and the items' photos.

use axum::{
    extract::State,
    response::{IntoResponse, Response},
};
use domain::onboarding::facilities;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Answer, DataMessage, Reply};
use crate::files::bytes_response;
use crate::{error::AppError, extract::ApiPath, state::AppState};

/// The villa's checklist (saved by wizard step 8). `photoUrl` is the item's photo route, or
/// null; the photo bytes themselves are not in the JSON.
#[utoipa::path(get, path = "/api/facilities/villa/{villaId}", tag = "onboarding",
    params(("villaId" = Uuid, Path)),
    responses((status = 200, body = Answer<DataMessage<Vec<facilities::FacilityView>>>), (status = 404, description = "No such villa")))]
pub async fn of_villa(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    let mut conn = state.pool.acquire().await?;
    domain::onboarding::villa(&mut conn, villa_id).await?;
    let items = facilities::of_villa(&mut conn, villa_id).await?;
    let message = format!("{} items", items.len());
    Ok(Reply::data(items, &message))
}

/// A facility item's photo. 404 when the item does not exist or has no photo.
#[utoipa::path(get, path = "/api/facilities/photo/{id}", tag = "onboarding", params(("id" = Uuid, Path)),
    responses((status = 200, description = "The image, in its type", content(([u8] = "image/jpeg"), ([u8] = "image/png"), ([u8] = "image/webp"), ([u8] = "image/gif"))),
        (status = 404, description = "No such item, or it has no photo")))]
pub async fn photo(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    let (bytes, mime) = facilities::photo(&state.pool, id)
        .await?
        .ok_or(AppError::NotFound("facility photo"))?;
    Ok(bytes_response(bytes, &mime, None, "private, max-age=300", None).into_response())
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(of_villa))
        .routes(routes!(photo))
}
