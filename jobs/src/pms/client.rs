//! A client of Hostaway's public API v1 (or anything that speaks it), as its documentation
//! describes it:
//!
//! - **Token**: `POST {base}/accessTokens` (form `grant_type=client_credentials`, `client_id`,
//!   `client_secret`, `scope=general`) answers an `access_token` sent as a bearer token. It lives
//!   for months and is valid only a second after it is issued, so it is kept, encrypted
//!   (`domain::crypto::FieldCipher`), in `pms_tokens`, shared by every worker: one fetches it
//!   under an advisory lock taken without waiting, one request at a time, while the others look
//!   for it in the table (no worker holds a pool connection across a wait: the job's lease
//!   renewals need them). It is renewed before it runs out and after the PMS refuses it
//!   (401/403): that token is discarded, a new one fetched once, and the request sent again.
//! - **Budget**: every request, the token's too, first takes a slot from the shared limiter
//!   ([`super::limiter`]).
//! - **Failures**: a 429 waits its `Retry-After` (else the backoff); a 5xx, a network failure or
//!   a timeout waits an exponential backoff with jitter; after `PMS_MAX_RETRIES` retries the call
//!   fails as [`PmsError::Unavailable`]. An answer `{"status": "fail"}` is [`PmsError::Fail`].
//! - **Health**: each call's outcome is recorded (`domain::reporting::connection`) so that the
//!   reporting health answers from the last call instead of calling the PMS itself.
//! - **Metrics**: every request sent, the token's too, is counted by outcome, and each 429 on its
//!   own (`villa_pms_requests_total`, `villa_pms_throttled_total`); the limiter records its waits.
//!
//! The token and the secret never reach a log line or a `Debug` output.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use domain::{
    crypto::FieldCipher,
    metrics::names,
    reporting::{connection, tokens},
    settings::{PmsCredentials, PmsSettings},
};
use redis::aio::ConnectionManager;
use reqwest::{StatusCode, header};
use serde_json::Value;
use sqlx::PgPool;

use domain::remote::{describe, jitter};

use super::limiter::RateLimiter;

/// The longest one backoff waits.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest a `Retry-After` is honoured for: a longer one is waited this long, then the
/// request is tried again (and counts as a retry).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// How often an unchanged connection state is handed to `connection::record` (which throttles
/// its writes again): not once per page of a sync.
const RECORD_EVERY: Duration = Duration::from_secs(10);
/// How much of a failure's text is kept (in the run's error, the health's reason).
const MAX_REASON: usize = 300;
/// The longest a new token is waited for before its first use. Its `usable_from` comes from the
/// clock of the host that fetched it, which may run ahead of ours; Hostaway asks for a second.
const MAX_USABLE_WAIT: Duration = Duration::from_secs(2);
/// How long one token request may hold the account's lock: its slot from the limiter and the
/// request itself. The lock's transaction holds a pool connection all along.
const TOKEN_LOCKED_FOR: Duration = Duration::from_secs(15);
/// The longest one token request may take (less than `PMS_TIMEOUT_SECS` when that is longer).
const TOKEN_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a worker waiting for another's token request looks for the token.
const TOKEN_POLL: Duration = Duration::from_millis(250);
/// How long a worker waits for another's token request before it gives up (its job tries again).
const TOKEN_WAIT: Duration = Duration::from_secs(60);

/// Why a call to the PMS failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PmsError {
    #[error("the PMS is not configured (PMS_CLIENT_ID and PMS_CLIENT_SECRET)")]
    NotConfigured,
    /// The PMS refused the credentials (or a token it had just issued): no retry can help.
    #[error("the PMS refused the credentials: {0}")]
    Unauthorized(String),
    /// The PMS answered `{"status": "fail"}`; the text is its `result`.
    #[error("the PMS answered a failure: {0}")]
    Fail(String),
    /// 5xx, 429 or network failures, still there after the retries.
    #[error("the PMS is unavailable: {0}")]
    Unavailable(String),
    /// An answer that is not what the PMS's documentation describes.
    #[error("unexpected answer from the PMS: {0}")]
    Protocol(String),
}

/// One page of a list.
#[derive(Debug, Clone, Default)]
pub struct PmsPage {
    /// The records as the PMS sent them.
    pub records: Vec<Value>,
    /// The answer's `count`: records matching the filters, all pages together.
    pub count: Option<i64>,
    /// The answer's `totalPages`.
    pub total_pages: Option<i64>,
}

/// A client of one PMS account. Cheap to clone (the clones share the token and the limiter).
#[derive(Clone)]
pub struct PmsClient {
    inner: Arc<Inner>,
}

struct Inner {
    base_url: String,
    credentials: PmsCredentials,
    /// The row of `pms_tokens`: base URL and client id.
    account: String,
    pool: PgPool,
    cipher: FieldCipher,
    http: reqwest::Client,
    limiter: RateLimiter,
    max_retries: u32,
    retry_base: Duration,
    timeout: Duration,
    /// The token this process uses; a tokio mutex so that one task fetches while others wait.
    token: tokio::sync::Mutex<Option<Token>>,
    /// The connection state last handed to `connection::record`, and when.
    recorded: Mutex<Option<(bool, Instant)>>,
}

impl std::fmt::Debug for PmsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmsClient")
            .field("base_url", &self.inner.base_url)
            .field("client_id", &self.inner.credentials.client_id)
            .field("limiter", &self.inner.limiter)
            .finish_non_exhaustive()
    }
}

/// A bearer token, with its stored (encrypted) form to discard exactly that one.
#[derive(Clone)]
struct Token {
    bearer: String,
    stored: Vec<u8>,
    usable_from: DateTime<Utc>,
    expires_at: DateTime<Utc>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("usable_from", &self.usable_from)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Token {
    fn from_stored(cipher: &FieldCipher, stored: tokens::StoredToken) -> Option<Token> {
        match cipher.decrypt(&stored.token) {
            Ok(bearer) => Some(Token {
                bearer,
                stored: stored.token,
                usable_from: stored.usable_from,
                expires_at: stored.expires_at,
            }),
            Err(error) => {
                // A changed DATA_ENCRYPTION_KEY: fetch a new token rather than fail.
                tracing::warn!(%error, "the stored PMS token does not decrypt; fetching a new one");
                None
            }
        }
    }

    fn needs_renewal(&self, now: DateTime<Utc>) -> bool {
        needs_renewal(self.usable_from, self.expires_at, now)
    }

    /// Hostaway refuses a token used within a second of its issue. `usable_from` may come from
    /// another host's clock: whatever it says, at most [`MAX_USABLE_WAIT`] is waited.
    async fn wait_until_usable(&self) {
        if let Ok(wait) = (self.usable_from - Utc::now()).to_std() {
            tokio::time::sleep(wait.min(MAX_USABLE_WAIT)).await;
        }
    }
}

/// Whether a token should be replaced now: when less than a day or a tenth of its lifetime is
/// left, whichever is more, but never before half its lifetime (a PMS issuing short-lived tokens
/// would otherwise have one fetched per request).
fn needs_renewal(
    usable_from: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> bool {
    let lifetime = expires_at - usable_from;
    let margin = TimeDelta::days(1).max(lifetime / 10).min(lifetime / 2);
    expires_at - now < margin
}

/// A failure inside the client: the PMS's, or our own token store's (which says nothing about
/// the PMS's health).
enum Fault {
    Pms(PmsError),
    Store(String),
}

impl From<PmsError> for Fault {
    fn from(e: PmsError) -> Self {
        Fault::Pms(e)
    }
}

impl From<domain::Error> for Fault {
    fn from(e: domain::Error) -> Self {
        Fault::Store(e.to_string())
    }
}

impl From<sqlx::Error> for Fault {
    fn from(e: sqlx::Error) -> Self {
        Fault::Store(e.to_string())
    }
}

impl From<Fault> for PmsError {
    fn from(f: Fault) -> Self {
        match f {
            Fault::Pms(e) => e,
            Fault::Store(e) => PmsError::Unavailable(format!("PMS token store: {e}")),
        }
    }
}

/// What one token request came to.
enum Fetched {
    Token(Token),
    /// Worth another try (429, 5xx, network failure, timeout), after `wait` when the PMS said.
    Retry {
        wait: Option<Duration>,
        reason: String,
    },
}

/// What one sent request came to, before retries decide.
enum Sent {
    /// An answer to read: 2xx, or a 4xx other than 429.
    Answer(StatusCode, Vec<u8>),
    /// Worth another try: 429, 5xx, network failure, timeout.
    Retry {
        wait: Option<Duration>,
        reason: String,
    },
}

impl PmsClient {
    /// A client of the account in `settings`; `None` when the PMS is not configured. `redis`
    /// holds the shared request budget (`{redis_prefix}:pms:rate:<client id>`).
    pub fn new(
        settings: &PmsSettings,
        pool: PgPool,
        redis: ConnectionManager,
        redis_prefix: &str,
        cipher: FieldCipher,
        http: reqwest::Client,
    ) -> Option<PmsClient> {
        let credentials = settings.credentials.clone()?;
        let base_url = settings.base_url.trim_end_matches('/').to_owned();
        let limiter = RateLimiter::new(
            redis,
            RateLimiter::key(redis_prefix, &credentials.client_id),
            settings.rate_limit,
            settings.rate_window,
        );
        Some(PmsClient {
            inner: Arc::new(Inner {
                account: format!("{base_url} {}", credentials.client_id),
                base_url,
                credentials,
                pool,
                cipher,
                http,
                limiter,
                max_retries: settings.max_retries,
                retry_base: settings.retry_base,
                timeout: settings.request_timeout,
                token: tokio::sync::Mutex::new(None),
                recorded: Mutex::new(None),
            }),
        })
    }

    /// Whether the PMS answers with our credentials: a token and `GET /listings?limit=1`, without
    /// retries (a renewal of a refused token excepted). Records the connection state.
    pub async fn probe(&self) -> Result<(), PmsError> {
        let outcome = self.list("listings", &[("limit", "1".to_owned())], 0).await;
        self.record(&outcome).await;
        outcome.map(|_| ()).map_err(PmsError::from)
    }

    /// `GET /listings?limit&offset`.
    pub async fn listings_page(&self, offset: u64, limit: u32) -> Result<PmsPage, PmsError> {
        let query = [("limit", limit.to_string()), ("offset", offset.to_string())];
        let outcome = self.list("listings", &query, self.inner.max_retries).await;
        self.record(&outcome).await;
        outcome.map_err(PmsError::from)
    }

    /// `GET /reservations` from the oldest activity to the newest (`sortOrder=updatedOn`), after
    /// the reservation `after_id` (the last id of the previous page), only those with activity
    /// since `activity_since` when given (`latestActivityStart`).
    ///
    /// Oldest activity first, so that a reservation changed while a sync pages through them moves
    /// behind the cursor and is met again, rather than ahead of it and skipped.
    pub async fn reservations_page(
        &self,
        after_id: Option<i64>,
        limit: u32,
        activity_since: Option<NaiveDate>,
    ) -> Result<PmsPage, PmsError> {
        let mut query = vec![
            ("limit", limit.to_string()),
            ("sortOrder", "updatedOn".to_owned()),
        ];
        if let Some(after_id) = after_id {
            query.push(("afterId", after_id.to_string()));
        }
        if let Some(since) = activity_since {
            query.push(("latestActivityStart", since.format("%Y-%m-%d").to_string()));
        }
        let outcome = self
            .list("reservations", &query, self.inner.max_retries)
            .await;
        self.record(&outcome).await;
        outcome.map_err(PmsError::from)
    }

    /// A list request with the token, renewed once if the PMS refuses it.
    async fn list(
        &self,
        path: &str,
        query: &[(&str, String)],
        retries: u32,
    ) -> Result<PmsPage, Fault> {
        let url = format!("{}/{path}", self.inner.base_url);
        let mut token = self.token(None).await?;
        let mut renewed = false;
        loop {
            let (status, body) = self
                .send(
                    || {
                        self.inner
                            .http
                            .get(&url)
                            .query(query)
                            .bearer_auth(&token.bearer)
                    },
                    retries,
                )
                .await?;
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                if renewed {
                    return Err(PmsError::Unauthorized(format!(
                        "a token the PMS had just issued was refused ({status})"
                    ))
                    .into());
                }
                tracing::info!(%status, path, "the PMS refused its token; renewing it");
                self.discard(&token).await?;
                token = self.token(Some(&token.stored)).await?;
                renewed = true;
                continue;
            }
            return parse_page(status, &body).map_err(Fault::from);
        }
    }

    /// The token to use: this process's, else the stored one, else a new one. `refused` is the
    /// stored form of a token the PMS just refused, never to be used again.
    async fn token(&self, refused: Option<&[u8]>) -> Result<Token, Fault> {
        let mut mine = self.inner.token.lock().await;
        let now = Utc::now();
        if refused.is_none()
            && let Some(token) = mine.as_ref()
            && !token.needs_renewal(now)
        {
            let token = token.clone();
            drop(mine);
            token.wait_until_usable().await;
            return Ok(token);
        }
        let token = self.stored_or_fetched(refused).await?;
        *mine = Some(token.clone());
        drop(mine);
        token.wait_until_usable().await;
        Ok(token)
    }

    /// The stored token when it is good, else a new one. One worker at a time fetches it, holding
    /// the account's advisory lock (`pg_try_advisory_xact_lock`) for one request at most
    /// ([`TOKEN_LOCKED_FOR`]): the lock's transaction holds a pool connection, so it is never held
    /// across a wait. A failed request lets go of the lock before its backoff (another worker may
    /// try meanwhile); a worker that finds the lock taken holds nothing either, and looks at the
    /// table again every [`TOKEN_POLL`] until the token is there or the lock is free.
    async fn stored_or_fetched(&self, refused: Option<&[u8]>) -> Result<Token, Fault> {
        let inner = &self.inner;
        let usable = |stored: Option<tokens::StoredToken>| {
            stored
                .filter(|s| refused != Some(s.token.as_slice()))
                .and_then(|s| Token::from_stored(&inner.cipher, s))
                .filter(|t| !t.needs_renewal(Utc::now()))
        };
        let mut failures = 0u32;
        let mut waiting_since = Instant::now();
        loop {
            let mut tx = inner.pool.begin().await?;
            let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(hashtext($1))")
                .bind(&inner.account)
                .fetch_one(&mut *tx)
                .await?;
            if let Some(token) = usable(tokens::get(&mut tx, &inner.account).await?) {
                tx.commit().await?;
                return Ok(token);
            }
            if !locked {
                // Another worker is fetching it.
                tx.rollback().await?;
                if waiting_since.elapsed() >= TOKEN_WAIT {
                    return Err(PmsError::Unavailable(
                        "another worker's PMS token request did not end in time".to_owned(),
                    )
                    .into());
                }
                tokio::time::sleep(TOKEN_POLL).await;
                continue;
            }
            let fetched = tokio::time::timeout(TOKEN_LOCKED_FOR, self.fetch_token())
                .await
                .unwrap_or_else(|_| {
                    Ok(Fetched::Retry {
                        wait: None,
                        reason: format!(
                            "the token request took over {} s",
                            TOKEN_LOCKED_FOR.as_secs()
                        ),
                    })
                });
            let (wait, reason) = match fetched {
                Ok(Fetched::Token(token)) => {
                    let stored = tokens::StoredToken {
                        token: token.stored.clone(),
                        usable_from: token.usable_from,
                        expires_at: token.expires_at,
                    };
                    tokens::put(&mut tx, &inner.account, &stored).await?;
                    tx.commit().await?;
                    tracing::info!(expires_at = %token.expires_at, "new PMS access token stored");
                    return Ok(token);
                }
                Ok(Fetched::Retry { wait, reason }) => (wait, reason),
                Err(fault) => {
                    tx.rollback().await?;
                    return Err(fault);
                }
            };
            // Let go of the lock, and of the connection, before waiting.
            tx.rollback().await?;
            if failures >= inner.max_retries {
                let tries = failures + 1;
                return Err(
                    PmsError::Unavailable(format!("{reason} (after {tries} tries)")).into(),
                );
            }
            let wait = wait.unwrap_or_else(|| backoff(inner.retry_base, failures, jitter()));
            tracing::warn!(%reason, retry = failures + 1, ?wait, "PMS token request failed; retrying");
            tokio::time::sleep(wait).await;
            failures += 1;
            waiting_since = Instant::now();
        }
    }

    /// `POST /accessTokens`, one request (the caller retries, not holding the lock meanwhile).
    /// A refusal of the credentials is [`PmsError::Unauthorized`].
    async fn fetch_token(&self) -> Result<Fetched, Fault> {
        let inner = &self.inner;
        let url = format!("{}/accessTokens", inner.base_url);
        let form = form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "client_credentials")
            .append_pair("client_id", &inner.credentials.client_id)
            .append_pair("client_secret", &inner.credentials.client_secret)
            .append_pair("scope", "general")
            .finish();
        inner.limiter.acquire().await;
        let request = inner
            .http
            .post(&url)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(form);
        let (status, body) = match send_once(request, inner.timeout.min(TOKEN_TIMEOUT)).await {
            Sent::Answer(status, body) => (status, body),
            Sent::Retry { wait, reason } => return Ok(Fetched::Retry { wait, reason }),
        };
        let issued = Utc::now();
        if matches!(
            status,
            StatusCode::BAD_REQUEST | StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
        ) {
            return Err(PmsError::Unauthorized(format!(
                "{status} from /accessTokens: {}",
                failure_text(&body)
            ))
            .into());
        }
        if !status.is_success() {
            return Err(PmsError::Protocol(format!(
                "{status} from /accessTokens: {}",
                failure_text(&body)
            ))
            .into());
        }
        let answer: Value = serde_json::from_slice(&body).map_err(|_| {
            PmsError::Protocol("the answer of /accessTokens is not JSON".to_owned())
        })?;
        let Some(bearer) = answer
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        else {
            return Err(
                PmsError::Protocol("/accessTokens answered no access_token".to_owned()).into(),
            );
        };
        let lifetime = answer
            .get("expires_in")
            .and_then(int_of)
            .filter(|s| *s > 0)
            .ok_or_else(|| {
                PmsError::Protocol("/accessTokens answered no positive expires_in".to_owned())
            })?;
        // Hostaway: a new token is valid one second after it is issued.
        let usable_from = issued + TimeDelta::seconds(1);
        let expires_at = TimeDelta::try_seconds(lifetime)
            .and_then(|d| issued.checked_add_signed(d))
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        Ok(Fetched::Token(Token {
            stored: inner.cipher.encrypt(bearer),
            bearer: bearer.to_owned(),
            usable_from,
            expires_at,
        }))
    }

    /// Removes a refused token from the store (only if it is still that one) and from this
    /// process.
    async fn discard(&self, token: &Token) -> Result<(), Fault> {
        let mut conn = self.inner.pool.acquire().await?;
        tokens::discard(&mut conn, &self.inner.account, &token.stored).await?;
        let mut mine = self.inner.token.lock().await;
        if mine.as_ref().is_some_and(|t| t.stored == token.stored) {
            *mine = None;
        }
        Ok(())
    }

    /// Sends the request `build` makes, through the limiter, retrying 429, 5xx and network
    /// failures up to `retries` times. Answers the status and body of anything else.
    async fn send<F>(&self, build: F, retries: u32) -> Result<(StatusCode, Vec<u8>), PmsError>
    where
        F: Fn() -> reqwest::RequestBuilder + Send + Sync,
    {
        let inner = &self.inner;
        let mut retry = 0u32;
        loop {
            inner.limiter.acquire().await;
            match send_once(build(), inner.timeout).await {
                Sent::Answer(status, body) => return Ok((status, body)),
                Sent::Retry { reason, .. } if retry >= retries => {
                    let tries = retry + 1;
                    return Err(PmsError::Unavailable(format!(
                        "{reason} (after {tries} tries)"
                    )));
                }
                Sent::Retry { wait, reason } => {
                    let wait = wait.unwrap_or_else(|| backoff(inner.retry_base, retry, jitter()));
                    tracing::warn!(%reason, retry = retry + 1, ?wait, "PMS request failed; retrying");
                    tokio::time::sleep(wait).await;
                    retry += 1;
                }
            }
        }
    }

    /// Hands the outcome of a call to the health's record, unless the same state was handed
    /// over a moment ago. Failures of our own token store say nothing about the PMS.
    async fn record<T>(&self, outcome: &Result<T, Fault>) {
        let (connected, reason) = match outcome {
            Ok(_) | Err(Fault::Pms(PmsError::Fail(_))) => (true, None),
            Err(Fault::Pms(PmsError::NotConfigured)) | Err(Fault::Store(_)) => return,
            Err(Fault::Pms(error)) => (false, Some(error.to_string())),
        };
        let now = Instant::now();
        if let Ok(mut last) = self.inner.recorded.lock() {
            // Only "still connected" is skipped: a failure is always handed over, with its reason.
            let fresh = matches!(*last, Some((true, at))
                if connected && now.duration_since(at) < RECORD_EVERY);
            if fresh {
                return;
            }
            *last = Some((connected, now));
        }
        let written = async {
            let mut conn = self.inner.pool.acquire().await?;
            connection::record(&mut conn, connected, reason.as_deref()).await
        }
        .await;
        if let Err(error) = written {
            tracing::warn!(%error, "PMS connection state not recorded");
        }
    }
}

/// Sends one request, waiting at most `timeout` for its answer (the caller took its slot from the
/// limiter): the answer to read, or why it is worth another try. Every request the client sends
/// passes here, so here it is counted.
async fn send_once(request: reqwest::RequestBuilder, timeout: Duration) -> Sent {
    match request.timeout(timeout).send().await {
        Ok(response) => {
            let status = response.status();
            let retry_after = response
                .headers()
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, Utc::now()));
            let body = response.bytes().await;
            count_request(request_outcome(Some(status), body.is_ok()));
            if status == StatusCode::TOO_MANY_REQUESTS {
                metrics::counter!(names::PMS_THROTTLED).increment(1);
            }
            match body {
                Ok(_) if status == StatusCode::TOO_MANY_REQUESTS => Sent::Retry {
                    wait: retry_after,
                    reason: "rate limited (429)".to_owned(),
                },
                Ok(_) if status.is_server_error() => Sent::Retry {
                    wait: None,
                    reason: format!("{status}"),
                },
                Ok(body) => Sent::Answer(status, body.to_vec()),
                Err(error) => Sent::Retry {
                    wait: None,
                    reason: describe(error),
                },
            }
        }
        Err(error) => {
            count_request(request_outcome(None, false));
            Sent::Retry {
                wait: None,
                reason: describe(error),
            }
        }
    }
}

/// The `outcome` label of one request in `villa_pms_requests_total`: by its status when one came
/// back (`status`; `body_read` when its body did too), else `failed` (network failure, timeout).
/// A 2xx whose body was lost is `failed`: nothing usable came back.
fn request_outcome(status: Option<StatusCode>, body_read: bool) -> &'static str {
    match status {
        Some(StatusCode::TOO_MANY_REQUESTS) => "throttled",
        Some(StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) => "unauthorized",
        Some(status) if status.is_success() && body_read => "ok",
        _ => "failed",
    }
}

fn count_request(outcome: &'static str) {
    metrics::counter!(names::PMS_REQUESTS, "outcome" => outcome).increment(1);
}

/// Reads a list answer: `{status, result: [...], count, totalPages, ...}`.
fn parse_page(status: StatusCode, body: &[u8]) -> Result<PmsPage, PmsError> {
    let Ok(answer) = serde_json::from_slice::<Value>(body) else {
        return Err(PmsError::Protocol(format!(
            "{status}: the answer is not JSON"
        )));
    };
    if answer.get("status").and_then(Value::as_str) == Some("fail") {
        return Err(PmsError::Fail(failure_text(body)));
    }
    if !status.is_success() {
        return Err(PmsError::Protocol(format!(
            "{status}: {}",
            failure_text(body)
        )));
    }
    let count = answer.get("count").and_then(int_of);
    let total_pages = answer.get("totalPages").and_then(int_of);
    let records = match answer {
        Value::Object(mut fields) => match fields.remove("result") {
            Some(Value::Array(records)) => records,
            Some(Value::Null) | None => Vec::new(),
            Some(_) => {
                return Err(PmsError::Protocol(
                    "the answer's result is not a list".to_owned(),
                ));
            }
        },
        _ => return Err(PmsError::Protocol("the answer is not an object".to_owned())),
    };
    Ok(PmsPage {
        records,
        count,
        total_pages,
    })
}

/// What a failed answer says: its `result` or `message`, else the start of the body.
fn failure_text(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(answer) => match answer.get("result").or_else(|| answer.get("message")) {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => answer.to_string(),
        },
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.trim();
    if text.chars().count() > MAX_REASON {
        let cut: String = text.chars().take(MAX_REASON).collect();
        format!("{cut}…")
    } else if text.is_empty() {
        "(no details)".to_owned()
    } else {
        text.to_owned()
    }
}

/// An integer sent as a JSON number or as a numeric string (both occur in Hostaway's answers).
pub(crate) fn int_of(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The wait a `Retry-After` header asks for ([`domain::remote::parse_retry_after`]), at most
/// [`MAX_RETRY_AFTER`].
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    domain::remote::parse_retry_after(value, now).map(|wait| wait.min(MAX_RETRY_AFTER))
}

/// [`domain::remote::backoff`] capped at [`MAX_BACKOFF`].
pub fn backoff(base: Duration, retry: u32, unit: f64) -> Duration {
    domain::remote::backoff(base, retry, unit, MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;
    use serde_json::json;

    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn retry_after_is_seconds_or_a_date_and_bounded() {
        let now = Utc.with_ymd_and_hms(2015, 10, 21, 7, 28, 0).unwrap();
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:09 GMT", now),
            Some(Duration::from_secs(9))
        );
        // A date already past: go now.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("86400", now), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }

    #[test]
    fn backoff_doubles_within_its_jitter_and_is_capped() {
        let base = Duration::from_secs(1);
        for retry in 0..5 {
            let step = Duration::from_secs(1 << retry);
            assert_eq!(backoff(base, retry, 0.0), step / 2);
            assert_eq!(backoff(base, retry, 1.0), step);
            let any = backoff(base, retry, jitter());
            assert!(any >= step / 2 && any <= step, "{any:?} outside {step:?}");
        }
        assert_eq!(backoff(base, 5, 1.0), MAX_BACKOFF);
        assert_eq!(backoff(base, 40, 1.0), MAX_BACKOFF);
        assert_eq!(backoff(base, u32::MAX, 0.0), MAX_BACKOFF / 2);
        assert_eq!(
            backoff(Duration::from_millis(20), 2, 1.0),
            Duration::from_millis(80)
        );
        // Out-of-range jitter is clamped.
        assert_eq!(backoff(base, 0, 7.0), base);
    }

    #[test]
    fn a_token_is_renewed_a_day_or_a_tenth_before_it_runs_out() {
        // 24 months: renewed once less than a tenth (73 days) is left.
        let issued = at(0);
        let expires = issued + TimeDelta::days(730);
        assert!(!needs_renewal(issued, expires, issued));
        assert!(!needs_renewal(
            issued,
            expires,
            expires - TimeDelta::days(74)
        ));
        assert!(needs_renewal(
            issued,
            expires,
            expires - TimeDelta::days(72)
        ));
        // Five days: a day before.
        let expires = issued + TimeDelta::days(5);
        assert!(!needs_renewal(
            issued,
            expires,
            expires - TimeDelta::hours(25)
        ));
        assert!(needs_renewal(
            issued,
            expires,
            expires - TimeDelta::hours(23)
        ));
        // An hour: not fetched again for every request, only past half its life.
        let expires = issued + TimeDelta::hours(1);
        assert!(!needs_renewal(
            issued,
            expires,
            issued + TimeDelta::minutes(29)
        ));
        assert!(needs_renewal(
            issued,
            expires,
            issued + TimeDelta::minutes(31)
        ));
        assert!(needs_renewal(
            issued,
            expires,
            expires + TimeDelta::seconds(1)
        ));
    }

    #[test]
    fn list_answers_are_read_as_documented() {
        let body = json!({"status": "success", "result": [{"id": 1}, {"id": 2}],
            "count": "12", "limit": 2, "offset": null, "page": 1, "totalPages": 6});
        let page = parse_page(StatusCode::OK, body.to_string().as_bytes()).unwrap();
        assert_eq!(page.records.len(), 2);
        assert_eq!(page.count, Some(12));
        assert_eq!(page.total_pages, Some(6));

        let fail = json!({"status": "fail", "result": "Unknown listing"});
        assert_eq!(
            parse_page(StatusCode::OK, fail.to_string().as_bytes()).unwrap_err(),
            PmsError::Fail("Unknown listing".to_owned())
        );
        let throttled = json!({"status": "fail", "message": "too many requests"});
        assert_eq!(
            parse_page(StatusCode::BAD_REQUEST, throttled.to_string().as_bytes()).unwrap_err(),
            PmsError::Fail("too many requests".to_owned())
        );
        assert!(matches!(
            parse_page(StatusCode::OK, b"<html>"),
            Err(PmsError::Protocol(_))
        ));
        assert!(matches!(
            parse_page(StatusCode::NOT_FOUND, b"{}"),
            Err(PmsError::Protocol(_))
        ));
        let not_a_list = json!({"status": "success", "result": {"id": 1}});
        assert!(matches!(
            parse_page(StatusCode::OK, not_a_list.to_string().as_bytes()),
            Err(PmsError::Protocol(_))
        ));
    }

    #[test]
    fn requests_are_counted_by_what_came_back() {
        let outcome = request_outcome;
        assert_eq!(outcome(Some(StatusCode::OK), true), "ok");
        assert_eq!(outcome(Some(StatusCode::NO_CONTENT), true), "ok");
        assert_eq!(outcome(Some(StatusCode::OK), false), "failed");
        assert_eq!(
            outcome(Some(StatusCode::TOO_MANY_REQUESTS), false),
            "throttled"
        );
        assert_eq!(
            outcome(Some(StatusCode::UNAUTHORIZED), true),
            "unauthorized"
        );
        assert_eq!(outcome(Some(StatusCode::FORBIDDEN), true), "unauthorized");
        assert_eq!(outcome(Some(StatusCode::BAD_REQUEST), true), "failed");
        assert_eq!(outcome(Some(StatusCode::NOT_FOUND), true), "failed");
        assert_eq!(outcome(Some(StatusCode::BAD_GATEWAY), true), "failed");
        assert_eq!(outcome(None, false), "failed");
    }

    #[test]
    fn integers_come_as_numbers_or_strings() {
        assert_eq!(int_of(&json!(42)), Some(42));
        assert_eq!(int_of(&json!("42")), Some(42));
        assert_eq!(int_of(&json!(42.0)), Some(42));
        assert_eq!(int_of(&json!(42.5)), None);
        assert_eq!(int_of(&json!("x")), None);
        assert_eq!(int_of(&json!(null)), None);
    }

    #[test]
    fn debug_output_never_shows_the_token() {
        let token = Token {
            bearer: "eyJ-secret-bearer".to_owned(),
            stored: vec![1, 2, 3],
            usable_from: at(0),
            expires_at: at(60),
        };
        let shown = format!("{token:?}");
        assert!(!shown.contains("secret"), "{shown}");
    }
}
