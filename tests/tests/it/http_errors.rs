//! Every failure a client can cause answers a 4xx in its surface's shape, never a framework
//! default: malformed JSON, wrong content type, bad path and query parameters, bodies too large,
//! unknown routes, wrong methods. Plus request ids and CORS.

use reqwest::{Method, header};
use serde_json::json;
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, json as read_json};

use crate::auth::assert_error_shape;

const DIAGNOSTIC: &str = "/admin/jobs/diagnostic";

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn malformed_and_mistyped_json_bodies_are_400(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let token = app.idp.token(&["admin"]);
    let send = |body: &'static str, content_type: Option<&'static str>| {
        let mut req = app
            .http
            .post(app.url(DIAGNOSTIC))
            .bearer_auth(&token)
            .body(body);
        if let Some(ct) = content_type {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        req.send()
    };
    let (status, body) = read_json(
        send("{\"sleepMs\": ", Some("application/json"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert_error_shape("platform", &body, 400, "MALFORMED_JSON");

    let (status, body) = read_json(
        send("{\"sleepMs\": \"soon\"}", Some("application/json"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert_error_shape("platform", &body, 400, "VALIDATION_ERROR");
    assert_eq!(body["error"]["details"][0]["field"], "sleepMs");

    let (status, body) = read_json(
        send("{\"sleepMss\": 1}", Some("application/json"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400, "unknown fields are refused: {body}");

    let (status, body) = read_json(
        send("[1, 2]", Some("application/json; charset=utf-8"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400, "{body}");

    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let (status, body) = read_json(send("{}", ct).await.unwrap()).await;
        assert_eq!(status, 415, "{ct:?}");
        assert_error_shape("platform", &body, 415, "UNSUPPORTED_MEDIA_TYPE");
    }

    let (status, body) = read_json(
        send("{\"sleepMs\": 999999}", Some("application/json"))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["details"][0]["field"], "sleepMs");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn bad_path_and_query_parameters_are_400_naming_the_parameter(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (status, body) = read_json(app.get("/management/villas/not-a-uuid", "viewer").await).await;
    assert_eq!(status, 400);
    assert_error_shape("management", &body, 400, "VALIDATION_ERROR");
    assert_eq!(body["error"]["details"][0]["field"], "id");

    let (status, body) = read_json(app.get("/admin/jobs/123", "admin").await).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["details"][0]["field"], "id");

    let (status, body) = read_json(
        app.get("/management/villas?page=0&limit=abc&status=SOLD", "viewer")
            .await,
    )
    .await;
    assert_eq!(status, 400);
    let fields: Vec<&str> = body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["page", "limit", "status"],
        "every bad parameter is listed"
    );

    let (status, body) =
        read_json(app.get("/admin/jobs?status=DONE&queue=nope", "admin").await).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["details"].as_array().unwrap().len(), 2);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn bodies_over_the_limit_are_413_in_the_surface_shape(pool: PgPool) {
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            body_limit_bytes: 1024,
            ..Default::default()
        },
    )
    .await;
    let big = format!("{{\"note\": \"{}\"}}", "x".repeat(4096));
    // With a Content-Length: refused before the body is read, on any route of any surface.
    for (surface, path) in [
        ("platform", DIAGNOSTIC),
        ("onboarding", "/api/documents/upload"),
        ("management", "/management/villas"),
        ("maintenance", "/maintenance/work-orders"),
        ("inventory", "/inventory/items"),
        ("reporting", "/reporting/export"),
    ] {
        let res = app
            .request(Method::POST, path, Some("admin"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(big.clone())
            .send()
            .await
            .unwrap();
        let (status, body) = read_json(res).await;
        assert_eq!(status, 413, "{path}");
        assert_error_shape(surface, &body, 413, "PAYLOAD_TOO_LARGE");
    }
    // Streamed without a length: refused while reading.
    let chunks = futures::stream::iter((0..8).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024])));
    let res = app
        .request(Method::POST, DIAGNOSTIC, Some("admin"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    let (status, body) = read_json(res).await;
    assert_eq!(status, 413);
    assert_error_shape("platform", &body, 413, "PAYLOAD_TOO_LARGE");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn unknown_routes_and_wrong_methods_answer_in_the_surface_shape(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    for (surface, path) in [
        ("management", "/management/castles"),
        ("onboarding", "/api/nothing-here"),
        ("maintenance", "/maintenance/nothing-here"),
        ("inventory", "/inventory/nothing-here"),
        ("reporting", "/reporting/nothing-here"),
        ("platform", "/nothing-here"),
    ] {
        let (status, body) = read_json(app.get(path, "admin").await).await;
        assert_eq!(status, 404, "{path}");
        assert_error_shape(surface, &body, 404, "NOT_FOUND");
    }
    let (status, body) = read_json(
        app.request(Method::DELETE, "/management/villas", Some("admin"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 405);
    assert_error_shape("management", &body, 405, "METHOD_NOT_ALLOWED");
    let (status, body) = read_json(
        app.request(Method::PUT, "/api/health", None)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 405);
    assert_error_shape("onboarding", &body, 405, "METHOD_NOT_ALLOWED");
    let (status, body) = read_json(
        app.request(Method::DELETE, "/admin/queues", Some("admin"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 405);
    assert_error_shape("platform", &body, 405, "METHOD_NOT_ALLOWED");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_response_carries_a_request_id_and_an_incoming_one_is_kept(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let res = app
        .request(Method::GET, "/management/villas", None)
        .header("X-Request-ID", "trace-me-123")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(res.headers()["x-request-id"], "trace-me-123");
    let a = app
        .request(Method::GET, "/healthz", None)
        .send()
        .await
        .unwrap();
    let b = app
        .request(Method::GET, "/healthz", None)
        .send()
        .await
        .unwrap();
    let (a, b) = (
        a.headers()["x-request-id"].clone(),
        b.headers()["x-request-id"].clone(),
    );
    assert_ne!(a, b);
    assert!(uuid::Uuid::parse_str(a.to_str().unwrap()).is_ok());
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn cors_allows_configured_origins_with_204_preflights(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let preflight = |origin: &'static str| {
        app.http
            .request(Method::OPTIONS, app.url("/api/onboarding/start"))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "content-type, authorization, if-match, x-auto-save",
            )
            .send()
    };
    let res = preflight("https://app.example.test").await.unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(
        res.headers()["access-control-allow-origin"],
        "https://app.example.test"
    );
    let allowed = res.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_lowercase();
    for h in [
        "content-type",
        "authorization",
        "x-requested-with",
        "accept",
        "origin",
        "if-match",
        "x-auto-save",
    ] {
        assert!(allowed.contains(h), "{h} not allowed: {allowed}");
    }
    let res = preflight("https://evil.example").await.unwrap();
    assert!(res.headers().get("access-control-allow-origin").is_none());

    // Error responses carry CORS headers too, so a browser can read them.
    let res = app
        .http
        .get(app.url("/management/villas"))
        .header("Origin", "https://app.example.test")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(
        res.headers()["access-control-allow-origin"],
        "https://app.example.test"
    );
    assert!(
        res.headers()["access-control-expose-headers"]
            .to_str()
            .unwrap()
            .contains("x-request-id")
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn database_errors_do_not_leak_sql(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    // Break the table behind the route: the client must see a generic 500, nothing of the SQL.
    sqlx::query("ALTER TABLE villas RENAME TO villas_gone")
        .execute(&pool)
        .await
        .unwrap();
    let (status, body) = read_json(app.get("/management/villas", "viewer").await).await;
    assert_eq!(status, 500);
    assert_eq!(
        body,
        json!({"error": {"code": "SERVER_ERROR", "message": "internal server error", "details": []}})
    );
}

/// Text with a NUL character (which PostgreSQL cannot store) is a 400 naming the field, in a
/// JSON body, a query parameter or a multipart text part; once it reached the database as a
/// 500 (found by the fuzzing pass). A literal backslash-u0000 in text is kept as text.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn nul_characters_are_refused_with_400_naming_the_field(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (status, body) = read_json(
        app.post_json(
            "/api/onboarding/start",
            "manager",
            &json!({"villaCode": "VL-NUL", "villaName": "Nul", "address": "Jl. 1", "city": "Canggu",
                    "country": "Indonesia", "bedrooms": 2, "bathrooms": 1, "maxGuests": 4,
                    "propertyType": "VILLA"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let villa = body["villaId"].as_str().unwrap().to_owned();
    let (status, body) = read_json(
        app.post_json(
            &format!("/api/onboarding/{villa}/save-step-5"),
            "manager",
            &json!({"credentials": [{"platform": "AIRBNB", "username": "a\u{0}b"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["data"]["errors"][0]["field"],
        "credentials[0].username"
    );
    assert_eq!(body["data"]["errors"][0]["code"], "invalid_character");

    // Escaped, it is only text.
    let (status, body) = read_json(
        app.post_json(
            &format!("/api/onboarding/{villa}/save-step-1"),
            "manager",
            &json!({"description": "a literal \\u0000 in prose"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let stored: String = sqlx::query_scalar("SELECT description FROM villas WHERE id = $1::uuid")
        .bind(&villa)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(stored, "a literal \\u0000 in prose");

    let (status, body) =
        read_json(app.get("/management/villas?search=a%00b", "viewer").await).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["details"][0]["field"], "search");

    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(b"rules".to_vec()).file_name("rules.txt"),
        )
        .text("documentType", "OTHER")
        .text("title", "a\u{0}b");
    let (status, body) = read_json(
        app.request(
            Method::POST,
            &format!("/management/villas/{villa}/documents"),
            Some("manager"),
        )
        .multipart(form)
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["details"][0]["field"], "title");
}

/// The fields named in the body of a maintenance or inventory 400.
fn refused_fields(body: &serde_json::Value) -> Vec<String> {
    let list = body["error"]["fields"]
        .as_array()
        .or_else(|| body["error"]["details"]["fields"].as_array())
        .unwrap_or_else(|| panic!("no fields in {body}"));
    list.iter()
        .map(|f| f["field"].as_str().unwrap().to_owned())
        .collect()
}

/// Year 0000 (which Postgres does not keep) and timestamps that are year 10000 once in UTC were
/// 500s on every surface; the date and timestamp kinds refuse them, naming the field.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn dates_outside_what_is_kept_are_400_naming_the_field(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = crate::management_villas::create_villa(&app, "Dates").await;
    let post = |path: &'static str, body: serde_json::Value| {
        let req = app.request(Method::POST, path, Some("admin")).json(&body);
        async move { read_json(req.send().await.unwrap()).await }
    };
    let (status, body) = post(
        "/maintenance/assets",
        json!({"name": "Pump", "category": "POOL",
        "villaId": villa, "purchaseDate": "0000-01-01", "warrantyEndDate": "0000-06-01"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(refused_fields(&body), ["purchaseDate", "warrantyEndDate"]);
    let (status, body) = post(
        "/maintenance/work-orders",
        json!({"title": "Leak", "villaId": villa,
        "category": "PLUMBING", "priority": "HIGH", "dueDate": "9999-12-31T23:00:00-05:00"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(refused_fields(&body), ["dueDate"]);
    let (status, body) = post(
        "/maintenance/work-orders",
        json!({"title": "Leak", "villaId": villa,
        "category": "PLUMBING", "priority": "HIGH", "dueDate": "0000-12-31T23:00:00Z"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(refused_fields(&body), ["dueDate"]);
    let (status, body) = post(
        "/maintenance/timesheets",
        json!({"hours": 1, "activityType": "REPAIR",
        "date": "0000-01-01", "villaId": villa}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(refused_fields(&body), ["date"]);
    let templates = app.get("/maintenance/pmp/templates", "admin").await;
    let (_, templates) = read_json(templates).await;
    let (status, body) = post(
        "/maintenance/pmp/schedules",
        json!({"templateId": templates["data"][0]["id"],
        "assetId": uuid::Uuid::now_v7(), "startDate": "0000-01-01"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        refused_fields(&body).contains(&"startDate".to_owned()),
        "{body}"
    );
    let (status, body) = post("/inventory/items", json!({"name": "Milk", "sku": "MILK-1", "category": "LINENS",
        "propertyId": villa, "locationId": uuid::Uuid::now_v7(), "unit": "EACH", "expiryDate": "0000-02-29"})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(refused_fields(&body), ["expiryDate"]);
    // Query dates go through the same rule.
    let (status, body) = read_json(
        app.get("/maintenance/timesheets?startDate=0000-01-01", "admin")
            .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(refused_fields(&body), ["startDate"]);
    // The bounds themselves are dates like any other.
    let (status, body) = post(
        "/maintenance/assets",
        json!({"name": "Pump", "category": "POOL",
        "villaId": villa, "purchaseDate": "0001-01-01", "warrantyEndDate": "9999-12-31"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
}

/// The safety net under every route: what a client's data can make Postgres refuse becomes a
/// 4xx-kind domain error naming the field where the constraint's name tells it, never a 500.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_database_refusing_client_data_maps_to_client_errors(pool: PgPool) {
    use domain::Error;
    let check = sqlx::query(
        "INSERT INTO timesheet_days (person, work_date, hours) VALUES ('x', '2026-01-01', 30)",
    )
    .execute(&pool)
    .await
    .unwrap_err();
    match Error::from(check) {
        Error::Validation(fields) => assert_eq!(fields[0].field, "hours"),
        other => panic!("{other:?}"),
    }
    let foreign = sqlx::query(
        "INSERT INTO work_orders (id, villa_id, title, category, priority, created_by)
         VALUES ($1, $1, 'x', 'POOL', 'HIGH', 't')",
    )
    .bind(uuid::Uuid::now_v7())
    .execute(&pool)
    .await
    .unwrap_err();
    match Error::from(foreign) {
        Error::Conflict { message, .. } => assert!(message.starts_with("villaId"), "{message}"),
        other => panic!("{other:?}"),
    }
    let data = sqlx::query("SELECT '0000-01-01'::date")
        .execute(&pool)
        .await
        .unwrap_err();
    assert!(matches!(Error::from(data), Error::Validation(_)));
    // What no client data explains stays a database error (500).
    let broken = sqlx::query("SELECT * FROM no_such_table")
        .execute(&pool)
        .await
        .unwrap_err();
    assert!(matches!(Error::from(broken), Error::Database(_)));
}

/// A client's `X-Request-ID` is kept only when it is a plain token of at most 128 characters:
/// it is stored with every job the request enqueues and repeated on their log lines, so a huge
/// or log-breaking one is replaced by an id of the API's own.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_unfit_request_id_is_replaced(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    for unfit in ["x".repeat(129), "two words".to_owned(), "a\"b".to_owned()] {
        let res = app
            .request(Method::GET, "/healthz", None)
            .header("X-Request-ID", unfit.as_str())
            .send()
            .await
            .unwrap();
        let answered = res.headers()["x-request-id"].to_str().unwrap().to_owned();
        assert_ne!(answered, unfit);
        assert!(uuid::Uuid::parse_str(&answered).is_ok(), "{answered}");
    }
    let fit = "trace:2026-11-24_abc.DEF-1".to_owned() + &"x".repeat(100);
    let res = app
        .request(Method::GET, "/healthz", None)
        .header("X-Request-ID", fit.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["x-request-id"], fit.as_str());
}
