//! `GET /api/health` (onboarding spec), `GET /healthz` (the process answers) and
//! `GET /readyz` (Postgres and Redis reachable; 503 otherwise, naming what is down).

use std::time::Duration;

use axum::{Json, extract::State};
use chrono::{SecondsFormat, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{error::AppError, state::AppState};

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok` while the process serves requests.
    status: &'static str,
    timestamp: String,
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Liveness of the onboarding API.
#[utoipa::path(get, path = "/api/health", tag = "health", security(()),
    responses((status = 200, description = "The API is up", body = Health)))]
pub async fn api_health() -> Json<Health> {
    Json(Health {
        status: "ok",
        timestamp: now(),
    })
}

/// Liveness of the process, for orchestrators.
#[utoipa::path(get, path = "/healthz", tag = "health", security(()),
    responses((status = 200, description = "The process is up", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok",
        timestamp: now(),
    })
}

#[derive(Serialize, ToSchema)]
pub struct Readiness {
    status: &'static str,
    postgres: &'static str,
    redis: &'static str,
    timestamp: String,
}

/// Readiness: Postgres and Redis both answer within two seconds.
#[utoipa::path(get, path = "/readyz", tag = "health", security(()),
    responses((status = 200, description = "Ready", body = Readiness),
              (status = 503, description = "Postgres or Redis unreachable")))]
pub async fn readyz(State(state): State<AppState>) -> Result<Json<Readiness>, AppError> {
    let limit = Duration::from_secs(2);
    let pg = tokio::time::timeout(limit, domain::db::ping(&state.pool));
    let redis = tokio::time::timeout(limit, state.queues.ping());
    let (pg, redis) = tokio::join!(pg, redis);
    let pg_ok = matches!(pg, Ok(Ok(_)));
    let redis_ok = matches!(redis, Ok(Ok(())));
    if pg_ok && redis_ok {
        return Ok(Json(Readiness {
            status: "ready",
            postgres: "ok",
            redis: "ok",
            timestamp: now(),
        }));
    }
    let down: Vec<&str> = [
        (!pg_ok).then_some("postgres"),
        (!redis_ok).then_some("redis"),
    ]
    .into_iter()
    .flatten()
    .collect();
    Err(AppError::Unavailable(format!(
        "unreachable: {}",
        down.join(", ")
    )))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(api_health))
        .routes(routes!(healthz))
        .routes(routes!(readyz))
}
