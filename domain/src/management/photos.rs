//! Photos of a villa: the record, the uploaded bytes kept in Postgres until the document store
//! holds them, and the thumbnail a worker makes (kept in Postgres: it is small and served often).

use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::management::documents::StoredContent;
use crate::storage::{PhotoCategory, SafeName, StoragePath, photo_folder};
use crate::{Error, Result};

/// A photo row (alias `p`) as JSON. `storageLocation` says where the full-size bytes are now:
/// `database` until the worker has stored them, then `document_store`.
macro_rules! photo_json {
    () => {
        "jsonb_build_object('id', p.id, 'villaId', p.villa_id, 'fileName', p.file_name, 'category', p.category,
            'subfolder', p.subfolder, 'mimeType', p.mime_type, 'fileSize', p.file_size,
            'fileUrl', '/api/photos-enhanced/public/' || p.id,
            'thumbnailUrl', CASE WHEN p.thumbnail_content IS NULL THEN NULL ELSE '/api/photos-enhanced/thumbnail/' || p.id END,
            'storageUrl', p.storage_url, 'storageFileId', p.storage_file_id, 'storagePath', p.storage_path,
            'storageLocation', CASE WHEN p.storage_file_id IS NULL THEN 'database' ELSE 'document_store' END,
            'width', p.width, 'height', p.height, 'caption', p.caption, 'altText', p.alt_text,
            'isMain', p.is_main, 'isCover', p.is_cover, 'createdAt', p.created_at, 'updatedAt', p.updated_at)"
    };
}

/// A photo as `photo_json!` renders it (the OpenAPI description of that JSON).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the JSON built in SQL
pub struct PhotoView {
    id: Uuid,
    villa_id: Uuid,
    file_name: String,
    category: crate::storage::PhotoCategory,
    /// The bedroom's folder, for bedroom photos.
    subfolder: Option<String>,
    mime_type: String,
    file_size: i64,
    /// The public route serving the image.
    file_url: String,
    /// Set once the thumbnail is made.
    thumbnail_url: Option<String>,
    storage_url: Option<String>,
    storage_file_id: Option<String>,
    storage_path: String,
    /// `database` until the documents worker has stored it, then `document_store`.
    #[schema(pattern = "^(database|document_store)$")]
    storage_location: String,
    width: i32,
    height: i32,
    caption: Option<String>,
    alt_text: Option<String>,
    is_main: bool,
    is_cover: bool,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

/// A validated photo upload.
#[derive(Debug, Clone)]
pub struct NewPhoto {
    pub villa_id: Uuid,
    pub category: PhotoCategory,
    /// Only for bedrooms: the bedroom's folder.
    pub subfolder: Option<SafeName>,
    pub file_name: SafeName,
    /// Read from the bytes, not from the request.
    pub mime_type: &'static str,
    pub width: u32,
    pub height: u32,
    pub caption: Option<String>,
    pub alt_text: Option<String>,
    pub is_main: bool,
    /// Makes it the villa's only cover photo.
    pub is_cover: bool,
    pub content: Vec<u8>,
}

/// Records the photo with its bytes and final storage path in the villa's folder `villa` (from
/// [`ensure_villa_folder`], the transaction's first statement, with [`VillaLock::Exclusive`]
/// when any photo of the upload is a cover); a main photo stops the villa's previous main photo
/// from being main. Returns the id.
pub async fn insert_pending(
    conn: &mut PgConnection,
    villa: &StoragePath,
    photo: &NewPhoto,
) -> Result<Uuid> {
    let folder = photo_folder(villa, photo.category, photo.subfolder.as_ref());
    let id = Uuid::now_v7();
    if photo.is_cover {
        unset_cover(conn, photo.villa_id).await?;
    }
    if photo.is_main {
        sqlx::query(
            "UPDATE photos SET is_main = false, updated_at = now() WHERE villa_id = $1 AND is_main",
        )
        .bind(photo.villa_id)
        .execute(&mut *conn)
        .await?;
    }
    for name in photo.file_name.candidates(id) {
        let path = folder.child(&name);
        let inserted = sqlx::query(
            "INSERT INTO photos (id, villa_id, category, subfolder, file_name, mime_type, file_size, width, height,
                                 caption, alt_text, is_main, storage_path, pending_content, is_cover)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
             ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(photo.villa_id)
        .bind(photo.category.as_str())
        .bind(photo.subfolder.as_ref().map(SafeName::as_str))
        .bind(photo.file_name.as_str())
        .bind(photo.mime_type)
        .bind(i64::try_from(photo.content.len()).unwrap_or(i64::MAX))
        .bind(i32::try_from(photo.width).unwrap_or(i32::MAX))
        .bind(i32::try_from(photo.height).unwrap_or(i32::MAX))
        .bind(&photo.caption)
        .bind(&photo.alt_text)
        .bind(photo.is_main)
        .bind(path.as_str())
        .bind(&photo.content)
        .bind(photo.is_cover)
        .execute(&mut *conn)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(id);
        }
    }
    // The last candidate carries the whole (unique) id: only a broken invariant gets here.
    Err(Error::Internal(anyhow::anyhow!(
        "no free storage name for upload {id} ({})",
        photo.file_name
    )))
}

/// Locks the villa (so that cover changes of one villa are applied one after the other; uploads
/// and edits, which take weaker locks, are not held up) and unsets its cover photo.
async fn unset_cover(conn: &mut PgConnection, villa_id: Uuid) -> Result<()> {
    let found: Option<bool> =
        sqlx::query_scalar("SELECT true FROM villas WHERE id = $1 FOR NO KEY UPDATE")
            .bind(villa_id)
            .fetch_optional(&mut *conn)
            .await?;
    if found.is_none() {
        return Err(Error::NotFound("villa"));
    }
    sqlx::query(
        "UPDATE photos SET is_cover = false, updated_at = now() WHERE villa_id = $1 AND is_cover",
    )
    .bind(villa_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Makes the photo its villa's only cover photo (inside the caller's transaction); returns it.
pub async fn set_cover(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    let villa_id: Uuid = sqlx::query_scalar("SELECT villa_id FROM photos WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("photo"))?;
    unset_cover(conn, villa_id).await?;
    sqlx::query("UPDATE photos SET is_cover = true, updated_at = now() WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    view(conn, id).await?.ok_or(Error::NotFound("photo"))
}

/// A page of the villa's photos (cover first, then by category and order) and their total.
pub async fn page_of_villa(
    conn: &mut PgConnection,
    villa_id: Uuid,
    page: crate::pagination::PageRequest,
) -> Result<(Vec<Value>, i64)> {
    crate::management::villas::ensure_exists(conn, villa_id).await?;
    let rows = sqlx::query_scalar(concat!(
        "SELECT ",
        photo_json!(),
        " FROM photos p WHERE villa_id = $1
          ORDER BY is_cover DESC, category, sort_order, created_at, id LIMIT $2 OFFSET $3"
    ))
    .bind(villa_id)
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(&mut *conn)
    .await?;
    let total = sqlx::query_scalar("SELECT count(*) FROM photos WHERE villa_id = $1")
        .bind(villa_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok((rows, total))
}

pub async fn view(conn: &mut PgConnection, id: Uuid) -> Result<Option<Value>> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT ",
        photo_json!(),
        " FROM photos p WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?)
}

pub async fn of_villa(conn: &mut PgConnection, villa_id: Uuid) -> Result<Vec<Value>> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT ",
        photo_json!(),
        " FROM photos p WHERE villa_id = $1 ORDER BY category, sort_order, created_at, id"
    ))
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// What the photo jobs need.
#[derive(Debug, sqlx::FromRow)]
pub struct PendingPhoto {
    pub villa_id: Uuid,
    pub storage_path: String,
    pub pending_content: Option<Vec<u8>>,
    pub has_thumbnail: bool,
    pub tree_ready: bool,
}

pub async fn pending(pool: &PgPool, id: Uuid) -> Result<Option<PendingPhoto>> {
    Ok(sqlx::query_as(
        "SELECT p.villa_id, p.storage_path, p.pending_content, p.thumbnail_content IS NOT NULL AS has_thumbnail,
                v.storage_base_path IS NOT NULL AS tree_ready
         FROM photos p JOIN villas v ON v.id = p.villa_id WHERE p.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// The store holds the photo: record where. The database's copy is dropped only once the
/// thumbnail exists too (the thumbnail job reads it), see [`set_thumbnail`].
pub async fn mark_stored(
    pool: &PgPool,
    id: Uuid,
    stored: &crate::storage::StoredObject,
) -> Result<()> {
    sqlx::query(
        "UPDATE photos SET storage_file_id = $2, storage_url = $3, storage_etag = $4, updated_at = now(),
             pending_content = CASE WHEN thumbnail_content IS NULL THEN pending_content END
         WHERE id = $1",
    )
    .bind(id)
    .bind(&stored.file_id)
    .bind(&stored.url)
    .bind(&stored.etag)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records the thumbnail and the dimensions read from the decoded image; drops the database's
/// copy of the photo when the store already has it.
pub async fn set_thumbnail(
    pool: &PgPool,
    id: Uuid,
    thumbnail: &[u8],
    width: u32,
    height: u32,
) -> Result<()> {
    sqlx::query(
        "UPDATE photos SET thumbnail_content = $2, thumbnail_mime = 'image/jpeg', width = $3, height = $4,
             pending_content = CASE WHEN storage_file_id IS NULL THEN pending_content END, updated_at = now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(thumbnail)
    .bind(i32::try_from(width).unwrap_or(i32::MAX))
    .bind(i32::try_from(height).unwrap_or(i32::MAX))
    .execute(pool)
    .await?;
    Ok(())
}

/// The photo's bytes: from the database while it has them, else from the store.
pub async fn content(pool: &PgPool, id: Uuid) -> Result<Option<StoredContent>> {
    Ok(sqlx::query_as(
        "SELECT file_name, mime_type, storage_path, pending_content FROM photos WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// The thumbnail's bytes and type, once made.
pub async fn thumbnail(pool: &PgPool, id: Uuid) -> Result<Option<(Vec<u8>, String)>> {
    let row: Option<(Option<Vec<u8>>, Option<String>)> =
        sqlx::query_as("SELECT thumbnail_content, thumbnail_mime FROM photos WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await?;
    Ok(row.and_then(|(t, m)| Some((t?, m.unwrap_or_else(|| "image/jpeg".into())))))
}

/// Parses a stored photo path (for the jobs).
pub fn stored_path(p: &PendingPhoto) -> Option<StoragePath> {
    StoragePath::from_stored(&p.storage_path)
}
