//! A loopback fake of Hostaway's public API v1, built from its public documentation only, for
//! development (`scripts/run` starts the `fake-pms` binary) and for the tests and the benchmark
//! (which start it in-process with [`FakePms::start`]). Production never starts it.
//!
//! It answers what the platform's PMS client uses, the way the documentation describes it:
//! - `POST /v1/accessTokens` (form `grant_type=client_credentials`, `client_id`,
//!   `client_secret`, `scope=general`) → `{token_type, expires_in, access_token}`; a token is
//!   only valid `token_delay` after it is issued (403 before), and a revoked one answers 403;
//!   `DELETE /v1/accessTokens?token=` revokes one.
//! - `GET /v1/listings` (`limit`, `offset`), `GET /v1/listings/{id}`,
//!   `GET /v1/reservations` (`limit`, `offset`, `afterId`, `sortOrder`, `listingId`, `channelId`,
//!   `arrivalStartDate`, `arrivalEndDate`, `latestActivityStart`, `latestActivityEnd`),
//!   `GET /v1/reservations/{id}`, in the envelope `{status, result, count, limit, offset, page,
//!   totalPages}` (`status: "fail"` with the message in `result` on errors).
//! - Reservations in Hostaway's order, `updatedOn DESC, id DESC` (`sortOrder=updatedOn`: oldest
//!   first); `afterId` continues after that record's current place, so a record changed during a
//!   pass moves between pages exactly as on Hostaway.
//! - The rate limits (15 requests per 10 s per IP, 20 per account, over every request), answered
//!   with 429, `Retry-After` and `{status: "fail", message}`.
//!
//! - Hostaway's unified webhooks (`webhook.rs`): when a [`WebhookTarget`] is set
//!   ([`FakePmsConfig::webhook`], [`Control::set_webhook`], the binary's `--webhook-url`), every
//!   reservation stored through [`Control::add_reservation`] or [`Control::update_reservation`]
//!   is posted to it as `{event: "reservation.created" | "reservation.updated", accountId, data}`
//!   with HTTP Basic credentials, in a task of its own, retried on network errors, 5xx and 429
//!   (within seconds; Hostaway within an hour), never on another answer.
//!
//! and switches a real PMS does not have: failures (500/502/503 with the body a proxy or the
//! application would send), slowness, scripted 429s, revoked tokens, other limits, data changed
//! between two pages, records deleted (no longer returned, as Hostaway does), bookings made or
//! changed (each posting its webhook). [`Control`] holds them in-process; for the binary, the
//! `/_fake/*` routes (JSON bodies, any content type):
//! - `POST /_fake/fail` `{status, count}`, `/_fake/delay` `{ms}`, `/_fake/throttle`
//!   `{count, retryAfterSecs}`, `/_fake/limits` `{ip, account}`, `/_fake/revoke`,
//!   `/_fake/delete` `{listings, reservations}`, `/_fake/reset`; `GET /_fake/stats` (counters,
//!   webhooks delivered, failed and under way, switches);
//! - `POST /_fake/reservations` (a new booking: `listingMapId`, `arrivalDate`, `departureDate`,
//!   any other field; posts `reservation.created`), `PATCH /_fake/reservations/{id}` (the fields
//!   to change, e.g. `{"departureDate": "2026-12-05"}` or `{"status": "cancelled"}`; posts
//!   `reservation.updated`), `GET /_fake/reservations/{id}`; each answers the record as stored.

mod seed;
mod server;
mod store;
mod webhook;

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{
    Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use std::time::{Duration, Instant};

use chrono::{NaiveDate, Utc};
use serde_json::{Value, json};

pub use seed::{seed_listings, seed_reservations};
pub use webhook::{DELIVERY_TIMEOUT, RETRY_DELAYS};

use crate::store::{Meta, Store};
use crate::webhook::Event;

/// Where the fake posts Hostaway's unified webhooks (`reservation.created`,
/// `reservation.updated`), and the HTTP Basic credentials it sends (none when both are empty),
/// as a unified webhook is configured on Hostaway (`url`, `login`, `password`).
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookTarget {
    pub url: String,
    pub user: String,
    pub password: String,
}

/// The password is never printed (the configuration is logged).
impl std::fmt::Debug for WebhookTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookTarget")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &"***")
            .finish()
    }
}

/// What the fake serves and how strict it is.
#[derive(Debug, Clone)]
pub struct FakePmsConfig {
    /// Listings seeded (36 by default).
    pub listings: usize,
    /// Reservations seeded, arrivals from a year before `today` to a year after (1200 by default).
    pub reservations: usize,
    /// Seed of the generated data: the same seed gives the same records.
    pub seed: u64,
    /// The account id (`client_id`) and API key (`client_secret`) a token is issued for.
    pub client_id: String,
    pub client_secret: String,
    /// Requests allowed per window per client IP; None lifts the limit (Hostaway: 15 per 10 s).
    pub ip_limit: Option<(u32, Duration)>,
    /// Requests allowed per window for the account; None lifts it (Hostaway: 20 per 10 s).
    pub account_limit: Option<(u32, Duration)>,
    /// How long after being issued a token becomes valid (Hostaway: 1 s).
    pub token_delay: Duration,
    /// A token's lifetime (`expires_in`; Hostaway: 24 months).
    pub token_ttl: Duration,
    /// The day the seed data is centred on; None: today (UTC).
    pub today: Option<NaiveDate>,
    /// Where a reservation change is posted as a unified webhook; None: nowhere.
    pub webhook: Option<WebhookTarget>,
}

impl Default for FakePmsConfig {
    fn default() -> Self {
        FakePmsConfig {
            listings: 36,
            reservations: 1200,
            seed: 17,
            client_id: "10450".into(),
            client_secret: "fake-pms-secret".into(),
            ip_limit: Some((15, Duration::from_secs(10))),
            account_limit: Some((20, Duration::from_secs(10))),
            token_delay: Duration::from_secs(1),
            token_ttl: Duration::from_secs(730 * 86_400),
            today: None,
            webhook: None,
        }
    }
}

impl FakePmsConfig {
    /// The same configuration with both rate limits lifted.
    pub fn without_limits(self) -> Self {
        FakePmsConfig {
            ip_limit: None,
            account_limit: None,
            ..self
        }
    }

    /// `today`, or the current UTC date.
    pub fn resolved_today(&self) -> NaiveDate {
        self.today.unwrap_or_else(|| Utc::now().date_naive())
    }
}

/// One request the fake answered under `/v1` (control routes are not recorded).
#[derive(Debug, Clone)]
pub struct RequestSeen {
    pub method: String,
    /// The path, `/v1/...`.
    pub path: String,
    pub query: Vec<(String, String)>,
    /// The bearer token sent, if any.
    pub bearer: Option<String>,
    /// When the request arrived.
    pub at: Instant,
    /// The status it was answered with.
    pub status: u16,
}

/// Called with every request just before its answer is sent (it may use [`Control`]).
pub type RequestHook = Arc<dyn Fn(&RequestSeen) + Send + Sync>;

/// A running fake. It serves until the tokio runtime that started it ends.
pub struct FakePms {
    /// `http://127.0.0.1:PORT/v1`, what `PMS_BASE_URL` is set to.
    pub base_url: String,
    pub control: Control,
    /// The address it listens on.
    pub addr: SocketAddr,
}

impl FakePms {
    /// Starts the fake on a free loopback port. Panics when no port can be bound (tests only).
    pub async fn start(config: FakePmsConfig) -> FakePms {
        match FakePms::bind(SocketAddr::from(([127, 0, 0, 1], 0)), config).await {
            Ok(fake) => fake,
            Err(e) => panic!("the fake PMS cannot bind a loopback port: {e}"),
        }
    }

    /// Starts the fake on `addr` (port 0: any free port).
    pub async fn bind(addr: SocketAddr, config: FakePmsConfig) -> std::io::Result<FakePms> {
        let shared = Arc::new(Shared::new(config));
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let app = server::router(shared.clone());
        tokio::spawn(async move {
            let service = app.into_make_service_with_connect_info::<SocketAddr>();
            if let Err(e) = axum::serve(listener, service).await {
                tracing::error!(error = %e, "the fake PMS stopped serving");
            }
        });
        Ok(FakePms {
            base_url: format!("http://{local}/v1"),
            control: Control { shared },
            addr: local,
        })
    }
}

/// The fake's switches and data, shared with the server (cheap to clone).
#[derive(Clone)]
pub struct Control {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("client_id", &self.shared.config.client_id)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for FakePms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakePms")
            .field("base_url", &self.base_url)
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Control {
    /// The next `n` API requests (not `/accessTokens`) answer `status`.
    pub fn fail_next(&self, n: u32, status: u16) {
        let mut s = lock(&self.shared.switches);
        s.fail_next = n;
        s.fail_next_status = status;
    }

    /// Every API request (not `/accessTokens`) answers `status` until `None`.
    pub fn set_failing(&self, status: Option<u16>) {
        lock(&self.shared.switches).failing = status;
    }

    /// Every `/v1` request waits `d` before it is handled.
    pub fn set_delay(&self, d: Duration) {
        lock(&self.shared.switches).delay = d;
    }

    /// The next `n` requests (tokens included) answer 429, with `Retry-After` when given. Not
    /// counted by [`Control::rate_limited`].
    pub fn throttle_next(&self, n: u32, retry_after_secs: Option<u64>) {
        let mut s = lock(&self.shared.switches);
        s.throttle_next = n;
        s.throttle_retry_after = retry_after_secs;
    }

    /// Every token issued so far answers 403 from now on.
    pub fn revoke_tokens(&self) {
        for token in lock(&self.shared.tokens).values_mut() {
            token.revoked = true;
        }
    }

    /// Replaces both rate limits (None lifts one). Requests already counted stay counted.
    pub fn set_limits(&self, ip: Option<(u32, Duration)>, account: Option<(u32, Duration)>) {
        let mut limiter = lock(&self.shared.limiter);
        limiter.ip = ip;
        limiter.account = account;
    }

    pub fn listings(&self) -> Vec<Value> {
        read(&self.shared.data).listings.clone()
    }

    /// Every reservation, by id.
    pub fn reservations(&self) -> Vec<Value> {
        read(&self.shared.data).reservations.values()
    }

    /// Replaces the reservations (records without an integer `id` are dropped), as given: their
    /// `updatedOn` places them in the order.
    pub fn set_reservations(&self, v: Vec<Value>) {
        let store = Store::from_values(v);
        write(&self.shared.data).reservations = store;
    }

    pub fn set_listings(&self, v: Vec<Value>) {
        write(&self.shared.data).listings = v;
    }

    /// Where reservation changes are posted as unified webhooks from now on (None: nowhere).
    /// Deliveries already under way keep their target.
    pub fn set_webhook(&self, target: Option<WebhookTarget>) {
        *write(&self.shared.webhook) = target;
    }

    /// Changes reservation `id` with `f` (run without any lock held), then sets its `updatedOn`
    /// and `latestActivityOn` to now, which moves it last in `sortOrder=updatedOn` and first in
    /// the default order, and posts `reservation.updated` to the webhook target, if any. False
    /// when there is no such reservation.
    pub fn update_reservation(&self, id: i64, f: impl FnOnce(&mut Value)) -> bool {
        let changed = self.try_update_reservation(id, |value| {
            f(value);
            Ok::<(), std::convert::Infallible>(())
        });
        matches!(changed, Ok(Some(_)))
    }

    /// [`Control::update_reservation`] with a change that may refuse (then nothing is stored):
    /// the record as stored, `Ok(None)` when there is no such reservation (or `f` left no
    /// object).
    pub(crate) fn try_update_reservation<E>(
        &self,
        id: i64,
        f: impl FnOnce(&mut Value) -> Result<(), E>,
    ) -> Result<Option<Value>, E> {
        let Some(mut value) = read(&self.shared.data).reservations.value(id) else {
            return Ok(None);
        };
        f(&mut value)?;
        if let Some(record) = value.as_object_mut() {
            record.insert("id".into(), json!(id));
        }
        Ok(self.store(value))
    }

    /// Adds (or replaces, by `id`) a reservation, stamped `updatedOn`/`latestActivityOn` now,
    /// and posts `reservation.created` (`reservation.updated` when it replaced one) to the
    /// webhook target, if any. Without an `id` it gets the next free one. Returns its id (None
    /// when `v` is no object).
    pub fn add_reservation(&self, v: Value) -> Option<i64> {
        self.add_reservation_record(v)
            .and_then(|stored| stored.get("id").and_then(Value::as_i64))
    }

    /// [`Control::add_reservation`], answering the record as stored.
    pub(crate) fn add_reservation_record(&self, v: Value) -> Option<Value> {
        self.store(v)
    }

    /// Stores a changed reservation and delivers the webhook of the change.
    fn store(&self, value: Value) -> Option<Value> {
        let (event, stored) = self.shared.store_touched(value)?;
        self.deliver(event, &stored);
        Some(stored)
    }

    /// Listing `id`, as served.
    pub(crate) fn listing(&self, id: i64) -> Option<Value> {
        read(&self.shared.data)
            .listings
            .iter()
            .find(|l| l.get("id").and_then(Value::as_i64) == Some(id))
            .cloned()
    }

    /// Reservation `id`, as served.
    pub(crate) fn reservation(&self, id: i64) -> Option<Value> {
        read(&self.shared.data).reservations.value(id)
    }

    /// Deletes listing `id` as Hostaway does: it is simply no longer returned (its
    /// reservations stay). Answers the record, None when there is no such listing.
    pub fn delete_listing(&self, id: i64) -> Option<Value> {
        let mut data = write(&self.shared.data);
        let at = data
            .listings
            .iter()
            .position(|l| l.get("id").and_then(Value::as_i64) == Some(id))?;
        Some(data.listings.remove(at))
    }

    /// Deletes reservation `id` as Hostaway does: it is simply no longer returned. Answers the
    /// record (give it to [`Control::add_reservation`] to bring it back), None when there is no
    /// such reservation.
    pub fn delete_reservation(&self, id: i64) -> Option<Value> {
        write(&self.shared.data).reservations.remove(id)
    }

    /// Calls `hook` with every `/v1` request just before its answer is sent; None removes it.
    pub fn on_request(&self, hook: Option<RequestHook>) {
        *write(&self.shared.hook) = hook;
    }

    /// Every `/v1` request so far, oldest first (the last 200,000).
    pub fn requests(&self) -> Vec<RequestSeen> {
        lock(&self.shared.log).iter().cloned().collect()
    }

    /// How many tokens were issued.
    pub fn token_requests(&self) -> usize {
        self.shared.token_requests.load(Ordering::Relaxed)
    }

    /// How many requests the rate limiter refused with 429 (not those of `throttle_next`).
    pub fn rate_limited(&self) -> usize {
        self.shared.rate_limited.load(Ordering::Relaxed)
    }

    /// Back to the start: seed data again (no webhook is posted for it), no failure, delay or
    /// throttle, the configured limits with empty windows and webhook target, no recorded
    /// request, counters at zero (deliveries under way still finish and count). Tokens stay
    /// valid.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// Counters and switches, as `GET /_fake/stats` answers them.
    pub fn stats(&self) -> Value {
        let (listings, reservations) = {
            let data = read(&self.shared.data);
            (data.listings.len(), data.reservations.len())
        };
        let switches = {
            let s = lock(&self.shared.switches);
            json!({
                "failNext": s.fail_next,
                "failNextStatus": s.fail_next_status,
                "failing": s.failing,
                "delayMs": s.delay.as_millis() as u64,
                "throttleNext": s.throttle_next,
            })
        };
        let limits = {
            let l = lock(&self.shared.limiter);
            let show = |limit: Option<(u32, Duration)>| {
                limit.map(|(n, w)| json!({"limit": n, "windowSecs": w.as_secs_f64()}))
            };
            json!({"ip": show(l.ip), "account": show(l.account)})
        };
        let requests = lock(&self.shared.log).len();
        let webhook = read(&self.shared.webhook)
            .as_ref()
            .map(|t| json!({"url": t.url, "user": t.user}));
        // SeqCst, as the deliveries count: a delivery is counted delivered or failed before it
        // leaves `webhooksPending`, so no reader sees it in neither.
        let count = |c: &AtomicUsize| c.load(Ordering::SeqCst);
        json!({
            "listings": listings,
            "reservations": reservations,
            "requests": requests,
            "tokenRequests": self.token_requests(),
            "rateLimited": self.rate_limited(),
            "webhook": webhook,
            "webhooksDelivered": count(&self.shared.webhooks_delivered),
            "webhooksFailed": count(&self.shared.webhooks_failed),
            "webhooksPending": count(&self.shared.webhooks_pending),
            "switches": switches,
            "limits": limits,
        })
    }
}

const LOG_CAPACITY: usize = 200_000;

pub(crate) struct Shared {
    pub config: FakePmsConfig,
    pub data: RwLock<Data>,
    pub switches: Mutex<Switches>,
    pub limiter: Mutex<Limiter>,
    pub tokens: Mutex<HashMap<String, Token>>,
    pub log: Mutex<VecDeque<RequestSeen>>,
    pub hook: RwLock<Option<RequestHook>>,
    pub token_requests: AtomicUsize,
    pub rate_limited: AtomicUsize,
    pub webhook: RwLock<Option<WebhookTarget>>,
    /// The runtime the fake was started on, which delivers webhooks whatever thread a change
    /// comes from (None outside one: then the caller's, if any).
    pub runtime: Option<tokio::runtime::Handle>,
    /// Built on the first delivery: most fakes never post one.
    http: OnceLock<Result<reqwest::Client, String>>,
    /// Deliveries that ended delivered or failed, and those under way.
    pub webhooks_delivered: AtomicUsize,
    pub webhooks_failed: AtomicUsize,
    pub webhooks_pending: AtomicUsize,
}

pub(crate) struct Data {
    pub listings: Vec<Value>,
    pub reservations: Store,
}

impl Data {
    fn seeded(config: &FakePmsConfig) -> Data {
        let listings = seed_listings(config);
        let reservations = Store::from_json(seed::seed_reservation_json(config, &listings));
        Data {
            listings,
            reservations,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Switches {
    pub fail_next: u32,
    pub fail_next_status: u16,
    pub failing: Option<u16>,
    pub delay: Duration,
    pub throttle_next: u32,
    pub throttle_retry_after: Option<u64>,
}

pub(crate) struct Token {
    pub issued: Instant,
    pub revoked: bool,
}

/// Sliding-window logs: the instants of the requests let through in the last window, per client
/// IP and for the account. A refused request is not logged (it used no slot).
#[derive(Default)]
pub(crate) struct Limiter {
    pub ip: Option<(u32, Duration)>,
    pub account: Option<(u32, Duration)>,
    ip_hits: HashMap<IpAddr, VecDeque<Instant>>,
    account_hits: VecDeque<Instant>,
}

impl Limiter {
    fn new(ip: Option<(u32, Duration)>, account: Option<(u32, Duration)>) -> Limiter {
        Limiter {
            ip,
            account,
            ..Limiter::default()
        }
    }

    /// Lets the request through (and logs it), or tells how long until a slot frees.
    pub(crate) fn admit(&mut self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        fn wait(
            hits: &mut VecDeque<Instant>,
            (limit, window): (u32, Duration),
            now: Instant,
        ) -> Option<Duration> {
            while hits
                .front()
                .is_some_and(|&t| now.saturating_duration_since(t) >= window)
            {
                hits.pop_front();
            }
            if hits.len() < limit as usize {
                return None;
            }
            // Full: the oldest request of the window leaves it first.
            Some(
                hits.front()
                    .map_or(window, |&t| (t + window).saturating_duration_since(now)),
            )
        }
        let mut longest: Option<Duration> = None;
        if let Some(limit) = self.ip {
            longest = longest.max(wait(self.ip_hits.entry(ip).or_default(), limit, now));
        }
        if let Some(limit) = self.account {
            longest = longest.max(wait(&mut self.account_hits, limit, now));
        }
        if let Some(d) = longest {
            return Err(d);
        }
        if self.ip.is_some() {
            self.ip_hits.entry(ip).or_default().push_back(now);
        }
        if self.account.is_some() {
            self.account_hits.push_back(now);
        }
        Ok(())
    }
}

impl Shared {
    fn new(config: FakePmsConfig) -> Shared {
        let data = Data::seeded(&config);
        Shared {
            data: RwLock::new(data),
            switches: Mutex::new(Switches::default()),
            limiter: Mutex::new(Limiter::new(config.ip_limit, config.account_limit)),
            tokens: Mutex::new(HashMap::new()),
            log: Mutex::new(VecDeque::new()),
            hook: RwLock::new(None),
            token_requests: AtomicUsize::new(0),
            rate_limited: AtomicUsize::new(0),
            webhook: RwLock::new(config.webhook.clone()),
            runtime: tokio::runtime::Handle::try_current().ok(),
            http: OnceLock::new(),
            webhooks_delivered: AtomicUsize::new(0),
            webhooks_failed: AtomicUsize::new(0),
            webhooks_pending: AtomicUsize::new(0),
            config,
        }
    }

    /// The client webhooks are posted with: no redirect followed (Hostaway counts any answer
    /// that is not a 2xx as a failure), [`DELIVERY_TIMEOUT`] per attempt.
    pub(crate) fn http_client(&self) -> Result<&reqwest::Client, &str> {
        self.http
            .get_or_init(|| {
                reqwest::Client::builder()
                    .timeout(DELIVERY_TIMEOUT)
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    fn reset(&self) {
        let data = Data::seeded(&self.config);
        *write(&self.data) = data;
        *lock(&self.switches) = Switches::default();
        *lock(&self.limiter) = Limiter::new(self.config.ip_limit, self.config.account_limit);
        lock(&self.log).clear();
        self.token_requests.store(0, Ordering::Relaxed);
        self.rate_limited.store(0, Ordering::Relaxed);
        *write(&self.webhook) = self.config.webhook.clone();
        self.webhooks_delivered.store(0, Ordering::Relaxed);
        self.webhooks_failed.store(0, Ordering::Relaxed);
    }

    /// Stores a reservation changed now: `updatedOn` and `latestActivityOn` set to now, or just
    /// after the newest record when that is later (seed data centred on a future `today`, or
    /// several changes within a second), so the record is the newest of all and two changes of
    /// one record never share an `updatedOn`. A record without an integer `id` gets the next
    /// free one (and it as `hostawayReservationId`), under the same lock so that two new records
    /// never share one. Answers whether the record is new, and the record as stored; None when
    /// `value` is no object.
    fn store_touched(&self, mut value: Value) -> Option<(Event, Value)> {
        let mut data = write(&self.data);
        let newest = data
            .reservations
            .max_updated()
            .map_or(i64::MIN, |t| t.saturating_add(1));
        let stamp = seed::format_timestamp(Utc::now().timestamp().max(newest));
        let record = value.as_object_mut()?;
        if record.get("id").and_then(Value::as_i64).is_none() {
            let next = data
                .reservations
                .max_id()
                .map_or(1_000_000, |m| m.saturating_add(1));
            record.insert("id".into(), json!(next));
            record.insert("hostawayReservationId".into(), json!(next));
        }
        record.insert("updatedOn".into(), Value::String(stamp.clone()));
        record.insert("latestActivityOn".into(), Value::String(stamp));
        let meta = Meta::of(&value)?;
        let text = serde_json::to_string(&value).ok()?;
        let event = if data.reservations.json(meta.id).is_some() {
            Event::Updated
        } else {
            Event::Created
        };
        data.reservations.upsert(meta, text);
        Some((event, value))
    }

    pub(crate) fn record(&self, seen: RequestSeen) {
        let mut log = lock(&self.log);
        if log.len() >= LOG_CAPACITY {
            log.pop_front();
        }
        log.push_back(seen);
    }
}

/// The locks are never held across an await or a user callback; a panic elsewhere leaves the
/// data usable, so a poisoned lock is taken as it is.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
