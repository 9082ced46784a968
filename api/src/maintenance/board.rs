//! `/maintenance/turnovers`: the housekeeping board, each villa and day of a short range with its
//! checkouts, check-ins and the work orders the task rules made for it.

use axum::{Json, extract::State};
use chrono::{Days, NaiveDate};
use domain::{
    Problems,
    maintenance::{
        board::{self, DEFAULT_DAYS, MAX_DAYS, Range},
        views,
    },
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::id_filter;
use crate::{
    error::AppError, extract::ApiQuery, paging::Items, query::date_filter, state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct BoardQuery {
    /// The first day, YYYY-MM-DD (default: today, the company's day (BUSINESS_TIME_ZONE), or six
    /// days before `to` when only `to` is given).
    #[param(value_type = Option<NaiveDate>)]
    from: Option<String>,
    /// The last day, included, YYYY-MM-DD (default: six days after `from`). Not before `from`;
    /// at most 62 days from `from` to `to`.
    #[param(value_type = Option<NaiveDate>)]
    to: Option<String>,
    /// Only this villa (an unknown one: an empty board).
    #[param(value_type = Option<uuid::Uuid>)]
    villa_id: Option<String>,
}

impl BoardQuery {
    /// The range asked for, defaults applied; each problem recorded on its parameter.
    fn read(&self, problems: &mut Problems, today: NaiveDate) -> Option<Range> {
        let from = date_filter(problems, "from", self.from.as_deref());
        let to = date_filter(problems, "to", self.to.as_deref());
        let villa_id = id_filter(problems, "villaId", self.villa_id.as_deref());
        let bad_from = self.from.as_deref().is_some_and(|s| !s.trim().is_empty()) && from.is_none();
        let bad_to = self.to.as_deref().is_some_and(|s| !s.trim().is_empty()) && to.is_none();
        if bad_from || bad_to {
            return None;
        }
        let week = Days::new(DEFAULT_DAYS - 1);
        let (from, to) = match (from, to) {
            (Some(from), Some(to)) => (from, to),
            (Some(from), None) => (from, from.checked_add_days(week).unwrap_or(NaiveDate::MAX)),
            (None, Some(to)) => (to.checked_sub_days(week).unwrap_or(NaiveDate::MIN), to),
            (None, None) => (
                today,
                today.checked_add_days(week).unwrap_or(NaiveDate::MAX),
            ),
        };
        if to < from {
            problems.push(
                "to",
                "out_of_range",
                format!("to must not be before from ({from})"),
            );
            return None;
        }
        if (to - from).num_days() + 1 > MAX_DAYS {
            problems.push(
                "to",
                "out_of_range",
                format!("the board shows at most {MAX_DAYS} days (from {from})"),
            );
            return None;
        }
        Some(Range { from, to, villa_id })
    }
}

/// The housekeeping board: one entry per villa and day with a checkout or a check-in of a
/// CONFIRMED stay or an owner stay (on a listing linked to the villa), by date then villa name,
/// with the work orders generated from stays that are due that day.
#[utoipa::path(get, operation_id = "maintenance_turnovers_board", path = "/maintenance/turnovers", tag = "maintenance",
    params(BoardQuery),
    responses(
        (status = 200, body = Items<views::BoardDay>),
        (status = 400, description = "VALIDATION_ERROR: a malformed date or villaId, `to` before `from`, or more than 62 days")))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<BoardQuery>,
) -> Result<Json<Items<Value>>, AppError> {
    let today = state.core.business_time_zone.today();
    let mut problems = Problems::new();
    let range = q.read(&mut problems, today);
    let range = problems.finish_with(range)?;
    let mut conn = state.pool.acquire().await?;
    Ok(Json(Items {
        data: board::board(&mut conn, range).await?,
    }))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}
