//! Cross-cutting HTTP: request ids, request logs, CORS, preflight status, limits and timeouts.

use std::time::Instant;

use axum::{
    extract::Request,
    http::{HeaderName, HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::Response,
};
use domain::settings::ApiSettings;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};
use tracing::Instrument;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Logs one line per request (method, path, status, duration, request id) inside a span that
/// carries the request id, so every log line of the request, errors included, names it.
pub async fn log_requests(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let span =
        tracing::info_span!("request", request_id = %request_id, method = %method, path = %path);
    let res = next.run(req).instrument(span.clone()).await;
    let status = res.status().as_u16();
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    span.in_scope(|| {
        if status >= 500 {
            tracing::error!(status, duration_ms, "request failed");
        } else {
            tracing::info!(status, duration_ms, "request");
        }
    });
    res
}

/// The headers the onboarding spec allows across origins.
const ALLOWED_HEADERS: [HeaderName; 7] = [
    header::CONTENT_TYPE,
    header::AUTHORIZATION,
    HeaderName::from_static("x-requested-with"),
    header::ACCEPT,
    header::ORIGIN,
    header::IF_MATCH,
    HeaderName::from_static("x-auto-save"),
];

pub fn cors(settings: &ApiSettings) -> CorsLayer {
    let origin = match &settings.cors_origins {
        None => AllowOrigin::from(Any),
        Some(list) => AllowOrigin::list(list.iter().filter_map(|o| HeaderValue::from_str(o).ok())),
    };
    CorsLayer::new()
        .allow_origin(origin)
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
            Method::OPTIONS,
        ])
        .allow_headers(ALLOWED_HEADERS)
        .expose_headers([REQUEST_ID, header::ETAG, header::RETRY_AFTER])
        .max_age(std::time::Duration::from_secs(600))
}

/// CORS preflights answer 204 No Content (the onboarding contract).
pub async fn preflight_no_content(req: Request, next: Next) -> Response {
    let is_preflight = req.method() == Method::OPTIONS;
    let mut res = next.run(req).await;
    if is_preflight && res.status() == StatusCode::OK {
        *res.status_mut() = StatusCode::NO_CONTENT;
    }
    res
}
