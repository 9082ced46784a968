//! `/maintenance/field-notes`: a technician's text, voice note or photo about a work order or an
//! asset. Files are checked by their bytes, answered at once, and put in the villa's
//! `Maintenance/Field-Notes/` folder by the documents worker; `fileUrl` serves them either way.

use crate::paging::PageQuery;
use axum::{
    Json,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use domain::{
    Problems,
    maintenance::{
        field_notes::{self, NewFieldNote, PHOTO_TYPES, TYPES},
        views,
    },
};
use jobs::documents::{CreateVillaTree, StoreFieldNote};
use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::id_filter;
use crate::{
    auth::CurrentUser,
    error::AppError,
    extract::{ApiMultipart, ApiPath, ApiQuery},
    files::{bytes_response, read_content},
    paging::{JsonPageAnswer, Page},
    state::AppState,
    uploads::Form,
};

/// A field note as multipart form fields.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the form; the handler reads it part by part
pub struct FieldNoteForm {
    /// TEXT (default), VOICE or PHOTO.
    #[schema(inline)]
    #[schema(rename = "type")]
    kind: Option<views::FieldNoteType>,
    /// Required for TEXT (at most 5000 characters).
    content: Option<String>,
    /// A work order, an asset, or both (of one villa); at least one.
    work_order_id: Option<Uuid>,
    asset_id: Option<Uuid>,
    /// Required for VOICE (mp3, m4a/aac, ogg, wav, webm) and PHOTO (JPEG, PNG, WebP), checked by
    /// content; at most `UPLOAD_MAX_BYTES`.
    #[schema(value_type = Option<String>, format = Binary)]
    file: Option<Vec<u8>>,
}

/// Records a note (201 at once): TEXT needs `content`; VOICE and PHOTO need a `file` of their
/// kind, told by its bytes, not its name. The villa is the work order's or the asset's (404
/// `WORK_ORDER_NOT_FOUND` / `ASSET_NOT_FOUND`).
#[utoipa::path(post, operation_id = "maintenance_field_notes_create", path = "/maintenance/field-notes", tag = "maintenance",
    request_body(content = FieldNoteForm, content_type = "multipart/form-data"),
    responses((status = 201, body = views::FieldNote),
        (status = 404, description = "No such work order or asset")))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiMultipart(mut multipart): ApiMultipart,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let max = state.api.upload_max_bytes;
    let mut problems = Problems::new();
    let form = Form::read(&mut multipart, &["file"], 1, max, &mut problems).await?;
    let kind = match form.text("type") {
        None => Some("TEXT"),
        Some(raw) => problems.closed("type", raw, TYPES),
    };
    let content = form.text("content").map(str::to_owned);
    if content.as_ref().is_some_and(|c| c.chars().count() > 5000) {
        problems.push(
            "content",
            "too_long",
            "content must be at most 5000 characters",
        );
    }
    let work_order_id = id_filter(&mut problems, "workOrderId", form.text("workOrderId"));
    let asset_id = id_filter(&mut problems, "assetId", form.text("assetId"));
    if form.text("workOrderId").is_none() && form.text("assetId").is_none() {
        problems.push(
            "workOrderId",
            "required",
            "workOrderId or assetId is required",
        );
    }
    let file = form
        .files
        .into_iter()
        .next()
        .and_then(|part| part.checked("file", max, &mut problems));
    let file = match (kind, file) {
        (Some("TEXT"), file) => {
            if content.is_none() {
                problems.push("content", "required", "content is required for a TEXT note");
            }
            if file.is_some() {
                problems.push("file", "unexpected", "a TEXT note has no file");
            }
            None
        }
        (Some(kind), None) => {
            problems.push("file", "required", format!("a {kind} note needs a file"));
            None
        }
        (Some(kind), Some((name, _, bytes))) => {
            let mime = if kind == "VOICE" {
                field_notes::audio_type(&bytes)
            } else {
                domain::media::inspect(&bytes)
                    .map(|i| i.mime)
                    .filter(|m| PHOTO_TYPES.contains(m))
            };
            match mime {
                Some(mime) => Some((name, mime, bytes)),
                None => {
                    problems.push(
                        "file",
                        "invalid_type",
                        if kind == "VOICE" {
                            "a VOICE note must be mp3, m4a/aac, ogg, wav or webm audio"
                        } else {
                            "a PHOTO note must be a JPEG, PNG or WebP image"
                        },
                    );
                    None
                }
            }
        }
        (None, _) => None,
    };
    let kind = problems.finish_with(kind)?;
    let note = NewFieldNote {
        kind,
        content,
        work_order_id,
        asset_id,
        file,
    };
    // Run again if Postgres broke a deadlock with an upload of the same new villa.
    let (view, jobs) = crate::error::retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        // Fixes the villa's folder before any job row (the one lock order of every upload).
        let id = field_notes::insert(&mut tx, &note, &user.subject).await?;
        let view = field_notes::get(&mut tx, id).await?;
        let mut jobs = jobs::JobBatch::default();
        if view["storagePath"].is_string() {
            let villa_id: Uuid = view["villaId"]
                .as_str()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| {
                    AppError::Internal(anyhow::anyhow!("field note {id} without a villa"))
                })?;
            jobs.add(&CreateVillaTree { villa_id })?;
            jobs.add(&StoreFieldNote { note_id: id })?;
        }
        let jobs = jobs.enqueue(&mut tx).await?;
        tx.commit().await?;
        Ok((view, jobs))
    })
    .await?;
    drop(note);
    state.queues.push_in_background(jobs);
    Ok((StatusCode::CREATED, Json(view)))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct FieldNoteQuery {
    #[param(value_type = Option<Uuid>)]
    work_order_id: Option<String>,
    #[param(value_type = Option<Uuid>)]
    asset_id: Option<String>,
}

/// Notes, newest first, of a work order and/or an asset.
#[utoipa::path(get, operation_id = "maintenance_field_notes_list", path = "/maintenance/field-notes", tag = "maintenance",
    params(PageQuery, FieldNoteQuery),
    responses((status = 200, body = Page<views::FieldNote>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<FieldNoteQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let work_order = id_filter(&mut problems, "workOrderId", q.work_order_id.as_deref());
    let asset = id_filter(&mut problems, "assetId", q.asset_id.as_deref());
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        field_notes::list(&mut conn, work_order, asset, page).await?,
        page,
    ))
}

/// A note's file (its `fileUrl`), whether or not the worker has stored it yet. 404 for a note
/// without a file.
#[utoipa::path(get, operation_id = "maintenance_field_notes_file", path = "/maintenance/field-notes/{id}/file", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, description = "The file, in its type",
        content(([u8] = "audio/*"), ([u8] = "image/*"))),
        (status = 503, description = "STORAGE_UNAVAILABLE: the document store (S3, SharePoint) failed or is throttling; `Retry-After` says when to try again")))]
pub async fn file(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    let content = field_notes::content(&state.pool, id)
        .await?
        .ok_or(AppError::NotFound("field note file"))?;
    let mime = content.mime_type.clone();
    let name = content.file_name.clone();
    let bytes = read_content(&state, content).await?;
    Ok(bytes_response(
        bytes,
        &mime,
        None,
        "private, max-age=300",
        Some(format!("inline; filename=\"{name}\"")),
    )
    .into_response())
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(file))
}
