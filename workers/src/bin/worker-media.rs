//! Worker for queue family `media`: photo thumbnails (CPU-bound; scale it by cores).

use jobs::{JobRegistry, media};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new().register::<media::MakeThumbnail>();
    workers::runtime::main("media", registry).await
}
