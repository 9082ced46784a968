use std::{ops::Deref, sync::Arc};

use domain::settings::{ApiSettings, CoreSettings};
use jobs::JobQueues;
use sqlx::PgPool;

use crate::auth::JwksVerifier;

/// What every handler can reach. A clone is one reference count: axum clones the state for
/// every request, more than once.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub pool: PgPool,
    pub queues: JobQueues,
    pub verifier: JwksVerifier,
    pub core: CoreSettings,
    pub api: ApiSettings,
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
