//! The document store (ARCHITECTURE.md, "Document store"): where uploaded files, the per-villa
//! folder tree and the reporting exports live, on the backend `STORAGE_BACKEND` names. The local
//! backend keeps the object at `storagePath` as the file `STORAGE_LOCAL_DIR/<storagePath>`, folders
//! being real directories; the S3 backend as the object `<S3_PREFIX>/<storagePath>` of its bucket,
//! folders being zero-byte `<key>/` markers; the SharePoint backend as the drive item at
//! `<storagePath>` of its document library, folders being folders. Every backend answers the same
//! calls the same way, so the processes that share one can run on any number of machines (except
//! the local one, whose folder they must share).
//!
//! Paths are [`StoragePath`]s, which can only be built from the layout's constants and
//! [`SafeName`]s, so no value a client sends can name a place outside its villa's folder.

mod layout;
mod local;
mod names;
pub mod s3;
pub mod sharepoint;

pub use layout::{
    DocumentType, PhotoCategory, document_path, export_path, field_notes_folder, photo_folder,
    villa_folder, villa_tree,
};
pub use local::LocalStore;
pub use local::untouched_for;
pub use names::{MAX_NAME_LEN, SafeName};
pub use s3::S3Store;
pub use sharepoint::SharePointStore;

use std::fmt;

use bytes::Bytes;
use futures::stream::BoxStream;

/// A relative, `/`-separated path inside the document store.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoragePath(String);

impl StoragePath {
    /// A path made of the layout's own constant segments.
    pub(crate) fn constant(path: &'static str) -> StoragePath {
        StoragePath(path.to_owned())
    }

    /// This path followed by constant segments (`"Documents/Other"`).
    pub(crate) fn join(&self, constant: &'static str) -> StoragePath {
        StoragePath(format!("{}/{constant}", self.0))
    }

    /// This path followed by one sanitized name.
    pub fn child(&self, name: &SafeName) -> StoragePath {
        StoragePath(format!("{}/{}", self.0, name.as_str()))
    }

    /// A path read back from the database, where only this module's paths are written. Refuses
    /// anything absolute or with `.`/`..`/empty segments all the same.
    pub fn from_stored(stored: &str) -> Option<StoragePath> {
        let ok = !stored.is_empty()
            && !stored.starts_with('/')
            && !stored.contains('\\')
            && stored
                .split('/')
                .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
        ok.then(|| StoragePath(stored.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }
}

impl fmt::Display for StoragePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the store says about an object it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// The store's identifier of the object (`storageFileId`).
    pub file_id: String,
    /// Where the store serves it (`storageUrl`).
    pub url: String,
    /// The version the store gave these bytes (S3's ETag, the drive item's eTag; none on the
    /// local backend), kept with the record's metadata.
    pub etag: Option<String>,
}

/// An object read as a stream of chunks, so that a large file is never held in memory.
pub struct ObjectStream {
    /// The object's size in bytes (when it was opened).
    pub len: u64,
    pub body: BoxStream<'static, std::io::Result<Bytes>>,
}

impl fmt::Debug for ObjectStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStream")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("document store I/O on {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A remote backend refused or failed a call (after its own retries).
    #[error("document store ({backend}) {op} {path}: {message}")]
    Backend {
        /// `s3` or `sharepoint`.
        backend: &'static str,
        /// The call: `put`, `get`, `create_folder`…
        op: &'static str,
        path: String,
        message: String,
    },
    /// A remote backend still asks to wait (Graph's 429, or 503 with `Retry-After`) after the
    /// waiting one call may do: not a failure, the caller comes back after `retry_after`.
    #[error("document store ({backend}) {op} {path}: throttled, asked to wait {}s", retry_after.as_secs())]
    Throttled {
        backend: &'static str,
        op: &'static str,
        path: String,
        retry_after: std::time::Duration,
    },
}

/// The configured backend. An enum rather than a trait object: the set is closed and known.
#[derive(Debug, Clone)]
pub enum DocumentStore {
    Local(LocalStore),
    S3(S3Store),
    SharePoint(SharePointStore),
}

/// Expands to the same call on whichever backend `$store` is.
macro_rules! dispatch {
    ($store:expr, $s:ident => $call:expr) => {
        match $store {
            DocumentStore::Local($s) => $call,
            DocumentStore::S3($s) => $call,
            DocumentStore::SharePoint($s) => $call,
        }
    };
}

impl DocumentStore {
    /// The backend the settings name. Settings that cannot make one (which `CoreSettings`
    /// refuses at start, so only settings built by hand) stop the process here, naming the
    /// variables, like every other start failure: nothing is silently written elsewhere.
    pub fn from_settings(settings: &crate::settings::CoreSettings) -> DocumentStore {
        Self::try_from_settings(settings).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`from_settings`](Self::from_settings), with the reason as an error instead.
    pub fn try_from_settings(
        settings: &crate::settings::CoreSettings,
    ) -> Result<DocumentStore, String> {
        use crate::settings::StorageBackend;
        match settings.storage_backend {
            StorageBackend::Local => Ok(DocumentStore::Local(LocalStore::new(
                &settings.storage_local_dir,
            ))),
            StorageBackend::S3 => {
                let s3 = settings
                    .s3
                    .as_ref()
                    .ok_or("STORAGE_BACKEND is s3 but S3_BUCKET and S3_REGION are not set")?;
                S3Store::new(s3)
                    .map(DocumentStore::S3)
                    .map_err(|e| format!("the S3_* settings cannot make an S3 client: {e}"))
            }
            StorageBackend::SharePoint => {
                let graph = settings
                    .graph
                    .as_ref()
                    .ok_or("STORAGE_BACKEND is sharepoint but the GRAPH_* settings are missing")?;
                Ok(DocumentStore::SharePoint(SharePointStore::new(graph)))
            }
        }
    }

    /// Which backend this is.
    pub fn backend(&self) -> crate::settings::StorageBackend {
        use crate::settings::StorageBackend;
        match self {
            DocumentStore::Local(_) => StorageBackend::Local,
            DocumentStore::S3(_) => StorageBackend::S3,
            DocumentStore::SharePoint(_) => StorageBackend::SharePoint,
        }
    }

    pub async fn create_folder(&self, path: &StoragePath) -> Result<(), StorageError> {
        self.observed("create_folder", async {
            dispatch!(self, s => s.create_folder(path).await)
        })
        .await
    }

    /// Writes the object; writing it again replaces it (uploads are retried). Takes the bytes
    /// by value: the backends send them on without a copy.
    pub async fn put(
        &self,
        path: &StoragePath,
        bytes: Bytes,
    ) -> Result<StoredObject, StorageError> {
        self.observed("put", async {
            dispatch!(self, s => s.put(path, bytes).await)
        })
        .await
    }

    /// Writes the file `file` (already on disk, e.g. an export the worker wrote) as the object,
    /// without reading it into memory; writing it again replaces it.
    pub async fn put_file(
        &self,
        path: &StoragePath,
        file: &std::path::Path,
    ) -> Result<StoredObject, StorageError> {
        self.observed("put", async {
            dispatch!(self, s => s.put_file(path, file).await)
        })
        .await
    }

    /// The object's bytes, or `None` when there is none.
    pub async fn get(&self, path: &StoragePath) -> Result<Option<Vec<u8>>, StorageError> {
        self.observed("get", async { dispatch!(self, s => s.get(path).await) })
            .await
    }

    /// The object as a stream of chunks with its size, or `None` when there is none: for
    /// downloads of files too large to hold in memory.
    pub async fn get_stream(
        &self,
        path: &StoragePath,
    ) -> Result<Option<ObjectStream>, StorageError> {
        self.observed("get", async {
            dispatch!(self, s => s.get_stream(path).await)
        })
        .await
    }

    /// Removes one object; a missing object is not an error.
    pub async fn delete(&self, path: &StoragePath) -> Result<(), StorageError> {
        self.observed("delete", async {
            dispatch!(self, s => s.delete(path).await)
        })
        .await
    }

    /// Removes a folder and everything in it; a missing folder is not an error.
    pub async fn delete_tree(&self, path: &StoragePath) -> Result<(), StorageError> {
        self.observed("delete_tree", async {
            dispatch!(self, s => s.delete_tree(path).await)
        })
        .await
    }

    /// Removes the temporary files a writer killed mid-write left (the local store writes each
    /// file beside its target as `.upload-*.tmp`, then renames it), once untouched for
    /// `older_than`; how many. The remote stores write in one request or an upload session of
    /// their own, which leave nothing of ours to sweep.
    pub async fn sweep_stale_temp_files(
        &self,
        older_than: std::time::Duration,
    ) -> Result<u64, StorageError> {
        match self {
            DocumentStore::Local(local) => local.sweep_stale_temp_files(older_than).await,
            DocumentStore::S3(_) | DocumentStore::SharePoint(_) => Ok(0),
        }
    }

    pub async fn folder_exists(&self, path: &StoragePath) -> Result<bool, StorageError> {
        self.observed("folder_exists", async {
            dispatch!(self, s => s.folder_exists(path).await)
        })
        .await
    }

    /// The backend's name in the metrics' labels.
    fn backend_label(&self) -> &'static str {
        match self {
            DocumentStore::Local(_) => "local",
            DocumentStore::S3(_) => "s3",
            DocumentStore::SharePoint(_) => "sharepoint",
        }
    }

    /// Runs one operation, counting it by outcome and timing it (for a streamed read, the time
    /// to open it).
    async fn observed<T>(
        &self,
        op: &'static str,
        operation: impl Future<Output = Result<T, StorageError>>,
    ) -> Result<T, StorageError> {
        use crate::metrics::names;
        let started = std::time::Instant::now();
        let result = operation.await;
        let outcome = match &result {
            Ok(_) => "ok",
            Err(StorageError::Throttled { .. }) => "throttled",
            Err(_) => "error",
        };
        let backend = self.backend_label();
        metrics::counter!(names::STORAGE_OPS, "backend" => backend, "op" => op, "outcome" => outcome)
            .increment(1);
        metrics::histogram!(names::STORAGE_DURATION, "backend" => backend, "op" => op)
            .record(started.elapsed().as_secs_f64());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_paths_are_checked() {
        assert!(StoragePath::from_stored("Villas/A_1/Documents/Other/x.pdf").is_some());
        for bad in [
            "",
            "/etc/passwd",
            "Villas/../x",
            "Villas//x",
            "Villas/./x",
            "a\\b",
            "Villas/x/",
        ] {
            assert!(StoragePath::from_stored(bad).is_none(), "{bad:?}");
        }
    }
}
