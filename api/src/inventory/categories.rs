//! `/inventory/categories`: the category tree items are filed under.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    inventory::{
        categories::{self, CREATE_FIELDS},
        views,
    },
    record::{SchemaUse, json_schema, parse_patch},
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    query::id_filter,
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CategoryQuery {
    /// Only the categories directly under this one.
    #[param(value_type = Option<Uuid>)]
    parent_id: Option<String>,
}

/// Categories ordered by path (a parent just before its children), the shipped top level
/// included.
#[utoipa::path(get, operation_id = "inventory_categories_list", path = "/inventory/categories", tag = "inventory",
    params(PageQuery, CategoryQuery),
    responses((status = 200, body = Page<views::Category>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<CategoryQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let parent = id_filter(&mut problems, "parentId", q.parent_id.as_deref());
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        categories::list(&mut conn, parent, page).await?,
        page,
    ))
}

/// One category.
#[utoipa::path(get, operation_id = "inventory_categories_get", path = "/inventory/categories/{id}", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::Category)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(categories::get(&mut conn, id).await?))
}

crate::computed_schema!(
    /// A new category; its `code` (upper-case letters, digits and `_`) is derived from the name
    /// when absent.
    CategoryCreate => json_schema(CREATE_FIELDS, SchemaUse::Create)
);

/// Adds a category (409 `DUPLICATE_CODE` when its code is taken).
#[utoipa::path(post, operation_id = "inventory_categories_create", path = "/inventory/categories", tag = "inventory",
    request_body = CategoryCreate,
    responses((status = 201, body = views::Category), (status = 409, description = "DUPLICATE_CODE")))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(CREATE_FIELDS, &body, "", true, &state.cipher, &mut problems);
    let code = categories::code_of(&patch, &mut problems);
    let code = problems.finish_with(code)?;
    let mut tx = state.pool.begin().await?;
    let id = categories::create(&mut tx, &patch, &code).await?;
    let category = categories::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(category)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get))
}
