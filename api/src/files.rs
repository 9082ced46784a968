//! Serving stored files, whichever surface names them (onboarding's documents and photos,
//! maintenance's field notes, reporting's exports): the bytes from Postgres while the worker has
//! not stored them, else from the document store, with their type and caching headers. Large
//! files (exports) are streamed from the store as they are read, never held whole in memory.

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use domain::{
    management::documents::StoredContent,
    storage::{ObjectStream, StoragePath},
};

use crate::{error::AppError, state::AppState};

/// A file's bytes for an answer: in memory (a thumbnail, a file still waiting in Postgres) or
/// streamed from the document store, never read whole into memory first.
pub struct FileContent {
    body: Body,
    len: u64,
}

/// A stored object streamed as it is read: a file of any size costs a few buffers. Its length is
/// the store's; hyper ends the connection if the body does not match it, so a client never takes
/// a short file for a whole one.
impl From<ObjectStream> for FileContent {
    fn from(object: ObjectStream) -> Self {
        Self {
            len: object.len,
            body: Body::from_stream(object.body),
        }
    }
}

impl From<Vec<u8>> for FileContent {
    fn from(bytes: Vec<u8>) -> Self {
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        Self {
            body: Body::from(bytes),
            len,
        }
    }
}

/// Binary content with its type, length and caching headers.
pub fn bytes_response(
    content: impl Into<FileContent>,
    content_type: &str,
    etag: Option<String>,
    cache_control: &'static str,
    disposition: Option<String>,
) -> Response {
    let FileContent { body, len } = content.into();
    let mut res = Response::new(body);
    let h = res.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
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

/// `attachment; filename="<name>"`: the name with every character a quoted header value cannot
/// carry as is (quotes, backslashes, controls, anything beyond ASCII) replaced by `_`.
pub fn attachment(file_name: &str) -> String {
    let safe: String = file_name
        .chars()
        .map(|c| {
            let kept = c == ' ' || (c.is_ascii_graphic() && !matches!(c, '"' | '\\'));
            if kept { c } else { '_' }
        })
        .collect();
    format!("attachment; filename=\"{safe}\"")
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

/// An uploaded file's bytes, from Postgres while the worker has not stored it, else streamed
/// from the document store (whichever backend: a 25 MB file is never held whole).
pub async fn read_content(
    state: &AppState,
    content: StoredContent,
) -> Result<FileContent, AppError> {
    if let Some(bytes) = content.pending_content {
        return Ok(bytes.into());
    }
    let path = StoragePath::from_stored(&content.storage_path).ok_or_else(|| {
        AppError::Internal(anyhow::anyhow!(
            "malformed storage path {:?}",
            content.storage_path
        ))
    })?;
    let object = state
        .store
        .get_stream(&path)
        .await?
        .ok_or(AppError::NotFound("file in the document store"))?;
    Ok(object.into())
}

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;

    use super::*;

    #[test]
    fn attachment_names_are_header_safe() {
        assert_eq!(
            attachment("revenue_2026-03-01_2026-03-31.xlsx"),
            "attachment; filename=\"revenue_2026-03-01_2026-03-31.xlsx\""
        );
        assert_eq!(
            attachment("a\"b\\c\nd é.csv"),
            "attachment; filename=\"a_b_c_d _.csv\""
        );
    }

    #[tokio::test]
    async fn a_streamed_file_has_its_length_and_type() {
        let chunks: Vec<std::io::Result<axum::body::Bytes>> = vec![
            Ok(axum::body::Bytes::from_static(b"ab")),
            Ok(axum::body::Bytes::from_static(b"c")),
        ];
        let object = ObjectStream {
            len: 3,
            body: futures::stream::iter(chunks).boxed(),
        };
        let res = bytes_response(
            object,
            "text/csv; charset=utf-8",
            None,
            "private, no-store",
            Some(attachment("x.csv")),
        );
        let h = res.headers();
        assert_eq!(h[header::CONTENT_LENGTH], "3");
        assert_eq!(h[header::CONTENT_TYPE], "text/csv; charset=utf-8");
        assert_eq!(h[header::CACHE_CONTROL], "private, no-store");
        assert_eq!(
            h[header::CONTENT_DISPOSITION],
            "attachment; filename=\"x.csv\""
        );
        let body = axum::body::to_bytes(res.into_body(), 100).await.unwrap();
        assert_eq!(&body[..], b"abc");
    }
}
