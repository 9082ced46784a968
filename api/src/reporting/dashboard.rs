//! `/reporting/dashboard`: the figures of the listings in scope over a period (KPIs with the
//! previous period beside them, charts, occupancy night by night and per listing), and the stays
//! arriving. Every formula is `domain::reporting::figures`' (its `DEFINITIONS` are the
//! description of each answer): the listing metrics and the exports read the same ones, so the
//! numbers agree wherever they are shown.
//!
//! Every parameter is read as text and parsed here or by the domain's parsers, so that every bad
//! value is a 400 naming its parameter; the period's defaults follow the company's day
//! (`BUSINESS_TIME_ZONE`).

use axum::{Json, extract::State, response::Response};
use chrono::NaiveDate;
use domain::{
    Problems,
    reporting::{
        RESERVATION_STATUSES,
        figures::{
            self, CHART_PERIODS, CHART_TYPES, ChartType, Currency, Granularity,
            MAX_MONTHLY_PERIOD_NIGHTS, MAX_PERIOD_NIGHTS, Period, Scope,
        },
        reservations,
    },
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{
    cache::{self, CacheKey},
    reservations::ReportingReservation,
};
use crate::{
    error::AppError, extract::ApiQuery, paging::Items, query::set_filter, state::AppState,
};

/// How many stays `/dashboard/reservations` answers unless `limit` says otherwise.
pub const DEFAULT_UPCOMING: i64 = 10;
/// The most it answers.
pub const MAX_UPCOMING: i64 = 100;

/// The period of the figures. Both bounds are nights, included.
#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PeriodQuery {
    /// The first night of the period, YYYY-MM-DD (default: 29 days before endDate, so 30
    /// nights). Not after endDate.
    #[param(value_type = Option<NaiveDate>)]
    pub start_date: Option<String>,
    /// The last night of the period, included, YYYY-MM-DD (default: today, the company's day,
    /// BUSINESS_TIME_ZONE). At most 366 nights from startDate (730 for monthly charts).
    #[param(value_type = Option<NaiveDate>)]
    pub end_date: Option<String>,
}

impl PeriodQuery {
    /// The period asked for, defaults applied; each problem recorded on its parameter.
    pub fn read(&self, problems: &mut Problems, today: NaiveDate, max: i64) -> Option<Period> {
        Period::parse(
            problems,
            self.start_date.as_deref(),
            self.end_date.as_deref(),
            today,
            max,
        )
    }
}

/// The listings the figures are about.
#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ScopeQuery {
    /// Listing ids (ours, not the PMS's), comma-separated, at most 500: exactly those listings,
    /// whatever their status. Default: every ACTIVE listing. An unknown id is a 400 naming it.
    pub listing_ids: Option<String>,
}

impl ScopeQuery {
    /// The ids as sent, each once, in their order (checked against the listings by
    /// [`Scope::resolve`]).
    pub fn read(&self, problems: &mut Problems) -> Vec<Uuid> {
        figures::parse_listing_ids(problems, "listingIds", self.listing_ids.as_deref())
    }
}

/// The currency of the money figures.
#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct CurrencyQuery {
    /// ISO 4217 code of the money figures, any letter case (default REPORTING_CURRENCY, itself
    /// THB unless set). Stays in other currencies are left out of money figures (revenue, ADR,
    /// RevPAR), never converted; they still count as booked nights.
    #[param(pattern = "^[A-Za-z]{3}$")]
    pub currency: Option<String>,
}

impl CurrencyQuery {
    pub fn read(&self, problems: &mut Problems, default: &Currency) -> Option<Currency> {
        Currency::parse(problems, "currency", self.currency.as_deref(), default)
    }
}

fn chart_type_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(CHART_TYPES)
}

fn chart_period_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(CHART_PERIODS)
}

fn status_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(RESERVATION_STATUSES)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ChartQuery {
    /// `revenue` (default): the revenue of each bucket, in `currency`; `occupancy`: its
    /// occupancy in percent.
    #[serde(rename = "type")]
    #[param(schema_with = chart_type_param)]
    kind: Option<String>,
    /// The buckets: `daily` (default), `weekly` (weeks from Monday) or `monthly` (calendar
    /// months; periods up to 730 nights). The buckets at the period's edges count only its
    /// nights.
    #[param(schema_with = chart_period_param)]
    period: Option<String>,
}

impl ChartQuery {
    fn read(&self, problems: &mut Problems) -> (Option<ChartType>, Option<Granularity>) {
        let kind = match present(self.kind.as_deref()) {
            None => Some(ChartType::Revenue),
            Some(raw) => {
                let found = ChartType::parse(raw);
                if found.is_none() {
                    problems.push(
                        "type",
                        "invalid_value",
                        format!("type must be one of {}", CHART_TYPES.join(", ")),
                    );
                }
                found
            }
        };
        let granularity = match present(self.period.as_deref()) {
            None => Some(Granularity::Daily),
            Some(raw) => {
                let found = Granularity::parse(raw);
                if found.is_none() {
                    problems.push(
                        "period",
                        "invalid_value",
                        format!("period must be one of {}", CHART_PERIODS.join(", ")),
                    );
                }
                found
            }
        };
        (kind, granularity)
    }
}

/// A parameter's value, `None` when absent or blank (blank reads as absent, as in the lists).
fn present(raw: Option<&str>) -> Option<&str> {
    raw.map(str::trim).filter(|s| !s.is_empty())
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct UpcomingQuery {
    /// How many stays, 1 to 100 (default 10).
    limit: Option<String>,
    /// The stays' status (default CONFIRMED).
    #[param(schema_with = status_param)]
    status: Option<String>,
}

impl UpcomingQuery {
    fn read(&self, problems: &mut Problems) -> (i64, &'static str) {
        let limit = match self.limit.as_deref().map(|raw| raw.trim().parse::<i64>()) {
            None => DEFAULT_UPCOMING,
            Some(Ok(limit)) if (1..=MAX_UPCOMING).contains(&limit) => limit,
            Some(_) => {
                problems.push(
                    "limit",
                    "out_of_range",
                    format!("limit must be a whole number from 1 to {MAX_UPCOMING}"),
                );
                DEFAULT_UPCOMING
            }
        };
        let status = set_filter(
            problems,
            "status",
            self.status.as_deref(),
            RESERVATION_STATUSES,
        )
        .unwrap_or("CONFIRMED");
        (limit, status)
    }
}

/// `{startDate, endDate}` of a period.
fn period_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "required": ["startDate", "endDate"],
        "properties": {
            "startDate": {"type": "string", "format": "date"},
            "endDate": {"type": "string", "format": "date", "description": "Included."}
        }
    })
}

/// One KPI: its value under `name`, the previous period's, and the change between them.
fn figure_schema(name: &str, kind: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "required": [name, "previous", "change"],
        "properties": {
            name: {"type": kind},
            "previous": {"type": kind, "description": "The same figure over the previous period."},
            "change": {"type": ["number", "null"],
                "description": "(value − previous) / previous × 100 of the rounded figures, rounded to 2 decimals; null when previous is 0."}
        }
    })
}

crate::computed_schema!(
    /// The KPIs of the listings in scope over the period, beside the previous period's.
    DashboardMetrics => json!({
        "type": "object",
        "description": format!("{} {} {}", figures::DEFINITIONS, figures::PERIOD_DEFINITION, figures::CURRENCY_DEFINITION),
        "required": ["period", "previousPeriod", "currency", "revenue", "occupancy", "adr", "bookings", "revpar"],
        "properties": {
            "period": period_schema("The period asked for (defaults applied)."),
            "previousPeriod": period_schema("The period of the same length that ends the night before startDate."),
            "currency": {"type": "string", "description": "ISO 4217: the currency of revenue, adr and revpar."},
            "listingIds": {"type": ["array", "null"], "items": {"type": "string", "format": "uuid"},
                "description": "The listings asked for; null for every ACTIVE listing."},
            "revenue": figure_schema("total", "number", "Revenue: each counted stay's totalAmount spread evenly over its nights, summed over the nights inside the period, in `currency`."),
            "occupancy": figure_schema("rate", "number", "Occupancy in percent: booked nights / available nights × 100."),
            "adr": figure_schema("value", "number", "Average daily rate: revenue / booked nights of the stays in `currency`."),
            "bookings": figure_schema("count", "integer", "Counted stays checking in inside the period (any currency)."),
            "revpar": figure_schema("value", "number", "Revenue per available night: revenue / available nights."),
            "nights": {
                "type": "object",
                "description": "The nights behind occupancy, ADR and RevPAR.",
                "properties": {
                    "booked": {"type": "integer", "minimum": 0},
                    "available": {"type": "integer", "minimum": 0},
                    "previousBooked": {"type": "integer", "minimum": 0},
                    "previousAvailable": {"type": "integer", "minimum": 0},
                    "priced": {"type": "integer", "minimum": 0, "description": "Booked nights of the stays in `currency`: ADR's denominator."},
                    "previousPriced": {"type": "integer", "minimum": 0}
                }
            }
        }
    })
);

crate::computed_schema!(
    /// One series of figures per bucket of the period, then the previous period's.
    DashboardChart => json!({
        "type": "object",
        "description": format!("{} {}", figures::DEFINITIONS, figures::PERIOD_DEFINITION),
        "required": ["type", "period", "startDate", "endDate", "labels", "datasets"],
        "properties": {
            "type": {"type": "string", "enum": CHART_TYPES},
            "period": {"type": "string", "enum": CHART_PERIODS, "description": "The buckets (the `period` parameter)."},
            "startDate": {"type": "string", "format": "date"},
            "endDate": {"type": "string", "format": "date"},
            "currency": {"type": "string", "description": "ISO 4217: the currency of revenue figures."},
            "labels": {"type": "array", "items": {"type": "string"},
                "description": "One per bucket: its first night, YYYY-MM-DD (daily; weekly, a week starting on Monday and labelled by its Monday, the first and last weeks counting only their nights inside the period), or its month, YYYY-MM (monthly)."},
            "datasets": {
                "type": "array",
                "description": "First the period's series (`Revenue` or `Occupancy`), then `Previous period`: the same figure over the previous period's buckets (each moved back by the period's length), label by label.",
                "items": {
                    "type": "object",
                    "required": ["label", "data"],
                    "properties": {
                        "label": {"type": "string", "enum": ["Revenue", "Occupancy", "Previous period"]},
                        "data": {"type": "array", "items": {"type": "number"}, "description": "One figure per label, rounded to 2 decimals."},
                        "startDate": {"type": "string", "format": "date", "description": "Previous period: its first night."},
                        "endDate": {"type": "string", "format": "date", "description": "Previous period: its last night."}
                    }
                }
            }
        }
    })
);

crate::computed_schema!(
    /// Occupancy night by night and per listing.
    DashboardOccupancy => json!({
        "type": "object",
        "description": format!("{} {}", figures::DEFINITIONS, figures::PERIOD_DEFINITION),
        "required": ["startDate", "endDate", "calendar", "byProperty"],
        "properties": {
            "startDate": {"type": "string", "format": "date"},
            "endDate": {"type": "string", "format": "date"},
            "calendar": {
                "type": "array",
                "description": "One entry per night of the period, in date order; the listings in scope summed.",
                "items": {
                    "type": "object",
                    "required": ["date", "occupancy", "bookedNights", "availableNights"],
                    "properties": {
                        "date": {"type": "string", "format": "date"},
                        "occupancy": {"type": "number", "minimum": 0},
                        "bookedNights": {"type": "integer", "minimum": 0},
                        "availableNights": {"type": "integer", "minimum": 0}
                    }
                }
            },
            "byProperty": {
                "type": "array",
                "description": "One entry per listing in scope over the whole period, highest occupancy first, then by name.",
                "items": {
                    "type": "object",
                    "required": ["listingId", "name", "occupancy", "nightly"],
                    "properties": {
                        "listingId": {"type": "string", "format": "uuid"},
                        "pmsId": {"type": "integer"},
                        "name": {"type": "string"},
                        "occupancy": {"type": "number", "minimum": 0},
                        "bookedNights": {"type": "integer", "minimum": 0},
                        "availableNights": {"type": "integer", "minimum": 0},
                        "nightly": {
                            "type": "object",
                            "description": "The listing night by night (a heat map of listings × nights): one figure per night of `calendar`, in its order. A night is available (1) while the listing is active and booked (1) when a stay covers it.",
                            "required": ["bookedNights", "availableNights"],
                            "properties": {
                                "bookedNights": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                                "availableNights": {"type": "array", "items": {"type": "integer", "minimum": 0}}
                            }
                        }
                    }
                }
            }
        }
    })
);

/// The KPIs of the listings in scope over the period: revenue, occupancy, ADR, bookings and
/// RevPAR, each with the previous period's figure and the change in percent.
#[utoipa::path(get, operation_id = "reporting_dashboard_metrics", path = "/reporting/dashboard/metrics", tag = "reporting",
    params(PeriodQuery, ScopeQuery, CurrencyQuery),
    responses(
        (status = 200, description = "The figures (`X-Cache: HIT` or `MISS`); the definitions are the schema's description", body = DashboardMetrics),
        (status = 400, description = "VALIDATION_ERROR: a malformed date, startDate after endDate, more than 366 nights, a malformed or unknown listing id, a malformed currency; the message names the parameter"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 120 dashboard requests a minute per caller")))]
pub async fn metrics(
    State(state): State<AppState>,
    ApiQuery(period): ApiQuery<PeriodQuery>,
    ApiQuery(scope): ApiQuery<ScopeQuery>,
    ApiQuery(currency): ApiQuery<CurrencyQuery>,
) -> Result<Response, AppError> {
    let today = state.core.business_time_zone.today();
    let mut problems = Problems::new();
    let period = period.read(&mut problems, today, MAX_PERIOD_NIGHTS);
    let ids = scope.read(&mut problems);
    let currency = currency.read(&mut problems, &state.core.reporting.currency);
    let (period, currency) = problems.finish_with(period.zip(currency))?;
    let key = CacheKey::new("/reporting/dashboard/metrics")
        .period(period)
        .listing_ids(&ids)
        .param("currency", &currency);
    Ok(cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let scope = Scope::resolve(&mut conn, ids).await?;
        let figures = figures::metrics(&mut conn, &scope, period, &currency).await?;
        Ok::<_, AppError>(Json(figures))
    })
    .await)
}

/// One figure (revenue or occupancy) per day, week or month of the period, with the previous
/// period's series beside it.
#[utoipa::path(get, operation_id = "reporting_dashboard_charts", path = "/reporting/dashboard/charts", tag = "reporting",
    params(ChartQuery, PeriodQuery, ScopeQuery, CurrencyQuery),
    responses(
        (status = 200, description = "The chart (`X-Cache: HIT` or `MISS`)", body = DashboardChart),
        (status = 400, description = "VALIDATION_ERROR: an unknown type or period, a malformed date, startDate after endDate, more than 366 nights (730 monthly), a malformed or unknown listing id, a malformed currency; the message names the parameter"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 120 dashboard requests a minute per caller")))]
pub async fn charts(
    State(state): State<AppState>,
    ApiQuery(chart): ApiQuery<ChartQuery>,
    ApiQuery(period): ApiQuery<PeriodQuery>,
    ApiQuery(scope): ApiQuery<ScopeQuery>,
    ApiQuery(currency): ApiQuery<CurrencyQuery>,
) -> Result<Response, AppError> {
    let today = state.core.business_time_zone.today();
    let mut problems = Problems::new();
    let (kind, granularity) = chart.read(&mut problems);
    // An unknown period is its own problem: the span is checked against the widest limit, so
    // that only a span too long for every period is named too.
    let max_nights = granularity.map_or(MAX_MONTHLY_PERIOD_NIGHTS, |g| g.max_nights());
    let period = period.read(&mut problems, today, max_nights);
    let ids = scope.read(&mut problems);
    let currency = currency.read(&mut problems, &state.core.reporting.currency);
    let parsed = kind
        .zip(granularity)
        .zip(period.zip(currency))
        .map(|((kind, granularity), (period, currency))| (kind, granularity, period, currency));
    let (kind, granularity, period, currency) = problems.finish_with(parsed)?;
    let key = CacheKey::new("/reporting/dashboard/charts")
        .param("type", kind.as_str())
        .param("period", granularity.as_str())
        .period(period)
        .listing_ids(&ids)
        .param("currency", &currency);
    Ok(cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let scope = Scope::resolve(&mut conn, ids).await?;
        let chart = figures::chart(&mut conn, &scope, period, kind, granularity, &currency).await?;
        Ok::<_, AppError>(Json(chart))
    })
    .await)
}

/// Occupancy of the listings in scope night by night (`calendar`), and per listing over the
/// whole period (`byProperty`).
#[utoipa::path(get, operation_id = "reporting_dashboard_occupancy", path = "/reporting/dashboard/occupancy", tag = "reporting",
    params(PeriodQuery, ScopeQuery),
    responses(
        (status = 200, description = "The occupancy (`X-Cache: HIT` or `MISS`)", body = DashboardOccupancy),
        (status = 400, description = "VALIDATION_ERROR: a malformed date, startDate after endDate, more than 366 nights, a malformed or unknown listing id; the message names the parameter"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 120 dashboard requests a minute per caller")))]
pub async fn occupancy(
    State(state): State<AppState>,
    ApiQuery(period): ApiQuery<PeriodQuery>,
    ApiQuery(scope): ApiQuery<ScopeQuery>,
) -> Result<Response, AppError> {
    let today = state.core.business_time_zone.today();
    let mut problems = Problems::new();
    let period = period.read(&mut problems, today, MAX_PERIOD_NIGHTS);
    let ids = scope.read(&mut problems);
    let period = problems.finish_with(period)?;
    let key = CacheKey::new("/reporting/dashboard/occupancy")
        .period(period)
        .listing_ids(&ids);
    Ok(cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let scope = Scope::resolve(&mut conn, ids).await?;
        let occupancy = figures::occupancy(&mut conn, &scope, period).await?;
        Ok::<_, AppError>(Json(occupancy))
    })
    .await)
}

/// The stays arriving from today on and those in progress (check-out after today, the
/// company's day), soonest check-in first, in the reservation shape of `/reporting/reservations`.
#[utoipa::path(get, operation_id = "reporting_dashboard_reservations", path = "/reporting/dashboard/reservations", tag = "reporting",
    params(UpcomingQuery),
    responses(
        (status = 200, description = "The stays (`X-Cache: HIT` or `MISS`)", body = Items<ReportingReservation>),
        (status = 400, description = "VALIDATION_ERROR: limit not a whole number from 1 to 100, or an unknown status"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 120 dashboard requests a minute per caller")))]
pub async fn upcoming(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<UpcomingQuery>,
) -> Result<Response, AppError> {
    let mut problems = Problems::new();
    let (limit, status) = q.read(&mut problems);
    problems.finish()?;
    let today = state.core.business_time_zone.today();
    let key = CacheKey::new("/reporting/dashboard/reservations")
        .param("limit", limit)
        .param("status", status)
        .today(today);
    Ok(cache::answer(&state, key, async {
        let mut conn = state.pool.acquire().await?;
        let stays = reservations::upcoming(&mut conn, today, status, limit).await?;
        Ok::<_, AppError>(Json(stays))
    })
    .await)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(metrics))
        .routes(routes!(charts))
        .routes(routes!(occupancy))
        .routes(routes!(upcoming))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(problems: Problems) -> Vec<String> {
        match problems.finish() {
            Ok(()) => Vec::new(),
            Err(domain::Error::Validation(found)) => found.into_iter().map(|f| f.field).collect(),
            Err(other) => vec![other.to_string()],
        }
    }

    fn read_upcoming(
        limit: Option<&str>,
        status: Option<&str>,
    ) -> Result<(i64, &'static str), Vec<String>> {
        let q = UpcomingQuery {
            limit: limit.map(str::to_owned),
            status: status.map(str::to_owned),
        };
        let mut problems = Problems::new();
        let read = q.read(&mut problems);
        let refused = fields(problems);
        if refused.is_empty() {
            Ok(read)
        } else {
            Err(refused)
        }
    }

    #[test]
    fn upcoming_parameters() {
        assert_eq!(read_upcoming(None, None), Ok((10, "CONFIRMED")));
        assert_eq!(
            read_upcoming(Some("100"), Some("owner_stay")),
            Ok((100, "OWNER_STAY"))
        );
        assert_eq!(read_upcoming(Some(" 1 "), Some("")), Ok((1, "CONFIRMED")));
        for bad in ["0", "101", "x", "", "2.5", "-1"] {
            assert_eq!(
                read_upcoming(Some(bad), None),
                Err(vec!["limit".into()]),
                "{bad:?}"
            );
        }
        assert_eq!(
            read_upcoming(Some("0"), Some("BOOKED")),
            Err(vec!["limit".into(), "status".into()])
        );
    }

    #[test]
    fn chart_parameters() {
        let read = |kind: Option<&str>, period: Option<&str>| {
            let q = ChartQuery {
                kind: kind.map(str::to_owned),
                period: period.map(str::to_owned),
            };
            let mut problems = Problems::new();
            let (kind, granularity) = q.read(&mut problems);
            (
                kind.map(|k| k.as_str()),
                granularity.map(|g| g.as_str()),
                fields(problems),
            )
        };
        assert_eq!(read(None, None), (Some("revenue"), Some("daily"), vec![]));
        assert_eq!(
            read(Some("Occupancy"), Some("MONTHLY")),
            (Some("occupancy"), Some("monthly"), vec![])
        );
        assert_eq!(
            read(Some("bookings"), Some("yearly")),
            (None, None, vec!["type".to_owned(), "period".to_owned()])
        );
    }
}
