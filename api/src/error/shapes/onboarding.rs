//! `/api`: `{statusCode, statusMessage, data: {code, errors}}`.

use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::error::ErrorInfo;

pub(super) fn body(info: &ErrorInfo) -> Value {
    json!({
        "statusCode": info.status.as_u16(),
        "statusMessage": info.message,
        "data": {
            "code": info.code,
            "errors": info.fields.iter().map(|f| json!({"field": f.field, "message": f.message, "code": f.code})).collect::<Vec<_>>(),
        }
    })
}

#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct OnboardingFieldProblem {
    field: String,
    message: String,
    /// required, invalid_format, invalid_type, out_of_range, too_long, ...
    code: String,
}

#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase")]
pub struct OnboardingErrorData {
    /// VALIDATION_ERROR, MALFORMED_JSON, NOT_FOUND, PRECONDITION_FAILED, ONBOARDING_INCOMPLETE, ...
    code: String,
    errors: Vec<OnboardingFieldProblem>,
}

/// `/api`: `{statusCode, statusMessage, data: {code, errors}}`; `data` may carry more
/// (`missingSteps`, `completionPercentage` when an incomplete onboarding is completed).
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase")]
pub struct OnboardingError {
    status_code: u16,
    status_message: String,
    data: OnboardingErrorData,
}
