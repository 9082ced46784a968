//! `/inventory`: `{error: {code, message, details: {fields?, ...}}}`.

use serde_json::{Value, json};
use utoipa::ToSchema;

use super::management::FieldProblem;
use crate::error::ErrorInfo;

pub(super) fn body(info: &ErrorInfo) -> Value {
    let mut details = json!({});
    if !info.fields.is_empty() {
        details["fields"] = json!(
            info.fields
                .iter()
                .map(|f| json!({"field": f.field, "message": f.message}))
                .collect::<Vec<_>>()
        );
    }
    json!({"error": {"code": info.code, "message": info.message, "details": details}})
}

#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase")]
pub struct InventoryErrorDetails {
    /// Every bad field of a VALIDATION_ERROR.
    fields: Option<Vec<FieldProblem>>,
    /// INSUFFICIENT_STOCK: the item that is short.
    item_id: Option<uuid::Uuid>,
    /// INSUFFICIENT_STOCK: what the item holds.
    available: Option<f64>,
    /// INSUFFICIENT_STOCK: what was asked for.
    requested: Option<f64>,
}

#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct InventoryErrorBody {
    code: String,
    message: String,
    /// More about the error (`fields`; `available` and `requested` for INSUFFICIENT_STOCK).
    details: InventoryErrorDetails,
}

/// `/inventory`.
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct InventoryError {
    error: InventoryErrorBody,
}
