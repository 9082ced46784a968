//! The OpenAPI 3.1 document (`/openapi.json`, browsable at `/swagger-ui`). Each handler carries
//! its own `#[utoipa::path]`; routers register them with `routes!`, which adds them here.

use utoipa::{
    Modify, OpenApi,
    openapi::security::{Http, HttpAuthScheme, SecurityScheme},
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Villa operations platform",
        description = "Onboarding (/api), villa management (/management), maintenance, inventory and \
reporting APIs over one database. Every route needs `Authorization: Bearer <JWT>` unless marked \
otherwise; roles are admin, manager, staff and viewer. Errors use the shape of their surface.",
    ),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    tags(
        (name = "health", description = "Liveness and readiness"),
        (name = "management", description = "Villa management API"),
        (name = "admin", description = "Operators: job queues (admin only)"),
        (name = "onboarding", description = "Onboarding backend API (/api): villas, the ten-step wizard, uploads"),
        (name = "onboarding-legacy", description = "Older clients' segment routes over the same handlers"),
        (name = "dashboard", description = "Onboarding dashboards"),
        (name = "internal", description = "Routes list, monitoring, debug (admin only)"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut scheme = Http::new(HttpAuthScheme::Bearer);
        scheme.bearer_format = Some("JWT".to_owned());
        components.add_security_scheme("bearer", SecurityScheme::Http(scheme));
    }
}
