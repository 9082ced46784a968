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
//!
//! The parts: `store` (the calls every backend answers, and their steps), `upload` (upload
//! sessions), `requests` (one Graph request: the token, throttling and retries), `token` (the
//! sign-in), `answers` (what Graph answers, and its errors) and `paths` (the URLs and encodings).

mod answers;
mod paths;
mod requests;
mod store;
mod token;
mod upload;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{StorageError, StoragePath};
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

/// An app-only token of Entra ID (`token.rs` fetches and renews it).
struct Token {
    bearer: String,
    /// When to fetch a new one.
    renew_at: std::time::Instant,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn settings() -> GraphSettings {
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
    fn debug_output_has_no_secret() {
        let shown = format!("{:?}", SharePointStore::new(&settings()));
        assert!(shown.contains("b!Xy_z-1"), "{shown}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
}
