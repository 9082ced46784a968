//! `/inventory/locations`: the places of a property where stock is kept, as a tree.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    inventory::{
        LOCATION_TYPES,
        locations::{self, CREATE_FIELDS, Filter},
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
    query::{id_filter, set_filter},
    state::AppState,
};

fn type_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(LOCATION_TYPES)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct LocationQuery {
    #[param(value_type = Option<Uuid>)]
    property_id: Option<String>,
    /// Only the locations directly under this one.
    #[param(value_type = Option<Uuid>)]
    parent_id: Option<String>,
    #[serde(rename = "type")]
    #[param(rename = "type", schema_with = type_param)]
    kind: Option<String>,
}

/// Locations ordered by path (a parent just before what it holds).
#[utoipa::path(get, operation_id = "inventory_locations_list", path = "/inventory/locations", tag = "inventory",
    params(PageQuery, LocationQuery),
    responses((status = 200, body = Page<views::Location>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<LocationQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        property_id: id_filter(&mut problems, "propertyId", q.property_id.as_deref()),
        parent_id: id_filter(&mut problems, "parentId", q.parent_id.as_deref()),
        kind: set_filter(&mut problems, "type", q.kind.as_deref(), LOCATION_TYPES),
    };
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        locations::list(&mut conn, &filter, page).await?,
        page,
    ))
}

/// One location with its path and the number of items kept there.
#[utoipa::path(get, operation_id = "inventory_locations_get", path = "/inventory/locations/{id}", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::Location)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(locations::get(&mut conn, id).await?))
}

crate::computed_schema!(
    /// A new location of a property; a parent is a location of the same property.
    LocationCreate => json_schema(CREATE_FIELDS, SchemaUse::Create)
);

/// Adds a location to a property (404 when there is no such property; 400 on `parentId` for a
/// parent of another property).
#[utoipa::path(post, operation_id = "inventory_locations_create", path = "/inventory/locations", tag = "inventory",
    request_body = LocationCreate,
    responses((status = 201, body = views::Location), (status = 404, description = "No such property")))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(CREATE_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = locations::create(&mut tx, &patch).await?;
    let location = locations::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(location)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get))
}
