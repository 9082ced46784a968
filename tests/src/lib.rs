//! Test support: the app on a random port over its own database ([`TestApp`]), a loopback
//! identity provider ([`TestIdp`]), private `redis-server` processes ([`RedisServer`]) and
//! in-process workers ([`TestWorker`]); the fake PMS and the sync helpers are in [`pms`]; the
//! document store's remote backends have a loopback S3-compatible server ([`S3Server`]) and a
//! loopback stand-in of Microsoft Graph ([`FakeGraph`]), which [`TestStorage`] points an app at.

pub mod fake_graph;
pub mod idp;
pub mod openapi_check;
pub mod pms;
pub mod prometheus_text;
pub mod redis_server;
pub mod s3_server;
pub mod worker;

use std::time::Duration;

use api::state::AppState;
use domain::settings::{
    ApiSettings, AppEnv, AuthSettings, CoreSettings, GraphSettings, JobSettings, S3Settings,
    StorageBackend,
};
use domain::storage::DocumentStore;
use jobs::JobQueues;
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

pub use fake_graph::FakeGraph;
pub use idp::TestIdp;
pub use redis_server::RedisServer;
pub use s3_server::S3Server;
pub use worker::TestWorker;

/// A `BUSINESS_TIME_ZONE` (a whole-hour `Etc/GMT±N` zone) in which it is now between 03:00 and
/// 21:00, and one whose date is not UTC's when there is such a zone (at every hour but from 09:00
/// to 13:00 UTC): a test of "today" whose app has it cannot see the API's day change while
/// it runs (midnight is at least 3 hours away), and one taking UTC's date, or the database's, for
/// the API's fails most hours of the day rather than passing by luck.
pub fn zone_far_from_midnight() -> domain::clock::BusinessZone {
    use chrono::{TimeDelta, Timelike as _};
    let now = chrono::Utc::now().naive_utc();
    let noon_minutes = 12 * 60;
    let candidates = (-12..=14).filter_map(|east: i64| {
        let local = now + TimeDelta::hours(east);
        let minutes = i64::from(local.hour() * 60 + local.minute());
        (3 * 60..21 * 60).contains(&minutes).then(|| {
            let same_date = local.date() == now.date();
            (east, (same_date, (minutes - noon_minutes).abs()))
        })
    });
    // Another date than UTC's first, then the nearest to noon.
    let (east, _) = candidates
        .min_by_key(|(_, rank)| *rank)
        .expect("some whole-hour offset is between 03:00 and 21:00 at any time");
    // POSIX signs: Etc/GMT-7 is 7 hours east of UTC.
    let name = match east {
        0 => "Etc/GMT".to_owned(),
        east if east > 0 => format!("Etc/GMT-{east}"),
        west => format!("Etc/GMT+{}", -west),
    };
    name.parse().expect("an Etc/GMT zone")
}

/// The shared Redis of the machine, for tests that do not stop Redis (each uses its own prefix).
pub fn shared_redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

pub fn core_settings(redis_url: &str, prefix: &str) -> CoreSettings {
    CoreSettings {
        app_env: AppEnv::Production,
        database_url: String::new(),
        redis_url: redis_url.to_owned(),
        storage_backend: StorageBackend::Local,
        storage_local_dir: std::env::temp_dir().join(format!("villa-test-{prefix}")),
        s3: None,
        graph: None,
        data_encryption_key: [42; 32],
        redis_prefix: prefix.to_owned(),
        db_max_connections: 10,
        jobs: JobSettings {
            lease: Duration::from_secs(15),
            redispatch_after: Duration::from_secs(5),
            poll_interval: Duration::from_millis(20),
            concurrency: 16,
            claim_batch: 32,
            complete_batch: 100,
            complete_interval: Duration::from_millis(5),
            shutdown_grace: Duration::from_secs(5),
        },
        log_json: false,
        planned_maintenance: domain::settings::PlannedMaintenanceSettings {
            lead_days: 7,
            catch_up_days: 31,
        },
        stock_alerts: domain::settings::StockAlertSettings {
            expiry_days: 30,
            forecast_alert_days: 14,
            forecast_critical_days: 3,
        },
        turnovers: domain::settings::TurnoverSettings { horizon_days: 60 },
        business_time_zone: domain::clock::BusinessZone::default(),
        // Not configured: only the tests of the PMS sync point it at a fake (`pms::settings_for`).
        pms: domain::settings::PmsSettings::default(),
        // REPORTING_CURRENCY and EXPORT_RETENTION_DAYS at their defaults.
        reporting: domain::settings::ReportingSettings {
            currency: domain::reporting::figures::Currency::new_setting("THB")
                .expect("THB is a currency"),
            export_retention: Duration::from_secs(7 * 24 * 3600),
        },
        // METRICS_* at their defaults (no token); a TestApp sets its own (`TestAppOptions`).
        metrics: domain::settings::MetricsSettings::default(),
        // Links to the address a request came to, and no e-mail (`TestAppOptions::smtp_url`).
        approvals: domain::settings::ApprovalSettings {
            public_base_url: None,
            link_days: 7,
        },
        mail: domain::settings::MailSettings {
            smtp_url: None,
            from: domain::settings::DEFAULT_SMTP_FROM.to_owned(),
        },
    }
}

/// The `METRICS_TOKEN` a [`TestApp`] has unless its options say otherwise.
pub const TEST_METRICS_TOKEN: &str = "test-metrics-token";

pub fn unique_prefix() -> String {
    format!("test-{}", Uuid::new_v4().simple())
}

/// The document store of a [`TestApp`] and of the workers it starts.
#[derive(Debug, Clone, Default)]
pub enum TestStorage {
    /// A folder of its own under the temporary directory (`core.storage_local_dir`).
    #[default]
    Local,
    /// A bucket of an S3-compatible server, usually the test process's [`S3Server`].
    S3(S3Settings),
    /// A document library behind a Graph endpoint, usually a [`FakeGraph`] (which must outlive
    /// the app).
    SharePoint(GraphSettings),
}

impl TestStorage {
    /// A bucket of its own on the test process's S3 server (started on first use), so tests
    /// share the server and nothing else.
    pub async fn s3() -> TestStorage {
        TestStorage::S3(S3Server::start().await.fresh_settings())
    }

    /// Points `core` at this store, as `STORAGE_BACKEND` and its variables would.
    pub fn apply(self, core: &mut CoreSettings) {
        let (backend, s3, graph) = match self {
            TestStorage::Local => (StorageBackend::Local, None, None),
            TestStorage::S3(s3) => (StorageBackend::S3, Some(s3), None),
            TestStorage::SharePoint(graph) => (StorageBackend::SharePoint, None, Some(graph)),
        };
        core.storage_backend = backend;
        core.s3 = s3;
        core.graph = graph;
    }
}

/// Options of a [`TestApp`].
pub struct TestAppOptions {
    pub redis_url: String,
    pub body_limit_bytes: usize,
    pub upload_max_bytes: usize,
    /// `APP_ENV=development` (debug routes mounted).
    pub development: bool,
    pub request_timeout: Duration,
    pub cors_origins: Option<Vec<String>>,
    /// Development sign-in: serve this key's JWKS at `/dev/jwks.json` and verify against it.
    pub dev_key: Option<ed25519_dalek::SigningKey>,
    /// The API description answers are checked against (default: the API's own).
    pub doc: Option<utoipa::openapi::OpenApi>,
    /// `BUSINESS_TIME_ZONE` of the API and of the workers [`TestApp::worker`] starts.
    pub business_time_zone: domain::clock::BusinessZone,
    /// The PMS of the API and of the workers [`TestApp::worker`] starts (None: not configured).
    pub pms: Option<domain::settings::PmsSettings>,
    /// The Redis key prefix (None: one of its own). Two apps given the same prefix over the same
    /// database act as two replicas of one platform: they share rate limits and caches.
    pub redis_prefix: Option<String>,
    /// The document store of the API and of the workers [`TestApp::worker`] starts.
    pub storage: TestStorage,
    /// `METRICS_ENABLED`.
    pub metrics_enabled: bool,
    /// The web console's files and sign-in (default: a folder that does not exist, no OIDC).
    pub console: domain::settings::ConsoleSettings,
    /// The identity provider the API trusts instead of the test's own (or the development key).
    pub auth: Option<AuthSettings>,
    /// `METRICS_TOKEN` (default [`TEST_METRICS_TOKEN`]; None: unset, so `/metrics` is open in
    /// development and refused in production).
    pub metrics_token: Option<String>,
    /// `METRICS_QUEUE_REFRESH_SECS` (default 1 s, so that tests see new job rows soon).
    pub metrics_queue_refresh: Duration,
    /// `SMTP_URL` of the API and of its workers (default: none, no e-mail).
    pub smtp_url: Option<String>,
    /// `PUBLIC_BASE_URL` (default: none, links point at the address a request came to).
    pub public_base_url: Option<String>,
}

impl Default for TestAppOptions {
    fn default() -> Self {
        Self {
            redis_url: shared_redis_url(),
            body_limit_bytes: 40 * 1024 * 1024,
            upload_max_bytes: 25 * 1024 * 1024,
            development: false,
            request_timeout: Duration::from_secs(30),
            cors_origins: Some(vec!["https://app.example.test".to_owned()]),
            dev_key: None,
            console: domain::settings::ConsoleSettings {
                dir: "console-not-built".into(),
                oidc: None,
            },
            auth: None,
            doc: None,
            business_time_zone: domain::clock::BusinessZone::default(),
            pms: None,
            redis_prefix: None,
            storage: TestStorage::Local,
            metrics_enabled: true,
            metrics_token: Some(TEST_METRICS_TOKEN.to_owned()),
            metrics_queue_refresh: Duration::from_secs(1),
            smtp_url: None,
            public_base_url: None,
        }
    }
}

/// The API served on a random loopback port, over a database of its own.
pub struct TestApp {
    pub base: String,
    pub pool: PgPool,
    pub idp: TestIdp,
    pub queues: JobQueues,
    pub core: CoreSettings,
    pub http: reqwest::Client,
    /// Every answer checked against the API description; a test whose answers did not conform
    /// fails when its app is dropped.
    pub doc_check: std::sync::Arc<openapi_check::DocCheck>,
    stop: CancellationToken,
}

impl TestApp {
    pub async fn spawn(pool: PgPool) -> TestApp {
        Self::spawn_with(pool, TestAppOptions::default()).await
    }

    pub async fn spawn_with(pool: PgPool, options: TestAppOptions) -> TestApp {
        init_logs();
        let idp = TestIdp::start().await;
        let prefix = options.redis_prefix.unwrap_or_else(unique_prefix);
        let mut core = core_settings(&options.redis_url, &prefix);
        if options.development {
            core.app_env = domain::settings::AppEnv::Development;
        }
        core.business_time_zone = options.business_time_zone;
        if let Some(pms) = options.pms {
            core.pms = pms;
        }
        options.storage.apply(&mut core);
        core.metrics.enabled = options.metrics_enabled;
        core.metrics.token = options.metrics_token;
        core.metrics.queue_refresh = options.metrics_queue_refresh;
        core.mail.smtp_url = options.smtp_url;
        core.approvals.public_base_url = options.public_base_url;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let auth = match (options.auth.clone(), &options.dev_key) {
            (Some(auth), _) => auth,
            (None, None) => AuthSettings {
                jwks_url: idp.jwks_url.clone(),
                issuer: idp::ISSUER.to_owned(),
                audience: idp::AUDIENCE.to_owned(),
                roles_claim: "roles".to_owned(),
            },
            (None, Some(_)) => AuthSettings {
                jwks_url: format!("{base}/dev/jwks.json"),
                issuer: domain::settings::DEV_ISSUER.to_owned(),
                audience: domain::settings::DEV_AUDIENCE.to_owned(),
                roles_claim: "roles".to_owned(),
            },
        };
        let api = ApiSettings {
            port: 0,
            auth,
            cors_origins: options.cors_origins,
            body_limit_bytes: options.body_limit_bytes,
            request_timeout: options.request_timeout,
            upload_max_bytes: options.upload_max_bytes,
            slow_request: Duration::from_millis(1000),
            console: options.console,
        };
        let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).expect("redis url");
        let state = AppState::new(api::state::Shared::new(
            pool.clone(),
            queues.clone(),
            core.clone(),
            api,
        ));
        let stop = CancellationToken::new();
        let doc_check = openapi_check::DocCheck::new(
            &options.doc.clone().unwrap_or_else(api::openapi_document),
        );
        let app = api::app(state, options.dev_key.clone()).layer(
            axum::middleware::from_fn_with_state(doc_check.clone(), openapi_check::check),
        );
        let s = stop.clone();
        tokio::spawn(async move {
            let _ = api::serve(listener, app, async move { s.cancelled().await }).await;
        });
        TestApp {
            base,
            pool,
            idp,
            queues,
            core,
            http: reqwest::Client::new(),
            doc_check,
            stop,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Today as the API reads it: the date in its `BUSINESS_TIME_ZONE`, through the domain's
    /// clock (a test computing "today" any other way may disagree with the API).
    pub fn today(&self) -> chrono::NaiveDate {
        self.core.business_time_zone.today()
    }

    /// A request with a valid token for `role` (`None`: no token).
    pub fn request(&self, method: Method, path: &str, role: Option<&str>) -> RequestBuilder {
        let req = self.http.request(method, self.url(path));
        match role {
            Some(role) => req.bearer_auth(self.idp.token(&[role])),
            None => req,
        }
    }

    /// A GET without a token.
    pub async fn get_anonymous(&self, path: &str) -> Response {
        self.request(Method::GET, path, None).send().await.unwrap()
    }

    pub async fn get(&self, path: &str, role: &str) -> Response {
        self.request(Method::GET, path, Some(role))
            .send()
            .await
            .unwrap()
    }

    pub async fn post_json(&self, path: &str, role: &str, body: &Value) -> Response {
        self.request(Method::POST, path, Some(role))
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// A connection to this app's Redis (keys under `self.core.redis_prefix`).
    pub fn redis(&self) -> redis::aio::ConnectionManager {
        self.queues.connection()
    }

    /// The document store this app and its workers use, for a test to look at what they stored
    /// whatever the backend.
    pub fn store(&self) -> DocumentStore {
        DocumentStore::from_settings(&self.core)
    }

    /// `GET /metrics` as Prometheus scrapes it (with the app's `METRICS_TOKEN`, if it has
    /// one): asserts a 200 in the text format and answers the body.
    pub async fn scrape_text(&self) -> String {
        let mut req = self.http.get(self.url("/metrics"));
        if let Some(token) = &self.core.metrics.token {
            req = req.bearer_auth(token);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let content_type = res
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let text = res.text().await.unwrap();
        assert_eq!(status, 200, "GET /metrics: {text}");
        assert!(
            content_type.starts_with("text/plain"),
            "GET /metrics answered Content-Type {content_type:?}"
        );
        text
    }

    /// [`scrape_text`](Self::scrape_text), read strictly as Prometheus' text format (the test
    /// fails, showing the text, on anything Prometheus would refuse).
    pub async fn scrape(&self) -> Vec<prometheus_text::Sample> {
        let text = self.scrape_text().await;
        prometheus_text::parse(&text)
            .unwrap_or_else(|e| panic!("/metrics is not Prometheus text: {e}\n{text}"))
    }

    /// A worker over this app's database and Redis queues.
    pub fn worker(&self, registry: jobs::JobRegistry) -> TestWorker {
        TestWorker::start(self.pool.clone(), &self.core, registry)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.stop.cancel();
        // scripts/test adds up, over the whole suite, which operations' answers were checked.
        if let Ok(path) = std::env::var("OPENAPI_CHECKED_FILE") {
            use std::io::Write as _;
            let lines: String = self
                .doc_check
                .checked()
                .into_iter()
                .map(|l| l + "\n")
                .collect();
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = f.write_all(lines.as_bytes());
            }
        }
        let failures = self.doc_check.failures();
        if !failures.is_empty() && !std::thread::panicking() {
            panic!(
                "{} answer(s) did not match the API description:\n{}",
                failures.len(),
                failures.join("\n")
            );
        }
    }
}

/// Reads a response's JSON body, with the status for context on failure.
pub async fn json(res: Response) -> (u16, Value) {
    let status = res.status().as_u16();
    let text = res.text().await.unwrap();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("status {status}, body not JSON: {text}"));
    (status, value)
}

/// Polls `check` until it returns `Some`, for at most `timeout`.
pub async fn eventually<T, F, Fut>(timeout: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return Some(v);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (at most 10 s) until `n` sessions of this test's database are blocked behind the
/// session `holder`: waiting for a lock it holds, or queued behind one that is (a second caller
/// for a row waits on the first). A race test calls it to know its callers are all in flight
/// before it releases what it holds.
pub async fn wait_blocked_by(pool: &PgPool, holder: i32, n: i64) {
    let blocked = eventually(Duration::from_secs(10), || async move {
        let waiting: i64 = sqlx::query_scalar(
            "WITH RECURSIVE blocked AS (
                 SELECT pid FROM pg_stat_activity
                 WHERE datname = current_database() AND $1 = ANY (pg_blocking_pids(pid))
                 UNION
                 SELECT a.pid FROM pg_stat_activity a, blocked b
                 WHERE b.pid = ANY (pg_blocking_pids(a.pid)))
             SELECT count(*) FROM blocked",
        )
        .bind(holder)
        .fetch_one(pool)
        .await
        .unwrap();
        (waiting >= n).then_some(())
    })
    .await;
    assert!(
        blocked.is_some(),
        "fewer than {n} sessions wait behind session {holder} within 10 s"
    );
}

pub fn init_logs() {
    use tracing_subscriber::{EnvFilter, fmt};
    let _ = fmt()
        .with_env_filter(
            EnvFilter::try_from_env("TEST_LOG").unwrap_or_else(|_| EnvFilter::new("off")),
        )
        .with_test_writer()
        .try_init();
}

/// The status of job `id` as its row says.
pub async fn job_status(pool: &PgPool, id: Uuid) -> Option<String> {
    sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await
        .unwrap()
}
