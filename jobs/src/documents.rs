//! Queue `documents`: the per-villa folder tree and uploaded documents.

use std::time::Duration;

use domain::storage::villa_tree;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{Job, JobContext, JobError, Queue};

/// Creates a villa's whole folder tree (every document folder, every photo category folder),
/// then records it as the villa's `storageBasePath`. Enqueued with the villa's first upload; the
/// dedupe key makes it one job per villa however many uploads arrive at once, and creating a
/// folder that exists is a no-op, so a rerun changes nothing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateVillaTree {
    pub villa_id: Uuid,
}

impl Job for CreateVillaTree {
    const KIND: &'static str = "documents.create_villa_tree";
    const QUEUE: Queue = Queue::Documents;
    const BACKOFF_BASE: Duration = Duration::from_secs(1);

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("villa-tree:{}", self.villa_id))
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let Some(folder) =
            domain::documents::villa_storage_folder(&ctx.pool, self.villa_id).await?
        else {
            // The villa was deleted before its tree was made: nothing to do.
            return Ok(json!({"skipped": "villa no longer exists or has no folder"}));
        };
        let folders = villa_tree(&folder);
        for f in &folders {
            ctx.services.store.create_folder(f).await?;
        }
        domain::documents::set_storage_base_path(&ctx.pool, self.villa_id, &folder).await?;
        Ok(json!({"storageBasePath": folder.as_str(), "folders": folders.len()}))
    }
}

/// Puts an uploaded document's bytes in the document store at its `storagePath`, records the
/// store's id and address, and drops the database's copy. Waits (retrying) until the villa's
/// tree exists, so that only [`CreateVillaTree`] creates it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreDocument {
    pub document_id: Uuid,
}

impl Job for StoreDocument {
    const KIND: &'static str = "documents.store_document";
    const QUEUE: Queue = Queue::Documents;
    const MAX_ATTEMPTS: i32 = 10;
    const BACKOFF_BASE: Duration = Duration::from_millis(250);

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let doc = domain::documents::pending(&ctx.pool, self.document_id).await?;
        let Some(doc) = doc else {
            return Ok(json!({"skipped": "document deleted before it was stored"}));
        };
        let Some(content) = doc.pending_content else {
            return Ok(json!({"skipped": "already stored"}));
        };
        if !doc.tree_ready {
            return Err(JobError::retry(format!(
                "the folder tree of villa {} is not created yet",
                doc.villa_id
            )));
        }
        let path =
            domain::storage::StoragePath::from_stored(&doc.storage_path).ok_or_else(|| {
                JobError::fatal(format!(
                    "stored path {:?} is not a storage path",
                    doc.storage_path
                ))
            })?;
        let stored = ctx.services.store.put(&path, &content).await?;
        domain::documents::mark_stored(&ctx.pool, self.document_id, &stored.file_id, &stored.url)
            .await?;
        Ok(json!({"storagePath": path.as_str(), "bytes": content.len()}))
    }
}
