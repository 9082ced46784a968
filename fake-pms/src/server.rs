//! The fake's HTTP surface: Hostaway's routes under `/v1` behind one gate (delay, scripted 429s,
//! injected failures, the rate limiter, then the request log and hook), and the `/_fake/*`
//! control routes the binary is driven by (never rate limited or logged).

// Refusals are whole answers (`Err(Response)`), returned at once by `?`; their size does not
// matter on a test server's rare error paths.
#![allow(clippy::result_large_err)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{FormRejection, PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, Form, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{Datelike, NaiveDate, TimeDelta, Utc};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::seed::{format_timestamp, midnight, new_reservation};
use crate::store::{Filter, PageRequest};
use crate::{Control, RequestSeen, Shared, Token, lock, read};

/// What Hostaway documents as its answer past the rate limits.
const RATE_LIMIT_MESSAGE: &str = "This error occurs because a server detects that your application has exceeded \
     the rate limits or has made too many requests in a given period of time.";

/// The query string as pairs, or why it could not be read.
type QueryPairs = Result<Query<Vec<(String, String)>>, QueryRejection>;

/// Hostaway's default page size for reservations.
const DEFAULT_RESERVATION_LIMIT: usize = 100;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/v1/accessTokens", post(issue_token).delete(revoke_token))
        .route("/v1/listings", get(list_listings))
        .route("/v1/listings/{id}", get(get_listing))
        .route("/v1/reservations", get(list_reservations))
        .route("/v1/reservations/{id}", get(get_reservation))
        .layer(middleware::from_fn_with_state(shared.clone(), gate));
    let control = Router::new()
        .route("/_fake/fail", post(control_fail))
        .route("/_fake/delay", post(control_delay))
        .route("/_fake/throttle", post(control_throttle))
        .route("/_fake/limits", post(control_limits))
        .route("/_fake/revoke", post(control_revoke))
        .route("/_fake/delete", post(control_delete))
        .route("/_fake/reservations", post(control_create_reservation))
        .route(
            "/_fake/reservations/{id}",
            get(control_get_reservation).patch(control_patch_reservation),
        )
        .route("/_fake/reset", post(control_reset))
        .route("/_fake/stats", get(control_stats));
    api.merge(control).fallback(not_found).with_state(shared)
}

// ---------------------------------------------------------------------------------------------
// Answers

fn json_bytes(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn json_value(status: StatusCode, body: &Value) -> Response {
    json_bytes(status, serde_json::to_vec(body).unwrap_or_default())
}

/// Hostaway's error envelope: `status: "fail"` and the message in `result` (the standard
/// response) and in `message` (what its rate-limit answer carries).
fn fail(status: StatusCode, message: &str) -> Response {
    json_value(
        status,
        &json!({"status": "fail", "result": message, "message": message}),
    )
}

fn too_many(retry_after_secs: Option<u64>) -> Response {
    let mut response = json_value(
        StatusCode::TOO_MANY_REQUESTS,
        &json!({"status": "fail", "message": RATE_LIMIT_MESSAGE, "result": RATE_LIMIT_MESSAGE}),
    );
    if let Some(secs) = retry_after_secs {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

/// An injected failure: 502, 503 and 504 come from the proxy in front (an HTML page), anything
/// else from the application (the JSON fail envelope).
fn failure(status: u16) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let reason = code.canonical_reason().unwrap_or("Error");
    match code.as_u16() {
        502..=504 => {
            let page = format!(
                "<html>\r\n<head><title>{n} {reason}</title></head>\r\n<body>\r\n<center><h1>{n} {reason}</h1></center>\r\n\
                 <hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
                n = code.as_u16()
            );
            let mut response = (code, page).into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            response
        }
        _ => fail(code, reason),
    }
}

async fn not_found() -> Response {
    fail(StatusCode::NOT_FOUND, "Not found")
}

/// The list envelope around records already serialised.
fn page_answer(
    records: &[Arc<str>],
    count: usize,
    limit: Option<usize>,
    offset: usize,
) -> Response {
    let size: usize = records.iter().map(|r| r.len() + 1).sum();
    let mut body = Vec::with_capacity(size + 160);
    body.extend_from_slice(br#"{"status":"success","result":["#);
    for (i, record) in records.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(record.as_bytes());
    }
    let (page, total_pages) = match limit {
        Some(limit) if limit > 0 => (offset / limit + 1, count.div_ceil(limit)),
        _ => (1, 1),
    };
    let limit = limit.map_or_else(|| "null".to_owned(), |l| l.to_string());
    body.extend_from_slice(
        format!(r#"],"count":{count},"limit":{limit},"offset":{offset},"page":{page},"totalPages":{total_pages}}}"#)
            .as_bytes(),
    );
    json_bytes(StatusCode::OK, body)
}

fn one_answer(record: &str) -> Response {
    let mut body = Vec::with_capacity(record.len() + 40);
    body.extend_from_slice(br#"{"status":"success","result":"#);
    body.extend_from_slice(record.as_bytes());
    body.push(b'}');
    json_bytes(StatusCode::OK, body)
}

// ---------------------------------------------------------------------------------------------
// The gate in front of every /v1 route

fn bearer_of(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

async fn gate(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let at = Instant::now();
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let query = Query::<Vec<(String, String)>>::try_from_uri(request.uri())
        .map(|q| q.0)
        .unwrap_or_default();
    let bearer = bearer_of(request.headers()).map(str::to_owned);
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |c| c.0.ip());
    let token_route = path == "/v1/accessTokens";

    let delay = lock(&shared.switches).delay;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let response = match screen(&shared, ip, token_route) {
        Some(refused) => refused,
        None => next.run(request).await,
    };

    let seen = RequestSeen {
        method,
        path,
        query,
        bearer,
        at,
        status: response.status().as_u16(),
    };
    let hook = read(&shared.hook).clone();
    if let Some(hook) = hook {
        hook(&seen);
    }
    shared.record(seen);
    response
}

/// Scripted 429s first, then injected failures (not on the token route), then the limiter; a
/// request refused by any of them takes no rate-limit slot.
fn screen(shared: &Shared, ip: IpAddr, token_route: bool) -> Option<Response> {
    {
        let mut s = lock(&shared.switches);
        if s.throttle_next > 0 {
            s.throttle_next -= 1;
            return Some(too_many(s.throttle_retry_after));
        }
        if !token_route {
            if s.fail_next > 0 {
                s.fail_next -= 1;
                return Some(failure(s.fail_next_status));
            }
            if let Some(status) = s.failing {
                return Some(failure(status));
            }
        }
    }
    let verdict = lock(&shared.limiter).admit(ip, Instant::now());
    match verdict {
        Ok(()) => None,
        Err(wait) => {
            shared.rate_limited.fetch_add(1, Ordering::Relaxed);
            // Whole seconds until a slot frees, at least 1.
            let secs = wait.as_millis().div_ceil(1000).max(1);
            Some(too_many(Some(u64::try_from(secs).unwrap_or(u64::MAX))))
        }
    }
}

/// A token issued by the fake, not revoked, past its delay and before its expiry.
fn authorize(shared: &Shared, headers: &HeaderMap) -> Result<(), Response> {
    let refuse = |message: &str| Err(fail(StatusCode::FORBIDDEN, message));
    let Some(bearer) = bearer_of(headers) else {
        return refuse("Unauthorized: no access token");
    };
    let tokens = lock(&shared.tokens);
    let Some(token) = tokens.get(bearer) else {
        return refuse("Unauthorized: unknown access token");
    };
    let age = token.issued.elapsed();
    if token.revoked {
        refuse("Unauthorized: the access token was revoked")
    } else if age < shared.config.token_delay {
        refuse("Unauthorized: the access token is not valid yet")
    } else if age >= shared.config.token_ttl {
        refuse("Unauthorized: the access token expired")
    } else {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Deserialize)]
struct TokenForm {
    grant_type: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    scope: Option<String>,
}

async fn issue_token(
    State(shared): State<Arc<Shared>>,
    form: Result<Form<TokenForm>, FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return fail(
            StatusCode::BAD_REQUEST,
            "The request must be a form: grant_type, client_id, client_secret, scope",
        );
    };
    if form.grant_type.as_deref() != Some("client_credentials") {
        return fail(
            StatusCode::BAD_REQUEST,
            "grant_type must be client_credentials",
        );
    }
    if form.scope.as_deref() != Some("general") {
        return fail(StatusCode::BAD_REQUEST, "scope must be general");
    }
    if form.client_id.as_deref().map(str::trim) != Some(shared.config.client_id.as_str())
        || form.client_secret.as_deref() != Some(shared.config.client_secret.as_str())
    {
        return fail(StatusCode::FORBIDDEN, "Client authentication failed");
    }
    // Shaped like a JWT, as Hostaway's are; only the fake reads it.
    let token = format!(
        "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.{}.{}",
        Uuid::new_v4().simple(),
        Uuid::new_v4().simple()
    );
    lock(&shared.tokens).insert(
        token.clone(),
        Token {
            issued: Instant::now(),
            revoked: false,
        },
    );
    shared.token_requests.fetch_add(1, Ordering::Relaxed);
    json_value(
        StatusCode::OK,
        &json!({
            "token_type": "Bearer",
            "expires_in": shared.config.token_ttl.as_secs(),
            "access_token": token,
        }),
    )
}

async fn revoke_token(State(shared): State<Arc<Shared>>, query: QueryPairs) -> Response {
    let params = Params(query.map(|q| q.0).unwrap_or_default());
    let revoked = params
        .get("token")
        .and_then(|t| {
            lock(&shared.tokens)
                .get_mut(t)
                .map(|token| token.revoked = true)
        })
        .is_some();
    if revoked {
        json_value(StatusCode::OK, &json!({"status": "success", "result": []}))
    } else {
        fail(StatusCode::NOT_FOUND, "Access token not found")
    }
}

// ---------------------------------------------------------------------------------------------
// Listings and reservations

/// Query parameters; an empty value counts as absent (Hostaway's examples send `limit=&offset=`).
struct Params(Vec<(String, String)>);

impl Params {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, Response> {
        match self.get(key) {
            None => Ok(None),
            Some(text) => text.trim().parse().map(Some).map_err(|_| {
                fail(
                    StatusCode::BAD_REQUEST,
                    &format!("{key} must be an integer"),
                )
            }),
        }
    }

    fn date(&self, key: &str) -> Result<Option<NaiveDate>, Response> {
        match self.get(key) {
            None => Ok(None),
            Some(text) => NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
                .map(Some)
                .map_err(|_| {
                    fail(
                        StatusCode::BAD_REQUEST,
                        &format!("{key} must be a date (YYYY-MM-DD)"),
                    )
                }),
        }
    }
}

fn params(query: QueryPairs) -> Result<Params, Response> {
    query
        .map(|q| Params(q.0))
        .map_err(|_| fail(StatusCode::BAD_REQUEST, "Malformed query string"))
}

async fn list_listings(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    query: QueryPairs,
) -> Response {
    match listings_page(&shared, &headers, query) {
        Ok(response) | Err(response) => response,
    }
}

fn listings_page(
    shared: &Shared,
    headers: &HeaderMap,
    query: QueryPairs,
) -> Result<Response, Response> {
    authorize(shared, headers)?;
    let params = params(query)?;
    // Without a limit, every listing.
    let limit = params.number::<usize>("limit")?.filter(|&l| l > 0);
    let offset = params.number::<usize>("offset")?.unwrap_or(0);
    let (records, count) = {
        let data = read(&shared.data);
        let all = &data.listings;
        let start = offset.min(all.len());
        let end = limit.map_or(all.len(), |l| start.saturating_add(l).min(all.len()));
        let records: Vec<Arc<str>> = all[start..end]
            .iter()
            .filter_map(|v| serde_json::to_string(v).ok().map(Arc::from))
            .collect();
        (records, all.len())
    };
    Ok(page_answer(&records, count, limit, offset))
}

fn path_id(id: Result<Path<String>, PathRejection>) -> Option<i64> {
    id.ok()?.0.trim().parse().ok()
}

async fn get_listing(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    if let Err(refused) = authorize(&shared, &headers) {
        return refused;
    }
    let found = path_id(id).and_then(|id| {
        let data = read(&shared.data);
        data.listings
            .iter()
            .find(|l| l.get("id").and_then(Value::as_i64) == Some(id))
            .and_then(|l| serde_json::to_string(l).ok())
    });
    match found {
        Some(text) => one_answer(&text),
        None => fail(StatusCode::NOT_FOUND, "Listing not found"),
    }
}

async fn list_reservations(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    query: QueryPairs,
) -> Response {
    match reservations_page(&shared, &headers, query) {
        Ok(response) | Err(response) => response,
    }
}

fn reservations_page(
    shared: &Shared,
    headers: &HeaderMap,
    query: QueryPairs,
) -> Result<Response, Response> {
    authorize(shared, headers)?;
    let params = params(query)?;
    let limit = params
        .number::<usize>("limit")?
        .filter(|&l| l > 0)
        .unwrap_or(DEFAULT_RESERVATION_LIMIT);
    let ascending = match params.get("sortOrder") {
        None => false,
        Some("updatedOn") => true,
        Some(other) => {
            return Err(fail(
                StatusCode::BAD_REQUEST,
                &format!(
                    "sortOrder {other} is not supported by this fake (only updatedOn, or none)"
                ),
            ));
        }
    };
    let filter = Filter {
        listing: params.number("listingId")?,
        channel: params.number("channelId")?,
        activity_from: params.date("latestActivityStart")?.map(midnight),
        activity_to: params
            .date("latestActivityEnd")?
            .map(|d| midnight(d + TimeDelta::days(1))),
        arrival_from: params
            .date("arrivalStartDate")?
            .map(|d| d.num_days_from_ce()),
        arrival_to: params.date("arrivalEndDate")?.map(|d| d.num_days_from_ce()),
    };
    let request = PageRequest {
        limit,
        offset: params.number("offset")?.unwrap_or(0),
        after_id: params.number("afterId")?,
        ascending,
        filter,
    };
    let page = read(&shared.data).reservations.page(&request);
    Ok(page_answer(
        &page.records,
        page.count,
        Some(limit),
        page.offset,
    ))
}

async fn get_reservation(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    if let Err(refused) = authorize(&shared, &headers) {
        return refused;
    }
    let found = path_id(id).and_then(|id| read(&shared.data).reservations.json(id));
    match found {
        Some(text) => one_answer(&text),
        None => fail(StatusCode::NOT_FOUND, "Reservation not found"),
    }
}

// ---------------------------------------------------------------------------------------------
// Control routes (the binary's switches; the library's callers use `Control`)

fn control_of(shared: &Arc<Shared>) -> Control {
    Control {
        shared: shared.clone(),
    }
}

/// A JSON body; an empty one is the type's default.
fn body_of<T: for<'de> Deserialize<'de> + Default>(body: &Bytes) -> Result<T, Response> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body)
        .map_err(|e| fail(StatusCode::BAD_REQUEST, &format!("Malformed body: {e}")))
}

fn done() -> Response {
    json_value(StatusCode::OK, &json!({"status": "success"}))
}

/// `{status, count}`: `count` given → the next `count` API requests answer `status`; no
/// `count` → every one does until a call with `status` null (which also cancels a count).
#[derive(Deserialize, Default)]
struct FailBody {
    status: Option<u16>,
    count: Option<u32>,
}

async fn control_fail(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body: FailBody = match body_of(&body) {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    let control = control_of(&shared);
    match (body.status, body.count) {
        (Some(status), Some(count)) => control.fail_next(count, status),
        (Some(status), None) => control.set_failing(Some(status)),
        (None, _) => {
            control.set_failing(None);
            control.fail_next(0, 500);
        }
    }
    done()
}

#[derive(Deserialize, Default)]
struct DelayBody {
    #[serde(default)]
    ms: u64,
}

async fn control_delay(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match body_of::<DelayBody>(&body) {
        Ok(body) => {
            control_of(&shared).set_delay(Duration::from_millis(body.ms));
            done()
        }
        Err(refused) => refused,
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ThrottleBody {
    #[serde(default)]
    count: u32,
    retry_after_secs: Option<u64>,
}

async fn control_throttle(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match body_of::<ThrottleBody>(&body) {
        Ok(body) => {
            control_of(&shared).throttle_next(body.count, body.retry_after_secs);
            done()
        }
        Err(refused) => refused,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LimitBody {
    limit: u32,
    window_secs: f64,
}

impl LimitBody {
    fn limit(self) -> Option<(u32, Duration)> {
        Duration::try_from_secs_f64(self.window_secs)
            .ok()
            .map(|w| (self.limit, w))
    }
}

/// `{ip: {limit, windowSecs} | null, account: ...}`; a missing or null one is lifted.
#[derive(Deserialize, Default)]
struct LimitsBody {
    ip: Option<LimitBody>,
    account: Option<LimitBody>,
}

async fn control_limits(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match body_of::<LimitsBody>(&body) {
        Ok(body) => {
            control_of(&shared).set_limits(
                body.ip.and_then(LimitBody::limit),
                body.account.and_then(LimitBody::limit),
            );
            done()
        }
        Err(refused) => refused,
    }
}

async fn control_revoke(State(shared): State<Arc<Shared>>) -> Response {
    control_of(&shared).revoke_tokens();
    done()
}

/// `{listings: [id, ...], reservations: [id, ...]}`: the records to delete (either list may be
/// left out).
#[derive(Deserialize, Default)]
struct DeleteBody {
    #[serde(default)]
    listings: Vec<i64>,
    #[serde(default)]
    reservations: Vec<i64>,
}

/// Deletes records; answers how many of each were there to delete.
async fn control_delete(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body: DeleteBody = match body_of(&body) {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    let control = control_of(&shared);
    let listings = body
        .listings
        .iter()
        .filter(|&&id| control.delete_listing(id).is_some())
        .count();
    let reservations = body
        .reservations
        .iter()
        .filter(|&&id| control.delete_reservation(id).is_some())
        .count();
    json_value(
        StatusCode::OK,
        &json!({"status": "success", "deleted": {"listings": listings, "reservations": reservations}}),
    )
}

async fn control_reset(State(shared): State<Arc<Shared>>) -> Response {
    control_of(&shared).reset();
    done()
}

async fn control_stats(State(shared): State<Arc<Shared>>) -> Response {
    json_value(StatusCode::OK, &control_of(&shared).stats())
}

// ---------------------------------------------------------------------------------------------
// Reservations changed through the control routes (each posts its webhook, `webhook.rs`)

/// `{status: "success", result: record}`, as Hostaway answers one record.
fn record_answer(record: &Value) -> Response {
    json_value(
        StatusCode::OK,
        &json!({"status": "success", "result": record}),
    )
}

/// The body as a JSON object, or a 400.
fn object_body(body: &Bytes) -> Result<Map<String, Value>, Response> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err(fail(
            StatusCode::BAD_REQUEST,
            "The body must be a JSON object (reservation fields)",
        )),
        Err(e) => Err(fail(
            StatusCode::BAD_REQUEST,
            &format!("Malformed body: {e}"),
        )),
    }
}

fn date_field(fields: &Map<String, Value>, key: &str) -> Result<NaiveDate, Response> {
    fields
        .get(key)
        .and_then(Value::as_str)
        .and_then(|text| NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok())
        .ok_or_else(|| {
            fail(
                StatusCode::BAD_REQUEST,
                &format!("{key} must be a date (YYYY-MM-DD)"),
            )
        })
}

/// `arrivalDate` and `departureDate`, the departure after the arrival.
fn stay_dates(fields: &Map<String, Value>) -> Result<(NaiveDate, NaiveDate), Response> {
    let arrival = date_field(fields, "arrivalDate")?;
    let departure = date_field(fields, "departureDate")?;
    if departure <= arrival {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "departureDate must be after arrivalDate",
        ));
    }
    Ok((arrival, departure))
}

/// A `listingMapId` the fake serves, or a 400.
fn listing_field(control: &Control, fields: &Map<String, Value>) -> Result<Value, Response> {
    let refuse = |message: String| fail(StatusCode::BAD_REQUEST, &message);
    let Some(id) = fields.get("listingMapId").and_then(Value::as_i64) else {
        return Err(refuse(
            "listingMapId must be the id of a listing (GET /v1/listings)".into(),
        ));
    };
    control
        .listing(id)
        .ok_or_else(|| refuse(format!("listingMapId {id} is not a listing of the fake")))
}

async fn control_get_reservation(
    State(shared): State<Arc<Shared>>,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    match path_id(id).and_then(|id| control_of(&shared).reservation(id)) {
        Some(record) => record_answer(&record),
        None => fail(StatusCode::NOT_FOUND, "Reservation not found"),
    }
}

/// `POST /_fake/reservations`: a new booking. `listingMapId`, `arrivalDate` and `departureDate`
/// are required; every other field a seeded reservation has gets the value of a new direct
/// booking (status `new`, priced as the seed prices the listing), and the body's fields win.
/// Without an `id`, the next free one. Posts `reservation.created`.
async fn control_create_reservation(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match create_reservation(&shared, &body) {
        Ok(response) | Err(response) => response,
    }
}

/// The largest integer a JSON number holds exactly (2^53 - 1).
const MAX_SAFE_ID: i64 = 9_007_199_254_740_991;

fn create_reservation(shared: &Arc<Shared>, body: &Bytes) -> Result<Response, Response> {
    let mut fields = object_body(body)?;
    let control = control_of(shared);
    let listing = listing_field(&control, &fields)?;
    let (arrival, departure) = stay_dates(&fields)?;
    match fields.get("id") {
        None | Some(Value::Null) => {
            fields.remove("id");
        }
        Some(given) => {
            // At most JSON's largest safe integer, as Hostaway's ids are: the next free id
            // (the largest plus one) is then always one too.
            let Some(id) = given.as_i64().filter(|id| (1..=MAX_SAFE_ID).contains(id)) else {
                return Err(fail(
                    StatusCode::BAD_REQUEST,
                    "id must be an integer from 1 to 9007199254740991",
                ));
            };
            if control.reservation(id).is_some() {
                return Err(fail(
                    StatusCode::CONFLICT,
                    &format!("Reservation {id} exists: PATCH /_fake/reservations/{id} changes it"),
                ));
            }
            fields
                .entry("hostawayReservationId")
                .or_insert_with(|| json!(id));
        }
    }
    let reference = Uuid::new_v4().simple().to_string();
    let mut record = new_reservation(
        &shared.config.client_id,
        &listing,
        arrival,
        departure,
        Utc::now().timestamp(),
        reference.get(..12).unwrap_or(&reference),
    )
    .ok_or_else(|| fail(StatusCode::BAD_REQUEST, "The listing has no integer id"))?;
    if let Some(defaults) = record.as_object_mut() {
        defaults.extend(fields);
    }
    control
        .add_reservation_record(record)
        .map(|stored| record_answer(&stored))
        .ok_or_else(|| {
            fail(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The reservation could not be stored",
            )
        })
}

/// `PATCH /_fake/reservations/{id}`: the body's fields replace the record's (a shallow merge;
/// `id`, `updatedOn` and `latestActivityOn` are the store's). When the dates move, unless the
/// body names them: `nights` follows, `previousArrivalDate`/`previousDepartureDate` keep the old
/// dates, and a `new` booking becomes `modified`, as on Hostaway. A booking that becomes
/// `cancelled` gets a `cancellationDate` unless the body gives one. Posts `reservation.updated`.
async fn control_patch_reservation(
    State(shared): State<Arc<Shared>>,
    id: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Response {
    match patch_reservation(&shared, id, &body) {
        Ok(response) | Err(response) => response,
    }
}

fn patch_reservation(
    shared: &Arc<Shared>,
    id: Result<Path<String>, PathRejection>,
    body: &Bytes,
) -> Result<Response, Response> {
    let not_found = || fail(StatusCode::NOT_FOUND, "Reservation not found");
    let id = path_id(id).ok_or_else(not_found)?;
    let patch = object_body(body)?;
    let control = control_of(shared);
    if patch.contains_key("listingMapId") {
        listing_field(&control, &patch)?;
    }
    control
        .try_update_reservation(id, |record| merge(record, patch))?
        .map(|stored| record_answer(&stored))
        .ok_or_else(not_found)
}

/// Merges `patch` into the stored `record` (see [`control_patch_reservation`]).
fn merge(record: &mut Value, patch: Map<String, Value>) -> Result<(), Response> {
    let Some(fields) = record.as_object_mut() else {
        return Err(fail(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The stored reservation is not an object",
        ));
    };
    let named = |key: &str| patch.contains_key(key);
    let keep_nights = named("nights");
    let keep_previous = named("previousArrivalDate") || named("previousDepartureDate");
    let keep_status = named("status");
    let keep_cancellation = named("cancellationDate");
    let old_arrival = fields.get("arrivalDate").cloned().unwrap_or(Value::Null);
    let old_departure = fields.get("departureDate").cloned().unwrap_or(Value::Null);
    let old_status = fields.get("status").cloned().unwrap_or(Value::Null);
    fields.extend(patch);
    let (arrival, departure) = stay_dates(fields)?;
    let moved = fields.get("arrivalDate") != Some(&old_arrival)
        || fields.get("departureDate") != Some(&old_departure);
    if moved {
        if !keep_nights {
            fields.insert("nights".into(), json!((departure - arrival).num_days()));
        }
        if !keep_previous {
            fields.insert("previousArrivalDate".into(), old_arrival);
            fields.insert("previousDepartureDate".into(), old_departure);
        }
        if !keep_status && old_status == "new" {
            fields.insert("status".into(), json!("modified"));
        }
    }
    if !keep_cancellation
        && fields.get("status") == Some(&json!("cancelled"))
        && old_status != "cancelled"
    {
        fields.insert(
            "cancellationDate".into(),
            json!(format_timestamp(Utc::now().timestamp())),
        );
    }
    Ok(())
}
