//! Worker for queue family `exports`: the reporting API's spreadsheet exports, and the
//! scheduler's tick that removes the expired ones.

use jobs::{JobRegistry, exports};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new()
        .register::<exports::ExportJob>()
        .register::<exports::ExpireExports>();
    workers::runtime::main("exports", registry).await
}
