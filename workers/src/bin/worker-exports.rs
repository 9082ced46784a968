//! Worker for queue family `exports`: the reporting API's spreadsheet exports, and the
//! scheduler's tick that removes the expired ones.

use jobs::{JobRegistry, exports};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new()
        .register::<exports::ExportJob>()
        .register::<exports::ExpireExports>();
    // An export holds two connections and a core: the process claims only what it builds.
    workers::runtime::main_claiming("exports", registry, Some(exports::CONCURRENT_EXPORTS)).await
}
