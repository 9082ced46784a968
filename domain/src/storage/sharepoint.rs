//! The SharePoint backend: one document library (`GRAPH_DRIVE_ID`) through Microsoft Graph v1.0,
//! as Microsoft's public documentation describes it.
//!
//! - **Sign-in**: app-only, the client-credentials grant: `POST {login}/{tenant}/oauth2/v2.0/token`
//!   (form `client_id`, `client_secret`, `scope=https://graph.microsoft.com/.default`,
//!   `grant_type=client_credentials`). The token is kept until [`TOKEN_MARGIN`] before its
//!   `expires_in`, one fetch at a time; a token Graph refuses (401) is dropped and one new one
//!   fetched for one more try.
//! - **Addressing**: by path, `{base}/drives/{drive}/root:/{path}:`, each segment
//!   percent-encoded (names with spaces and letters outside ASCII arrive intact).
//! - **Folders**: `POST .../children` with `@microsoft.graph.conflictBehavior: fail`; "already
//!   exists" (409) is success, so concurrent creators agree. A missing parent (404) has each
//!   ancestor created from the top, then the folder.
//! - **Files**: up to [`SIMPLE_UPLOAD_MAX`] in one `PUT .../content` (replaces); larger ones
//!   through an upload session (`createUploadSession` with `conflictBehavior: replace`), in
//!   fragments of [`FRAGMENT`] bytes (a multiple of 320 KiB, as the documentation requires) sent
//!   to the session's pre-authenticated `uploadUrl` without an `Authorization` header. A file on
//!   disk is read fragment by fragment, never whole. An upload whose folder is missing creates it
//!   and tries once more.
//! - **Reads**: `GET .../content`, which answers a redirect to a pre-authenticated download URL
//!   (reqwest follows it and drops the `Authorization` header when the host changes).
//! - **Throttling**: 429, or 503 with `Retry-After`, waits as asked and tries again, up to
//!   [`MAX_THROTTLED`] times and [`MAX_THROTTLE_WAIT`] in all: not a failure. Past that (or when
//!   one answer asks for more), the call ends with [`StorageError::Throttled`], which a job
//!   turns into a later run that uses up no attempt. Other 5xx and
//!   network failures are tried again [`MAX_RETRIES`] times with a backoff; then the call fails
//!   with [`StorageError::Backend`] and the job's own retries take over.
//!
//! `storageFileId` is the drive item's `id`, `storageUrl` its `webUrl`. The client secret and the
//! token never reach a log line, an error or a `Debug` output.

use std::fmt::{self, Write as _};
use std::io::SeekFrom;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::Utc;
use futures::{StreamExt, TryStreamExt};
use reqwest::header::{CONTENT_RANGE, CONTENT_TYPE, RETRY_AFTER};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use super::{ObjectStream, StorageError, StoragePath, StoredObject};
use crate::remote::{describe, jitter, parse_retry_after};
use crate::settings::GraphSettings;

/// The backend's name in errors.
const BACKEND: &str = "sharepoint";
/// The scope of an app-only token for Microsoft Graph.
pub const GRAPH_SCOPE: &str = "https://graph.microsoft.com/.default";
/// The largest file sent in one `PUT .../content` (the simple upload's documented limit, 4 MB);
/// larger ones go through an upload session.
pub const SIMPLE_UPLOAD_MAX: u64 = 4 * 1024 * 1024;
/// Upload-session fragments must be multiples of this (320 KiB).
pub const FRAGMENT_UNIT: usize = 320 * 1024;
/// The fragment sent per request: 10 × 320 KiB (3.2 MiB), well under the 60 MiB per request.
pub const FRAGMENT: usize = 10 * FRAGMENT_UNIT;
/// A token is renewed this long before Entra ID says it expires.
pub const TOKEN_MARGIN: Duration = Duration::from_secs(5 * 60);
/// How many throttled answers one request waits out.
pub const MAX_THROTTLED: u32 = 10;
/// How long one request waits out throttling in all.
pub const MAX_THROTTLE_WAIT: Duration = Duration::from_secs(120);
/// How long a read waits out throttling: it serves a client waiting on an HTTP request (whose
/// own timeout is `REQUEST_TIMEOUT_SECS`), who is better told when to come back (503 with
/// `Retry-After`) than kept waiting.
pub const READ_THROTTLE_WAIT: Duration = Duration::from_secs(10);
/// How many times a 5xx or a network failure is tried again.
pub const MAX_RETRIES: u32 = 3;
/// The first backoff after a failure; it doubles with each retry.
const RETRY_BASE: Duration = Duration::from_millis(500);
/// The first wait of a throttled answer that says no `Retry-After`.
const THROTTLE_BASE: Duration = Duration::from_secs(2);
/// The longest one backoff waits.
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// The longest a metadata request (token, folder, item, session) may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest one upload request (at most 4 MiB) may take.
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest a connection may stay silent; downloads have no total limit (a large file
/// streamed to a slow client takes its time), only this one.
const READ_TIMEOUT: Duration = Duration::from_secs(90);
/// How much of an error answer is kept in a message.
const MAX_REASON: usize = 300;
/// How many times an upload session may answer without moving forward.
const MAX_STALLS: u32 = 3;

const OP_CREATE_FOLDER: &str = "create folder";
const OP_PUT: &str = "put";
const OP_GET: &str = "get";
const OP_DELETE: &str = "delete";
const OP_DELETE_TREE: &str = "delete tree";
const OP_FOLDER_EXISTS: &str = "folder exists";

/// The SharePoint store. Cheap to clone: the clones share the HTTP client and the token.
#[derive(Clone)]
pub struct SharePointStore {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    tenant_id: String,
    client_id: String,
    client_secret: String,
    drive_id: String,
    /// `GRAPH_BASE_URL`, without a trailing `/`.
    base_url: String,
    /// `GRAPH_LOGIN_URL`, without a trailing `/`.
    login_url: String,
    /// The token in use; a tokio mutex so that one task fetches while the others wait.
    token: tokio::sync::Mutex<Option<Token>>,
}

struct Token {
    bearer: String,
    /// When to fetch a new one.
    renew_at: Instant,
}

impl fmt::Debug for SharePointStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharePointStore")
            .field("base_url", &self.inner.base_url)
            .field("drive_id", &self.inner.drive_id)
            .field("tenant_id", &self.inner.tenant_id)
            .field("client_id", &self.inner.client_id)
            .finish_non_exhaustive()
    }
}

fn backend(op: &'static str, path: &StoragePath, message: String) -> StorageError {
    StorageError::Backend {
        backend: BACKEND,
        op,
        path: path.to_string(),
        message,
    }
}

fn io(file: &Path, source: std::io::Error) -> StorageError {
    StorageError::Io {
        path: file.display().to_string(),
        source,
    }
}

/// What became of a folder creation.
#[derive(Debug, PartialEq, Eq)]
enum Made {
    /// Created now, or there already.
    Done,
    /// Its parent folder does not exist.
    ParentMissing,
}

/// How an answer is taken before the caller reads it.
#[derive(Debug, PartialEq, Eq)]
enum Class {
    /// For the caller to read (success or a refusal it interprets).
    Answer,
    /// Throttled: wait (as long as `Retry-After` says, when it does) and try again.
    Throttled(Option<Duration>),
    /// A server failure: try again after a backoff, a limited number of times.
    Failed,
}

fn classify(status: StatusCode, retry_after: Option<Duration>) -> Class {
    if status == StatusCode::TOO_MANY_REQUESTS {
        Class::Throttled(retry_after)
    } else if status == StatusCode::SERVICE_UNAVAILABLE && retry_after.is_some() {
        // SharePoint answers its throttling this way too.
        Class::Throttled(retry_after)
    } else if status.is_server_error() {
        Class::Failed
    } else {
        Class::Answer
    }
}

/// Where the bytes of an upload session come from.
enum Source<'a> {
    Memory(Bytes),
    File {
        file: tokio::fs::File,
        name: &'a Path,
    },
}

impl Source<'_> {
    /// The `len` bytes at `offset`.
    async fn read(
        &mut self,
        path: &StoragePath,
        offset: u64,
        len: usize,
    ) -> Result<Bytes, StorageError> {
        match self {
            Source::Memory(bytes) => {
                // A slice of the caller's bytes, not a copy.
                usize::try_from(offset)
                    .ok()
                    .and_then(|start| start.checked_add(len).map(|end| (start, end)))
                    .filter(|&(_, end)| end <= bytes.len())
                    .map(|(start, end)| bytes.slice(start..end))
                    .ok_or_else(|| {
                        backend(
                            OP_PUT,
                            path,
                            format!("the upload asked for bytes {offset}+{len}, past the end"),
                        )
                    })
            }
            Source::File { file, name } => {
                let name: &Path = name;
                let mut chunk = vec![0; len];
                let read = async {
                    file.seek(SeekFrom::Start(offset)).await?;
                    file.read_exact(&mut chunk).await
                }
                .await;
                read.map_err(|e| io(name, e))?;
                Ok(Bytes::from(chunk))
            }
        }
    }
}

impl SharePointStore {
    pub fn new(settings: &GraphSettings) -> SharePointStore {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(READ_TIMEOUT)
            .build()
            .unwrap_or_default();
        SharePointStore {
            inner: Arc::new(Inner {
                http,
                tenant_id: settings.tenant_id.clone(),
                client_id: settings.client_id.clone(),
                client_secret: settings.client_secret.clone(),
                drive_id: settings.drive_id.clone(),
                base_url: settings.base_url.trim_end_matches('/').to_owned(),
                login_url: settings.login_url.trim_end_matches('/').to_owned(),
                token: tokio::sync::Mutex::new(None),
            }),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Addresses

    fn drive_url(&self) -> String {
        format!(
            "{}/drives/{}",
            self.inner.base_url,
            encode(&self.inner.drive_id, id_char)
        )
    }

    /// The item at `path` followed by `suffix` (`":"` for the item itself, `":/content"`, …).
    fn item_url(&self, path: &str, suffix: &str) -> String {
        format!("{}/root:/{}{suffix}", self.drive_url(), encode_path(path))
    }

    /// Where a new child of the folder `parent` (`None`: the library's root) is posted.
    fn children_url(&self, parent: Option<&str>) -> String {
        match parent {
            Some(parent) => self.item_url(parent, ":/children"),
            None => format!("{}/root/children", self.drive_url()),
        }
    }

    fn token_url(&self) -> String {
        format!(
            "{}/{}/oauth2/v2.0/token",
            self.inner.login_url,
            encode(&self.inner.tenant_id, unreserved)
        )
    }

    // -----------------------------------------------------------------------------------------
    // The interface of every backend

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

    // -----------------------------------------------------------------------------------------
    // The steps

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
    async fn make_parent(&self, path: &StoragePath) -> Result<(), StorageError> {
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

    /// An upload session: opened, fed fragment by fragment, and cancelled when it fails (its
    /// bytes would otherwise wait on the server until the session expires).
    async fn upload(
        &self,
        path: &StoragePath,
        mut source: Source<'_>,
        total: u64,
    ) -> Result<StoredObject, StorageError> {
        let upload_url = self.open_session(path).await?;
        let uploaded = self
            .send_fragments(path, &upload_url, &mut source, total)
            .await;
        if uploaded.is_err() {
            let _ = self
                .inner
                .http
                .delete(&upload_url)
                .timeout(CALL_TIMEOUT)
                .send()
                .await;
        }
        uploaded
    }

    /// `createUploadSession` (replacing the item at the end); its `uploadUrl`.
    async fn open_session(&self, path: &StoragePath) -> Result<String, StorageError> {
        let url = self.item_url(path.as_str(), ":/createUploadSession");
        // The documented default is "fail": a retried upload must replace its first try.
        let body = json!({ "item": { "@microsoft.graph.conflictBehavior": "replace" } });
        let mut made_parent = false;
        loop {
            let response = self
                .call(OP_PUT, path, || {
                    self.inner.http.post(&url).json(&body).timeout(CALL_TIMEOUT)
                })
                .await?;
            match response.status() {
                status if status.is_success() => {
                    let session = read_json(OP_PUT, path, response).await?;
                    return session
                        .get("uploadUrl")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| {
                            backend(
                                OP_PUT,
                                path,
                                "the upload session has no uploadUrl".to_owned(),
                            )
                        });
                }
                StatusCode::NOT_FOUND if !made_parent => {
                    self.make_parent(path).await?;
                    made_parent = true;
                }
                _ => return Err(refused(OP_PUT, path, response).await),
            }
        }
    }

    /// The fragments, in order, each where the session says it expects the next bytes.
    async fn send_fragments(
        &self,
        path: &StoragePath,
        upload_url: &str,
        source: &mut Source<'_>,
        total: u64,
    ) -> Result<StoredObject, StorageError> {
        let mut offset = 0u64;
        let mut stalls = 0u32;
        loop {
            if offset >= total {
                return Err(backend(
                    OP_PUT,
                    path,
                    format!("the upload session took all {total} bytes but did not finish"),
                ));
            }
            let len = fragment_len(offset, total);
            let chunk = source.read(path, offset, len).await?;
            let range = content_range(offset, len, total);
            // The upload URL is pre-authenticated: no Authorization header (the documentation
            // warns that one may be refused with a 401).
            let response = self
                .execute(OP_PUT, path, None, || {
                    self.inner
                        .http
                        .put(upload_url)
                        .header(CONTENT_RANGE, range.as_str())
                        .body(chunk.clone())
                        .timeout(UPLOAD_TIMEOUT)
                })
                .await?;
            let next = match response.status() {
                StatusCode::OK | StatusCode::CREATED => return stored(path, response).await,
                StatusCode::ACCEPTED => {
                    let answer = read_json(OP_PUT, path, response).await?;
                    let sent = offset + u64::try_from(len).unwrap_or(0);
                    next_expected(&answer).unwrap_or(sent)
                }
                // Part of this range had already arrived (a retried fragment whose first try
                // reached the server): ask the session where to go on.
                StatusCode::RANGE_NOT_SATISFIABLE => self.session_next(path, upload_url).await?,
                _ => return Err(refused(OP_PUT, path, response).await),
            };
            if next > total {
                return Err(backend(
                    OP_PUT,
                    path,
                    format!("the upload session expects byte {next} of {total}"),
                ));
            }
            if next <= offset {
                stalls += 1;
                if stalls > MAX_STALLS {
                    return Err(backend(
                        OP_PUT,
                        path,
                        format!("the upload session keeps expecting byte {next}"),
                    ));
                }
            } else {
                stalls = 0;
            }
            offset = next;
        }
    }

    /// The next byte the upload session expects (`GET uploadUrl`).
    async fn session_next(
        &self,
        path: &StoragePath,
        upload_url: &str,
    ) -> Result<u64, StorageError> {
        let response = self
            .execute(OP_PUT, path, None, || {
                self.inner.http.get(upload_url).timeout(CALL_TIMEOUT)
            })
            .await?;
        if !response.status().is_success() {
            return Err(refused(OP_PUT, path, response).await);
        }
        let answer = read_json(OP_PUT, path, response).await?;
        next_expected(&answer).ok_or_else(|| {
            backend(
                OP_PUT,
                path,
                "the upload session lists no expected range".to_owned(),
            )
        })
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

    // -----------------------------------------------------------------------------------------
    // Requests

    /// One Graph request with the token; a 401 drops the token and tries once more with a new
    /// one (a token can be revoked before its time).
    async fn call<F>(
        &self,
        op: &'static str,
        path: &StoragePath,
        build: F,
    ) -> Result<Response, StorageError>
    where
        F: Fn() -> RequestBuilder,
    {
        let bearer = self.token(op, path).await?;
        let response = self
            .execute(op, path, Some(bearer.as_str()), &build)
            .await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        self.forget_token(&bearer).await;
        let bearer = self.token(op, path).await?;
        self.execute(op, path, Some(bearer.as_str()), &build).await
    }

    /// Sends the request `build` makes until it has an answer for the caller: throttling is
    /// waited out (within [`MAX_THROTTLED`] and [`MAX_THROTTLE_WAIT`]), failures tried again
    /// [`MAX_RETRIES`] times.
    async fn execute<F>(
        &self,
        op: &'static str,
        path: &StoragePath,
        bearer: Option<&str>,
        build: F,
    ) -> Result<Response, StorageError>
    where
        F: Fn() -> RequestBuilder,
    {
        let mut throttled = 0u32;
        let mut throttled_for = Duration::ZERO;
        let mut failures = 0u32;
        loop {
            let mut request = build();
            if let Some(bearer) = bearer {
                request = request.bearer_auth(bearer);
            }
            let (class, reason) = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| parse_retry_after(v, Utc::now()));
                    match classify(status, retry_after) {
                        Class::Answer => return Ok(response),
                        Class::Failed => {
                            let body = response.bytes().await.unwrap_or_default();
                            (Class::Failed, format!("{status}: {}", failure_text(&body)))
                        }
                        throttle => (throttle, status.to_string()),
                    }
                }
                Err(error) => (Class::Failed, describe(error)),
            };
            let wait = match class {
                Class::Throttled(asked) => {
                    let wait = asked.unwrap_or_else(|| backoff(THROTTLE_BASE, throttled, jitter()));
                    throttled += 1;
                    let waited = throttled_for.saturating_add(wait);
                    let budget = if op == OP_GET {
                        READ_THROTTLE_WAIT
                    } else {
                        MAX_THROTTLE_WAIT
                    };
                    if throttled > MAX_THROTTLED || waited > budget {
                        // Past what one call waits: the job comes back when Graph asks, without
                        // using up an attempt ([`StorageError::Throttled`]).
                        tracing::info!(
                            op,
                            %path,
                            %reason,
                            throttled,
                            ?wait,
                            "Microsoft Graph is still throttling; handing the wait to the job"
                        );
                        return Err(StorageError::Throttled {
                            backend: BACKEND,
                            op,
                            path: path.to_string(),
                            retry_after: wait,
                        });
                    }
                    throttled_for = waited;
                    tracing::info!(
                        op,
                        %path,
                        %reason,
                        ?wait,
                        "Microsoft Graph throttled a request; waiting as asked"
                    );
                    wait
                }
                _ if failures >= MAX_RETRIES => {
                    return Err(backend(
                        op,
                        path,
                        format!("{reason} (after {} tries)", failures + 1),
                    ));
                }
                _ => {
                    let wait = backoff(RETRY_BASE, failures, jitter());
                    failures += 1;
                    tracing::warn!(
                        op,
                        %path,
                        %reason,
                        retry = failures,
                        ?wait,
                        "Microsoft Graph request failed; retrying"
                    );
                    wait
                }
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// The token in use, fetched when there is none or it is about to expire.
    async fn token(&self, op: &'static str, path: &StoragePath) -> Result<String, StorageError> {
        let mut cached = self.inner.token.lock().await;
        if let Some(token) = cached.as_ref().filter(|t| Instant::now() < t.renew_at) {
            return Ok(token.bearer.clone());
        }
        let url = self.token_url();
        let form = form_encode(&[
            ("client_id", self.inner.client_id.as_str()),
            ("client_secret", self.inner.client_secret.as_str()),
            ("scope", GRAPH_SCOPE),
            ("grant_type", "client_credentials"),
        ]);
        let response = self
            .execute(op, path, None, || {
                self.inner
                    .http
                    .post(&url)
                    .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(form.clone())
                    .timeout(CALL_TIMEOUT)
            })
            .await?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| backend(op, path, format!("sign-in: {}", describe(e))))?;
        if !status.is_success() {
            return Err(backend(
                op,
                path,
                format!(
                    "sign-in to Microsoft Entra ID refused ({status}): {}",
                    failure_text(&body)
                ),
            ));
        }
        let (bearer, expires_in) = parse_token(&body).ok_or_else(|| {
            backend(
                op,
                path,
                "sign-in: the answer has no access_token and expires_in".to_owned(),
            )
        })?;
        *cached = Some(Token {
            bearer: bearer.clone(),
            renew_at: Instant::now() + keep_token_for(expires_in),
        });
        Ok(bearer)
    }

    /// Drops `bearer` if it is still the token in use (another task may have replaced it).
    async fn forget_token(&self, bearer: &str) {
        let mut cached = self.inner.token.lock().await;
        if cached.as_ref().is_some_and(|t| t.bearer == bearer) {
            *cached = None;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Answers

/// The item a successful upload answers, as the store's identifiers.
async fn stored(path: &StoragePath, response: Response) -> Result<StoredObject, StorageError> {
    let item = read_json(OP_PUT, path, response).await?;
    stored_object(&item)
        .ok_or_else(|| backend(OP_PUT, path, "the answer names no item id".to_owned()))
}

fn stored_object(item: &Value) -> Option<StoredObject> {
    let file_id = item.get("id").and_then(Value::as_str)?.to_owned();
    let url = item
        .get("webUrl")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let etag = item.get("eTag").and_then(Value::as_str).map(str::to_owned);
    Some(StoredObject { file_id, url, etag })
}

async fn read_json(
    op: &'static str,
    path: &StoragePath,
    response: Response,
) -> Result<Value, StorageError> {
    let body = response
        .bytes()
        .await
        .map_err(|e| backend(op, path, describe(e)))?;
    serde_json::from_slice(&body)
        .map_err(|_| backend(op, path, "the answer is not JSON".to_owned()))
}

/// An answer the operation cannot use, as an error with Graph's own words.
async fn refused(op: &'static str, path: &StoragePath, response: Response) -> StorageError {
    let status = response.status();
    let body = response.bytes().await.unwrap_or_default();
    backend(op, path, format!("{status}: {}", failure_text(&body)))
}

/// Graph's error `code` (`{"error": {"code": ...}}`).
fn error_code(body: &[u8]) -> Option<String> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    answer
        .pointer("/error/code")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// What an error answer says: Graph's `{"error": {"code", "message"}}`, Entra ID's
/// `{"error", "error_description"}` (its first line), else the start of the body.
fn failure_text(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(answer) => match answer.get("error") {
            Some(Value::Object(error)) => {
                let code = error.get("code").and_then(Value::as_str).unwrap_or("error");
                let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                format!("{code}: {message}")
            }
            Some(Value::String(code)) => {
                let description = answer
                    .get("error_description")
                    .and_then(Value::as_str)
                    .and_then(|d| d.lines().next())
                    .unwrap_or("");
                format!("{code}: {description}")
            }
            _ => answer.to_string(),
        },
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.trim().trim_end_matches(':').trim();
    if text.is_empty() {
        "(no details)".to_owned()
    } else if text.chars().count() > MAX_REASON {
        let cut: String = text.chars().take(MAX_REASON).collect();
        format!("{cut}…")
    } else {
        text.to_owned()
    }
}

/// The token and its lifetime in seconds (`expires_in` is a number, or a numeric string on
/// older endpoints).
fn parse_token(body: &[u8]) -> Option<(String, u64)> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    let bearer = answer
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())?
        .to_owned();
    let expires_in = match answer.get("expires_in")? {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    Some((bearer, expires_in))
}

/// How long a token that lives `expires_in` seconds is used: until [`TOKEN_MARGIN`] before it
/// expires, or half its life when it is shorter than that.
fn keep_token_for(expires_in: u64) -> Duration {
    // Entra ID's tokens live about an hour; a day bounds what a broken answer could ask for.
    let life = Duration::from_secs(expires_in.min(24 * 3600));
    life.checked_sub(TOKEN_MARGIN)
        .filter(|keep| !keep.is_zero())
        .unwrap_or(life / 2)
}

/// The first byte of the first range in an upload session's `nextExpectedRanges`
/// (`["26-"]`, `["12345-55232", "77829-99375"]`).
fn next_expected(session: &Value) -> Option<u64> {
    session
        .get("nextExpectedRanges")?
        .as_array()?
        .first()?
        .as_str()?
        .split('-')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The size of the fragment that starts at `offset`: [`FRAGMENT`], or what is left.
fn fragment_len(offset: u64, total: u64) -> usize {
    let left = total.saturating_sub(offset);
    usize::try_from(left).map_or(FRAGMENT, |left| left.min(FRAGMENT))
}

/// `bytes a-b/total` for `len` bytes at `offset` (`len` > 0).
fn content_range(offset: u64, len: usize, total: u64) -> String {
    let last = offset + u64::try_from(len).unwrap_or(0) - 1;
    format!("bytes {offset}-{last}/{total}")
}

/// [`crate::remote::backoff`] capped at [`MAX_BACKOFF`].
fn backoff(base: Duration, retry: u32, unit: f64) -> Duration {
    crate::remote::backoff(base, retry, unit, MAX_BACKOFF)
}

// ---------------------------------------------------------------------------------------------
// Paths and encodings

/// Every folder above `path`, from the top (`a/b/c` → `a`, `a/b`).
fn ancestors(path: &str) -> Vec<&str> {
    path.match_indices('/').map(|(at, _)| &path[..at]).collect()
}

/// RFC 3986's unreserved characters: never encoded.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// What an identifier (a drive id such as `b!Xy_z`) keeps as is in a path segment: the
/// unreserved characters and the sub-delimiters, which Graph's own examples leave unencoded.
fn id_char(b: u8) -> bool {
    unreserved(b)
        || matches!(
            b,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b'@'
        )
}

/// `text` with every byte `keep` refuses percent-encoded (UTF-8 bytes, so `Ü` is `%C3%9C`).
fn encode(text: &str, keep: fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A store path with each segment encoded; the `/` between them kept.
fn encode_path(path: &str) -> String {
    path.split('/')
        .map(|segment| encode(segment, unreserved))
        .collect::<Vec<_>>()
        .join("/")
}

/// An `application/x-www-form-urlencoded` body: `*-._` and alphanumerics kept, space as `+`,
/// every other byte percent-encoded.
fn form_encode(pairs: &[(&str, &str)]) -> String {
    let field = |text: &str| {
        let mut out = String::with_capacity(text.len());
        for &b in text.as_bytes() {
            match b {
                b' ' => out.push('+'),
                b if b.is_ascii_alphanumeric() || matches!(b, b'*' | b'-' | b'.' | b'_') => {
                    out.push(char::from(b));
                }
                b => {
                    let _ = write!(out, "%{b:02X}");
                }
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(name, value)| format!("{}={}", field(name), field(value)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {

    use super::*;

    fn settings() -> GraphSettings {
        GraphSettings {
            tenant_id: "contoso.onmicrosoft.com".to_owned(),
            client_id: "11111111-2222-3333-4444-555555555555".to_owned(),
            client_secret: "s3cr3t~value+/=&".to_owned(),
            drive_id: "b!Xy_z-1".to_owned(),
            base_url: "https://graph.microsoft.com/v1.0".to_owned(),
            login_url: "https://login.microsoftonline.com/".to_owned(),
        }
    }

    #[test]
    fn items_are_addressed_by_encoded_path() {
        let store = SharePointStore::new(&settings());
        assert_eq!(
            store.item_url("Villas/A_1/Documents/Other/x.pdf", ":/content"),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root:/Villas/A_1/Documents/Other/x.pdf:/content"
        );
        assert_eq!(
            store.item_url("Exports/Villa Ünïcode plan.pdf", ":"),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root:/Exports/Villa%20%C3%9Cn%C3%AFcode%20plan.pdf:"
        );
        assert_eq!(
            store.children_url(None),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root/children"
        );
        assert_eq!(
            store.children_url(Some("Villas/A_1")),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root:/Villas/A_1:/children"
        );
        // A trailing slash in GRAPH_LOGIN_URL does not double the separator.
        assert_eq!(
            store.token_url(),
            "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
        );
    }

    #[test]
    fn reserved_characters_never_reach_a_path_unencoded() {
        assert_eq!(encode("a:b?c#d/e%f", unreserved), "a%3Ab%3Fc%23d%2Fe%25f");
        assert_eq!(encode("b!x/y", id_char), "b!x%2Fy");
        assert_eq!(encode_path("a b/c~d"), "a%20b/c~d");
    }

    #[test]
    fn the_token_request_is_form_encoded() {
        let form = form_encode(&[
            ("client_secret", "s3cr3t~value+/=& x"),
            ("scope", GRAPH_SCOPE),
            ("grant_type", "client_credentials"),
        ]);
        assert_eq!(
            form,
            "client_secret=s3cr3t%7Evalue%2B%2F%3D%26+x\
             &scope=https%3A%2F%2Fgraph.microsoft.com%2F.default\
             &grant_type=client_credentials"
        );
    }

    #[test]
    fn debug_output_has_no_secret() {
        let shown = format!("{:?}", SharePointStore::new(&settings()));
        assert!(shown.contains("b!Xy_z-1"), "{shown}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }

    #[test]
    fn tokens_are_kept_until_shortly_before_they_expire() {
        let answer = br#"{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"eyJ0"}"#;
        let (bearer, expires_in) = parse_token(answer).unwrap();
        assert_eq!((bearer.as_str(), expires_in), ("eyJ0", 3599));
        assert_eq!(keep_token_for(3599), Duration::from_secs(3599 - 300));
        // Shorter than the margin: half its life, never zero.
        assert_eq!(keep_token_for(120), Duration::from_secs(60));
        assert_eq!(keep_token_for(300), Duration::from_secs(150));
        // A lifetime no clock can add (a broken answer) is bounded, never an overflow.
        assert_eq!(
            keep_token_for(u64::MAX),
            Duration::from_secs(24 * 3600 - 300)
        );
        assert_eq!(
            parse_token(br#"{"expires_in":"3600","access_token":"t"}"#),
            Some(("t".to_owned(), 3600))
        );
        assert_eq!(
            parse_token(br#"{"expires_in":3600,"access_token":""}"#),
            None
        );
        assert_eq!(parse_token(br#"{"access_token":"t"}"#), None);
        assert_eq!(parse_token(b"<html>"), None);
    }

    #[test]
    fn fragments_are_multiples_of_320_kib_but_the_last() {
        assert_eq!(FRAGMENT_UNIT, 327_680);
        let total: u64 = 9 * 1024 * 1024 + 5;
        let mut offset = 0u64;
        let mut ranges = Vec::new();
        while offset < total {
            let len = fragment_len(offset, total);
            let last = offset + u64::try_from(len).unwrap() == total;
            assert!(last || len.is_multiple_of(FRAGMENT_UNIT), "{len}");
            ranges.push(content_range(offset, len, total));
            offset += u64::try_from(len).unwrap();
        }
        assert_eq!(
            ranges,
            [
                "bytes 0-3276799/9437189",
                "bytes 3276800-6553599/9437189",
                "bytes 6553600-9437188/9437189",
            ]
        );
    }

    #[test]
    fn the_session_says_where_to_go_on() {
        assert_eq!(
            next_expected(&json!({
                "expirationDateTime": "2015-01-29T09:21:55.523Z",
                "nextExpectedRanges": ["26-"],
            })),
            Some(26)
        );
        assert_eq!(
            next_expected(&json!({"nextExpectedRanges": ["12345-55232", "77829-99375"]})),
            Some(12345)
        );
        assert_eq!(next_expected(&json!({"nextExpectedRanges": []})), None);
        assert_eq!(next_expected(&json!({})), None);
    }

    #[test]
    fn throttling_is_waited_out_and_failures_retried() {
        let secs = Some(Duration::from_secs(3));
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, secs),
            Class::Throttled(secs)
        );
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, None),
            Class::Throttled(None)
        );
        assert_eq!(
            classify(StatusCode::SERVICE_UNAVAILABLE, secs),
            Class::Throttled(secs)
        );
        assert_eq!(
            classify(StatusCode::SERVICE_UNAVAILABLE, None),
            Class::Failed
        );
        assert_eq!(classify(StatusCode::BAD_GATEWAY, None), Class::Failed);
        for answer in [
            StatusCode::OK,
            StatusCode::NOT_FOUND,
            StatusCode::CONFLICT,
            StatusCode::UNAUTHORIZED,
            StatusCode::RANGE_NOT_SATISFIABLE,
        ] {
            assert_eq!(classify(answer, None), Class::Answer, "{answer}");
        }
    }

    #[test]
    fn backoff_doubles_within_its_jitter_and_is_capped() {
        assert_eq!(backoff(RETRY_BASE, 0, 1.0), RETRY_BASE);
        assert_eq!(backoff(RETRY_BASE, 2, 1.0), RETRY_BASE * 4);
        assert_eq!(backoff(RETRY_BASE, 2, 0.0), RETRY_BASE * 2);
        assert_eq!(backoff(RETRY_BASE, 30, 1.0), MAX_BACKOFF);
    }

    #[test]
    fn errors_keep_the_services_own_words() {
        let graph = br#"{"error":{"code":"nameAlreadyExists","message":"An item with the same name already exists under the parent","innerError":{"date":"2024-01-01T00:00:00"}}}"#;
        assert_eq!(error_code(graph).as_deref(), Some("nameAlreadyExists"));
        assert_eq!(
            failure_text(graph),
            "nameAlreadyExists: An item with the same name already exists under the parent"
        );
        let entra = br#"{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided.\r\nTrace ID: x","error_codes":[7000215]}"#;
        assert_eq!(
            failure_text(entra),
            "invalid_client: AADSTS7000215: Invalid client secret provided."
        );
        assert_eq!(error_code(entra), None);
        assert_eq!(failure_text(b""), "(no details)");
        assert_eq!(failure_text(b"<html>busy</html>"), "<html>busy</html>");
        assert!(failure_text("x".repeat(1000).as_bytes()).ends_with('…'));
    }

    #[test]
    fn items_answer_their_id_and_web_url() {
        let item = json!({
            "id": "01ABC",
            "name": "x.pdf",
            "webUrl": "https://contoso.sharepoint.com/x.pdf",
            "eTag": "\"{5A8E3F1C-0B6D-4C1A-9C3E-2F1D6B7A8C9D},2\"",
            "file": {},
        });
        assert_eq!(
            stored_object(&item),
            Some(StoredObject {
                file_id: "01ABC".to_owned(),
                url: "https://contoso.sharepoint.com/x.pdf".to_owned(),
                etag: Some("\"{5A8E3F1C-0B6D-4C1A-9C3E-2F1D6B7A8C9D},2\"".to_owned()),
            })
        );
        assert_eq!(stored_object(&json!({"name": "x.pdf"})), None);
    }

    #[test]
    fn ancestors_come_from_the_top() {
        assert_eq!(ancestors("a/b/c"), ["a", "a/b"]);
        assert!(ancestors("a").is_empty());
    }

    #[tokio::test]
    async fn files_are_read_one_fragment_at_a_time() {
        let name = std::env::temp_dir().join(format!(
            "villa-sharepoint-test-{}",
            uuid::Uuid::new_v4().simple()
        ));
        let content: Vec<u8> = (0..FRAGMENT + 10)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        std::fs::write(&name, &content).unwrap();
        let path = StoragePath::from_stored("Exports/x.bin").unwrap();
        let file = tokio::fs::File::open(&name).await.unwrap();
        let mut source = Source::File { file, name: &name };
        let total = u64::try_from(content.len()).unwrap();
        let at = u64::try_from(FRAGMENT).unwrap();
        let second = source
            .read(&path, at, fragment_len(at, total))
            .await
            .unwrap();
        assert_eq!(&second[..], &content[FRAGMENT..]);
        // Read again from an earlier offset (a fragment sent again).
        let first = source.read(&path, 0, FRAGMENT).await.unwrap();
        assert_eq!(&first[..], &content[..FRAGMENT]);
        // Past the end: an error, not short data.
        assert!(source.read(&path, total - 5, 10).await.is_err());
        let mut memory = Source::Memory(Bytes::from(content.clone()));
        assert_eq!(&memory.read(&path, 3, 4).await.unwrap()[..], &content[3..7]);
        assert!(memory.read(&path, total - 1, 2).await.is_err());
        let _ = std::fs::remove_file(name);
    }
}
