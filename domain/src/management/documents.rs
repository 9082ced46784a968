//! Documents of a villa: the record, and the uploaded bytes kept in Postgres until the
//! document store holds them (ARCHITECTURE.md: workers may run on other machines than the API).

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::storage::{DocumentType, SafeName, StoragePath, document_path, villa_folder};
use crate::{Error, Result};

/// A document row (alias `d`) as JSON: the spec's fields, plus size, type, status of its way
/// to the store and expiry.
macro_rules! document_json {
    () => {
        "jsonb_build_object('id', d.id, 'villaId', d.villa_id, 'fileName', d.file_name, 'documentType', d.document_type,
            'title', d.title, 'mimeType', d.mime_type, 'fileSize', d.file_size,
            'fileUrl', '/api/documents/' || d.id || '/file', 'storageUrl', d.storage_url,
            'storageFileId', d.storage_file_id, 'storagePath', d.storage_path,
            'storageStatus', CASE WHEN d.storage_file_id IS NULL THEN 'PENDING' ELSE 'STORED' END,
            'expiryDate', d.expiry_date, 'createdAt', d.created_at, 'updatedAt', d.updated_at)"
    };
}

/// A document as `document_json!` renders it (the OpenAPI description of that JSON).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the JSON built in SQL
pub struct DocumentView {
    id: Uuid,
    villa_id: Uuid,
    /// The stored (sanitized) name.
    file_name: String,
    document_type: crate::storage::DocumentType,
    title: Option<String>,
    mime_type: String,
    file_size: i64,
    /// This API's route serving the bytes, whether or not they reached the store yet.
    file_url: String,
    storage_url: Option<String>,
    storage_file_id: Option<String>,
    /// Where the file is (or will be) in the document store.
    storage_path: String,
    storage_status: StorageStatus,
    expiry_date: Option<chrono::NaiveDate>,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

/// Whether an upload has reached the document store.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub enum StorageStatus {
    /// Accepted and kept in the database; the documents worker has not stored it yet.
    #[schema(rename = "PENDING")]
    Pending,
    #[schema(rename = "STORED")]
    Stored,
}

/// How an upload transaction holds its villa.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VillaLock {
    /// No row lock unless the folder is still to be fixed: uploads of one villa do not queue
    /// behind each other or behind edits of the villa.
    Shared,
    /// `FOR NO KEY UPDATE` on the villa for the rest of the transaction: an upload that changes
    /// the villa's single cover photo, so such changes apply one after the other.
    Exclusive,
}

/// The villa's folder, fixed on first use: computed from its code and id, then stored.
///
/// **The first statement of every upload transaction** (documents, photos, field notes), before
/// any job row is written: this is the only villa row lock an upload takes, so taking it first
/// gives every upload path the same lock order (villa row, then the folder-tree job's dedupe
/// key). A photo upload that wrote its tree job first deadlocked with a document upload that
/// had fixed the folder first (issue 16). A racing first upload keeps whichever value was
/// stored first.
pub async fn ensure_villa_folder(
    conn: &mut PgConnection,
    villa_id: Uuid,
    lock: VillaLock,
) -> Result<StoragePath> {
    let read = match lock {
        VillaLock::Shared => "SELECT villa_code, storage_folder FROM villas WHERE id = $1",
        VillaLock::Exclusive => {
            "SELECT villa_code, storage_folder FROM villas WHERE id = $1 FOR NO KEY UPDATE"
        }
    };
    let (code, stored): (String, Option<String>) = sqlx::query_as(read)
        .bind(villa_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("villa"))?;
    if let Some(path) = stored.as_deref().and_then(StoragePath::from_stored) {
        return Ok(path);
    }
    let fixed: String = sqlx::query_scalar(
        "UPDATE villas SET storage_folder = coalesce(storage_folder, $2) WHERE id = $1 RETURNING storage_folder",
    )
    .bind(villa_id)
    .bind(villa_folder(&code, villa_id).as_str())
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("villa"))?;
    StoragePath::from_stored(&fixed).ok_or_else(|| {
        Error::Internal(anyhow::anyhow!(
            "villa {villa_id} has a malformed storage folder {fixed:?}"
        ))
    })
}

/// A validated upload to record.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub villa_id: Uuid,
    pub document_type: DocumentType,
    pub file_name: SafeName,
    pub title: Option<String>,
    pub mime_type: String,
    pub content: Vec<u8>,
}

/// Records the upload with its bytes and final storage path; returns (id, storage path). A
/// second file of the same name in the same folder gets a suffix from the record's id before its
/// extension instead of replacing the first ([`SafeName::candidates`]). Fixes the villa's folder
/// first ([`ensure_villa_folder`]): call it before writing any job row.
pub async fn insert_pending(
    conn: &mut PgConnection,
    doc: &NewDocument,
) -> Result<(Uuid, StoragePath)> {
    let folder = ensure_villa_folder(conn, doc.villa_id, VillaLock::Shared).await?;
    let id = Uuid::now_v7();
    for name in doc.file_name.candidates(id) {
        let path = document_path(&folder, doc.document_type, &name);
        let inserted = sqlx::query(
            "INSERT INTO documents (id, villa_id, document_type, title, file_name, mime_type, file_size, storage_path, pending_content)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(doc.villa_id)
        .bind(doc.document_type.as_str())
        .bind(&doc.title)
        .bind(doc.file_name.as_str())
        .bind(&doc.mime_type)
        .bind(i64::try_from(doc.content.len()).unwrap_or(i64::MAX))
        .bind(path.as_str())
        .bind(&doc.content)
        .execute(&mut *conn)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok((id, path));
        }
    }
    // The last candidate carries the whole (unique) id: only a broken invariant gets here.
    Err(Error::Internal(anyhow::anyhow!(
        "no free storage name for upload {id} ({})",
        doc.file_name
    )))
}

/// A document as the onboarding API shows it.
pub async fn view(conn: &mut PgConnection, id: Uuid) -> Result<Option<serde_json::Value>> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT ",
        document_json!(),
        " FROM documents d WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?)
}

/// The villa's documents, newest first.
pub async fn of_villa(conn: &mut PgConnection, villa_id: Uuid) -> Result<Vec<serde_json::Value>> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT ",
        document_json!(),
        " FROM documents d WHERE villa_id = $1 ORDER BY created_at DESC, id DESC"
    ))
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// The document's bytes: from the database while the store does not have them yet, else from
/// the store. Returns (file name, mime type, bytes or storage path to read).
pub async fn content(pool: &PgPool, id: Uuid) -> Result<Option<StoredContent>> {
    Ok(sqlx::query_as(
        "SELECT file_name, mime_type, storage_path, pending_content FROM documents WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// Where an uploaded file's bytes are right now.
#[derive(Debug, sqlx::FromRow)]
pub struct StoredContent {
    pub file_name: String,
    pub mime_type: String,
    pub storage_path: String,
    /// Present until the worker has put the file in the store.
    pub pending_content: Option<Vec<u8>>,
}

/// What the upload job needs of a document still waiting for the store.
#[derive(Debug, sqlx::FromRow)]
pub struct PendingDocument {
    pub villa_id: Uuid,
    pub storage_path: String,
    pub pending_content: Option<Vec<u8>>,
    /// The villa's tree exists in the store (set by the folder-tree job).
    pub tree_ready: bool,
}

pub async fn pending(pool: &PgPool, id: Uuid) -> Result<Option<PendingDocument>> {
    Ok(sqlx::query_as(
        "SELECT d.villa_id, d.storage_path, d.pending_content, v.storage_base_path IS NOT NULL AS tree_ready
         FROM documents d JOIN villas v ON v.id = d.villa_id WHERE d.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// Whether a document, photo or field note records `path` (in any letter case, as SharePoint
/// compares names): a file there is a live record's, not a deleted one's.
pub async fn storage_path_in_use(pool: &PgPool, path: &StoragePath) -> Result<bool> {
    Ok(sqlx::query_scalar(
        // Each table's two partial indexes on lower(storage_path) (migration 0014) answer it.
        "SELECT EXISTS (SELECT 1 FROM documents WHERE lower(storage_path) = lower($1) AND NOT legacy_case_twin)
             OR EXISTS (SELECT 1 FROM documents WHERE lower(storage_path) = lower($1) AND legacy_case_twin)
             OR EXISTS (SELECT 1 FROM photos WHERE lower(storage_path) = lower($1) AND NOT legacy_case_twin)
             OR EXISTS (SELECT 1 FROM photos WHERE lower(storage_path) = lower($1) AND legacy_case_twin)
             OR EXISTS (SELECT 1 FROM field_notes WHERE lower(storage_path) = lower($1) AND NOT legacy_case_twin)
             OR EXISTS (SELECT 1 FROM field_notes WHERE lower(storage_path) = lower($1) AND legacy_case_twin)",
    )
    .bind(path.as_str())
    .fetch_one(pool)
    .await?)
}

/// The store holds the bytes now: record where, and drop the database's copy. `false` when the
/// document was deleted meanwhile (the caller removes what it stored).
pub async fn mark_stored(
    pool: &PgPool,
    id: Uuid,
    stored: &crate::storage::StoredObject,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE documents SET storage_file_id = $2, storage_url = $3, storage_etag = $4, pending_content = NULL, updated_at = now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(&stored.file_id)
    .bind(&stored.url)
    .bind(&stored.etag)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The folder-tree job's view of a villa: its folder, if one was fixed.
pub async fn villa_storage_folder(pool: &PgPool, villa_id: Uuid) -> Result<Option<StoragePath>> {
    let stored: Option<Option<String>> =
        sqlx::query_scalar("SELECT storage_folder FROM villas WHERE id = $1")
            .bind(villa_id)
            .fetch_optional(pool)
            .await?;
    Ok(stored
        .flatten()
        .as_deref()
        .and_then(StoragePath::from_stored))
}

pub async fn set_storage_base_path(
    pool: &PgPool,
    villa_id: Uuid,
    path: &StoragePath,
) -> Result<()> {
    sqlx::query("UPDATE villas SET storage_base_path = $2, updated_at = now() WHERE id = $1")
        .bind(villa_id)
        .bind(path.as_str())
        .execute(pool)
        .await?;
    Ok(())
}

/// A page of the villa's documents, newest first, and their total; `NotFound` when there is no
/// such villa.
pub async fn page_of_villa(
    conn: &mut PgConnection,
    villa_id: Uuid,
    page: crate::pagination::PageRequest,
) -> Result<(Vec<serde_json::Value>, i64)> {
    crate::management::villas::ensure_exists(conn, villa_id).await?;
    let rows = sqlx::query_scalar(concat!(
        "SELECT ",
        document_json!(),
        " FROM documents d WHERE villa_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
    ))
    .bind(villa_id)
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(&mut *conn)
    .await?;
    let total = sqlx::query_scalar("SELECT count(*) FROM documents WHERE villa_id = $1")
        .bind(villa_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok((rows, total))
}

/// Deletes the document's record; returns its storage path when the document store may hold
/// the file (for the caller to enqueue its removal).
pub async fn delete(conn: &mut PgConnection, id: Uuid) -> Result<String> {
    sqlx::query_scalar("DELETE FROM documents WHERE id = $1 RETURNING storage_path")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("document"))
}
