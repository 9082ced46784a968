//! Queue `media`: thumbnails of uploaded photos.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{Job, JobContext, JobError, Queue};

/// Makes a photo's thumbnail (longest side at most 400 px, JPEG) and records the dimensions read
/// from the decoded image. Reads the bytes from the database, or from the store when the upload
/// job has already moved them there.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MakeThumbnail {
    pub photo_id: Uuid,
}

impl Job for MakeThumbnail {
    const KIND: &'static str = "media.make_thumbnail";
    const QUEUE: Queue = Queue::Media;

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let Some(photo) = domain::management::photos::pending(&ctx.pool, self.photo_id).await?
        else {
            return Ok(json!({"skipped": "photo deleted"}));
        };
        if photo.has_thumbnail {
            return Ok(json!({"skipped": "thumbnail exists"}));
        }
        let bytes = match photo.pending_content {
            Some(b) => b,
            None => {
                let path = domain::management::photos::stored_path(&photo)
                    .ok_or_else(|| JobError::fatal("malformed storage path"))?;
                ctx.services.store.get(&path).await?.ok_or_else(|| {
                    JobError::retry("the photo is in neither the database nor the store yet")
                })?
            }
        };
        let (thumb, width, height) =
            tokio::task::spawn_blocking(move || domain::media::thumbnail(&bytes))
                .await
                .map_err(|e| JobError::retry(format!("thumbnail task: {e}")))?
                .map_err(|e| JobError::fatal(e.to_string()))?;
        domain::management::photos::set_thumbnail(&ctx.pool, self.photo_id, &thumb, width, height)
            .await?;
        Ok(json!({"thumbnailBytes": thumb.len(), "width": width, "height": height}))
    }
}
