//! `/maintenance`: `{error: {code, message, statusCode, fields?}}`, a missing record's code naming
//! its entity (`WORK_ORDER_NOT_FOUND`).

use serde_json::{Value, json};
use utoipa::ToSchema;

use super::management::FieldProblem;
use crate::error::ErrorInfo;

pub(super) fn body(info: &ErrorInfo) -> Value {
    let code = match (info.code, info.entity) {
        ("NOT_FOUND", Some(entity)) => format!(
            "{}_NOT_FOUND",
            entity.to_uppercase().replace([' ', '-'], "_")
        ),
        (code, _) => code.to_owned(),
    };
    let mut b = json!({"error": {"code": code, "message": info.message, "statusCode": info.status.as_u16()}});
    if !info.fields.is_empty() {
        b["error"]["fields"] = json!(
            info.fields
                .iter()
                .map(|f| json!({"field": f.field, "message": f.message}))
                .collect::<Vec<_>>()
        );
    }
    b
}

#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceErrorBody {
    /// `<ENTITY>_NOT_FOUND` for a missing record (WORK_ORDER_NOT_FOUND, ...), VALIDATION_ERROR, ...
    code: String,
    message: String,
    status_code: u16,
    /// Every bad field of a VALIDATION_ERROR (and the field of a PHOTO_REQUIRED).
    fields: Option<Vec<FieldProblem>>,
    /// CHECKLIST_INCOMPLETE: the unanswered checklist items.
    items: Option<Vec<UnansweredItem>>,
}

/// A checklist item still to answer.
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct UnansweredItem {
    id: uuid::Uuid,
    text: String,
}

/// `/maintenance`.
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct MaintenanceError {
    error: MaintenanceErrorBody,
}
