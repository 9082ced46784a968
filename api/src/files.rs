//! Serving stored files, whichever surface names them (onboarding's documents and photos,
//! maintenance's field notes): the bytes from Postgres while the worker has not stored them, else
//! from the document store, with their type and caching headers.

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use domain::{documents::StoredContent, storage::StoragePath};

use crate::{error::AppError, state::AppState};

/// Binary content with its type and caching headers.
pub fn bytes_response(
    bytes: Vec<u8>,
    content_type: &str,
    etag: Option<String>,
    cache_control: &'static str,
    disposition: Option<String>,
) -> Response {
    let mut res = Response::new(Body::from(bytes));
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(content_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Some(tag) = etag.and_then(|t| HeaderValue::from_str(&t).ok()) {
        h.insert(header::ETAG, tag);
    }
    if let Some(d) = disposition.and_then(|d| HeaderValue::from_str(&d).ok()) {
        h.insert(header::CONTENT_DISPOSITION, d);
    }
    res
}

/// 304 when the client's `If-None-Match` names `etag`.
pub fn not_modified(headers: &HeaderMap, etag: &str) -> Option<Response> {
    let inm = headers.get(header::IF_NONE_MATCH)?.to_str().ok()?;
    inm.split(',')
        .any(|t| t.trim().trim_start_matches("W/") == etag || t.trim() == "*")
        .then(|| {
            let mut res = StatusCode::NOT_MODIFIED.into_response();
            if let Ok(v) = HeaderValue::from_str(etag) {
                res.headers_mut().insert(header::ETAG, v);
            }
            res
        })
}

/// An uploaded file's bytes, from Postgres while the worker has not stored it, else from the
/// document store.
pub async fn read_content(state: &AppState, content: StoredContent) -> Result<Vec<u8>, AppError> {
    if let Some(bytes) = content.pending_content {
        return Ok(bytes);
    }
    let path = StoragePath::from_stored(&content.storage_path).ok_or_else(|| {
        AppError::Internal(anyhow::anyhow!(
            "malformed storage path {:?}",
            content.storage_path
        ))
    })?;
    state
        .store
        .get(&path)
        .await
        .map_err(|e| AppError::Internal(e.into()))?
        .ok_or(AppError::NotFound("file in the document store"))
}
