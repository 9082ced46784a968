//! Extractors that answer bad input in the platform's error type instead of axum's plain-text
//! rejections: a body that is not JSON, not `application/json`, too large or of the wrong shape,
//! and path or query parameters that do not parse.

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Request, rejection::BytesRejection},
    http::{header, request::Parts},
};
use serde::de::DeserializeOwned;

use crate::error::AppError;

/// The largest JSON body a route without files takes. The largest valid value of any such body
/// is far smaller (an export naming its 500 listings is about 20 KB, a checklist of 1,000
/// facilities without photos about 300 KB); a larger body is refused (413) before it is parsed,
/// so that nobody makes the API hold and check tens of megabytes of JSON. Routes that carry files
/// in base64 take [`UploadJson`] instead.
pub const JSON_BODY_LIMIT: usize = 1024 * 1024;

/// A JSON body of at most [`JSON_BODY_LIMIT`] bytes. Wrong content type: 415; malformed JSON:
/// 400 `MALFORMED_JSON`; a field of the wrong type or missing: 400 validation error naming the
/// field; too large: 413.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let bytes = json_body(req, JSON_BODY_LIMIT).await?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// A JSON body that carries files in base64 (the onboarding uploads and wizard steps): at most
/// `BODY_LIMIT_BYTES`, the limit of the whole API, which leaves room for `UPLOAD_MAX_BYTES` of
/// file encoded. Otherwise as [`ApiJson`].
pub struct UploadJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for UploadJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers().get(header::CONTENT_TYPE)) {
            return Err(not_json());
        }
        // Up to the API's body limit (`DefaultBodyLimit`, set from BODY_LIMIT_BYTES).
        let bytes = Bytes::from_request(req, state).await.map_err(body_error)?;
        parse_json(&bytes).map(UploadJson)
    }
}

fn not_json() -> AppError {
    AppError::UnsupportedMediaType(
        "the body must be JSON, sent with Content-Type: application/json".into(),
    )
}

/// The bytes of a JSON body of at most `limit` bytes: a declared `Content-Length` over it is
/// refused before anything is read, a body that grows past it as soon as it does.
async fn json_body(req: Request, limit: usize) -> Result<Bytes, AppError> {
    if !is_json(req.headers().get(header::CONTENT_TYPE)) {
        return Err(not_json());
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(AppError::PayloadTooLarge(Some(limit)));
    }
    axum::body::to_bytes(req.into_body(), limit)
        .await
        .map_err(|e| {
            if is_length_limit(&e) {
                AppError::PayloadTooLarge(Some(limit))
            } else {
                AppError::BadRequest {
                    code: "BAD_REQUEST",
                    message: format!("the body could not be read: {e}"),
                }
            }
        })
}

/// Whether reading a body failed because it passed a length limit (ours or the API's).
fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = err.source();
    }
    false
}

/// Parses a JSON object into `T`, naming the offending field on a type error. Every body of the
/// platform is an object; serde would otherwise read a struct from an array, by position.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AppError> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        None => {
            return Err(AppError::BadRequest {
                code: "MALFORMED_JSON",
                message: "the body is empty; a JSON object is expected".into(),
            });
        }
        Some(_) => {
            return Err(AppError::invalid(
                "body",
                "invalid_type",
                "the body must be a JSON object",
            ));
        }
    }
    if more_values_than(bytes, MAX_JSON_VALUES) {
        // Parsed, such a body would take some 20 times its size in memory before a single
        // member was checked.
        return Err(AppError::invalid(
            "body",
            "too_long",
            format!(
                "the body holds more than {MAX_JSON_VALUES} JSON values; no valid body holds that many"
            ),
        ));
    }
    if has_nul_escape(bytes) {
        return Err(nul_in_body(bytes));
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            AppError::BadRequest {
                code: "MALFORMED_JSON",
                message: format!("the body is not valid JSON: {inner}"),
            }
        } else {
            let field = if path == "." { "body".to_owned() } else { path };
            AppError::invalid(field, "invalid_value", strip_position(&inner.to_string()))
        }
    })
}

/// The most values (members of objects and arrays, the containers included) a JSON body may
/// hold. The largest valid body of any route holds about 10,000 (a checklist of 1,000
/// facilities); a 1 MiB array of zeros holds 500,000, and parsed, each value costs tens of bytes.
pub const MAX_JSON_VALUES: usize = 50_000;

/// Whether the JSON text holds more than `max` values, counted in one pass over its bytes
/// without parsing: every `,` `[` `{` outside strings starts one.
fn more_values_than(bytes: &[u8], max: usize) -> bool {
    let (mut values, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                values += 1;
                if values > max {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether the JSON text holds a `\u0000` escape (a NUL character; JSON cannot hold a raw NUL
/// byte in a string). PostgreSQL stores no NUL in text or jsonb, so such a value is refused at
/// the door rather than failing the write.
fn has_nul_escape(bytes: &[u8]) -> bool {
    bytes.windows(6).enumerate().any(|(i, w)| {
        // A backslash escapes `u0000` only when the backslashes before it are odd in number.
        w == b"\\u0000" && bytes[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0
    })
}

/// The 400 for a body with a NUL character, naming the member that holds it.
fn nul_in_body(bytes: &[u8]) -> AppError {
    fn find(value: &serde_json::Value, path: &str) -> Option<String> {
        match value {
            serde_json::Value::String(s) if s.contains('\0') => Some(path.to_owned()),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| find(v, &format!("{path}[{i}]"))),
            serde_json::Value::Object(map) => map.iter().find_map(|(k, v)| {
                if k.contains('\0') {
                    return Some(path.to_owned());
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                find(v, &p)
            }),
            _ => None,
        }
    }
    let field = serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| find(&v, ""))
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| "body".to_owned());
    AppError::invalid(field, "invalid_character", NUL_MESSAGE)
}

pub const NUL_MESSAGE: &str = "must not contain NUL (U+0000) characters";

fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

fn is_json(ct: Option<&header::HeaderValue>) -> bool {
    let Some(ct) = ct.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Ok(mime) = ct.parse::<mime::Mime>() else {
        return false;
    };
    mime.type_() == "application"
        && (mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json"))
}

fn body_error(e: BytesRejection) -> AppError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        AppError::PayloadTooLarge(None)
    } else {
        AppError::BadRequest {
            code: "BAD_REQUEST",
            message: format!("the body could not be read: {e}"),
        }
    }
}

/// Path parameters; one that does not parse (a malformed UUID) is a 400 naming the parameter.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        use axum::extract::{Path, rejection::PathRejection};
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(v)) => Ok(ApiPath(v)),
            Err(PathRejection::FailedToDeserializePathParams(e)) => {
                let kind = e.into_kind();
                let field = match &kind {
                    axum::extract::path::ErrorKind::ParseErrorAtKey { key, .. }
                    | axum::extract::path::ErrorKind::DeserializeError { key, .. }
                    | axum::extract::path::ErrorKind::InvalidUtf8InPathParam { key } => key.clone(),
                    axum::extract::path::ErrorKind::ParseErrorAtIndex { index, .. } => {
                        format!("path[{index}]")
                    }
                    _ => "path".to_owned(),
                };
                Err(AppError::invalid(
                    field.clone(),
                    "invalid_format",
                    format!("`{field}` is malformed: {kind}"),
                ))
            }
            Err(e) => Err(AppError::BadRequest {
                code: "BAD_REQUEST",
                message: e.body_text(),
            }),
        }
    }
}

/// Query parameters; a value that does not parse is a 400 naming the parameter.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        if let Some((name, _)) = form_urlencoded::parse(query.as_bytes())
            .find(|(k, v)| k.contains('\0') || v.contains('\0'))
        {
            return Err(AppError::invalid(
                name.replace('\0', ""),
                "invalid_character",
                NUL_MESSAGE,
            ));
        }
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(|e| {
                let field = e.path().to_string();
                AppError::invalid(
                    if field == "." {
                        "query".to_owned()
                    } else {
                        field
                    },
                    "invalid_value",
                    e.into_inner().to_string(),
                )
            })
    }
}

/// A `multipart/form-data` body, read part by part as it arrives (no copy of the whole body is
/// made first). Another content type: 415; a malformed body: 400; larger than the body limit:
/// 413.
pub struct ApiMultipart(pub axum::extract::Multipart);

impl<S: Send + Sync> FromRequest<S> for ApiMultipart {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_form = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<mime::Mime>().ok())
            .is_some_and(|m| m.type_() == mime::MULTIPART && m.subtype() == mime::FORM_DATA);
        if !is_form {
            return Err(AppError::UnsupportedMediaType(
                "the body must be multipart/form-data".into(),
            ));
        }
        axum::extract::Multipart::from_request(req, state)
            .await
            .map(ApiMultipart)
            .map_err(|e| AppError::BadRequest {
                code: "MALFORMED_MULTIPART",
                message: e.body_text(),
            })
    }
}

/// A failure while reading a multipart body: too large (413) or malformed (400).
pub fn multipart_error(e: axum::extract::multipart::MultipartError) -> AppError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        AppError::PayloadTooLarge(None)
    } else {
        AppError::BadRequest {
            code: "MALFORMED_MULTIPART",
            message: format!("the multipart body could not be read: {}", e.body_text()),
        }
    }
}

/// One part's bytes, read chunk by chunk into a single buffer; `Ok(None)` as soon as the part
/// passes `max` bytes (the rest of it is not kept).
pub async fn read_part(
    field: &mut axum::extract::multipart::Field<'_>,
    max: usize,
) -> Result<Option<Vec<u8>>, AppError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        if bytes.len() + chunk.len() > max {
            // The rest of the part is skipped when the next part is read.
            return Ok(None);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Some(bytes))
}

/// A body as a JSON object (the upload and wizard bodies are checked field by field, so that a
/// failure lists every bad field rather than the first serde meets).
pub type Object = serde_json::Map<String, serde_json::Value>;

#[cfg(test)]
mod tests {
    use super::more_values_than;

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert!(!more_values_than(br#"{"a": [1, 2, 3]}"#, 5));
        assert!(more_values_than(br#"{"a": [1, 2, 3, 4, 5]}"#, 5));
        // Commas and brackets inside strings, escaped quotes included, are text.
        assert!(!more_values_than(br#"{"a": "x,[{,\",,,,,,"}"#, 1));
        let zeros = format!("[{}]", vec!["0"; 600_000].join(","));
        assert!(more_values_than(zeros.as_bytes(), super::MAX_JSON_VALUES));
    }
}
