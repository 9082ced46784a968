//! The auth matrix: every way a token can be wrong answers 401, a valid token whose role lacks
//! the permission answers 403, each in the shape of the surface that was called.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, idp, json as read_json};

/// One readable route per surface (surfaces whose routes come with later work answer 404 after
/// authentication, which is enough to see authentication in their shape).
const SURFACES: [(&str, &str); 6] = [
    ("management", "/management/villas"),
    ("onboarding", "/api/villas"),
    ("maintenance", "/maintenance/work-orders"),
    ("inventory", "/inventory/items"),
    ("reporting", "/reporting/listings"),
    ("platform", "/admin/queues"),
];

/// Asserts `body` is `surface`'s error shape with `code` and `status`.
pub fn assert_error_shape(surface: &str, body: &Value, status: u16, code: &str) {
    match surface {
        "management" | "platform" => {
            assert_eq!(body["error"]["code"], code, "{body}");
            assert!(body["error"]["message"].is_string(), "{body}");
            assert!(body["error"]["details"].is_array(), "{body}");
        }
        "onboarding" => {
            assert_eq!(body["statusCode"], status, "{body}");
            assert!(body["statusMessage"].is_string(), "{body}");
            assert!(body["data"]["errors"].is_array(), "{body}");
            assert_eq!(body["data"]["code"], code, "{body}");
        }
        "maintenance" => {
            assert_eq!(body["error"]["statusCode"], status, "{body}");
            assert!(body["error"]["message"].is_string(), "{body}");
            assert!(
                body["error"]["code"].as_str().unwrap().ends_with(code),
                "{body}"
            );
        }
        "inventory" => {
            assert_eq!(body["error"]["code"], code, "{body}");
            assert!(body["error"]["message"].is_string(), "{body}");
            assert!(body["error"]["details"].is_object(), "{body}");
        }
        "reporting" => {
            assert_eq!(body["error"]["code"], code, "{body}");
            assert!(body["error"]["message"].is_string(), "{body}");
            assert!(
                body["error"]
                    .as_object()
                    .unwrap()
                    .contains_key("retryAfter"),
                "{body}"
            );
        }
        other => panic!("unknown surface {other}"),
    }
}

async fn call(app: &TestApp, path: &str, authorization: Option<String>) -> (u16, Value) {
    let mut req = app.http.request(Method::GET, app.url(path));
    if let Some(a) = authorization {
        req = req.header("Authorization", a);
    }
    read_json(req.send().await.unwrap()).await
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn bad_tokens_answer_401_in_each_surface_shape(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let idp = &app.idp;
    let valid = idp.claims(&["admin"]);
    let with = |patch: Value| {
        let mut c = valid.clone();
        for (k, v) in patch.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let now = chrono::Utc::now().timestamp();
    let mut without_exp = valid.clone();
    without_exp.as_object_mut().unwrap().remove("exp");
    let cases: Vec<(&str, Option<String>)> = vec![
        ("no token", None),
        ("not bearer", Some("Basic YWRtaW46YWRtaW4=".into())),
        ("garbage", Some("Bearer not.a.jwt".into())),
        (
            "bad signature",
            Some(format!(
                "Bearer {}",
                idp.sign_with_unpublished_key("k1", &valid)
            )),
        ),
        (
            "expired",
            Some(format!(
                "Bearer {}",
                idp.sign("k1", &with(json!({"exp": now - 3600, "iat": now - 7200})))
            )),
        ),
        (
            "wrong issuer",
            Some(format!(
                "Bearer {}",
                idp.sign("k1", &with(json!({"iss": "https://evil.example/"})))
            )),
        ),
        (
            "wrong audience",
            Some(format!(
                "Bearer {}",
                idp.sign("k1", &with(json!({"aud": "another-api"})))
            )),
        ),
        (
            "no exp",
            Some(format!("Bearer {}", idp.sign("k1", &without_exp))),
        ),
        (
            "alg none",
            Some(format!("Bearer {}", idp::unsigned_token(&valid, "k1"))),
        ),
        (
            "HS256 keyed with the public key",
            Some(format!(
                "Bearer {}",
                idp::hs256_token(&valid, "k1", &idp.public_key_bytes("k1"))
            )),
        ),
        (
            "unknown kid",
            Some(format!(
                "Bearer {}",
                idp.sign_with_unpublished_key("k-unknown", &valid)
            )),
        ),
    ];
    for (surface, path) in SURFACES {
        for (case, auth) in &cases {
            let (status, body) = call(&app, path, auth.clone()).await;
            assert_eq!(status, 401, "{surface} {case}: {body}");
            assert_error_shape(surface, &body, 401, "UNAUTHORIZED");
        }
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_key_rotated_in_at_the_provider_is_accepted_at_once(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    // Warm the key cache with the first key.
    let (status, _) = call(
        &app,
        "/management/villas",
        Some(format!("Bearer {}", app.idp.token(&["viewer"]))),
    )
    .await;
    assert_eq!(status, 200);
    app.idp.rotate("k2");
    let rotated = app.idp.sign("k2", &app.idp.claims(&["viewer"]));
    let (status, body) = call(
        &app,
        "/management/villas",
        Some(format!("Bearer {rotated}")),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_role_without_permission_answers_403_in_the_surface_shape(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let res = app
        .request(Method::POST, "/management/villas", Some("viewer"))
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    let (status, body) = read_json(res).await;
    assert_eq!(status, 403);
    assert_error_shape("management", &body, 403, "FORBIDDEN");

    for role in ["manager", "staff", "viewer"] {
        let (status, body) = read_json(app.get("/admin/queues", role).await).await;
        assert_eq!(status, 403, "{role}");
        assert_error_shape("platform", &body, 403, "FORBIDDEN");
    }
    // A token with no known role can read nothing.
    let none = app.idp.sign("k1", &app.idp.claims(&["guest"]));
    let (status, body) = call(&app, "/management/villas", Some(format!("Bearer {none}"))).await;
    assert_eq!(status, 403);
    assert_error_shape("management", &body, 403, "FORBIDDEN");

    for role in ["admin", "manager", "staff", "viewer"] {
        let (status, _) = read_json(app.get("/management/villas", role).await).await;
        assert_eq!(status, 200, "{role} reads villas");
    }
    let (status, _) = read_json(app.get("/admin/queues", "admin").await).await;
    assert_eq!(status, 200);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_roles_claim_is_configurable(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    // The app reads `roles`; a token carrying roles elsewhere has none.
    let mut claims = app.idp.claims(&[]);
    claims["groups"] = json!(["admin"]);
    let (status, _) = call(
        &app,
        "/admin/queues",
        Some(format!("Bearer {}", app.idp.sign("k1", &claims))),
    )
    .await;
    assert_eq!(status, 403);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn development_sign_in_works_with_no_identity_provider(pool: PgPool) {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            dev_key: Some(key.clone()),
            ..Default::default()
        },
    )
    .await;
    let token = api::auth::dev::mint(
        &key,
        domain::settings::DEV_ISSUER,
        domain::settings::DEV_AUDIENCE,
        "roles",
        "dev-user",
        &["admin".to_owned()],
        600,
    )
    .unwrap();
    let (status, body) = call(&app, "/admin/queues", Some(format!("Bearer {token}"))).await;
    assert_eq!(status, 200, "{body}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn production_serves_no_development_keys(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (status, _) = call(&app, "/dev/jwks.json", None).await;
    assert_eq!(
        status, 401,
        "an unmounted route asks for a token like any unknown route"
    );
    let (status, _) = call(
        &app,
        "/dev/jwks.json",
        Some(format!("Bearer {}", app.idp.token(&["admin"]))),
    )
    .await;
    assert_eq!(status, 404);
}
