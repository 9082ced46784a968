//! Accepting an upload, whichever surface it came through (onboarding's base64 JSON, management's
//! multipart): the record and its bytes are written to Postgres and the storage jobs enqueued in
//! one transaction, then pushed to their queues. The answer does not wait for the document store.

use domain::management::{
    documents::{self, NewDocument, VillaLock},
    photos::{self, NewPhoto},
};
use jobs::{
    Job,
    documents::{CreateVillaTree, StoreDocument, StorePhoto},
    media::MakeThumbnail,
};
use serde_json::Value;

use crate::{
    error::{AppError, retry_transient},
    state::AppState,
};

/// Records the document and hands it to the documents worker (which first creates the villa's
/// folder tree, once). Returns the document's record. The transaction runs again if Postgres
/// broke a deadlock with another upload of the same new villa.
pub async fn accept_document(state: &AppState, doc: NewDocument) -> Result<Value, AppError> {
    let villa_id = doc.villa_id;
    let (view, jobs) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        // Fixes the villa's folder before any job row: the one lock order of every upload.
        let (id, _) = documents::insert_pending(&mut tx, &doc).await?;
        let tree = CreateVillaTree { villa_id }.enqueue(&mut tx).await?;
        let store = StoreDocument { document_id: id }.enqueue(&mut tx).await?;
        let view = documents::view(&mut tx, id)
            .await?
            .ok_or(AppError::NotFound("document"))?;
        tx.commit().await?;
        Ok((view, vec![tree, store]))
    })
    .await?;
    drop(doc);
    state.queues.push_in_background(jobs);
    Ok(view)
}

/// Records the photos of one villa together (all or none) and hands each to the documents worker
/// (storage) and the media worker (thumbnail). Returns their records in the order given.
pub async fn accept_photos(
    state: &AppState,
    villa_id: uuid::Uuid,
    batch: Vec<NewPhoto>,
) -> Result<Vec<Value>, AppError> {
    // A cover change locks the villa so that cover changes apply one after the other.
    let lock = if batch.iter().any(|p| p.is_cover) {
        VillaLock::Exclusive
    } else {
        VillaLock::Shared
    };
    let (views, jobs) = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        // First, before any job row: the one lock order of every upload (see ensure_villa_folder).
        let folder = documents::ensure_villa_folder(&mut tx, villa_id, lock).await?;
        let mut jobs = jobs::JobBatch::default();
        jobs.add(&CreateVillaTree { villa_id })?;
        let mut ids = Vec::with_capacity(batch.len());
        for photo in &batch {
            debug_assert_eq!(photo.villa_id, villa_id);
            let id = photos::insert_pending(&mut tx, &folder, photo).await?;
            jobs.add(&StorePhoto { photo_id: id })?;
            jobs.add(&MakeThumbnail { photo_id: id })?;
            ids.push(id);
        }
        // Every photo's two jobs and the folder's in one statement.
        let jobs = jobs.enqueue(&mut tx).await?;
        let mut views = Vec::with_capacity(ids.len());
        for id in ids {
            views.push(
                photos::view(&mut tx, id)
                    .await?
                    .ok_or(AppError::NotFound("photo"))?,
            );
        }
        tx.commit().await?;
        Ok((views, jobs))
    })
    .await?;
    drop(batch);
    state.queues.push_in_background(jobs);
    Ok(views)
}

/// One file part of a multipart form.
pub struct FilePart {
    /// The form field it came in (`file`, `photos`).
    pub field: String,
    /// The client's file name, before sanitizing.
    pub file_name: Option<String>,
    pub content_type: Option<String>,
    /// `None` when the part was larger than allowed (its bytes were not kept).
    pub bytes: Option<Vec<u8>>,
}

/// A multipart form read part by part: files under the expected field names, each into one
/// buffer of at most the upload limit; short text fields.
pub struct Form {
    pub files: Vec<FilePart>,
    pub texts: std::collections::HashMap<String, String>,
}

/// Longest text field of an upload form.
const MAX_TEXT_PART: usize = 10 * 1024;

impl Form {
    /// Reads the form. Parts named in `file_fields` are files (at most `max_files` of them, each
    /// at most `max_file` bytes, else recorded in `problems`); other parts are text.
    pub async fn read(
        multipart: &mut axum::extract::Multipart,
        file_fields: &[&str],
        max_files: usize,
        max_file: usize,
        problems: &mut domain::Problems,
    ) -> Result<Form, AppError> {
        use crate::extract::{multipart_error, read_part};
        let mut form = Form {
            files: Vec::new(),
            texts: std::collections::HashMap::new(),
        };
        while let Some(mut part) = multipart.next_field().await.map_err(multipart_error)? {
            let name = part.name().unwrap_or_default().to_owned();
            if file_fields.contains(&name.as_str()) {
                if form.files.len() == max_files {
                    problems.push(
                        name,
                        "too_many",
                        format!("at most {max_files} file(s) per request"),
                    );
                    continue;
                }
                let file_name = part.file_name().map(str::to_owned);
                let content_type = part.content_type().map(str::to_owned);
                let bytes = read_part(&mut part, max_file).await?;
                form.files.push(FilePart {
                    field: name,
                    file_name,
                    content_type,
                    bytes,
                });
            } else {
                match read_part(&mut part, MAX_TEXT_PART).await? {
                    Some(bytes) => match String::from_utf8(bytes) {
                        Ok(text) if text.contains('\0') => {
                            problems.push(name, "invalid_character", crate::extract::NUL_MESSAGE)
                        }
                        Ok(text) => {
                            form.texts.insert(name, text);
                        }
                        Err(_) => problems.push(name, "invalid_format", "must be UTF-8 text"),
                    },
                    None => {
                        problems.push(name, "too_long", format!("at most {MAX_TEXT_PART} bytes"))
                    }
                }
            }
        }
        Ok(form)
    }

    /// A trimmed text field; empty counts as absent.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.texts
            .get(name)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
    }

    /// A `true`/`false` text field, `false` when absent.
    pub fn flag(&self, name: &str, problems: &mut domain::Problems) -> bool {
        match self.text(name).map(str::to_ascii_lowercase).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => {
                problems.push(
                    name,
                    "invalid_type",
                    format!("{name} must be true or false"),
                );
                false
            }
        }
    }
}

impl FilePart {
    /// The file's name as stored (sanitized), its bytes (non-empty, within `max`), each failure
    /// recorded on `label` (`file`, `photos[2]`).
    pub fn checked(
        self,
        label: &str,
        max: usize,
        problems: &mut domain::Problems,
    ) -> Option<(domain::storage::SafeName, Option<String>, Vec<u8>)> {
        let name = match self.file_name.as_deref().map(str::trim) {
            Some(n) if !n.is_empty() => problems.check(domain::storage::SafeName::parse(label, n)),
            _ => {
                problems.push(label, "required", "the file part must carry a file name");
                None
            }
        };
        let bytes = match self.bytes {
            None => {
                problems.push(
                    label,
                    "too_large",
                    format!("the file must be at most {max} bytes"),
                );
                None
            }
            Some(b) if b.is_empty() => {
                problems.push(label, "required", "the file is empty");
                None
            }
            Some(b) => Some(b),
        };
        Some((name?, self.content_type, bytes?))
    }
}
