//! `/api/onboarding/...`: the ten-step wizard. Start, progress, the per-step saves, the
//! combined save of steps 1 to 5, the generic step save, autosave, summary and completion.
//!
//! Every write checks `If-Match` against the progress `ETag` when it is sent (412 when stale) and
//! answers the new progress with its new `ETag`.

use axum::{
    Json,
    body::Bytes,
    extract::{Path, State},
    http::HeaderMap,
    response::{IntoResponse, Response},
};
use domain::{
    Problems,
    onboarding::{self, Step, progress, records},
    record::members,
};
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Answer, Reply, bodies, if_match, steps};
use crate::extract::Object;
use crate::{
    auth::CurrentUser,
    error::{AppError, auto_save_failure},
    extract::{ApiJson, ApiPath, UploadJson, parse_json},
    state::AppState,
};

/// Creates the villa (DRAFT) and its onboarding (IN_PROGRESS, 0 %, step 1). The body is the villa
/// create fields, all of the spec's required ones required; every bad field is listed.
#[utoipa::path(post, path = "/api/onboarding/start", tag = "onboarding",
    request_body = bodies::VillaCreate,
    responses((status = 201, body = Answer<bodies::Started>, description = "With the progress `ETag`"),
        (status = 400, description = "Invalid fields, or the villa code exists")))]
pub async fn start(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Reply, AppError> {
    let (villa, progress) = start_onboarding(&state, &body).await?;
    let etag = progress.etag();
    Ok(Reply::of(bodies::Started {
        villa_id: progress.villa_id,
        villa: bodies::OnboardingVillaValue(villa),
        progress,
        message: "onboarding started",
    })
    .etag(etag)
    .created())
}

/// Creates a villa and its onboarding from villa create fields (also the legacy
/// `basic-info/start`).
pub async fn start_onboarding(
    state: &AppState,
    body: &Object,
) -> Result<(Value, progress::Progress), AppError> {
    let mut problems = Problems::new();
    let patch = records::parse_villa(body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = records::create_villa(&mut tx, &patch).await?;
    progress::start(&mut tx, id).await?;
    let villa = onboarding::villa(&mut tx, id).await?;
    let progress = progress::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok((villa, progress))
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ProgressAnswer {
    progress: progress::Progress,
}

/// The villa's onboarding progress, with its `ETag`. A villa created outside the wizard shows
/// NOT_STARTED at 0 % until its first step is saved.
#[utoipa::path(get, path = "/api/onboarding/{villaId}/progress", tag = "onboarding",
    params(("villaId" = Uuid, Path)),
    responses((status = 200, body = super::Answer<ProgressAnswer>, description = "With the progress `ETag`"), (status = 404, description = "No such villa")))]
pub async fn get_progress(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    progress_reply(&state, villa_id).await
}

pub async fn progress_reply(state: &AppState, villa_id: Uuid) -> Result<Reply, AppError> {
    let p = progress::get_pooled(&state.pool, villa_id).await?;
    Ok(Reply::new(json!({"progress": p})).etag(p.etag()))
}

/// Saves one step's data and marks the step completed. Shared by the ten `save-step-N` routes.
async fn save_step(
    state: &AppState,
    user: &CurrentUser,
    headers: &HeaderMap,
    villa_id: Uuid,
    step: Step,
    body: &Object,
) -> Result<Reply, AppError> {
    let expected = if_match(headers, "progress", villa_id)?;
    let mut problems = Problems::new();
    let data = steps::parse(state, step, body, "", &mut problems);
    problems.finish()?;
    steps::save_one(
        state,
        villa_id,
        expected,
        (step, data),
        Some(true),
        &user.subject,
        &format!("step {} ({}) saved", step.number(), step.title()),
    )
    .await
}

/// One `save-step-N` route: its handler and OpenAPI description.
/// One route per step; `$extractor` is `UploadJson` for the step whose data carries files in
/// base64 (step 8's facility photos), `ApiJson` (1 MiB) for the others.
macro_rules! save_step_route {
    ($name:ident, $path:literal, $step:expr, $body:ty, $extractor:ident, $doc:literal) => {
        #[doc = $doc]
        #[utoipa::path(post, path = $path, tag = "onboarding", params(("villaId" = Uuid, Path)),
            request_body(content = $body, description = $doc),
            responses((status = 200, body = Answer<bodies::StepSaved>, description = "With the new progress `ETag`"),
                (status = 400, description = "One `data.errors` item per bad field"),
                (status = 404, description = "No such villa"),
                (status = 412, description = "`If-Match` names an older version of the onboarding")))]
        pub async fn $name(
            State(state): State<AppState>,
            user: CurrentUser,
            headers: HeaderMap,
            ApiPath(villa_id): ApiPath<Uuid>,
            $extractor(body): $extractor<Object>,
        ) -> Result<Reply, AppError> {
            save_step(&state, &user, &headers, villa_id, $step, &body).await
        }
    };
}

save_step_route!(
    save_step_1,
    "/api/onboarding/{villaId}/save-step-1",
    Step::BasicInfo,
    bodies::VillaPatch,
    ApiJson,
    "Step 1, villa information: any villa fields (villaCode, villaName, address, city, country, bedrooms, bathrooms, maxGuests, propertyType, villaStyle, description, postalCode, latitude, longitude, landAreaSqm, livingAreaSqm, yearBuilt, checkInTime, checkOutTime; the form names name, code, type, style, guests, zipCode are mapped). Fields left out keep their value; a required field cannot be emptied. Sets villaInfoCompleted."
);
save_step_route!(
    save_step_2,
    "/api/onboarding/{villaId}/save-step-2",
    Step::OwnerDetails,
    bodies::OwnerPatch,
    ApiJson,
    "Step 2, owner details: ownerType (INDIVIDUAL, COMPANY; INDIVIDUAL when first created), firstName, lastName, email, phone (international format), alternativePhone, nationality, passportNumber, taxId, companyName, registrationNumber, contactPerson, companyTaxId, address, city, country, postalCode, preferredLanguage, communicationPreference (EMAIL, PHONE, WHATSAPP, SMS), notes. Upserts the villa's owner."
);
save_step_route!(
    save_step_3,
    "/api/onboarding/{villaId}/save-step-3",
    Step::ContractDetails,
    bodies::ContractPatch,
    ApiJson,
    "Step 3, contractual details: contractType (EXCLUSIVE, NON_EXCLUSIVE, REVENUE_SHARE, FIXED_RENT), commissionRate (0 to 100), managementFee, feeCurrency (ISO 4217), contractStartDate and contractEndDate (YYYY-MM-DD, end not before start), paymentTerms, payoutDay (1-31), cancellationPolicy, minimumStayNights, insuranceProvider, insurancePolicyNumber, insuranceExpiryDate, specialTerms. Upserts the contract."
);
save_step_route!(
    save_step_4,
    "/api/onboarding/{villaId}/save-step-4",
    Step::BankDetails,
    bodies::BankPatch,
    ApiJson,
    "Step 4, bank details: accountHolderName, bankName, bankAddress, bankCountry, swiftCode, currency, accountNumber, iban (checksum verified), branchCode, notes. The account number and IBAN are encrypted at rest and only ever returned masked (****1234)."
);
save_step_route!(
    save_step_5,
    "/api/onboarding/{villaId}/save-step-5",
    Step::OtaCredentials,
    bodies::OtaCredentialsBody,
    ApiJson,
    "Step 5, OTA credentials: `{credentials: [{id?, platform, propertyId, username, password, listingUrl, isActive}]}` replaces all the villa's credentials. platform is one of AIRBNB, BOOKING_COM, EXPEDIA, VRBO, AGODA, TRIP_COM, GOOGLE, DIRECT, OTHER. Passwords are encrypted and never returned; an entry with the `id` of a stored credential and no password keeps its stored password."
);
save_step_route!(
    save_step_6,
    "/api/onboarding/{villaId}/save-step-6",
    Step::Documents,
    bodies::NoStepData,
    ApiJson,
    "Step 6, documents: sets documentsUploaded. Files are uploaded through POST /api/documents/upload. Body: any object (may be empty)."
);
save_step_route!(
    save_step_7,
    "/api/onboarding/{villaId}/save-step-7",
    Step::StaffConfiguration,
    bodies::TeamBody,
    ApiJson,
    "Step 7, staff: `{staff: [{id?, firstName (or name), lastName, role, phone, email, isPrimary}]}` becomes the villa's team (role one of HOUSEKEEPER, GARDENER, POOL_TECHNICIAN, MAINTENANCE_TECHNICIAN, VILLA_MANAGER, CHEF, SECURITY, DRIVER; at most one primary per role). Without `staff` the team is left as is. Sets staffConfigCompleted."
);
save_step_route!(
    save_step_8,
    "/api/onboarding/{villaId}/save-step-8",
    Step::Facilities,
    bodies::ChecklistBody,
    UploadJson,
    "Step 8, facilities checklist: `{facilities: [{id?, category, subcategory, itemName, isAvailable, quantity, condition, notes, photo (base64 image)}]}` becomes the villa's checklist (condition one of NEW, EXCELLENT, GOOD, FAIR, POOR, DAMAGED); an item with its stored `id` and no photo keeps its photo. Without `facilities` the checklist is left as is. Sets facilitiesCompleted."
);
save_step_route!(
    save_step_9,
    "/api/onboarding/{villaId}/save-step-9",
    Step::Photos,
    bodies::NoStepData,
    ApiJson,
    "Step 9, photos: sets photosUploaded. Photos are uploaded through POST /api/photos/upload. Body: any object (may be empty)."
);
save_step_route!(
    save_step_10,
    "/api/onboarding/{villaId}/save-step-10",
    Step::Review,
    bodies::NoStepData,
    ApiJson,
    "Step 10, review: sets reviewCompleted. Body: any object (may be empty)."
);

/// Saves steps 1 to 5 in one transaction, each marked completed: `{villaInfo: {...},
/// ownerDetails: {...}, contractualDetails: {...}, bankDetails: {...}, otaCredentials:
/// {credentials: [...]}}` (each member optional; a step left out is not touched). Errors name
/// the member (`ownerDetails.email`).
#[utoipa::path(post, path = "/api/onboarding/{villaId}/save-steps-1-5", tag = "onboarding",
    params(("villaId" = Uuid, Path)), request_body = bodies::Steps1To5Body,
    responses((status = 200, body = Answer<bodies::StepsSaved>, description = "With the new progress `ETag`"),
        (status = 412, description = "`If-Match` names an older version of the onboarding")))]
pub async fn save_steps_1_to_5(
    State(state): State<AppState>,
    user: CurrentUser,
    headers: HeaderMap,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Reply, AppError> {
    let expected = if_match(&headers, "progress", villa_id)?;
    let mut problems = Problems::new();
    let mut parsed = Vec::new();
    for step in &Step::ALL[..5] {
        let name = step.summary_name();
        match body.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Object(data)) => {
                parsed.push((
                    *step,
                    steps::parse(&state, *step, data, &format!("{name}."), &mut problems),
                ));
            }
            Some(_) => problems.push(name, "invalid_type", format!("{name} must be an object")),
        }
    }
    if parsed.is_empty() && problems.is_empty() {
        problems.push(
            "body",
            "required",
            "send at least one of villaInfo, ownerDetails, contractualDetails, bankDetails, otaCredentials",
        );
    }
    problems.finish()?;
    let (saved, p) = steps::save(
        &state,
        villa_id,
        expected,
        parsed,
        Some(true),
        &user.subject,
    )
    .await?;
    let etag = p.etag();
    Ok(Reply::of(bodies::StepsSaved {
        villa_id,
        message: format!("{} steps saved", saved.len()),
        steps: saved
            .into_iter()
            .map(|s| bodies::StepFields {
                step: s.step.number(),
                step_name: s.step.summary_name(),
                saved_fields: s.saved_fields,
            })
            .collect(),
        progress: p,
    })
    .etag(etag))
}

/// Generic step save: `{data: {...}, completed: boolean}`. `data` is the step's data as for
/// `save-step-N`; `completed` true marks the step completed, false marks it back in progress,
/// absent leaves its status.
#[utoipa::path(post, path = "/api/onboarding/{villaId}/step/{stepNumber}", tag = "onboarding",
    params(("villaId" = Uuid, Path), ("stepNumber" = u8, Path, minimum = 1, maximum = 10, description = "1 to 10")),
    request_body = bodies::GenericStepBody,
    responses((status = 200, body = Answer<bodies::StepSaved>, description = "With the new progress `ETag`"),
        (status = 412, description = "`If-Match` names an older version of the onboarding")))]
pub async fn save_generic_step(
    State(state): State<AppState>,
    user: CurrentUser,
    headers: HeaderMap,
    ApiPath((villa_id, step_number)): ApiPath<(Uuid, String)>,
    UploadJson(body): UploadJson<Object>,
) -> Result<Reply, AppError> {
    let expected = if_match(&headers, "progress", villa_id)?;
    let mut problems = Problems::new();
    let step = steps::step_number(
        Some(&Value::String(step_number)),
        "stepNumber",
        &mut problems,
    );
    let completed = match body.get("completed") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            problems.push(
                "completed",
                "invalid_type",
                "completed must be true or false",
            );
            None
        }
    };
    let parsed = steps::parse_data_member(&state, step, &body, &mut problems);
    let (step, data) = problems.finish_with(parsed)?;
    steps::save_one(
        &state,
        villa_id,
        expected,
        (step, data),
        completed,
        &user.subject,
        "step saved",
    )
    .await
}

/// Autosave of partial step data: `{step: 1-10, data: {...}}`. Saves what is valid of steps 1
/// to 5, 7 and 8 without marking the step completed; steps 6, 9 and 10 have no data of their
/// own (nothing is saved, `savedFields` is empty). Never answers an error status: any failure,
/// a stale `If-Match` included, is `{success: false, message, data: {code, errors}}` with 200.
#[utoipa::path(post, path = "/api/onboarding/{villaId}/autosave", tag = "onboarding",
    params(("villaId" = Uuid, Path)), request_body = bodies::AutosaveBody,
    responses((status = 200, body = bodies::AutosaveAnswer, description = "Saved (`success: true`, with the new progress `ETag`), or why not (`success: false`): never an error status")))]
pub async fn autosave(
    State(state): State<AppState>,
    user: CurrentUser,
    headers: HeaderMap,
    Path(villa_id): Path<String>,
    body: Bytes,
) -> Response {
    // Everything is parsed here rather than by extractors, so that no failure escapes as an
    // error status, whether or not the client sent X-Auto-Save.
    match try_autosave(&state, &user, &headers, &villa_id, &body).await {
        Ok(reply) => reply.into_response(),
        Err(e) => {
            if let AppError::Internal(err) = &e {
                tracing::error!(error = format!("{err:#}"), "autosave failed");
            }
            Json(auto_save_failure(&e.info())).into_response()
        }
    }
}

async fn try_autosave(
    state: &AppState,
    user: &CurrentUser,
    headers: &HeaderMap,
    villa_id: &str,
    body: &[u8],
) -> Result<Reply, AppError> {
    let villa_id: Uuid = villa_id
        .parse()
        .map_err(|_| AppError::invalid("villaId", "invalid_format", "villaId must be a UUID"))?;
    let body: Object = parse_json(body)?;
    let expected = if_match(headers, "progress", villa_id)?;
    let mut problems = Problems::new();
    let step = steps::step_number(body.get("step"), "step", &mut problems);
    let parsed = steps::parse_data_member(state, step, &body, &mut problems);
    let (step, data) = problems.finish_with(parsed)?;
    steps::save_one(
        state,
        villa_id,
        expected,
        (step, data),
        None,
        &user.subject,
        "autosaved",
    )
    .await
}

/// The progress and, per step, its name, whether it is completed and whether it has data.
#[utoipa::path(get, path = "/api/onboarding/{villaId}/summary", tag = "onboarding",
    params(("villaId" = Uuid, Path)),
    responses((status = 200, body = Answer<bodies::Summary>, description = "With the progress `ETag`")))]
pub async fn summary(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    let mut conn = state.pool.acquire().await?;
    let (progress, step_details) = onboarding::summary(&mut conn, villa_id).await?;
    let etag = progress.etag();
    Ok(Reply::of(bodies::Summary {
        progress,
        step_details,
    })
    .etag(etag))
}

/// Completes the onboarding: every step must be completed (else 400 with `missingSteps`), and
/// `agreedToTerms` and `dataAccuracyConfirmed` must both be true (else 400 naming each). Sets the
/// progress COMPLETED, the villa APPROVED and active, and records who completed it and when.
/// Completing an onboarding that is already completed answers its completion again.
#[utoipa::path(post, path = "/api/onboarding/{villaId}/complete", tag = "onboarding",
    params(("villaId" = Uuid, Path)),
    request_body = bodies::CompleteBody,
    responses((status = 200, body = Answer<bodies::Completed>, description = "With the progress `ETag`"),
        (status = 400, description = "Terms not agreed, or steps missing (`data.missingSteps`)"),
        (status = 412, description = "`If-Match` names an older version of the onboarding")))]
pub async fn complete(
    State(state): State<AppState>,
    user: CurrentUser,
    headers: HeaderMap,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Reply, AppError> {
    complete_onboarding(&state, &user, &headers, villa_id, &body).await
}

/// Also the legacy `finalize`.
pub async fn complete_onboarding(
    state: &AppState,
    user: &CurrentUser,
    headers: &HeaderMap,
    villa_id: Uuid,
    body: &Object,
) -> Result<Reply, AppError> {
    let expected = if_match(headers, "progress", villa_id)?;
    let mut problems = Problems::new();
    for flag in ["agreedToTerms", "dataAccuracyConfirmed"] {
        match body.get(flag) {
            Some(Value::Bool(true)) => {}
            None | Some(Value::Null) => problems.push(
                flag,
                "required",
                format!("{flag} is required and must be true"),
            ),
            Some(Value::Bool(false)) => problems.push(
                flag,
                "must_be_true",
                format!("{flag} must be true to complete the onboarding"),
            ),
            Some(_) => problems.push(flag, "invalid_type", format!("{flag} must be true")),
        }
    }
    let review_notes = members::text(body, "reviewNotes", "", 5000, &mut problems);
    let submission_notes = members::text(body, "submissionNotes", "", 5000, &mut problems);
    problems.finish()?;

    let mut tx = state.pool.begin().await?;
    progress::begin_write(&mut tx, villa_id, expected).await?;
    let current = progress::get(&mut tx, villa_id).await?;
    if current.status != "COMPLETED" {
        let missing = current.missing_steps();
        if !missing.is_empty() {
            return Err(AppError::BadRequestWith {
                code: "ONBOARDING_INCOMPLETE",
                message: format!(
                    "the onboarding is {} % complete; complete every step first",
                    current.completion_percentage
                ),
                extra: json!({
                    "completionPercentage": current.completion_percentage,
                    "missingSteps": missing.iter().map(|s| json!({"step": s.number(), "name": s.summary_name(), "title": s.title()})).collect::<Vec<_>>(),
                }),
            });
        }
        let skipped = onboarding::skipped_fields(&mut tx, villa_id).await?;
        progress::complete(
            &mut tx,
            villa_id,
            &progress::Completion {
                review_notes,
                submission_notes,
                completed_by: user.subject.clone(),
                skipped_fields: skipped,
            },
        )
        .await?;
    }
    let p = progress::get(&mut tx, villa_id).await?;
    tx.commit().await?;
    let etag = p.etag();
    Ok(Reply::of(bodies::Completed {
        villa_id,
        status: p.status.clone(),
        completed_at: p.completed_at,
        completed_by: p.completed_by.clone(),
        progress: p,
        message: "onboarding completed; the villa is approved and active",
    })
    .etag(etag))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(start))
        .routes(routes!(get_progress))
        .routes(routes!(autosave))
        .routes(routes!(save_step_1))
        .routes(routes!(save_step_2))
        .routes(routes!(save_step_3))
        .routes(routes!(save_step_4))
        .routes(routes!(save_step_5))
        .routes(routes!(save_step_6))
        .routes(routes!(save_step_7))
        .routes(routes!(save_step_8))
        .routes(routes!(save_step_9))
        .routes(routes!(save_step_10))
        .routes(routes!(save_steps_1_to_5))
        .routes(routes!(save_generic_step))
        .routes(routes!(summary))
        .routes(routes!(complete))
}
