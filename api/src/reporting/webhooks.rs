//! `POST /reporting/webhooks/hostaway`: Hostaway's unified webhooks, so that a booking change
//! reaches the platform within seconds instead of at the next sync. A delivery is
//! `{event, accountId, data}`, `data` the reservation as the API returns it.
//!
//! Hostaway authenticates a delivery only with HTTP Basic credentials (`PMS_WEBHOOK_USER`,
//! `PMS_WEBHOOK_PASSWORD`; without them the route answers 404, as if absent), retries on a 5xx or
//! a 429 and never on another 4xx, and may repeat a delivery or send it out of order. So: a
//! delivery for another account is 403; a reservation is upserted the way the sync does, never
//! over a newer stored version (`updatedOn`); an unknown event, a repeat or an older version
//! answers 200 and changes nothing; only a database that cannot be reached answers 5xx (503), so
//! that Hostaway tries again.

use axum::{
    Json,
    extract::{FromRequestParts, State},
    http::{HeaderMap, header, request::Parts},
};
use base64::Engine as _;
use domain::reporting::{hostaway, reservations};
use jobs::{Job, maintenance::GenerateTurnovers};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use subtle::ConstantTimeEq as _;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{error::AppError, extract::ApiJson, state::AppState};

/// The events that carry a reservation; every other event is acknowledged and ignored.
pub const RESERVATION_EVENTS: [&str; 2] = ["reservation.created", "reservation.updated"];

/// A delivery of Hostaway's unified webhook.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"event": "reservation.updated", "accountId": 10450,
    "data": {"id": 12345, "listingMapId": 40000, "arrivalDate": "2030-03-01",
             "departureDate": "2030-03-05", "status": "modified", "totalPrice": 1200,
             "currency": "THB", "channelId": 2018, "guestName": "Ayu Lestari",
             "updatedOn": "2030-01-01 10:00:00"}}))]
pub struct Delivery {
    /// `reservation.created`, `reservation.updated`, or another event (ignored).
    event: String,
    /// The Hostaway account the delivery is for: `PMS_CLIENT_ID`.
    account_id: AccountId,
    /// The reservation, as `GET /v1/reservations/{id}` returns it.
    #[serde(default)]
    #[schema(value_type = Object)]
    data: Value,
}

/// A Hostaway account id: a number in Hostaway's deliveries, read as text too.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum AccountId {
    Number(i64),
    Text(String),
}

/// What the delivery did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Received {
    /// Whether a stored reservation was created or changed (false for an ignored event, a repeat
    /// or an older version).
    changed: bool,
    /// Why nothing changed, when nothing did.
    #[serde(skip_serializing_if = "Option::is_none")]
    ignored: Option<&'static str>,
}

/// Receives one delivery (HTTP Basic: `PMS_WEBHOOK_USER`, `PMS_WEBHOOK_PASSWORD`). A reservation
/// that changed enqueues the turnover generation and makes cached reporting answers stale.
#[utoipa::path(post, operation_id = "reporting_webhooks_hostaway", path = "/reporting/webhooks/hostaway", tag = "reporting",
    request_body = Delivery,
    security(("basic" = [])),
    responses((status = 200, body = Received),
        (status = 400, description = "Not a delivery, or a reservation that does not read"),
        (status = 401, description = "No or wrong credentials"),
        (status = 403, description = "A delivery for another Hostaway account"),
        (status = 404, description = "Webhooks are not configured"),
        (status = 503, description = "The database cannot be reached: Hostaway delivers again")))]
pub async fn hostaway(
    State(state): State<AppState>,
    Hostaway { account }: Hostaway,
    ApiJson(delivery): ApiJson<Delivery>,
) -> Result<Json<Received>, AppError> {
    let named = match &delivery.account_id {
        AccountId::Number(n) => n.to_string(),
        AccountId::Text(s) => s.trim().to_owned(),
    };
    if named != account {
        return Err(AppError::Forbidden(
            "the delivery is for another Hostaway account".into(),
        ));
    }
    if !RESERVATION_EVENTS.contains(&delivery.event.as_str()) {
        return Ok(Json(Received {
            changed: false,
            ignored: Some("not a reservation event"),
        }));
    }
    let record =
        hostaway::map_reservation(delivery.data).map_err(|reason| AppError::BadRequest {
            code: "INVALID_RESERVATION",
            message: format!("data is not a reservation that reads: {reason}"),
        })?;
    let mut tx = state.pool.begin().await.map_err(unavailable)?;
    let counts = reservations::upsert_reservations(&mut tx, std::slice::from_ref(&record))
        .await
        .map_err(unavailable_domain)?;
    let changed = counts.created + counts.updated > 0;
    let generation = if changed {
        Some(
            GenerateTurnovers::default()
                .enqueue(&mut tx)
                .await
                .map_err(unavailable)?,
        )
    } else {
        None
    };
    tx.commit().await.map_err(unavailable)?;
    if let Some(generation) = generation {
        state.queues.push_in_background(vec![generation]);
        super::cache::invalidate(&state, "a webhook delivery").await;
    }
    Ok(Json(Received {
        changed,
        ignored: (!changed).then_some("a repeat, or older than the stored version"),
    }))
}

/// A delivery from Hostaway: the webhook is configured and the request carries its credentials.
/// Checked from the headers, before the body is read: a body from anyone else is never parsed.
pub struct Hostaway {
    /// `PMS_CLIENT_ID`: the account a delivery must name.
    account: String,
}

impl FromRequestParts<AppState> for Hostaway {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let pms = &state.core.pms;
        let (Some(expected), Some(account)) = (&pms.webhook, &pms.credentials) else {
            return Err(AppError::NotFound("WEBHOOKS_NOT_CONFIGURED"));
        };
        if !authorized(&parts.headers, &expected.user, &expected.password) {
            return Err(AppError::Unauthorized(
                "HTTP Basic credentials of the webhook are required".into(),
            ));
        }
        Ok(Hostaway {
            account: account.client_id.clone(),
        })
    }
}

/// Whether `headers` carry HTTP Basic credentials equal to `user` and `password` (compared in
/// constant time).
fn authorized(headers: &HeaderMap, user: &str, password: &str) -> bool {
    let Some(encoded) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        })
    else {
        return false;
    };
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
        return false;
    };
    let expected = format!("{user}:{password}");
    decoded.len() == expected.len() && bool::from(decoded.ct_eq(expected.as_bytes()))
}

/// A database that cannot be reached is a 503, which Hostaway delivers again; what the data
/// caused is the 4xx it is everywhere (Hostaway does not retry those), and anything else a 500.
fn unavailable(e: sqlx::Error) -> AppError {
    if domain::error::is_unavailable(&e) {
        tracing::error!(error = %e, "webhook delivery not stored: the database is unavailable");
        return AppError::Unavailable("the delivery could not be stored; deliver it again".into());
    }
    AppError::from(domain::Error::from(e))
}

fn unavailable_domain(e: domain::Error) -> AppError {
    match e {
        domain::Error::Database(e) => unavailable(e),
        other => AppError::from(other),
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(hostaway))
}
