//! The local-filesystem backend: the object at `storagePath` is the file
//! `<root>/<storagePath>`. Writes go to a temporary file in the same folder and are renamed into
//! place, so a reader never sees half a file and a retried upload simply replaces the first.

use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use futures::{StreamExt, stream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use uuid::Uuid;

use super::{ObjectStream, StorageError, StoragePath, StoredObject};

/// The size of the chunks a streamed object is read in.
const CHUNK: usize = 64 * 1024;

#[derive(Debug, Clone)]
pub struct LocalStore {
    root: PathBuf,
}

fn io(path: &Path, source: std::io::Error) -> StorageError {
    StorageError::Io {
        path: path.display().to_string(),
        source,
    }
}

impl LocalStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of `path`. `StoragePath`s have no `..`, no empty and no absolute segments, so
    /// the result is always under the root.
    pub fn file_of(&self, path: &StoragePath) -> PathBuf {
        self.root.join(path.as_str())
    }

    fn object(path: &StoragePath) -> StoredObject {
        StoredObject {
            file_id: format!("local:{path}"),
            url: format!("local:///{path}"),
            etag: None,
        }
    }

    pub async fn create_folder(&self, path: &StoragePath) -> Result<(), StorageError> {
        let dir = self.file_of(path);
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| io(&dir, e))
    }

    /// See [`DocumentStore::sweep_stale_temp_files`](super::DocumentStore::sweep_stale_temp_files):
    /// walks the whole store, folder by folder (no recursion on the stack, links not followed).
    pub async fn sweep_stale_temp_files(
        &self,
        older_than: std::time::Duration,
    ) -> Result<u64, StorageError> {
        let mut removed = 0;
        let mut folders = vec![self.root.clone()];
        while let Some(folder) = folders.pop() {
            // A folder that cannot be read (gone meanwhile, no permission) is passed over: the
            // sweep goes on with the others.
            let Ok(mut entries) = tokio::fs::read_dir(&folder).await else {
                continue;
            };
            while let Ok(Some(entry)) = entries.next_entry().await {
                let Ok(kind) = entry.file_type().await else {
                    continue;
                };
                if kind.is_dir() {
                    folders.push(entry.path());
                    continue;
                }
                let name = entry.file_name();
                let is_temp = name
                    .to_str()
                    .is_some_and(|n| n.starts_with(".upload-") && n.ends_with(".tmp"));
                let stale = is_temp && kind.is_file() && untouched_for(&entry, older_than).await;
                if stale && tokio::fs::remove_file(entry.path()).await.is_ok() {
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    pub async fn put(
        &self,
        path: &StoragePath,
        bytes: Bytes,
    ) -> Result<StoredObject, StorageError> {
        let target = self.file_of(path);
        let dir = target.parent().unwrap_or(&self.root).to_path_buf();
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| io(&dir, e))?;
        let temp = dir.join(format!(".upload-{}.tmp", Uuid::new_v4().simple()));
        let written = async {
            let mut file = tokio::fs::File::create(&temp).await?;
            file.write_all(&bytes).await?;
            file.sync_all().await?;
            tokio::fs::rename(&temp, &target).await
        }
        .await;
        if let Err(e) = written {
            let _ = tokio::fs::remove_file(&temp).await;
            return Err(io(&target, e));
        }
        Ok(Self::object(path))
    }

    /// Copies the file `source` into place (through a temporary file in the target's folder, as
    /// [`put`](Self::put)); the copy is the kernel's, so the file is never read into memory.
    pub async fn put_file(
        &self,
        path: &StoragePath,
        source: &Path,
    ) -> Result<StoredObject, StorageError> {
        let target = self.file_of(path);
        let dir = target.parent().unwrap_or(&self.root).to_path_buf();
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| io(&dir, e))?;
        let temp = dir.join(format!(".upload-{}.tmp", Uuid::new_v4().simple()));
        let written = async {
            tokio::fs::copy(source, &temp).await?;
            // Opened for writing: flushing a file to disk needs write access on some systems.
            let file = tokio::fs::OpenOptions::new()
                .write(true)
                .open(&temp)
                .await?;
            file.sync_all().await?;
            tokio::fs::rename(&temp, &target).await
        }
        .await;
        if let Err(e) = written {
            let _ = tokio::fs::remove_file(&temp).await;
            return Err(io(&target, e));
        }
        Ok(Self::object(path))
    }

    pub async fn get(&self, path: &StoragePath) -> Result<Option<Vec<u8>>, StorageError> {
        let file = self.file_of(path);
        match tokio::fs::read(&file).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&file, e)),
        }
    }

    /// The object read in chunks of [`CHUNK`] bytes. The file is opened here: a write that
    /// replaces the object meanwhile (a rename) leaves this stream reading the file it opened.
    /// A folder is not an object (`None`).
    pub async fn get_stream(
        &self,
        path: &StoragePath,
    ) -> Result<Option<ObjectStream>, StorageError> {
        let name = self.file_of(path);
        let file = match tokio::fs::File::open(&name).await {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&name, e)),
        };
        let meta = file.metadata().await.map_err(|e| io(&name, e))?;
        if !meta.is_file() {
            return Ok(None);
        }
        // Ends at the end of the file, or after the first read error.
        let body = stream::try_unfold(file, |mut file| async move {
            let mut chunk = BytesMut::with_capacity(CHUNK);
            let read = file.read_buf(&mut chunk).await?;
            Ok::<_, std::io::Error>((read > 0).then(|| (chunk.freeze(), file)))
        })
        .boxed();
        Ok(Some(ObjectStream {
            len: meta.len(),
            body,
        }))
    }

    pub async fn delete(&self, path: &StoragePath) -> Result<(), StorageError> {
        let file = self.file_of(path);
        match tokio::fs::remove_file(&file).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&file, e)),
            _ => Ok(()),
        }
    }

    pub async fn delete_tree(&self, path: &StoragePath) -> Result<(), StorageError> {
        let dir = self.file_of(path);
        match tokio::fs::remove_dir_all(&dir).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&dir, e)),
            _ => Ok(()),
        }
    }

    pub async fn folder_exists(&self, path: &StoragePath) -> Result<bool, StorageError> {
        let dir = self.file_of(path);
        match tokio::fs::metadata(&dir).await {
            Ok(meta) => Ok(meta.is_dir()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io(&dir, e)),
        }
    }
}

/// Whether the file `entry` names was last modified at least `age` ago (a temporary file that
/// old belongs to no write under way: writers write continuously).
pub async fn untouched_for(entry: &tokio::fs::DirEntry, age: std::time::Duration) -> bool {
    entry
        .metadata()
        .await
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|at| at.elapsed().ok())
        .is_some_and(|elapsed| elapsed >= age)
}

#[cfg(test)]
mod tests {
    use futures::TryStreamExt;

    use super::super::{
        DocumentType, SafeName, document_path, export_path, villa_folder, villa_tree,
    };
    use super::*;

    fn temp_root() -> PathBuf {
        std::env::temp_dir().join(format!("villa-store-test-{}", Uuid::new_v4().simple()))
    }

    #[tokio::test]
    async fn writes_reads_replaces_and_deletes_inside_the_root() {
        let root = temp_root();
        let store = LocalStore::new(&root);
        let villa = villa_folder("PHK-001", Uuid::now_v7());
        for folder in villa_tree(&villa) {
            store.create_folder(&folder).await.unwrap();
        }
        assert!(store.folder_exists(&villa).await.unwrap());
        let name = SafeName::parse("fileName", "../../../escape.pdf").unwrap();
        let path = document_path(&villa, DocumentType::Other, &name);
        let stored = store
            .put(&path, Bytes::from_static(b"first"))
            .await
            .unwrap();
        assert_eq!(stored.file_id, format!("local:{path}"));
        store
            .put(&path, Bytes::from_static(b"second"))
            .await
            .unwrap();
        assert_eq!(
            store.get(&path).await.unwrap().as_deref(),
            Some(&b"second"[..])
        );
        let file = store.file_of(&path);
        assert!(file.starts_with(&root) && file.exists());
        assert!(!root.parent().unwrap().join("escape.pdf").exists());
        // No temporary files are left behind.
        let leftovers = std::fs::read_dir(file.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1);

        store.delete(&path).await.unwrap();
        assert!(!file.exists());
        store.delete(&path).await.unwrap();

        store.delete_tree(&villa).await.unwrap();
        assert!(!store.folder_exists(&villa).await.unwrap());
        assert_eq!(store.get(&path).await.unwrap(), None);
        store.delete_tree(&villa).await.unwrap();
        let _ = std::fs::remove_dir_all(root);
    }

    async fn read_all(object: ObjectStream) -> Vec<u8> {
        object
            .body
            .try_fold(Vec::new(), |mut all, chunk| async move {
                all.extend_from_slice(&chunk);
                Ok(all)
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn files_are_stored_from_disk_and_streamed_back() {
        let root = temp_root();
        let store = LocalStore::new(&root);
        // A few chunks, the last one partial.
        let content: Vec<u8> = (0..3 * CHUNK + 123)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        let source = root.with_extension("source");
        std::fs::write(&source, &content).unwrap();
        let name = SafeName::parse("fileName", "0193-revenue_2026-03-01_2026-03-31.xlsx").unwrap();
        let path = export_path(&name);
        let stored = store.put_file(&path, &source).await.unwrap();
        assert_eq!(stored.file_id, format!("local:{path}"));
        assert!(source.exists(), "the source is copied, not moved");

        let object = store.get_stream(&path).await.unwrap().unwrap();
        assert_eq!(object.len, u64::try_from(content.len()).unwrap());
        assert_eq!(read_all(object).await, content);

        // Writing again replaces the object; no temporary file is left in its folder.
        std::fs::write(&source, b"second").unwrap();
        store.put_file(&path, &source).await.unwrap();
        let object = store.get_stream(&path).await.unwrap().unwrap();
        assert_eq!(object.len, 6);
        assert_eq!(read_all(object).await, b"second");
        let folder = store.file_of(&path).parent().unwrap().to_path_buf();
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 1);

        // A missing source is an error that leaves the object as it was, and nothing behind.
        let missing = root.with_extension("missing");
        assert!(store.put_file(&path, &missing).await.is_err());
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 1);
        assert_eq!(
            store.get(&path).await.unwrap().as_deref(),
            Some(&b"second"[..])
        );

        // An empty object streams nothing; a missing object and a folder are none.
        std::fs::write(&source, b"").unwrap();
        store.put_file(&path, &source).await.unwrap();
        let object = store.get_stream(&path).await.unwrap().unwrap();
        assert_eq!(object.len, 0);
        assert!(read_all(object).await.is_empty());
        store.delete(&path).await.unwrap();
        assert!(store.get_stream(&path).await.unwrap().is_none());
        let exports = StoragePath::constant("Exports");
        assert!(store.folder_exists(&exports).await.unwrap());
        assert!(store.get_stream(&exports).await.unwrap().is_none());

        let _ = std::fs::remove_file(source);
        let _ = std::fs::remove_dir_all(root);
    }
}
