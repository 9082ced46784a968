//! The maintenance surface, mounted at `/maintenance` (spec/operations-apis.md): one file per
//! resource. Lists answer `{data, pagination}`; single records, creates and updates answer the
//! record; errors are `{error: {code, message, statusCode}}`, a missing record
//! `<ENTITY>_NOT_FOUND` and a validation failure `VALIDATION_ERROR` with every bad field in
//! `error.fields`.

pub mod assets;
pub mod emergencies;
pub mod field_notes;
pub mod pmp;
pub mod timesheets;
pub mod vendors;
pub mod work_orders;

use domain::Problems;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(work_orders::router())
        .merge(assets::router())
        .merge(emergencies::router())
        .merge(pmp::router())
        .merge(field_notes::router())
        .merge(timesheets::router())
        .merge(vendors::router())
}

/// The OpenAPI schema of a closed-set query parameter (for `#[param(schema_with = ...)]`).
fn one_of(set: &[&'static str]) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(set.iter().copied()))
        .build()
}

pub fn category_param() -> utoipa::openapi::schema::Object {
    one_of(domain::maintenance::CATEGORIES)
}

pub fn condition_param() -> utoipa::openapi::schema::Object {
    one_of(domain::maintenance::CONDITIONS)
}

/// An optional id filter of a list (`villaId=...`); a malformed one is a problem on `field`.
pub fn id_filter(problems: &mut Problems, field: &str, raw: Option<&str>) -> Option<Uuid> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    match raw.parse() {
        Ok(id) => Some(id),
        Err(_) => {
            problems.push(field, "invalid_format", format!("{field} must be a UUID"));
            None
        }
    }
}

/// An optional closed-set filter of a list; an unknown value is a problem naming the set.
pub fn set_filter(
    problems: &mut Problems,
    field: &str,
    raw: Option<&str>,
    set: &'static [&'static str],
) -> Option<&'static str> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    domain::maintenance::closed(problems, field, raw, set)
}
