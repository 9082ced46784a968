//! `GET /dev/jwks.json`: the development key's JWKS. Mounted only when `APP_ENV=development`.

use axum::{Json, Router, routing::get};
use serde_json::Value;

use crate::state::AppState;

pub fn router(jwks: Value) -> Router<AppState> {
    Router::new().route(
        "/dev/jwks.json",
        get(move || async move { Json(jwks.clone()) }),
    )
}
