//! Rendering errors in the shape of the request's surface, and the onboarding autosave's rule
//! (never an error status).

use axum::{
    Json,
    extract::Request,
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::Value;

use super::{ErrorInfo, shapes::body_for};
use crate::surface::Surface;

/// `X-Auto-Save: true`: the wizard's background saves, which must never produce an error status
/// (onboarding spec): their failures answer 200 `{success: false, ...}` with the reason.
pub const AUTO_SAVE: &str = "x-auto-save";

pub fn is_auto_save(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(AUTO_SAVE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The 200 answer of a failed autosave: the onboarding error body with `success: false`, the
/// message and a timestamp.
pub fn auto_save_failure(info: &ErrorInfo) -> Value {
    let mut body = body_for(Surface::Onboarding, info);
    if let Value::Object(map) = &mut body {
        map.insert("success".into(), Value::Bool(false));
        map.insert("message".into(), Value::String(info.message.clone()));
        map.insert(
            "timestamp".into(),
            Value::String(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        );
    }
    body
}

/// `/api/onboarding/{villaId}/autosave`.
fn is_autosave_route(path: &str) -> bool {
    path.strip_prefix("/api/onboarding/")
        .and_then(|rest| rest.strip_suffix("/autosave"))
        .is_some_and(|villa| !villa.is_empty() && !villa.contains('/'))
}

/// Marks an error-status response whose body is the answer itself, documented as such (the
/// reporting health's 503 is its health report): [`render_errors`] leaves it as it is.
#[derive(Debug, Clone, Copy)]
pub struct OwnBody;

/// Writes every error response in the shape of the request's surface.
pub async fn render_errors(req: Request, next: Next) -> Response {
    let surface = Surface::of_path(req.uri().path());
    // The owner's approval pages answer in HTML, the framework's refusals (a body too large, a
    // timeout, a panic) included.
    let owner_page = req.uri().path().starts_with("/approvals/");
    let auto_save_header = surface == Surface::Onboarding && is_auto_save(req.headers());
    let autosave_route = surface == Surface::Onboarding && is_autosave_route(req.uri().path());
    let res = next.run(req).await;
    let status = res.status();
    // The autosave route answers its own failures with 200 `{success: false}`, X-Auto-Save or
    // not; a body too large or too slow is refused by a layer before it could, and is answered
    // the same way. Other statuses (401: a token to renew) stay what they are without the header.
    let auto_save = auto_save_header
        || (autosave_route
            && matches!(
                status,
                StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
            ));
    if !(status.is_client_error() || status.is_server_error())
        || res.extensions().get::<OwnBody>().is_some()
    {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let info = match parts.extensions.remove::<ErrorInfo>() {
        Some(info) => info,
        None => {
            // A framework response; its plain-text body is replaced.
            drop(body);
            ErrorInfo::from_status(status)
        }
    };
    parts.status = info.status;
    parts.headers.remove(header::CONTENT_LENGTH);
    if owner_page {
        return crate::approvals::refusal_page(info.status, &info.message);
    }
    if auto_save {
        parts.status = StatusCode::OK;
        let body = auto_save_failure(&info);
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return Response::from_parts(parts, Json(body).into_response().into_body());
    }
    if let Some(secs) = info.retry_after_secs {
        parts
            .headers
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    let body = Json(body_for(surface, &info)).into_response().into_body();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, body)
}
