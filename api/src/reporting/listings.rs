//! `/reporting/listings`: the PMS listings the sync stores, each with its figures over a period
//! (`startDate`, `endDate` and `currency` as the dashboard reads them; the definitions of
//! `domain::reporting::figures`, which the dashboard and the exports share), and its link to a
//! villa, which a person may set by hand.

use axum::{Json, extract::State, response::Response};
use domain::{
    Problems,
    reporting::{
        LISTING_STATUSES,
        figures::{self, Currency, MAX_PERIOD_NIGHTS, Period},
        listings::{self, ListingFilter},
        metrics::MetricsCurrency,
    },
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    cache::{self, CacheKey},
    dashboard::PeriodQuery,
};
use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath, ApiQuery, Object},
    paging::{JsonPageAnswer, Page, PageQuery},
    query::set_filter,
    state::AppState,
};

/// How the listing figures are computed, in the OpenAPI description of a listing (the formulas
/// themselves are `figures::DEFINITIONS`, the description of `metrics`).
pub const METRICS_DESCRIPTION: &str = "A property-management-system listing. `metrics` are its figures \
over the period of `startDate` and `endDate` (both nights included; default the 30 nights ending today, the company's \
day, BUSINESS_TIME_ZONE; at most 366 nights), money in the listing's own `currency` unless the `currency` parameter \
names another (REPORTING_CURRENCY, THB unless set, for a listing without one; `metrics.currency` says which), with \
the dashboard's definitions: counted stays are CONFIRMED reservations; owner stays block nights; revenue spreads each \
stay's totalAmount evenly over its nights; occupancy = booked / available nights × 100; ADR = revenue / booked nights \
in that currency; RevPAR = revenue / available nights; bookings = check-ins inside the period. Money of stays in \
other currencies is left out, never converted.";

crate::computed_schema!(
    /// A listing (see `METRICS_DESCRIPTION`).
    ReportingListing => json!({
        "type": "object",
        "description": METRICS_DESCRIPTION,
        "required": ["id", "pmsId", "name", "status", "bedrooms", "location", "currency", "villaId", "removedFromPms", "lastSyncedAt", "metrics"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "pmsId": {"type": "integer", "description": "The listing's id in the PMS."},
            "name": {"type": "string"},
            "status": {"type": "string", "enum": LISTING_STATUSES, "description": "INACTIVE when the PMS has archived it, or no longer has it (`removedFromPms`)."},
            "bedrooms": {"type": ["integer", "null"]},
            "location": {"type": ["string", "null"], "description": "City, country (whichever the PMS has)."},
            "currency": {"type": ["string", "null"], "description": "ISO 4217: the currency of its reservations and revenue."},
            "villaId": {"type": ["string", "null"], "format": "uuid",
                "description": "The villa it is linked to: the villa whose code is the listing's internal name (any letter case), or the one linked by hand (PATCH)."},
            "removedFromPms": {"type": "boolean",
                "description": "True when the PMS no longer has the listing: a completed full sync did not meet it, and made it INACTIVE (its villa link stays). False again once a sync meets it."},
            "internalName": {"type": ["string", "null"],
                "description": "One listing only (GET and PATCH /reporting/listings/{id}): the PMS's internal listing name."},
            "lastSyncedAt": {"type": "string", "format": "date-time",
                "description": "When a sync last stored a change of it."},
            "metrics": {
                "type": "object",
                "description": figures::DEFINITIONS,
                "required": ["revenue", "occupancy", "bookings", "adr", "revpar", "bookedNights",
                    "availableNights", "currency", "startDate", "endDate"],
                "properties": {
                    "revenue": {"type": "number", "description": "Over the period, each stay's totalAmount spread evenly over its nights, in `metrics.currency`; rounded to 2 decimals."},
                    "occupancy": {"type": "number", "minimum": 0, "description": "bookedNights / availableNights × 100, rounded to 2 decimals (0 when no night is available)."},
                    "bookings": {"type": "integer", "minimum": 0, "description": "Counted stays checking in inside the period."},
                    "adr": {"type": "number", "description": "revenue / booked nights of the stays in `metrics.currency`, rounded to 2 decimals."},
                    "revpar": {"type": "number", "description": "revenue / availableNights, rounded to 2 decimals."},
                    "bookedNights": {"type": "integer", "minimum": 0, "description": "Nights of counted stays inside the period."},
                    "availableNights": {"type": "integer", "minimum": 0, "description": "The period's nights less the listing's owner-stay nights."},
                    "currency": {"type": "string", "description": "ISO 4217: the currency of revenue, adr and revpar: the `currency` parameter, else the listing's own `currency`, else REPORTING_CURRENCY."},
                    "startDate": {"type": "string", "format": "date", "description": "The period's first night."},
                    "endDate": {"type": "string", "format": "date", "description": "The period's last night, included."}
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

/// The currency of the listings' money figures.
#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListingCurrencyQuery {
    /// ISO 4217 code of the money figures of every listing's `metrics`, any letter case.
    /// Default: each listing's own `currency` (REPORTING_CURRENCY, itself THB unless set, for a
    /// listing without one), so that a listing's revenue is its revenue. Stays in other
    /// currencies are left out of money figures (revenue, ADR, RevPAR), never converted; they
    /// still count as booked nights.
    #[param(pattern = "^[A-Za-z]{3}$")]
    pub currency: Option<String>,
}

impl ListingCurrencyQuery {
    /// The currency asked for, else each listing's own (`fallback` for a listing without one);
    /// a malformed one is a problem on `currency`.
    pub fn read(&self, problems: &mut Problems, fallback: &Currency) -> Option<MetricsCurrency> {
        let asked = self
            .currency
            .as_deref()
            .filter(|raw| !raw.trim().is_empty());
        match asked {
            None => Some(MetricsCurrency::ListingsOwn {
                fallback: fallback.clone(),
            }),
            Some(raw) => Currency::parse(problems, "currency", Some(raw), fallback)
                .map(MetricsCurrency::Asked),
        }
    }
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

/// Listings ordered by name, with their figures over the period (default the 30 nights ending
/// today).
#[utoipa::path(get, operation_id = "reporting_listings_list", path = "/reporting/listings", tag = "reporting",
    params(PageQuery, ListingQuery, PeriodQuery, ListingCurrencyQuery),
    responses(
        (status = 200, description = "A page of listings (`X-Cache: HIT` or `MISS`)", body = Page<ReportingListing>),
        (status = 400, description = "VALIDATION_ERROR: a bad page, limit, status or search, a malformed date, startDate after endDate, more than 366 nights, a malformed currency; the message names the parameter"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 listing requests a minute per caller")))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<ListingQuery>,
    ApiQuery(period): ApiQuery<PeriodQuery>,
    ApiQuery(currency): ApiQuery<ListingCurrencyQuery>,
) -> Result<Response, AppError> {
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
    let today = state.core.business_time_zone.today();
    let period = period.read(&mut problems, today, MAX_PERIOD_NIGHTS);
    let currency = currency.read(&mut problems, &state.core.reporting.currency);
    let (period, currency) = problems.finish_with(period.zip(currency))?;
    let key = CacheKey::new("/reporting/listings")
        .page(page)
        .filter("status", filter.status)
        .filter("search", filter.search.as_deref())
        .period(period)
        .param("currency", &currency);
    Ok(cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let found = listings::list_listings(&mut conn, &filter, page, period, &currency).await?;
        Ok::<_, AppError>(JsonPageAnswer::new(found, page))
    })
    .await)
}

/// One listing, with its internal name and its figures over the period (default the 30 nights
/// ending today).
#[utoipa::path(get, operation_id = "reporting_listings_get", path = "/reporting/listings/{id}", tag = "reporting",
    params(("id" = Uuid, Path), PeriodQuery, ListingCurrencyQuery),
    responses(
        (status = 200, description = "The listing (`X-Cache: HIT` or `MISS`)", body = ReportingListing),
        (status = 400, description = "VALIDATION_ERROR: a malformed id or date, startDate after endDate, more than 366 nights, a malformed currency; the message names the parameter"),
        (status = 404, description = "No such listing"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 listing requests a minute per caller")))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiQuery(period): ApiQuery<PeriodQuery>,
    ApiQuery(currency): ApiQuery<ListingCurrencyQuery>,
) -> Result<Response, AppError> {
    let today = state.core.business_time_zone.today();
    let mut problems = Problems::new();
    let period = period.read(&mut problems, today, MAX_PERIOD_NIGHTS);
    let currency = currency.read(&mut problems, &state.core.reporting.currency);
    let (period, currency) = problems.finish_with(period.zip(currency))?;
    let key = CacheKey::new(format!("/reporting/listings/{id}"))
        .period(period)
        .param("currency", &currency);
    Ok(cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let listing = listings::get_listing(&mut conn, id, period, &currency).await?;
        Ok::<_, AppError>(Json(listing))
    })
    .await)
}

/// Links the listing to a villa by hand, or unlinks it (`villaId: null`); later syncs keep the
/// choice. The cached reporting answers are dropped at once. The answer's figures are over the
/// default period, in the listing's own currency.
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
    let period = Period::default_ending(state.core.business_time_zone.today());
    let currency = MetricsCurrency::ListingsOwn {
        fallback: state.core.reporting.currency.clone(),
    };
    let mut tx = state.pool.begin().await?;
    listings::link_villa(&mut tx, id, villa_id).await?;
    let listing = listings::get_listing(&mut tx, id, period, &currency).await?;
    tx.commit().await?;
    super::cache::invalidate(&state, "a listing linked to a villa").await;
    Ok(Json(listing))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get, update))
}
