//! `/api/docs/*`: internal documentation and monitoring (admin only, see auth::permissions).

use std::{fmt::Write as _, sync::Arc};

use axum::{
    Extension,
    extract::State,
    response::{Html, IntoResponse, Response},
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{Answer, DataMessage, Reply};
use crate::{monitoring::MonitoringSnapshot, state::AppState};

/// One registered route, as `/api/docs/routes` lists it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteInfo {
    pub method: String,
    pub path: String,
    pub summary: Option<String>,
    /// Who may call it: `public`, or the permission it needs (`read access to onboarding`).
    pub access: String,
}

/// Every route of the API, from the OpenAPI document the app is built with.
pub type RouteCatalog = Arc<Vec<RouteInfo>>;

pub fn catalog(openapi: &utoipa::openapi::OpenApi) -> RouteCatalog {
    use crate::auth::permissions::{Requirement, requirement};
    let mut out = Vec::new();
    for (path, item) in &openapi.paths.paths {
        let ops = [
            ("GET", &item.get),
            ("POST", &item.post),
            ("PUT", &item.put),
            ("PATCH", &item.patch),
            ("DELETE", &item.delete),
        ];
        for (method, op) in ops {
            let Some(op) = op else { continue };
            let m: axum::http::Method = method.parse().unwrap_or(axum::http::Method::GET);
            let access = match requirement(&m, path) {
                Requirement::Public => "public".to_owned(),
                other => other.describe(),
            };
            let summary = op.summary.clone().or_else(|| {
                op.description
                    .as_ref()
                    .and_then(|d| d.lines().next().map(str::to_owned))
            });
            out.push(RouteInfo {
                method: method.to_owned(),
                path: path.clone(),
                summary,
                access,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path).then(a.method.cmp(&b.method)));
    Arc::new(out)
}

/// Every registered route with its method, summary and required access.
#[utoipa::path(get, path = "/api/docs/routes", tag = "internal",
    responses((status = 200, body = Answer<DataMessage<Vec<RouteInfo>>>)))]
pub async fn list_routes(Extension(routes): Extension<RouteCatalog>) -> Reply {
    let message = format!("{} routes", routes.len());
    Reply::data(&*routes, &message)
}

/// The in-memory monitoring: the last 100 requests, per-route call counts and latency, and the
/// requests slower than `SLOW_REQUEST_MS`. Per API process, lost on restart.
#[utoipa::path(get, path = "/api/docs/monitoring", tag = "internal",
    responses((status = 200, body = Answer<DataMessage<MonitoringSnapshot>>)))]
pub async fn monitoring(State(state): State<AppState>) -> Reply {
    Reply::data(state.monitor.snapshot(), "monitoring")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// An HTML page showing the routes and the monitoring, rendered on the server (it needs the
/// admin's token like the JSON routes, so it fetches nothing itself).
#[utoipa::path(get, path = "/api/docs/dashboard", tag = "internal",
    responses((status = 200, description = "HTML", content_type = "text/html")))]
pub async fn dashboard(
    State(state): State<AppState>,
    Extension(routes): Extension<RouteCatalog>,
) -> Response {
    let snap = state.monitor.snapshot();
    let mut h = String::with_capacity(32 * 1024);
    h.push_str("<!doctype html><html><head><meta charset=\"utf-8\"><title>Villa platform: API dashboard</title>\
<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;margin-bottom:2rem}\
td,th{border:1px solid #ccc;padding:.25rem .5rem;font-size:.9rem;text-align:left}th{background:#f3f3f3}\
.err{color:#b00}</style></head><body><h1>API dashboard</h1>");
    let _ = write!(
        h,
        "<p>Since {} &middot; {} requests &middot; slow threshold {} ms</p>",
        esc(&snap.since.to_rfc3339()),
        snap.total_requests,
        snap.slow_threshold_ms
    );
    h.push_str("<h2>Routes by calls</h2><table><tr><th>Method</th><th>Route</th><th>Calls</th><th>Errors</th><th>Average ms</th><th>Max ms</th></tr>");
    for r in &snap.routes {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td></tr>",
            esc(&r.method),
            esc(&r.route),
            r.calls,
            r.errors,
            r.average_ms,
            r.max_ms
        );
    }
    h.push_str("</table><h2>Last requests</h2><table><tr><th>At</th><th>Method</th><th>Path</th><th>Status</th><th>ms</th><th>Client</th><th>Request id</th></tr>");
    for r in &snap.recent_requests {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{:.1}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.at.to_rfc3339()),
            esc(&r.method),
            esc(&r.path),
            if r.status >= 400 { "err" } else { "" },
            r.status,
            r.duration_ms,
            esc(r.client_address.as_deref().unwrap_or("")),
            esc(r.request_id.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table><h2>Slow requests</h2><table><tr><th>At</th><th>Method</th><th>Path</th><th>Status</th><th>ms</th></tr>");
    for r in &snap.slow_requests {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td></tr>",
            esc(&r.at.to_rfc3339()),
            esc(&r.method),
            esc(&r.path),
            r.status,
            r.duration_ms
        );
    }
    h.push_str("</table><h2>Routes</h2><table><tr><th>Method</th><th>Path</th><th>Access</th><th>Summary</th></tr>");
    for r in routes.iter() {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.method),
            esc(&r.path),
            esc(&r.access),
            esc(r.summary.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</table></body></html>");
    Html(h).into_response()
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_routes))
        .routes(routes!(monitoring))
        .routes(routes!(dashboard))
}
