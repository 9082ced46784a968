//! Worker for queue family `documents`: per-villa folder trees, document, photo and field-note uploads,
//! removal of deleted villas' folders.

use jobs::{JobRegistry, documents};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new()
        .register::<documents::CreateVillaTree>()
        .register::<documents::StoreDocument>()
        .register::<documents::StorePhoto>()
        .register::<documents::StoreFieldNote>()
        .register::<documents::DeleteVillaFolder>()
        .register::<documents::DeleteStoredFile>();
    workers::runtime::main("documents", registry).await
}
