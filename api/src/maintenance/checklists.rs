//! `/maintenance/work-orders/{id}/checklist/{itemId}`: answering one item of a work order's
//! checklist (`domain::maintenance::checklists`); a FAIL opens its follow-up work order.

use axum::{Json, extract::State};
use domain::{
    Problems,
    maintenance::{
        checklists::{self, Answer, RESULTS},
        views, work_orders,
    },
    record::members,
};
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::{ApiJson, ApiPath, Object},
    state::AppState,
};

crate::computed_schema!(
    /// An answer to one checklist item; it replaces the item's answer whole (notes and field note
    /// left out are none). `result` null un-answers the item.
    ChecklistAnswer => json!({
        "type": "object",
        "required": ["result"],
        "properties": {
            "result": {"type": ["string", "null"], "enum": [RESULTS[0], RESULTS[1], RESULTS[2], null],
                "description": "PASS, FAIL or NA (any letter case); null un-answers the item (409 when its FAIL opened a follow-up)"},
            "notes": {"type": ["string", "null"], "maxLength": 2000},
            "fieldNoteId": {"type": ["string", "null"], "format": "uuid",
                "description": "A field note of this work order; a PASS of a PHOTO_REQUIRED item needs a PHOTO one"},
        },
    })
);

/// Answers one item of the work order's checklist (answeredBy the token's subject, answeredAt
/// now) and answers the whole work order. A PHOTO_REQUIRED item is PASS only with `fieldNoteId`
/// of a PHOTO field note of this work order (400 `PHOTO_REQUIRED`); a field note of another work
/// order is 400 on `fieldNoteId`. A FAIL opens, in the same transaction, one follow-up work order
/// on the same villa (category the item's fail category, title its text, description the notes,
/// HIGH, source INSPECTION, `parentWorkOrderId` this one), once per item however often or
/// concurrently FAIL is answered. A COMPLETED or CANCELLED work order's checklist is 409
/// `WORK_ORDER_CLOSED`; un-answering an item whose FAIL opened a follow-up is 409
/// `CHECKLIST_ITEM_HAS_FOLLOW_UP`.
#[utoipa::path(patch, operation_id = "maintenance_work_orders_checklist_answer",
    path = "/maintenance/work-orders/{id}/checklist/{itemId}", tag = "maintenance",
    params(("id" = Uuid, Path), ("itemId" = Uuid, Path)), request_body = ChecklistAnswer,
    responses((status = 200, body = views::WorkOrderDetail),
        (status = 400, description = "`VALIDATION_ERROR` with every bad field, or `PHOTO_REQUIRED` (on `fieldNoteId`)"),
        (status = 404, description = "No such work order, or no such item on its checklist"),
        (status = 409, description = "`WORK_ORDER_CLOSED` (COMPLETED or CANCELLED) or `CHECKLIST_ITEM_HAS_FOLLOW_UP`")))]
pub async fn answer(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath((id, item_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let result = match body.get("result") {
        None => {
            problems.push(
                "result",
                "required",
                "result is required: PASS, FAIL, NA, or null to un-answer the item",
            );
            None
        }
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => problems.closed("result", s, RESULTS).map(Some),
        Some(_) => {
            problems.push("result", "invalid_type", "result must be a string or null");
            None
        }
    };
    let notes = members::text(&body, "notes", "", 2000, &mut problems);
    let field_note_id = match body.get("fieldNoteId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.trim().parse::<Uuid>() {
            Ok(note) => Some(note),
            Err(_) => {
                problems.push(
                    "fieldNoteId",
                    "invalid_format",
                    "fieldNoteId must be a UUID",
                );
                None
            }
        },
        Some(_) => {
            problems.push(
                "fieldNoteId",
                "invalid_type",
                "fieldNoteId must be a string",
            );
            None
        }
    };
    let result = problems.finish_with(result)?;
    let answer = Answer {
        result,
        notes,
        field_note_id,
    };
    let order = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        checklists::answer(&mut tx, id, item_id, &answer, &user.subject)
            .await
            .map_err(photo_required)?;
        let order = work_orders::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(order)
    })
    .await?;
    Ok(Json(order))
}

/// A missing photo is its own 400 (`PHOTO_REQUIRED`), still naming the field in `fields`.
fn photo_required(e: domain::Error) -> AppError {
    match e {
        domain::Error::Validation(fields) if fields.iter().any(|f| f.code == "PHOTO_REQUIRED") => {
            let message = fields
                .iter()
                .map(|f| f.message.clone())
                .collect::<Vec<_>>()
                .join("; ");
            AppError::BadRequestWith {
                code: "PHOTO_REQUIRED",
                message,
                extra: json!({"fields": fields.iter()
                    .map(|f| json!({"field": f.field, "message": f.message}))
                    .collect::<Vec<_>>()}),
            }
        }
        other => other.into(),
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(answer))
}
