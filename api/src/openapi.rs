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
        (name = "platform", description = "Operations: the Prometheus metrics (`METRICS_TOKEN` as a bearer token in production, never a user's JWT); `/me`, the caller and what their roles allow"),
        (name = "management", description = "Villa management API"),
        (name = "maintenance", description = "Maintenance API (/maintenance): work orders, assets, vendors"),
        (name = "inventory", description = "Inventory API (/inventory): items on a stock ledger, movements, transfers, locations, categories, alerts, reports"),
        (name = "reporting", description = "Reporting API (/reporting): listings and reservations synchronised from the property-management system (Hostaway's API v1) by sync runs; dashboards of their figures over a period (revenue, occupancy, ADR, RevPAR, bookings, with the previous period; one set of definitions, written in each answer's description, shared by the listing metrics and the exports); spreadsheet exports made by a job (POST /export answers 202 with the export; poll GET /export/{exportId} as `Retry-After` says, then download the file: 409 EXPORT_NOT_READY with `retryAfter` while it is being made, 410 EXPORT_EXPIRED once EXPORT_RETENTION_DAYS have passed); and health. Each caller is rate limited per class of route (dashboard 120, listings 60, sync 5, others 60 requests in any 60 seconds; `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the whole allowance is back) on every limited answer, 429 `RATE_LIMIT_EXCEEDED` past the limit with `retryAfter`, the seconds until the oldest request of the last 60 leaves the window; a refused request does not count); listing, reservation and dashboard answers are cached (10, 2 and 5 minutes, `X-Cache: HIT` or `MISS`) until the next completed sync or villa link, keyed by the parameters the route reads as parsed (others are ignored) and, where a default follows today, by the company's date."),
        (name = "admin", description = "Operators: job queues (admin only)"),
        (name = "approvals", description = "The owner's approval page (/approvals/{token}): plain HTML the platform renders for an owner who holds a signed link; the link is the only credential"),
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
        // Hostaway's webhook deliveries (`reporting::webhooks`): the only other credentials.
        components.add_security_scheme(
            "basic",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Basic)),
        );
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
/// - a description for every answer (a Response Object requires one) that its handler did not
///   describe, from its status (`status_description`);
/// - a schema for every answer that is not JSON: bytes (photos, thumbnails, field-note files)
///   as `{type: string, format: binary}`, pages as text;
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
            let mut add: Vec<&str> = Vec::new();
            match requirement {
                // A public route with credentials of its own (the webhook's Basic) keeps them.
                Requirement::Public if op.get("security").is_some() => {}
                Requirement::Public => op["security"] = json!([]),
                Requirement::Authenticated => {
                    op["security"] = json!([{"bearer": []}]);
                    add.push("401");
                }
                Requirement::Permission(..) => {
                    op["security"] = json!([{"bearer": []}]);
                    add.extend(["401", "403"]);
                }
            }
            if has_body || !params.is_empty() {
                add.push("400");
            }
            if has_path_param {
                add.push("404");
            }
            add.push("500");
            if has_body {
                add.extend(["413", "415"]);
            }
            let responses = op["responses"]
                .as_object_mut()
                .expect("every operation has responses");
            for status in add {
                responses.entry(status).or_insert_with(|| json!({}));
            }
            for (status, response) in responses.iter_mut() {
                // utoipa leaves out an empty description; a `$ref` answer has its own.
                let described = response
                    .get("description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| !d.is_empty());
                if !described && response.get("$ref").is_none() {
                    response["description"] = json!(status_description(status));
                }
                // Bytes (photos, thumbnails, field-note files) are a string of bytes in the
                // media type the answer names (`format: binary`, which client generators read
                // as a file), not the array of numbers a `[u8]` body would be; pages are text.
                if let Some(content) = response.get_mut("content").and_then(Value::as_object_mut) {
                    for (media, body) in content.iter_mut() {
                        if !media.contains("json") {
                            body["schema"] = if media.starts_with("text/") {
                                json!({"type": "string"})
                            } else {
                                json!({"type": "string", "format": "binary"})
                            };
                        }
                    }
                }
            }
            let error_ref =
                json!({"$ref": format!("#/components/schemas/{}", error_schema_name(surface))});
            for (status, response) in responses.iter_mut() {
                // A handler that documents a body of its own for an error status keeps it (the
                // reporting health's 503 is its health report, see `error::OwnBody`).
                let own_body = response
                    .get("content")
                    .and_then(Value::as_object)
                    .is_some_and(|content| !content.is_empty());
                if (status.starts_with('4') || status.starts_with('5')) && !own_body {
                    // The owner's approval pages refuse in HTML (`error::render_errors`).
                    response["content"] = if path.starts_with("/approvals/") {
                        json!({"text/html": {"schema": {"type": "string"}}})
                    } else {
                        json!({"application/json": {"schema": error_ref}})
                    };
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

/// What an answer of `status` means where its handler does not say: the platform's shared
/// meaning of the statuses it answers, else the status's reason phrase.
fn status_description(status: &str) -> &'static str {
    match status {
        "200" => "OK",
        "201" => "Created",
        "202" => "Accepted: the work goes on in a job",
        "204" => "No content",
        "304" => "Not modified: the version named by `If-None-Match` is current",
        // domain::error::MAX_LISTED_PROBLEMS
        "400" => {
            "Invalid input: every bad parameter or field is listed (the first 20, then one item saying how many more there were)"
        }
        "401" => "No valid bearer token",
        "403" => "The token is valid but its roles do not allow this",
        "404" => "No such record",
        "409" => "Conflicts with the current state of the record",
        "410" => "Gone: the record existed and was removed for good",
        "412" => "`If-Match` names an older version of the record",
        // extract::JSON_BODY_LIMIT, and the API's BODY_LIMIT_BYTES.
        "413" => {
            "The body is larger than allowed: 1 MiB (1,048,576 bytes) for a JSON body; BODY_LIMIT_BYTES for a body that carries files (multipart, or base64 in the onboarding uploads and wizard steps)"
        }
        "415" => "The body is not of a content type this route reads",
        "429" => "Too many requests: retry later",
        "500" => "An unexpected failure, logged with the request id (`X-Request-ID`)",
        "503" => "A service the route needs (Postgres, Redis) is unavailable",
        other => other
            .parse::<u16>()
            .ok()
            .and_then(|code| axum::http::StatusCode::from_u16(code).ok())
            .and_then(|code| code.canonical_reason())
            .unwrap_or("See the status code"),
    }
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    fn document() -> Value {
        serde_json::to_value(crate::openapi_document()).expect("the document serializes")
    }

    /// A Response Object requires a description (OpenAPI 3.1), and a client reads an answer by
    /// its schema: every answer has both, bytes included. (scripts/openapi-check validates the
    /// whole document and generates a client from it.)
    #[test]
    fn every_answer_has_a_description_and_a_schema() {
        let doc = document();
        let mut missing = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("the document has paths") {
            for (method, op) in item.as_object().expect("a path item is an object") {
                let Some(responses) = op["responses"].as_object() else {
                    continue;
                };
                for (status, response) in responses {
                    if response["description"].as_str().is_none_or(str::is_empty) {
                        missing.push(format!("{method} {path} {status}: no description"));
                    }
                    for (media, body) in response["content"].as_object().into_iter().flatten() {
                        if body.get("schema").is_none() {
                            missing.push(format!("{method} {path} {status} {media}: no schema"));
                        }
                    }
                }
            }
        }
        assert!(missing.is_empty(), "{missing:#?}");
        let thumbnail = &doc["paths"]["/api/photos-enhanced/thumbnail/{id}"]["get"];
        let thumbnail = &thumbnail["responses"]["200"]["content"]["image/jpeg"]["schema"];
        assert_eq!(thumbnail["type"], "string", "{thumbnail}");
        assert_eq!(thumbnail["format"], "binary", "{thumbnail}");
    }

    /// Every member a schema requires is one it declares with its type: a generated client
    /// cannot send a required member the description does not declare.
    #[test]
    fn every_required_member_is_declared() {
        fn walk(value: &Value, at: &str, found: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    let composed = ["$ref", "allOf", "anyOf", "oneOf"]
                        .iter()
                        .any(|key| map.contains_key(*key));
                    if let Some(Value::Array(required)) = map.get("required")
                        && !composed
                    {
                        for name in required {
                            let declared = name
                                .as_str()
                                .and_then(|name| map.get("properties")?.get(name))
                                .is_some();
                            if !declared {
                                found.push(format!("{at}: {name}"));
                            }
                        }
                    }
                    for (key, inner) in map {
                        walk(inner, &format!("{at}/{key}"), found);
                    }
                }
                Value::Array(items) => {
                    for (i, inner) in items.iter().enumerate() {
                        walk(inner, &format!("{at}/{i}"), found);
                    }
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        walk(&document(), "#", &mut found);
        assert!(found.is_empty(), "required but not declared: {found:#?}");
    }

    /// The shared descriptions state the limits the code enforces.
    #[test]
    fn limits_in_the_descriptions_are_the_enforced_ones() {
        let limit = crate::extract::JSON_BODY_LIMIT;
        let grouped = limit
            .to_string()
            .as_bytes()
            .rchunks(3)
            .rev()
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join(",");
        assert!(
            super::status_description("413").contains(&grouped),
            "{grouped}"
        );
        let listed = format!("the first {}", domain::error::MAX_LISTED_PROBLEMS);
        assert!(super::status_description("400").contains(&listed));
    }
}
