use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{RedisServer, TestApp, TestAppOptions, json};

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn health_routes_answer_without_a_token(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let res = app
        .request(Method::GET, "/api/health", None)
        .send()
        .await
        .unwrap();
    assert!(res.headers().contains_key("x-request-id"));
    let (status, body) = json(res).await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ok");
    assert!(chrono::DateTime::parse_from_rfc3339(body["timestamp"].as_str().unwrap()).is_ok());
    let (status, _) = json(app.get_anonymous("/healthz").await).await;
    assert_eq!(status, 200);
    let (status, body) = json(app.get_anonymous("/readyz").await).await;
    assert_eq!(
        (status, body["postgres"].as_str(), body["redis"].as_str()),
        (200, Some("ok"), Some("ok"))
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn readyz_is_503_naming_redis_when_redis_is_down(pool: PgPool) {
    let mut redis = RedisServer::start();
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            redis_url: redis.url(),
            ..Default::default()
        },
    )
    .await;
    redis.stop();
    let (status, body) = json(app.get_anonymous("/readyz").await).await;
    assert_eq!(status, 503);
    assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE");
    assert_eq!(body["error"]["message"], "unreachable: redis");
    // Liveness does not depend on Redis.
    let (status, _) = json(app.get_anonymous("/healthz").await).await;
    assert_eq!(status, 200);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_openapi_document_describes_every_route(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (status, doc) = json(app.get_anonymous("/openapi.json").await).await;
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/api/health",
        "/healthz",
        "/readyz",
        "/admin/queues",
        "/admin/jobs",
        "/admin/jobs/{id}",
        "/admin/jobs/{id}/retry",
        "/admin/jobs/diagnostic",
        "/management/villas",
        "/management/villas/{id}",
    ] {
        assert!(
            paths.contains_key(path),
            "{path} missing from the OpenAPI document"
        );
    }
    // Every route of the management surface, with its method.
    for (path, methods) in [
        ("/management/villas", &["get", "post"][..]),
        ("/management/villas/{id}", &["get", "patch", "delete"]),
        ("/management/owners", &["get", "post"]),
        ("/management/owners/{id}", &["get", "patch"]),
        ("/management/staff", &["get", "post"]),
        ("/management/staff/{id}", &["get"]),
        ("/management/villas/{villaId}/staff", &["get", "post"]),
        ("/management/villas/{villaId}/staff/{staffId}", &["delete"]),
        ("/management/villas/{villaId}/documents", &["get", "post"]),
        ("/management/documents/{id}", &["delete"]),
        ("/management/villas/{villaId}/photos", &["get", "post"]),
        ("/management/photos/{id}/cover", &["patch"]),
        ("/management/villas/{villaId}/onboarding", &["get"]),
        (
            "/management/villas/{villaId}/onboarding/steps/{step}",
            &["patch"],
        ),
        (
            "/management/villas/{villaId}/ota-credentials",
            &["get", "post"],
        ),
    ] {
        for method in methods {
            assert!(
                paths.get(path).and_then(|p| p.get(*method)).is_some(),
                "{method} {path} missing from the OpenAPI document"
            );
        }
    }
    // The villa's closed sets are enumerations in the document, taken from the field table
    // that checks them.
    let create = &doc["components"]["schemas"]["ManagementVillaCreate"]["properties"];
    assert_eq!(
        create["propertyType"]["enum"],
        json!(domain::onboarding::records::PROPERTY_TYPES)
    );
    let styles: Vec<Value> = domain::onboarding::records::VILLA_STYLES
        .iter()
        .map(|s| json!(s))
        .chain([Value::Null])
        .collect();
    assert_eq!(create["villaStyle"]["enum"], json!(styles));
    assert_eq!(create["status"]["enum"].as_array().unwrap().len(), 7);
    let ui = app
        .request(Method::GET, "/swagger-ui/", None)
        .send()
        .await
        .unwrap();
    assert_eq!(ui.status(), 200);
    assert!(ui.text().await.unwrap().contains("swagger"));
}

/// The check every test's answers go through catches an answer that drifted from the document:
/// here the document is altered to require a member `/healthz` does not answer.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn answers_that_drift_from_the_document_fail_the_test(pool: PgPool) {
    let mut doc = serde_json::to_value(api::openapi_document()).unwrap();
    let schema = doc["components"]["schemas"]["Health"].clone();
    let mut tampered = schema.clone();
    tampered["required"]
        .as_array_mut()
        .unwrap()
        .push(json!("uptimeSeconds"));
    doc["components"]["schemas"]["Health"] = tampered;
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            doc: Some(serde_json::from_value(doc).unwrap()),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(app.get_anonymous("/healthz").await.status(), 200);
    let failures = app.doc_check.take_failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("GET /healthz 200") && failures[0].contains("uptimeSeconds"),
        "{failures:?}"
    );
    assert!(
        app.doc_check
            .checked()
            .contains(&"GET /healthz 200".to_owned())
    );
}

/// The reporting health with the database down (nothing listens where it is): 503 with the
/// report itself as the answer (not an error body), the database `disconnected`, within the
/// route's 2 s wait for it.
#[tokio::test]
async fn reporting_health_is_503_when_the_database_is_down() {
    // A port nothing listens on: connecting is refused, as with a stopped Postgres.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(std::time::Duration::from_secs(1))
        .connect_lazy(&format!("postgres://postgres@127.0.0.1:{port}/villa"))
        .unwrap();
    let app = TestApp::spawn(pool).await;
    let started = std::time::Instant::now();
    let (status, body) = json(app.get_anonymous("/reporting/health").await).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["database"], "disconnected", "{body}");
    assert_eq!(body["redis"], "connected", "{body}");
    assert!(body["timestamp"].is_string(), "{body}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
