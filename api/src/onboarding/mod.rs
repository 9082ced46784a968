//! The onboarding backend surface, mounted at `/api` (spec/onboarding-api.md): one file per
//! resource. Answers use the spec's envelope `{success, data, message, timestamp}`; errors the
//! surface's `{statusCode, statusMessage, data: {errors}}` (crate::error).

pub mod bodies;
pub mod dashboard;
pub mod debug;
pub mod docs;
pub mod documents;
pub mod facilities;
pub mod legacy;
pub mod owners;
pub mod photos;
pub mod steps;
pub mod villas;
pub mod wizard;

use axum::{
    Json,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use chrono::{SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use utoipa_axum::router::OpenApiRouter;

use crate::{error::AppError, state::AppState};

pub fn router(development: bool) -> OpenApiRouter<AppState> {
    let router = OpenApiRouter::new()
        .merge(villas::router())
        .merge(wizard::router())
        .merge(legacy::router())
        .merge(documents::router())
        .merge(photos::router())
        .merge(facilities::router())
        .merge(owners::router())
        .merge(dashboard::router())
        .merge(docs::router());
    // Debug routes exist only in development (404 otherwise, like any unknown route).
    if development {
        router.merge(debug::router())
    } else {
        router
    }
}

pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// How the document describes a success answer of this surface: the members of `T` with
/// `success: true` and the `timestamp` that [`Reply`] adds.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)] // documents the answer; `Reply` writes it
pub struct Answer<T> {
    /// Always true on a success status.
    success: bool,
    #[serde(flatten)]
    body: T,
    timestamp: chrono::DateTime<Utc>,
}

/// `{data, message}`: most answers of this surface.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct DataMessage<T> {
    pub data: T,
    pub message: String,
}

/// `{data, pagination, message}`: a page of a list (or, for the onboarding overview, a view
/// around one).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // documents the answer
pub struct DataPage<T> {
    data: T,
    pagination: domain::pagination::Pagination,
    message: String,
}

/// A success answer: a JSON object (to which `success` and `timestamp` are added), its status
/// and, for villa and progress answers, an `ETag`.
pub struct Reply {
    status: StatusCode,
    etag: Option<String>,
    body: Map<String, Value>,
}

impl Reply {
    /// `{success: true, ..members, timestamp}`.
    pub fn new(members: Value) -> Self {
        let mut body = Map::new();
        body.insert("success".into(), Value::Bool(true));
        if let Value::Object(m) = members {
            body.extend(m);
        }
        body.insert("timestamp".into(), Value::String(now()));
        Self {
            status: StatusCode::OK,
            etag: None,
            body,
        }
    }

    /// `{success: true, ..members of body, timestamp}` for a typed answer.
    pub fn of(body: impl serde::Serialize) -> Self {
        Self::new(serde_json::to_value(body).unwrap_or(Value::Null))
    }

    /// The spec's envelope: `{success: true, data, message, timestamp}`.
    pub fn data(data: impl serde::Serialize, message: &str) -> Self {
        Self::new(json!({"data": data, "message": message}))
    }

    pub fn created(mut self) -> Self {
        self.status = StatusCode::CREATED;
        self
    }

    pub fn etag(mut self, etag: String) -> Self {
        self.etag = Some(etag);
        self
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let mut res = (self.status, Json(Value::Object(self.body))).into_response();
        if let Some(tag) = self.etag.and_then(|t| HeaderValue::from_str(&t).ok()) {
            res.headers_mut().insert(header::ETAG, tag);
        }
        res
    }
}

/// The version an `If-Match` header names, for records whose `ETag` is
/// `"<kind>-<id>-<version>"`. `Ok(None)` without the header or with `*`; a tag of another
/// record or kind can never match, so it is a 412 like a stale one.
pub fn if_match(headers: &HeaderMap, kind: &str, id: uuid::Uuid) -> Result<Option<i32>, AppError> {
    let Some(raw) = headers.get(header::IF_MATCH) else {
        return Ok(None);
    };
    let raw = raw
        .to_str()
        .map_err(|_| AppError::PreconditionFailed)?
        .trim();
    if raw == "*" {
        return Ok(None);
    }
    let prefix = format!("{kind}-{id}-");
    raw.split(',')
        .map(|t| t.trim().trim_start_matches("W/").trim_matches('"'))
        .find_map(|t| t.strip_prefix(&prefix).and_then(|v| v.parse::<i32>().ok()))
        .map(Some)
        .ok_or(AppError::PreconditionFailed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_reads_our_tags_only() {
        let id = uuid::Uuid::now_v7();
        let mut h = HeaderMap::new();
        assert_eq!(if_match(&h, "progress", id).unwrap(), None);
        h.insert(
            header::IF_MATCH,
            HeaderValue::from_str(&format!("\"progress-{id}-7\"")).unwrap(),
        );
        assert_eq!(if_match(&h, "progress", id).unwrap(), Some(7));
        assert!(if_match(&h, "villa", id).is_err());
        assert!(if_match(&h, "progress", uuid::Uuid::now_v7()).is_err());
        h.insert(header::IF_MATCH, HeaderValue::from_static("\"garbage\""));
        assert!(if_match(&h, "progress", id).is_err());
    }
}
