//! Worker for queue family `maintenance`: planned-maintenance generation.

use jobs::{JobRegistry, maintenance};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new().register::<maintenance::GeneratePlannedWork>();
    workers::runtime::main("maintenance", registry).await
}
