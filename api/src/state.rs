use std::sync::Arc;

use domain::settings::{ApiSettings, CoreSettings};
use jobs::JobQueues;
use sqlx::PgPool;

use crate::auth::JwksVerifier;

/// What every handler can reach. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub queues: JobQueues,
    pub verifier: Arc<JwksVerifier>,
    pub core: Arc<CoreSettings>,
    pub api: Arc<ApiSettings>,
}
