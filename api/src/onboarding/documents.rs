//! `/api/documents`: base64 upload through the document-store jobs, the record, the bytes.

use axum::{
    extract::State,
    http::HeaderMap,
    response::{IntoResponse, Response},
};
use domain::{
    Problems,
    management::documents::{self, DocumentView, NewDocument},
    storage::{DocumentType, SafeName},
};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Answer, DataMessage, Reply, bodies};
use crate::extract::Object;
use crate::files::bytes_response;
use crate::files::not_modified;
use crate::files::read_content;
use crate::{
    error::AppError,
    extract::{ApiPath, UploadJson},
    state::AppState,
};

/// Reads a required or optional string member, recording a problem when it has another type.
pub fn text<'a>(
    body: &'a Object,
    key: &str,
    required: bool,
    problems: &mut Problems,
) -> Option<&'a str> {
    match body.get(key) {
        None | Some(Value::Null) => {
            if required {
                problems.push(key, "required", format!("{key} is required"));
            }
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            if required {
                problems.push(key, "required", format!("{key} is required"));
            }
            None
        }
        Some(Value::String(s)) => Some(s),
        Some(_) => {
            problems.push(key, "invalid_type", format!("{key} must be a string"));
            None
        }
    }
}

/// `villaId` of an upload body.
pub fn villa_id(body: &Object, problems: &mut Problems) -> Option<Uuid> {
    let raw = text(body, "villaId", true, problems)?;
    match raw.trim().parse() {
        Ok(id) => Some(id),
        Err(_) => {
            problems.push("villaId", "invalid_format", "villaId must be a UUID");
            None
        }
    }
}

/// `fileContent`: base64 that decodes, non-empty, within the limit; and `fileSize`, when sent,
/// equal to the decoded size.
pub fn file_content(body: &Object, max: usize, problems: &mut Problems) -> Option<Vec<u8>> {
    let raw = text(body, "fileContent", true, problems)?;
    // 4 base64 characters per 3 bytes: refuse before decoding what is obviously too large.
    if raw.len() / 4 * 3 > max + 3 {
        problems.push(
            "fileContent",
            "too_large",
            format!("the file must be at most {max} bytes"),
        );
        return None;
    }
    let Some(bytes) = domain::uploads::decode_base64(raw) else {
        problems.push(
            "fileContent",
            "invalid_format",
            "fileContent must be base64",
        );
        return None;
    };
    if bytes.is_empty() {
        problems.push("fileContent", "required", "the file is empty");
        return None;
    }
    if bytes.len() > max {
        problems.push(
            "fileContent",
            "too_large",
            format!("the file must be at most {max} bytes"),
        );
        return None;
    }
    match body.get("fileSize") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.as_u64() == Some(bytes.len() as u64) => {}
        Some(Value::Number(_)) => problems.push(
            "fileSize",
            "mismatch",
            format!(
                "fileSize does not match the decoded content ({} bytes)",
                bytes.len()
            ),
        ),
        Some(_) => problems.push(
            "fileSize",
            "invalid_type",
            "fileSize must be a number of bytes",
        ),
    }
    Some(bytes)
}

/// A MIME type as `type/subtype` (parameters allowed), or the default.
pub fn mime_type(body: &Object, default: &str, problems: &mut Problems) -> String {
    match text(body, "mimeType", false, problems) {
        None => default.to_owned(),
        Some(m) => match m.trim().parse::<mime::Mime>() {
            Ok(parsed) if m.len() <= 255 => parsed.essence_str().to_owned(),
            _ => {
                problems.push(
                    "mimeType",
                    "invalid_format",
                    "mimeType must look like type/subtype",
                );
                default.to_owned()
            }
        },
    }
}

pub fn file_name(body: &Object, problems: &mut Problems) -> Option<SafeName> {
    let raw = text(body, "fileName", true, problems)?;
    problems.check(SafeName::parse("fileName", raw))
}

/// Uploads a document: `{villaId, documentType, fileName, fileContent (base64), fileSize?,
/// mimeType?, title?}`. Checked at once (every bad field listed; the villa must exist), then the
/// bytes are stored in Postgres with the record and the upload is handed to the documents
/// worker; the answer comes at once with the final `storagePath`. `storageFileId` and
/// `storageUrl` are filled in when the worker has stored the file; `fileUrl` serves the bytes
/// either way. The first upload of a villa also creates its whole folder tree (once). The file
/// name is sanitized (letters, digits, `-`, `_`, `.` kept; anything else becomes `-`); a second
/// file of one name in one folder gets a suffix instead of replacing the first. Files are limited
/// to `UPLOAD_MAX_BYTES` (25 MB by default).
#[utoipa::path(post, operation_id = "api_documents_upload", path = "/api/documents/upload", tag = "onboarding",
    request_body = bodies::DocumentUploadBody,
    responses((status = 201, body = Answer<DataMessage<DocumentView>>),
        (status = 400, description = "One `data.errors` item per bad field"), (status = 404, description = "No such villa")))]
pub async fn upload(
    State(state): State<AppState>,
    UploadJson(body): UploadJson<Object>,
) -> Result<Reply, AppError> {
    upload_document(&state, body).await
}

/// Also the legacy `POST /api/onboarding/documents/upload`.
pub async fn upload_document(state: &AppState, body: Object) -> Result<Reply, AppError> {
    let mut problems = Problems::new();
    let villa_id = villa_id(&body, &mut problems);
    let document_type = text(&body, "documentType", true, &mut problems)
        .and_then(|t| problems.check(DocumentType::parse("documentType", t.trim())));
    let file_name = file_name(&body, &mut problems);
    let mime_type = mime_type(&body, "application/octet-stream", &mut problems);
    let title =
        text(&body, "title", false, &mut problems).map(|t| t.trim().chars().take(255).collect());
    let content = file_content(&body, state.api.upload_max_bytes, &mut problems);
    drop(body);
    let (villa_id, document_type, file_name, content) =
        problems.finish_with((|| Some((villa_id?, document_type?, file_name?, content?)))())?;
    let doc = NewDocument {
        villa_id,
        document_type,
        file_name,
        title,
        mime_type,
        content,
    };
    let view = crate::uploads::accept_document(state, doc).await?;
    Ok(Reply::data(view, "document accepted; it is being stored").created())
}

/// One document's record (with `storageStatus` PENDING until the worker has stored it).
#[utoipa::path(get, operation_id = "api_documents_get", path = "/api/documents/{id}", tag = "onboarding", params(("id" = Uuid, Path)),
    responses((status = 200, body = Answer<DataMessage<DocumentView>>)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    let mut conn = state.pool.acquire().await?;
    let view = documents::view(&mut conn, id)
        .await?
        .ok_or(AppError::NotFound("document"))?;
    Ok(Reply::data(view, "document"))
}

/// The document's bytes (its `fileUrl`), whether or not the worker has stored it yet.
#[utoipa::path(get, path = "/api/documents/{id}/file", tag = "onboarding", params(("id" = Uuid, Path)),
    responses((status = 200, description = "The file, as an attachment, in its own type", content_type = "*/*", body = [u8]),
        (status = 304, description = "Not modified (`If-None-Match`)"),
        (status = 503, description = "STORAGE_UNAVAILABLE: the document store (S3, SharePoint) failed or is throttling; `Retry-After` says when to try again")))]
pub async fn file(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    let content = documents::content(&state.pool, id)
        .await?
        .ok_or(AppError::NotFound("document"))?;
    let etag = format!("\"document-{id}\"");
    if let Some(res) = not_modified(&headers, &etag) {
        return Ok(res);
    }
    let disposition = format!("attachment; filename=\"{}\"", content.file_name);
    let mime = content.mime_type.clone();
    let bytes = read_content(&state, content).await?;
    Ok(bytes_response(
        bytes,
        &mime,
        Some(etag),
        "private, max-age=3600",
        Some(disposition),
    )
    .into_response())
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upload))
        .routes(routes!(get))
        .routes(routes!(file))
}
