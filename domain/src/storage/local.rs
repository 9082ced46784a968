//! The local-filesystem backend: the object at `storagePath` is the file
//! `<root>/<storagePath>`. Writes go to a temporary file in the same folder and are renamed into
//! place, so a reader never sees half a file and a retried upload simply replaces the first.

use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;
use uuid::Uuid;

use super::{StorageError, StoragePath, StoredObject};

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
        }
    }

    pub async fn create_folder(&self, path: &StoragePath) -> Result<(), StorageError> {
        let dir = self.file_of(path);
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| io(&dir, e))
    }

    pub async fn put(
        &self,
        path: &StoragePath,
        bytes: &[u8],
    ) -> Result<StoredObject, StorageError> {
        let target = self.file_of(path);
        let dir = target.parent().unwrap_or(&self.root).to_path_buf();
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| io(&dir, e))?;
        let temp = dir.join(format!(".upload-{}.tmp", Uuid::new_v4().simple()));
        let written = async {
            let mut file = tokio::fs::File::create(&temp).await?;
            file.write_all(bytes).await?;
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

#[cfg(test)]
mod tests {
    use super::super::{DocumentType, SafeName, document_path, villa_folder, villa_tree};
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
        let stored = store.put(&path, b"first").await.unwrap();
        assert_eq!(stored.file_id, format!("local:{path}"));
        store.put(&path, b"second").await.unwrap();
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
}
