//! `GET /me`: who the token says the caller is, and which operations of this API their roles
//! allow, decided by the one permission table (`auth::permissions`). A client (the web console)
//! offers only what is listed, instead of keeping a copy of the table.

use axum::{Extension, Json};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    auth::{CurrentUser, permissions},
    onboarding::docs::RouteCatalog,
    state::AppState,
};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    /// The token's `sub`.
    subject: String,
    /// The roles the token grants that the API knows (`admin`, `manager`, `staff`, `viewer`).
    #[schema(example = json!(["manager"]))]
    roles: Vec<&'static str>,
    /// Every operation the caller may call, as `METHOD /path` with the path as the API
    /// description writes it (`POST /reporting/sync/trigger`, `PATCH /maintenance/work-orders/{id}`),
    /// sorted. A route may still refuse a particular record (a work order only managers may
    /// cancel): its answer says so.
    #[schema(example = json!(["GET /reporting/dashboard/metrics", "POST /reporting/export"]))]
    operations: Vec<String>,
    /// What the roles grant in each area, for decisions a route alone does not show (cancelling a
    /// work order is a status change that needs `manage` in `maintenance`).
    permissions: Permissions,
}

/// The accesses (`read`, `write`, `delete`, `manage`) granted per area.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Permissions {
    /// Villas, owners, staff, documents, photos (`/management`).
    villas: Vec<&'static str>,
    /// The onboarding wizard (`/api`).
    onboarding: Vec<&'static str>,
    maintenance: Vec<&'static str>,
    inventory: Vec<&'static str>,
    reporting: Vec<&'static str>,
    /// Operators' routes (`/admin`, `/api/docs`).
    platform: Vec<&'static str>,
}

fn granted(roles: &[permissions::Role], area: permissions::Area) -> Vec<&'static str> {
    use permissions::Access;
    [
        (Access::Read, "read"),
        (Access::Write, "write"),
        (Access::Delete, "delete"),
        (Access::Manage, "manage"),
    ]
    .into_iter()
    .filter(|&(access, _)| {
        permissions::allows(roles, permissions::Requirement::Permission(area, access))
    })
    .map(|(_, name)| name)
    .collect()
}

/// The caller and what their roles allow.
#[utoipa::path(get, path = "/me", tag = "platform",
    responses((status = 200, description = "The caller's identity and allowed operations", body = Me),
              (status = 401, description = "No valid token")))]
pub async fn me(user: CurrentUser, Extension(catalog): Extension<RouteCatalog>) -> Json<Me> {
    let mut operations: Vec<String> = catalog
        .iter()
        .filter(|route| {
            let method = route.method.parse().unwrap_or(axum::http::Method::GET);
            permissions::allows(&user.roles, permissions::requirement(&method, &route.path))
        })
        .map(|route| format!("{} {}", route.method, route.path))
        .collect();
    operations.sort();
    operations.dedup();
    use permissions::Area;
    let roles = &user.roles;
    Json(Me {
        permissions: Permissions {
            villas: granted(roles, Area::Villas),
            onboarding: granted(roles, Area::Onboarding),
            maintenance: granted(roles, Area::Maintenance),
            inventory: granted(roles, Area::Inventory),
            reporting: granted(roles, Area::Reporting),
            platform: granted(roles, Area::Platform),
        },
        subject: user.subject,
        roles: roles.iter().map(|r| r.as_str()).collect(),
        operations,
    })
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(me))
}
