use std::{ops::Deref, sync::Arc};

use domain::settings::{ApiSettings, CoreSettings};
use jobs::JobQueues;
use sqlx::PgPool;

use domain::{crypto::FieldCipher, metrics::QueueGauges, storage::DocumentStore};

use crate::{auth::JwksVerifier, monitoring::Monitor};

/// What every handler can reach. A clone is one reference count: axum clones the state for
/// every request, more than once.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub pool: PgPool,
    pub queues: JobQueues,
    pub verifier: JwksVerifier,
    /// Encrypts OTA passwords and bank account numbers (`DATA_ENCRYPTION_KEY`).
    pub cipher: FieldCipher,
    /// Read by the routes that serve files the workers have already stored.
    pub store: DocumentStore,
    /// The last requests and per-route statistics (`/api/docs/monitoring`).
    pub monitor: Monitor,
    /// Management's villa reads by id and list page, batched across concurrent requests.
    pub villa_reads: domain::management::villas::VillaReads,
    /// The PMS, which the reporting health probes (at most once a minute across replicas);
    /// `None` when `PMS_CLIENT_ID` and `PMS_CLIENT_SECRET` are not set.
    pub pms: Option<jobs::pms::PmsClient>,
    /// The reporting surface's rate limits and answer cache, in Redis (shared by every replica).
    pub reporting: crate::reporting::Reporting,
    /// Renders `GET /metrics` (the process-wide recorder); `None` when `METRICS_ENABLED=false`,
    /// and the route then answers 404.
    pub metrics: Option<domain::metrics::Exporter>,
    /// The queue gauges of `GET /metrics`, computed from the job table at most once per
    /// `METRICS_QUEUE_REFRESH_SECS` whatever the number of scrapers.
    pub queue_gauges: Arc<QueueGauges>,
    /// Signs and checks the owners' approval links (a key derived from `DATA_ENCRYPTION_KEY`).
    pub approval_links: domain::maintenance::approvals::ApprovalLinks,
    pub core: CoreSettings,
    pub api: ApiSettings,
}

impl Shared {
    pub fn new(pool: PgPool, queues: JobQueues, core: CoreSettings, api: ApiSettings) -> Self {
        let cipher = FieldCipher::new(&core.data_encryption_key);
        let pms = jobs::pms::PmsClient::new(
            &core.pms,
            pool.clone(),
            queues.connection(),
            &core.redis_prefix,
            cipher.clone(),
            reqwest::Client::new(),
        );
        Self {
            metrics: {
                crate::http::metrics::register();
                domain::metrics::install(&core.metrics)
            },
            queue_gauges: Arc::new(QueueGauges::new(core.metrics.queue_refresh)),
            reporting: crate::reporting::Reporting::new(queues.connection(), &core.redis_prefix),
            pms,
            queues,
            verifier: JwksVerifier::new(api.auth.clone()),
            cipher,
            approval_links: domain::maintenance::approvals::ApprovalLinks::new(
                &core.data_encryption_key,
            ),
            store: DocumentStore::from_settings(&core),
            monitor: Monitor::new(api.slow_request),
            villa_reads: domain::management::villas::VillaReads::new(pool.clone()),
            pool,
            core,
            api,
        }
    }
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
