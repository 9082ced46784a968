//! The maintenance surface, mounted at `/maintenance` (spec/operations-apis.md): one file per
//! resource. Lists answer `{data, pagination}`; single records, creates and updates answer the
//! record; errors are `{error: {code, message, statusCode}}`, a missing record
//! `<ENTITY>_NOT_FOUND` and a validation failure `VALIDATION_ERROR` with every bad field in
//! `error.fields`.

pub mod approvals;
pub mod assets;
pub mod board;
pub mod checklists;
pub mod costs;
pub mod emergencies;
pub mod field_notes;
pub mod pmp;
pub mod task_rules;
pub mod timesheets;
pub mod vendors;
pub mod work_orders;

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(work_orders::router())
        .merge(costs::router())
        .merge(approvals::router())
        .merge(checklists::router())
        .merge(assets::router())
        .merge(emergencies::router())
        .merge(pmp::router())
        .merge(task_rules::router())
        .merge(board::router())
        .merge(field_notes::router())
        .merge(timesheets::router())
        .merge(vendors::router())
}

pub use crate::query::{id_filter, set_filter};

pub fn category_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(domain::maintenance::CATEGORIES)
}

/// Work orders' categories: the others' and INSPECTION.
pub fn work_order_category_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(domain::maintenance::WORK_ORDER_CATEGORIES)
}

pub fn condition_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(domain::maintenance::CONDITIONS)
}
