//! Settings from the environment (ARCHITECTURE.md, "Configuration"). In production a missing or
//! malformed value stops the process at start with a message naming every offending variable; in
//! development each has a local default so `scripts/dev` runs with nothing set.

use std::{env, fmt, path::PathBuf, str::FromStr, time::Duration};

use base64::Engine as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppEnv {
    Development,
    Production,
}

impl AppEnv {
    pub fn is_development(self) -> bool {
        self == AppEnv::Development
    }
}

/// Where the document store keeps its files (`STORAGE_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageBackend {
    /// `local`: a folder of this machine (`STORAGE_LOCAL_DIR`), which every process must share.
    Local,
    /// `s3`: a bucket of an S3-compatible object store (`S3_*`).
    S3,
    /// `sharepoint`: a SharePoint document library through Microsoft Graph (`GRAPH_*`).
    SharePoint,
}

/// The bucket of `STORAGE_BACKEND=s3`: AWS S3 or any S3-compatible store (MinIO, Ceph, R2).
#[derive(Clone, PartialEq, Eq)]
pub struct S3Settings {
    /// `S3_BUCKET`.
    pub bucket: String,
    /// `S3_REGION` (`us-east-1` when `S3_ENDPOINT` is set and it is not).
    pub region: String,
    /// `S3_ENDPOINT`: the store's address when it is not AWS, without a trailing `/`; requests
    /// then name the bucket in the path, and `http://` is allowed.
    pub endpoint: Option<String>,
    /// `S3_PREFIX`: the key prefix of every object, without leading or trailing `/`.
    pub prefix: Option<String>,
    /// `AWS_ACCESS_KEY_ID`; with `secret_access_key`, both or neither. Neither: the usual AWS
    /// credential chain (environment, profile, instance or task role).
    pub access_key_id: Option<String>,
    /// `AWS_SECRET_ACCESS_KEY`: never logged.
    pub secret_access_key: Option<String>,
}

impl fmt::Debug for S3Settings {
    // Written by hand so that the secret key can never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Settings")
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .field("prefix", &self.prefix)
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// The SharePoint document library of `STORAGE_BACKEND=sharepoint`, reached through Microsoft
/// Graph with the platform's own app registration (client credentials).
#[derive(Clone, PartialEq, Eq)]
pub struct GraphSettings {
    /// `GRAPH_TENANT_ID`: the Entra ID tenant (its id or a domain such as
    /// `contoso.onmicrosoft.com`).
    pub tenant_id: String,
    /// `GRAPH_CLIENT_ID`: the app registration's application (client) id.
    pub client_id: String,
    /// `GRAPH_CLIENT_SECRET`: never logged.
    pub client_secret: String,
    /// `GRAPH_DRIVE_ID`: the document library (`b!…`).
    pub drive_id: String,
    /// `GRAPH_BASE_URL` (default `https://graph.microsoft.com/v1.0`), without a trailing `/`.
    pub base_url: String,
    /// `GRAPH_LOGIN_URL` (default `https://login.microsoftonline.com`), without a trailing `/`.
    pub login_url: String,
}

impl GraphSettings {
    pub const DEFAULT_BASE_URL: &'static str = "https://graph.microsoft.com/v1.0";
    pub const DEFAULT_LOGIN_URL: &'static str = "https://login.microsoftonline.com";
}

impl fmt::Debug for GraphSettings {
    // Written by hand so that the client secret can never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphSettings")
            .field("tenant_id", &self.tenant_id)
            .field("client_id", &self.client_id)
            .field("drive_id", &self.drive_id)
            .field("base_url", &self.base_url)
            .field("login_url", &self.login_url)
            .finish_non_exhaustive()
    }
}

/// Settings every process needs (API, workers, scheduler).
#[derive(Clone)]
pub struct CoreSettings {
    pub app_env: AppEnv,
    pub database_url: String,
    pub redis_url: String,
    pub storage_backend: StorageBackend,
    pub storage_local_dir: PathBuf,
    /// The bucket: set exactly when `storage_backend` is [`StorageBackend::S3`].
    pub s3: Option<S3Settings>,
    /// The document library: set exactly when `storage_backend` is
    /// [`StorageBackend::SharePoint`].
    pub graph: Option<GraphSettings>,
    pub data_encryption_key: [u8; 32],
    /// Prefix of every Redis key the platform writes (`REDIS_QUEUE_PREFIX`, default `villa`).
    pub redis_prefix: String,
    pub db_max_connections: u32,
    pub jobs: JobSettings,
    pub log_json: bool,
    pub planned_maintenance: PlannedMaintenanceSettings,
    pub stock_alerts: StockAlertSettings,
    /// `BUSINESS_TIME_ZONE` (IANA name, default `UTC`): whose day "today" is (a timesheet's
    /// latest date, due dates, expiry alerts, reports' default periods).
    pub business_time_zone: crate::clock::BusinessZone,
    /// The property-management system the reporting sync reads (`PMS_*`).
    pub pms: PmsSettings,
    /// The reporting figures and exports (`REPORTING_CURRENCY`, `EXPORT_RETENTION_DAYS`).
    pub reporting: ReportingSettings,
    /// Prometheus metrics (`METRICS_*`).
    pub metrics: MetricsSettings,
}

/// Prometheus metrics of a process (docs/operations.md).
#[derive(Clone, PartialEq, Eq)]
pub struct MetricsSettings {
    /// `METRICS_ENABLED` (default true): off, nothing is recorded and no `/metrics` answers.
    pub enabled: bool,
    /// `METRICS_PORT`: where a worker or the scheduler serves `/metrics` (unset: nowhere; the
    /// API serves it on its own port).
    pub port: Option<u16>,
    /// `METRICS_TOKEN`: the bearer token a scraper must send. Without it `/metrics` is open in
    /// development and closed in production.
    pub token: Option<String>,
    /// `METRICS_QUEUE_REFRESH_SECS` (1 to 300, default 10): how long the queue gauges read from
    /// Postgres are kept, whatever the number of scrapers.
    pub queue_refresh: Duration,
}

impl MetricsSettings {
    pub const DEFAULT_QUEUE_REFRESH_SECS: u64 = 10;
}

impl Default for MetricsSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            port: None,
            token: None,
            queue_refresh: Duration::from_secs(Self::DEFAULT_QUEUE_REFRESH_SECS),
        }
    }
}

/// The token never appears in a log line or a message.
impl fmt::Debug for MetricsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsSettings")
            .field("enabled", &self.enabled)
            .field("port", &self.port)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("queue_refresh", &self.queue_refresh)
            .finish()
    }
}

/// The reporting figures and exports. (How often the scheduler removes expired exports,
/// `EXPORT_EXPIRY_INTERVAL_SECS`, is declared beside the job: `jobs::Periodic`.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportingSettings {
    /// `REPORTING_CURRENCY` (ISO 4217, default `THB`): the currency of money figures when a
    /// request names none.
    pub currency: crate::reporting::figures::Currency,
    /// `EXPORT_RETENTION_DAYS` (whole days, 1 to 3660, default 7): how long an export's file is
    /// kept for download.
    pub export_retention: Duration,
}

impl ReportingSettings {
    pub const DEFAULT_RETENTION_DAYS: u64 = 7;
    pub const MAX_RETENTION_DAYS: u64 = 3660;
}

/// The defaults above.
impl Default for ReportingSettings {
    fn default() -> Self {
        Self {
            currency: crate::reporting::figures::Currency::default(),
            export_retention: Duration::from_secs(Self::DEFAULT_RETENTION_DAYS * 86_400),
        }
    }
}

/// The property-management system: Hostaway's public API v1, or anything that speaks it (the
/// development fake). Without credentials the PMS is not configured: the reporting health says
/// so, a sync trigger is refused and the scheduler enqueues no sync. (How often the scheduler
/// syncs, `PMS_SYNC_INTERVAL_SECS`, is declared beside the job: `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct PmsSettings {
    /// `PMS_BASE_URL` (default `https://api.hostaway.com/v1`), without a trailing `/`.
    pub base_url: String,
    /// `PMS_CLIENT_ID` (the account id) and `PMS_CLIENT_SECRET` (the API key): both or neither.
    pub credentials: Option<PmsCredentials>,
    /// `PMS_RATE_LIMIT` (default 15): requests per window that every worker together may send;
    /// 0 lifts the limit (a test PMS without one).
    pub rate_limit: u32,
    /// `PMS_RATE_WINDOW_SECS` (default 10): the window of `rate_limit`.
    pub rate_window: Duration,
    /// `PMS_PAGE_SIZE` (default 100, 1 to 1000): records asked for per request.
    pub page_size: u32,
    /// `PMS_SYNC_MARGIN_SECS` (default 3600): an incremental sync asks for the activity since the
    /// last completed sync started, less this much, so that clocks that disagree lose nothing.
    pub sync_margin: Duration,
    /// `PMS_MAX_RETRIES` (default 5): retries of one request after a 429, a 5xx or a network
    /// failure before the sync's attempt fails.
    pub max_retries: u32,
    /// `PMS_RETRY_BASE_MS` (default 1000): the first backoff; each retry doubles it.
    pub retry_base: Duration,
    /// `PMS_TIMEOUT_SECS` (default 30): the longest one request may take.
    pub request_timeout: Duration,
}

impl PmsSettings {
    pub const DEFAULT_BASE_URL: &'static str = "https://api.hostaway.com/v1";

    pub fn is_configured(&self) -> bool {
        self.credentials.is_some()
    }
}

/// Not configured, with the defaults above.
impl Default for PmsSettings {
    fn default() -> Self {
        Self {
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            credentials: None,
            rate_limit: 15,
            rate_window: Duration::from_secs(10),
            page_size: 100,
            sync_margin: Duration::from_secs(3600),
            max_retries: 5,
            retry_base: Duration::from_millis(1000),
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// The account the platform reads the PMS as.
#[derive(Clone, PartialEq, Eq)]
pub struct PmsCredentials {
    /// Hostaway's account id.
    pub client_id: String,
    /// The API key: never logged.
    pub client_secret: String,
}

impl fmt::Debug for PmsCredentials {
    // Written by hand so that the secret can never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PmsCredentials")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Stock alerts: how near an expiry date raises an alert. (How often the scheduler evaluates
/// every item, `ALERT_EVALUATION_INTERVAL_SECS`, is declared beside the job: `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct StockAlertSettings {
    /// `EXPIRY_ALERT_DAYS` (default 30): an item expiring within this many days has an alert.
    pub expiry_days: u32,
}

/// Planned maintenance: how far ahead and how far back work orders are generated. (How often the
/// scheduler runs the generation, `PM_GENERATE_INTERVAL_SECS`, is declared beside the job:
/// `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct PlannedMaintenanceSettings {
    /// `PM_LEAD_DAYS` (default 7): an occurrence gets its work order this many days ahead.
    pub lead_days: u32,
    /// `PM_CATCH_UP_DAYS` (default 31): occurrences missed longer ago than this (a schedule
    /// created with an old start, a platform stopped for weeks) get no work order.
    pub catch_up_days: u32,
}

impl fmt::Debug for CoreSettings {
    // Written by hand so that the encryption key can never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CoreSettings")
            .field("app_env", &self.app_env)
            .field("storage_backend", &self.storage_backend)
            .field("storage_local_dir", &self.storage_local_dir)
            .field("s3", &self.s3)
            .field("graph", &self.graph)
            .field("redis_prefix", &self.redis_prefix)
            .field("db_max_connections", &self.db_max_connections)
            .field("jobs", &self.jobs)
            .field("pms", &self.pms)
            .field("reporting", &self.reporting)
            .finish_non_exhaustive()
    }
}

/// Tuning of the job pipeline; the defaults are what production runs with.
#[derive(Debug, Clone)]
pub struct JobSettings {
    /// How long a claimed job is leased to its worker; renewed while it runs. A worker that died
    /// loses its jobs to another after at most this long plus one reaper tick.
    pub lease: Duration,
    /// A QUEUED row whose id was handed to Redis this long ago and has not been claimed is pushed
    /// again (Redis lost it, or the process died between commit and push).
    pub redispatch_after: Duration,
    /// How often an idle worker asks Redis for work.
    pub poll_interval: Duration,
    /// Jobs one worker process runs at once per queue.
    pub concurrency: usize,
    /// On SIGTERM, how long in-flight jobs may take to finish before they are handed back.
    pub shutdown_grace: Duration,
}

/// Settings of the HTTP API only.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    pub port: u16,
    pub auth: AuthSettings,
    /// `None` means any origin (`*`), allowed only in development.
    pub cors_origins: Option<Vec<String>>,
    pub body_limit_bytes: usize,
    pub request_timeout: Duration,
    /// Largest file accepted by the upload routes, decoded (`UPLOAD_MAX_BYTES`, default 25 MB).
    pub upload_max_bytes: usize,
    /// Requests slower than this are kept in the monitoring's slow list (`SLOW_REQUEST_MS`,
    /// default 1000).
    pub slow_request: Duration,
}

#[derive(Debug, Clone)]
pub struct AuthSettings {
    pub jwks_url: String,
    pub issuer: String,
    pub audience: String,
    pub roles_claim: String,
}

/// Reads variables and collects every problem, so one start names all of them.
struct Env<'a> {
    lookup: Lookup<'a>,
    production: bool,
    problems: Vec<String>,
}

/// Where settings are read from: the process environment, or a map in tests.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(name: &str) -> Option<String> {
    env::var(name).ok()
}

impl<'a> Env<'a> {
    fn open(lookup: Lookup<'a>) -> Result<(AppEnv, Self), SettingsError> {
        let app_env = app_env(lookup)?;
        let env = Env {
            lookup,
            production: app_env == AppEnv::Production,
            problems: Vec::new(),
        };
        Ok((app_env, env))
    }

    fn raw(&self, name: &str) -> Option<String> {
        (self.lookup)(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// A required setting: in development `dev_default` is used when it is absent.
    fn required(&mut self, name: &str, dev_default: impl FnOnce() -> String) -> String {
        match self.raw(name) {
            Some(v) => v,
            None if !self.production => dev_default(),
            None => {
                self.problems
                    .push(format!("{name} is required in production"));
                String::new()
            }
        }
    }

    /// A setting with a default that holds in every environment.
    fn parsed<T: FromStr>(&mut self, name: &str, default: T, what: &str) -> T {
        match self.raw(name) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| {
                self.problems
                    .push(format!("{name} must be {what}, got {v:?}"));
                default
            }),
        }
    }

    fn finish(self) -> Result<(), SettingsError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(SettingsError(self.problems))
        }
    }
}

#[derive(Debug)]
pub struct SettingsError(pub Vec<String>);

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration: {}", self.0.join("; "))
    }
}

impl std::error::Error for SettingsError {}

fn app_env(lookup: Lookup<'_>) -> Result<AppEnv, SettingsError> {
    match lookup("APP_ENV").as_deref().map(str::trim) {
        None | Some("development") => Ok(AppEnv::Development),
        Some("production") => Ok(AppEnv::Production),
        Some(other) => Err(SettingsError(vec![format!(
            "APP_ENV must be development or production, got {other:?}"
        )])),
    }
}

/// A duration in whole seconds from the variable `name` (`default` when it is not set, at least
/// one second), for a setting declared beside the code that uses it rather than in
/// [`CoreSettings`]: a periodic job's interval (`jobs::Periodic`). A malformed value is an error
/// naming the variable, in every environment, as for the settings above.
pub fn seconds_setting(
    lookup: Lookup<'_>,
    name: &str,
    default: Duration,
) -> Result<Duration, SettingsError> {
    let (_, mut env) = Env::open(lookup)?;
    let secs = env.parsed(name, default.as_secs(), "a whole number of seconds");
    env.finish()?;
    Ok(Duration::from_secs(secs.max(1)))
}

/// Where development keeps what it generates (keys, stored files): `.dev/` in the working folder.
pub fn dev_dir() -> PathBuf {
    PathBuf::from(process_env("DEV_DIR").unwrap_or_else(|| ".dev".to_owned()))
}

impl CoreSettings {
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(&process_env)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, SettingsError> {
        let (app_env, mut env) = Env::open(lookup)?;
        let database_url = env.required("DATABASE_URL", || {
            "postgres://postgres@127.0.0.1:5432/villa_dev".to_owned()
        });
        let redis_url = env.required("REDIS_URL", || "redis://127.0.0.1:6379".to_owned());
        let storage_backend = match env
            .required("STORAGE_BACKEND", || "local".to_owned())
            .as_str()
        {
            "local" | "" => StorageBackend::Local,
            "s3" => StorageBackend::S3,
            "sharepoint" => StorageBackend::SharePoint,
            other => {
                env.problems.push(format!(
                    "STORAGE_BACKEND must be local, s3 or sharepoint, got {other:?}"
                ));
                StorageBackend::Local
            }
        };
        // Only the chosen backend's settings are read: the others' variables mean nothing.
        let s3 = (storage_backend == StorageBackend::S3).then(|| s3_settings(&mut env));
        let graph =
            (storage_backend == StorageBackend::SharePoint).then(|| graph_settings(&mut env));
        let storage_local_dir = match env.raw("STORAGE_LOCAL_DIR") {
            Some(dir) => PathBuf::from(dir),
            None if storage_backend == StorageBackend::Local && env.production => {
                env.problems.push(
                    "STORAGE_LOCAL_DIR is required in production when STORAGE_BACKEND is local"
                        .into(),
                );
                PathBuf::new()
            }
            None => dev_dir().join("storage"),
        };
        let data_encryption_key = match env.raw("DATA_ENCRYPTION_KEY") {
            Some(v) => parse_key(&v).unwrap_or_else(|| {
                env.problems.push(
                    "DATA_ENCRYPTION_KEY must be the base64 encoding of exactly 32 bytes".into(),
                );
                [0; 32]
            }),
            None if env.production => {
                env.problems
                    .push("DATA_ENCRYPTION_KEY is required in production".into());
                [0; 32]
            }
            None => match dev_data_key() {
                Ok(key) => key,
                Err(e) => {
                    env.problems.push(format!(
                        "DATA_ENCRYPTION_KEY unset and no development key: {e}"
                    ));
                    [0; 32]
                }
            },
        };
        let planned_maintenance = PlannedMaintenanceSettings {
            lead_days: env.parsed("PM_LEAD_DAYS", 7u32, "a whole number of days"),
            catch_up_days: env.parsed("PM_CATCH_UP_DAYS", 31u32, "a whole number of days"),
        };
        let stock_alerts = StockAlertSettings {
            expiry_days: env.parsed("EXPIRY_ALERT_DAYS", 30u32, "a whole number of days"),
        };
        // Day counts that reach into date arithmetic: bounded so that a typo cannot push a date
        // past what Postgres keeps (every tick would fail) or enumerate years of occurrences.
        for (name, days, max) in [
            ("PM_LEAD_DAYS", planned_maintenance.lead_days, 366),
            ("PM_CATCH_UP_DAYS", planned_maintenance.catch_up_days, 366),
            ("EXPIRY_ALERT_DAYS", stock_alerts.expiry_days, 3660),
        ] {
            if days > max {
                env.problems
                    .push(format!("{name} must be at most {max} days, got {days}"));
            }
        }
        let business_time_zone = env.parsed(
            "BUSINESS_TIME_ZONE",
            crate::clock::BusinessZone::default(),
            "an IANA time zone name such as Asia/Makassar",
        );
        let redis_prefix = env.parsed("REDIS_QUEUE_PREFIX", "villa".to_owned(), "a key prefix");
        let db_max_connections = env.parsed("DB_MAX_CONNECTIONS", 20u32, "a whole number");
        let jobs = JobSettings {
            lease: Duration::from_secs(env.parsed(
                "JOB_LEASE_SECS",
                15u64,
                "a whole number of seconds",
            )),
            redispatch_after: Duration::from_secs(env.parsed(
                "JOB_REDISPATCH_AFTER_SECS",
                5u64,
                "a whole number of seconds",
            )),
            poll_interval: Duration::from_millis(env.parsed(
                "JOB_POLL_INTERVAL_MS",
                20u64,
                "a whole number of milliseconds",
            )),
            concurrency: env.parsed("WORKER_CONCURRENCY", 64usize, "a whole number"),
            shutdown_grace: Duration::from_secs(env.parsed(
                "SHUTDOWN_GRACE_SECS",
                15u64,
                "a whole number of seconds",
            )),
        };
        let log_json = match env.raw("LOG_FORMAT").as_deref() {
            None => env.production,
            Some("json") => true,
            Some("pretty") => false,
            Some(other) => {
                env.problems
                    .push(format!("LOG_FORMAT must be json or pretty, got {other:?}"));
                env.production
            }
        };
        if jobs.concurrency == 0 {
            env.problems
                .push("WORKER_CONCURRENCY must be at least 1".into());
        }
        let pms = pms_settings(&mut env);
        let reporting = reporting_settings(&mut env);
        let metrics = metrics_settings(&mut env);
        env.finish()?;
        Ok(Self {
            app_env,
            database_url,
            redis_url,
            storage_backend,
            storage_local_dir,
            s3,
            graph,
            data_encryption_key,
            redis_prefix,
            db_max_connections,
            jobs,
            log_json,
            planned_maintenance,
            stock_alerts,
            business_time_zone,
            pms,
            reporting,
            metrics,
        })
    }
}

/// `METRICS_*`; problems go to `env` like every other setting's.
fn metrics_settings(env: &mut Env<'_>) -> MetricsSettings {
    let enabled = match env.raw("METRICS_ENABLED").as_deref() {
        None | Some("true" | "1" | "yes") => true,
        Some("false" | "0" | "no") => false,
        Some(other) => {
            env.problems.push(format!(
                "METRICS_ENABLED must be true or false, got {other:?}"
            ));
            true
        }
    };
    let port = env
        .raw("METRICS_PORT")
        .and_then(|raw| match raw.parse::<u16>() {
            Ok(port) if port > 0 => Some(port),
            _ => {
                env.problems.push(format!(
                    "METRICS_PORT must be a port number (1 to 65535), got {raw:?}"
                ));
                None
            }
        });
    // The token's value is never repeated in a message.
    let token = env.raw("METRICS_TOKEN");
    if token.as_ref().is_some_and(|t| t.len() < 16) {
        env.problems
            .push("METRICS_TOKEN must be at least 16 characters".into());
    }
    let secs = env.parsed(
        "METRICS_QUEUE_REFRESH_SECS",
        MetricsSettings::DEFAULT_QUEUE_REFRESH_SECS,
        "a whole number of seconds",
    );
    if !(1..=300).contains(&secs) {
        env.problems.push(format!(
            "METRICS_QUEUE_REFRESH_SECS must be 1 to 300 seconds, got {secs}"
        ));
    }
    MetricsSettings {
        enabled,
        port,
        token,
        queue_refresh: Duration::from_secs(secs.clamp(1, 300)),
    }
}

/// `S3_*` and the AWS credentials of `STORAGE_BACKEND=s3`; problems go to `env` like every other
/// setting's. Required in every environment: there is no bucket to fall back on.
fn s3_settings(env: &mut Env<'_>) -> S3Settings {
    let endpoint = env.raw("S3_ENDPOINT").map(|raw| {
        if !is_http_address(&raw) {
            env.problems.push(format!(
                "S3_ENDPOINT must be an http(s) address such as http://127.0.0.1:9000, got {raw:?}"
            ));
        }
        raw.trim_end_matches('/').to_owned()
    });
    let bucket = match env.raw("S3_BUCKET") {
        Some(bucket) => {
            // AWS's rules are stricter (lowercase, at most 63), and stores differ on the
            // details (older buckets and other stores allow capitals and `_`): refused here is
            // what is a bucket name nowhere, and anything that would change the requests'
            // paths (`/`, `?`, `#`, `%`, spaces).
            if bucket.len() < 3
                || bucket.len() > 255
                || !bucket
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            {
                env.problems.push(format!(
                    "S3_BUCKET must be a bucket name (3 to 255 letters, digits, '.', '-' or '_'), got {bucket:?}"
                ));
            }
            bucket
        }
        None => {
            env.problems
                .push("S3_BUCKET is required when STORAGE_BACKEND is s3".into());
            String::new()
        }
    };
    let region = match env.raw("S3_REGION") {
        Some(region) => {
            if !region
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            {
                env.problems.push(format!(
                    "S3_REGION must be a region name such as eu-west-1, got {region:?}"
                ));
            }
            region
        }
        // Self-hosted stores mostly ignore the region, but requests are signed with one.
        None if endpoint.is_some() => "us-east-1".to_owned(),
        None => {
            env.problems.push(
                "S3_REGION is required when STORAGE_BACKEND is s3 and S3_ENDPOINT is not set"
                    .into(),
            );
            String::new()
        }
    };
    let prefix = env.raw("S3_PREFIX").and_then(|raw| {
        let prefix = raw.trim_matches('/');
        if prefix.is_empty() {
            return None;
        }
        let ok = !prefix.contains('\\')
            && !prefix.contains(char::is_control)
            && prefix
                .split('/')
                .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
        if !ok {
            env.problems.push(format!(
                "S3_PREFIX must be /-separated names, none empty, . or .., got {raw:?}"
            ));
            return None;
        }
        Some(prefix.to_owned())
    });
    // The secret's value is never repeated in a message.
    let (access_key_id, secret_access_key) = match (
        env.raw("AWS_ACCESS_KEY_ID"),
        env.raw("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(id), Some(secret)) => (Some(id), Some(secret)),
        (None, None) => (None, None),
        (Some(_), None) => {
            env.problems
                .push("AWS_SECRET_ACCESS_KEY is required when AWS_ACCESS_KEY_ID is set".into());
            (None, None)
        }
        (None, Some(_)) => {
            env.problems
                .push("AWS_ACCESS_KEY_ID is required when AWS_SECRET_ACCESS_KEY is set".into());
            (None, None)
        }
    };
    S3Settings {
        bucket,
        region,
        endpoint,
        prefix,
        access_key_id,
        secret_access_key,
    }
}

/// `GRAPH_*` of `STORAGE_BACKEND=sharepoint`; problems go to `env` like every other setting's.
/// The ids are required in every environment: there is no library to fall back on.
fn graph_settings(env: &mut Env<'_>) -> GraphSettings {
    let tenant_id = graph_id(
        env,
        "GRAPH_TENANT_ID",
        "a tenant id or domain such as contoso.onmicrosoft.com",
        |c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'),
    );
    let client_id = graph_id(env, "GRAPH_CLIENT_ID", "an application (client) id", |c| {
        c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')
    });
    let drive_id = graph_id(env, "GRAPH_DRIVE_ID", "a drive id such as b!Tx3…", |c| {
        c.is_ascii_alphanumeric() || matches!(c, '!' | '-' | '_' | '.' | '~')
    });
    // The secret's value is never repeated in a message.
    let client_secret = env.raw("GRAPH_CLIENT_SECRET").unwrap_or_else(|| {
        env.problems
            .push("GRAPH_CLIENT_SECRET is required when STORAGE_BACKEND is sharepoint".into());
        String::new()
    });
    let base_url = graph_url(env, "GRAPH_BASE_URL", GraphSettings::DEFAULT_BASE_URL);
    let login_url = graph_url(env, "GRAPH_LOGIN_URL", GraphSettings::DEFAULT_LOGIN_URL);
    GraphSettings {
        tenant_id,
        client_id,
        client_secret,
        drive_id,
        base_url,
        login_url,
    }
}

/// A required id of the Graph settings, made only of `allowed` characters: ids go into the
/// requests' paths as they are.
fn graph_id(env: &mut Env<'_>, name: &str, what: &str, allowed: fn(char) -> bool) -> String {
    match env.raw(name) {
        Some(value) => {
            if !value.chars().all(allowed) {
                env.problems
                    .push(format!("{name} must be {what}, got {value:?}"));
            }
            value
        }
        None => {
            env.problems.push(format!(
                "{name} is required when STORAGE_BACKEND is sharepoint"
            ));
            String::new()
        }
    }
}

/// An address of the Graph settings: `default` when unset, without a trailing `/`.
fn graph_url(env: &mut Env<'_>, name: &str, default: &str) -> String {
    match env.raw(name) {
        None => default.to_owned(),
        Some(raw) => {
            if !is_http_address(&raw) {
                env.problems.push(format!(
                    "{name} must be an http(s) address such as {default}, got {raw:?}"
                ));
            } else if env.production && !is_https_or_loopback(&raw) {
                // The client secret and the tokens travel to these addresses.
                env.problems.push(format!(
                    "{name} must be an https address outside development (plain http only on \
                     loopback, for a stand-in), got {raw:?}"
                ));
            }
            raw.trim_end_matches('/').to_owned()
        }
    }
}

/// An `https://` address, or an `http://` one on this machine's loopback.
fn is_https_or_loopback(raw: &str) -> bool {
    reqwest::Url::parse(raw).is_ok_and(|url| {
        let host = url.host_str().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        url.scheme() == "https"
            || host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

/// An absolute `http://` or `https://` address with a host.
fn is_http_address(raw: &str) -> bool {
    reqwest::Url::parse(raw)
        .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
}

/// `REPORTING_CURRENCY` and `EXPORT_RETENTION_DAYS`; problems go to `env` like every other
/// setting's.
fn reporting_settings(env: &mut Env<'_>) -> ReportingSettings {
    let defaults = ReportingSettings::default();
    let currency = match env.raw("REPORTING_CURRENCY") {
        None => defaults.currency,
        Some(raw) => crate::reporting::figures::Currency::new_setting(&raw).unwrap_or_else(|| {
            env.problems.push(format!(
                "REPORTING_CURRENCY must be a 3-letter ISO 4217 currency code such as THB, got {raw:?}"
            ));
            defaults.currency
        }),
    };
    let days = env.parsed(
        "EXPORT_RETENTION_DAYS",
        ReportingSettings::DEFAULT_RETENTION_DAYS,
        "a whole number of days",
    );
    // Bounded: a typo of 0 would expire every export as it completes, and a huge one would push
    // the expiry past what Postgres keeps.
    if !(1..=ReportingSettings::MAX_RETENTION_DAYS).contains(&days) {
        env.problems.push(format!(
            "EXPORT_RETENTION_DAYS must be from 1 to {} days, got {days}",
            ReportingSettings::MAX_RETENTION_DAYS
        ));
    }
    let days = days.clamp(1, ReportingSettings::MAX_RETENTION_DAYS);
    ReportingSettings {
        currency,
        export_retention: Duration::from_secs(days * 86_400),
    }
}

/// The `PMS_*` settings; problems go to `env` like every other setting's.
fn pms_settings(env: &mut Env<'_>) -> PmsSettings {
    let defaults = PmsSettings::default();
    let base_url = match env.raw("PMS_BASE_URL") {
        None => defaults.base_url,
        Some(url) => {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                env.problems.push(format!(
                    "PMS_BASE_URL must be an http(s) address such as {}, got {url:?}",
                    PmsSettings::DEFAULT_BASE_URL
                ));
            }
            url.trim_end_matches('/').to_owned()
        }
    };
    // The secret's value is never repeated in a message.
    let credentials = match (env.raw("PMS_CLIENT_ID"), env.raw("PMS_CLIENT_SECRET")) {
        (Some(client_id), Some(client_secret)) => Some(PmsCredentials {
            client_id,
            client_secret,
        }),
        (None, None) => None,
        (Some(_), None) => {
            env.problems
                .push("PMS_CLIENT_SECRET is required when PMS_CLIENT_ID is set".into());
            None
        }
        (None, Some(_)) => {
            env.problems
                .push("PMS_CLIENT_ID is required when PMS_CLIENT_SECRET is set".into());
            None
        }
    };
    let rate_limit = env.parsed(
        "PMS_RATE_LIMIT",
        defaults.rate_limit,
        "a whole number of requests (0 for no limit)",
    );
    let rate_window_secs = env.parsed(
        "PMS_RATE_WINDOW_SECS",
        defaults.rate_window.as_secs(),
        "a whole number of seconds",
    );
    let page_size = env.parsed("PMS_PAGE_SIZE", defaults.page_size, "a whole number");
    let sync_margin_secs = env.parsed(
        "PMS_SYNC_MARGIN_SECS",
        defaults.sync_margin.as_secs(),
        "a whole number of seconds",
    );
    let max_retries = env.parsed("PMS_MAX_RETRIES", defaults.max_retries, "a whole number");
    let retry_base_ms = env.parsed(
        "PMS_RETRY_BASE_MS",
        u64::try_from(defaults.retry_base.as_millis()).unwrap_or(1000),
        "a whole number of milliseconds",
    );
    let timeout_secs = env.parsed(
        "PMS_TIMEOUT_SECS",
        defaults.request_timeout.as_secs(),
        "a whole number of seconds",
    );
    if rate_window_secs == 0 {
        env.problems
            .push("PMS_RATE_WINDOW_SECS must be at least 1".into());
    }
    if !(1..=1000).contains(&page_size) {
        env.problems.push(format!(
            "PMS_PAGE_SIZE must be from 1 to 1000, got {page_size}"
        ));
    }
    if timeout_secs == 0 {
        env.problems
            .push("PMS_TIMEOUT_SECS must be at least 1".into());
    }
    // Retries wait up to 30 s each: more than this many would hold a sync for hours.
    if max_retries > 100 {
        env.problems.push(format!(
            "PMS_MAX_RETRIES must be at most 100, got {max_retries}"
        ));
    }
    PmsSettings {
        base_url,
        credentials,
        rate_limit,
        rate_window: Duration::from_secs(rate_window_secs),
        page_size,
        sync_margin: Duration::from_secs(sync_margin_secs),
        max_retries,
        retry_base: Duration::from_millis(retry_base_ms),
        request_timeout: Duration::from_secs(timeout_secs),
    }
}

impl ApiSettings {
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(&process_env)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, SettingsError> {
        let (_, mut env) = Env::open(lookup)?;
        let port = env.parsed("PORT", 8080u16, "a port number");
        let auth = AuthSettings {
            // Development verifies tokens against the API's own development key (served at
            // /dev/jwks.json, minted by `villa-api mint-token`); production names its provider.
            jwks_url: env.required("AUTH_JWKS_URL", || {
                format!("http://127.0.0.1:{port}/dev/jwks.json")
            }),
            issuer: env.required("AUTH_ISSUER", || crate::settings::DEV_ISSUER.to_owned()),
            audience: env.required("AUTH_AUDIENCE", || DEV_AUDIENCE.to_owned()),
            roles_claim: env.parsed("AUTH_ROLES_CLAIM", "roles".to_owned(), "a claim name"),
        };
        if env.production && !auth.jwks_url.is_empty() && !auth.jwks_url.starts_with("http") {
            env.problems
                .push("AUTH_JWKS_URL must be an http(s) address".into());
        }
        let cors_origins = match env.raw("CORS_ORIGINS") {
            Some(v) if v == "*" && env.production => {
                env.problems
                    .push("CORS_ORIGINS may not be * in production; list the origins".into());
                None
            }
            Some(v) if v == "*" => None,
            Some(v) => Some(
                v.split(',')
                    .map(|o| o.trim().trim_end_matches('/').to_owned())
                    .filter(|o| !o.is_empty())
                    .collect(),
            ),
            None if env.production => {
                env.problems
                    .push("CORS_ORIGINS is required in production".into());
                None
            }
            None => None,
        };
        // 25 MB files arrive base64-encoded inside JSON: 4/3 of the size plus the other fields.
        let body_limit_bytes = env.parsed(
            "BODY_LIMIT_BYTES",
            40 * 1024 * 1024usize,
            "a number of bytes",
        );
        let request_timeout = Duration::from_secs(env.parsed(
            "REQUEST_TIMEOUT_SECS",
            60u64,
            "a whole number of seconds",
        ));
        let upload_max_bytes = env.parsed(
            "UPLOAD_MAX_BYTES",
            25 * 1024 * 1024usize,
            "a number of bytes",
        );
        let slow_request = Duration::from_millis(env.parsed(
            "SLOW_REQUEST_MS",
            1000u64,
            "a whole number of milliseconds",
        ));
        env.finish()?;
        Ok(Self {
            port,
            auth,
            cors_origins,
            body_limit_bytes,
            request_timeout,
            upload_max_bytes,
            slow_request,
        })
    }
}

pub const DEV_ISSUER: &str = "villa-dev";
pub const DEV_AUDIENCE: &str = "villa-platform";

fn parse_key(v: &str) -> Option<[u8; 32]> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(v).ok()?;
    bytes.try_into().ok()
}

/// Development only: a random data key kept in `.dev/`, shared by every local process.
fn dev_data_key() -> std::io::Result<[u8; 32]> {
    let path = dev_dir().join("data-encryption.key");
    if let Ok(existing) = std::fs::read_to_string(&path)
        && let Some(key) = parse_key(existing.trim())
    {
        return Ok(key);
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(dev_dir())?;
    std::fs::write(&path, base64::engine::general_purpose::STANDARD.encode(key))?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    #[test]
    fn production_names_every_missing_variable() {
        let env = lookup(&[("APP_ENV", "production")]);
        let core = CoreSettings::from_lookup(&env).unwrap_err().to_string();
        for var in [
            "DATABASE_URL",
            "REDIS_URL",
            "STORAGE_BACKEND",
            "DATA_ENCRYPTION_KEY",
        ] {
            assert!(core.contains(var), "{var} not named in: {core}");
        }
        let api = ApiSettings::from_lookup(&env).unwrap_err().to_string();
        for var in [
            "AUTH_JWKS_URL",
            "AUTH_ISSUER",
            "AUTH_AUDIENCE",
            "CORS_ORIGINS",
        ] {
            assert!(api.contains(var), "{var} not named in: {api}");
        }
    }

    #[test]
    fn production_rejects_malformed_values() {
        let env = lookup(&[
            ("APP_ENV", "production"),
            ("DATABASE_URL", "postgres://x/y"),
            ("REDIS_URL", "redis://x"),
            ("STORAGE_BACKEND", "ftp"),
            ("STORAGE_LOCAL_DIR", "/tmp/x"),
            ("DATA_ENCRYPTION_KEY", "c2hvcnQ="),
            ("WORKER_CONCURRENCY", "many"),
        ]);
        let err = CoreSettings::from_lookup(&env).unwrap_err().to_string();
        assert!(
            err.contains("STORAGE_BACKEND must be local, s3 or sharepoint, got \"ftp\""),
            "{err}"
        );
        assert!(
            err.contains("DATA_ENCRYPTION_KEY must be the base64 encoding of exactly 32 bytes"),
            "{err}"
        );
        assert!(err.contains("WORKER_CONCURRENCY"), "{err}");
        let api = lookup(&[
            ("APP_ENV", "production"),
            ("PORT", "http"),
            ("AUTH_JWKS_URL", "https://idp/jwks"),
            ("AUTH_ISSUER", "i"),
            ("AUTH_AUDIENCE", "a"),
            ("CORS_ORIGINS", "*"),
        ]);
        let err = ApiSettings::from_lookup(&api).unwrap_err().to_string();
        assert!(err.contains("PORT must be a port number"), "{err}");
        assert!(err.contains("CORS_ORIGINS may not be *"), "{err}");
        assert!(app_env(&lookup(&[("APP_ENV", "prod")])).is_err());
    }

    #[test]
    fn production_with_the_documented_variables_runs() {
        let env = lookup(&[
            ("APP_ENV", "production"),
            ("PORT", "9000"),
            ("DATABASE_URL", "postgres://db/villa"),
            ("REDIS_URL", "redis://cache:6379"),
            ("AUTH_JWKS_URL", "https://idp.example/.well-known/jwks.json"),
            ("AUTH_ISSUER", "https://idp.example/"),
            ("AUTH_AUDIENCE", "villa-platform"),
            ("AUTH_ROLES_CLAIM", "roles"),
            ("STORAGE_BACKEND", "local"),
            ("STORAGE_LOCAL_DIR", "/var/lib/villa"),
            ("DATA_ENCRYPTION_KEY", KEY),
            (
                "CORS_ORIGINS",
                "https://app.example, https://admin.example/",
            ),
        ]);
        let core = CoreSettings::from_lookup(&env).unwrap();
        assert_eq!(core.data_encryption_key[31], 31);
        assert!(core.log_json);
        let api = ApiSettings::from_lookup(&env).unwrap();
        assert_eq!(api.port, 9000);
        assert_eq!(
            api.cors_origins.as_deref(),
            Some(
                &[
                    "https://app.example".to_owned(),
                    "https://admin.example".to_owned()
                ][..]
            )
        );
        assert!(!format!("{core:?}").contains(KEY));
    }

    fn read_seconds(vars: &[(&str, &str)]) -> Result<Duration, SettingsError> {
        seconds_setting(
            &lookup(vars),
            "PM_GENERATE_INTERVAL_SECS",
            Duration::from_secs(900),
        )
    }

    #[test]
    fn a_setting_in_seconds_names_its_variable_when_malformed() {
        assert_eq!(read_seconds(&[]).unwrap(), Duration::from_secs(900));
        assert_eq!(
            read_seconds(&[("PM_GENERATE_INTERVAL_SECS", " 60 ")]).unwrap(),
            Duration::from_secs(60)
        );
        assert_eq!(
            read_seconds(&[("PM_GENERATE_INTERVAL_SECS", "0")]).unwrap(),
            Duration::from_secs(1)
        );
        let err = read_seconds(&[
            ("APP_ENV", "production"),
            ("PM_GENERATE_INTERVAL_SECS", "15m"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("PM_GENERATE_INTERVAL_SECS must be a whole number of seconds"),
            "{err}"
        );
    }

    #[test]
    fn the_pms_is_not_configured_by_default() {
        let core = CoreSettings::from_lookup(&lookup(&[("DATA_ENCRYPTION_KEY", KEY)])).unwrap();
        let pms = &core.pms;
        assert!(!pms.is_configured());
        assert_eq!(pms.base_url, "https://api.hostaway.com/v1");
        assert_eq!(pms.rate_limit, 15);
        assert_eq!(pms.rate_window, Duration::from_secs(10));
        assert_eq!(pms.page_size, 100);
        assert_eq!(pms.sync_margin, Duration::from_secs(3600));
        assert_eq!(pms.max_retries, 5);
        assert_eq!(pms.retry_base, Duration::from_millis(1000));
        assert_eq!(pms.request_timeout, Duration::from_secs(30));
        // Empty values, as compose passes an unset variable, are not set.
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("PMS_CLIENT_ID", ""),
            ("PMS_CLIENT_SECRET", " "),
        ]))
        .unwrap();
        assert!(core.pms.credentials.is_none());
    }

    #[test]
    fn the_pms_settings_are_read_and_the_secret_never_shown() {
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("PMS_BASE_URL", "http://127.0.0.1:8099/v1/"),
            ("PMS_CLIENT_ID", " 10450 "),
            ("PMS_CLIENT_SECRET", "s3cret-api-key"),
            ("PMS_RATE_LIMIT", "0"),
            ("PMS_RATE_WINDOW_SECS", "1"),
            ("PMS_PAGE_SIZE", "1000"),
            ("PMS_SYNC_MARGIN_SECS", "60"),
            ("PMS_MAX_RETRIES", "2"),
            ("PMS_RETRY_BASE_MS", "20"),
            ("PMS_TIMEOUT_SECS", "5"),
        ]))
        .unwrap();
        let pms = &core.pms;
        assert_eq!(pms.base_url, "http://127.0.0.1:8099/v1");
        assert_eq!(
            pms.credentials,
            Some(PmsCredentials {
                client_id: "10450".to_owned(),
                client_secret: "s3cret-api-key".to_owned(),
            })
        );
        assert_eq!(pms.rate_limit, 0);
        assert_eq!(pms.rate_window, Duration::from_secs(1));
        assert_eq!(pms.page_size, 1000);
        assert_eq!(pms.sync_margin, Duration::from_secs(60));
        assert_eq!(pms.max_retries, 2);
        assert_eq!(pms.retry_base, Duration::from_millis(20));
        assert_eq!(pms.request_timeout, Duration::from_secs(5));
        let shown = format!("{core:?} {pms:?}");
        assert!(shown.contains("10450"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn pms_problems_name_their_variables() {
        fn err(vars: &[(&str, &str)]) -> String {
            let mut all: Vec<(&str, &str)> = vec![("DATA_ENCRYPTION_KEY", KEY)];
            all.extend_from_slice(vars);
            CoreSettings::from_lookup(&lookup(&all))
                .unwrap_err()
                .to_string()
        }
        let only_id = err(&[("PMS_CLIENT_ID", "10450")]);
        assert!(
            only_id.contains("PMS_CLIENT_SECRET is required when PMS_CLIENT_ID is set"),
            "{only_id}"
        );
        let only_secret = err(&[("PMS_CLIENT_SECRET", "s3cret-api-key")]);
        assert!(
            only_secret.contains("PMS_CLIENT_ID is required when PMS_CLIENT_SECRET is set"),
            "{only_secret}"
        );
        assert!(!only_secret.contains("s3cret"), "{only_secret}");
        let malformed = err(&[
            ("PMS_BASE_URL", "api.hostaway.com/v1"),
            ("PMS_RATE_LIMIT", "fast"),
            ("PMS_RATE_WINDOW_SECS", "0"),
            ("PMS_PAGE_SIZE", "1001"),
            ("PMS_SYNC_MARGIN_SECS", "1h"),
            ("PMS_MAX_RETRIES", "-1"),
            ("PMS_RETRY_BASE_MS", "1s"),
            ("PMS_TIMEOUT_SECS", "0"),
        ]);
        for expected in [
            "PMS_BASE_URL must be an http(s) address",
            "PMS_RATE_LIMIT must be a whole number of requests",
            "PMS_RATE_WINDOW_SECS must be at least 1",
            "PMS_PAGE_SIZE must be from 1 to 1000, got 1001",
            "PMS_SYNC_MARGIN_SECS must be a whole number of seconds",
            "PMS_MAX_RETRIES must be a whole number",
            "PMS_RETRY_BASE_MS must be a whole number of milliseconds",
            "PMS_TIMEOUT_SECS must be at least 1",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        assert!(err(&[("PMS_PAGE_SIZE", "0")]).contains("PMS_PAGE_SIZE must be from 1 to 1000"));
    }

    #[test]
    fn the_reporting_settings_have_defaults() {
        let core = CoreSettings::from_lookup(&lookup(&[("DATA_ENCRYPTION_KEY", KEY)])).unwrap();
        assert_eq!(core.reporting, ReportingSettings::default());
        assert_eq!(core.reporting.currency.as_str(), "THB");
        assert_eq!(
            core.reporting.export_retention,
            Duration::from_secs(7 * 86_400)
        );
        // Empty values, as compose passes an unset variable, are not set.
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("REPORTING_CURRENCY", " "),
            ("EXPORT_RETENTION_DAYS", ""),
        ]))
        .unwrap();
        assert_eq!(core.reporting, ReportingSettings::default());
    }

    #[test]
    fn the_reporting_settings_are_read() {
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("REPORTING_CURRENCY", " usd "),
            ("EXPORT_RETENTION_DAYS", "30"),
        ]))
        .unwrap();
        assert_eq!(core.reporting.currency.as_str(), "USD");
        assert_eq!(
            core.reporting.export_retention,
            Duration::from_secs(30 * 86_400)
        );
        let longest = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("EXPORT_RETENTION_DAYS", "3660"),
        ]))
        .unwrap();
        assert_eq!(
            longest.reporting.export_retention,
            Duration::from_secs(3660 * 86_400)
        );
        assert!(format!("{core:?}").contains("USD"));
    }

    #[test]
    fn reporting_problems_name_their_variables() {
        fn err(vars: &[(&str, &str)]) -> String {
            let mut all: Vec<(&str, &str)> = vec![("DATA_ENCRYPTION_KEY", KEY)];
            all.extend_from_slice(vars);
            CoreSettings::from_lookup(&lookup(&all))
                .unwrap_err()
                .to_string()
        }
        let malformed = err(&[
            ("REPORTING_CURRENCY", "baht"),
            ("EXPORT_RETENTION_DAYS", "1w"),
        ]);
        for expected in [
            "REPORTING_CURRENCY must be a 3-letter ISO 4217 currency code",
            "EXPORT_RETENTION_DAYS must be a whole number of days",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        for days in ["0", "3661", "-1"] {
            let message = err(&[("EXPORT_RETENTION_DAYS", days)]);
            assert!(
                message.contains("EXPORT_RETENTION_DAYS must be"),
                "{message}"
            );
        }
        assert!(err(&[("REPORTING_CURRENCY", "TH")]).contains("REPORTING_CURRENCY"));
    }

    fn core_with(vars: &[(&str, &str)]) -> Result<CoreSettings, String> {
        let mut all: Vec<(&str, &str)> = vec![("DATA_ENCRYPTION_KEY", KEY)];
        all.extend_from_slice(vars);
        CoreSettings::from_lookup(&lookup(&all)).map_err(|e| e.to_string())
    }

    #[test]
    fn the_document_store_is_local_by_default() {
        let core = core_with(&[]).unwrap();
        assert_eq!(core.storage_backend, StorageBackend::Local);
        assert!(core.s3.is_none() && core.graph.is_none());
        // Another backend's variables mean nothing to the local one, malformed or not.
        let core = core_with(&[
            ("STORAGE_BACKEND", "local"),
            ("S3_ENDPOINT", "minio:9000"),
            ("GRAPH_BASE_URL", "graph"),
        ])
        .unwrap();
        assert!(core.s3.is_none() && core.graph.is_none());
    }

    #[test]
    fn production_on_s3_needs_no_local_folder() {
        let core = CoreSettings::from_lookup(&lookup(&[
            ("APP_ENV", "production"),
            ("DATABASE_URL", "postgres://db/villa"),
            ("REDIS_URL", "redis://cache:6379"),
            ("DATA_ENCRYPTION_KEY", KEY),
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "villa-documents"),
            ("S3_REGION", "ap-southeast-1"),
        ]))
        .unwrap();
        assert_eq!(core.storage_backend, StorageBackend::S3);
        assert_eq!(
            core.s3,
            Some(S3Settings {
                bucket: "villa-documents".to_owned(),
                region: "ap-southeast-1".to_owned(),
                endpoint: None,
                prefix: None,
                // The AWS credential chain.
                access_key_id: None,
                secret_access_key: None,
            })
        );
        assert!(core.graph.is_none());
    }

    #[test]
    fn the_s3_settings_are_read_and_the_secret_never_shown() {
        let core = core_with(&[
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", " villa "),
            ("S3_ENDPOINT", "http://127.0.0.1:9000/"),
            ("S3_PREFIX", "/tenants/acme/"),
            ("AWS_ACCESS_KEY_ID", "minio-admin"),
            ("AWS_SECRET_ACCESS_KEY", "s3cret-minio-key"),
        ])
        .unwrap();
        let s3 = core.s3.as_ref().unwrap();
        assert_eq!(s3.bucket, "villa");
        // Requests are signed with a region even where the store ignores it.
        assert_eq!(s3.region, "us-east-1");
        assert_eq!(s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(s3.prefix.as_deref(), Some("tenants/acme"));
        assert_eq!(s3.access_key_id.as_deref(), Some("minio-admin"));
        assert_eq!(s3.secret_access_key.as_deref(), Some("s3cret-minio-key"));
        let shown = format!("{core:?} {s3:?}");
        assert!(shown.contains("minio-admin"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
        let given_region = core_with(&[
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "villa"),
            ("S3_ENDPOINT", "https://acct.r2.cloudflarestorage.com"),
            ("S3_REGION", "auto"),
            ("S3_PREFIX", "/"),
        ])
        .unwrap();
        let s3 = given_region.s3.unwrap();
        assert_eq!(s3.region, "auto");
        assert_eq!(s3.prefix, None);
    }

    #[test]
    fn s3_problems_name_their_variables() {
        let missing = core_with(&[("STORAGE_BACKEND", "s3")]).unwrap_err();
        for expected in [
            "S3_BUCKET is required when STORAGE_BACKEND is s3",
            "S3_REGION is required when STORAGE_BACKEND is s3 and S3_ENDPOINT is not set",
        ] {
            assert!(missing.contains(expected), "{expected:?} not in: {missing}");
        }
        let malformed = core_with(&[
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "my bucket/x"),
            ("S3_REGION", "eu west"),
            ("S3_ENDPOINT", "minio:9000"),
            ("S3_PREFIX", "tenants/../other"),
        ])
        .unwrap_err();
        for expected in [
            "S3_BUCKET must be a bucket name",
            "S3_REGION must be a region name",
            "S3_ENDPOINT must be an http(s) address",
            "S3_PREFIX must be /-separated names",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        for bucket in ["villa?x", "villa#1", "villa%2F", "vi"] {
            let refused =
                core_with(&[("STORAGE_BACKEND", "s3"), ("S3_BUCKET", bucket)]).unwrap_err();
            assert!(
                refused.contains("S3_BUCKET must be a bucket name"),
                "{bucket}: {refused}"
            );
        }
        for prefix in ["a//b", "./a", "a\\b"] {
            let message = core_with(&[
                ("STORAGE_BACKEND", "s3"),
                ("S3_BUCKET", "villa"),
                ("S3_REGION", "us-east-1"),
                ("S3_PREFIX", prefix),
            ])
            .unwrap_err();
            assert!(message.contains("S3_PREFIX"), "{prefix:?}: {message}");
        }
        let base = [
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "villa"),
            ("S3_REGION", "us-east-1"),
        ];
        let only_id =
            core_with(&[base[0], base[1], base[2], ("AWS_ACCESS_KEY_ID", "AKIA1")]).unwrap_err();
        assert!(
            only_id.contains("AWS_SECRET_ACCESS_KEY is required when AWS_ACCESS_KEY_ID is set"),
            "{only_id}"
        );
        let only_secret = core_with(&[
            base[0],
            base[1],
            base[2],
            ("AWS_SECRET_ACCESS_KEY", "s3cret-key"),
        ])
        .unwrap_err();
        assert!(
            only_secret.contains("AWS_ACCESS_KEY_ID is required when AWS_SECRET_ACCESS_KEY is set"),
            "{only_secret}"
        );
        assert!(!only_secret.contains("s3cret"), "{only_secret}");
    }

    #[test]
    fn the_sharepoint_settings_are_read_and_the_secret_never_shown() {
        let core = core_with(&[
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "contoso.onmicrosoft.com"),
            ("GRAPH_CLIENT_ID", "6731de76-14a6-49ae-97bc-6eba6914391e"),
            ("GRAPH_CLIENT_SECRET", "s3cret~graph.value"),
            ("GRAPH_DRIVE_ID", "b!Tx3_aBc-dEf"),
        ])
        .unwrap();
        assert_eq!(core.storage_backend, StorageBackend::SharePoint);
        assert!(core.s3.is_none());
        let graph = core.graph.as_ref().unwrap();
        assert_eq!(graph.tenant_id, "contoso.onmicrosoft.com");
        assert_eq!(graph.client_id, "6731de76-14a6-49ae-97bc-6eba6914391e");
        assert_eq!(graph.client_secret, "s3cret~graph.value");
        assert_eq!(graph.drive_id, "b!Tx3_aBc-dEf");
        assert_eq!(graph.base_url, "https://graph.microsoft.com/v1.0");
        assert_eq!(graph.login_url, "https://login.microsoftonline.com");
        let shown = format!("{core:?} {graph:?}");
        assert!(shown.contains("b!Tx3_aBc-dEf"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
        let stand_in = core_with(&[
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "tenant"),
            ("GRAPH_CLIENT_ID", "client"),
            ("GRAPH_CLIENT_SECRET", "secret"),
            ("GRAPH_DRIVE_ID", "drive"),
            ("GRAPH_BASE_URL", "http://127.0.0.1:8098/v1.0/"),
            ("GRAPH_LOGIN_URL", "http://127.0.0.1:8098/"),
        ])
        .unwrap();
        let graph = stand_in.graph.unwrap();
        assert_eq!(graph.base_url, "http://127.0.0.1:8098/v1.0");
        assert_eq!(graph.login_url, "http://127.0.0.1:8098");
    }

    #[test]
    fn sharepoint_problems_name_their_variables() {
        let missing = core_with(&[("STORAGE_BACKEND", "sharepoint")]).unwrap_err();
        for var in [
            "GRAPH_TENANT_ID",
            "GRAPH_CLIENT_ID",
            "GRAPH_CLIENT_SECRET",
            "GRAPH_DRIVE_ID",
        ] {
            let expected = format!("{var} is required when STORAGE_BACKEND is sharepoint");
            assert!(
                missing.contains(&expected),
                "{expected:?} not in: {missing}"
            );
        }
        let malformed = core_with(&[
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "contoso/../x"),
            ("GRAPH_CLIENT_ID", "client id"),
            ("GRAPH_CLIENT_SECRET", "s3cret-graph"),
            ("GRAPH_DRIVE_ID", "b!x/children"),
            ("GRAPH_BASE_URL", "graph.microsoft.com/v1.0"),
            ("GRAPH_LOGIN_URL", "ftp://login"),
        ])
        .unwrap_err();
        for expected in [
            "GRAPH_TENANT_ID must be a tenant id or domain",
            "GRAPH_CLIENT_ID must be an application (client) id",
            "GRAPH_DRIVE_ID must be a drive id",
            "GRAPH_BASE_URL must be an http(s) address",
            "GRAPH_LOGIN_URL must be an http(s) address",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        assert!(!malformed.contains("s3cret"), "{malformed}");
        // Outside development the secret and the tokens travel over TLS only; plain http
        // stays possible on loopback, for a stand-in.
        let plain = core_with(&[
            ("APP_ENV", "production"),
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "tenant"),
            ("GRAPH_CLIENT_ID", "client"),
            ("GRAPH_CLIENT_SECRET", "secret"),
            ("GRAPH_DRIVE_ID", "drive"),
            ("GRAPH_BASE_URL", "http://graph.internal/v1.0"),
            ("GRAPH_LOGIN_URL", "http://[::1]:8098"),
        ])
        .unwrap_err();
        assert!(
            plain.contains("GRAPH_BASE_URL must be an https address outside development"),
            "{plain}"
        );
        assert!(!plain.contains("GRAPH_LOGIN_URL"), "{plain}");
    }

    #[test]
    fn development_has_defaults_and_allows_any_origin() {
        let env = lookup(&[("DATA_ENCRYPTION_KEY", KEY)]);
        let core = CoreSettings::from_lookup(&env).unwrap();
        assert_eq!(core.app_env, AppEnv::Development);
        let api = ApiSettings::from_lookup(&env).unwrap();
        assert!(api.cors_origins.is_none());
        assert_eq!(api.auth.jwks_url, "http://127.0.0.1:8080/dev/jwks.json");
    }

    #[test]
    fn metrics_settings_are_read_and_the_token_never_shown() {
        let core = core_with(&[]).unwrap();
        assert_eq!(core.metrics, MetricsSettings::default());
        let core = core_with(&[
            ("METRICS_ENABLED", "false"),
            ("METRICS_PORT", "9464"),
            ("METRICS_TOKEN", "s3cret-metrics-token"),
            ("METRICS_QUEUE_REFRESH_SECS", "30"),
        ])
        .unwrap();
        assert!(!core.metrics.enabled);
        assert_eq!(core.metrics.port, Some(9464));
        assert_eq!(core.metrics.queue_refresh, Duration::from_secs(30));
        assert!(!format!("{core:?}").contains("s3cret"));
        let refused = core_with(&[
            ("METRICS_ENABLED", "maybe"),
            ("METRICS_PORT", "0"),
            ("METRICS_TOKEN", "short"),
            ("METRICS_QUEUE_REFRESH_SECS", "0"),
        ])
        .unwrap_err();
        for expected in [
            "METRICS_ENABLED must be true or false",
            "METRICS_PORT must be a port number",
            "METRICS_TOKEN must be at least 16 characters",
            "METRICS_QUEUE_REFRESH_SECS must be 1 to 300 seconds",
        ] {
            assert!(refused.contains(expected), "{expected:?} not in: {refused}");
        }
        assert!(!refused.contains("short"), "{refused}");
    }
}
