//! `/api/photos/upload`, `/api/photos-enhanced`: base64 photo uploads (stored by the documents
//! worker, thumbnailed by the media worker), and the public photo and thumbnail bytes.

use axum::{
    extract::State,
    http::HeaderMap,
    response::{IntoResponse, Response},
};
use domain::{
    Problems,
    management::photos::{self, NewPhoto, PhotoView},
    media,
    record::members,
    storage::PhotoCategory,
};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    Answer, DataMessage, Reply, bodies,
    documents::{file_content, file_name, text, villa_id},
};
use crate::extract::Object;
use crate::files::{bytes_response, not_modified, read_content};
use crate::{
    error::AppError,
    extract::{ApiPath, UploadJson},
    state::AppState,
};

/// Public photo bytes never change under one id: cache them for good.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Uploads a photo: `{villaId, category, fileName, fileContent (base64), subfolder?, caption?,
/// altText?, isMain?, fileSize?, mimeType?, width?, height?}`. The bytes must decode as a JPEG,
/// PNG, WebP or GIF image; its type, width and height are read from the image (the declared
/// `mimeType`, `width` and `height` are not trusted). `category` is lowercase (`bedrooms`, ...);
/// `subfolder`, the bedroom's name, is required for `bedrooms` and refused for other
/// categories. Answers at once with the final `storagePath`
/// (`Villas/<villa>/Photos/<category folder>/[<bedroom>/]<file>`); the documents worker stores
/// the file, the media worker makes the thumbnail (`thumbnailUrl` is set once it exists).
#[utoipa::path(post, operation_id = "api_photos_upload", path = "/api/photos/upload", tag = "onboarding", request_body = bodies::PhotoUploadBody,
    responses((status = 201, body = Answer<DataMessage<PhotoView>>),
        (status = 400, description = "One `data.errors` item per bad field"), (status = 404, description = "No such villa")))]
pub async fn upload(
    State(state): State<AppState>,
    UploadJson(body): UploadJson<Object>,
) -> Result<Reply, AppError> {
    upload_photo(&state, body).await
}

/// The same upload as `POST /api/photos/upload` (the spec does not show this route's shape; it
/// is the enhanced photo service's upload, so it takes and answers the same).
#[utoipa::path(post, path = "/api/photos-enhanced", tag = "onboarding", request_body = bodies::PhotoUploadBody,
    responses((status = 201, body = Answer<DataMessage<PhotoView>>), (status = 404, description = "No such villa")))]
pub async fn upload_enhanced(
    State(state): State<AppState>,
    UploadJson(body): UploadJson<Object>,
) -> Result<Reply, AppError> {
    upload_photo(&state, body).await
}

/// Also the legacy `POST /api/onboarding/photos/upload`.
pub async fn upload_photo(state: &AppState, body: Object) -> Result<Reply, AppError> {
    let mut problems = Problems::new();
    let villa_id = villa_id(&body, &mut problems);
    let category = text(&body, "category", true, &mut problems)
        .and_then(|c| problems.check(PhotoCategory::parse("category", c)));
    let subfolder_raw = text(&body, "subfolder", false, &mut problems);
    let subfolder = PhotoCategory::parse_subfolder(category, subfolder_raw, &mut problems);
    let file_name = file_name(&body, &mut problems);
    let caption = members::text(&body, "caption", "", 500, &mut problems);
    let alt_text = members::text(&body, "altText", "", 500, &mut problems);
    let is_main = match body.get("isMain") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.push("isMain", "invalid_type", "isMain must be true or false");
            false
        }
    };
    for key in ["width", "height"] {
        if let Some(v) = body.get(key)
            && !(v.is_null() || v.as_u64().is_some())
        {
            problems.push(
                key,
                "invalid_type",
                format!("{key} must be a whole number of pixels"),
            );
        }
    }
    let content = file_content(&body, state.api.upload_max_bytes, &mut problems);
    drop(body);
    let info = content.as_deref().and_then(|bytes| {
        let info = media::inspect(bytes);
        if info.is_none() {
            problems.push(
                "fileContent",
                "invalid_image",
                "fileContent must be a JPEG, PNG, WebP or GIF image",
            );
        }
        info
    });
    let (villa_id, category, file_name, content, info) = problems.finish_with((|| {
        Some((villa_id?, category?, file_name?, content?, info?))
    })())?;
    let photo = NewPhoto {
        villa_id,
        category,
        subfolder,
        file_name,
        mime_type: info.mime,
        width: info.width,
        height: info.height,
        caption,
        alt_text,
        is_main,
        is_cover: false,
        content,
    };
    let view = crate::uploads::accept_photos(state, villa_id, vec![photo])
        .await?
        .pop();
    Ok(Reply::data(view, "photo accepted; it is being stored and thumbnailed").created())
}

/// The photo's bytes with their type, `ETag` and `Cache-Control` (public: photo ids are random
/// UUIDs, unguessable). Served whether or not the worker has stored the photo yet.
#[utoipa::path(get, path = "/api/photos-enhanced/public/{id}", tag = "onboarding", security(()),
    params(("id" = Uuid, Path)),
    responses((status = 200, description = "The image, in its type", content(([u8] = "image/jpeg"), ([u8] = "image/png"), ([u8] = "image/webp"), ([u8] = "image/gif"))),
        (status = 304, description = "Not modified (`If-None-Match`)"),
        (status = 503, description = "STORAGE_UNAVAILABLE: the document store (S3, SharePoint) failed or is throttling; `Retry-After` says when to try again")))]
pub async fn public_photo(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    let content = photos::content(&state.pool, id)
        .await?
        .ok_or(AppError::NotFound("photo"))?;
    let etag = format!("\"photo-{id}\"");
    if let Some(res) = not_modified(&headers, &etag) {
        return Ok(res);
    }
    let mime = content.mime_type.clone();
    let bytes = read_content(&state, content).await?;
    Ok(bytes_response(bytes, &mime, Some(etag), IMMUTABLE, None).into_response())
}

/// The photo's thumbnail (JPEG, longest side at most 400 px). 404 until the media worker has
/// made it (`thumbnailUrl` is null until then).
#[utoipa::path(get, path = "/api/photos-enhanced/thumbnail/{id}", tag = "onboarding", security(()),
    params(("id" = Uuid, Path)),
    responses((status = 200, description = "The thumbnail", content_type = "image/jpeg", body = [u8]),
        (status = 304, description = "Not modified (`If-None-Match`)")))]
pub async fn thumbnail(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    let etag = format!("\"thumbnail-{id}\"");
    let (bytes, mime) = photos::thumbnail(&state.pool, id)
        .await?
        .ok_or(AppError::NotFound("thumbnail"))?;
    if let Some(res) = not_modified(&headers, &etag) {
        return Ok(res);
    }
    Ok(bytes_response(bytes, &mime, Some(etag), IMMUTABLE, None).into_response())
}

/// One photo's record.
#[utoipa::path(get, operation_id = "api_photos_get", path = "/api/photos/{id}", tag = "onboarding", params(("id" = Uuid, Path)),
    responses((status = 200, body = Answer<DataMessage<PhotoView>>)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    let mut conn = state.pool.acquire().await?;
    let view = photos::view(&mut conn, id)
        .await?
        .ok_or(AppError::NotFound("photo"))?;
    Ok(Reply::data(view, "photo"))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upload))
        .routes(routes!(upload_enhanced))
        .routes(routes!(public_photo))
        .routes(routes!(thumbnail))
        .routes(routes!(get))
}
