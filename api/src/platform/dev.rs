//! Development sign-in, mounted only when `APP_ENV=development`: `GET /dev/jwks.json` (the
//! development key's JWKS, the default `AUTH_JWKS_URL`) and `POST /dev/token` (a token for a
//! role, signed with that key: what `villa-api mint-token` prints, for the web console's
//! "sign in as" page). Neither exists in production, and neither is in the API description.
//!
//! A token for any role without credentials is for the developer at this machine only: the
//! route answers a loopback peer that names this machine in `Host` (a site the developer visits
//! could otherwise rebind its own name to 127.0.0.1 and read the token as a same-origin page),
//! and, from a browser, only a page of this same origin (any other site could read an admin
//! token with `fetch`, since development allows any CORS origin).

use std::net::SocketAddr;

use axum::{
    Json, Router,
    extract::{ConnectInfo, State},
    http::{HeaderMap, header},
    routing::get,
    routing::post,
};
use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

use crate::{auth::permissions::Role, error::AppError, extract::ApiJson, state::AppState};

/// How long a development token lasts: a working day.
const TOKEN_TTL_SECS: i64 = 8 * 3600;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenRequest {
    role: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TokenAnswer {
    access_token: String,
    token_type: &'static str,
    expires_in: i64,
}

/// Whether `authority` (`host[:port]`) names this machine: `localhost`, `127.0.0.1` or `[::1]`.
fn names_this_machine(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6
            .split(']')
            .next()
            .map(|h| format!("[{h}]"))
            .unwrap_or_default(),
        None => authority.split(':').next().unwrap_or("").to_owned(),
    };
    matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "[::1]"
    )
}

/// Whether a browser sent this request from a page of another origin: its `Origin` (or, without
/// one, `Sec-Fetch-Site`) says so. Requests without either (curl, tests) are not a browser's.
fn cross_origin(headers: &HeaderMap) -> bool {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(origin) = text(header::ORIGIN) {
        let host = text(header::HOST).unwrap_or("");
        let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
        return origin_host.is_empty() || !origin_host.eq_ignore_ascii_case(host);
    }
    matches!(
        text(header::HeaderName::from_static("sec-fetch-site")),
        Some("cross-site" | "same-site")
    )
}

async fn token(
    State(state): State<AppState>,
    State(key): State<SigningKey>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<TokenRequest>,
) -> Result<Json<TokenAnswer>, AppError> {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !peer.ip().is_loopback() || !names_this_machine(host) {
        return Err(AppError::Forbidden(
            "development sign-in answers this machine only (a loopback address, Host localhost, 127.0.0.1 or [::1])".into(),
        ));
    }
    if cross_origin(&headers) {
        return Err(AppError::Forbidden(
            "development sign-in answers pages of this origin only".into(),
        ));
    }
    let role = Role::parse(&body.role).ok_or_else(|| {
        AppError::invalid(
            "role",
            "invalid_value",
            "must be one of admin, manager, staff, viewer",
        )
    })?;
    let auth = &state.api.auth;
    let access_token = crate::auth::dev::mint(
        &key,
        &auth.issuer,
        &auth.audience,
        &auth.roles_claim,
        &format!("dev-{}", role.as_str()),
        &[role.as_str().to_owned()],
        TOKEN_TTL_SECS,
    )
    .map_err(|e| AppError::Internal(e.context("signing a development token")))?;
    Ok(Json(TokenAnswer {
        access_token,
        token_type: "Bearer",
        expires_in: TOKEN_TTL_SECS,
    }))
}

#[derive(Clone, axum::extract::FromRef)]
struct DevState {
    app: AppState,
    key: SigningKey,
}

pub fn router(key: SigningKey, state: AppState) -> Router<AppState> {
    let jwks = crate::auth::dev::jwks(&key);
    Router::new()
        .route(
            "/dev/jwks.json",
            get(move || async move { Json(jwks.clone()) }),
        )
        .route("/dev/token", post(token))
        .with_state(DevState { app: state, key })
}

#[cfg(test)]
mod tests {
    use super::names_this_machine;

    #[test]
    fn only_this_machine_s_names_pass() {
        for ok in [
            "localhost:8080",
            "127.0.0.1",
            "127.0.0.1:5173",
            "[::1]:8080",
            "LOCALHOST",
        ] {
            assert!(names_this_machine(ok), "{ok}");
        }
        for refused in [
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "[::2]:80",
            "",
        ] {
            assert!(!names_this_machine(refused), "{refused}");
        }
    }
}
