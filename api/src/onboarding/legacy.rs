//! The legacy segment routes under `/api/onboarding/<segment>/...`, kept for older clients. They
//! are the wizard's handlers under older paths: the villa id travels in the body (`villaId`)
//! instead of the path, and the step's data sits beside it. `.../save` stores the data without
//! completing the step; `.../complete` stores what is sent and marks the step completed.

use axum::{extract::State, http::HeaderMap};
use domain::{Problems, onboarding::Step};
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Answer, DataMessage, Reply, bodies, documents, if_match, photos, steps, wizard};
use crate::extract::Object;
use crate::{
    auth::CurrentUser,
    computed_schema,
    error::AppError,
    extract::{ApiJson, ApiPath, UploadJson},
    state::AppState,
};

/// Saves `step` for the body's `villaId`; `complete` marks the step completed.
async fn segment(
    state: &AppState,
    user: &CurrentUser,
    headers: &HeaderMap,
    body: &Object,
    step: Step,
    complete: bool,
) -> Result<Reply, AppError> {
    let mut problems = Problems::new();
    let villa_id = documents::villa_id(body, &mut problems);
    let data = steps::parse(state, step, body, "", &mut problems);
    let villa_id = problems.finish_with(villa_id)?;
    let expected = if_match(headers, "progress", villa_id)?;
    steps::save_one(
        state,
        villa_id,
        expected,
        (step, data),
        complete.then_some(true),
        &user.subject,
        if complete {
            "step completed"
        } else {
            "step saved"
        },
    )
    .await
}

computed_schema!(
    /// `{villaId}`: the legacy completion of a step that stores nothing of its own (documents,
    /// photos), as `segment` reads it: the villa (`documents::villa_id`); any other member
    /// is ignored.
    LegacyStepComplete => json!({
        "type": "object",
        "required": ["villaId"],
        "properties": {"villaId": {"type": "string", "format": "uuid"}},
        "additionalProperties": true,
    })
);

/// One route per segment; `$extractor` is `UploadJson` for the facilities (photos in base64),
/// `ApiJson` (1 MiB) for the others.
macro_rules! segment_route {
    ($name:ident, $path:literal, $step:expr, $complete:literal, $body:ty, $extractor:ident, $doc:literal) => {
        #[doc = $doc]
        #[utoipa::path(post, path = $path, tag = "onboarding-legacy", request_body(content = $body, description = $doc),
            responses((status = 200, body = Answer<bodies::StepSaved>, description = "As the wizard's step saves"),
                (status = 404, description = "No such villa"),
                (status = 412, description = "`If-Match` names an older version of the onboarding")))]
        pub async fn $name(
            State(state): State<AppState>,
            user: CurrentUser,
            headers: HeaderMap,
            $extractor(body): $extractor<Object>,
        ) -> Result<Reply, AppError> {
            segment(&state, &user, &headers, &body, $step, $complete).await
        }
    };
}

segment_route!(
    basic_info_save,
    "/api/onboarding/basic-info/save",
    Step::BasicInfo,
    false,
    bodies::LegacyVillaBody,
    ApiJson,
    "`{villaId, ...villa fields}`: saves villa information (step 1) without completing it."
);
segment_route!(
    basic_info_complete,
    "/api/onboarding/basic-info/complete",
    Step::BasicInfo,
    true,
    bodies::LegacyVillaBody,
    ApiJson,
    "`{villaId, ...villa fields}`: saves villa information and completes step 1."
);
segment_route!(
    documents_complete,
    "/api/onboarding/documents/complete",
    Step::Documents,
    true,
    LegacyStepComplete,
    ApiJson,
    "`{villaId}`: completes step 6 (documents)."
);
segment_route!(
    facilities_save,
    "/api/onboarding/facilities/save",
    Step::Facilities,
    false,
    bodies::LegacyChecklistBody,
    UploadJson,
    "`{villaId, facilities: [...]}`: saves the facilities checklist (step 8) without completing it."
);
segment_route!(
    facilities_complete,
    "/api/onboarding/facilities/complete",
    Step::Facilities,
    true,
    bodies::LegacyChecklistBody,
    UploadJson,
    "`{villaId, facilities?: [...]}`: saves the checklist if sent and completes step 8."
);
segment_route!(
    photos_complete,
    "/api/onboarding/photos/complete",
    Step::Photos,
    true,
    LegacyStepComplete,
    ApiJson,
    "`{villaId}`: completes step 9 (photos)."
);
segment_route!(
    staff_save,
    "/api/onboarding/staff/save",
    Step::StaffConfiguration,
    false,
    bodies::LegacyTeamBody,
    ApiJson,
    "`{villaId, staff: [...]}`: saves the villa's team (step 7) without completing it."
);
segment_route!(
    staff_complete,
    "/api/onboarding/staff/complete",
    Step::StaffConfiguration,
    true,
    bodies::LegacyTeamBody,
    ApiJson,
    "`{villaId, staff?: [...]}`: saves the team if sent and completes step 7."
);

/// As `POST /api/onboarding/start`.
#[utoipa::path(post, path = "/api/onboarding/basic-info/start", tag = "onboarding-legacy", request_body = bodies::VillaCreate,
    responses((status = 201, body = Answer<bodies::Started>, description = "With the progress `ETag`")))]
pub async fn basic_info_start(
    State(state): State<AppState>,
    body: ApiJson<Object>,
) -> Result<Reply, AppError> {
    wizard::start(State(state), body).await
}

/// As `POST /api/documents/upload`.
#[utoipa::path(post, path = "/api/onboarding/documents/upload", tag = "onboarding-legacy", request_body = bodies::DocumentUploadBody,
    responses((status = 201, body = Answer<DataMessage<domain::management::documents::DocumentView>>), (status = 404, description = "No such villa")))]
pub async fn documents_upload(
    State(state): State<AppState>,
    UploadJson(body): UploadJson<Object>,
) -> Result<Reply, AppError> {
    documents::upload_document(&state, body).await
}

/// As `POST /api/photos/upload`.
#[utoipa::path(post, path = "/api/onboarding/photos/upload", tag = "onboarding-legacy", request_body = bodies::PhotoUploadBody,
    responses((status = 201, body = Answer<DataMessage<domain::management::photos::PhotoView>>), (status = 404, description = "No such villa")))]
pub async fn photos_upload(
    State(state): State<AppState>,
    UploadJson(body): UploadJson<Object>,
) -> Result<Reply, AppError> {
    photos::upload_photo(&state, body).await
}

/// `{villaId, agreedToTerms, dataAccuracyConfirmed, reviewNotes?, submissionNotes?}`: as
/// `POST /api/onboarding/:villaId/complete`.
#[utoipa::path(post, path = "/api/onboarding/finalize", tag = "onboarding-legacy", request_body = bodies::FinalizeBody,
    responses((status = 200, body = Answer<bodies::Completed>, description = "As POST /api/onboarding/{villaId}/complete"),
        (status = 400, description = "Terms not agreed, or steps missing (`data.missingSteps`)"),
        (status = 404, description = "No such villa"),
        (status = 412, description = "`If-Match` names an older version of the onboarding")))]
pub async fn finalize(
    State(state): State<AppState>,
    user: CurrentUser,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Object>,
) -> Result<Reply, AppError> {
    let mut problems = Problems::new();
    let villa_id = documents::villa_id(&body, &mut problems);
    let villa_id = problems.finish_with(villa_id)?;
    wizard::complete_onboarding(&state, &user, &headers, villa_id, &body).await
}

/// As `GET /api/onboarding/:villaId/progress`.
#[utoipa::path(get, path = "/api/onboarding/progress/{villaId}", tag = "onboarding-legacy",
    params(("villaId" = Uuid, Path)), responses((status = 200, body = Answer<wizard::ProgressAnswer>, description = "With the progress `ETag`")))]
pub async fn progress(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    wizard::progress_reply(&state, villa_id).await
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(basic_info_start))
        .routes(routes!(basic_info_save))
        .routes(routes!(basic_info_complete))
        .routes(routes!(documents_upload))
        .routes(routes!(documents_complete))
        .routes(routes!(facilities_save))
        .routes(routes!(facilities_complete))
        .routes(routes!(photos_upload))
        .routes(routes!(photos_complete))
        .routes(routes!(staff_save))
        .routes(routes!(staff_complete))
        .routes(routes!(finalize))
        .routes(routes!(progress))
}

#[cfg(test)]
mod tests {
    /// The step completions without data carry the villa in the body: the description declares
    /// it (a required uuid), so a generated client can send it.
    #[test]
    fn step_completions_declare_the_villa() {
        let doc = serde_json::to_value(crate::openapi_document()).expect("the document serializes");
        for path in [
            "/api/onboarding/documents/complete",
            "/api/onboarding/photos/complete",
        ] {
            let body =
                &doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"];
            let name = body["$ref"]
                .as_str()
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .expect("a named body");
            let schema = &doc["components"]["schemas"][name];
            let villa_id = &schema["properties"]["villaId"];
            assert_eq!(villa_id["type"], "string", "{path}: {schema}");
            assert_eq!(villa_id["format"], "uuid", "{path}: {schema}");
            let required = schema["required"].as_array().expect("required members");
            assert!(
                required.iter().any(|m| m.as_str() == Some("villaId")),
                "{path}: {schema}"
            );
        }
    }
}
