//! Which function runs which kind of job, and what a running job can reach.

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures::future::BoxFuture;
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use domain::{crypto::FieldCipher, settings::PmsSettings, storage::DocumentStore};
use redis::aio::ConnectionManager;

use crate::{Job, JobQueues, Queue};

/// Services a worker process offers its handlers, built once per process from its settings.
#[derive(Debug, Clone)]
pub struct JobServices {
    pub store: DocumentStore,
    /// `PM_LEAD_DAYS`: how far ahead planned maintenance gets its work orders.
    pub pm_lead_days: u32,
    /// `EXPIRY_ALERT_DAYS`: how near an expiry date raises a stock alert.
    pub expiry_alert_days: u32,
    /// `FORECAST_ALERT_DAYS`, `FORECAST_CRITICAL_DAYS`: the supplies forecast's alert windows.
    pub forecast_windows: domain::inventory::forecast::AlertWindows,
    /// `PM_CATCH_UP_DAYS`: how far back missed planned-maintenance occurrences still get a work
    /// order.
    pub pm_catch_up_days: u32,
    /// `TURNOVER_HORIZON_DAYS`: how far ahead stays get their turnover work orders.
    pub turnover_horizon_days: u32,
    /// `BUSINESS_TIME_ZONE`: whose "today" due dates and expiry are measured against.
    pub business_time_zone: domain::clock::BusinessZone,
    /// `PMS_*`: the property-management system the `pms` jobs read.
    pub pms: PmsSettings,
    /// `DATA_ENCRYPTION_KEY`: the PMS access token is stored encrypted.
    pub cipher: FieldCipher,
    /// Redis beyond the job queues: the PMS request budget every worker shares, the reporting
    /// cache a sync invalidates. Connects lazily and reconnects on its own.
    pub redis: ConnectionManager,
    /// `REDIS_QUEUE_PREFIX`: the prefix of every key in `redis`.
    pub redis_prefix: String,
    /// Push side of the queues, for a job that enqueues another (the scheduled sync).
    pub queues: JobQueues,
    /// HTTP client of the PMS calls (each call sets its own timeout).
    pub http: reqwest::Client,
    /// `EXPORT_RETENTION_DAYS`: how long a completed export's file stays downloadable.
    pub export_retention: Duration,
    /// How many exports this worker builds at once ([`crate::exports::CONCURRENT_EXPORTS`]).
    pub export_slots: Arc<tokio::sync::Semaphore>,
    /// `SMTP_URL` and `SMTP_FROM`: `Ok(None)` when no e-mail is to be sent, `Err` naming the
    /// setting lettre refuses (the `mail` jobs fail with it).
    pub mailer: Result<Option<crate::mail::Mailer>, String>,
    /// Signs the owner approval links an e-mail carries (from `DATA_ENCRYPTION_KEY`).
    pub approval_links: domain::maintenance::approvals::ApprovalLinks,
}

impl JobServices {
    /// Builds the services; call it inside a tokio runtime (Redis's connection manager starts a
    /// task). A `REDIS_URL` that is not a Redis address stops the process here, as it would one
    /// line later at `JobQueues::new` in every worker.
    pub fn from_settings(settings: &domain::settings::CoreSettings) -> Self {
        let queues = JobQueues::new(&settings.redis_url, &settings.redis_prefix)
            .unwrap_or_else(|e| panic!("REDIS_URL is not a usable Redis address: {e}"));
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        Self {
            store: DocumentStore::from_settings(settings),
            pm_lead_days: settings.planned_maintenance.lead_days,
            expiry_alert_days: settings.stock_alerts.expiry_days,
            forecast_windows: settings.stock_alerts.forecast_windows(),
            pm_catch_up_days: settings.planned_maintenance.catch_up_days,
            turnover_horizon_days: settings.turnovers.horizon_days,
            business_time_zone: settings.business_time_zone,
            pms: settings.pms.clone(),
            cipher: FieldCipher::new(&settings.data_encryption_key),
            redis: queues.connection(),
            redis_prefix: settings.redis_prefix.clone(),
            queues,
            http,
            export_retention: settings.reporting.export_retention,
            export_slots: Arc::new(tokio::sync::Semaphore::new(
                crate::exports::CONCURRENT_EXPORTS,
            )),
            mailer: crate::mail::Mailer::from_settings(&settings.mail).inspect_err(|problem| {
                tracing::error!(%problem, "no e-mail can be sent until the setting is fixed");
            }),
            approval_links: domain::maintenance::approvals::ApprovalLinks::new(
                &settings.data_encryption_key,
            ),
        }
    }
}

/// What a handler gets besides its payload.
#[derive(Clone)]
pub struct JobContext {
    pub pool: PgPool,
    pub services: Arc<JobServices>,
    pub job_id: Uuid,
    /// This run's number, from 1.
    pub attempt: i32,
    pub max_attempts: i32,
    pub worker: Arc<str>,
}

impl JobContext {
    /// Reports progress for pollers; errors are logged, never fatal to the job.
    pub async fn progress(&self, percent: u8) {
        if let Err(error) =
            domain::job_store::set_progress(&self.pool, self.job_id, &self.worker, percent).await
        {
            tracing::warn!(job_id = %self.job_id, %error, "progress update failed");
        }
    }
}

/// Why a run failed. `retryable` errors are tried again with backoff until the job's attempts
/// run out; others end the job as FAILED at once (a payload that can never succeed).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct JobError {
    pub message: String,
    pub retryable: bool,
    /// Not a failure: the job waits for work it depends on (a villa's folder tree) and runs again
    /// after this delay, without using up an attempt.
    pub wait: Option<std::time::Duration>,
}

impl JobError {
    pub fn retry(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retryable: true,
            wait: None,
        }
    }

    /// The job cannot run yet because other work it needs is still queued or running; it runs
    /// again after `after`. Only for a prerequisite that is itself on its way: one that failed
    /// is a [`retry`](Self::retry), so that waiting ends. Also for a service that asks to be
    /// called later (a throttling document store).
    pub fn not_yet(message: impl Into<String>, after: std::time::Duration) -> Self {
        Self {
            message: message.into(),
            retryable: true,
            wait: Some(after),
        }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retryable: false,
            wait: None,
        }
    }
}

impl From<sqlx::Error> for JobError {
    fn from(e: sqlx::Error) -> Self {
        JobError::retry(format!("database: {e}"))
    }
}

/// Domain errors are transient (database) unless the data itself is invalid.
impl From<domain::Error> for JobError {
    fn from(e: domain::Error) -> Self {
        match e {
            domain::Error::Validation(_) | domain::Error::NotFound(_) => {
                JobError::fatal(e.to_string())
            }
            _ => JobError::retry(e.to_string()),
        }
    }
}

/// The shortest and longest a throttled job waits before its next run.
const THROTTLED_WAIT_MIN: std::time::Duration = std::time::Duration::from_secs(1);
const THROTTLED_WAIT_MAX: std::time::Duration = std::time::Duration::from_secs(3600);

/// A store that still throttles after the waiting one call does is not a failure: the job runs
/// again when the store asked (within an hour), its attempt given back, however long the store
/// keeps asking. Any other store error is a retry.
impl From<domain::storage::StorageError> for JobError {
    fn from(e: domain::storage::StorageError) -> Self {
        match e {
            domain::storage::StorageError::Throttled { retry_after, .. } => JobError::not_yet(
                e.to_string(),
                retry_after.clamp(THROTTLED_WAIT_MIN, THROTTLED_WAIT_MAX),
            ),
            _ => JobError::retry(e.to_string()),
        }
    }
}

impl From<anyhow::Error> for JobError {
    fn from(e: anyhow::Error) -> Self {
        JobError::retry(format!("{e:#}"))
    }
}

type Handler =
    Arc<dyn Fn(Value, JobContext) -> BoxFuture<'static, Result<Value, JobError>> + Send + Sync>;

struct Registered {
    queue: Queue,
    backoff_base: Duration,
    handler: Handler,
}

/// The kinds one worker binary runs.
#[derive(Default)]
pub struct JobRegistry {
    kinds: HashMap<&'static str, Registered>,
}

impl JobRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    #[must_use]
    pub fn register<J: Job>(mut self) -> Self {
        let handler: Handler = Arc::new(|payload, ctx| {
            Box::pin(async move {
                let job: J = serde_json::from_value(payload).map_err(|e| {
                    JobError::fatal(format!("payload of {} does not decode: {e}", J::KIND))
                })?;
                job.run(ctx).await
            })
        });
        self.kinds.insert(
            J::KIND,
            Registered {
                queue: J::QUEUE,
                backoff_base: J::BACKOFF_BASE,
                handler,
            },
        );
        self
    }

    /// The queues this registry's kinds live on, each once.
    pub fn queues(&self) -> Vec<Queue> {
        let mut queues: Vec<Queue> = Vec::new();
        for r in self.kinds.values() {
            if !queues.contains(&r.queue) {
                queues.push(r.queue);
            }
        }
        queues
    }

    pub fn backoff_base(&self, kind: &str) -> Duration {
        self.kinds
            .get(kind)
            .map_or(Duration::from_secs(2), |r| r.backoff_base)
    }

    /// Runs `kind`'s handler; an unknown kind is a retryable error (a newer worker may know it).
    pub fn run(
        &self,
        kind: &str,
        payload: Value,
        ctx: JobContext,
    ) -> BoxFuture<'static, Result<Value, JobError>> {
        match self.kinds.get(kind) {
            Some(r) => (r.handler)(payload, ctx),
            None => {
                let message = format!("no handler for job kind {kind} on this worker");
                Box::pin(async move { Err(JobError::retry(message)) })
            }
        }
    }
}
