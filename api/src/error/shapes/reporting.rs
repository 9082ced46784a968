//! `/reporting`: `{error: {code, message, retryAfter}}`, no list of fields: the message names
//! every bad field.

use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::error::ErrorInfo;

pub(super) fn body(info: &ErrorInfo) -> Value {
    json!({
        "error": {"code": info.code, "message": message(info), "retryAfter": info.retry_after_secs}
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
}

/// `/reporting`.
#[derive(serde::Serialize, ToSchema)]
#[allow(dead_code)]
pub struct ReportingError {
    error: ReportingErrorBody,
}
