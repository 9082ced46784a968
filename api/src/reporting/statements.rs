//! `GET /reporting/owner-statements`: an owner's monthly statement
//! (`domain::reporting::statements`). The same statement is an export (`type: ownerStatement`,
//! [`super::export`]).

use axum::{Json, extract::State};
use domain::{
    Problems,
    reporting::statements::{self, Month},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{error::AppError, extract::ApiQuery, query::id_filter, state::AppState};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct StatementQuery {
    /// The owner (`/management/owners`; required).
    #[param(value_type = Uuid)]
    owner_id: Option<String>,
    /// `YYYY-MM`; default the month before this one (the company's, `BUSINESS_TIME_ZONE`).
    #[param(value_type = Option<String>, pattern = "^[0-9]{4}-[0-9]{2}$")]
    month: Option<String>,
}

/// The statement's month from the query: `YYYY-MM`, else the last whole month.
pub fn read_month(
    problems: &mut Problems,
    raw: Option<&str>,
    today: chrono::NaiveDate,
) -> Option<Month> {
    match raw {
        None => Month::before(today),
        Some(raw) => {
            let month = Month::parse(raw);
            if month.is_none() {
                problems.push(
                    "month",
                    "invalid_format",
                    "month must be a month as YYYY-MM, from 1900-01",
                );
            }
            month
        }
    }
}

/// Documentation of the statement's JSON.
#[allow(dead_code)]
mod doc {
    use super::*;
    use chrono::NaiveDate;

    #[derive(Serialize, ToSchema)]
    pub struct Named {
        id: Uuid,
        name: String,
    }

    /// A currency's sums.
    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StatementTotals {
        currency: String,
        nights: i64,
        gross: f64,
        channel_commission: f64,
        net: f64,
        management_fee: f64,
        owner_costs: f64,
        /// `net − managementFee − ownerCosts`: owed to the owner (negative: owed by the owner).
        balance: f64,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StatementStay {
        reservation_id: Uuid,
        pms_id: i64,
        listing: String,
        guest_name: Option<String>,
        channel: String,
        check_in: NaiveDate,
        check_out: NaiveDate,
        /// Nights inside the month.
        nights: i32,
        /// Null: the PMS gave none (nights only, no money: the amounts are null too).
        currency: Option<String>,
        gross: Option<f64>,
        channel_commission: Option<f64>,
        net: Option<f64>,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StatementCost {
        work_order_id: Uuid,
        title: String,
        /// The company's day the work order was completed.
        completed_on: NaiveDate,
        kind: String,
        description: String,
        amount: f64,
        currency: String,
    }

    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StatementVilla {
        villa: Named,
        stays: Vec<StatementStay>,
        owner_costs: Vec<StatementCost>,
        /// Per currency, the sums of its lines.
        totals: Vec<StatementTotals>,
    }

    /// An owner's statement of a month.
    #[derive(Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct OwnerStatement {
        owner: Named,
        /// `YYYY-MM`.
        month: String,
        from: NaiveDate,
        to: NaiveDate,
        management_fee_percent: Option<f64>,
        villas: Vec<StatementVilla>,
        /// Per currency, the sums of the villas'.
        totals: Vec<StatementTotals>,
        /// How each figure is made.
        definitions: String,
    }
}

/// An owner's statement of a month: per villa the month's stays (nights, gross, channel
/// commission, net), the owner-billed costs of the work orders completed that month, and per
/// currency the management fee and the balance owed to the owner. Every total is the sum of its
/// lines; gross is the dashboard's revenue of the villa's listings (`definitions` says how each
/// figure is made).
#[utoipa::path(get, operation_id = "reporting_owner_statements_get", path = "/reporting/owner-statements", tag = "reporting",
    params(StatementQuery),
    responses(
        (status = 200, body = doc::OwnerStatement, description = "The statement"),
        (status = 400, description = "VALIDATION_ERROR: ownerId missing or not a UUID, month not YYYY-MM"),
        (status = 404, description = "OWNER_NOT_FOUND"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 requests a minute per caller")))]
pub async fn get(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<StatementQuery>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let owner = id_filter(&mut problems, "ownerId", q.owner_id.as_deref());
    if q.owner_id.is_none() {
        problems.push("ownerId", "required", "ownerId is required");
    }
    let zone = state.core.business_time_zone;
    let month = read_month(&mut problems, q.month.as_deref(), zone.today());
    let (owner, month) = problems.finish_with((|| Some((owner?, month?)))())?;
    let mut conn = state.pool.acquire().await?;
    let statement = statements::statement(&mut conn, owner, month, zone).await?;
    Ok(Json(statement.to_json()))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get))
}
