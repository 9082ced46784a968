//! `/inventory/items`: stock items. Managers and admins create, change and archive them (the
//! permission table says so); their quantity moves only through `/inventory/movements`.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    inventory::{
        CONDITIONS,
        items::{self, CREATE_FIELDS, Filter, QUANTITY_IS_THE_LEDGERS, UPDATE_FIELDS},
        views,
    },
    record::{SchemaUse, json_schema, parse_patch},
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{category_filter, evaluate_alerts_of};
use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    query::{bool_filter, id_filter, set_filter},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ItemQuery {
    /// A category code; the categories under it are included.
    category: Option<String>,
    #[param(value_type = Option<Uuid>)]
    property_id: Option<String>,
    #[param(value_type = Option<Uuid>)]
    location_id: Option<String>,
    #[param(schema_with = super::condition_param)]
    condition: Option<String>,
    /// `true`: only the items at or below a minimum greater than 0.
    #[param(value_type = Option<bool>)]
    low_stock: Option<String>,
    /// A part of the name or the sku, in any letter case.
    search: Option<String>,
}

/// Stock items in use, ordered by name.
#[utoipa::path(get, operation_id = "inventory_items_list", path = "/inventory/items", tag = "inventory",
    params(PageQuery, ItemQuery),
    responses((status = 200, body = Page<views::Item>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<ItemQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let search = q.search.as_deref().map(str::trim).filter(|s| !s.is_empty());
    if search.is_some_and(|s| s.chars().count() > 200) {
        problems.push("search", "too_long", "at most 200 characters");
    }
    let mut conn = state.pool.acquire().await?;
    let filter = Filter {
        category: category_filter(&mut conn, &mut problems, q.category.as_deref()).await?,
        property_id: id_filter(&mut problems, "propertyId", q.property_id.as_deref()),
        location_id: id_filter(&mut problems, "locationId", q.location_id.as_deref()),
        condition: set_filter(
            &mut problems,
            "condition",
            q.condition.as_deref(),
            CONDITIONS,
        ),
        // `false` is the whole list.
        low_stock: bool_filter(&mut problems, "lowStock", q.low_stock.as_deref()) == Some(true),
        search: search.map(str::to_owned),
    };
    problems.finish()?;
    Ok(JsonPageAnswer::new(
        items::list(&mut conn, &filter, page).await?,
        page,
    ))
}

/// One item in use with its location's path, its last 20 movements and its open alerts; an
/// archived item is 404.
#[utoipa::path(get, operation_id = "inventory_items_get", path = "/inventory/items/{id}", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::ItemDetail)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(items::get(&mut conn, id).await?))
}

crate::computed_schema!(
    /// A new stock item. `quantity` (default 0) is recorded as its INITIAL movement; `sku` is
    /// unique per location; `category` is a category code.
    ItemCreate => json_schema(CREATE_FIELDS, SchemaUse::Create)
);

/// Adds a stock item (404 for an unknown property; 400 on `locationId` for a location of another
/// property; 409 `DUPLICATE_SKU` when the location already keeps that sku).
#[utoipa::path(post, operation_id = "inventory_items_create", path = "/inventory/items", tag = "inventory",
    request_body = ItemCreate,
    responses((status = 201, body = views::ItemDetail), (status = 404, description = "No such property"),
        (status = 409, description = "DUPLICATE_SKU")))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(CREATE_FIELDS, &body, "", true, &state.cipher, &mut problems);
    items::check_bounds(&patch, None, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = items::create(&mut tx, patch, &user.subject).await?;
    let evaluation = evaluate_alerts_of(&mut tx, [id]).await?;
    let item = items::get(&mut tx, id).await?;
    tx.commit().await?;
    state.queues.push_in_background(evaluation);
    Ok((StatusCode::CREATED, Json(item)))
}

crate::computed_schema!(
    /// What an update may change: any subset of these. `quantity` is refused: post an
    /// ADJUSTMENT movement.
    ItemUpdate => json_schema(UPDATE_FIELDS, SchemaUse::Patch)
);

/// Changes an item; `quantity` is 400 (the ledger moves it: post an ADJUSTMENT).
#[utoipa::path(patch, operation_id = "inventory_items_update", path = "/inventory/items/{id}", tag = "inventory",
    params(("id" = Uuid, Path)), request_body = ItemUpdate,
    responses((status = 200, body = views::ItemDetail), (status = 409, description = "DUPLICATE_SKU")))]
pub async fn update(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    if body.contains_key("quantity") {
        problems.push("quantity", "read_only", QUANTITY_IS_THE_LEDGERS);
    }
    for moved in ["locationId", "propertyId"] {
        if body.contains_key(moved) {
            problems.push(
                moved,
                "read_only",
                "stock moves to another location with a transfer (POST /inventory/transfers)",
            );
        }
    }
    let patch = parse_patch(
        UPDATE_FIELDS,
        &body,
        "",
        false,
        &state.cipher,
        &mut problems,
    );
    problems.finish()?;
    let (item, evaluation) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        items::update(&mut tx, id, patch.clone()).await?;
        let evaluation = evaluate_alerts_of(&mut tx, [id]).await?;
        let item = items::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok((item, evaluation))
    })
    .await?;
    state.queues.push_in_background(evaluation);
    Ok(Json(item))
}

/// Archives an item: it leaves lists and reads (404), its movements stay in the reports, its
/// open alerts are resolved.
#[utoipa::path(delete, operation_id = "inventory_items_archive", path = "/inventory/items/{id}", tag = "inventory",
    params(("id" = Uuid, Path)),
    responses((status = 204, description = "Archived")))]
pub async fn archive(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<StatusCode, AppError> {
    let mut tx = state.pool.begin().await?;
    items::archive(&mut tx, id).await?;
    let evaluation = evaluate_alerts_of(&mut tx, [id]).await?;
    tx.commit().await?;
    state.queues.push_in_background(evaluation);
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, archive))
}
