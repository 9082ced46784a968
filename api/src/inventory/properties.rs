//! `/inventory/properties`: the villas, seen as inventory properties.

use axum::extract::State;
use domain::{
    Problems,
    inventory::{properties, views},
};

use crate::{
    error::AppError,
    extract::ApiQuery,
    paging::{JsonPageAnswer, Page, PageQuery},
    state::AppState,
};

/// The properties (the villas of `/management/villas`) ordered by name, with their locations
/// and items in use.
#[utoipa::path(get, operation_id = "inventory_properties_list", path = "/inventory/properties", tag = "inventory",
    params(PageQuery),
    responses((status = 200, body = Page<views::Property>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = q.read(&mut problems);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        properties::list(&mut conn, page).await?,
        page,
    ))
}

pub fn router() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new().routes(utoipa_axum::routes!(list))
}
