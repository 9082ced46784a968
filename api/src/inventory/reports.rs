//! `/inventory/reports`: stock, movements and valuation, computed on request. Quantities are
//! summed per unit and values per currency; every report carries `asOf`.

use std::collections::HashMap;

use axum::{Json, extract::State};
use chrono::{DateTime, NaiveDate, Utc};
use domain::{
    Problems,
    inventory::reports::{self, Filter},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    error::AppError,
    extract::ApiQuery,
    query::{date_filter, id_filter},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    #[param(value_type = Option<Uuid>)]
    property_id: Option<String>,
    #[param(value_type = Option<Uuid>)]
    location_id: Option<String>,
    /// A category code; the categories under it are included.
    category: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MovementReportQuery {
    #[param(value_type = Option<Uuid>)]
    property_id: Option<String>,
    #[param(value_type = Option<Uuid>)]
    location_id: Option<String>,
    /// A category code; the categories under it are included.
    category: Option<String>,
    /// First day (inclusive; days are the company's, `BUSINESS_TIME_ZONE`); default 30 days
    /// before `endDate`.
    #[param(value_type = Option<NaiveDate>)]
    start_date: Option<String>,
    /// Last day (inclusive); default today, the company's day.
    #[param(value_type = Option<NaiveDate>)]
    end_date: Option<String>,
}

/// The longest period a movement report covers.
const MAX_PERIOD_DAYS: i64 = 3_660;

/// Documentation of the reports' JSON (built in SQL; the tests validate every answer).
#[allow(dead_code)]
mod doc {
    use super::*;

    #[derive(Serialize, ToSchema)]
    pub struct PropertyRef {
        id: Uuid,
        name: String,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StockRow {
        property: PropertyRef,
        category: String,
        item_count: i64,
        /// Unit → quantity held.
        quantity_by_unit: HashMap<String, f64>,
        at_or_below_minimum: i64,
        out_of_stock: i64,
        /// Unit → quantity in transit towards the property.
        in_transit_by_unit: HashMap<String, f64>,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StockTotals {
        item_count: i64,
        at_or_below_minimum: i64,
        out_of_stock: i64,
    }

    /// Stock per property and category.
    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StockReport {
        as_of: DateTime<Utc>,
        rows: Vec<StockRow>,
        totals: StockTotals,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Flow {
        quantity_by_unit: HashMap<String, f64>,
        value_by_currency: HashMap<String, f64>,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct TypeRow {
        #[schema(rename = "type")]
        kind: String,
        count: i64,
        quantity_by_unit: HashMap<String, f64>,
        /// Currency → quantity × unit cost.
        value_by_currency: HashMap<String, f64>,
    }

    #[derive(Serialize, ToSchema)]
    pub struct PropertyFlow {
        property: PropertyRef,
        #[schema(rename = "in")]
        incoming: Flow,
        out: Flow,
    }

    /// Movements in a period.
    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct MovementReport {
        as_of: DateTime<Utc>,
        start_date: NaiveDate,
        end_date: NaiveDate,
        by_type: Vec<TypeRow>,
        by_property: Vec<PropertyFlow>,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ValuationRow {
        property: PropertyRef,
        category: String,
        currency: String,
        item_count: i64,
        /// Items without a unit cost (not in the value).
        unvalued_item_count: i64,
        value: f64,
    }

    #[derive(Serialize, ToSchema)]
    pub struct CurrencyTotal {
        currency: String,
        value: f64,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ValuableItem {
        id: Uuid,
        name: String,
        sku: String,
        property: PropertyRef,
        category: String,
        quantity: f64,
        unit: String,
        unit_cost: f64,
        currency: String,
        value: f64,
    }

    /// Stock value per property, category and currency.
    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ValuationReport {
        as_of: DateTime<Utc>,
        rows: Vec<ValuationRow>,
        /// Per currency, never summed across currencies.
        totals: Vec<CurrencyTotal>,
        /// The 10 most valuable items.
        top_items: Vec<ValuableItem>,
    }
}

/// The filters of a report; a category must name a category.
async fn filter_of(
    conn: &mut sqlx::PgConnection,
    problems: &mut Problems,
    property: Option<&str>,
    location: Option<&str>,
    category: Option<&str>,
) -> Result<Filter, AppError> {
    Ok(Filter {
        category: super::category_filter(conn, problems, category).await?,
        property_id: id_filter(problems, "propertyId", property),
        location_id: id_filter(problems, "locationId", location),
    })
}

/// Per property and category: items, quantity per unit, items at or below their minimum, items
/// out of stock, and quantities in transit towards the property.
#[utoipa::path(get, operation_id = "inventory_reports_stock", path = "/inventory/reports/stock", tag = "inventory",
    params(ReportQuery),
    responses((status = 200, body = doc::StockReport)))]
pub async fn stock(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let mut conn = state.pool.acquire().await?;
    let filter = filter_of(
        &mut conn,
        &mut problems,
        q.property_id.as_deref(),
        q.location_id.as_deref(),
        q.category.as_deref(),
    )
    .await?;
    problems.finish()?;
    Ok(Json(reports::stock(&mut conn, &filter).await?))
}

/// Per movement type in the period: count, quantity per unit, value per currency; per property,
/// what came in and went out.
#[utoipa::path(get, operation_id = "inventory_reports_movements", path = "/inventory/reports/movements", tag = "inventory",
    params(MovementReportQuery),
    responses((status = 200, body = doc::MovementReport)))]
pub async fn movements(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<MovementReportQuery>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let mut conn = state.pool.acquire().await?;
    let filter = filter_of(
        &mut conn,
        &mut problems,
        q.property_id.as_deref(),
        q.location_id.as_deref(),
        q.category.as_deref(),
    )
    .await?;
    let start = date_filter(&mut problems, "startDate", q.start_date.as_deref());
    let end = date_filter(&mut problems, "endDate", q.end_date.as_deref());
    problems.finish()?;
    // "Today" is the company's day (BUSINESS_TIME_ZONE), and so are the period's days.
    let zone = state.core.business_time_zone;
    let end = end.unwrap_or_else(|| zone.today());
    let start = start.unwrap_or(end - chrono::Days::new(30));
    if end < start {
        return Err(AppError::invalid(
            "endDate",
            "out_of_range",
            "must not be before startDate",
        ));
    }
    if (end - start).num_days() > MAX_PERIOD_DAYS {
        return Err(AppError::invalid(
            "startDate",
            "out_of_range",
            format!("a report covers at most {MAX_PERIOD_DAYS} days"),
        ));
    }
    Ok(Json(
        reports::movements(&mut conn, &filter, start, end, zone).await?,
    ))
}

/// The stock value per property, category and currency, totals per currency, and the 10 most
/// valuable items.
#[utoipa::path(get, operation_id = "inventory_reports_valuation", path = "/inventory/reports/valuation", tag = "inventory",
    params(ReportQuery),
    responses((status = 200, body = doc::ValuationReport)))]
pub async fn valuation(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let mut conn = state.pool.acquire().await?;
    let filter = filter_of(
        &mut conn,
        &mut problems,
        q.property_id.as_deref(),
        q.location_id.as_deref(),
        q.category.as_deref(),
    )
    .await?;
    problems.finish()?;
    Ok(Json(reports::valuation(&mut conn, &filter).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ForecastQuery {
    /// The villa whose items are forecast (required).
    #[param(value_type = Uuid)]
    property_id: Option<String>,
    /// The horizon in days from today (the company's day), 1 to 120; default 30.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 120)]
    days: Option<String>,
}

/// Documentation of the forecast's JSON (built in `domain::inventory::forecast`).
#[allow(dead_code)]
mod forecast_doc {
    use super::*;

    /// One day of an item's forecast.
    #[derive(Serialize, ToSchema)]
    pub struct ForecastDay {
        date: NaiveDate,
        /// The expected use that day.
        #[schema(rename = "use")]
        used: f64,
        /// The projected balance at the end of the day (negative: short by that much).
        balance: f64,
    }

    /// An item's forecast.
    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ForecastItem {
        item_id: Uuid,
        name: String,
        sku: String,
        unit: String,
        /// Held now.
        quantity: f64,
        min_stock: f64,
        max_stock: Option<f64>,
        use_per_stay: Option<f64>,
        use_per_night: Option<f64>,
        /// The sum of the days' use.
        expected_use: f64,
        /// The projected balance at the end of the last day: `quantity − expectedUse`.
        balance_at_horizon: f64,
        /// The first day whose use brings the stock to 0 or below; null when it lasts.
        run_out_date: Option<NaiveDate>,
        /// The first day whose balance is below `minStock`; null when none is.
        below_minimum_on: Option<NaiveDate>,
        /// What to order now to be at `maxStock` (else `minStock`) at the horizon; 0 when it is.
        order_quantity: f64,
        days: Vec<ForecastDay>,
    }

    /// A page of the forecast.
    #[derive(Serialize, ToSchema)]
    pub struct Forecast {
        data: Vec<ForecastItem>,
        pagination: domain::pagination::Pagination,
        property: super::doc::PropertyRef,
        /// The first day (today, the company's) and the last day of the horizon.
        from: NaiveDate,
        to: NaiveDate,
        days: u32,
    }
}

/// The supplies forecast of a villa's items, a page of them by name: per item and day the
/// expected use and the projected balance, the run-out date and what to order now to reach
/// `maxStock` at the horizon. The use comes from the stays on the books (CONFIRMED, and owner
/// stays): the task rules' consumables of each occurrence (`perStay + perNight × nights`, on the
/// occurrence's day, drawn from the villa's item of that SKU holding the most, less occurrences
/// whose work order drew them already or was cancelled) and the item's own `usePerStay` (on the
/// checkout day) and `usePerNight` (each occupied night). Purchases to come are not counted. The
/// FORECAST_SHORTAGE alerts read the same figures over `FORECAST_ALERT_DAYS`.
#[utoipa::path(get, operation_id = "inventory_reports_forecast", path = "/inventory/reports/forecast", tag = "inventory",
    params(crate::paging::PageQuery, ForecastQuery),
    responses((status = 200, body = forecast_doc::Forecast),
        (status = 404, description = "`PROPERTY_NOT_FOUND`: no such villa")))]
pub async fn forecast(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<crate::paging::PageQuery>,
    ApiQuery(q): ApiQuery<ForecastQuery>,
) -> Result<crate::paging::JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let property = id_filter(&mut problems, "propertyId", q.property_id.as_deref());
    if q.property_id.is_none() {
        problems.push("propertyId", "required", "propertyId is required");
    }
    let max = domain::inventory::forecast::MAX_DAYS;
    let days = match q.days.as_deref().map(str::trim) {
        None => Some(domain::inventory::forecast::DEFAULT_DAYS),
        Some(raw) => match raw.parse::<u32>() {
            Ok(d) if (1..=max).contains(&d) => Some(d),
            _ => {
                problems.push(
                    "days",
                    "out_of_range",
                    format!("days must be a whole number from 1 to {max}"),
                );
                None
            }
        },
    };
    let (property, days) = problems.finish_with((|| Some((property?, days?)))())?;
    let mut conn = state.pool.acquire().await?;
    let today = state.core.business_time_zone.today();
    Ok(crate::paging::JsonPageAnswer::new(
        domain::inventory::forecast::report(&mut conn, property, today, days, page).await?,
        page,
    ))
}

pub fn router() -> utoipa_axum::router::OpenApiRouter<AppState> {
    use utoipa_axum::routes;
    utoipa_axum::router::OpenApiRouter::new()
        .routes(routes!(stock))
        .routes(routes!(movements))
        .routes(routes!(valuation))
        .routes(routes!(forecast))
}
