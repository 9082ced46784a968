//! Cross-cutting HTTP: request ids, request logs, CORS, preflight status, limits and timeouts.

pub mod metrics;
pub mod unread_body;

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
    let path = loggable_path(req.uri().path());
    // Out here the metrics see every answer, the panic (500), timeout (408) and body-limit (413)
    // layers' included; the router has matched the route already, so its template is known.
    let observed = domain::metrics::recording().then(|| metrics::HttpObservation::start(&req));
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

/// A request's path as logs and the monitoring keep it: an owner's approval link carries its
/// credential in the path, which no log line holds (`/approvals/<token>/photos/..`).
pub fn loggable_path(path: &str) -> String {
    match path.strip_prefix("/approvals/") {
        Some(rest) => match rest.split_once('/') {
            Some((_, tail)) => format!("/approvals/<token>/{tail}"),
            None => "/approvals/<token>".to_owned(),
        },
        None => path.to_owned(),
    }
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
    use tower::ServiceExt as _;
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
            // The request-log layer alone gives the request its id, as in the app.
            .layer(axum::middleware::from_fn(super::log_requests));
        let req = axum::http::Request::get("/boom")
            .header("x-request-id", "req-4242")
            .body(Body::empty())
            .unwrap();
        let res = app.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), 500);
        // Without an id of the client's, the request gets one of the API's own, answered and
        // logged alike.
        let res = app
            .oneshot(
                axum::http::Request::get("/boom")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        let given = res.headers()[super::REQUEST_ID]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(uuid::Uuid::parse_str(&given).is_ok(), "{given}");

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
        assert!(
            lines
                .iter()
                .any(|l| l["message"] == "internal error"
                    && l["span"]["request_id"] == given.as_str()),
            "no internal error line with the given id {given} in {out}"
        );
        // Nothing at INFO level was written under `warn`.
        assert!(lines.iter().all(|l| l["level"] != "INFO"), "{out}");
    }
}
