//! A loopback stand-in for the parts of Microsoft Graph v1.0 and of the Microsoft identity
//! platform that the SharePoint backend (`domain::storage::sharepoint`) calls, written from
//! Microsoft's public documentation, and no more:
//!
//! - `POST /{tenant}/oauth2/v2.0/token`: the client-credentials grant (form `client_id`,
//!   `client_secret`, `scope=https://graph.microsoft.com/.default`, `grant_type`); answers
//!   `{token_type, expires_in, ext_expires_in, access_token}`, or Entra ID's
//!   `{error, error_description, error_codes, …}` with its AADSTS codes.
//! - Under `/v1.0/drives/{drive}/`, with a bearer token it issued, items addressed from the
//!   root by path (`root`, `root/children`, `root:/{path}:`, `root:/{path}:/{action}`):
//!   `GET` an item (a `folder` facet with `childCount`, or a `file` facet); `POST .../children` a
//!   folder with `@microsoft.graph.conflictBehavior` (`fail` by default: 409
//!   `nameAlreadyExists`); `PUT .../content` (the simple upload, at most 4 MB: 413 beyond,
//!   201 new, 200 replaced with the same id); `POST .../createUploadSession` (`fail` by default,
//!   checked when the last byte arrives); `GET .../content` (302 to a pre-authenticated download
//!   URL); `DELETE` (204, a folder with everything in it).
//! - The upload URL: `PUT` fragments with `Content-Range: bytes a-b/total`, in order, each a
//!   multiple of 320 KiB but the last, at most 60 MiB, and without an `Authorization` header
//!   (which the documentation says may be refused with a 401); 202 with `nextExpectedRanges`,
//!   then 201/200 with the item; 416 for a range already received or out of order; `GET` for the
//!   session's status, `DELETE` to cancel it.
//! - Errors in Graph's envelope `{"error": {"code", "message", "innerError"}}`.
//!
//! Where the documentation leaves a behaviour open the stand-in takes the stricter reading: an
//! upload into a folder that does not exist is refused (404) rather than creating it, and names
//! are compared without regard to case, as SharePoint does (a `PUT .../content` to `Rules.pdf`
//! replaces the item `rules.pdf`, which keeps its name and id). Names SharePoint refuses
//! ("Restrictions and limitations in OneDrive and SharePoint") are refused with a 400 wherever a
//! name enters, a new folder's or an upload's path: characters `" * : < > ? / \ |`, a leading or
//! trailing space, a trailing dot, the names `.lock` and `desktop.ini`, Windows' device names
//! (`CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`, `LPT0`-`LPT9`, in any case, with an extension or
//! not), a name beginning `~$`, and `_vti_` anywhere.
//!
//! Switches: [`FakeGraph::throttle_next`] (429 with `Retry-After`) and
//! [`FakeGraph::unavailable_next`] (503 with `Retry-After`, SharePoint's other throttling answer)
//! for the next requests to Graph, the upload and the download URLs (the token endpoint is
//! Entra ID, another service, and is never throttled here); [`FakeGraph::revoke_tokens`]; the
//! request log ([`FakeGraph::requests`]); and what the library holds ([`FakeGraph::bytes_of`],
//! [`FakeGraph::is_folder`], [`FakeGraph::item_id`], [`FakeGraph::etag_of`]).

// Refusals are whole answers (`Err(Response)`), returned at once by `?`; their size does not
// matter on a test server's error paths.
#![allow(clippy::result_large_err)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{SecondsFormat, Utc};
use domain::settings::GraphSettings;
use serde_json::{Value, json};
use uuid::Uuid;

/// The tenant, app registration and library the stand-in knows.
pub const TENANT_ID: &str = "7c4b1f0e-9a2d-4c3b-8e5f-0a1b2c3d4e5f";
pub const CLIENT_ID: &str = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
/// With characters a form must encode.
pub const CLIENT_SECRET: &str = "fake~Secret.With+Symbols/=&";
/// Shaped like a SharePoint library's id (`b!` and base64url).
pub const DRIVE_ID: &str = "b!fAkE-drive_Id19";
/// The only scope the token endpoint grants.
pub const SCOPE: &str = "https://graph.microsoft.com/.default";
/// The simple upload's documented limit (4 MB).
pub const SIMPLE_UPLOAD_MAX: usize = 4 * 1024 * 1024;
/// Upload-session fragments other than the last are multiples of this (320 KiB).
pub const FRAGMENT_UNIT: u64 = 320 * 1024;
/// The largest fragment one request may carry.
pub const MAX_FRAGMENT: u64 = 60 * 1024 * 1024;
/// The lifetime of an issued token, as Entra ID usually says it.
pub const TOKEN_LIFETIME_SECS: u64 = 3599;
/// The largest request body read at all.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One request the stand-in answered.
#[derive(Debug, Clone)]
pub struct GraphRequest {
    pub method: String,
    /// As sent (percent-encoded), without the query.
    pub path: String,
    pub query: Option<String>,
    /// Whether it carried an `Authorization` header.
    pub authorized: bool,
    pub content_range: Option<String>,
    pub body_len: usize,
    pub status: u16,
}

impl GraphRequest {
    pub fn is_token(&self) -> bool {
        self.path.ends_with("/oauth2/v2.0/token")
    }

    /// A request to an upload session's URL.
    pub fn is_upload(&self) -> bool {
        self.path.starts_with("/_upload/")
    }
}

/// The stand-in; clones share it. It stops with the test's runtime.
#[derive(Clone)]
pub struct FakeGraph {
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    shared: Arc<Shared>,
}

struct Shared {
    origin: String,
    state: Mutex<Library>,
}

struct Library {
    /// By lower-case path (`""` is the root).
    items: BTreeMap<String, Item>,
    /// By the id in their upload URL.
    sessions: HashMap<String, Session>,
    /// Download tokens: the item's key and id.
    downloads: HashMap<String, (String, String)>,
    tokens: HashSet<String>,
    token_lifetime: u64,
    throttle: Option<Throttle>,
    log: Vec<GraphRequest>,
}

struct Throttle {
    remaining: u32,
    status: StatusCode,
    retry_after_secs: u64,
}

struct Item {
    id: String,
    /// The path as created (its case kept); `""` for the root.
    path: String,
    folder: bool,
    content: Bytes,
    version: u64,
    created: String,
    modified: String,
}

struct Session {
    /// The target's path, as asked.
    path: String,
    replace: bool,
    total: Option<u64>,
    received: Vec<u8>,
    expires: String,
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn new_id() -> String {
    format!("01{}", Uuid::new_v4().simple()).to_uppercase()
}

/// Items are keyed without regard to case, as SharePoint compares names.
fn key_of(path: &str) -> String {
    path.to_lowercase()
}

/// The item's `eTag`: its id and version, so that every write changes it (as Graph's does).
fn etag_of(item: &Item) -> String {
    format!("\"{{{}}},{}\"", item.id, item.version)
}

/// The key of the folder holding `key` (`None` for the root).
fn parent_key(key: &str) -> Option<&str> {
    if key.is_empty() {
        return None;
    }
    Some(key.rsplit_once('/').map_or("", |(parent, _)| parent))
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}/{name}")
    }
}

impl Library {
    fn new() -> Library {
        let mut items = BTreeMap::new();
        let at = now();
        items.insert(
            String::new(),
            Item {
                id: new_id(),
                path: String::new(),
                folder: true,
                content: Bytes::new(),
                version: 1,
                created: at.clone(),
                modified: at,
            },
        );
        Library {
            items,
            sessions: HashMap::new(),
            downloads: HashMap::new(),
            tokens: HashSet::new(),
            token_lifetime: TOKEN_LIFETIME_SECS,
            throttle: None,
            log: Vec::new(),
        }
    }

    fn is_folder(&self, key: &str) -> bool {
        self.items.get(key).is_some_and(|item| item.folder)
    }

    fn children(&self, key: &str) -> usize {
        self.items
            .keys()
            .filter(|k| parent_key(k) == Some(key))
            .count()
    }

    fn size(&self, key: &str) -> usize {
        let prefix = format!("{key}/");
        self.items
            .iter()
            .filter(|(k, _)| key.is_empty() || *k == key || k.starts_with(&prefix))
            .map(|(_, item)| item.content.len())
            .sum()
    }

    /// A new file, or new content for the file at `key` (same id, new version); 201 or 200.
    fn write_file(&mut self, key: &str, path: &str, content: Bytes) -> StatusCode {
        let at = now();
        match self.items.get_mut(key) {
            Some(item) => {
                item.content = content;
                item.version += 1;
                item.modified = at;
                StatusCode::OK
            }
            None => {
                self.items.insert(
                    key.to_owned(),
                    Item {
                        id: new_id(),
                        path: path.to_owned(),
                        folder: false,
                        content,
                        version: 1,
                        created: at.clone(),
                        modified: at,
                    },
                );
                StatusCode::CREATED
            }
        }
    }
}

impl FakeGraph {
    /// Serves the stand-in on a free loopback port.
    pub async fn start() -> FakeGraph {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let origin = format!(
            "http://{}",
            listener.local_addr().expect("the port's address")
        );
        let shared = Arc::new(Shared {
            origin: origin.clone(),
            state: Mutex::new(Library::new()),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeGraph { origin, shared }
    }

    /// The settings that point the SharePoint backend here (`GRAPH_*`).
    pub fn settings(&self) -> GraphSettings {
        GraphSettings {
            tenant_id: TENANT_ID.to_owned(),
            client_id: CLIENT_ID.to_owned(),
            client_secret: CLIENT_SECRET.to_owned(),
            drive_id: DRIVE_ID.to_owned(),
            base_url: format!("{}/v1.0", self.origin),
            login_url: self.origin.clone(),
        }
    }

    /// The next `n` requests (token requests aside) are answered 429 Too Many Requests with
    /// `Retry-After: retry_after_secs`.
    pub fn throttle_next(&self, n: u32, retry_after_secs: u64) {
        self.shared
            .throttle(n, StatusCode::TOO_MANY_REQUESTS, retry_after_secs);
    }

    /// The next `n` requests (token requests aside) are answered 503 Service Unavailable with
    /// `Retry-After: retry_after_secs`.
    pub fn unavailable_next(&self, n: u32, retry_after_secs: u64) {
        self.shared
            .throttle(n, StatusCode::SERVICE_UNAVAILABLE, retry_after_secs);
    }

    /// Every token issued so far is refused from now on (401), as after a revocation.
    pub fn revoke_tokens(&self) {
        self.shared.lock().tokens.clear();
    }

    /// The `expires_in` of tokens issued from now on.
    pub fn set_token_lifetime(&self, secs: u64) {
        self.shared.lock().token_lifetime = secs;
    }

    /// Every request answered so far, in order.
    pub fn requests(&self) -> Vec<GraphRequest> {
        self.shared.lock().log.clone()
    }

    pub fn clear_requests(&self) {
        self.shared.lock().log.clear();
    }

    /// How many token requests were answered (granted or not).
    pub fn token_requests(&self) -> usize {
        self.shared
            .lock()
            .log
            .iter()
            .filter(|r| r.is_token())
            .count()
    }

    /// The content of the file at `path` (a store path: `Villas/…/x.pdf`), if there is one.
    pub fn bytes_of(&self, path: &str) -> Option<Vec<u8>> {
        let library = self.shared.lock();
        library
            .items
            .get(&key_of(path))
            .filter(|item| !item.folder)
            .map(|item| item.content.to_vec())
    }

    pub fn is_folder(&self, path: &str) -> bool {
        self.shared.lock().is_folder(&key_of(path))
    }

    /// The drive item id at `path` (file or folder).
    pub fn item_id(&self, path: &str) -> Option<String> {
        let library = self.shared.lock();
        library.items.get(&key_of(path)).map(|item| item.id.clone())
    }

    /// The `eTag` the item at `path` has now, as its JSON carries it.
    pub fn etag_of(&self, path: &str) -> Option<String> {
        let library = self.shared.lock();
        library.items.get(&key_of(path)).map(etag_of)
    }

    /// Every item's path (folders and files, the root aside), in order.
    pub fn paths(&self) -> Vec<String> {
        let library = self.shared.lock();
        library
            .items
            .values()
            .filter(|item| !item.path.is_empty())
            .map(|item| item.path.clone())
            .collect()
    }

    /// Upload sessions neither completed nor cancelled.
    pub fn open_sessions(&self) -> usize {
        self.shared.lock().sessions.len()
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let method = parts.method.clone();
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().map(str::to_owned);
    let headers = parts.headers;
    let authorized = headers.contains_key(header::AUTHORIZATION);
    let content_range = headers
        .get(header::CONTENT_RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (response, body_len) = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(body) => (
            shared.answer(&method, &path, query.as_deref(), &headers, &body),
            body.len(),
        ),
        Err(_) => (
            graph_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "requestTooLarge",
                "The request body is larger than any request accepts.",
            ),
            0,
        ),
    };
    shared.lock().log.push(GraphRequest {
        method: method.to_string(),
        path,
        query,
        authorized,
        content_range,
        body_len,
        status: response.status().as_u16(),
    });
    response
}

// ---------------------------------------------------------------------------------------------
// Answers

fn json_answer(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Graph's error envelope.
fn graph_error(status: StatusCode, code: &str, message: &str) -> Response {
    let request_id = Uuid::new_v4().to_string();
    json_answer(
        status,
        &json!({
            "error": {
                "code": code,
                "message": message,
                "innerError": {
                    "date": Utc::now().format("%Y-%m-%dT%H:%M:%S").to_string(),
                    "request-id": request_id,
                    "client-request-id": request_id,
                },
            },
        }),
    )
}

fn not_found() -> Response {
    graph_error(
        StatusCode::NOT_FOUND,
        "itemNotFound",
        "The resource could not be found.",
    )
}

fn invalid(message: &str) -> Response {
    graph_error(StatusCode::BAD_REQUEST, "invalidRequest", message)
}

fn name_exists() -> Response {
    graph_error(
        StatusCode::CONFLICT,
        "nameAlreadyExists",
        "An item with the same name already exists under the parent.",
    )
}

/// Entra ID's error answer.
fn entra_error(status: StatusCode, error: &str, code: u32, description: &str) -> Response {
    let trace = Uuid::new_v4().to_string();
    let correlation = Uuid::new_v4().to_string();
    let timestamp = Utc::now().format("%Y-%m-%d %H:%M:%SZ").to_string();
    json_answer(
        status,
        &json!({
            "error": error,
            "error_description": format!(
                "AADSTS{code}: {description} Trace ID: {trace} Correlation ID: {correlation} Timestamp: {timestamp}"
            ),
            "error_codes": [code],
            "timestamp": timestamp,
            "trace_id": trace,
            "correlation_id": correlation,
        }),
    )
}

// ---------------------------------------------------------------------------------------------
// Paths

/// Percent-decodes one path segment (`+` is a plus sign in a path). `None` when it is not
/// valid percent-encoded UTF-8.
fn decode_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for &b in segment.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Why SharePoint refuses `name` for a file or a folder, or `None` when it accepts it: empty, any
/// of `" * : < > ? / \ |` or a control character, a leading or trailing space, a trailing dot;
/// the reserved names `.lock` and `desktop.ini`; a Windows device name, alone or before an
/// extension; a name beginning `~$`; `_vti_` anywhere. Case never matters.
fn refused_name(name: &str) -> Option<&'static str> {
    if name.is_empty() || name == "." || name == ".." {
        return Some("The name of an item cannot be empty.");
    }
    if name.starts_with(' ') || name.ends_with(' ') || name.ends_with('.') {
        return Some("The name of an item cannot begin or end with a space, nor end with a dot.");
    }
    if name
        .chars()
        .any(|c| c.is_control() || "\"*:<>?/\\|".contains(c))
    {
        return Some("The provided name contains invalid characters.");
    }
    if RESERVED_NAMES.iter().any(|r| name.eq_ignore_ascii_case(r)) || is_device_name(name) {
        return Some("The provided name is reserved and cannot be used.");
    }
    if name.starts_with("~$") {
        return Some("The name of an item cannot begin with '~$'.");
    }
    if name.to_ascii_lowercase().contains("_vti_") {
        return Some("The name of an item cannot contain '_vti_'.");
    }
    None
}

/// Whole names SharePoint keeps for itself.
const RESERVED_NAMES: [&str; 2] = [".lock", "desktop.ini"];

/// Whether `name` is a Windows device name (`CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`,
/// `LPT0`-`LPT9`), in any case, alone or before an extension: Windows takes `CON.pdf` and
/// `con.tar.gz` for the device too, so the part before the first dot is what counts (spaces
/// before that dot ignored, as Windows ignores them).
fn is_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let stem = stem.to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix)
            .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit())
    };
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL") || numbered("COM") || numbered("LPT")
}

/// An item address under `/v1.0/drives/{drive}/`: the item's path (decoded, `""` for the root)
/// and the action after it (`""`, `children`, `content`, `createUploadSession`).
fn parse_address(address: &str) -> Result<(String, &str), &'static str> {
    if address == "root" || address == "root:" || address == "root:/" {
        return Ok((String::new(), ""));
    }
    if let Some(action) = address.strip_prefix("root/") {
        return Ok((String::new(), action));
    }
    let Some(after) = address.strip_prefix("root:") else {
        return Err(
            "the stand-in serves items addressed from the root only (root, root/children, root:/{path}:)",
        );
    };
    let (item, action) = match after.split_once(':') {
        Some((item, "")) => (item, ""),
        Some((item, rest)) => match rest.strip_prefix('/') {
            Some(action) => (item, action),
            None => return Err("a path address ends with ':' and then '/{action}'"),
        },
        None => (after, ""),
    };
    let Some(item) = item.strip_prefix('/') else {
        return Err("a path address begins with 'root:/'");
    };
    let item = item.strip_suffix('/').unwrap_or(item);
    if item.is_empty() {
        return Ok((String::new(), action));
    }
    let mut segments = Vec::new();
    for raw in item.split('/') {
        match decode_segment(raw) {
            Some(segment) if !segment.is_empty() && segment != "." && segment != ".." => {
                segments.push(segment);
            }
            _ => return Err("the path has an empty or malformed segment"),
        }
    }
    Ok((segments.join("/"), action))
}

/// `bytes a-b/total`.
fn parse_content_range(value: &str) -> Option<(u64, u64, u64)> {
    let range = value.trim().strip_prefix("bytes ")?;
    let (span, total) = range.split_once('/')?;
    let (first, last) = span.split_once('-')?;
    Some((
        first.trim().parse().ok()?,
        last.trim().parse().ok()?,
        total.trim().parse().ok()?,
    ))
}

/// The bearer token of the request, if it has one.
fn bearer_of(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

/// `@microsoft.graph.conflictBehavior` from a request body (or `item` in it).
fn conflict_behavior<'a>(object: &'a Value, default: &'a str) -> &'a str {
    object
        .get("@microsoft.graph.conflictBehavior")
        .and_then(Value::as_str)
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------------------
// The service

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Library> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn throttle(&self, n: u32, status: StatusCode, retry_after_secs: u64) {
        self.lock().throttle = (n > 0).then_some(Throttle {
            remaining: n,
            status,
            retry_after_secs,
        });
    }

    fn web_url(&self, path: &str) -> String {
        let mut url = format!("{}/sites/villa/Shared%20Documents", self.origin);
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            url.push('/');
            url.push_str(&encode_segment(segment));
        }
        url
    }

    fn answer(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Response {
        let segments: Vec<&str> = path.split('/').collect();
        if let ["", tenant, "oauth2", "v2.0", "token"] = segments.as_slice() {
            return self.token(method, tenant, headers, body);
        }
        if let Some(throttled) = self.throttled() {
            return throttled;
        }
        if let Some(address) = path.strip_prefix("/v1.0/drives/") {
            return self.graph(method, address, query, headers, body);
        }
        if let Some(id) = path.strip_prefix("/_upload/") {
            return self.upload(method, id, headers, body);
        }
        if let Some(token) = path.strip_prefix("/_download/") {
            return self.download(method, token);
        }
        graph_error(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "Invalid version: the stand-in serves /v1.0 only.",
        )
    }

    /// The next throttled answer, if the switch is on.
    fn throttled(&self) -> Option<Response> {
        let mut library = self.lock();
        let throttle = library.throttle.as_mut()?;
        throttle.remaining = throttle.remaining.saturating_sub(1);
        let (status, secs, done) = (
            throttle.status,
            throttle.retry_after_secs,
            throttle.remaining == 0,
        );
        if done {
            library.throttle = None;
        }
        drop(library);
        let mut response = if status == StatusCode::TOO_MANY_REQUESTS {
            graph_error(
                status,
                "activityLimitReached",
                "The request has been throttled",
            )
        } else {
            graph_error(
                status,
                "serviceNotAvailable",
                "The service is temporarily unavailable. Retry after the time in Retry-After.",
            )
        };
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        Some(response)
    }

    // -----------------------------------------------------------------------------------------
    // The token endpoint

    fn token(&self, method: &Method, tenant: &str, headers: &HeaderMap, body: &[u8]) -> Response {
        if method != Method::POST {
            return entra_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalid_request",
                900_561,
                "The endpoint only accepts POST requests.",
            );
        }
        if decode_segment(tenant).as_deref() != Some(TENANT_ID) {
            return entra_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                90_002,
                &format!("Tenant '{tenant}' not found."),
            );
        }
        let is_form = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        let form: HashMap<String, String> = if is_form {
            form_urlencoded::parse(body).into_owned().collect()
        } else {
            HashMap::new()
        };
        let field = |name: &str| form.get(name).map(String::as_str);
        for required in ["grant_type", "client_id", "scope"] {
            if field(required).is_none() {
                return entra_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    900_144,
                    &format!(
                        "The request body must contain the following parameter: '{required}'."
                    ),
                );
            }
        }
        if field("grant_type") != Some("client_credentials") {
            return entra_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                70_003,
                "The app requested an unsupported grant type.",
            );
        }
        if field("client_id") != Some(CLIENT_ID) {
            return entra_error(
                StatusCode::BAD_REQUEST,
                "unauthorized_client",
                700_016,
                &format!(
                    "Application with identifier '{}' was not found in the directory.",
                    field("client_id").unwrap_or_default()
                ),
            );
        }
        if field("client_secret") != Some(CLIENT_SECRET) {
            return entra_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                7_000_215,
                "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.",
            );
        }
        if field("scope") != Some(SCOPE) {
            return entra_error(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                1_002_012,
                &format!(
                    "The provided value for scope {} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).",
                    field("scope").unwrap_or_default()
                ),
            );
        }
        let token = format!("fake-graph.{}", Uuid::new_v4().simple());
        let lifetime = {
            let mut library = self.lock();
            library.tokens.insert(token.clone());
            library.token_lifetime
        };
        json_answer(
            StatusCode::OK,
            &json!({
                "token_type": "Bearer",
                "expires_in": lifetime,
                "ext_expires_in": lifetime,
                "access_token": token,
            }),
        )
    }

    // -----------------------------------------------------------------------------------------
    // Drive items

    fn graph(
        &self,
        method: &Method,
        address: &str,
        query: Option<&str>,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Response {
        // Graph checks the token before anything else.
        let known = bearer_of(headers).map(|token| self.lock().tokens.contains(token));
        match known {
            None => {
                return graph_error(
                    StatusCode::UNAUTHORIZED,
                    "InvalidAuthenticationToken",
                    "Access token is empty.",
                );
            }
            Some(false) => {
                return graph_error(
                    StatusCode::UNAUTHORIZED,
                    "InvalidAuthenticationToken",
                    "Access token validation failure.",
                );
            }
            Some(true) => {}
        }
        let Some((drive, address)) = address.split_once('/') else {
            return invalid("A drive item address is expected after the drive id.");
        };
        if decode_segment(drive).as_deref() != Some(DRIVE_ID) {
            return invalid("Invalid drive id.");
        }
        let (path, action) = match parse_address(address) {
            Ok(parsed) => parsed,
            Err(message) => return invalid(message),
        };
        match (method, action) {
            (&Method::GET, "") => self.get_item(&path),
            (&Method::DELETE, "") => self.delete_item(&path),
            (&Method::POST, "children") => self.create_child(&path, body),
            (&Method::GET, "content") => self.content_redirect(&path),
            (&Method::PUT, "content") => self.put_content(&path, query, body),
            (&Method::POST, "createUploadSession") => self.create_session(&path, body),
            (_, "" | "children" | "content" | "createUploadSession") => graph_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalidRequest",
                "The stand-in does not serve this method here.",
            ),
            _ => invalid("The stand-in serves children, content and createUploadSession only."),
        }
    }

    fn item_json(&self, library: &Library, key: &str) -> Option<Value> {
        let item = library.items.get(key)?;
        let name = if item.path.is_empty() {
            "root"
        } else {
            item.path.rsplit('/').next().unwrap_or_default()
        };
        let mut json = json!({
            "id": item.id,
            "name": name,
            "eTag": etag_of(item),
            "cTag": format!("\"c:{{{}}},{}\"", item.id, item.version),
            "createdDateTime": item.created,
            "lastModifiedDateTime": item.modified,
            "size": library.size(key),
            "webUrl": self.web_url(&item.path),
        });
        if item.path.is_empty() {
            json["root"] = json!({});
        } else {
            let parent = item.path.rsplit_once('/').map_or("", |(parent, _)| parent);
            let parent_id = parent_key(key)
                .and_then(|k| library.items.get(k))
                .map(|p| p.id.clone());
            let parent_path = if parent.is_empty() {
                format!("/drives/{DRIVE_ID}/root:")
            } else {
                format!("/drives/{DRIVE_ID}/root:/{parent}")
            };
            json["parentReference"] = json!({
                "driveType": "documentLibrary",
                "driveId": DRIVE_ID,
                "id": parent_id,
                "path": parent_path,
            });
        }
        if item.folder {
            json["folder"] = json!({ "childCount": library.children(key) });
        } else {
            json["file"] = json!({ "mimeType": "application/octet-stream" });
        }
        Some(json)
    }

    fn get_item(&self, path: &str) -> Response {
        let library = self.lock();
        match self.item_json(&library, &key_of(path)) {
            Some(item) => json_answer(StatusCode::OK, &item),
            None => not_found(),
        }
    }

    fn delete_item(&self, path: &str) -> Response {
        if path.is_empty() {
            return graph_error(
                StatusCode::FORBIDDEN,
                "accessDenied",
                "The root of a drive cannot be deleted.",
            );
        }
        let key = key_of(path);
        let mut library = self.lock();
        if !library.items.contains_key(&key) {
            return not_found();
        }
        let inside = format!("{key}/");
        library
            .items
            .retain(|k, _| *k != key && !k.starts_with(&inside));
        StatusCode::NO_CONTENT.into_response()
    }

    fn create_child(&self, parent: &str, body: &[u8]) -> Response {
        let Ok(request) = serde_json::from_slice::<Value>(body) else {
            return invalid("Unable to read JSON request payload.");
        };
        let Some(name) = request.get("name").and_then(Value::as_str) else {
            return invalid("The name of the new item is required.");
        };
        if let Some(refused) = refused_name(name) {
            return invalid(refused);
        }
        if !request.get("folder").is_some_and(Value::is_object) {
            return invalid(
                "The stand-in creates folders only (a file's content goes up with PUT .../content).",
            );
        }
        let behavior = conflict_behavior(&request, "fail");
        let parent_key = key_of(parent);
        let mut library = self.lock();
        let Some(parent_item) = library.items.get(&parent_key) else {
            return not_found();
        };
        if !parent_item.folder {
            return invalid("The parent item is not a folder.");
        }
        let parent_path = parent_item.path.clone();
        let mut path = join(&parent_path, name);
        let existing = library.items.get(&key_of(&path)).map(|item| item.folder);
        if let Some(existing_is_folder) = existing {
            match behavior {
                "fail" => return name_exists(),
                // An existing folder is answered as it is (its contents kept).
                "replace" if existing_is_folder => {
                    let key = key_of(&path);
                    return match self.item_json(&library, &key) {
                        Some(item) => json_answer(StatusCode::OK, &item),
                        None => not_found(),
                    };
                }
                "replace" => {
                    library.items.remove(&key_of(&path));
                }
                "rename" => {
                    let free = (1u32..)
                        .map(|n| join(&parent_path, &format!("{name} {n}")))
                        .find(|candidate| !library.items.contains_key(&key_of(candidate)));
                    if let Some(free) = free {
                        path = free;
                    }
                }
                _ => return invalid("Invalid value for @microsoft.graph.conflictBehavior."),
            }
        }
        let key = key_of(&path);
        let at = now();
        library.items.insert(
            key.clone(),
            Item {
                id: new_id(),
                path,
                folder: true,
                content: Bytes::new(),
                version: 1,
                created: at.clone(),
                modified: at,
            },
        );
        match self.item_json(&library, &key) {
            Some(item) => json_answer(StatusCode::CREATED, &item),
            None => not_found(),
        }
    }

    /// The parent of `path` as a folder, or the answer refusing the upload.
    fn check_target(library: &Library, path: &str) -> Result<String, Response> {
        if path.is_empty() {
            return Err(invalid("Content cannot be uploaded to the root."));
        }
        // Every name on the way is checked, not only the new one: a refused folder name answers
        // 400 rather than the 404 of a folder that cannot exist.
        if let Some(refused) = path.split('/').find_map(refused_name) {
            return Err(invalid(refused));
        }
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        let parent_key = key_of(parent);
        match library.items.get(&parent_key) {
            // The stricter reading: no folder is created on the way.
            None => Err(not_found()),
            Some(item) if !item.folder => Err(invalid("The parent item is not a folder.")),
            Some(item) => Ok(join(&item.path, name)),
        }
    }

    fn put_content(&self, path: &str, query: Option<&str>, body: &[u8]) -> Response {
        if body.len() > SIMPLE_UPLOAD_MAX {
            return graph_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "requestTooLarge",
                "The simple upload takes files up to 4 MB; use an upload session.",
            );
        }
        // The documented default of a PUT is "replace".
        let behavior = query
            .and_then(|q| {
                form_urlencoded::parse(q.as_bytes())
                    .find(|(name, _)| name == "@microsoft.graph.conflictBehavior")
                    .map(|(_, value)| value.into_owned())
            })
            .unwrap_or_else(|| "replace".to_owned());
        let mut library = self.lock();
        let path = match Self::check_target(&library, path) {
            Ok(path) => path,
            Err(refused) => return refused,
        };
        let key = key_of(&path);
        match library.items.get(&key) {
            Some(item) if item.folder => return name_exists(),
            Some(_) if behavior == "fail" => return name_exists(),
            _ => {}
        }
        let status = library.write_file(&key, &path, Bytes::copy_from_slice(body));
        match self.item_json(&library, &key) {
            Some(item) => json_answer(status, &item),
            None => not_found(),
        }
    }

    fn create_session(&self, path: &str, body: &[u8]) -> Response {
        let request = if body.is_empty() {
            json!({})
        } else {
            match serde_json::from_slice::<Value>(body) {
                Ok(request) => request,
                Err(_) => return invalid("Unable to read JSON request payload."),
            }
        };
        if request.get("deferCommit").and_then(Value::as_bool) == Some(true) {
            return invalid("The stand-in does not defer commits.");
        }
        let item = request.get("item").cloned().unwrap_or_else(|| json!({}));
        // The documented default is "fail".
        let replace = match conflict_behavior(&item, "fail") {
            "fail" => false,
            "replace" => true,
            _ => return invalid("The stand-in takes conflictBehavior fail or replace."),
        };
        let mut library = self.lock();
        let path = match Self::check_target(&library, path) {
            Ok(path) => path,
            Err(refused) => return refused,
        };
        if library.is_folder(&key_of(&path)) {
            return name_exists();
        }
        let id = Uuid::new_v4().simple().to_string();
        let expires = (Utc::now() + chrono::TimeDelta::minutes(15))
            .to_rfc3339_opts(SecondsFormat::Millis, true);
        library.sessions.insert(
            id.clone(),
            Session {
                path,
                replace,
                total: None,
                received: Vec::new(),
                expires: expires.clone(),
            },
        );
        json_answer(
            StatusCode::OK,
            &json!({
                "uploadUrl": format!("{}/_upload/{id}", self.origin),
                "expirationDateTime": expires,
                "nextExpectedRanges": ["0-"],
            }),
        )
    }

    fn content_redirect(&self, path: &str) -> Response {
        let key = key_of(path);
        let mut library = self.lock();
        let id = match library.items.get(&key) {
            Some(item) if !item.folder => item.id.clone(),
            // Only items with a file facet have content.
            _ => return not_found(),
        };
        let token = Uuid::new_v4().simple().to_string();
        library.downloads.insert(token.clone(), (key, id));
        let location = format!("{}/_download/{token}", self.origin);
        let mut response = StatusCode::FOUND.into_response();
        if let Ok(location) = HeaderValue::from_str(&location) {
            response.headers_mut().insert(header::LOCATION, location);
        }
        response
    }

    // -----------------------------------------------------------------------------------------
    // Pre-authenticated URLs

    fn download(&self, method: &Method, token: &str) -> Response {
        if method != Method::GET {
            return graph_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalidRequest",
                "A download URL answers GET only.",
            );
        }
        let library = self.lock();
        let content = library
            .downloads
            .get(token)
            .and_then(|(key, id)| library.items.get(key).filter(|item| item.id == *id))
            .map(|item| item.content.clone());
        match content {
            Some(content) => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/octet-stream")],
                content,
            )
                .into_response(),
            None => not_found(),
        }
    }

    fn upload(&self, method: &Method, id: &str, headers: &HeaderMap, body: &[u8]) -> Response {
        if headers.contains_key(header::AUTHORIZATION) {
            return graph_error(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "The upload URL is pre-authenticated: send no Authorization header to it.",
            );
        }
        let mut library = self.lock();
        let Some(mut session) = library.sessions.remove(id) else {
            return graph_error(
                StatusCode::NOT_FOUND,
                "itemNotFound",
                "The upload session was not found.",
            );
        };
        let next = session.received.len() as u64;
        let answer = match *method {
            Method::GET => json_answer(
                StatusCode::OK,
                &json!({
                    "expirationDateTime": session.expires,
                    "nextExpectedRanges": [format!("{next}-")],
                }),
            ),
            // Cancelled: the session is gone.
            Method::DELETE => return StatusCode::NO_CONTENT.into_response(),
            Method::PUT => match self.fragment(&mut library, &mut session, headers, body) {
                Fragment::More(answer) | Fragment::Refused(answer) => answer,
                Fragment::Done(answer) => return answer,
            },
            _ => graph_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalidRequest",
                "An upload URL answers PUT, GET and DELETE.",
            ),
        };
        library.sessions.insert(id.to_owned(), session);
        answer
    }

    /// One fragment of an upload session.
    fn fragment(
        &self,
        library: &mut Library,
        session: &mut Session,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Fragment {
        let refused = |status: StatusCode, code: &str, message: &str| {
            Fragment::Refused(graph_error(status, code, message))
        };
        let Some((first, last, total)) = headers
            .get(header::CONTENT_RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_content_range)
        else {
            return refused(
                StatusCode::BAD_REQUEST,
                "invalidRequest",
                "Content-Range is missing or malformed (bytes {first}-{last}/{total}).",
            );
        };
        if last < first || last >= total {
            return refused(
                StatusCode::BAD_REQUEST,
                "invalidRange",
                "The Content-Range does not lie within the file.",
            );
        }
        let len = last - first + 1;
        if body.len() as u64 != len {
            return refused(
                StatusCode::BAD_REQUEST,
                "invalidRequest",
                "The body's length does not match the Content-Range.",
            );
        }
        if len > MAX_FRAGMENT {
            return refused(
                StatusCode::PAYLOAD_TOO_LARGE,
                "requestTooLarge",
                "A fragment carries less than 60 MiB.",
            );
        }
        if session.total.is_some_and(|t| t != total) {
            return refused(
                StatusCode::BAD_REQUEST,
                "invalidRange",
                "The total size differs from the one the first fragment declared.",
            );
        }
        let next = session.received.len() as u64;
        if first != next {
            return refused(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "invalidRange",
                &format!(
                    "Fragments are uploaded in order: the session expects byte {next}, not {first}."
                ),
            );
        }
        let complete = last + 1 == total;
        if !complete && !len.is_multiple_of(FRAGMENT_UNIT) {
            return refused(
                StatusCode::BAD_REQUEST,
                "invalidRange",
                "Every fragment but the last must be a multiple of 320 KiB (327,680 bytes).",
            );
        }
        session.total = Some(total);
        session.received.extend_from_slice(body);
        if !complete {
            return Fragment::More(json_answer(
                StatusCode::ACCEPTED,
                &json!({
                    "expirationDateTime": session.expires,
                    "nextExpectedRanges": [format!("{}-", last + 1)],
                }),
            ));
        }
        // The last byte: the file is committed where the session was opened.
        let path = match Self::check_target(library, &session.path) {
            Ok(path) => path,
            Err(answer) => return Fragment::Refused(answer),
        };
        let key = key_of(&path);
        match library.items.get(&key) {
            Some(item) if item.folder => return Fragment::Refused(name_exists()),
            Some(_) if !session.replace => return Fragment::Refused(name_exists()),
            _ => {}
        }
        let content = Bytes::from(std::mem::take(&mut session.received));
        let status = library.write_file(&key, &path, content);
        Fragment::Done(match self.item_json(library, &key) {
            Some(item) => json_answer(status, &item),
            None => not_found(),
        })
    }
}

/// What a fragment came to.
enum Fragment {
    /// Accepted; more expected (the session stays).
    More(Response),
    /// Refused (the session stays as it was).
    Refused(Response),
    /// The file is committed (the session is over).
    Done(Response),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name SharePoint accepts.
    fn valid_name(name: &str) -> bool {
        refused_name(name).is_none()
    }

    #[test]
    fn addresses_follow_graphs_path_syntax() {
        assert_eq!(parse_address("root"), Ok((String::new(), "")));
        assert_eq!(
            parse_address("root/children"),
            Ok((String::new(), "children"))
        );
        assert_eq!(
            parse_address("root:/Villas/A%20B/x%C3%9C.pdf:/content"),
            Ok(("Villas/A B/xÜ.pdf".to_owned(), "content"))
        );
        assert_eq!(
            parse_address("root:/Villas/A:"),
            Ok(("Villas/A".to_owned(), ""))
        );
        assert_eq!(
            parse_address("root:/Villas/A%2Bb"),
            Ok(("Villas/A+b".to_owned(), ""))
        );
        assert!(parse_address("items/01ABC").is_err());
        assert!(parse_address("root:/Villas//A:").is_err());
        assert!(parse_address("root:/Villas/%2E%2E:").is_err());
        assert!(parse_address("root:/Villas/%ZZ:").is_err());
    }

    #[test]
    fn ranges_and_names_are_checked() {
        assert_eq!(parse_content_range("bytes 0-25/128"), Some((0, 25, 128)));
        assert_eq!(parse_content_range("bytes */128"), None);
        assert!(valid_name("Plans de l'étage (Ünïcode)"));
        assert!(!valid_name("a:b"));
        assert!(!valid_name("trailing."));
        assert!(!valid_name(" lead"));
        assert_eq!(encode_segment("a b/é"), "a%20b%2F%C3%A9");
        assert_eq!(decode_segment("a%20b%2F%C3%A9").as_deref(), Some("a b/é"));
    }

    #[test]
    fn names_sharepoint_reserves_are_refused() {
        for refused in [
            ".lock",
            ".LOCK",
            "desktop.ini",
            "Desktop.INI",
            "CON",
            "con",
            "Con.pdf",
            "con.tar.gz",
            "CON .pdf",
            "PRN",
            "aux.txt",
            "Nul",
            "nul.",
            "COM0",
            "com1.log",
            "COM9",
            "LPT0",
            "lpt5.pdf",
            "Lpt9.docx",
            "~$report.docx",
            "~$",
            "_vti_",
            "plan_vti_bin.pdf",
            "PLAN_VTI_.pdf",
            "a_Vti_b",
        ] {
            assert!(!valid_name(refused), "{refused:?} accepted");
        }
        // What `SafeName` makes of them, and names that only look like them.
        for accepted in [
            "_.lock",
            "_desktop.ini",
            "desktop.ini.bak",
            "x.lock",
            "CON_.pdf",
            "nul_",
            "CONTRACT.pdf",
            "console",
            "icon.png",
            "COM10.txt",
            "LPT.txt",
            "COM.pdf",
            "report.con",
            "a.CON",
            "a~$b.docx",
            "-report.docx",
            "plan-vti-bin.pdf",
            "_vti.pdf",
            "vti_",
        ] {
            assert!(valid_name(accepted), "{accepted:?} refused");
        }
    }

    fn library() -> Shared {
        Shared {
            origin: "http://127.0.0.1:9".to_owned(),
            state: Mutex::new(Library::new()),
        }
    }

    /// The status and Graph's error code of an answer (`""` when it is no error).
    async fn status_and_code(response: Response) -> (StatusCode, String) {
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let code = answer
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        (status, code)
    }

    #[tokio::test]
    async fn reserved_names_are_refused_wherever_a_name_enters() {
        let shared = library();
        let made = shared.create_child("", br#"{"name": "Villas", "folder": {}}"#);
        assert_eq!(made.status(), StatusCode::CREATED);
        for name in ["CON", "desktop.ini", "~$x", "a_vti_b", ".lock", "lpt1.d"] {
            let folder = json!({ "name": name, "folder": {} }).to_string();
            let answer = shared.create_child("Villas", folder.as_bytes());
            assert_eq!(
                status_and_code(answer).await,
                (StatusCode::BAD_REQUEST, "invalidRequest".to_owned()),
                "folder {name:?}"
            );
            let path = format!("Villas/{name}");
            let answer = shared.put_content(&path, None, b"x");
            assert_eq!(
                status_and_code(answer).await,
                (StatusCode::BAD_REQUEST, "invalidRequest".to_owned()),
                "upload {name:?}"
            );
            let answer = shared.create_session(&path, b"");
            assert_eq!(
                status_and_code(answer).await,
                (StatusCode::BAD_REQUEST, "invalidRequest".to_owned()),
                "upload session {name:?}"
            );
            // Nor can a refused name be on the way to the new item.
            let answer = shared.put_content(&format!("{path}/x.pdf"), None, b"x");
            assert_eq!(
                status_and_code(answer).await,
                (StatusCode::BAD_REQUEST, "invalidRequest".to_owned()),
                "upload under {name:?}"
            );
        }
        let lock = shared.lock();
        assert_eq!(
            lock.items.keys().cloned().collect::<Vec<_>>(),
            ["", "villas"],
            "nothing refused was created"
        );
    }

    #[tokio::test]
    async fn an_upload_to_a_name_in_another_case_replaces_the_item() {
        let shared = library();
        let first = shared.put_content("rules.pdf", None, b"first");
        assert_eq!(first.status(), StatusCode::CREATED);
        let (id, etag) = {
            let lock = shared.lock();
            let item = &lock.items["rules.pdf"];
            (item.id.clone(), etag_of(item))
        };
        let second = shared.put_content("Rules.pdf", None, b"second");
        assert_eq!(second.status(), StatusCode::OK);
        let body = axum::body::to_bytes(second.into_body(), usize::MAX)
            .await
            .unwrap();
        let item: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(item["id"], json!(id));
        // The item keeps its name; its eTag changes with the new content.
        assert_eq!(item["name"], json!("rules.pdf"));
        assert_ne!(item["eTag"], json!(etag));
        {
            let lock = shared.lock();
            assert_eq!(lock.items.len(), 2, "the root and one file");
            assert_eq!(&lock.items["rules.pdf"].content[..], b"second");
        }
        // The default of an upload is to replace, so `fail` says the name is taken.
        let refused = shared.put_content(
            "RULES.PDF",
            Some("%40microsoft.graph.conflictBehavior=fail"),
            b"third",
        );
        assert_eq!(
            status_and_code(refused).await,
            (StatusCode::CONFLICT, "nameAlreadyExists".to_owned())
        );
    }
}
