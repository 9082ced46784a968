//! Worker for queue family `pms`: the synchronisation with the property-management system, and
//! the scheduler's tick that starts it.

use jobs::{JobRegistry, pms};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new()
        .register::<pms::SyncPms>()
        .register::<pms::ScheduleSync>();
    workers::runtime::main("pms", registry).await
}
