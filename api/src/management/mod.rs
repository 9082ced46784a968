//! The villa management surface, mounted at `/management` (spec/villa-management-api.md).

pub mod villas;

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().merge(villas::router())
}
