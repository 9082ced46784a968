//! `/management` and the platform's routes (`/admin`, health): `{error: {code, message, details}}`,
//! `details` one item per bad field.

use axum::http::StatusCode;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::{error::ErrorInfo, surface::Surface};

/// The body; the management spec has one code for every invalid input (malformed JSON or
/// multipart, bad parameters, failed checks): VALIDATION_ERROR.
pub(super) fn body(surface: Surface, info: &ErrorInfo) -> Value {
    json!({
        "error": {
            "code": if surface == Surface::Management && info.status == StatusCode::BAD_REQUEST {
                "VALIDATION_ERROR"
            } else {
                info.code
            },
            "message": info.message,
            "details": info.fields.iter().map(|f| json!({"field": f.field, "message": f.message})).collect::<Vec<_>>(),
        }
    })
}

/// One bad field.
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)] // documents the body
pub struct FieldProblem {
    /// The field as sent (`ownerDetails.email`, `credentials[1].listingUrl`).
    field: String,
    message: String,
}

#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct ManagementErrorBody {
    /// VALIDATION_ERROR for every 400; UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, ...
    code: String,
    message: String,
    /// One item per bad field (empty for other errors).
    details: Vec<FieldProblem>,
}

/// `/management` and the platform's routes (`/admin`, health).
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct ManagementError {
    error: ManagementErrorBody,
}
