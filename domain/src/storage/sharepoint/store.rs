//! The calls every backend answers (folders, writes, reads, removals), and the steps they take.

use std::path::Path;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use reqwest::header::CONTENT_TYPE;
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use super::answers::{error_code, failure_text, read_json, refused, stored};
use super::paths::ancestors;
use super::upload::Source;
use super::{
    CALL_TIMEOUT, OP_CREATE_FOLDER, OP_DELETE, OP_DELETE_TREE, OP_FOLDER_EXISTS, OP_GET, OP_PUT,
    SIMPLE_UPLOAD_MAX, SharePointStore, UPLOAD_TIMEOUT, backend, io,
};
use crate::remote::describe;
use crate::storage::{ObjectStream, StorageError, StoragePath, StoredObject};

/// What became of a folder creation.
#[derive(Debug, PartialEq, Eq)]
enum Made {
    /// Created now, or there already.
    Done,
    /// Its parent folder does not exist.
    ParentMissing,
}

impl SharePointStore {
    /// Creates the folder and any missing ancestor; a folder that exists is success.
    pub async fn create_folder(&self, path: &StoragePath) -> Result<(), StorageError> {
        if self.make_folder(path, path.as_str()).await? == Made::Done {
            return Ok(());
        }
        // The usual case for a new villa: its first folder is deep. Each ancestor from the top;
        // those that exist answer "already exists".
        for ancestor in ancestors(path.as_str()) {
            if self.make_folder(path, ancestor).await? == Made::ParentMissing {
                return Err(backend(
                    OP_CREATE_FOLDER,
                    path,
                    format!("the parent of {ancestor} is still missing after creating it"),
                ));
            }
        }
        match self.make_folder(path, path.as_str()).await? {
            Made::Done => Ok(()),
            Made::ParentMissing => Err(backend(
                OP_CREATE_FOLDER,
                path,
                "the parent folder is still missing after creating it".to_owned(),
            )),
        }
    }

    /// Writes the object; writing it again replaces it.
    pub async fn put(
        &self,
        path: &StoragePath,
        bytes: Bytes,
    ) -> Result<StoredObject, StorageError> {
        let total = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if total <= SIMPLE_UPLOAD_MAX {
            return self.put_small(path, bytes).await;
        }
        self.upload(path, Source::Memory(bytes), total).await
    }

    /// Writes the file `file` as the object, reading at most one fragment of it at a time.
    pub async fn put_file(
        &self,
        path: &StoragePath,
        file: &Path,
    ) -> Result<StoredObject, StorageError> {
        let mut opened = tokio::fs::File::open(file).await.map_err(|e| io(file, e))?;
        let total = opened.metadata().await.map_err(|e| io(file, e))?.len();
        if total <= SIMPLE_UPLOAD_MAX {
            let mut bytes = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
            opened
                .read_to_end(&mut bytes)
                .await
                .map_err(|e| io(file, e))?;
            return self.put_small(path, Bytes::from(bytes)).await;
        }
        let source = Source::File {
            file: opened,
            name: file,
        };
        self.upload(path, source, total).await
    }

    pub async fn get(&self, path: &StoragePath) -> Result<Option<Vec<u8>>, StorageError> {
        let Some(response) = self.open(path).await? else {
            return Ok(None);
        };
        let bytes = response
            .bytes()
            .await
            .map_err(|e| backend(OP_GET, path, describe(e)))?;
        // The body's one buffer becomes the answer without a copy when it came in one chunk.
        Ok(Some(Vec::from(bytes)))
    }

    /// The object as the download's own chunks; nothing is held beyond the chunk in flight.
    pub async fn get_stream(
        &self,
        path: &StoragePath,
    ) -> Result<Option<ObjectStream>, StorageError> {
        let Some(response) = self.open(path).await? else {
            return Ok(None);
        };
        let len = match response.content_length() {
            Some(len) => len,
            None => self.size_of(path).await?,
        };
        let body = response
            .bytes_stream()
            .map_err(std::io::Error::other)
            .boxed();
        Ok(Some(ObjectStream { len, body }))
    }

    /// Removes one object; a missing object is not an error.
    pub async fn delete(&self, path: &StoragePath) -> Result<(), StorageError> {
        self.remove(OP_DELETE, path).await
    }

    /// Removes a folder and everything in it (Graph deletes a folder with its contents, into
    /// the library's recycle bin); a missing folder is not an error.
    pub async fn delete_tree(&self, path: &StoragePath) -> Result<(), StorageError> {
        self.remove(OP_DELETE_TREE, path).await
    }

    pub async fn folder_exists(&self, path: &StoragePath) -> Result<bool, StorageError> {
        let url = format!("{}?$select=id,folder", self.item_url(path.as_str(), ":"));
        let response = self
            .call(OP_FOLDER_EXISTS, path, || {
                self.inner.http.get(&url).timeout(CALL_TIMEOUT)
            })
            .await?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(false),
            status if status.is_success() => {
                let item = read_json(OP_FOLDER_EXISTS, path, response).await?;
                Ok(item.get("folder").is_some_and(Value::is_object))
            }
            _ => Err(refused(OP_FOLDER_EXISTS, path, response).await),
        }
    }

    /// Creates the folder `folder` (one request); `path` names the caller's folder in errors.
    async fn make_folder(&self, path: &StoragePath, folder: &str) -> Result<Made, StorageError> {
        let (parent, name) = match folder.rsplit_once('/') {
            Some((parent, name)) => (Some(parent), name),
            None => (None, folder),
        };
        let url = self.children_url(parent);
        let body = json!({
            "name": name,
            "folder": {},
            "@microsoft.graph.conflictBehavior": "fail",
        });
        let response = self
            .call(OP_CREATE_FOLDER, path, || {
                self.inner.http.post(&url).json(&body).timeout(CALL_TIMEOUT)
            })
            .await?;
        match response.status() {
            status if status.is_success() => Ok(Made::Done),
            StatusCode::NOT_FOUND => Ok(Made::ParentMissing),
            StatusCode::CONFLICT => {
                let body = response.bytes().await.unwrap_or_default();
                if error_code(&body).as_deref() == Some("nameAlreadyExists") {
                    // Another creator (or an earlier run) was first: the folder is there.
                    Ok(Made::Done)
                } else {
                    Err(backend(
                        OP_CREATE_FOLDER,
                        path,
                        format!("409 Conflict: {}", failure_text(&body)),
                    ))
                }
            }
            _ => Err(refused(OP_CREATE_FOLDER, path, response).await),
        }
    }

    /// Creates the folder that holds `path`, when there is one below the root.
    pub(super) async fn make_parent(&self, path: &StoragePath) -> Result<(), StorageError> {
        match path
            .as_str()
            .rsplit_once('/')
            .and_then(|(parent, _)| StoragePath::from_stored(parent))
        {
            Some(parent) => self.create_folder(&parent).await,
            None => Ok(()),
        }
    }

    /// One `PUT .../content`; a missing folder is created and the upload tried once more.
    async fn put_small(
        &self,
        path: &StoragePath,
        body: Bytes,
    ) -> Result<StoredObject, StorageError> {
        let url = self.item_url(path.as_str(), ":/content");
        let mut made_parent = false;
        loop {
            let response = self
                .call(OP_PUT, path, || {
                    self.inner
                        .http
                        .put(&url)
                        .header(CONTENT_TYPE, "application/octet-stream")
                        .body(body.clone())
                        .timeout(UPLOAD_TIMEOUT)
                })
                .await?;
            match response.status() {
                status if status.is_success() => return stored(path, response).await,
                StatusCode::NOT_FOUND if !made_parent => {
                    self.make_parent(path).await?;
                    made_parent = true;
                }
                _ => return Err(refused(OP_PUT, path, response).await),
            }
        }
    }

    /// `GET .../content` (following the redirect to the download): the answer, or `None`.
    async fn open(&self, path: &StoragePath) -> Result<Option<Response>, StorageError> {
        let url = self.item_url(path.as_str(), ":/content");
        let response = self
            .call(OP_GET, path, || self.inner.http.get(&url))
            .await?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => Ok(Some(response)),
            _ => Err(refused(OP_GET, path, response).await),
        }
    }

    /// The item's `size`, for a download that does not say its length.
    async fn size_of(&self, path: &StoragePath) -> Result<u64, StorageError> {
        let url = format!("{}?$select=id,size", self.item_url(path.as_str(), ":"));
        let response = self
            .call(OP_GET, path, || {
                self.inner.http.get(&url).timeout(CALL_TIMEOUT)
            })
            .await?;
        if !response.status().is_success() {
            return Err(refused(OP_GET, path, response).await);
        }
        let item = read_json(OP_GET, path, response).await?;
        item.get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| backend(OP_GET, path, "the item has no size".to_owned()))
    }

    async fn remove(&self, op: &'static str, path: &StoragePath) -> Result<(), StorageError> {
        let url = self.item_url(path.as_str(), ":");
        let response = self
            .call(op, path, || {
                self.inner.http.delete(&url).timeout(CALL_TIMEOUT)
            })
            .await?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(()),
            status if status.is_success() => Ok(()),
            _ => Err(refused(op, path, response).await),
        }
    }
}
