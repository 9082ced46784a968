//! Settings from the environment (ARCHITECTURE.md, "Configuration"). In production a missing or
//! malformed value stops the process at start with a message naming every offending variable; in
//! development each has a local default so `scripts/dev` runs with nothing set.
//!
//! One file per concern, each with its settings and the parsing of their variables:
//! - `env.rs`: the reader every concern uses ([`Lookup`], the problems of a [`SettingsError`]),
//!   and the settings read outside [`CoreSettings`]: a periodic job's interval
//!   ([`seconds_setting`]) and `DEV_DIR` ([`dev_dir`]);
//! - `storage.rs`: the document store (`STORAGE_*`, `S3_*`, the AWS access key, `GRAPH_*`);
//! - `keys.rs`: the data encryption key (`DATA_ENCRYPTION_KEY`);
//! - `jobs.rs`: the job pipeline (`JOB_*`, `WORKER_CONCURRENCY`, `SHUTDOWN_GRACE_SECS`);
//! - `maintenance.rs`: planned maintenance (`PM_LEAD_DAYS`, `PM_CATCH_UP_DAYS`);
//! - `inventory.rs`: stock alerts (`EXPIRY_ALERT_DAYS`);
//! - `pms.rs`: the property-management system (`PMS_*`);
//! - `reporting.rs`: the reporting figures and exports (`REPORTING_CURRENCY`,
//!   `EXPORT_RETENTION_DAYS`);
//! - `metrics.rs`: Prometheus metrics (`METRICS_*`);
//! - `api.rs`: the HTTP API's own ([`ApiSettings`]: `PORT`, `AUTH_*`, `CORS_ORIGINS`, limits);
//! - this file: [`CoreSettings`], which reads the concerns every process needs in a fixed order
//!   (the order its problems are named in) with the database, Redis, the business time zone and
//!   the log format; and [`defaults`], what docs/configuration.md must give as defaults.

mod api;
mod env;
mod inventory;
mod jobs;
mod keys;
mod mail;
mod maintenance;
mod metrics;
mod pms;
mod reporting;
mod storage;

use std::{collections::BTreeSet, fmt, path::PathBuf};

use base64::Engine as _;

pub use self::{
    api::{ApiSettings, AuthSettings, ConsoleOidc, ConsoleSettings, DEV_AUDIENCE, DEV_ISSUER},
    env::{AppEnv, Lookup, SettingsError, dev_dir, seconds_setting},
    inventory::StockAlertSettings,
    jobs::JobSettings,
    mail::{DEFAULT_SMTP_FROM, MailSettings},
    maintenance::{ApprovalSettings, PlannedMaintenanceSettings, TurnoverSettings},
    metrics::MetricsSettings,
    pms::{PmsCredentials, PmsSettings, WebhookCredentials},
    reporting::ReportingSettings,
    storage::{GraphSettings, S3Settings, StorageBackend},
};
use self::{
    env::{DEFAULT_APP_ENV, DEFAULT_DEV_DIR, Env, process_env},
    inventory::{check_stock_alerts, stock_alert_settings},
    jobs::{check_job_settings, job_settings},
    keys::data_encryption_key,
    mail::mail_settings,
    maintenance::{
        approval_settings, check_planned_maintenance, check_turnovers,
        planned_maintenance_settings, turnover_settings,
    },
    metrics::metrics_settings,
    pms::pms_settings,
    reporting::reporting_settings,
    storage::{graph_settings, s3_settings, storage_backend, storage_local_dir},
};

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
    pub turnovers: TurnoverSettings,
    /// `BUSINESS_TIME_ZONE` (IANA name, default `UTC`): whose day "today" is (a timesheet's
    /// latest date, due dates, expiry alerts, reports' default periods).
    pub business_time_zone: crate::clock::BusinessZone,
    /// The property-management system the reporting sync reads (`PMS_*`).
    pub pms: PmsSettings,
    /// The reporting figures and exports (`REPORTING_CURRENCY`, `EXPORT_RETENTION_DAYS`).
    pub reporting: ReportingSettings,
    /// Prometheus metrics (`METRICS_*`).
    pub metrics: MetricsSettings,
    /// Owner approval links (`PUBLIC_BASE_URL`, `APPROVAL_LINK_DAYS`).
    pub approvals: ApprovalSettings,
    /// Outgoing e-mail (`SMTP_URL`, `SMTP_FROM`).
    pub mail: MailSettings,
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
            .field("approvals", &self.approvals)
            .field("mail", &self.mail)
            .finish_non_exhaustive()
    }
}

impl CoreSettings {
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(&process_env)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, SettingsError> {
        let (app_env, mut env) = Env::open(lookup)?;
        let core = Self::read(app_env, &mut env);
        env.finish()?;
        Ok(core)
    }

    /// Reads every variable, in a fixed order: the order the problems are named in.
    fn read(app_env: AppEnv, env: &mut Env<'_>) -> Self {
        let database_url = env.required("DATABASE_URL", || {
            "postgres://postgres@127.0.0.1:5432/villa_dev".to_owned()
        });
        let redis_url = env.required("REDIS_URL", || "redis://127.0.0.1:6379".to_owned());
        let storage_backend = storage_backend(env);
        // Only the chosen backend's settings are read: the others' variables mean nothing.
        let s3 = (storage_backend == StorageBackend::S3).then(|| s3_settings(env));
        let graph = (storage_backend == StorageBackend::SharePoint).then(|| graph_settings(env));
        let storage_local_dir = storage_local_dir(env, storage_backend);
        let data_encryption_key = data_encryption_key(env);
        let planned_maintenance = planned_maintenance_settings(env);
        let stock_alerts = stock_alert_settings(env);
        let turnovers = turnover_settings(env);
        // The day counts' bounds, once every count is read: problems keep their order (each
        // malformed count, then each count out of bounds).
        check_planned_maintenance(env, &planned_maintenance);
        check_stock_alerts(env, &stock_alerts);
        check_turnovers(env, &turnovers);
        let business_time_zone = env.parsed(
            "BUSINESS_TIME_ZONE",
            crate::clock::BusinessZone::default(),
            "an IANA time zone name such as Asia/Makassar",
        );
        let redis_prefix = env.parsed("REDIS_QUEUE_PREFIX", "villa".to_owned(), "a key prefix");
        let db_max_connections = env.parsed("DB_MAX_CONNECTIONS", 20u32, "a whole number");
        let jobs = job_settings(env);
        let log_json = log_json(env);
        // After `LOG_FORMAT`: problems keep their order.
        check_job_settings(env, &jobs);
        let pms = pms_settings(env);
        let reporting = reporting_settings(env);
        let metrics = metrics_settings(env);
        let approvals = approval_settings(env);
        let mail = mail_settings(env);
        Self {
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
            turnovers,
            business_time_zone,
            pms,
            reporting,
            metrics,
            approvals,
            mail,
        }
    }
}

/// `LOG_FORMAT`: `json` or `pretty`; when it is not set, JSON in production and pretty lines in
/// development.
fn log_json(env: &mut Env<'_>) -> bool {
    match env.raw("LOG_FORMAT").as_deref() {
        None => env.production,
        Some("json") => true,
        Some("pretty") => false,
        Some(other) => {
            env.problems
                .push(format!("LOG_FORMAT must be json or pretty, got {other:?}"));
            env.production
        }
    }
}

/// Every setting's name and its default as the code has it (development defaults for required
/// ones): what docs/configuration.md must say. The settings are read as a development process
/// with nothing set reads them, once per storage backend so that every backend's are read.
/// Listed: what the reader reads with a default, and the few with one plain default read apart
/// (`APP_ENV`, `DEV_DIR`, `RUST_LOG`, `STORAGE_LOCAL_DIR`, `PMS_BASE_URL`,
/// `REPORTING_CURRENCY`, `METRICS_ENABLED`, `GRAPH_*_URL`). Not listed: the settings whose
/// default is not one value (`LOG_FORMAT`, `S3_REGION`, `DATA_ENCRYPTION_KEY`, `CORS_ORIGINS`),
/// and those declared outside this module (the periodic jobs' intervals, `jobs::Periodic`; the
/// scheduler's `JOB_RETENTION_DAYS`).
pub fn defaults() -> Vec<(String, String)> {
    // A key of the right length, so that no development key is generated into `.dev/`.
    let key = base64::engine::general_purpose::STANDARD.encode([0u8; 32]);
    let mut found = BTreeSet::from([
        ("APP_ENV".to_owned(), DEFAULT_APP_ENV.to_owned()),
        ("DEV_DIR".to_owned(), DEFAULT_DEV_DIR.to_owned()),
        (
            "RUST_LOG".to_owned(),
            crate::process::DEFAULT_LOG_FILTER.to_owned(),
        ),
    ]);
    for backend in ["local", "s3", "sharepoint"] {
        let lookup = |name: &str| match name {
            "STORAGE_BACKEND" => Some(backend.to_owned()),
            "DATA_ENCRYPTION_KEY" => Some(key.clone()),
            _ => None,
        };
        let Ok((app_env, mut env)) = Env::open(&lookup) else {
            unreachable!("APP_ENV is not set: development")
        };
        env.recorded = Some(Vec::new());
        CoreSettings::read(app_env, &mut env);
        ApiSettings::read(&mut env);
        found.extend(env.recorded.unwrap_or_default());
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod test_support {
    //! What the settings' tests share.

    use std::collections::HashMap;

    use super::CoreSettings;

    pub(super) fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    pub(super) const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    /// The core settings of development with `vars` set (and [`KEY`]).
    pub(super) fn core_with(vars: &[(&str, &str)]) -> Result<CoreSettings, String> {
        let mut all: Vec<(&str, &str)> = vec![("DATA_ENCRYPTION_KEY", KEY)];
        all.extend_from_slice(vars);
        CoreSettings::from_lookup(&lookup(&all)).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::{
        ApiSettings, CoreSettings,
        env::app_env,
        test_support::{KEY, lookup},
    };

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
    fn batch_settings_out_of_bounds_are_refused_by_name() {
        let base = [
            ("DATABASE_URL", "postgres://x/y"),
            ("REDIS_URL", "redis://x"),
            ("DATA_ENCRYPTION_KEY", KEY),
        ];
        for (var, value, message) in [
            (
                "WORKER_CLAIM_BATCH",
                "0",
                "WORKER_CLAIM_BATCH must be from 1 to 1000",
            ),
            (
                "WORKER_CLAIM_BATCH",
                "1001",
                "WORKER_CLAIM_BATCH must be from 1 to 1000",
            ),
            (
                "WORKER_COMPLETE_BATCH",
                "0",
                "WORKER_COMPLETE_BATCH must be from 1 to 10000",
            ),
            (
                "WORKER_COMPLETE_INTERVAL_MS",
                "1001",
                "WORKER_COMPLETE_INTERVAL_MS must be at most 1000",
            ),
            (
                "WORKER_COMPLETE_INTERVAL_MS",
                "-1",
                "WORKER_COMPLETE_INTERVAL_MS",
            ),
        ] {
            let mut vars = base.to_vec();
            vars.push((var, value));
            let err = CoreSettings::from_lookup(&lookup(&vars))
                .unwrap_err()
                .to_string();
            assert!(err.contains(message), "{var}={value}: {err}");
        }
        let mut vars = base.to_vec();
        vars.extend([
            ("WORKER_CLAIM_BATCH", "1000"),
            ("WORKER_COMPLETE_BATCH", "1"),
            ("WORKER_COMPLETE_INTERVAL_MS", "0"),
        ]);
        let jobs = CoreSettings::from_lookup(&lookup(&vars)).unwrap().jobs;
        assert_eq!(
            (
                jobs.claim_batch,
                jobs.complete_batch,
                jobs.complete_interval
            ),
            (1000, 1, std::time::Duration::ZERO)
        );
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
}
