//! `/reporting`: `{error: {code, message, retryAfter, fields}}`. The spec's shape is the first
//! three, and its message names every bad field; `fields` adds them one by one, so that a form
//! (the web console's export request) shows each problem by its field without reading the
//! message apart.

use serde_json::{Value, json};
use utoipa::ToSchema;

use super::management::FieldProblem;
use crate::error::ErrorInfo;

pub(super) fn body(info: &ErrorInfo) -> Value {
    let fields: Vec<Value> = info
        .fields
        .iter()
        .map(|f| json!({"field": f.field, "message": f.message}))
        .collect();
    json!({
        "error": {
            "code": info.code,
            "message": message(info),
            "retryAfter": info.retry_after_secs,
            "fields": fields,
        }
    })
}

/// The message, naming every bad field.
fn message(info: &ErrorInfo) -> String {
    if info.fields.len() < 2 {
        return info.message.clone();
    }
    let each: Vec<String> = info
        .fields
        .iter()
        .map(|f| format!("{}: {}", f.field, f.message))
        .collect();
    // `info.message` counts them all ("3 fields are invalid", or how many more than are listed).
    format!("{}: {}", info.message, each.join("; "))
}

#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase")]
pub struct ReportingErrorBody {
    code: String,
    message: String,
    /// Seconds to wait before trying again; `null` unless rate limited (429) or waiting
    /// for work under way (409 `EXPORT_NOT_READY`).
    retry_after: Option<u64>,
    /// Each bad field of a VALIDATION_ERROR (at most 20, as the message lists them); empty
    /// otherwise.
    fields: Vec<FieldProblem>,
}

/// `/reporting`.
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct ReportingError {
    error: ReportingErrorBody,
}
