//! `/api/debug/*`: development only (mounted only when `APP_ENV=development`; admin only).

use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Answer, DataMessage, Reply};
use crate::{error::AppError, state::AppState};

/// Counts of records that break the model's rules; each should be 0 (the `...Awaiting...` and
/// `...WithoutThumbnail` counts are work the workers have not finished yet).
#[utoipa::path(get, path = "/api/debug/check-data", tag = "internal",
    responses((status = 200, body = Answer<DataMessage<domain::onboarding::dashboard::views::IntegrityChecks>>)))]
pub async fn check_data(State(state): State<AppState>) -> Result<Reply, AppError> {
    Ok(Reply::data(
        domain::onboarding::dashboard::integrity(&state.pool).await?,
        "integrity checks",
    ))
}

/// Answers with the environment and the time: a check that the API and its auth are wired.
#[utoipa::path(get, path = "/api/debug/test", tag = "internal",
    responses((status = 200, body = Answer<DataMessage<DebugInfo>>)))]
pub async fn test() -> Reply {
    Reply::data(
        DebugInfo {
            environment: "development",
        },
        "debug endpoint is up",
    )
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct DebugInfo {
    /// Always `development`: the route exists only there.
    environment: &'static str,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(check_data))
        .routes(routes!(test))
}
