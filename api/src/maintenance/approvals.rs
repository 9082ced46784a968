//! `/maintenance/work-orders/{id}/approval-requests` and `/approval`: asking the owner to approve
//! a work order's estimate by a signed link (e-mailed by the `mail` worker), and recording a
//! decision the owner gave by phone (`domain::maintenance::approvals`). The owner's page itself
//! is `crate::approvals` (`/approvals/{token}`).

use axum::{
    Json,
    extract::State,
    http::{HeaderMap, StatusCode, header},
};
use domain::{
    Problems,
    maintenance::{
        approvals::{self, DECISIONS, MAX_NOTE},
        views, work_orders,
    },
    record::members,
};
use jobs::Job as _;
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::{ApiJson, ApiPath, Object},
    state::AppState,
};

/// The e-mail of an approval request.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalEmail {
    /// QUEUED: the `mail` worker sends it (the work order's `approvals` show `emailSentAt`);
    /// NOT_SENT: see `reason`.
    status: EmailStatus,
    to: Option<String>,
    /// Why none is sent: no SMTP_URL, or no e-mail address for the owner.
    reason: Option<String>,
}

/// Whether the link was e-mailed.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EmailStatus {
    Queued,
    NotSent,
}

/// An approval request by link.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestAnswer {
    id: Uuid,
    work_order_id: Uuid,
    /// The owner's page: send it by message too. It works once, until `expiresAt`.
    approval_url: String,
    expires_at: chrono::DateTime<chrono::Utc>,
    /// The owner-billed estimate it asks about, per currency.
    #[schema(value_type = Object)]
    estimate: Value,
    email: ApprovalEmail,
}

/// The platform's address as owners reach it: `PUBLIC_BASE_URL`, else the address this request
/// came to (its `Host`, and `X-Forwarded-Proto` when a proxy says https).
fn base_url(
    state: &AppState,
    headers: &HeaderMap,
    authority: Option<&str>,
) -> Result<String, AppError> {
    if let Some(url) = &state.core.approvals.public_base_url {
        return Ok(url.clone());
    }
    // HTTP/2 carries the address in the URI's authority rather than a Host header.
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or(authority)
        .filter(|h| {
            !h.is_empty()
                && h.len() <= 255
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
        })
        .ok_or_else(|| {
            AppError::invalid(
                "Host",
                "invalid_value",
                "the request's Host header is not an address a link can point at; set PUBLIC_BASE_URL",
            )
        })?;
    let scheme = match headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
    {
        Some("https") => "https",
        _ => "http",
    };
    Ok(format!("{scheme}://{host}"))
}

/// Asks the owner to approve the work order's owner-billed estimate: a signed link to the
/// platform's page (`PUBLIC_BASE_URL`, else the address this request came to), valid
/// `APPROVAL_LINK_DAYS`, that works once. The owner's e-mail gets it through the `mail` worker
/// when `SMTP_URL` is set (`email` says whether); `approvalUrl` is there to send it by message.
/// An earlier unused link of the work order stops working. Managers and admins only.
#[utoipa::path(post, operation_id = "maintenance_work_orders_approval_requests_create",
    path = "/maintenance/work-orders/{id}/approval-requests", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 201, body = ApprovalRequestAnswer),
        (status = 403, description = "Managers and admins only"),
        (status = 404, description = "No such work order"),
        (status = 409, description = "`APPROVAL_NOT_NEEDED`: the work order is not AWAITING_APPROVAL")))]
pub async fn request(
    State(state): State<AppState>,
    user: CurrentUser,
    headers: HeaderMap,
    uri: axum::http::Uri,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let base = base_url(&state, &headers, uri.authority().map(|a| a.as_str()))?;
    let link_days = state.core.approvals.link_days;
    let mail_on = state.core.mail.smtp_url.is_some();
    let (request, enqueued) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        let request = approvals::request_link(&mut tx, id, &base, link_days, &user.subject).await?;
        let enqueued = match (&request.email_to, mail_on) {
            (Some(_), true) => Some(
                jobs::mail::SendApprovalRequest {
                    approval_id: request.id,
                }
                .enqueue(&mut tx)
                .await?,
            ),
            _ => None,
        };
        tx.commit().await?;
        Ok((request, enqueued))
    })
    .await?;
    if let Some(enqueued) = enqueued {
        state.queues.push_in_background(vec![enqueued]);
    }
    let email = match (&request.email_to, mail_on) {
        (Some(to), true) => json!({"status": "QUEUED", "to": to, "reason": null}),
        (Some(to), false) => json!({"status": "NOT_SENT", "to": to,
            "reason": "SMTP_URL is not set: no e-mail is sent; send approvalUrl yourself"}),
        (None, _) => json!({"status": "NOT_SENT", "to": null,
            "reason": "the villa's owner has no e-mail address: send approvalUrl yourself"}),
    };
    let estimate = approvals::estimate_json(&request.estimate);
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "id": request.id,
            "workOrderId": id,
            "approvalUrl": state.approval_links.url(&base, request.id),
            "expiresAt": request.expires_at,
            "estimate": estimate,
            "email": email,
        })),
    ))
}

crate::computed_schema!(
    /// A decision the owner gave by phone.
    PhoneDecision => json!({
        "type": "object",
        "required": ["decision"],
        "properties": {
            "decision": {"type": "string", "enum": DECISIONS},
            "note": {"type": ["string", "null"], "maxLength": MAX_NOTE,
                "description": "What the owner said; a DECLINED work order's cancellation reason."},
        },
    })
);

/// Records the owner's decision given by phone (marked PHONE, with the manager who recorded
/// it): APPROVED returns the work order to its status before the wait, DECLINED cancels it with
/// the note as reason. Unused links stop working. Managers and admins only.
#[utoipa::path(post, operation_id = "maintenance_work_orders_approval_record",
    path = "/maintenance/work-orders/{id}/approval", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = PhoneDecision,
    responses((status = 200, body = views::WorkOrderDetail),
        (status = 403, description = "Managers and admins only"),
        (status = 404, description = "No such work order"),
        (status = 409, description = "`APPROVAL_NOT_NEEDED`: the work order is not AWAITING_APPROVAL")))]
pub async fn record(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let decision = match body.get("decision") {
        Some(Value::String(s)) => problems.closed("decision", s, DECISIONS),
        None | Some(Value::Null) => {
            problems.push(
                "decision",
                "required",
                "decision is required: APPROVED or DECLINED",
            );
            None
        }
        Some(_) => {
            problems.push("decision", "invalid_type", "decision must be a string");
            None
        }
    };
    let note = members::text(&body, "note", "", MAX_NOTE, &mut problems);
    let decision = problems.finish_with(decision)?;
    let order = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        approvals::record_by_phone(&mut tx, id, decision, note.as_deref(), &user.subject).await?;
        let order = work_orders::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok(order)
    })
    .await?;
    Ok(Json(order))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(request))
        .routes(routes!(record))
}
