//! Field notes: a technician's text, voice note or photo about a work order or an asset. Files are
//! checked by their content, kept in the database with the record until the documents worker has
//! put them in the villa's `Maintenance/Field-Notes/` folder, and served by this API either way.

use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::pagination::{JsonPage, ListSql, json_page};
use crate::storage::{SafeName, field_notes_folder};
use crate::{Error, Result};

pub const TYPES: &[&str] = &["TEXT", "VOICE", "PHOTO"];

/// The audio a VOICE note may be, by its first bytes: MP3 (an ID3 tag or an MPEG frame), M4A/AAC
/// (an MP4 `ftyp` box, or an ADTS frame), Ogg, WAV, WebM.
pub fn audio_type(bytes: &[u8]) -> Option<&'static str> {
    let starts = |prefix: &[u8]| bytes.starts_with(prefix);
    if starts(b"ID3") || (bytes.len() > 2 && bytes[0] == 0xFF && bytes[1] & 0xE6 == 0xE2) {
        Some("audio/mpeg")
    } else if bytes.len() > 12 && &bytes[4..8] == b"ftyp" {
        Some("audio/mp4")
    } else if bytes.len() > 2 && bytes[0] == 0xFF && bytes[1] & 0xF6 == 0xF0 {
        Some("audio/aac")
    } else if starts(b"OggS") {
        Some("audio/ogg")
    } else if bytes.len() > 12 && starts(b"RIFF") && &bytes[8..12] == b"WAVE" {
        Some("audio/wav")
    } else if starts(&[0x1A, 0x45, 0xDF, 0xA3]) {
        Some("audio/webm")
    } else {
        None
    }
}

/// The image types a PHOTO note may be.
pub const PHOTO_TYPES: &[&str] = &["image/jpeg", "image/png", "image/webp"];

/// A checked note.
#[derive(Debug, Clone)]
pub struct NewFieldNote {
    pub kind: &'static str,
    pub content: Option<String>,
    pub work_order_id: Option<Uuid>,
    pub asset_id: Option<Uuid>,
    /// Name, type (read from the bytes) and bytes, for VOICE and PHOTO.
    pub file: Option<(SafeName, &'static str, Vec<u8>)>,
}

/// The villa a note belongs to: its work order's (404 `WORK_ORDER_NOT_FOUND`) or its asset's
/// (404 `ASSET_NOT_FOUND`); with both, they must be of one villa (400 on `assetId`).
async fn villa_of(conn: &mut PgConnection, note: &NewFieldNote) -> Result<Uuid> {
    let from_order = match note.work_order_id {
        Some(id) => Some(
            sqlx::query_scalar::<_, Uuid>("SELECT villa_id FROM work_orders WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?
                .ok_or(Error::NotFound("work order"))?,
        ),
        None => None,
    };
    let from_asset = match note.asset_id {
        Some(id) => Some(
            sqlx::query_scalar::<_, Uuid>("SELECT villa_id FROM assets WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?
                .ok_or(Error::NotFound("asset"))?,
        ),
        None => None,
    };
    match (from_order, from_asset) {
        (Some(a), Some(b)) if a != b => Err(Error::invalid(
            "assetId",
            "invalid_value",
            "the asset is of another villa than the work order",
        )),
        (Some(v), _) | (None, Some(v)) => Ok(v),
        (None, None) => Err(Error::invalid(
            "workOrderId",
            "required",
            "workOrderId or assetId is required",
        )),
    }
}

/// Records the note, with its file's bytes and final storage path when it has one (a second
/// file of one name gets a suffix, as uploads do). Returns its id.
pub async fn insert(conn: &mut PgConnection, note: &NewFieldNote, by: &str) -> Result<Uuid> {
    let villa = villa_of(conn, note).await?;
    let id = Uuid::now_v7();
    let Some((name, mime, bytes)) = &note.file else {
        sqlx::query(
            "INSERT INTO field_notes (id, villa_id, work_order_id, asset_id, type, content, created_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id)
        .bind(villa)
        .bind(note.work_order_id)
        .bind(note.asset_id)
        .bind(note.kind)
        .bind(&note.content)
        .bind(by)
        .execute(&mut *conn)
        .await?;
        return Ok(id);
    };
    let folder = field_notes_folder(
        &crate::management::documents::ensure_villa_folder(
            conn,
            villa,
            crate::management::documents::VillaLock::Shared,
        )
        .await?,
    );
    for candidate in name.candidates(id) {
        let path = folder.child(&candidate);
        let inserted = sqlx::query(
            "INSERT INTO field_notes (id, villa_id, work_order_id, asset_id, type, content, file_name, mime_type,
                                      file_size, storage_path, pending_content, created_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(villa)
        .bind(note.work_order_id)
        .bind(note.asset_id)
        .bind(note.kind)
        .bind(&note.content)
        .bind(name.as_str())
        .bind(*mime)
        .bind(i64::try_from(bytes.len()).unwrap_or(i64::MAX))
        .bind(path.as_str())
        .bind(bytes)
        .bind(by)
        .execute(&mut *conn)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(id);
        }
    }
    // The last candidate carries the whole (unique) id: only a broken invariant gets here.
    Err(Error::Internal(anyhow::anyhow!(
        "no free storage name for field note {id} ({name})"
    )))
}

macro_rules! note_json {
    () => {
        "jsonb_build_object('id', n.id, 'type', n.type, 'content', n.content, 'villaId', n.villa_id,
            'workOrderId', n.work_order_id, 'assetId', n.asset_id, 'fileName', n.file_name, 'mimeType', n.mime_type,
            'fileSize', n.file_size, 'storagePath', n.storage_path,
            'fileUrl', CASE WHEN n.storage_path IS NULL THEN NULL ELSE '/maintenance/field-notes/' || n.id || '/file' END,
            'storageStatus', CASE WHEN n.storage_path IS NULL THEN NULL WHEN n.storage_file_id IS NULL THEN 'PENDING' ELSE 'STORED' END,
            'storageUrl', n.storage_url, 'createdBy', n.created_by, 'createdAt', n.created_at)"
    };
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        note_json!(),
        " FROM field_notes n WHERE n.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("field note"))
}

/// A page of notes, newest first, of a work order and/or an asset when given.
pub async fn list(
    conn: &mut PgConnection,
    work_order: Option<Uuid>,
    asset: Option<Uuid>,
    page: crate::pagination::PageRequest,
) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM field_notes n",
        item: note_json!(),
        from: " FROM field_notes n",
        order: "n.created_at DESC, n.id DESC",
    };
    json_page(conn, &list, page, |sql| {
        sql.push(" WHERE true");
        if let Some(work_order) = work_order {
            sql.push(" AND n.work_order_id = ").push_bind(work_order);
        }
        if let Some(asset) = asset {
            sql.push(" AND n.asset_id = ").push_bind(asset);
        }
    })
    .await
}

/// A note's file as the bytes route serves it (`None`: no such note, or a TEXT note).
pub async fn content(
    pool: &PgPool,
    id: Uuid,
) -> Result<Option<crate::management::documents::StoredContent>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        file_name: Option<String>,
        mime_type: Option<String>,
        storage_path: Option<String>,
        pending_content: Option<Vec<u8>>,
    }
    let row: Option<Row> = sqlx::query_as(
        "SELECT file_name, mime_type, storage_path, pending_content FROM field_notes WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?;
    Ok(row.and_then(|r| {
        Some(crate::management::documents::StoredContent {
            file_name: r.file_name?,
            mime_type: r.mime_type?,
            storage_path: r.storage_path?,
            pending_content: r.pending_content,
        })
    }))
}

/// What the storage job needs of a note whose file waits for the store.
#[derive(Debug, sqlx::FromRow)]
pub struct PendingNote {
    pub villa_id: Uuid,
    pub storage_path: Option<String>,
    pub pending_content: Option<Vec<u8>>,
    pub tree_ready: bool,
}

pub async fn pending(pool: &PgPool, id: Uuid) -> Result<Option<PendingNote>> {
    Ok(sqlx::query_as(
        "SELECT n.villa_id, n.storage_path, n.pending_content, v.storage_base_path IS NOT NULL AS tree_ready
         FROM field_notes n JOIN villas v ON v.id = n.villa_id WHERE n.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// The store holds the file now: record where, and drop the database's copy.
pub async fn mark_stored(
    pool: &PgPool,
    id: Uuid,
    stored: &crate::storage::StoredObject,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE field_notes SET storage_file_id = $2, storage_url = $3, storage_etag = $4, pending_content = NULL WHERE id = $1",
    )
    .bind(id)
    .bind(&stored.file_id)
    .bind(&stored.url)
    .bind(&stored.etag)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::audio_type;

    #[test]
    fn audio_is_recognised_by_its_bytes() {
        assert_eq!(audio_type(b"ID3\x04\0\0\0\0"), Some("audio/mpeg"));
        assert_eq!(audio_type(&[0xFF, 0xFB, 0x90, 0x00]), Some("audio/mpeg"));
        assert_eq!(audio_type(b"\0\0\0\x20ftypM4A \0\0\0\0"), Some("audio/mp4"));
        assert_eq!(audio_type(&[0xFF, 0xF1, 0x50, 0x80]), Some("audio/aac"));
        assert_eq!(audio_type(b"OggS\0\x02"), Some("audio/ogg"));
        assert_eq!(audio_type(b"RIFF\x24\0\0\0WAVEfmt "), Some("audio/wav"));
        assert_eq!(
            audio_type(&[0x1A, 0x45, 0xDF, 0xA3, 0x01]),
            Some("audio/webm")
        );
        assert_eq!(audio_type(b"%PDF-1.7"), None);
        assert_eq!(audio_type(b""), None);
    }
}
