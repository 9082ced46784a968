//! Worker for queue family `maintenance`: planned-maintenance and turnover generation.

use jobs::{JobRegistry, maintenance};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new()
        .register::<maintenance::GeneratePlannedWork>()
        .register::<maintenance::GenerateTurnovers>();
    workers::runtime::main("maintenance", registry).await
}
