//! Worker for queue family `system`: platform housekeeping and the pipeline's diagnostic job.

use std::sync::Arc;

use anyhow::Context as _;
use domain::settings::CoreSettings;
use jobs::{JobQueues, JobRegistry, system};
use workers::runtime::{self, Runtime};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = CoreSettings::from_env()?;
    domain::process::init_logging(settings.log_json);
    let pool = domain::db::connect(&settings.database_url, settings.db_max_connections)
        .await
        .context("DATABASE_URL: cannot connect to Postgres")?;
    let registry = JobRegistry::new()
        .register::<system::DiagnosticJob>()
        .register::<system::PurgeFinishedJobs>();
    let rt = Arc::new(Runtime {
        pool,
        queues: JobQueues::new(&settings.redis_url, &settings.redis_prefix).context("REDIS_URL")?,
        registry,
        settings: settings.jobs.clone(),
        name: runtime::process_name("system").into(),
    });
    let shutdown = domain::process::shutdown_token();
    runtime::run(rt, shutdown).await;
    Ok(())
}
