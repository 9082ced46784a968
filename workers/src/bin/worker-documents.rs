//! Worker for queue family `documents`: per-villa folder trees and document uploads.

use jobs::{JobRegistry, documents};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new()
        .register::<documents::CreateVillaTree>()
        .register::<documents::StoreDocument>();
    workers::runtime::main("documents", registry).await
}
