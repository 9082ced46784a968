//! What Graph answers: the stored item, JSON bodies, and its errors in its own words.

use reqwest::Response;
use serde_json::Value;

use super::{MAX_REASON, OP_PUT, backend};
use crate::remote::describe;
use crate::storage::{StorageError, StoragePath, StoredObject};

/// The item a successful upload answers, as the store's identifiers.
pub(super) async fn stored(
    path: &StoragePath,
    response: Response,
) -> Result<StoredObject, StorageError> {
    let item = read_json(OP_PUT, path, response).await?;
    stored_object(&item)
        .ok_or_else(|| backend(OP_PUT, path, "the answer names no item id".to_owned()))
}

fn stored_object(item: &Value) -> Option<StoredObject> {
    let file_id = item.get("id").and_then(Value::as_str)?.to_owned();
    let url = item
        .get("webUrl")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let etag = item.get("eTag").and_then(Value::as_str).map(str::to_owned);
    Some(StoredObject { file_id, url, etag })
}

pub(super) async fn read_json(
    op: &'static str,
    path: &StoragePath,
    response: Response,
) -> Result<Value, StorageError> {
    let body = response
        .bytes()
        .await
        .map_err(|e| backend(op, path, describe(e)))?;
    serde_json::from_slice(&body)
        .map_err(|_| backend(op, path, "the answer is not JSON".to_owned()))
}

/// An answer the operation cannot use, as an error with Graph's own words.
pub(super) async fn refused(
    op: &'static str,
    path: &StoragePath,
    response: Response,
) -> StorageError {
    let status = response.status();
    let body = response.bytes().await.unwrap_or_default();
    backend(op, path, format!("{status}: {}", failure_text(&body)))
}

/// Graph's error `code` (`{"error": {"code": ...}}`).
pub(super) fn error_code(body: &[u8]) -> Option<String> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    answer
        .pointer("/error/code")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// What an error answer says: Graph's `{"error": {"code", "message"}}`, Entra ID's
/// `{"error", "error_description"}` (its first line), else the start of the body.
pub(super) fn failure_text(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(answer) => match answer.get("error") {
            Some(Value::Object(error)) => {
                let code = error.get("code").and_then(Value::as_str).unwrap_or("error");
                let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                format!("{code}: {message}")
            }
            Some(Value::String(code)) => {
                let description = answer
                    .get("error_description")
                    .and_then(Value::as_str)
                    .and_then(|d| d.lines().next())
                    .unwrap_or("");
                format!("{code}: {description}")
            }
            _ => answer.to_string(),
        },
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.trim().trim_end_matches(':').trim();
    if text.is_empty() {
        "(no details)".to_owned()
    } else if text.chars().count() > MAX_REASON {
        let cut: String = text.chars().take(MAX_REASON).collect();
        format!("{cut}…")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn errors_keep_the_services_own_words() {
        let graph = br#"{"error":{"code":"nameAlreadyExists","message":"An item with the same name already exists under the parent","innerError":{"date":"2024-01-01T00:00:00"}}}"#;
        assert_eq!(error_code(graph).as_deref(), Some("nameAlreadyExists"));
        assert_eq!(
            failure_text(graph),
            "nameAlreadyExists: An item with the same name already exists under the parent"
        );
        let entra = br#"{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided.\r\nTrace ID: x","error_codes":[7000215]}"#;
        assert_eq!(
            failure_text(entra),
            "invalid_client: AADSTS7000215: Invalid client secret provided."
        );
        assert_eq!(error_code(entra), None);
        assert_eq!(failure_text(b""), "(no details)");
        assert_eq!(failure_text(b"<html>busy</html>"), "<html>busy</html>");
        assert!(failure_text("x".repeat(1000).as_bytes()).ends_with('…'));
    }

    #[test]
    fn items_answer_their_id_and_web_url() {
        let item = json!({
            "id": "01ABC",
            "name": "x.pdf",
            "webUrl": "https://contoso.sharepoint.com/x.pdf",
            "eTag": "\"{5A8E3F1C-0B6D-4C1A-9C3E-2F1D6B7A8C9D},2\"",
            "file": {},
        });
        assert_eq!(
            stored_object(&item),
            Some(StoredObject {
                file_id: "01ABC".to_owned(),
                url: "https://contoso.sharepoint.com/x.pdf".to_owned(),
                etag: Some("\"{5A8E3F1C-0B6D-4C1A-9C3E-2F1D6B7A8C9D},2\"".to_owned()),
            })
        );
        assert_eq!(stored_object(&json!({"name": "x.pdf"})), None);
    }
}
