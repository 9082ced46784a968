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
            domain::management::documents::villa_storage_folder(&ctx.pool, self.villa_id).await?
        else {
            // The villa was deleted before its tree was made: nothing to do.
            return Ok(json!({"skipped": "villa no longer exists or has no folder"}));
        };
        let folders = villa_tree(&folder);
        for f in &folders {
            ctx.services.store.create_folder(f).await?;
        }
        domain::management::documents::set_storage_base_path(&ctx.pool, self.villa_id, &folder)
            .await?;
        Ok(json!({"storageBasePath": folder.as_str(), "folders": folders.len()}))
    }
}

/// How often an upload waiting for its villa's tree looks again.
const TREE_WAIT: Duration = Duration::from_millis(250);

/// An upload found its villa's tree not created yet. While the tree job is on its way the
/// upload waits (without using up attempts, so a slow tree never fails an upload); when the
/// tree job failed (or its row is gone), it is an ordinary retry, so that the waiting ends.
async fn tree_not_ready(ctx: &JobContext, villa_id: Uuid) -> JobError {
    let message = format!("the folder tree of villa {villa_id} is not created yet");
    let key = CreateVillaTree { villa_id }
        .dedupe_key()
        .unwrap_or_default();
    match domain::job_store::status_by_dedupe_key(&ctx.pool, &key).await {
        // SUCCEEDED too: the tree was made since this job looked; look again at once. A tree
        // job that waits (a retry's backoff, a throttling store) is looked at when it is due.
        Ok(Some((status, due_in))) if status != "FAILED" => {
            JobError::not_yet(message, due_in.max(TREE_WAIT))
        }
        _ => JobError::retry(message),
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
        let doc = domain::management::documents::pending(&ctx.pool, self.document_id).await?;
        let Some(doc) = doc else {
            return Ok(json!({"skipped": "document deleted before it was stored"}));
        };
        let Some(content) = doc.pending_content else {
            return Ok(json!({"skipped": "already stored"}));
        };
        if !doc.tree_ready {
            return Err(tree_not_ready(&ctx, doc.villa_id).await);
        }
        let path =
            domain::storage::StoragePath::from_stored(&doc.storage_path).ok_or_else(|| {
                JobError::fatal(format!(
                    "stored path {:?} is not a storage path",
                    doc.storage_path
                ))
            })?;
        let len = content.len();
        let stored = ctx.services.store.put(&path, content.into()).await?;
        let kept = domain::management::documents::mark_stored(&ctx.pool, self.document_id, &stored)
            .await?;
        if !kept {
            // Deleted while it was being stored: what was just written must not stay behind.
            ctx.services.store.delete(&path).await?;
            return Ok(json!({"skipped": "document deleted while it was being stored"}));
        }
        Ok(json!({"storagePath": path.as_str(), "bytes": len}))
    }
}

/// Puts an uploaded photo's bytes in the document store at its `storagePath` (in its category's
/// folder, or its bedroom's), once the villa's tree exists.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StorePhoto {
    pub photo_id: Uuid,
}

impl Job for StorePhoto {
    const KIND: &'static str = "documents.store_photo";
    const QUEUE: Queue = Queue::Documents;
    const MAX_ATTEMPTS: i32 = 10;
    const BACKOFF_BASE: Duration = Duration::from_millis(250);

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let Some(mut photo) = domain::management::photos::pending(&ctx.pool, self.photo_id).await?
        else {
            return Ok(json!({"skipped": "photo deleted before it was stored"}));
        };
        if !photo.tree_ready {
            return Err(tree_not_ready(&ctx, photo.villa_id).await);
        }
        let path = domain::management::photos::stored_path(&photo).ok_or_else(|| {
            JobError::fatal(format!(
                "stored path {:?} is not a storage path",
                photo.storage_path
            ))
        })?;
        let Some(content) = photo.pending_content.take() else {
            return Ok(json!({"skipped": "already stored"}));
        };
        // A bedroom's folder is made here, on its first photo (the tree has the category folders).
        if let Some((parent, _)) = path.as_str().rsplit_once('/')
            && let Some(parent) = domain::storage::StoragePath::from_stored(parent)
        {
            ctx.services.store.create_folder(&parent).await?;
        }
        let len = content.len();
        let stored = ctx.services.store.put(&path, content.into()).await?;
        domain::management::photos::mark_stored(&ctx.pool, self.photo_id, &stored).await?;
        Ok(json!({"storagePath": path.as_str(), "bytes": len}))
    }
}

/// Puts a field note's file (voice note or photo) in the villa's `Maintenance/Field-Notes/`
/// folder, once the villa's tree exists; the folder itself is made on the villa's first note.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreFieldNote {
    pub note_id: Uuid,
}

impl Job for StoreFieldNote {
    const KIND: &'static str = "documents.store_field_note";
    const QUEUE: Queue = Queue::Documents;
    const MAX_ATTEMPTS: i32 = 10;
    const BACKOFF_BASE: Duration = Duration::from_millis(250);

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let Some(note) = domain::maintenance::field_notes::pending(&ctx.pool, self.note_id).await?
        else {
            return Ok(json!({"skipped": "field note deleted before it was stored"}));
        };
        if !note.tree_ready {
            return Err(tree_not_ready(&ctx, note.villa_id).await);
        }
        let (Some(content), Some(stored_path)) = (note.pending_content, note.storage_path) else {
            return Ok(json!({"skipped": "already stored, or no file"}));
        };
        let path = domain::storage::StoragePath::from_stored(&stored_path).ok_or_else(|| {
            JobError::fatal(format!("stored path {stored_path:?} is not a storage path"))
        })?;
        if let Some((parent, _)) = path.as_str().rsplit_once('/')
            && let Some(parent) = domain::storage::StoragePath::from_stored(parent)
        {
            ctx.services.store.create_folder(&parent).await?;
        }
        let len = content.len();
        let stored = ctx.services.store.put(&path, content.into()).await?;
        domain::maintenance::field_notes::mark_stored(&ctx.pool, self.note_id, &stored).await?;
        Ok(json!({"storagePath": path.as_str(), "bytes": len}))
    }
}

/// Removes a deleted villa's folder, and everything in it, from the document store. The folder
/// is in the payload because the villa's row is gone when this runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteVillaFolder {
    pub villa_id: Uuid,
    pub folder: String,
}

impl Job for DeleteVillaFolder {
    const KIND: &'static str = "documents.delete_villa_folder";
    const QUEUE: Queue = Queue::Documents;

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let folder = domain::storage::StoragePath::from_stored(&self.folder)
            .filter(|f| f.as_str().starts_with("Villas/") && f.as_str().matches('/').count() == 1)
            .ok_or_else(|| JobError::fatal(format!("{:?} is not a villa folder", self.folder)))?;
        ctx.services.store.delete_tree(&folder).await?;
        Ok(json!({"deleted": folder.as_str()}))
    }
}

/// Removes a deleted document's file from the document store. The path is in the payload because
/// the document's row is gone when this runs; only a file inside a villa's tree is removed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteStoredFile {
    pub path: String,
}

impl Job for DeleteStoredFile {
    const KIND: &'static str = "documents.delete_stored_file";
    const QUEUE: Queue = Queue::Documents;

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let path = domain::storage::StoragePath::from_stored(&self.path)
            .filter(|p| p.as_str().starts_with("Villas/") && p.as_str().matches('/').count() >= 2)
            .ok_or_else(|| JobError::fatal(format!("{:?} is not a file of a villa", self.path)))?;
        // The path was freed when its record went, and a later upload of the same name (in any
        // case: one item on SharePoint) may have taken it while this job waited: its file stays.
        if domain::management::documents::storage_path_in_use(&ctx.pool, &path).await? {
            return Ok(
                json!({"skipped": "the path belongs to a newer upload", "path": path.as_str()}),
            );
        }
        ctx.services.store.delete(&path).await?;
        Ok(json!({"deleted": path.as_str()}))
    }
}
