//! `/reporting/reservations`: the PMS reservations the sync stores, with the spec's filters.

use axum::{Json, extract::State, response::Response};
use domain::{
    Problems,
    reporting::{
        CHANNELS, RESERVATION_STATUSES,
        reservations::{self, ReservationFilter},
    },
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::cache::{self, CacheKey};
use crate::{
    error::AppError,
    extract::{ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page, PageQuery},
    query::{date_filter, id_filter, set_filter},
    state::AppState,
};

fn money(description: &str) -> Value {
    json!({"type": "number", "description": description})
}

crate::computed_schema!(
    /// A reservation of a PMS listing. `status` maps the PMS's: new and modified are CONFIRMED;
    /// pending, awaitingPayment, awaitingGuestVerification PENDING; cancelled CANCELLED; ownerStay
    /// OWNER_STAY; every inquiry INQUIRY; declined DECLINED; expired EXPIRED; anything else
    /// UNKNOWN (`pmsStatus` keeps the PMS's word). REMOVED: the PMS no longer has it.
    ReportingReservation => json!({
        "type": "object",
        "required": ["id", "pmsId", "guestName", "listing", "listingPmsId", "checkIn", "checkOut", "nights",
            "channel", "channelName", "totalAmount", "netAmount", "currency", "status", "pmsStatus", "lastSyncedAt"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "pmsId": {"type": "integer", "description": "The reservation's id in the PMS."},
            "guestName": {"type": ["string", "null"]},
            "listing": {"type": ["object", "null"], "required": ["id", "name"],
                "description": "Null while the sync has not stored its listing.",
                "properties": {"id": {"type": "string", "format": "uuid"}, "name": {"type": "string"}}},
            "listingPmsId": {"type": ["integer", "null"], "description": "The listing's id in the PMS."},
            "checkIn": {"type": "string", "format": "date"},
            "checkOut": {"type": "string", "format": "date"},
            "nights": {"type": "integer"},
            "channel": {"type": "string", "enum": CHANNELS,
                "description": "From the PMS's channel id: 2018 and 2001 AIRBNB, 2005 BOOKING_COM, 2002 and 2010 VRBO, 2007 EXPEDIA, 2000 and 2013 DIRECT, 2022 GOOGLE, any other OTHER."},
            "channelName": {"type": ["string", "null"], "description": "The PMS's name of the channel."},
            "totalAmount": money("What the guest pays, in `currency`."),
            "netAmount": money("totalAmount less tax, channel commission and PMS commission."),
            "taxAmount": money("One reservation only (GET /reporting/reservations/{id})."),
            "channelCommissionAmount": money("One reservation only."),
            "hostawayCommissionAmount": money("One reservation only."),
            "currency": {"type": ["string", "null"], "description": "ISO 4217."},
            "status": {"type": "string", "enum": RESERVATION_STATUSES,
                "description": "REMOVED when the PMS no longer has it: a completed full sync did not meet it (`pmsStatus` keeps what the PMS last said); it counts for nothing in any figure, and is back with the PMS's status once a sync meets it."},
            "pmsStatus": {"type": ["string", "null"], "description": "The status as the PMS says it."},
            "lastSyncedAt": {"type": "string", "format": "date-time", "description": "When a sync last stored a change of it."}
        }
    })
);

fn status_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(RESERVATION_STATUSES)
}

fn channel_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(CHANNELS)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ReservationQuery {
    /// A listing's id (ours, not the PMS's).
    #[param(value_type = Option<Uuid>)]
    listing_id: Option<String>,
    #[param(schema_with = status_param)]
    status: Option<String>,
    #[param(schema_with = channel_param)]
    channel: Option<String>,
    /// Check-in on or after this date.
    #[param(value_type = Option<chrono::NaiveDate>)]
    start_date: Option<String>,
    /// Check-in on or before this date (not before startDate).
    #[param(value_type = Option<chrono::NaiveDate>)]
    end_date: Option<String>,
}

/// Reservations, newest check-in first.
#[utoipa::path(get, operation_id = "reporting_reservations_list", path = "/reporting/reservations", tag = "reporting",
    params(PageQuery, ReservationQuery),
    responses(
        (status = 200, description = "A page of reservations (`X-Cache: HIT` or `MISS`)", body = Page<ReportingReservation>),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 requests a minute per caller")))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<ReservationQuery>,
) -> Result<Response, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = ReservationFilter {
        listing_id: id_filter(&mut problems, "listingId", q.listing_id.as_deref()),
        listing_ids: Vec::new(),
        status: set_filter(
            &mut problems,
            "status",
            q.status.as_deref(),
            RESERVATION_STATUSES,
        ),
        channel: set_filter(&mut problems, "channel", q.channel.as_deref(), CHANNELS),
        start: date_filter(&mut problems, "startDate", q.start_date.as_deref()),
        end: date_filter(&mut problems, "endDate", q.end_date.as_deref()),
    };
    if let (Some(start), Some(end)) = (filter.start, filter.end)
        && end < start
    {
        problems.push("endDate", "out_of_range", "must not be before startDate");
    }
    problems.finish()?;
    let key = CacheKey::new("/reporting/reservations")
        .page(page)
        .filter("listingId", filter.listing_id)
        .filter("status", filter.status)
        .filter("channel", filter.channel)
        .filter("startDate", filter.start)
        .filter("endDate", filter.end);
    Ok(cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let found = reservations::list_reservations(&mut conn, &filter, page).await?;
        Ok::<_, AppError>(JsonPageAnswer::new(found, page))
    })
    .await)
}

/// One reservation, with its tax and commissions.
#[utoipa::path(get, operation_id = "reporting_reservations_get", path = "/reporting/reservations/{id}", tag = "reporting",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "The reservation (`X-Cache: HIT` or `MISS`)", body = ReportingReservation),
        (status = 404, description = "No such reservation"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 requests a minute per caller")))]
pub async fn get(State(state): State<AppState>, ApiPath(id): ApiPath<Uuid>) -> Response {
    let key = CacheKey::new(format!("/reporting/reservations/{id}"));
    cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let reservation = reservations::get_reservation(&mut conn, id).await?;
        Ok::<_, AppError>(Json(reservation))
    })
    .await
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get))
}
