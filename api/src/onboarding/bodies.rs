//! The request bodies and answers of the onboarding surface as the OpenAPI document describes
//! them. Record bodies and answers are computed from the field tables that check and render them
//! (`domain::record::json_schema`); the lists the wizard checks by hand describe themselves beside
//! their parsers (`domain::management::staff::team_member_schema`, ...). Every answer the tests
//! receive is validated against these (tests/src/openapi_check.rs).

use chrono::{DateTime, Utc};
use domain::{
    management::{
        documents::DocumentView,
        photos::PhotoView,
        staff::{self, TeamMemberView},
    },
    onboarding::{
        Progress,
        facilities::{self, FacilityView},
        records::{self, BANK_FIELDS, CONTRACT_FIELDS, OWNER_FIELDS, VILLA_FIELDS},
        schemas,
    },
    record::{SchemaUse, json_schema, with_members},
};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::computed_schema;

/// The step data a body may carry; `{}` for the steps that store nothing of their own.
pub fn step_data_schema(step: domain::onboarding::Step) -> Value {
    use domain::onboarding::Step;
    match step {
        Step::BasicInfo => json_schema(VILLA_FIELDS, SchemaUse::Patch),
        Step::OwnerDetails => json_schema(OWNER_FIELDS, SchemaUse::Patch),
        Step::ContractDetails => json_schema(CONTRACT_FIELDS, SchemaUse::Patch),
        Step::BankDetails => json_schema(BANK_FIELDS, SchemaUse::Patch),
        Step::OtaCredentials => list_body("credentials", records::ota_credential_schema(), 50),
        Step::StaffConfiguration => list_body("staff", staff::team_member_schema(), 200),
        Step::Facilities => list_body("facilities", facilities::checklist_item_schema(), 1000),
        Step::Documents | Step::Photos | Step::Review => json!({
            "type": "object",
            "additionalProperties": true,
            "description": "Nothing of its own to store: any members are ignored.",
        }),
    }
}

/// `{<name>: [item]}`: the list replaces the stored one; left out, the stored list stays.
fn list_body(name: &str, item: Value, max: usize) -> Value {
    json!({
        "type": "object",
        "properties": {name: {"type": "array", "items": item, "maxItems": max,
            "description": "Replaces the villa's whole list; left out, the stored list is kept."}},
    })
}

/// `schema` with a required `villaId`: the legacy routes carry the villa in the body.
fn with_villa_id(schema: Value) -> Value {
    with_members(
        schema,
        json!({"villaId": {"type": "string", "format": "uuid"}}),
    )
}

computed_schema!(
    /// A villa to create: the spec's required fields and any optional ones.
    VillaCreate => json_schema(VILLA_FIELDS, SchemaUse::Create)
);
computed_schema!(
    /// Step 1: any villa fields; left out keeps the value, a required field cannot be emptied.
    VillaPatch => json_schema(VILLA_FIELDS, SchemaUse::Patch)
);
computed_schema!(
    /// Step 2: the owner's fields; `null` or `""` clears one.
    OwnerPatch => json_schema(OWNER_FIELDS, SchemaUse::Patch)
);
computed_schema!(
    /// Step 3: contractual details (contractEndDate not before contractStartDate).
    ContractPatch => json_schema(CONTRACT_FIELDS, SchemaUse::Patch)
);
computed_schema!(
    /// Step 4: bank details; the account number and IBAN are encrypted at rest.
    BankPatch => json_schema(BANK_FIELDS, SchemaUse::Patch)
);
computed_schema!(
    /// Step 5: `{credentials: [...]}` replaces every OTA credential of the villa.
    OtaCredentialsBody => step_data_schema(domain::onboarding::Step::OtaCredentials)
);
computed_schema!(
    /// Step 7: `{staff: [...]}` becomes the villa's team.
    TeamBody => step_data_schema(domain::onboarding::Step::StaffConfiguration)
);
computed_schema!(
    /// Step 8: `{facilities: [...]}` becomes the villa's checklist.
    ChecklistBody => step_data_schema(domain::onboarding::Step::Facilities)
);
computed_schema!(
    /// Steps 6, 9 and 10 store nothing of their own: any object (may be empty).
    NoStepData => step_data_schema(domain::onboarding::Step::Review)
);
computed_schema!(
    /// Steps 1 to 5 at once; each member optional, at least one sent.
    Steps1To5Body => json!({
        "type": "object",
        "minProperties": 1,
        "properties": {
            "villaInfo": json_schema(VILLA_FIELDS, SchemaUse::Patch),
            "ownerDetails": json_schema(OWNER_FIELDS, SchemaUse::Patch),
            "contractualDetails": json_schema(CONTRACT_FIELDS, SchemaUse::Patch),
            "bankDetails": json_schema(BANK_FIELDS, SchemaUse::Patch),
            "otaCredentials": step_data_schema(domain::onboarding::Step::OtaCredentials),
        },
    })
);
computed_schema!(
    /// A step's data (as its `save-step-N` body) and whether to mark it completed (absent:
    /// its status is left as is).
    GenericStepBody => json!({
        "type": "object",
        "properties": {
            "data": {"type": ["object", "null"], "description": "The step's data, as its save-step-N body (step 8's facility photos in base64: the body may be up to BODY_LIMIT_BYTES)."},
            "completed": {"type": ["boolean", "null"]},
        },
    })
);
computed_schema!(
    /// Autosave: a step number and whatever of its data is filled in.
    AutosaveBody => json!({
        "type": "object",
        "required": ["step"],
        "properties": {
            "step": {"type": "integer", "minimum": 1, "maximum": 10},
            "data": {"type": ["object", "null"], "description": "The step's data, as its save-step-N body (step 8's facility photos in base64: the body may be up to BODY_LIMIT_BYTES)."},
        },
    })
);
computed_schema!(
    /// Completion: both confirmations must be true.
    CompleteBody => completion_schema()
);
computed_schema!(
    /// Legacy completion: the villa in the body.
    FinalizeBody => with_villa_id(completion_schema())
);
computed_schema!(
    /// Legacy step 1 save: the villa and its fields.
    LegacyVillaBody => with_villa_id(step_data_schema(domain::onboarding::Step::BasicInfo))
);
computed_schema!(
    /// Legacy step 7 save: the villa and its team.
    LegacyTeamBody => with_villa_id(step_data_schema(domain::onboarding::Step::StaffConfiguration))
);
computed_schema!(
    /// Legacy step 8 save: the villa and its checklist.
    LegacyChecklistBody => with_villa_id(step_data_schema(domain::onboarding::Step::Facilities))
);
computed_schema!(
    /// The villa's owner: `villaId` and the owner fields of step 2.
    OwnerUpsertBody => with_villa_id(json_schema(OWNER_FIELDS, SchemaUse::Patch))
);
computed_schema!(
    /// A document, its content in base64.
    DocumentUploadBody => json!({
        "type": "object",
        "required": ["villaId", "documentType", "fileName", "fileContent"],
        "properties": {
            "villaId": {"type": "string", "format": "uuid"},
            "documentType": {"type": "string", "enum": domain::storage::DocumentType::ALL.map(|t| t.as_str())},
            "fileName": file_name_schema(),
            "fileContent": file_content_schema(),
            "fileSize": {"type": ["integer", "null"], "minimum": 1, "description": "When sent, must equal the decoded size."},
            "mimeType": {"type": ["string", "null"], "pattern": "^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+", "maxLength": 255},
            "title": {"type": ["string", "null"], "description": "Cut to 255 characters."},
        },
    })
);
computed_schema!(
    /// A photo, its content in base64 (a JPEG, PNG, WebP or GIF; type and size are read from
    /// the image).
    PhotoUploadBody => json!({
        "type": "object",
        "required": ["villaId", "category", "fileName", "fileContent"],
        "properties": {
            "villaId": {"type": "string", "format": "uuid"},
            "category": {"type": "string", "enum": domain::storage::PhotoCategory::ALL.map(|c| c.request_name())},
            "subfolder": {"type": ["string", "null"], "description": "The bedroom's folder: required for `bedrooms`, refused otherwise."},
            "fileName": file_name_schema(),
            "fileContent": file_content_schema(),
            "caption": {"type": ["string", "null"], "maxLength": 500},
            "altText": {"type": ["string", "null"], "maxLength": 500},
            "isMain": {"type": ["boolean", "null"]},
            "fileSize": {"type": ["integer", "null"], "minimum": 1, "description": "When sent, must equal the decoded size."},
            "mimeType": {"type": ["string", "null"], "description": "Not trusted: the type is read from the image."},
            "width": {"type": ["integer", "null"], "minimum": 0, "description": "Not trusted: read from the image."},
            "height": {"type": ["integer", "null"], "minimum": 0, "description": "Not trusted: read from the image."},
        },
    })
);

fn completion_schema() -> Value {
    json!({
        "type": "object",
        "required": ["agreedToTerms", "dataAccuracyConfirmed"],
        "properties": {
            "agreedToTerms": {"type": "boolean", "enum": [true]},
            "dataAccuracyConfirmed": {"type": "boolean", "enum": [true]},
            "reviewNotes": {"type": ["string", "null"], "maxLength": 5000},
            "submissionNotes": {"type": ["string", "null"], "maxLength": 5000},
        },
    })
}

fn file_name_schema() -> Value {
    json!({"type": "string", "minLength": 1, "pattern": "[A-Za-z0-9]",
        "description": "Sanitized: letters, digits, `-`, `_` and `.` are kept, anything else becomes `-`."})
}

fn file_content_schema() -> Value {
    json!({"type": "string", "minLength": 4, "contentEncoding": "base64",
        "description": "Base64, optionally behind a `data:<type>;base64,` prefix; at most UPLOAD_MAX_BYTES decoded."})
}

computed_schema!(
    /// A villa as this surface shows it.
    OnboardingVilla => schemas::villa()
);
computed_schema!(
    /// An owner as this surface shows it.
    OnboardingOwner => schemas::owner()
);
computed_schema!(
    /// Contractual details.
    ContractDetails => schemas::contract()
);
computed_schema!(
    /// Bank details, account number and IBAN masked.
    BankDetails => schemas::bank()
);

/// Everything the wizard stored for a villa.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents `domain::onboarding::villa_bundle`
pub struct VillaBundle {
    villa: OnboardingVilla,
    owner_details: Option<OnboardingOwner>,
    contractual_details: Option<ContractDetails>,
    bank_details: Option<BankDetails>,
    ota_credentials: Vec<records::OtaCredentialView>,
    documents: Vec<DocumentView>,
    staff: Vec<TeamMemberView>,
    facilities: Vec<FacilityView>,
    photos: Vec<PhotoView>,
    /// Null until the villa's onboarding has started.
    onboarding: Option<Progress>,
}

/// What a villa delete did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VillaDeleted {
    pub id: Uuid,
    /// The job removing its document-store folder; null when it never had one.
    pub folder_removal_job_id: Option<Uuid>,
}

/// `POST /api/onboarding/start`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    pub villa_id: Uuid,
    pub villa: OnboardingVillaValue,
    pub progress: Progress,
    pub message: &'static str,
}

/// A step save.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepSaved {
    pub villa_id: Uuid,
    #[schema(minimum = 1, maximum = 10)]
    pub step: u8,
    /// villaInfo, ownerDetails, ...
    pub step_name: &'static str,
    /// The fields (or list) the request set, as sent.
    pub saved_fields: Vec<String>,
    pub progress: Progress,
    pub message: String,
}

/// An autosave's answer: saved, or why not (with 200 either way).
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)] // documents the answer
#[serde(untagged)]
pub enum AutosaveAnswer {
    Saved(super::Answer<StepSaved>),
    Refused(AutosaveFailure),
}

/// One step of a combined save.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepFields {
    pub step: u8,
    pub step_name: &'static str,
    pub saved_fields: Vec<String>,
}

/// `save-steps-1-5`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepsSaved {
    pub villa_id: Uuid,
    pub steps: Vec<StepFields>,
    pub progress: Progress,
    pub message: String,
}

/// A failed autosave, answered with 200 (the onboarding spec: autosave never answers an error
/// status): the surface's error members with `success: false`.
#[derive(serde::Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // documents `error::auto_save_failure`
pub struct AutosaveFailure {
    /// Always false.
    success: bool,
    status_code: u16,
    status_message: String,
    message: String,
    data: crate::error::schema::OnboardingErrorData,
    timestamp: DateTime<Utc>,
}

/// `GET /api/onboarding/{villaId}/summary`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub progress: Progress,
    pub step_details: Vec<domain::onboarding::StepDetail>,
}

/// A completed onboarding.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Completed {
    pub villa_id: Uuid,
    /// COMPLETED.
    pub status: String,
    pub progress: Progress,
    pub completed_at: Option<DateTime<Utc>>,
    pub completed_by: Option<String>,
    pub message: &'static str,
}

/// The owner after `POST /api/owners`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the answer
pub struct OwnerSaved {
    data: OnboardingOwner,
    /// The owner fields the request set.
    saved_fields: Vec<String>,
    message: String,
}

/// A villa as JSON (rendered from its row), described as [`OnboardingVilla`].
#[derive(Serialize)]
#[serde(transparent)]
pub struct OnboardingVillaValue(pub Value);

impl utoipa::PartialSchema for OnboardingVillaValue {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::Ref::from_schema_name("OnboardingVilla").into()
    }
}

impl ToSchema for OnboardingVillaValue {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema as _;
        schemas.push(("OnboardingVilla".into(), OnboardingVilla::schema()));
    }
}
