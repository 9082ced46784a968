//! `/inventory/movements`: the ledger. Staff, managers and admins record stock in and out.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    inventory::{
        MOVEMENT_TYPES, POSTED_MOVEMENT_TYPES, REFERENCE_TYPES,
        movements::{self, Filter},
        views,
    },
    record::AMOUNT_MAX,
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::evaluate_alerts_of;
use crate::{
    auth::CurrentUser,
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiQuery},
    paging::{JsonPageAnswer, Page},
    query::{date_filter, id_filter, set_filter},
    state::AppState,
};

fn type_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(MOVEMENT_TYPES)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MovementQuery {
    #[param(value_type = Option<uuid::Uuid>)]
    item_id: Option<String>,
    #[serde(rename = "type")]
    #[param(rename = "type", schema_with = type_param)]
    kind: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    property_id: Option<String>,
    /// From this date (inclusive; the company's day, `BUSINESS_TIME_ZONE`).
    #[param(value_type = Option<chrono::NaiveDate>)]
    start_date: Option<String>,
    /// To this date (inclusive; the company's day).
    #[param(value_type = Option<chrono::NaiveDate>)]
    end_date: Option<String>,
}

/// Movements, newest first, with their item and property.
#[utoipa::path(get, operation_id = "inventory_movements_list", path = "/inventory/movements", tag = "inventory",
    params(PageQuery, MovementQuery),
    responses((status = 200, body = Page<views::MovementItem>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<MovementQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        item_id: id_filter(&mut problems, "itemId", q.item_id.as_deref()),
        kind: set_filter(&mut problems, "type", q.kind.as_deref(), MOVEMENT_TYPES),
        property_id: id_filter(&mut problems, "propertyId", q.property_id.as_deref()),
        start_date: date_filter(&mut problems, "startDate", q.start_date.as_deref()),
        end_date: date_filter(&mut problems, "endDate", q.end_date.as_deref()),
        zone: state.core.business_time_zone,
    };
    if let (Some(start), Some(end)) = (filter.start_date, filter.end_date)
        && end < start
    {
        problems.push("endDate", "out_of_range", "must not be before startDate");
    }
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        movements::list(&mut conn, &filter, page).await?,
        page,
    ))
}

crate::computed_schema!(
    /// A movement: PURCHASE and RETURN bring stock in, USE, DAMAGE and LOSS take it out (a
    /// positive quantity), ADJUSTMENT corrects it (a signed, non-zero quantity). INITIAL and the
    /// transfer types are written by the platform.
    MovementCreate => json!({
        "type": "object",
        "required": ["itemId", "type", "quantity"],
        "properties": {
            "itemId": {"type": "string", "format": "uuid"},
            "type": {"type": "string", "enum": POSTED_MOVEMENT_TYPES},
            "quantity": {"type": "number", "minimum": -AMOUNT_MAX, "maximum": AMOUNT_MAX,
                "description": "At most 3 decimal places; positive except for an ADJUSTMENT, never 0."},
            "unitCost": {"type": ["number", "null"], "minimum": 0, "maximum": AMOUNT_MAX,
                "description": "PURCHASE only: the price paid per unit (at most 4 decimal places)."},
            "notes": {"type": ["string", "null"], "maxLength": 2000},
            "referenceType": {"type": ["string", "null"], "enum": REFERENCE_TYPES.iter().copied().map(Some).chain([None]).collect::<Vec<_>>()},
            "referenceId": {"type": ["string", "null"], "maxLength": 100,
                "description": "Required with a referenceType; a WORK_ORDER reference is a work order's id."}
        }
    })
);

/// Records a movement. 409 `INSUFFICIENT_STOCK` with `details.available` and `details.requested`
/// when it would take the item below 0 (nothing is written); 404 for an unknown item.
#[utoipa::path(post, operation_id = "inventory_movements_create", path = "/inventory/movements", tag = "inventory",
    request_body = MovementCreate,
    responses((status = 201, body = views::Movement), (status = 404, description = "No such item in use"),
        (status = 409, description = "INSUFFICIENT_STOCK")))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let movement = movements::parse(&body, &mut problems);
    let movement = problems.finish_with(movement)?;
    let mut tx = state.pool.begin().await?;
    movements::check_reference(&mut tx, &movement).await?;
    let written = movements::apply(&mut tx, &movement, &user.subject).await?;
    let evaluation = evaluate_alerts_of(&mut tx, [movement.item_id]).await?;
    tx.commit().await?;
    state.queues.push_in_background(evaluation);
    Ok((StatusCode::CREATED, Json(written)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create))
}
