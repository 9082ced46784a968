//! `/maintenance/vendors`: companies work orders are assigned to, and their ratings.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        CATEGORIES,
        vendors::{self, CREATE_FIELDS, RATING_FIELDS},
        views,
    },
    record::{SchemaUse, json_schema, parse_patch, to_e164},
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::set_filter;
use crate::{
    auth::CurrentUser,
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VendorQuery {
    /// Vendors serving this work-order category.
    #[param(schema_with = super::category_param)]
    category: Option<String>,
}

/// Vendors, newest first, each with its average rating.
#[utoipa::path(get, operation_id = "maintenance_vendors_list", path = "/maintenance/vendors", tag = "maintenance",
    params(PageQuery, VendorQuery),
    responses((status = 200, body = Page<views::VendorItem>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<VendorQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let category = set_filter(&mut problems, "category", q.category.as_deref(), CATEGORIES);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        vendors::list(&mut conn, category, page).await?,
        page,
    ))
}

/// One vendor with its rating per criterion.
#[utoipa::path(get, operation_id = "maintenance_vendors_get", path = "/maintenance/vendors/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::VendorDetail)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(vendors::get(&mut conn, id).await?))
}

crate::computed_schema!(
    /// A new vendor: the categories of work it does (at least one); the phone is stored in
    /// E.164 form.
    VendorCreate => json_schema(CREATE_FIELDS, SchemaUse::Create)
);

/// Adds a vendor.
#[utoipa::path(post, operation_id = "maintenance_vendors_create", path = "/maintenance/vendors", tag = "maintenance",
    request_body = VendorCreate,
    responses((status = 201, body = views::VendorDetail)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let mut patch = parse_patch(CREATE_FIELDS, &body, "", true, &state.cipher, &mut problems);
    to_e164(&mut patch, &[("phone", "phone")], &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = vendors::create(&mut tx, &patch).await?;
    let vendor = vendors::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(vendor)))
}

crate::computed_schema!(
    /// A rating of the vendor's work on one of its COMPLETED work orders.
    RatingBody => json_schema(RATING_FIELDS, SchemaUse::Create)
);

/// Rates the vendor's work on a work order assigned to it and COMPLETED (409
/// `WORK_ORDER_NOT_ASSIGNED_TO_VENDOR`, `WORK_ORDER_NOT_COMPLETED`); once per work order (409
/// `ALREADY_RATED`). Managers and admins only.
#[utoipa::path(post, operation_id = "maintenance_vendors_rate", path = "/maintenance/vendors/{id}/ratings", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = RatingBody,
    responses((status = 201, body = views::Rating),
        (status = 404, description = "No such vendor or work order"),
        (status = 409, description = "`WORK_ORDER_NOT_ASSIGNED_TO_VENDOR`, `WORK_ORDER_NOT_COMPLETED` or `ALREADY_RATED`")))]
pub async fn rate(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(RATING_FIELDS, &body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let rating = vendors::rate(&mut tx, id, &patch, &user.subject).await?;
    tx.commit().await?;
    Ok((StatusCode::CREATED, Json(rating)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get))
        .routes(routes!(rate))
}
