//! `/management/villas/{villaId}/documents` and `/management/documents/{id}`: a villa's documents,
//! uploaded as multipart forms through the same storage jobs, folders and checks as the
//! onboarding uploads.

use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    management::documents::{self, NewDocument},
    storage::DocumentType,
};
use jobs::{Job, documents::DeleteStoredFile};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Page, PageQuery, created};
use crate::{
    error::AppError,
    extract::{ApiMultipart, ApiPath, ApiQuery},
    state::AppState,
    uploads::{Form, accept_document},
};

/// The villa's documents, newest first. `storageStatus` is PENDING until the documents worker
/// has put the file in the document store, then STORED.
#[utoipa::path(get, operation_id = "management_documents_list", path = "/management/villas/{villaId}/documents", tag = "management",
    params(("villaId" = Uuid, Path), PageQuery),
    responses((status = 200, body = Page<domain::management::documents::DocumentView>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<Value>>, AppError> {
    let mut problems = Problems::new();
    let page = q.read(&mut problems);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let (data, total) = documents::page_of_villa(&mut conn, villa_id, page).await?;
    Ok(Page::new(data, page, total))
}

/// The multipart form of a document upload.
#[derive(ToSchema)]
#[allow(dead_code)] // documents the form
#[schema(rename_all = "camelCase")]
pub struct DocumentForm {
    /// The file (at most `UPLOAD_MAX_BYTES`, 25 MB by default); its name is sanitized.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// PROPERTY_CONTRACT, INSURANCE_CERTIFICATE, PROPERTY_TITLE, TAX_DOCUMENTS, UTILITY_BILLS,
    /// LICENSES_PERMITS, INVENTORY_LIST, EMERGENCY_CONTACTS, HOUSE_RULES, STAFF_CONTRACTS,
    /// MAINTENANCE_RECORDS or OTHER.
    document_type: String,
    /// At most 255 characters; the file name when not given.
    title: Option<String>,
}

/// Uploads a document (`multipart/form-data`: `file`, `documentType`, `title`). Answers 201 at
/// once with the record and its final `storagePath`; the documents worker stores the file.
#[utoipa::path(post, operation_id = "management_documents_upload", path = "/management/villas/{villaId}/documents", tag = "management",
    params(("villaId" = Uuid, Path)), request_body(content = DocumentForm, content_type = "multipart/form-data"),
    responses((status = 201, body = domain::management::documents::DocumentView)))]
pub async fn upload(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiMultipart(mut multipart): ApiMultipart,
) -> Result<(StatusCode, Json<Value>), AppError> {
    // An unknown villa is answered before its upload is read.
    domain::management::villas::ensure_exists(&mut *state.pool.acquire().await?, villa_id).await?;
    let max = state.api.upload_max_bytes;
    let mut problems = Problems::new();
    let form = Form::read(&mut multipart, &["file"], 1, max, &mut problems).await?;
    let document_type = match form.text("documentType") {
        Some(t) => problems.check(DocumentType::parse("documentType", &t.to_uppercase())),
        None => {
            problems.push("documentType", "required", "documentType is required");
            None
        }
    };
    let title = form.text("title").map(str::to_owned);
    if title.as_ref().is_some_and(|t| t.chars().count() > 255) {
        problems.push("title", "too_long", "title must be at most 255 characters");
    }
    let mut files = form.files.into_iter();
    let file = match files.next() {
        Some(part) => part.checked("file", max, &mut problems),
        None => {
            problems.push("file", "required", "file is required");
            None
        }
    };
    let (document_type, (file_name, content_type, content)) =
        problems.finish_with((|| Some((document_type?, file?)))())?;
    let mime_type = content_type
        .and_then(|m| m.parse::<mime::Mime>().ok())
        .map_or_else(
            || "application/octet-stream".to_owned(),
            |m| m.essence_str().to_owned(),
        );
    let doc = NewDocument {
        villa_id,
        document_type,
        title: title.or_else(|| Some(file_name.as_str().to_owned())),
        file_name,
        mime_type,
        content,
    };
    Ok(created(accept_document(&state, doc).await?))
}

/// Deletes the document; the documents worker removes its file from the document store.
#[utoipa::path(delete, operation_id = "management_documents_delete", path = "/management/documents/{id}", tag = "management",
    params(("id" = Uuid, Path)),
    responses((status = 204, description = "Deleted; the file leaves the store through the documents worker")))]
pub async fn delete(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<StatusCode, AppError> {
    let mut tx = state.pool.begin().await?;
    let path = documents::delete(&mut tx, id).await?;
    let job = DeleteStoredFile { path }.enqueue(&mut tx).await?;
    tx.commit().await?;
    state.queues.push_in_background(vec![job]);
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, upload))
        .routes(routes!(delete))
}
