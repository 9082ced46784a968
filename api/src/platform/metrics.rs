//! `GET /metrics`: the API process's Prometheus metrics in the text exposition format (HTTP
//! requests, the document store, the PMS client, the database pool) and the queue gauges, which
//! the API computes from the job table for the whole platform (`docs/operations.md`).
//!
//! Prometheus reads it with `METRICS_TOKEN` as a bearer token (its `authorization` setting),
//! never a user's JWT: the permission table lists the route as public and this handler checks
//! the token itself. Without a token it is open in development only.

use axum::{
    extract::State,
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
};
use jobs::Queue;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{error::AppError, state::AppState};

/// The platform's metrics, for Prometheus.
#[utoipa::path(get, path = "/metrics", tag = "platform", security(()),
    responses(
        (status = 200, description = "The metrics in Prometheus' text exposition format (version 0.0.4)",
            content_type = "text/plain", body = String),
        (status = 401, description = "METRICS_TOKEN required (production) or wrong"),
        (status = 404, description = "metrics are turned off (METRICS_ENABLED=false)")))]
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let production = !state.core.app_env.is_development();
    if let Err(refusal) =
        domain::metrics::check_token(&state.core.metrics, production, authorization)
    {
        let mut res = AppError::Unauthorized(refusal.message().to_owned()).into_response();
        // The error renderer keeps the headers it is given: the scheme the route expects.
        res.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return res;
    }
    let Some(exporter) = &state.metrics else {
        return AppError::NotFound("metrics").into_response();
    };
    let queues = Queue::ALL.map(Queue::name);
    // Recomputed from Postgres only when older than the refresh interval; the gauges are set
    // again from the cached figures under the exporter's lock, so that another app of the same
    // process (tests run several) cannot leave its own figures in this answer.
    state.queue_gauges.refresh(&state.pool, &queues).await;
    let text = exporter
        .render_with(|| {
            state.queue_gauges.apply();
            domain::metrics::record_pool(&state.pool);
            crate::http::metrics::set_in_flight_gauge();
        })
        .await;
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(domain::metrics::TEXT_FORMAT),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        text,
    )
        .into_response()
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics))
}
