//! `/reporting/listings`: the PMS listings the sync stores, each with its figures over the last
//! 30 days (`domain::reporting::metrics`, the definitions the dashboard shares), and its link to
//! a villa, which a person may set by hand.

use axum::{Json, extract::State};
use domain::{
    Problems,
    reporting::{
        LISTING_STATUSES,
        listings::{self, ListingFilter},
    },
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath, ApiQuery, Object},
    paging::{JsonPageAnswer, Page, PageQuery},
    query::set_filter,
    state::AppState,
};

/// How the listing figures are computed, in the OpenAPI description of a listing.
pub const METRICS_DESCRIPTION: &str = "A property-management-system listing. `metrics` cover the last 30 days: \
the 30 nights before today (today excluded; the company's day, BUSINESS_TIME_ZONE), counting CONFIRMED reservations only. \
`revenue`: the sum of their totalAmount, each pro rata of its nights inside those 30 (a stay across the window's edge counts \
only its nights inside), rounded to 2 decimals, in the listing's currency. `occupancy`: their booked nights inside the 30 \
as a percentage of 30, rounded to 1 decimal (owner stays are not bookings). `bookings`: how many of them check in inside \
the 30 nights. The dashboard uses the same definitions.";

crate::computed_schema!(
    /// A listing (see `METRICS_DESCRIPTION`).
    ReportingListing => json!({
        "type": "object",
        "description": METRICS_DESCRIPTION,
        "required": ["id", "pmsId", "name", "status", "bedrooms", "location", "currency", "villaId", "lastSyncedAt", "metrics"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "pmsId": {"type": "integer", "description": "The listing's id in the PMS."},
            "name": {"type": "string"},
            "status": {"type": "string", "enum": LISTING_STATUSES, "description": "INACTIVE when the PMS has archived it."},
            "bedrooms": {"type": ["integer", "null"]},
            "location": {"type": ["string", "null"], "description": "City, country (whichever the PMS has)."},
            "currency": {"type": ["string", "null"], "description": "ISO 4217: the currency of its reservations and revenue."},
            "villaId": {"type": ["string", "null"], "format": "uuid",
                "description": "The villa it is linked to: the villa whose code is the listing's internal name (any letter case), or the one linked by hand (PATCH)."},
            "internalName": {"type": ["string", "null"],
                "description": "One listing only (GET and PATCH /reporting/listings/{id}): the PMS's internal listing name."},
            "lastSyncedAt": {"type": "string", "format": "date-time",
                "description": "When a sync last stored a change of it."},
            "metrics": {
                "type": "object",
                "required": ["revenue", "occupancy", "bookings"],
                "properties": {
                    "revenue": {"type": "number", "description": "Last 30 nights, pro rata by night, in `currency`."},
                    "occupancy": {"type": "number", "minimum": 0, "description": "Percent of the last 30 nights booked."},
                    "bookings": {"type": "integer", "minimum": 0, "description": "Check-ins in the last 30 nights."}
                }
            }
        }
    })
);

crate::computed_schema!(
    /// Links the listing to a villa by hand (`null` unlinks it); later syncs keep the choice.
    ListingVillaLink => json!({
        "type": "object",
        "required": ["villaId"],
        "properties": {
            "villaId": {"type": ["string", "null"], "format": "uuid"}
        }
    })
);

fn status_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(LISTING_STATUSES)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListingQuery {
    #[param(schema_with = status_param)]
    status: Option<String>,
    /// A part of the name, in any letter case (at most 100 characters).
    search: Option<String>,
}

/// Listings ordered by name, with their figures over the last 30 days.
#[utoipa::path(get, operation_id = "reporting_listings_list", path = "/reporting/listings", tag = "reporting",
    params(PageQuery, ListingQuery),
    responses(
        (status = 200, description = "A page of listings (`X-Cache: HIT` or `MISS`)", body = Page<ReportingListing>),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 listing requests a minute per caller")))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<ListingQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = ListingFilter {
        status: set_filter(
            &mut problems,
            "status",
            q.status.as_deref(),
            LISTING_STATUSES,
        ),
        search: crate::management::search_term(&mut problems, q.search.as_deref()),
    };
    problems.finish()?;
    let today = state.core.business_time_zone.today();
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        listings::list_listings(&mut conn, &filter, page, today).await?,
        page,
    ))
}

/// One listing, with its internal name.
#[utoipa::path(get, operation_id = "reporting_listings_get", path = "/reporting/listings/{id}", tag = "reporting",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "The listing (`X-Cache: HIT` or `MISS`)", body = ReportingListing),
        (status = 404, description = "No such listing"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 listing requests a minute per caller")))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let today = state.core.business_time_zone.today();
    let mut conn = state.pool.acquire().await?;
    Ok(Json(listings::get_listing(&mut conn, id, today).await?))
}

/// Links the listing to a villa by hand, or unlinks it (`villaId: null`); later syncs keep the
/// choice. The cached reporting answers are dropped at once.
#[utoipa::path(patch, operation_id = "reporting_listings_update", path = "/reporting/listings/{id}", tag = "reporting",
    params(("id" = Uuid, Path)), request_body = ListingVillaLink,
    responses(
        (status = 200, description = "The listing as linked", body = ReportingListing),
        (status = 400, description = "VALIDATION_ERROR: `villaId` missing, malformed or not a villa"),
        (status = 404, description = "No such listing"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 listing requests a minute per caller")))]
pub async fn update(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let villa_id = match body.get("villaId") {
        None => {
            problems.push(
                "villaId",
                "required",
                "villaId is required: a villa's id, or null to unlink",
            );
            None
        }
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => match s.trim().parse::<Uuid>() {
            Ok(villa) => Some(Some(villa)),
            Err(_) => {
                problems.push("villaId", "invalid_format", "must be a UUID or null");
                None
            }
        },
        Some(_) => {
            problems.push("villaId", "invalid_type", "must be a UUID or null");
            None
        }
    };
    let villa_id = problems.finish_with(villa_id)?;
    let today = state.core.business_time_zone.today();
    let mut tx = state.pool.begin().await?;
    listings::link_villa(&mut tx, id, villa_id).await?;
    let listing = listings::get_listing(&mut tx, id, today).await?;
    tx.commit().await?;
    super::cache::invalidate(&state, "a listing linked to a villa").await;
    Ok(Json(listing))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get, update))
}
