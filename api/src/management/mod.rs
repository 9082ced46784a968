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
use domain::Problems;
use serde_json::Value;
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

pub use crate::paging::{Items, Page, PageQuery};

crate::computed_schema!(
    /// An owner as the management surface shows it (from the owner field table).
    ManagementOwner => domain::management::owners::owner_schema()
);

/// 201 with the created record.
pub fn created(record: Value) -> (StatusCode, Json<Value>) {
    (StatusCode::CREATED, Json(record))
}
