//! Worker for queue family `system`: platform housekeeping and the pipeline's diagnostic job.

use jobs::{JobRegistry, system};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new()
        .register::<system::DiagnosticJob>()
        .register::<system::PurgeFinishedJobs>();
    workers::runtime::main("system", registry).await
}
