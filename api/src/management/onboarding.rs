//! `/management/villas/{villaId}/onboarding`: the villa's onboarding record seen through its ten
//! step names. The same record as the wizard's `/api/onboarding/{villaId}/...`: a step set here is
//! what the wizard reports, and the reverse.

use axum::{Json, extract::State};
use domain::{
    Problems,
    onboarding::progress::{self, Overview, Step, StepStatus},
    record::members,
};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::Object,
    extract::{ApiJson, ApiPath},
    state::AppState,
};

/// `{overallStatus (NOT_STARTED, IN_PROGRESS, COMPLETED), completionPercentage, steps: [{step,
/// status}]}` with the ten steps in order (BASIC_INFO, OWNER_DETAILS, CONTRACT_DETAILS,
/// BANK_DETAILS, OTA_CREDENTIALS, DOCUMENTS, STAFF_CONFIGURATION, FACILITIES, PHOTOS, REVIEW).
#[utoipa::path(get, operation_id = "management_onboarding_get", path = "/management/villas/{villaId}/onboarding", tag = "management",
    params(("villaId" = Uuid, Path)),
    responses((status = 200, body = Overview), (status = 400), (status = 401), (status = 403), (status = 404)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Json<Overview>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(progress::overview(&mut conn, villa_id).await?))
}

/// Sets one step's status (`{status}`), starting the villa's onboarding if it had not started.
/// The steps of a completed onboarding no longer change (400). Answers the whole record.
#[utoipa::path(patch, operation_id = "management_onboarding_step_update", path = "/management/villas/{villaId}/onboarding/steps/{step}", tag = "management",
    params(("villaId" = Uuid, Path), ("step" = String, Path, description = "BASIC_INFO, OWNER_DETAILS, ... REVIEW")),
    request_body = StepBody,
    responses((status = 200, body = Overview), (status = 400), (status = 401), (status = 403), (status = 404)))]
pub async fn update_step(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath((villa_id, step)): ApiPath<(Uuid, String)>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Overview>, AppError> {
    let mut problems = Problems::new();
    let step = problems.check(Step::parse("step", &step));
    let before = problems.len();
    let status = match members::text(&body, "status", "", 20, &mut problems) {
        Some(s) => problems.check(StepStatus::parse("status", &s)),
        None => {
            // Absent, null or blank; a wrong type was recorded already.
            if problems.len() == before {
                problems.push("status", "required", "status is required");
            }
            None
        }
    };
    let (step, status) = problems.finish_with((|| Some((step?, status?)))())?;
    let overview = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        progress::set_step_status(&mut tx, villa_id, step, status, &user.subject).await?;
        let overview = progress::overview(&mut tx, villa_id).await?;
        tx.commit().await?;
        Ok(overview)
    })
    .await?;
    Ok(Json(overview))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get))
        .routes(routes!(update_step))
}

crate::computed_schema!(
    /// The step's new status.
    StepBody => serde_json::json!({
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"type": "string", "enum": domain::onboarding::progress::StepStatus::ALL.map(|s| s.as_str())}},
    })
);
