//! Worker for queue family `alerts`: stock alert evaluation.

use jobs::{JobRegistry, alerts};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new().register::<alerts::EvaluateStockAlerts>();
    workers::runtime::main("alerts", registry).await
}
