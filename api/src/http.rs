//! Cross-cutting HTTP: request ids, request logs, CORS, preflight status, limits and timeouts.

use std::time::Instant;

use axum::{
    extract::{MatchedPath, Request},
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
///
/// The span is at ERROR level: a span is only entered (and its fields only reach the lines
/// logged inside it) when the filter enables its level, so an INFO span left the `warn` and
/// `error` lines of `RUST_LOG=warn` without their request id.
///
/// The request runs as the work of its id (`domain::trace::with_request_id`): a job it enqueues
/// stores the id, and the worker that runs the job logs with it.
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
    // Out here the metrics see every answer, the panic (500), timeout (408) and body-limit (413)
    // layers' included; the router has matched the route already, so its template is known.
    let observed = domain::metrics::recording().then(|| HttpObservation::start(&req));
    let span =
        tracing::error_span!("request", request_id = %request_id, method = %method, path = %path);
    let res =
        domain::trace::with_request_id(request_id, next.run(req).instrument(span.clone())).await;
    let status = res.status().as_u16();
    let elapsed = started.elapsed();
    if let Some(observed) = observed {
        observed.finish(status, elapsed);
    }
    let duration_ms = elapsed.as_secs_f64() * 1000.0;
    span.in_scope(|| {
        if status >= 500 {
            tracing::error!(status, duration_ms, "request failed");
        } else {
            tracing::info!(status, duration_ms, "request");
        }
    });
    res
}

/// The route label of requests that match no route: never their raw path, which would make one
/// series per path probed.
const UNMATCHED: &str = "unmatched";

/// The method as a metric label: the standard methods by their names, any other as `OTHER`, so
/// that a client inventing methods cannot multiply the series.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// One request's HTTP metrics (`villa_http_*`, labelled by route template, never by raw path).
/// It counts as in flight for as long as it lives: dropped when the request ends, also when its
/// future is cancelled (the client went away), so the gauge never drifts upwards.
struct HttpObservation {
    method: &'static str,
    route: String,
    in_flight: metrics::Gauge,
}

impl HttpObservation {
    fn start(req: &Request) -> Self {
        let in_flight = metrics::gauge!(domain::metrics::names::HTTP_IN_FLIGHT);
        in_flight.increment(1.0);
        Self {
            method: method_label(req.method()),
            route: req
                .extensions()
                .get::<MatchedPath>()
                .map_or(UNMATCHED, MatchedPath::as_str)
                .to_owned(),
            in_flight,
        }
    }

    fn finish(self, status: u16, elapsed: std::time::Duration) {
        use domain::metrics::{names, status_class};
        let status = status_class(status);
        metrics::counter!(names::HTTP_REQUESTS,
            "method" => self.method, "route" => self.route.clone(), "status" => status)
        .increment(1);
        metrics::histogram!(names::HTTP_DURATION,
            "method" => self.method, "route" => self.route.clone(), "status" => status)
        .record(elapsed.as_secs_f64());
    }
}

impl Drop for HttpObservation {
    fn drop(&mut self) {
        self.in_flight.decrement(1.0);
    }
}

/// The longest `X-Request-ID` kept from a client.
const MAX_REQUEST_ID: usize = 128;

/// Drops an incoming `X-Request-ID` that is not a plain token (at most 128 of `A-Z a-z 0-9 . _ :
/// -`), so that `SetRequestId` gives the request one of its own: the id is stored with every job
/// the request enqueues and repeated on every log line of their runs, so a client must not be
/// able to make it huge or carry log-breaking characters.
pub async fn sanitize_request_id(mut req: Request, next: Next) -> Response {
    let acceptable = req.headers().get(&REQUEST_ID).is_none_or(|v| {
        let bytes = v.as_bytes();
        !bytes.is_empty()
            && bytes.len() <= MAX_REQUEST_ID
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
    });
    if !acceptable {
        req.headers_mut().remove(&REQUEST_ID);
    }
    next.run(req).await
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
        // The reporting surface's rate-limit and cache headers are for the frontend to read.
        .expose_headers([
            REQUEST_ID,
            header::ETAG,
            header::RETRY_AFTER,
            header::LOCATION,
            // The name of a downloaded export.
            header::CONTENT_DISPOSITION,
            HeaderName::from_static("ratelimit-limit"),
            HeaderName::from_static("ratelimit-remaining"),
            HeaderName::from_static("ratelimit-reset"),
            HeaderName::from_static("x-cache"),
        ])
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::{Router, body::Body, routing::get};
    use tower::{ServiceBuilder, ServiceExt as _};
    use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
    use tracing_subscriber::EnvFilter;

    use crate::error::AppError;

    /// What the subscriber wrote, line by line.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// With `RUST_LOG=warn` the internal error's line still names its request (it did not while
    /// the request span was at INFO level, which `warn` disables).
    #[tokio::test]
    async fn warn_level_error_lines_carry_the_request_id() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber =
            domain::process::log_subscriber(EnvFilter::new("warn"), true, move || writer.clone());
        let _guard = tracing::subscriber::set_default(subscriber);

        let app = Router::new()
            .route(
                "/boom",
                get(|| async { AppError::Internal(anyhow::anyhow!("deadlock detected")) }),
            )
            .layer(
                ServiceBuilder::new()
                    .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
                    .layer(PropagateRequestIdLayer::x_request_id())
                    .layer(axum::middleware::from_fn(super::log_requests)),
            );
        let req = axum::http::Request::get("/boom")
            .header("x-request-id", "req-4242")
            .body(Body::empty())
            .unwrap();
        let res = app.oneshot(req).await.unwrap();
        assert_eq!(res.status(), 500);

        let out = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let internal = lines
            .iter()
            .find(|l| l["message"] == "internal error")
            .unwrap_or_else(|| panic!("no internal error line in {out}"));
        assert_eq!(internal["level"], "ERROR");
        assert_eq!(internal["span"]["request_id"], "req-4242", "{internal}");
        assert!(internal["error"].as_str().unwrap().contains("deadlock"));
        let summary = lines
            .iter()
            .find(|l| l["message"] == "request failed")
            .unwrap_or_else(|| panic!("no request line in {out}"));
        assert_eq!(summary["span"]["request_id"], "req-4242");
        // Nothing at INFO level was written under `warn`.
        assert!(lines.iter().all(|l| l["level"] != "INFO"), "{out}");
    }
}
