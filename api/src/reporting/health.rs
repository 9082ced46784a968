//! `GET /reporting/health` (public): the database, Redis and the PMS as the reporting surface
//! sees them, and the last finished sync run. The PMS is not called per request: its state is the
//! one the last PMS call recorded (`domain::reporting::connection`), probed again when older than
//! a minute by one replica at a time. 200 while the database answers, 503 (with the same report)
//! when it does not.

use std::time::Duration;

use axum::{
    Json,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use chrono::{SecondsFormat, Utc};
use domain::reporting::{connection, sync_runs};
use serde_json::{Value, json};
use sqlx::PgConnection;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{error::OwnBody, state::AppState};

/// How long the database may take to answer `SELECT 1`, and each read after it.
const DATABASE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long Redis may take to answer PING.
const REDIS_TIMEOUT: Duration = Duration::from_secs(1);
/// A recorded PMS state older than this is probed again (by one replica).
const PROBE_EVERY: Duration = Duration::from_secs(60);
/// How long a probe of the PMS may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

crate::computed_schema!(
    /// The reporting surface's view of what it depends on.
    ReportingHealth => json!({
        "type": "object",
        "required": ["status", "database", "redis", "pms", "lastSync", "timestamp"],
        "properties": {
            "status": {"type": "string", "enum": ["healthy", "degraded"],
                "description": "`degraded` when the database, Redis or a configured PMS is unreachable."},
            "database": {"type": "string", "enum": ["connected", "disconnected"]},
            "redis": {"type": "string", "enum": ["connected", "disconnected"],
                "description": "Without Redis, reporting answers are neither rate limited nor cached."},
            "pms": {"type": "string", "enum": ["connected", "disconnected", "not_configured"],
                "description": "From the last call to the PMS (probed again when older than a minute); `not_configured` without PMS_CLIENT_ID and PMS_CLIENT_SECRET."},
            "lastSync": {"type": ["object", "null"], "required": ["syncId", "status", "finishedAt"],
                "description": "The last finished sync run; null before any.",
                "properties": {
                    "syncId": {"type": "string", "format": "uuid"},
                    "status": {"type": "string", "enum": ["COMPLETED", "FAILED"]},
                    "finishedAt": {"type": "string", "format": "date-time"}
                }},
            "timestamp": {"type": "string", "format": "date-time"}
        }
    })
);

/// The reporting surface's health. Public.
#[utoipa::path(get, operation_id = "reporting_health", path = "/reporting/health", tag = "reporting", security(()),
    responses(
        (status = 200, description = "The database answers (`status` says whether Redis and the PMS do)", body = ReportingHealth),
        (status = 503, description = "The database does not answer: the same report", body = ReportingHealth)))]
pub async fn health(State(state): State<AppState>) -> Response {
    let database = async {
        let mut conn = state.pool.acquire().await?;
        domain::db::ping_conn(&mut conn).await?;
        Ok::<_, sqlx::Error>(conn)
    };
    let (database, redis) = tokio::join!(
        tokio::time::timeout(DATABASE_TIMEOUT, database),
        tokio::time::timeout(REDIS_TIMEOUT, state.queues.ping()),
    );
    let redis_up = matches!(redis, Ok(Ok(())));
    let mut conn = match database {
        Ok(Ok(conn)) => Some(conn),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "reporting health: the database does not answer");
            None
        }
        Err(_) => {
            tracing::warn!("reporting health: the database did not answer within 2 s");
            None
        }
    };
    let database_up = conn.is_some();
    let (pms, last_sync) = match conn.as_mut() {
        Some(conn) => (pms_state(&state, conn).await, last_sync(conn).await),
        None if state.pms.is_some() => ("disconnected", None),
        None => ("not_configured", None),
    };
    let healthy = database_up && redis_up && pms != "disconnected";
    let report = json!({
        "status": if healthy { "healthy" } else { "degraded" },
        "database": if database_up { "connected" } else { "disconnected" },
        "redis": if redis_up { "connected" } else { "disconnected" },
        "pms": pms,
        "lastSync": last_sync,
        "timestamp": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
    });
    if database_up {
        return Json(report).into_response();
    }
    let mut res = (StatusCode::SERVICE_UNAVAILABLE, Json(report)).into_response();
    // The report is the answer: not replaced by an error body.
    res.extensions_mut().insert(OwnBody);
    res
}

/// `connected`, `disconnected` or `not_configured`.
async fn pms_state(state: &AppState, conn: &mut PgConnection) -> &'static str {
    let Some(pms) = &state.pms else {
        return "not_configured";
    };
    let known = bounded("reading the PMS state", connection::read(conn))
        .await
        .flatten();
    let fresh = known.as_ref().is_some_and(|known| {
        u64::try_from((Utc::now() - known.checked_at).num_seconds())
            .is_ok_and(|age| age < PROBE_EVERY.as_secs())
    });
    if !fresh {
        let claimed = bounded(
            "claiming the PMS probe",
            connection::claim_probe(conn, PROBE_EVERY),
        )
        .await;
        if claimed == Some(true) {
            return probe(pms, conn).await;
        }
    }
    match known {
        Some(known) if known.state == "connected" => "connected",
        // Not known yet while another replica probes: not shown as up before it is.
        _ => "disconnected",
    }
}

/// Asks the PMS (a token and one listing, no retries) and records what it said for every
/// replica (the client records it too; a record of an unchanged state writes nothing).
async fn probe(pms: &jobs::pms::PmsClient, conn: &mut PgConnection) -> &'static str {
    let error = match tokio::time::timeout(PROBE_TIMEOUT, pms.probe()).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
    };
    if let Some(error) = &error {
        tracing::info!(%error, "reporting health: the PMS probe failed");
    }
    bounded(
        "recording the PMS state",
        connection::record(conn, error.is_none(), error.as_deref()),
    )
    .await;
    if error.is_none() {
        "connected"
    } else {
        "disconnected"
    }
}

/// The last finished run, `{syncId, status, finishedAt}`.
async fn last_sync(conn: &mut PgConnection) -> Option<Value> {
    bounded("reading the last sync", sync_runs::last_finished(conn))
        .await
        .flatten()
}

/// A read of the health report, under [`DATABASE_TIMEOUT`]; a failure is logged and reads as
/// nothing (the report is still answered).
async fn bounded<T>(what: &str, read: impl Future<Output = domain::Result<T>>) -> Option<T> {
    match tokio::time::timeout(DATABASE_TIMEOUT, read).await {
        Ok(Ok(value)) => Some(value),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "reporting health: {what} failed");
            None
        }
        Err(_) => {
            tracing::warn!("reporting health: {what} took more than 2 s");
            None
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(health))
}
