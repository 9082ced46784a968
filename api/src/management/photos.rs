//! `/management/villas/{villaId}/photos` and `/management/photos/{id}/cover`: a villa's photos,
//! uploaded as multipart forms through the same storage and thumbnail jobs, folders and checks
//! as the onboarding uploads; one of them may be the villa's cover photo.

use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    management::photos::{self, NewPhoto},
    media,
    storage::PhotoCategory,
};
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Page, PageQuery};
use crate::{
    error::AppError,
    extract::{ApiMultipart, ApiPath, ApiQuery},
    state::AppState,
    uploads::{Form, accept_photos},
};

/// Most photos in one upload.
const MAX_PHOTOS: usize = 20;

/// The villa's photos: the cover photo first, then by category and order.
#[utoipa::path(get, operation_id = "management_photos_list", path = "/management/villas/{villaId}/photos", tag = "management",
    params(("villaId" = Uuid, Path), PageQuery),
    responses((status = 200, body = Page<domain::management::photos::PhotoView>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<Value>>, AppError> {
    let mut problems = Problems::new();
    let page = q.read(&mut problems);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let (data, total) = photos::page_of_villa(&mut conn, villa_id, page).await?;
    Ok(Page::new(data, page, total))
}

/// The multipart form of a photo upload.
#[derive(ToSchema)]
#[allow(dead_code)] // documents the form
#[schema(rename_all = "camelCase")]
pub struct PhotoForm {
    /// One or more images (JPEG, PNG, WebP or GIF; repeat the field, at most 20); `file` is
    /// accepted too. Type and size are read from the image itself.
    #[schema(value_type = Vec<String>, format = Binary, max_items = 20)]
    photos: Vec<Vec<u8>>,
    /// The photos' category, as in the onboarding API (`bedrooms`, `pool_outdoor_areas`, ...);
    /// `exterior_views` when not given.
    category: Option<String>,
    /// The bedroom's name; required for `bedrooms`, refused otherwise.
    subfolder: Option<String>,
    caption: Option<String>,
    alt_text: Option<String>,
    /// `true` makes the (first) photo the villa's cover photo.
    is_cover: Option<bool>,
}

/// Uploads photos (`multipart/form-data`). All are checked first (each bad one is listed as
/// `photos[i]`), then recorded together; answers 201 `{data: [photo records]}` at once; the
/// documents worker stores them and the media worker makes their thumbnails.
#[utoipa::path(post, operation_id = "management_photos_upload", path = "/management/villas/{villaId}/photos", tag = "management",
    params(("villaId" = Uuid, Path)), request_body(content = PhotoForm, content_type = "multipart/form-data"),
    responses((status = 201, body = super::Items<domain::management::photos::PhotoView>)))]
pub async fn upload(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiMultipart(mut multipart): ApiMultipart,
) -> Result<(StatusCode, Json<Value>), AppError> {
    // An unknown villa is answered before its upload is read.
    domain::management::villas::ensure_exists(&mut *state.pool.acquire().await?, villa_id).await?;
    let max = state.api.upload_max_bytes;
    let mut problems = Problems::new();
    let form = Form::read(
        &mut multipart,
        &["photos", "photos[]", "file"],
        MAX_PHOTOS,
        max,
        &mut problems,
    )
    .await?;
    let category = match form.text("category") {
        Some(c) => problems.check(PhotoCategory::parse("category", c)),
        None => Some(PhotoCategory::ExteriorViews),
    };
    let subfolder = PhotoCategory::parse_subfolder(category, form.text("subfolder"), &mut problems);
    let mut short_text = |name: &str| {
        let text = form.text(name).map(str::to_owned);
        if text.as_ref().is_some_and(|t| t.chars().count() > 500) {
            problems.push(
                name,
                "too_long",
                format!("{name} must be at most 500 characters"),
            );
        }
        text
    };
    let caption = short_text("caption");
    let alt_text = short_text("altText");
    let is_cover = form.flag("isCover", &mut problems);
    if form.files.is_empty() {
        problems.push(
            "photos",
            "required",
            "send one or more images in the photos field",
        );
    }
    let mut checked = Vec::new();
    for (i, part) in form.files.into_iter().enumerate() {
        let label = format!("photos[{i}]");
        let Some((file_name, _, content)) = part.checked(&label, max, &mut problems) else {
            continue;
        };
        match media::inspect(&content) {
            Some(info) => checked.push((file_name, info, content)),
            None => problems.push(
                label,
                "invalid_image",
                "must be a JPEG, PNG, WebP or GIF image",
            ),
        }
    }
    let category = problems.finish_with(category)?;
    let batch = checked
        .into_iter()
        .enumerate()
        .map(|(i, (file_name, info, content))| NewPhoto {
            villa_id,
            category,
            subfolder: subfolder.clone(),
            file_name,
            mime_type: info.mime,
            width: info.width,
            height: info.height,
            caption: caption.clone(),
            alt_text: alt_text.clone(),
            is_main: false,
            is_cover: is_cover && i == 0,
            content,
        })
        .collect();
    let data = accept_photos(&state, villa_id, batch).await?;
    Ok((StatusCode::CREATED, Json(json!({ "data": data }))))
}

/// Makes the photo its villa's cover photo; the villa's previous cover photo stops being one in
/// the same transaction. Answers the photo.
#[utoipa::path(patch, operation_id = "management_photos_set_cover", path = "/management/photos/{id}/cover", tag = "management",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = domain::management::photos::PhotoView)))]
pub async fn set_cover(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut tx = state.pool.begin().await?;
    let photo = photos::set_cover(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Json(photo))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, upload))
        .routes(routes!(set_cover))
}
