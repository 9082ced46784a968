//! `/console`: the web console (`console/`, a TypeScript SPA built by Vite), served from
//! `CONSOLE_DIR`, read once at start. `/console/assets/*` are content-hashed, so cached for good;
//! every other path under `/console` is the app's `index.html` (its own router reads the path),
//! which browsers never store. `/console/config.json` tells the app how to sign in.
//!
//! Every answer carries a Content-Security-Policy without inline scripts or styles: the console
//! loads its code and styles from its own files only, talks to this origin (and, with OIDC, to
//! the identity provider's), and cannot be framed.

use std::{collections::HashMap, path::Path, sync::Arc};

use axum::{
    Json, Router,
    body::Bytes,
    extract::{Path as UrlPath, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Serialize;

use crate::{error::AppError, state::AppState};

/// One file of the built console, with its gzip twin when the build wrote one. `Bytes`: an
/// answer shares the loaded bytes instead of copying them.
struct Asset {
    body: Bytes,
    gzip: Option<Bytes>,
    content_type: &'static str,
}

/// The built console, read into memory at start (a few hundred KB): a request names a key of
/// this map or nothing, so no request reaches the file system.
pub struct ConsoleFiles {
    index: Option<Asset>,
    assets: HashMap<String, Asset>,
    csp: HeaderValue,
    config: ConsoleConfig,
}

/// What the console reads before anything else (`GET /console/config.json`).
#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct ConsoleConfig {
    /// `development`: pick a role (`POST /dev/token`); `oidc`: the identity provider;
    /// `token`: paste a bearer token (production without `CONSOLE_OIDC_*`).
    sign_in: &'static str,
    oidc: Option<OidcConfig>,
    /// The company's zone (`BUSINESS_TIME_ZONE`): times are shown as its clocks read.
    business_time_zone: &'static str,
    /// The claim of a token holding its roles (`AUTH_ROLES_CLAIM`).
    roles_claim: String,
}

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct OidcConfig {
    issuer: String,
    client_id: String,
}

/// Files larger than this are not the console's (Vite's chunks are tens of KB): refused at start
/// rather than held in memory.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
const MAX_FILES: usize = 500;

fn content_type(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1;
    Some(match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => return None,
    })
}

/// A regular file of at most [`MAX_FILE_BYTES`], read; `None` for anything else. A symbolic link
/// is not followed (`symlink_metadata`): nothing outside `CONSOLE_DIR` is served.
fn read_regular(path: &Path) -> std::io::Result<Option<Bytes>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() && meta.len() <= MAX_FILE_BYTES => {
            Ok(Some(Bytes::from(std::fs::read(path)?)))
        }
        Ok(meta) => {
            if meta.file_type().is_symlink() {
                tracing::warn!(path = %path.display(), "a symbolic link in CONSOLE_DIR is not served: copy the file instead");
            }
            Ok(None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn read_asset(path: &Path, content_type: &'static str) -> std::io::Result<Option<Asset>> {
    let Some(body) = read_regular(path)? else {
        return Ok(None);
    };
    let mut gz = path.as_os_str().to_owned();
    gz.push(".gz");
    let gzip = read_regular(Path::new(&gz))?;
    Ok(Some(Asset {
        body,
        gzip,
        content_type,
    }))
}

impl ConsoleFiles {
    /// Reads `settings.console.dir`. A missing folder is not an error: `/console` then says that
    /// the console is not built.
    pub fn load(state: &AppState) -> std::io::Result<Self> {
        let settings = &state.api.console;
        let dir = &settings.dir;
        let index = read_asset(&dir.join("index.html"), "text/html; charset=utf-8")?;
        let mut assets = HashMap::new();
        if let Ok(entries) = std::fs::read_dir(dir.join("assets")) {
            for entry in entries {
                let entry = entry?;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let Some(kind) = content_type(&name) else {
                    continue;
                };
                if assets.len() >= MAX_FILES {
                    break;
                }
                if let Some(asset) = read_asset(&entry.path(), kind)? {
                    assets.insert(name, asset);
                }
            }
        }
        if index.is_none() {
            tracing::warn!(
                dir = %dir.display(),
                "the web console is not built (no index.html in CONSOLE_DIR): /console answers 404; run scripts/console-build"
            );
        }
        let oidc = settings.oidc.as_ref();
        let extra = oidc.map_or(String::new(), |o| format!(" {}", o.origin()));
        // No inline script or style anywhere: Vite writes both as files, and the app sets styles
        // through the DOM (allowed) never through style attributes in markup. Photos previewed
        // before upload are blob: URLs.
        let csp = format!(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; \
             font-src 'self'; connect-src 'self'{extra}; form-action 'self'{extra}; \
             base-uri 'none'; frame-ancestors 'none'; manifest-src 'self'"
        );
        let config = ConsoleConfig {
            sign_in: match (oidc, state.core.app_env.is_development()) {
                (Some(_), _) => "oidc",
                (None, true) => "development",
                (None, false) => "token",
            },
            oidc: oidc.map(|o| OidcConfig {
                issuer: o.issuer.clone(),
                client_id: o.client_id.clone(),
            }),
            business_time_zone: state.core.business_time_zone.name(),
            roles_claim: state.api.auth.roles_claim.clone(),
        };
        Ok(Self {
            index,
            assets,
            csp: HeaderValue::from_str(&csp).expect("the issuer's origin was checked at start"),
            config,
        })
    }

    fn headers(&self, cache: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
        headers.insert(header::CONTENT_SECURITY_POLICY, self.csp.clone());
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        // The sign-in's authorization code arrives in the address: never sent on as a Referer.
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        headers
    }
}

/// An asset's answer, gzip-encoded when the client accepts it and the build wrote a twin.
fn respond(
    files: &ConsoleFiles,
    asset: &Asset,
    request: &HeaderMap,
    cache: &'static str,
) -> Response {
    let mut headers = files.headers(cache);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    let accepts_gzip = request
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| matches!(p.trim(), "q=0" | "q=0.0" | "q=0.00" | "q=0.000"));
            name.eq_ignore_ascii_case("gzip") && !refused
        });
    match (&asset.gzip, accepts_gzip) {
        (Some(gzip), true) => {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            (headers, gzip.clone()).into_response()
        }
        _ => (headers, asset.body.clone()).into_response(),
    }
}

const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `index.html` and the configuration are never stored: a deploy's new asset names reach every
/// browser at its next load.
const NEVER_STORED: &str = "no-store";

async fn index(State(files): State<Arc<ConsoleFiles>>, request: HeaderMap) -> Response {
    match &files.index {
        Some(index) => respond(&files, index, &request, NEVER_STORED),
        None => AppError::Unavailable(
            "the web console is not built: run scripts/console-build (or set CONSOLE_DIR)".into(),
        )
        .into_response(),
    }
}

async fn asset(
    State(files): State<Arc<ConsoleFiles>>,
    UrlPath(name): UrlPath<String>,
    request: HeaderMap,
) -> Response {
    match files.assets.get(&name) {
        Some(asset) => respond(&files, asset, &request, IMMUTABLE),
        None => AppError::NotFound("console asset").into_response(),
    }
}

async fn no_asset() -> Response {
    AppError::NotFound("console asset").into_response()
}

async fn config(State(files): State<Arc<ConsoleFiles>>) -> Response {
    let mut headers = files.headers(NEVER_STORED);
    headers.remove(header::CONTENT_SECURITY_POLICY);
    (StatusCode::OK, headers, Json(files.config.clone())).into_response()
}

/// `/console`, `/console/config.json`, `/console/assets/{file}` and the app's own paths.
pub fn router(files: ConsoleFiles) -> Router<AppState> {
    Router::new()
        .route("/console", get(index))
        .route("/console/", get(index))
        .route("/console/config.json", get(config))
        // Any path under assets/ is a file or a 404, never the app (a missing chunk must fail
        // as one, not load index.html as JavaScript).
        .route("/console/assets/{*file}", get(asset))
        .route("/console/assets", get(no_asset))
        .route("/console/assets/", get(no_asset))
        .route("/console/{*path}", get(index))
        .with_state(Arc::new(files))
}

/// Whether `path` (as registered) is one of the console's routes: open without a token (the
/// console's files are public; its data comes from the API with the user's token).
pub fn is_console_route(path: &str) -> bool {
    path == "/console" || path.starts_with("/console/")
}

#[cfg(test)]
mod tests {
    use super::content_type;

    #[test]
    fn only_known_kinds_of_file_are_served() {
        assert_eq!(
            content_type("index-3f2a.js"),
            Some("text/javascript; charset=utf-8")
        );
        assert_eq!(
            content_type("index-3f2a.css"),
            Some("text/css; charset=utf-8")
        );
        assert_eq!(content_type("index-3f2a.js.gz"), None);
        assert_eq!(content_type("Makefile"), None);
    }
}
