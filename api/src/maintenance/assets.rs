//! `/maintenance/assets`: a villa's equipment, its health readings and warranty.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        CATEGORIES, CONDITIONS,
        assets::{self, CREATE_FIELDS, Filter, HEALTH_FIELDS},
        views,
    },
    record::{SchemaUse, json_schema, parse_patch},
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{id_filter, set_filter};
use crate::{
    auth::CurrentUser,
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AssetQuery {
    #[param(value_type = Option<Uuid>)]
    villa_id: Option<String>,
    #[param(schema_with = super::category_param)]
    category: Option<String>,
    #[param(schema_with = super::condition_param)]
    condition: Option<String>,
}

/// Assets, newest first.
#[utoipa::path(get, operation_id = "maintenance_assets_list", path = "/maintenance/assets", tag = "maintenance",
    params(PageQuery, AssetQuery),
    responses((status = 200, body = Page<views::AssetItem>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<AssetQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        villa_id: id_filter(&mut problems, "villaId", q.villa_id.as_deref()),
        category: set_filter(&mut problems, "category", q.category.as_deref(), CATEGORIES),
        condition: set_filter(
            &mut problems,
            "condition",
            q.condition.as_deref(),
            CONDITIONS,
        ),
    };
    problems.finish()?;
    let today = state.core.business_time_zone.today();
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        assets::list(&mut conn, &filter, page, today).await?,
        page,
    ))
}

/// One asset: its latest health and condition, every reading newest first, its warranty
/// (`warrantyStatus` ACTIVE, EXPIRED or NONE, with `warrantyDaysLeft`) and its open work orders.
#[utoipa::path(get, operation_id = "maintenance_assets_get", path = "/maintenance/assets/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::AssetDetail)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    let today = state.core.business_time_zone.today();
    Ok(Json(assets::get(&mut conn, id, today).await?))
}

crate::computed_schema!(
    /// A new asset of a villa; the warranty cannot end before the purchase.
    AssetCreate => json_schema(CREATE_FIELDS, SchemaUse::Create)
);

/// Adds an asset to a villa (404 `VILLA_NOT_FOUND` when there is no such villa).
#[utoipa::path(post, operation_id = "maintenance_assets_create", path = "/maintenance/assets", tag = "maintenance",
    request_body = AssetCreate,
    responses((status = 201, body = views::AssetDetail), (status = 404, description = "No such villa")))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(CREATE_FIELDS, &body, "", true, &state.cipher, &mut problems);
    assets::check_dates(&patch, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = assets::create(&mut tx, &patch).await?;
    let today = state.core.business_time_zone.today();
    let asset = assets::get(&mut tx, id, today).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(asset)))
}

crate::computed_schema!(
    /// A health reading: every reading is kept; the latest shows on the asset.
    HealthReadingBody => json_schema(HEALTH_FIELDS, SchemaUse::Create)
);

/// Records a health reading (`healthScore` 0 to 100, `condition`, `notes`); answers the asset.
#[utoipa::path(patch, operation_id = "maintenance_assets_health", path = "/maintenance/assets/{id}/health", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = HealthReadingBody,
    responses((status = 200, body = views::AssetDetail)))]
pub async fn health(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(HEALTH_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    assets::record_health(&mut tx, id, &patch, &user.subject).await?;
    let today = state.core.business_time_zone.today();
    let asset = assets::get(&mut tx, id, today).await?;
    tx.commit().await?;
    Ok(Json(asset))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get))
        .routes(routes!(health))
}
