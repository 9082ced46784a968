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

/// A JSON body. Wrong content type: 415; malformed JSON: 400 `MALFORMED_JSON`; a field of the
/// wrong type or missing: 400 validation error naming the field; too large: 413.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers().get(header::CONTENT_TYPE)) {
            return Err(AppError::UnsupportedMediaType(
                "the body must be JSON, sent with Content-Type: application/json".into(),
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(body_error)?;
        parse_json(&bytes).map(ApiJson)
    }
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
        AppError::PayloadTooLarge
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
        AppError::PayloadTooLarge
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
