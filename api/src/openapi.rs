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
        (name = "maintenance", description = "Maintenance API (/maintenance): work orders, assets, vendors"),
        (name = "inventory", description = "Inventory API (/inventory): items on a stock ledger, movements, transfers, locations, categories, alerts, reports"),
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

/// The parts of every operation that follow from the platform's shared rules rather than from
/// the handler, added once to the whole document so that no handler repeats them:
/// - `security` from the permission table (`auth::permissions::requirement`): none for public
///   routes, the bearer token elsewhere; 401 (no valid token) and 403 (the roles do not allow it)
///   where they apply;
/// - 400 where a route reads parameters or a body, 404 where it names a record in its path, 413
///   and 415 where it reads a body;
/// - every error status answering the surface's error schema (`error::schema`);
/// - `page` and `limit` as the integers `domain::pagination::PageRequest` accepts.
pub fn finish(doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use crate::auth::permissions::{self, Requirement};
    use serde_json::{Value, json};

    let mut value = serde_json::to_value(&doc).expect("the OpenAPI document serializes");
    let schemas = value["components"]["schemas"]
        .as_object_mut()
        .expect("the document has component schemas");
    for (name, schema) in error_schemas() {
        schemas.insert(name, schema);
    }
    let Some(paths) = value["paths"].as_object_mut() else {
        return doc;
    };
    for (path, item) in paths.iter_mut() {
        let surface = crate::surface::Surface::of_path(path);
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            let Ok(http_method) = method.to_uppercase().parse::<axum::http::Method>() else {
                continue;
            };
            let requirement = permissions::requirement(&http_method, path);
            let params: Vec<Value> = op["parameters"].as_array().cloned().unwrap_or_default();
            let has_body = op.get("requestBody").is_some();
            let has_path_param = params.iter().any(|p| p["in"] == "path");
            let mut add = Vec::new();
            match requirement {
                Requirement::Public => op["security"] = json!([]),
                Requirement::Authenticated => {
                    op["security"] = json!([{"bearer": []}]);
                    add.push(("401", "No valid bearer token"));
                }
                Requirement::Permission(..) => {
                    op["security"] = json!([{"bearer": []}]);
                    add.push(("401", "No valid bearer token"));
                    add.push(("403", "The token is valid but its roles do not allow this"));
                }
            }
            if has_body || !params.is_empty() {
                add.push((
                    "400",
                    "Invalid input: every bad parameter or field is listed",
                ));
            }
            if has_path_param {
                add.push(("404", "No such record"));
            }
            add.push((
                "500",
                "An unexpected failure, logged with the request id (`X-Request-ID`)",
            ));
            if has_body {
                add.push(("413", "The body is larger than allowed"));
                add.push(("415", "The body is not of a content type this route reads"));
            }
            let responses = op["responses"]
                .as_object_mut()
                .expect("every operation has responses");
            for (status, description) in add {
                responses
                    .entry(status)
                    .or_insert_with(|| json!({"description": description}));
            }
            // Bytes (photos, documents) are described by their media type alone, as OpenAPI
            // 3.1 has it, not as the array of numbers a `[u8]` body would be.
            for response in responses.values_mut() {
                if let Some(content) = response.get_mut("content").and_then(Value::as_object_mut) {
                    for (media, body) in content.iter_mut() {
                        if !media.contains("json")
                            && let Some(body) = body.as_object_mut()
                        {
                            body.remove("schema");
                        }
                    }
                }
            }
            let error_ref =
                json!({"$ref": format!("#/components/schemas/{}", error_schema_name(surface))});
            for (status, response) in responses.iter_mut() {
                if status.starts_with('4') || status.starts_with('5') {
                    response["content"] = json!({"application/json": {"schema": error_ref}});
                }
            }
            if surface == crate::surface::Surface::Onboarding && requirement != Requirement::Public
            {
                document_auto_save(op);
            }
            if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
                for p in params {
                    if p["in"] == "query" && (p["name"] == "page" || p["name"] == "limit") {
                        let max = (p["name"] == "limit").then_some(domain::pagination::MAX_LIMIT);
                        p["schema"] = match max {
                            Some(max) => json!({"type": "integer", "minimum": 1, "maximum": max}),
                            None => json!({"type": "integer", "minimum": 1}),
                        };
                    }
                }
            }
        }
    }
    serde_json::from_value(value).expect("the finished document is an OpenAPI document")
}

/// The onboarding surface's `X-Auto-Save: true` (crate::error::AUTO_SAVE): any of its requests
/// sent with it answers a failure as 200 `AutosaveFailure` instead of an error status.
fn document_auto_save(op: &mut serde_json::Value) {
    use serde_json::{Value, json};
    let header = json!({
        "name": "X-Auto-Save", "in": "header", "required": false,
        "schema": {"type": "string", "enum": ["false", "true"]},
        "description": "`true` for the wizard's background saves: a failure is answered 200 with `success: false` instead of an error status.",
    });
    match op.get_mut("parameters").and_then(Value::as_array_mut) {
        Some(params) => params.push(header),
        None => op["parameters"] = json!([header]),
    }
    let failure = json!({"$ref": "#/components/schemas/AutosaveFailure"});
    let responses = &mut op["responses"];
    match responses.get_mut("200") {
        None => {
            responses["200"] = json!({
                "description": "With `X-Auto-Save: true`: why the request failed",
                "content": {"application/json": {"schema": failure}},
            });
        }
        Some(ok) => {
            let content = &mut ok["content"];
            let json_body = content
                .get("application/json")
                .and_then(|c| c.get("schema"))
                .cloned();
            content["application/json"] = json!({"schema": match json_body {
                Some(schema) => json!({"anyOf": [schema, failure]}),
                None => failure,
            }});
        }
    }
}

fn error_schema_name(surface: crate::surface::Surface) -> &'static str {
    use crate::surface::Surface;
    match surface {
        Surface::Management | Surface::Platform => "ManagementError",
        Surface::Onboarding => "OnboardingError",
        Surface::Maintenance => "MaintenanceError",
        Surface::Inventory => "InventoryError",
        Surface::Reporting => "ReportingError",
    }
}

/// The error schemas with the schemas they use, by name.
fn error_schemas() -> Vec<(String, serde_json::Value)> {
    use crate::error::schema::*;
    use utoipa::{PartialSchema, ToSchema};
    let mut all = Vec::new();
    ManagementError::schemas(&mut all);
    OnboardingError::schemas(&mut all);
    MaintenanceError::schemas(&mut all);
    InventoryError::schemas(&mut all);
    ReportingError::schemas(&mut all);
    all.push((
        "AutosaveFailure".into(),
        crate::onboarding::bodies::AutosaveFailure::schema(),
    ));
    crate::onboarding::bodies::AutosaveFailure::schemas(&mut all);
    all.push(("ManagementError".into(), ManagementError::schema()));
    all.push(("OnboardingError".into(), OnboardingError::schema()));
    all.push(("MaintenanceError".into(), MaintenanceError::schema()));
    all.push(("InventoryError".into(), InventoryError::schema()));
    all.push(("ReportingError".into(), ReportingError::schema()));
    all.into_iter()
        .map(|(name, schema)| {
            (
                name,
                serde_json::to_value(schema).expect("a schema serializes"),
            )
        })
        .collect()
}

/// A schema written as JSON (computed from a field table, for instance), as utoipa's type.
pub fn from_json(
    schema: serde_json::Value,
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    match serde_json::from_value(schema.clone()) {
        Ok(schema) => schema,
        Err(e) => panic!("a computed schema is not one utoipa can hold ({e}): {schema}"),
    }
}

/// Declares a named schema component whose JSON Schema is computed by `$schema` (an expression
/// giving a `serde_json::Value`), so a handler can name it as a body like any derived type.
#[macro_export]
macro_rules! computed_schema {
    ($(#[$doc:meta])* $name:ident => $schema:expr) => {
        $(#[$doc])*
        pub struct $name;

        // utoipa derives `PartialSchema` (the schema itself) from this.
        impl utoipa::__dev::ComposeSchema for $name {
            fn compose(
                _: Vec<utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>>,
            ) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $crate::openapi::from_json($schema)
            }
        }

        impl utoipa::ToSchema for $name {
            fn schemas(
                schemas: &mut Vec<(
                    String,
                    utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
                )>,
            ) {
                schemas.push((
                    stringify!($name).into(),
                    <Self as utoipa::PartialSchema>::schema(),
                ));
            }
        }
    };
}
