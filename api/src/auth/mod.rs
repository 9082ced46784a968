//! Identity and permissions (ARCHITECTURE.md): bearer JWTs verified against the provider's JWKS,
//! roles from a claim, and one permission table ([`permissions`]) that decides every route.

pub mod dev;
pub mod jwks;
pub mod permissions;

use std::sync::Arc;

use axum::{
    extract::{FromRequestParts, MatchedPath, Request, State},
    http::{header, request::Parts},
    middleware::Next,
    response::Response,
};

use crate::{error::AppError, state::AppState};
pub use jwks::JwksVerifier;
pub use permissions::{Requirement, Role};

/// The authenticated caller, available to handlers as an extractor.
#[derive(Debug, Clone)]
pub struct CurrentUser {
    pub subject: String,
    pub roles: Vec<Role>,
}

impl CurrentUser {
    pub fn has(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }
}

/// Middleware on every route: authenticates the bearer token when the route's requirement is not
/// public, then checks the permission table. 401 without a valid token, 403 without permission.
pub async fn authorize(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Result<Response, AppError> {
    // Unknown routes have no matched path: they still need a valid token (so probing for routes
    // says nothing to anonymous callers), then answer 404.
    let requirement = match req.extensions().get::<MatchedPath>() {
        Some(path) => permissions::requirement(req.method(), path.as_str()),
        None => Requirement::Authenticated,
    };
    if requirement == Requirement::Public {
        return Ok(next.run(req).await);
    }
    let user = authenticate(&state.verifier, req.headers().get(header::AUTHORIZATION)).await?;
    if !permissions::allows(&user.roles, requirement) {
        return Err(AppError::Forbidden(format!(
            "your role ({}) does not allow {}",
            if user.roles.is_empty() {
                "none".to_owned()
            } else {
                user.roles
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            requirement.describe()
        )));
    }
    req.extensions_mut().insert(Arc::new(user));
    Ok(next.run(req).await)
}

async fn authenticate(
    verifier: &JwksVerifier,
    header: Option<&header::HeaderValue>,
) -> Result<CurrentUser, AppError> {
    let value = header
        .ok_or_else(|| AppError::Unauthorized("missing Authorization: Bearer <token>".into()))?
        .to_str()
        .map_err(|_| AppError::Unauthorized("malformed Authorization header".into()))?;
    let token = domain::crypto::bearer_token(value).ok_or_else(|| {
        AppError::Unauthorized("the Authorization header must be Bearer <token>".into())
    })?;
    verifier
        .verify(token)
        .await
        .map_err(|e| AppError::Unauthorized(e.to_string()))
}

impl<S: Send + Sync> FromRequestParts<S> for CurrentUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Arc<CurrentUser>>()
            .map(|u| (**u).clone())
            .ok_or_else(|| AppError::Unauthorized("authentication required".into()))
    }
}
