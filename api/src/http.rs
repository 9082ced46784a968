//! Cross-cutting HTTP: request ids, request logs, CORS, preflight status, limits and timeouts.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
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

/// Gives every request its id and logs one line per request (method, path, status, duration,
/// request id) inside a span that carries the id, so every log line of the request, errors
/// included, names it; records the request's HTTP metrics.
///
/// The id is the client's `X-Request-ID` when it is a plain token (at most 128 of `A-Z a-z 0-9 .
/// _ : -`), else a new UUID: it is stored with every job the request enqueues and repeated on
/// every log line of their runs, so a client must not be able to make it huge or carry
/// log-breaking characters. It is set on the request (for the layers inside) and on the answer.
/// One layer does all this: each layer is a cost on every request, the metrics' included.
///
/// The span is at ERROR level: a span is only entered (and its fields only reach the lines
/// logged inside it) when the filter enables its level, so an INFO span left the `warn` and
/// `error` lines of `RUST_LOG=warn` without their request id.
///
/// The request runs as the work of its id (`domain::trace::with_request_id`): a job it enqueues
/// stores the id, and the worker that runs the job logs with it.
pub async fn log_requests(mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let request_id = match req.headers().get(&REQUEST_ID) {
        Some(sent) if fit_request_id(sent.as_bytes()) => sent.clone(),
        _ => {
            let ours = HeaderValue::try_from(uuid::Uuid::new_v4().to_string())
                .expect("a UUID is a header value");
            req.headers_mut().insert(REQUEST_ID, ours.clone());
            ours
        }
    };
    let id_text = request_id.to_str().unwrap_or_default().to_owned();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    // Out here the metrics see every answer, the panic (500), timeout (408) and body-limit (413)
    // layers' included; the router has matched the route already, so its template is known.
    let observed = domain::metrics::recording().then(|| HttpObservation::start(&req));
    let span =
        tracing::error_span!("request", request_id = %id_text, method = %method, path = %path);
    let mut res =
        domain::trace::with_request_id(id_text, next.run(req).instrument(span.clone())).await;
    res.headers_mut().insert(REQUEST_ID, request_id);
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

/// The longest `X-Request-ID` kept from a client.
const MAX_REQUEST_ID: usize = 128;

fn fit_request_id(id: &[u8]) -> bool {
    !id.is_empty()
        && id.len() <= MAX_REQUEST_ID
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
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

/// The counter and histogram of one (route, method, status class).
struct HttpSeries {
    requests: metrics::Counter,
    duration: metrics::Histogram,
}

/// The series this thread has used, by route template then (method, status class): a
/// request's metrics are then one hash of its route and two atomic updates, with no lock shared
/// between threads and no registry key built and looked up per request (measured on the read
/// path: building the keys per request cost 5.8 % of its throughput, a shared lock of cached
/// handles still 4 %). Bounded: route templates × 8 methods × 5 classes, per worker thread.
type SeriesByRoute = HashMap<String, HashMap<(&'static str, &'static str), HttpSeries>>;

thread_local! {
    static SERIES: RefCell<SeriesByRoute> = RefCell::new(HashMap::new());
}

fn observe(route: &str, method: &'static str, status: &'static str, seconds: f64) {
    use domain::metrics::names;
    SERIES.with_borrow_mut(|by_route| {
        if !by_route.contains_key(route) {
            by_route.insert(route.to_owned(), HashMap::new());
        }
        let by_status = by_route.get_mut(route).expect("inserted above");
        let series = by_status
            .entry((method, status))
            .or_insert_with(|| HttpSeries {
                requests: metrics::counter!(names::HTTP_REQUESTS,
                "method" => method, "route" => route.to_owned(), "status" => status),
                duration: metrics::histogram!(names::HTTP_DURATION,
                "method" => method, "route" => route.to_owned(), "status" => status),
            });
        series.requests.increment(1);
        series.duration.record(seconds);
    });
}

/// Requests being answered: a plain atomic on the hot path, copied into the
/// `villa_http_requests_in_flight` gauge when metrics are rendered ([`set_in_flight_gauge`]).
static IN_FLIGHT: AtomicI64 = AtomicI64::new(0);

/// Sets `villa_http_requests_in_flight` from the requests being answered now.
pub fn set_in_flight_gauge() {
    metrics::gauge!(domain::metrics::names::HTTP_IN_FLIGHT)
        .set(IN_FLIGHT.load(Ordering::Relaxed).max(0) as f64);
}

/// One request's HTTP metrics (`villa_http_*`, labelled by route template, never by raw path).
/// It counts as in flight for as long as it lives: dropped when the request ends, also when its
/// future is cancelled (the client went away), so the count never drifts upwards.
struct HttpObservation {
    method: &'static str,
    route: Option<MatchedPath>,
}

impl HttpObservation {
    fn start(req: &Request) -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
        Self {
            method: method_label(req.method()),
            route: req.extensions().get::<MatchedPath>().cloned(),
        }
    }

    fn finish(self, status: u16, elapsed: std::time::Duration) {
        let route = self.route.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
        observe(
            route,
            self.method,
            domain::metrics::status_class(status),
            elapsed.as_secs_f64(),
        );
    }
}

impl Drop for HttpObservation {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
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
