//! The web console as the platform serves it (`api::console`): its files with their caching and
//! Content-Security-Policy, its configuration, the development sign-in (`POST /dev/token`) and
//! `GET /me`, which tells the console what to offer. The console's own behaviour is tested in a
//! browser (`console/e2e`, `scripts/console-e2e`).

use std::path::PathBuf;

use reqwest::header;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, json as read_json};

/// A built console in a temporary folder, removed (with the file beside it) when dropped.
struct BuiltConsole(PathBuf);

impl Drop for BuiltConsole {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(self.0.with_extension("secret"));
    }
}

/// A built console as Vite writes it: `index.html` and content-hashed assets, one with the gzip
/// twin `scripts/console-build` writes.
fn built_console() -> BuiltConsole {
    let dir = std::env::temp_dir().join(format!("villa-console-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("index.html"),
        r#"<!doctype html><script type="module" src="/console/assets/index-Ab12.js"></script>"#,
    )
    .unwrap();
    std::fs::write(dir.join("assets/index-Ab12.js"), "console.log('app')").unwrap();
    std::fs::write(dir.join("assets/index-Ab12.js.gz"), b"\x1f\x8bgzip-bytes").unwrap();
    std::fs::write(dir.join("assets/index-Cd34.css"), "body{margin:0}").unwrap();
    // Outside the folder, linked from inside it: a symbolic link is not followed.
    let outside = dir.with_extension("secret");
    std::fs::write(&outside, "not the console's").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("assets/linked-Ef56.js")).unwrap();
    BuiltConsole(dir)
}

fn with_console(
    built: &BuiltConsole,
    oidc: Option<domain::settings::ConsoleOidc>,
) -> TestAppOptions {
    TestAppOptions {
        console: domain::settings::ConsoleSettings {
            dir: built.0.clone(),
            oidc,
        },
        ..Default::default()
    }
}

fn header_of(res: &reqwest::Response, name: header::HeaderName) -> String {
    res.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn serves_the_app_with_its_caching_and_policy_without_a_token(pool: PgPool) {
    let built = built_console();
    let app = TestApp::spawn_with(pool, with_console(&built, None)).await;

    // The app's own paths (its router reads them) all answer index.html, never cached.
    for path in [
        "/console",
        "/console/",
        "/console/work-orders/42",
        "/console/exports?x=1",
    ] {
        let res = app.get_anonymous(path).await;
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(header_of(&res, header::CACHE_CONTROL), "no-store", "{path}");
        assert!(header_of(&res, header::CONTENT_TYPE).starts_with("text/html"));
        let csp = header_of(&res, header::CONTENT_SECURITY_POLICY);
        assert!(csp.contains("script-src 'self';"), "{csp}");
        assert!(csp.contains("style-src 'self';"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
        assert_eq!(header_of(&res, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
        assert!(
            res.text()
                .await
                .unwrap()
                .contains("/console/assets/index-Ab12.js")
        );
    }

    // Content-hashed assets are cached for good, gzip-encoded for a client that takes it.
    let res = app.get_anonymous("/console/assets/index-Ab12.js").await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        header_of(&res, header::CACHE_CONTROL),
        "public, max-age=31536000, immutable"
    );
    assert!(header_of(&res, header::CONTENT_TYPE).starts_with("text/javascript"));
    assert_eq!(header_of(&res, header::CONTENT_ENCODING), "");
    assert_eq!(res.text().await.unwrap(), "console.log('app')");
    let res = app
        .http
        .get(app.url("/console/assets/index-Ab12.js"))
        .header(header::ACCEPT_ENCODING, "br, gzip;q=0.8")
        .send()
        .await
        .unwrap();
    assert_eq!(header_of(&res, header::CONTENT_ENCODING), "gzip");
    assert_eq!(header_of(&res, header::VARY), "accept-encoding");
    assert_eq!(&res.bytes().await.unwrap()[..], b"\x1f\x8bgzip-bytes");
    let res = app
        .http
        .get(app.url("/console/assets/index-Ab12.js"))
        .header(header::ACCEPT_ENCODING, "gzip;q=0")
        .send()
        .await
        .unwrap();
    assert_eq!(
        header_of(&res, header::CONTENT_ENCODING),
        "",
        "q=0 refuses gzip"
    );
    let res = app.get_anonymous("/console/assets/index-Cd34.css").await;
    assert!(header_of(&res, header::CONTENT_TYPE).starts_with("text/css"));

    // An asset that is not there is a 404, never the app; nothing outside the folder is reached.
    for path in [
        "/console/assets/index-Zz99.js",
        "/console/assets/index-Ab12.js.gz",
        "/console/assets/linked-Ef56.js",
        "/console/assets/nested/index-Ab12.js",
        "/console/assets/..%2F..%2Fvilla-console.secret",
        "/console/assets/%2e%2e%2f..%2fvilla-console.secret",
        "/console/assets",
        "/console/assets/",
    ] {
        let res = app.get_anonymous(path).await;
        assert_eq!(res.status(), 404, "{path}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"]["code"], "NOT_FOUND", "{path}: {body}");
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn tells_the_console_how_to_sign_in(pool: PgPool) {
    // Production without an identity provider for the console: a token is pasted.
    let built = built_console();
    let app = TestApp::spawn_with(pool.clone(), with_console(&built, None)).await;
    let res = app.get_anonymous("/console/config.json").await;
    assert_eq!(res.status(), 200);
    assert_eq!(header_of(&res, header::CACHE_CONTROL), "no-store");
    let config: Value = res.json().await.unwrap();
    assert_eq!(config["signIn"], "token");
    assert_eq!(config["oidc"], Value::Null);
    assert_eq!(
        config["businessTimeZone"],
        app.core.business_time_zone.name()
    );
    assert_eq!(config["rolesClaim"], "roles");

    // With one: its issuer and client, and the CSP lets the console reach its origin only.
    let oidc = domain::settings::ConsoleOidc {
        issuer: "https://id.example.com:8443/realms/villa".into(),
        client_id: "villa-console".into(),
    };
    let app = TestApp::spawn_with(pool, with_console(&built, Some(oidc))).await;
    let config: Value = app
        .get_anonymous("/console/config.json")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(config["signIn"], "oidc");
    assert_eq!(
        config["oidc"],
        json!({"issuer": "https://id.example.com:8443/realms/villa", "clientId": "villa-console"})
    );
    let res = app.get_anonymous("/console").await;
    let csp = header_of(&res, header::CONTENT_SECURITY_POLICY);
    assert!(
        csp.contains("connect-src 'self' https://id.example.com:8443;"),
        "{csp}"
    );
    assert!(
        csp.contains("form-action 'self' https://id.example.com:8443;"),
        "{csp}"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_console_not_built_says_how_to_build_it(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let res = app.get_anonymous("/console/housekeeping").await;
    assert_eq!(res.status(), 503);
    let body: Value = res.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("scripts/console-build"), "{body}");
    // Its configuration is still there: it does not depend on the files.
    assert_eq!(
        app.get_anonymous("/console/config.json").await.status(),
        200
    );
}

fn dev_app_options() -> TestAppOptions {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap();
    TestAppOptions {
        dev_key: Some(ed25519_dalek::SigningKey::from_bytes(&seed)),
        development: true,
        ..Default::default()
    }
}

async fn dev_token(app: &TestApp, body: Value) -> (u16, Value) {
    let res = app
        .http
        .post(app.url("/dev/token"))
        .json(&body)
        .send()
        .await
        .unwrap();
    read_json(res).await
}

async fn me(app: &TestApp, token: &str) -> Value {
    let res = app
        .http
        .get(app.url("/me"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let (status, body) = read_json(res).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn operations(me: &Value) -> Vec<&str> {
    me["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn development_signs_in_by_role_and_me_lists_what_the_role_may_do(pool: PgPool) {
    let app = TestApp::spawn_with(pool, dev_app_options()).await;

    let (status, manager) = dev_token(&app, json!({"role": "manager"})).await;
    assert_eq!(status, 200, "{manager}");
    assert_eq!(manager["tokenType"], "Bearer");
    assert!(manager["expiresIn"].as_i64().unwrap() > 3600);
    let manager = me(&app, manager["accessToken"].as_str().unwrap()).await;
    assert_eq!(manager["subject"], "dev-manager");
    assert_eq!(manager["roles"], json!(["manager"]));
    let may = operations(&manager);
    assert!(may.contains(&"POST /reporting/sync/trigger"), "{may:?}");
    assert!(
        may.contains(&"PATCH /maintenance/work-orders/{id}"),
        "{may:?}"
    );
    assert!(may.contains(&"GET /me"), "{may:?}");
    assert!(
        !may.contains(&"GET /admin/queues"),
        "operators only: {may:?}"
    );
    let mut sorted = may.clone();
    sorted.sort();
    assert_eq!(may, sorted);
    assert_eq!(
        manager["permissions"]["maintenance"],
        json!(["read", "write", "delete", "manage"])
    );
    assert_eq!(manager["permissions"]["platform"], json!([]));

    let (_, viewer) = dev_token(&app, json!({"role": "Viewer"})).await;
    let viewer = me(&app, viewer["accessToken"].as_str().unwrap()).await;
    let may = operations(&viewer);
    assert!(may.contains(&"GET /reporting/dashboard/metrics"), "{may:?}");
    // An export only reads (auth::permissions::READS): a viewer may request one.
    assert!(may.contains(&"POST /reporting/export"), "{may:?}");
    assert!(!may.contains(&"POST /reporting/sync/trigger"), "{may:?}");
    assert!(
        !may.contains(&"PATCH /maintenance/work-orders/{id}"),
        "{may:?}"
    );

    // A role the platform does not know, or a body that is not one, is the caller's mistake.
    let (status, body) = dev_token(&app, json!({"role": "owner"})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["details"][0]["field"], "role", "{body}");
    let (status, _) = dev_token(&app, json!({"role": "admin", "subject": "root"})).await;
    assert_eq!(status, 400);

    // A page of another site cannot get one through the developer's browser; the console's own
    // page (same origin) can.
    let own_origin = app.base.clone();
    for (origin, fetch_site, expected) in [
        (Some("https://evil.example"), None, 403),
        (Some("http://127.0.0.1:1"), None, 403),
        (None, Some("cross-site"), 403),
        (Some(own_origin.as_str()), Some("same-origin"), 200),
        (None, Some("same-origin"), 200),
    ] {
        let mut req = app
            .http
            .post(app.url("/dev/token"))
            .json(&json!({"role": "admin"}));
        if let Some(origin) = origin {
            req = req.header("Origin", origin);
        }
        if let Some(site) = fetch_site {
            req = req.header("Sec-Fetch-Site", site);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), expected, "{origin:?} {fetch_site:?}");
    }
    // A site that rebinds its own name to this machine: its page is "same-origin" to the
    // browser, but names itself in Host.
    let port = app.base.rsplit(':').next().unwrap();
    let rebound = format!("evil.example:{port}");
    let res = app
        .http
        .post(app.url("/dev/token"))
        .header("Host", &rebound)
        .header("Origin", format!("http://{rebound}"))
        .json(&json!({"role": "admin"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);

    // /me needs a token like any other route.
    assert_eq!(app.get_anonymous("/me").await.status(), 401);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn production_has_no_development_sign_in(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (status, _) = dev_token(&app, json!({"role": "admin"})).await;
    assert_eq!(
        status, 401,
        "an unmounted route asks for a token like any unknown route"
    );
    let res = app
        .http
        .post(app.url("/dev/token"))
        .bearer_auth(app.idp.token(&["admin"]))
        .json(&json!({"role": "admin"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // /me answers for the identity provider's tokens.
    let res = app.get("/me", "staff").await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["roles"], json!(["staff"]));
    // Staff do field work but decide nothing above it (they cannot cancel a work order).
    assert_eq!(body["permissions"]["maintenance"], json!(["read", "write"]));
}

/// `req` with `pairs` as an `application/x-www-form-urlencoded` body, as a browser's form sends.
fn form(req: reqwest::RequestBuilder, pairs: &[(&str, &str)]) -> reqwest::RequestBuilder {
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                b' ' => "+".to_owned(),
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    req.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body.join("&"))
}

/// The identity provider stand-in the console's OIDC sign-in is tested against keeps the rules a
/// real one does (RFC 6749 §4.1, RFC 7636): a code goes once, to the redirect URI it was issued
/// for, with the verifier of its challenge; and the token it issues is one the API accepts.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_identity_provider_stand_in_keeps_the_code_flow_s_rules(pool: PgPool) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let redirect = "http://127.0.0.1:9/console/signed-in".to_owned();
    let router = fake_idp::router(fake_idp::Settings {
        issuer: issuer.clone(),
        client_id: "villa-console".into(),
        redirect_uris: vec![redirect.clone()],
        audience: domain::settings::DEV_AUDIENCE.into(),
        roles_claim: "roles".into(),
        token_ttl: std::time::Duration::from_secs(600),
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = fake_idp::s256(verifier);

    // A sign-in: the form's answer sends the browser back with a code and the state.
    let sign_in = |redirect_uri: &str, method: &str| {
        form(
            http.post(format!("{issuer}/authorize")),
            &[
                ("response_type", "code"),
                ("client_id", "villa-console"),
                ("redirect_uri", redirect_uri),
                ("state", "s 1"),
                ("code_challenge", challenge.as_str()),
                ("code_challenge_method", method),
                ("user", "idp-manager"),
            ],
        )
    };
    let code_of = |res: &reqwest::Response| -> String {
        assert_eq!(res.status(), 303);
        let location = header_of(res, header::LOCATION);
        assert!(
            location.starts_with(&format!("{redirect}?code=")),
            "{location}"
        );
        assert!(location.ends_with("&state=s%201"), "{location}");
        location
            .split("code=")
            .nth(1)
            .unwrap()
            .split('&')
            .next()
            .unwrap()
            .to_owned()
    };
    let exchange = |code: String, verifier: &str, redirect_uri: &str| {
        form(
            http.post(format!("{issuer}/token")),
            &[
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("client_id", "villa-console"),
                ("redirect_uri", redirect_uri),
                ("code_verifier", verifier),
            ],
        )
    };
    let error_of = |body: Value| body["error"].as_str().unwrap_or_default().to_owned();

    // An unregistered redirect URI is refused on the provider's page, never followed.
    let res = sign_in("https://evil.example/cb", "S256")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    // PKCE is required: plain is sent back as an error.
    let res = sign_in(&redirect, "plain").send().await.unwrap();
    assert_eq!(res.status(), 303);
    assert!(header_of(&res, header::LOCATION).contains("error=invalid_request"));

    // The right verifier, once: a token the API accepts, for the role picked.
    let code = code_of(&sign_in(&redirect, "S256").send().await.unwrap());
    let res = exchange(code.clone(), verifier, &redirect)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(header_of(&res, header::CACHE_CONTROL), "no-store");
    let tokens: Value = res.json().await.unwrap();
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let res = exchange(code, verifier, &redirect).send().await.unwrap();
    assert_eq!(res.status(), 400, "a code goes once");
    assert_eq!(error_of(res.json().await.unwrap()), "invalid_grant");

    // Another verifier, or another redirect URI: refused, and the code is spent.
    let code = code_of(&sign_in(&redirect, "S256").send().await.unwrap());
    let res = exchange(code.clone(), &"b".repeat(43), &redirect)
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(res.json().await.unwrap()), "invalid_grant");
    let res = exchange(code, verifier, &redirect).send().await.unwrap();
    assert_eq!(error_of(res.json().await.unwrap()), "invalid_grant");
    let code = code_of(&sign_in(&redirect, "S256").send().await.unwrap());
    let res = exchange(code, verifier, "http://127.0.0.1:9/elsewhere")
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(res.json().await.unwrap()), "invalid_grant");

    // The API, trusting the provider's keys, takes the access token.
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            auth: Some(domain::settings::AuthSettings {
                jwks_url: format!("{issuer}/jwks"),
                issuer: issuer.clone(),
                audience: domain::settings::DEV_AUDIENCE.into(),
                roles_claim: "roles".into(),
            }),
            ..Default::default()
        },
    )
    .await;
    let res = app
        .http
        .get(app.url("/me"))
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    let (status, me) = read_json(res).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["subject"], "idp-manager");
    assert_eq!(me["roles"], json!(["manager"]));
}
