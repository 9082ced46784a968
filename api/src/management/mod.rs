//! The villa management surface, mounted at `/management` (spec/villa-management-api.md): one
//! file per resource. Lists answer `{data, pagination: {page, limit, total}}`; single records,
//! creates and updates answer the record itself; errors are `{error: {code, message, details}}`.

pub mod documents;
pub mod onboarding;
pub mod ota_credentials;
pub mod owners;
pub mod photos;
pub mod staff;
pub mod villas;

use axum::{Json, http::StatusCode};
use domain::{Problems, pagination::Pagination};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(villas::router())
        .merge(owners::router())
        .merge(staff::router())
        .merge(documents::router())
        .merge(photos::router())
        .merge(onboarding::router())
        .merge(ota_credentials::router())
}

/// Longest search term accepted.
const MAX_SEARCH_LEN: usize = 100;

/// The trimmed search term, if any; longer than [`MAX_SEARCH_LEN`] is a problem.
pub fn search_term(problems: &mut Problems, raw: Option<&str>) -> Option<String> {
    let term = raw.map(str::trim).filter(|s| !s.is_empty())?;
    if term.chars().count() > MAX_SEARCH_LEN {
        problems.push(
            "search",
            "too_long",
            format!("search must be at most {MAX_SEARCH_LEN} characters"),
        );
        return None;
    }
    Some(term.to_owned())
}

/// `page` and `limit` of a list that takes nothing else.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page number from 1 (default 1).
    page: Option<String>,
    /// Page size from 1 to 100 (default 20).
    limit: Option<String>,
}

/// A page of records.
#[derive(Serialize, ToSchema)]
pub struct Page<T> {
    data: Vec<T>,
    pagination: Pagination,
}

impl<T> Page<T> {
    pub fn new(data: Vec<T>, page: domain::pagination::PageRequest, total: i64) -> Json<Page<T>> {
        Json(Page {
            data,
            pagination: Pagination {
                page: page.page,
                limit: page.limit,
                total,
            },
        })
    }
}

/// A list that is not paged (a villa's team, its OTA credentials: a handful each).
#[derive(Serialize, ToSchema)]
pub struct Items<T> {
    pub data: Vec<T>,
}

crate::computed_schema!(
    /// An owner as the management surface shows it (from the owner field table).
    ManagementOwner => domain::owners::owner_schema()
);

/// 201 with the created record.
pub fn created(record: Value) -> (StatusCode, Json<Value>) {
    (StatusCode::CREATED, Json(record))
}
