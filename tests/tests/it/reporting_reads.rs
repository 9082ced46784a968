//! The reading side of `/reporting`: listings with their metrics over a period (the dashboard's
//! definitions, by default the 30 nights ending today), the villa link made by hand,
//! reservations, health in each state, and what every API replica shares through Redis (rate
//! limits per caller, the answer cache, its expiry and its invalidation), with 401/403 and bad
//! input on every route. Rows are put in place with SQL where a test needs exact dates and
//! names, or synced from the fake PMS where the test is about the PMS.

use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, TimeDelta};
use reqwest::{
    Method,
    header::{self, HeaderMap},
};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{RedisServer, TestApp, TestAppOptions, eventually, json as read_json};
use uuid::Uuid;

use crate::auth::assert_error_shape;
use crate::management_villas::{create_villa, send};
use crate::reporting_dashboard::d;

/// A listing as a sync would have stored it, in USD.
async fn insert_listing(pool: &PgPool, pms_id: i64, name: &str, status: &str) -> Uuid {
    insert_listing_in(pool, pms_id, name, status, Some("USD")).await
}

/// [`insert_listing`] in `currency`.
async fn insert_listing_in(
    pool: &PgPool,
    pms_id: i64,
    name: &str,
    status: &str,
    currency: Option<&str>,
) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_listings (id, pms_id, name, status, bedrooms, location, currency,
                                   internal_name, raw, synced_at)
         VALUES ($1, $2, $3, $4, 3, 'Canggu, Indonesia', $6, NULL, $5, now())",
    )
    .bind(id)
    .bind(pms_id)
    .bind(name)
    .bind(status)
    .bind(json!({"id": pms_id, "name": name}))
    .bind(currency)
    .execute(pool)
    .await
    .unwrap();
    id
}

/// A reservation as a sync would have stored it.
struct Stay {
    pms_id: i64,
    listing_pms_id: Option<i64>,
    check_in: NaiveDate,
    nights: i32,
    status: &'static str,
    channel: &'static str,
    total: Decimal,
}

impl Stay {
    fn check_out(&self) -> NaiveDate {
        self.check_in + TimeDelta::days(i64::from(self.nights))
    }

    /// Tax 10 %, channel commission 5 %: the net is what remains.
    fn tax(&self) -> Decimal {
        (self.total * Decimal::new(10, 2)).round_dp(2)
    }

    fn commission(&self) -> Decimal {
        (self.total * Decimal::new(5, 2)).round_dp(2)
    }

    fn net(&self) -> Decimal {
        self.total - self.tax() - self.commission()
    }
}

/// A Hostaway status that maps to `status` (what a sync would have kept beside it).
fn pms_status_of(status: &str) -> &'static str {
    match status {
        "CONFIRMED" => "new",
        "PENDING" => "pending",
        "CANCELLED" => "cancelled",
        "OWNER_STAY" => "ownerStay",
        "INQUIRY" => "inquiry",
        "DECLINED" => "declined",
        "EXPIRED" => "expired",
        _ => "somethingElse",
    }
}

async fn insert_stay(pool: &PgPool, s: &Stay) -> Uuid {
    insert_stay_in(pool, s, Some("USD")).await
}

/// [`insert_stay`] in `currency`.
async fn insert_stay_in(pool: &PgPool, s: &Stay, currency: Option<&str>) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_reservations (id, pms_id, listing_pms_id, guest_name, check_in, check_out,
                                       nights, channel, channel_id, channel_name, total_amount,
                                       net_amount, tax_amount, channel_commission,
                                       hostaway_commission, currency, status, pms_status, raw,
                                       synced_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, $10, $11, $12, $13, 0, $17, $14, $15,
                 $16, now())",
    )
    .bind(id)
    .bind(s.pms_id)
    .bind(s.listing_pms_id)
    .bind(format!("Guest {}", s.pms_id))
    .bind(s.check_in)
    .bind(s.check_out())
    .bind(s.nights)
    .bind(s.channel)
    .bind(s.channel.to_lowercase())
    .bind(s.total)
    .bind(s.net())
    .bind(s.tax())
    .bind(s.commission())
    .bind(s.status)
    .bind(pms_status_of(s.status))
    .bind(json!({"id": s.pms_id, "listingMapId": s.listing_pms_id}))
    .bind(currency)
    .execute(pool)
    .await
    .unwrap();
    id
}

/// A sync run that finished `hours_ago` hours ago with `status`.
async fn insert_finished_run(pool: &PgPool, status: &str, hours_ago: i32) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_sync_runs (id, kind, entities, status, triggered_by, started_at, finished_at)
         VALUES ($1, 'full', ARRAY['listings', 'reservations'], $2, 'test',
                 now() - make_interval(hours => $3, mins => 5), now() - make_interval(hours => $3))",
    )
    .bind(id)
    .bind(status)
    .bind(hours_ago)
    .execute(pool)
    .await
    .unwrap();
    id
}

/// A valid token for `role` whose subject (the caller the rate limits count) is `subject`.
fn token_as(app: &TestApp, role: &str, subject: &str) -> String {
    let mut claims = app.idp.claims(&[role]);
    claims["sub"] = json!(subject);
    app.idp.sign("k1", &claims)
}

/// A token of a caller of its own, so that a test's sync-class calls (5 a minute) do not add up.
fn fresh_token(app: &TestApp, role: &str) -> String {
    token_as(app, role, &format!("caller-{}", Uuid::new_v4().simple()))
}

async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut req = app.http.request(method, app.url(path));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    if let Some(body) = body {
        req = req.json(body);
    }
    read_json(req.send().await.unwrap()).await
}

async fn get(app: &TestApp, path: &str, role: &str) -> (u16, Value) {
    read_json(app.get(path, role).await).await
}

/// A GET as `role`, with its headers and its body as sent.
async fn fetch(app: &TestApp, path: &str, role: &str) -> (u16, HeaderMap, String) {
    let res = app.get(path, role).await;
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, headers, res.text().await.unwrap())
}

fn header_of<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Asserts a reporting error answer (`{error: {code, message, retryAfter: null}}`) with
/// `status` and `code`; returns its message.
fn problem(answer: &(u16, Value), status: u16, code: &str) -> String {
    let (actual, body) = answer;
    assert_eq!(*actual, status, "{body}");
    assert_error_shape("reporting", body, status, code);
    assert!(body["error"]["retryAfter"].is_null(), "{body}");
    // Each bad field one by one too, each named in the message.
    let message = body["error"]["message"].as_str().unwrap().to_owned();
    for field in body["error"]["fields"].as_array().unwrap() {
        let name = field["field"].as_str().unwrap();
        assert!(message.contains(name), "{name} not in {message}");
    }
    if code != "VALIDATION_ERROR" {
        assert_eq!(body["error"]["fields"], serde_json::json!([]), "{body}");
    }
    message
}

/// A JSON number as a decimal (money and percentages are JSON numbers).
fn dec(v: &Value) -> Decimal {
    assert!(v.is_number(), "not a JSON number: {v}");
    v.to_string()
        .parse()
        .unwrap_or_else(|_| panic!("not a decimal: {v}"))
}

fn names(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {page}"))
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_owned())
        .collect()
}

fn ids(page: &Value) -> Vec<Uuid> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {page}"))
        .iter()
        .map(|r| r["id"].as_str().unwrap().parse().unwrap())
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn listings_are_paged_ordered_by_name_and_filtered(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    // Ordered case-insensitively by name: the first 21, whose order no collation can dispute.
    let mut ordered: Vec<String> = ["alpha", "Bravo", "CHARLIE", "delta"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    ordered.extend((1..=17).map(|n| format!("Villa {n:02}")));
    // Inserted in reverse, so that the answer's order is not the insertion order.
    for (i, name) in ordered.iter().enumerate().rev() {
        let status = if name == "delta" {
            "INACTIVE"
        } else {
            "ACTIVE"
        };
        insert_listing(&pool, 100 + i as i64, name, status).await;
    }
    // A `%` in a search matches itself only, not "anything".
    insert_listing(&pool, 200, "Zulu 100% View", "ACTIVE").await;
    insert_listing(&pool, 201, "Zulu 1000 View", "INACTIVE").await;

    let (status, page) = get(&app, "/reporting/listings", "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["pagination"],
        json!({"page": 1, "limit": 20, "total": 23})
    );
    assert_eq!(
        names(&page),
        ordered[..20],
        "ordered by name, 20 by default"
    );
    let first = &page["data"][0];
    assert!(
        first["id"].as_str().unwrap().parse::<Uuid>().is_ok(),
        "{first}"
    );
    assert_eq!(first["pmsId"], 100, "pmsId is an integer: {first}");
    assert_eq!(first["status"], "ACTIVE");
    assert_eq!(first["bedrooms"], 3);
    assert_eq!(first["location"], "Canggu, Indonesia");
    assert_eq!(first["currency"], "USD");
    assert!(first["villaId"].is_null(), "{first}");
    assert!(
        DateTime::parse_from_rfc3339(first["lastSyncedAt"].as_str().unwrap()).is_ok(),
        "{first}"
    );
    assert_eq!(dec(&first["metrics"]["revenue"]), Decimal::ZERO);
    assert_eq!(dec(&first["metrics"]["occupancy"]), Decimal::ZERO);
    assert_eq!(first["metrics"]["bookings"], 0);

    let (status, page) = get(&app, "/reporting/listings?page=2", "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["pagination"],
        json!({"page": 2, "limit": 20, "total": 23})
    );
    let second = names(&page);
    assert_eq!(second.len(), 3, "{page}");
    assert_eq!(second[0], "Villa 17");
    assert_eq!(
        sorted(second[1..].to_vec()),
        ["Zulu 100% View", "Zulu 1000 View"]
    );
    let (_, page) = get(&app, "/reporting/listings?limit=100", "viewer").await;
    assert_eq!(names(&page)[..21], ordered[..]);
    let (_, page) = get(&app, "/reporting/listings?page=9&limit=5", "viewer").await;
    assert_eq!(page["data"], json!([]), "past the end: an empty page");
    assert_eq!(page["pagination"]["total"], 23);

    // Filters.
    let (status, page) = get(&app, "/reporting/listings?status=INACTIVE", "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(names(&page), ["delta", "Zulu 1000 View"]);
    assert_eq!(page["pagination"]["total"], 2);
    let (_, page) = get(
        &app,
        "/reporting/listings?status=ACTIVE&limit=100",
        "viewer",
    )
    .await;
    assert_eq!(page["pagination"]["total"], 21);
    assert!(
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["status"] == "ACTIVE"),
        "{page}"
    );
    let (_, page) = get(&app, "/reporting/listings?search=ALPH", "viewer").await;
    assert_eq!(names(&page), ["alpha"], "search is case-insensitive");
    let (_, page) = get(&app, "/reporting/listings?search=zULu", "viewer").await;
    assert_eq!(sorted(names(&page)), ["Zulu 100% View", "Zulu 1000 View"]);
    let (_, page) = get(&app, "/reporting/listings?search=a%2001", "viewer").await;
    assert_eq!(names(&page), ["Villa 01"], "any part of the name");
    let (_, page) = get(&app, "/reporting/listings?search=100%25", "viewer").await;
    assert_eq!(
        names(&page),
        ["Zulu 100% View"],
        "a % in the search is a literal %"
    );
    assert_eq!(page["pagination"]["total"], 1);
    let (_, page) = get(
        &app,
        "/reporting/listings?search=zulu&status=ACTIVE",
        "viewer",
    )
    .await;
    assert_eq!(names(&page), ["Zulu 100% View"], "filters combine");
    let (_, page) = get(&app, "/reporting/listings?search=nowhere", "viewer").await;
    assert_eq!(page["data"], json!([]));
    assert_eq!(page["pagination"]["total"], 0);

    // Bad parameters: 400 in the reporting shape, naming the parameter.
    for (query, field) in [
        ("limit=101", "limit"),
        ("limit=0", "limit"),
        ("limit=abc", "limit"),
        ("page=0", "page"),
        ("page=-1", "page"),
    ] {
        let answer = get(&app, &format!("/reporting/listings?{query}"), "viewer").await;
        let message = problem(&answer, 400, "VALIDATION_ERROR");
        assert!(message.contains(field), "{query}: {message}");
    }
    // Several at once: the message names each, and `fields` lists each with its own words.
    let answer = get(&app, "/reporting/listings?limit=0&page=0", "viewer").await;
    problem(&answer, 400, "VALIDATION_ERROR");
    let fields: Vec<&str> = answer.1["error"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["page", "limit"], "{}", answer.1);
    let answer = get(&app, "/reporting/listings?status=BOGUS", "viewer").await;
    let message = problem(&answer, 400, "VALIDATION_ERROR");
    assert!(
        message.contains("status") && message.contains("ACTIVE") && message.contains("INACTIVE"),
        "names the parameter and the accepted values: {message}"
    );
}

/// Asserts a listing's `metrics`: (revenue, occupancy, bookings, ADR, RevPAR, booked nights,
/// available nights) in `currency` over `[start, end]`.
fn assert_metrics(
    listing: &Value,
    expected: (&str, &str, i64, &str, &str, i64, i64),
    (currency, start, end): (&str, &str, &str),
) {
    let m = &listing["metrics"];
    let (revenue, occupancy, bookings, adr, revpar, booked, available) = expected;
    assert_eq!(dec(&m["revenue"]), d(revenue), "revenue of {listing}");
    assert_eq!(dec(&m["occupancy"]), d(occupancy), "occupancy of {listing}");
    assert_eq!(
        m["bookings"].as_i64(),
        Some(bookings),
        "bookings of {listing}"
    );
    assert_eq!(dec(&m["adr"]), d(adr), "ADR of {listing}");
    assert_eq!(dec(&m["revpar"]), d(revpar), "RevPAR of {listing}");
    assert_eq!(m["bookedNights"].as_i64(), Some(booked), "{listing}");
    assert_eq!(m["availableNights"].as_i64(), Some(available), "{listing}");
    assert_eq!(m["currency"], currency, "{listing}");
    assert_eq!(m["startDate"], start, "{listing}");
    assert_eq!(m["endDate"], end, "{listing}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn listing_metrics_follow_the_dashboard_definitions_over_a_period(pool: PgPool) {
    let app = crate::reporting_dashboard::app_far_from_midnight(pool.clone()).await;
    // THB listings: their metrics are in THB unless another currency is asked for.
    let thb = Some("THB");
    let busy = insert_listing_in(&pool, 1, "Villa Busy", "ACTIVE", thb).await;
    let other = insert_listing_in(&pool, 2, "Villa Other", "ACTIVE", thb).await;
    let idle = insert_listing_in(&pool, 3, "Villa Idle", "ACTIVE", thb).await;
    let recent = insert_listing_in(&pool, 4, "Villa Recent", "ACTIVE", thb).await;
    let date = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    let stay = |pms_id: i64, listing: i64, check_in: &str, nights: i32, status, total: i64| Stay {
        pms_id,
        listing_pms_id: Some(listing),
        check_in: date(check_in),
        nights,
        status,
        channel: "AIRBNB",
        total: Decimal::new(total * 100, 2),
    };
    // The period read: 1–30 March 2026, 30 nights. In THB unless said.
    let busy_stays = [
        // 5–10 March: 6 nights, 600.00, a check-in.
        stay(11, 1, "2026-03-05", 6, "CONFIRMED", 600),
        // 24 February – 2 March: 2 of its 7 nights inside (the 1st and 2nd), 1,000.00 × 2/7 =
        // 285.714…, checked in before.
        stay(12, 1, "2026-02-24", 7, "CONFIRMED", 1000),
        // 29 March – 1 April: the 29th and 30th inside (the period ends with the 30th), 200.00, a
        // check-in.
        stay(13, 1, "2026-03-29", 4, "CONFIRMED", 400),
        // Not bookings: cancelled, pending.
        stay(14, 1, "2026-03-10", 3, "CANCELLED", 999),
        stay(16, 1, "2026-03-05", 2, "PENDING", 500),
        // An owner stay: 20–22 March blocked, 3 nights less available.
        stay(15, 1, "2026-03-20", 3, "OWNER_STAY", 0),
        // Outside the period.
        stay(17, 1, "2026-04-03", 3, "CONFIRMED", 700),
        stay(18, 1, "2026-01-10", 5, "CONFIRMED", 800),
        // Booked twice (a duplicate booking), 15–17 March: both count, their nights as a sum (6),
        // 450.00 each, 2 check-ins.
        stay(19, 1, "2026-03-15", 3, "CONFIRMED", 450),
        stay(20, 1, "2026-03-15", 3, "CONFIRMED", 450),
        // 9–12 March, over the first stay's last two nights: 4 nights more in the sum, 400.00, a
        // check-in.
        stay(22, 1, "2026-03-09", 4, "CONFIRMED", 400),
    ];
    for s in &busy_stays {
        insert_stay_in(&pool, s, Some("THB")).await;
    }
    // 25–26 March in USD, 300.00: its 2 nights count, its money only in USD; a check-in.
    let dollars = stay(23, 1, "2026-03-25", 2, "CONFIRMED", 300);
    insert_stay_in(&pool, &dollars, Some("USD")).await;
    // Another listing's stay counts for it alone: 30–31 March, the 30th inside: 150.00.
    let others = stay(21, 2, "2026-03-30", 2, "CONFIRMED", 300);
    insert_stay_in(&pool, &others, Some("THB")).await;
    // For the default period (the 30 nights ending today, the API's business day): 3 nights from
    // yesterday, 900.00 = 300 a night; yesterday and today inside.
    let today = app.today();
    let yesterday = Stay {
        pms_id: 24,
        listing_pms_id: Some(4),
        check_in: today - TimeDelta::days(1),
        nights: 3,
        status: "CONFIRMED",
        channel: "AIRBNB",
        total: Decimal::new(90000, 2),
    };
    insert_stay_in(&pool, &yesterday, Some("THB")).await;

    let march = ("THB", "2026-03-01", "2026-03-30");
    // Busy: revenue 600 + 285.714… + 200 + 450 + 450 + 400 = 2,385.714… → 2,385.71. Booked
    // 6 + 2 + 2 + 3 + 3 + 4 + 2 (the USD stay) = 22 of 30 less 3 blocked = 27: 81.481… → 81.48.
    // Check-ins #11, #13, #19, #20, #22, #23 = 6. ADR over the 20 THB nights: 119.285… → 119.29;
    // RevPAR 2,385.714… / 27 = 88.359… → 88.36.
    let busy_figures = ("2385.71", "81.48", 6, "119.29", "88.36", 22, 27);
    // Other: 150 over 1 night of 30: 3.33 %, ADR 150, RevPAR 5.
    let other_figures = ("150", "3.33", 1, "150", "5", 1, 30);
    let idle_figures = ("0", "0", 0, "0", "0", 0, 30);
    let period = "startDate=2026-03-01&endDate=2026-03-30";
    let (status, page) = get(&app, &format!("/reporting/listings?{period}"), "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        names(&page),
        ["Villa Busy", "Villa Idle", "Villa Other", "Villa Recent"]
    );
    assert_metrics(&page["data"][0], busy_figures, march);
    assert_metrics(&page["data"][1], idle_figures, march);
    assert_metrics(&page["data"][2], other_figures, march);
    // The single listing carries the same figures.
    for (id, expected) in [
        (busy, busy_figures),
        (other, other_figures),
        (idle, idle_figures),
    ] {
        let path = format!("/reporting/listings/{id}?{period}");
        let (status, listing) = get(&app, &path, "viewer").await;
        assert_eq!(status, 200, "{listing}");
        assert_metrics(&listing, expected, march);
    }
    // In USD: the USD stay's 300.00 over its 2 nights (ADR 150), / 27 = 11.11; the nights and
    // check-ins do not depend on the currency.
    let path = format!("/reporting/listings/{busy}?{period}&currency=USD");
    let (status, listing) = get(&app, &path, "viewer").await;
    assert_eq!(status, 200, "{listing}");
    assert_metrics(
        &listing,
        ("300", "81.48", 6, "150", "11.11", 22, 27),
        ("USD", "2026-03-01", "2026-03-30"),
    );

    // No dates: the 30 nights ending today. Recent: 2 nights of 30, 600.00: 6.67 %, ADR 300,
    // RevPAR 20; it checked in yesterday.
    let start = (today - TimeDelta::days(29)).to_string();
    let end = today.to_string();
    let recent_figures = ("600", "6.67", 1, "300", "20", 2, 30);
    let (status, listing) = get(&app, &format!("/reporting/listings/{recent}"), "viewer").await;
    assert_eq!(status, 200, "{listing}");
    assert_metrics(&listing, recent_figures, ("THB", &start, &end));
    let (status, page) = get(&app, "/reporting/listings?search=recent", "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_metrics(&page["data"][0], recent_figures, ("THB", &start, &end));

    // A period or currency the dashboard would refuse is refused here too.
    for (query, field) in [
        ("startDate=2026-13-01", "startDate"),
        ("startDate=2026-03-30&endDate=2026-03-01", "startDate"),
        // 2025-01-01 .. 2026-01-02: 367 nights.
        ("startDate=2025-01-01&endDate=2026-01-02", "endDate"),
        ("currency=XX", "currency"),
    ] {
        for path in [
            "/reporting/listings".to_owned(),
            format!("/reporting/listings/{busy}"),
        ] {
            let answer = get(&app, &format!("{path}?{query}"), "viewer").await;
            let message = problem(&answer, 400, "VALIDATION_ERROR");
            assert!(message.contains(field), "{path}?{query}: {message}");
        }
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_listings_metrics_are_in_its_own_currency_unless_another_is_asked(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    // The dashboard's fixture: A (Villa Zinnia) a THB listing, C (Villa Magnolia) a USD one with
    // #9, 300.00 in USD over 10–12 March, and #10 without a currency over 20–21 March.
    let f = crate::reporting_dashboard::load_fixture(&pool).await;
    let march = "startDate=2026-03-01&endDate=2026-03-31";
    let in_march = |currency| (currency, "2026-03-01", "2026-03-31");
    // C: 5 booked nights of 31 (16.13 %), 2 check-ins; in USD its 300.00 over its 3 USD nights
    // (ADR 100), RevPAR 300 / 31 = 9.677… → 9.68.
    let c_in_usd = ("300", "16.13", 2, "100", "9.68", 5, 31);
    let c_in_thb = ("0", "16.13", 2, "0", "0", 5, 31);
    // A: #1's 3 nights (3,000) and #2's 5 (7,500) of 31 less 5 blocked = 26: 30.77 %; ADR
    // 10,500 / 8 = 1,312.50; RevPAR 10,500 / 26 = 403.846… → 403.85; check-in #2.
    let a_in_thb = ("10500", "30.77", 1, "1312.5", "403.85", 8, 26);
    let a_in_usd = ("0", "30.77", 1, "0", "0", 8, 26);

    // One listing: its own currency by default.
    let (status, c) = get(
        &app,
        &format!("/reporting/listings/{}?{march}", f.c),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["currency"], "USD");
    assert_metrics(&c, c_in_usd, in_march("USD"));
    let (status, a) = get(
        &app,
        &format!("/reporting/listings/{}?{march}", f.a),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{a}");
    assert_metrics(&a, a_in_thb, in_march("THB"));
    // A page: each listing in its own.
    let (status, page) = get(&app, &format!("/reporting/listings?{march}"), "viewer").await;
    assert_eq!(status, 200, "{page}");
    let of = |name: &str| -> Value {
        page["data"]
            .as_array()
            .and_then(|all| all.iter().find(|l| l["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {page}"))
    };
    assert_metrics(&of("Villa Magnolia"), c_in_usd, in_march("USD"));
    assert_metrics(&of("Villa Zinnia"), a_in_thb, in_march("THB"));
    assert_eq!(of("Villa Amber")["metrics"]["currency"], "THB", "{page}");

    // A currency asked for wins, for every listing of a page too.
    let path = format!("/reporting/listings/{}?{march}&currency=thb", f.c);
    let (status, c) = get(&app, &path, "viewer").await;
    assert_eq!(status, 200, "{c}");
    assert_metrics(&c, c_in_thb, in_march("THB"));
    let (status, page) = get(
        &app,
        &format!("/reporting/listings?{march}&currency=USD"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{page}");
    for listing in page["data"].as_array().unwrap() {
        assert_eq!(listing["metrics"]["currency"], "USD", "{listing}");
    }
    let a = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "Villa Zinnia")
        .unwrap();
    assert_metrics(a, a_in_usd, in_march("USD"));

    // A listing without a currency: REPORTING_CURRENCY (THB).
    let bare = insert_listing_in(&pool, 105, "Villa Bare", "ACTIVE", None).await;
    let (status, body) = get(
        &app,
        &format!("/reporting/listings/{bare}?{march}"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["currency"].is_null(), "{body}");
    assert_metrics(&body, ("0", "0", 0, "0", "0", 0, 31), in_march("THB"));

    // Linking C to a villa answers it with its metrics in its own currency too.
    let villa = create_villa(&app, "Villa Magnolia").await;
    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/reporting/listings/{}", f.c),
        "manager",
        Some(json!({"villaId": villa})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["metrics"]["currency"], "USD", "{body}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_listing_is_read_and_linked_to_a_villa_by_hand(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let listing = insert_listing(&pool, 501, "Villa Sunset PMS", "ACTIVE").await;
    let villa = create_villa(&app, "Villa Sunset").await;
    let path = format!("/reporting/listings/{listing}");

    let (status, body) = get(&app, &path, "viewer").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], listing.to_string());
    assert_eq!(body["pmsId"], 501);
    assert_eq!(body["name"], "Villa Sunset PMS");
    assert_eq!(body["status"], "ACTIVE");
    assert_eq!(body["bedrooms"], 3);
    assert_eq!(body["location"], "Canggu, Indonesia");
    assert_eq!(body["currency"], "USD");
    assert!(body["villaId"].is_null(), "{body}");
    assert!(body["lastSyncedAt"].is_string(), "{body}");
    assert!(body["metrics"].is_object(), "{body}");

    let missing = Uuid::now_v7();
    let answer = get(&app, &format!("/reporting/listings/{missing}"), "viewer").await;
    problem(&answer, 404, "NOT_FOUND");
    let answer = get(&app, "/reporting/listings/not-a-uuid", "viewer").await;
    problem(&answer, 400, "VALIDATION_ERROR");

    // Linked by hand.
    let (status, body) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"villaId": villa})),
    )
    .await;
    assert!(status == 200 || status == 204, "{status} {body}");
    if status == 200 {
        assert_eq!(body["villaId"], villa.to_string(), "{body}");
    }
    let (_, body) = get(&app, &path, "viewer").await;
    assert_eq!(body["villaId"], villa.to_string(), "{body}");
    let (_, page) = get(&app, "/reporting/listings", "viewer").await;
    assert_eq!(page["data"][0]["villaId"], villa.to_string(), "{page}");
    let by_hand: bool =
        sqlx::query_scalar("SELECT villa_linked_by_hand FROM pms_listings WHERE id = $1")
            .bind(listing)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(by_hand, "a link made by hand survives later syncs");

    // Bad links: nothing changes.
    let answer = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"villaId": Uuid::now_v7()})),
    )
    .await;
    let message = problem(&answer, 400, "VALIDATION_ERROR");
    assert!(message.contains("villaId"), "{message}");
    let answer = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"villaId": 5})),
    )
    .await;
    let message = problem(&answer, 400, "VALIDATION_ERROR");
    assert!(message.contains("villaId"), "{message}");
    let answer = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"villaId": "not-a-uuid"})),
    )
    .await;
    problem(&answer, 400, "VALIDATION_ERROR");
    let answer = send(
        &app,
        Method::PATCH,
        &format!("/reporting/listings/{missing}"),
        "manager",
        Some(json!({"villaId": villa})),
    )
    .await;
    problem(&answer, 404, "NOT_FOUND");
    let answer = send(
        &app,
        Method::PATCH,
        &path,
        "viewer",
        Some(json!({"villaId": null})),
    )
    .await;
    problem(&answer, 403, "FORBIDDEN");
    let answer = call(
        &app,
        Method::PATCH,
        &path,
        None,
        Some(&json!({"villaId": null})),
    )
    .await;
    problem(&answer, 401, "UNAUTHORIZED");
    let (_, body) = get(&app, &path, "viewer").await;
    assert_eq!(body["villaId"], villa.to_string(), "{body}");

    // Unlinked by hand: null.
    let (status, body) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"villaId": null})),
    )
    .await;
    assert!(status == 200 || status == 204, "{status} {body}");
    let (_, body) = get(&app, &path, "viewer").await;
    assert!(body["villaId"].is_null(), "{body}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn reservations_are_paged_newest_first_and_filtered(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let amber = insert_listing(&pool, 701, "Villa Amber", "ACTIVE").await;
    insert_listing(&pool, 702, "Villa Birch", "ACTIVE").await;
    let date = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    let stay = |pms_id: i64, listing: Option<i64>, check_in: &str, nights, status, channel| Stay {
        pms_id,
        listing_pms_id: listing,
        check_in: date(check_in),
        nights,
        status,
        channel,
        total: Decimal::new(30000 + pms_id, 2),
    };
    let stays = [
        stay(1, Some(701), "2025-03-01", 3, "CONFIRMED", "AIRBNB"),
        stay(2, Some(701), "2025-03-05", 2, "CANCELLED", "BOOKING_COM"),
        stay(3, Some(702), "2025-03-05", 3, "CONFIRMED", "AIRBNB"),
        stay(4, Some(702), "2025-03-10", 2, "PENDING", "VRBO"),
        // Its listing has not arrived (yet): listing null.
        stay(5, Some(9999), "2025-02-20", 2, "CONFIRMED", "DIRECT"),
        stay(6, Some(701), "2025-03-15", 5, "OWNER_STAY", "DIRECT"),
    ];
    let mut rows: Vec<(NaiveDate, Uuid, i64)> = Vec::new();
    for s in &stays {
        rows.push((s.check_in, insert_stay(&pool, s).await, s.pms_id));
    }
    // Newest check-in first, then id (descending) between equal check-ins.
    rows.sort_by_key(|r| std::cmp::Reverse((r.0, r.1)));
    let id_of = |pms_id: i64| rows.iter().find(|r| r.2 == pms_id).unwrap().1;
    let in_order = |pms_ids: &[i64]| -> Vec<Uuid> {
        rows.iter()
            .filter(|r| pms_ids.contains(&r.2))
            .map(|r| r.1)
            .collect()
    };

    let (status, page) = get(&app, "/reporting/reservations", "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["pagination"],
        json!({"page": 1, "limit": 20, "total": 6})
    );
    assert_eq!(ids(&page), in_order(&[1, 2, 3, 4, 5, 6]));
    let (_, page) = get(&app, "/reporting/reservations?limit=2", "viewer").await;
    assert_eq!(ids(&page), in_order(&[6, 4]));
    assert_eq!(
        page["pagination"],
        json!({"page": 1, "limit": 2, "total": 6})
    );
    let (_, page) = get(&app, "/reporting/reservations?limit=2&page=3", "viewer").await;
    assert_eq!(ids(&page), in_order(&[1, 5]));
    let (_, page) = get(&app, "/reporting/reservations?limit=2&page=4", "viewer").await;
    assert_eq!(page["data"], json!([]));

    // The fields of a reservation in the list.
    let (_, page) = get(&app, "/reporting/reservations?channel=AIRBNB", "viewer").await;
    assert_eq!(ids(&page), in_order(&[1, 3]));
    let first = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pmsId"] == 1)
        .unwrap()
        .clone();
    assert_eq!(first["guestName"], "Guest 1");
    assert_eq!(
        first["listing"],
        json!({"id": amber, "name": "Villa Amber"})
    );
    assert_eq!(first["listingPmsId"], 701);
    assert_eq!(first["checkIn"], "2025-03-01");
    assert_eq!(first["checkOut"], "2025-03-04");
    assert_eq!(first["nights"], 3);
    assert_eq!(first["channel"], "AIRBNB");
    assert_eq!(first["channelName"], "airbnb");
    assert_eq!(dec(&first["totalAmount"]), stays[0].total);
    assert_eq!(dec(&first["netAmount"]), stays[0].net());
    assert_eq!(first["currency"], "USD");
    assert_eq!(first["status"], "CONFIRMED");

    // Filters, alone and together.
    for (query, expected) in [
        (format!("listingId={amber}"), in_order(&[1, 2, 6])),
        ("status=CANCELLED".to_owned(), in_order(&[2])),
        ("status=CONFIRMED".to_owned(), in_order(&[1, 3, 5])),
        ("channel=DIRECT".to_owned(), in_order(&[5, 6])),
        (
            format!("listingId={amber}&status=CONFIRMED"),
            in_order(&[1]),
        ),
        // startDate and endDate bound the check-in, both inclusive.
        (
            "startDate=2025-03-05&endDate=2025-03-10".to_owned(),
            in_order(&[2, 3, 4]),
        ),
        ("startDate=2025-03-05".to_owned(), in_order(&[2, 3, 4, 6])),
        ("endDate=2025-03-01".to_owned(), in_order(&[1, 5])),
        (
            "startDate=2025-03-02&endDate=2025-03-04".to_owned(),
            Vec::new(),
        ),
        (format!("listingId={}", Uuid::now_v7()), Vec::new()),
    ] {
        let (status, page) = get(&app, &format!("/reporting/reservations?{query}"), "viewer").await;
        assert_eq!(status, 200, "{query}: {page}");
        assert_eq!(ids(&page), expected, "{query}");
        assert_eq!(
            page["pagination"]["total"].as_u64(),
            Some(expected.len() as u64),
            "{query}"
        );
    }

    // Bad filters: 400 naming the parameter.
    for (query, named) in [
        ("status=NOPE", &["status", "CONFIRMED"][..]),
        ("channel=MYSPACE", &["channel", "AIRBNB"][..]),
        ("startDate=2025-13-01", &["startDate"][..]),
        ("endDate=2025-02-30", &["endDate"][..]),
        ("startDate=01/03/2025", &["startDate"][..]),
        ("listingId=not-a-uuid", &["listingId"][..]),
        ("limit=101", &["limit"][..]),
        ("page=0", &["page"][..]),
    ] {
        let answer = get(&app, &format!("/reporting/reservations?{query}"), "viewer").await;
        let message = problem(&answer, 400, "VALIDATION_ERROR");
        for &word in named {
            assert!(message.contains(word), "{query}: {message}");
        }
    }
    let answer = get(
        &app,
        "/reporting/reservations?startDate=2025-03-10&endDate=2025-03-01",
        "viewer",
    )
    .await;
    problem(&answer, 400, "VALIDATION_ERROR");

    // One reservation.
    let one = id_of(1);
    let (status, body) = get(&app, &format!("/reporting/reservations/{one}"), "viewer").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], one.to_string());
    assert_eq!(body["pmsId"], 1);
    assert_eq!(body["listing"]["id"], amber.to_string());
    assert_eq!(body["checkIn"], "2025-03-01");
    assert_eq!(dec(&body["totalAmount"]), stays[0].total);
    assert_eq!(dec(&body["netAmount"]), stays[0].net());
    assert_eq!(dec(&body["taxAmount"]), stays[0].tax());
    assert_eq!(dec(&body["channelCommissionAmount"]), stays[0].commission());
    assert_eq!(dec(&body["hostawayCommissionAmount"]), Decimal::ZERO);
    assert_eq!(body["pmsStatus"], "new");
    let orphan = id_of(5);
    let (status, body) = get(&app, &format!("/reporting/reservations/{orphan}"), "viewer").await;
    assert_eq!(status, 200, "{body}");
    assert!(body["listing"].is_null(), "{body}");
    assert_eq!(body["listingPmsId"], 9999);
    let answer = get(
        &app,
        &format!("/reporting/reservations/{}", Uuid::now_v7()),
        "viewer",
    )
    .await;
    problem(&answer, 404, "NOT_FOUND");
    let answer = get(&app, "/reporting/reservations/not-a-uuid", "viewer").await;
    problem(&answer, 400, "VALIDATION_ERROR");
}

/// The rate-limit headers of an answer: (limit, remaining, reset).
fn limits(headers: &HeaderMap) -> (u64, u64, u64) {
    let read = |name: &str| -> u64 {
        header_of(headers, name)
            .unwrap_or_else(|| panic!("no {name} header in {headers:?}"))
            .parse()
            .unwrap_or_else(|_| panic!("{name} is not a whole number: {headers:?}"))
    };
    (
        read("ratelimit-limit"),
        read("ratelimit-remaining"),
        read("ratelimit-reset"),
    )
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn rate_limits_are_per_caller_and_shared_by_two_api_processes(pool: PgPool) {
    // Two API processes of one platform: one database, one Redis prefix.
    let prefix = tests::unique_prefix();
    let replica = || TestAppOptions {
        redis_prefix: Some(prefix.clone()),
        ..Default::default()
    };
    let a = TestApp::spawn_with(pool.clone(), replica()).await;
    let b = TestApp::spawn_with(pool.clone(), replica()).await;
    // Both apps' tokens name the same subject (their providers sign `sub: user-1`).
    let subject = |app: &TestApp| token_as(app, "viewer", "user-1");
    let runs = "/reporting/sync/runs";
    let send_as = |app: &TestApp, token: String, path: &'static str| {
        app.http.get(app.url(path)).bearer_auth(token).send()
    };

    // Sync routes: 5 a minute, counted across both processes.
    for (i, app) in [&a, &b, &a, &b, &a].into_iter().enumerate() {
        let res = send_as(app, subject(app), runs).await.unwrap();
        let headers = res.headers().clone();
        let (status, body) = read_json(res).await;
        assert_eq!(status, 200, "call {}: {body}", i + 1);
        let (limit, remaining, reset) = limits(&headers);
        assert_eq!(limit, 5);
        assert_eq!(remaining, 4 - i as u64, "call {}", i + 1);
        assert!(reset <= 60, "{reset}");
    }
    for app in [&b, &a] {
        let res = send_as(app, subject(app), runs).await.unwrap();
        let headers = res.headers().clone();
        let (status, body) = read_json(res).await;
        assert_eq!(status, 429, "{body}");
        assert_error_shape("reporting", &body, 429, "RATE_LIMIT_EXCEEDED");
        let retry_after = body["error"]["retryAfter"]
            .as_u64()
            .unwrap_or_else(|| panic!("retryAfter in whole seconds: {body}"));
        assert!((1..=60).contains(&retry_after), "{body}");
        assert_eq!(
            header_of(&headers, "retry-after"),
            Some(retry_after.to_string().as_str())
        );
        let (limit, remaining, _) = limits(&headers);
        assert_eq!((limit, remaining), (5, 0));
    }
    // 5 in any 60 seconds, not 5 at once and then one every 12 s: 13 s on, still refused, until
    // the first of the five is a minute old.
    tokio::time::sleep(Duration::from_secs(13)).await;
    let res = send_as(&a, subject(&a), runs).await.unwrap();
    let (status, body) = read_json(res).await;
    assert_eq!(status, 429, "a sixth request 13 s after the first: {body}");
    let retry_after = body["error"]["retryAfter"].as_u64().unwrap_or(0);
    assert!((35..=47).contains(&retry_after), "{body}");

    // Another caller has a budget of its own, on either process.
    let res = send_as(&b, token_as(&b, "viewer", "user-2"), runs)
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(limits(res.headers()).0, 5);
    assert_eq!(limits(res.headers()).1, 4);
    // And the same caller has one per class: listings 60, everything else 60.
    for (path, limit) in [("/reporting/listings", 60), ("/reporting/reservations", 60)] {
        let res = send_as(&a, subject(&a), path).await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(limits(res.headers()).0, limit, "{path}");
        assert_eq!(limits(res.headers()).1, limit - 1, "{path}");
    }

    // Health is never limited, with a token or without.
    for i in 0..70 {
        let app = if i % 2 == 0 { &a } else { &b };
        let mut req = app.http.get(app.url("/reporting/health"));
        if i % 3 != 0 {
            req = req.bearer_auth(subject(app));
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 200, "health call {}", i + 1);
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn with_redis_down_reads_are_served_uncached_and_unlimited(pool: PgPool) {
    let mut redis = RedisServer::start();
    let app = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            redis_url: redis.url(),
            ..Default::default()
        },
    )
    .await;
    insert_listing(&pool, 1, "Villa Amber", "ACTIVE").await;
    let (status, headers, _) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(status, 200);
    assert_eq!(header_of(&headers, "x-cache"), Some("MISS"));
    let (_, headers, _) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(
        header_of(&headers, "x-cache"),
        Some("HIT"),
        "Redis up: cached"
    );

    redis.stop();
    for i in 0..3 {
        let started = Instant::now();
        let (status, headers, body) = fetch(&app, "/reporting/listings", "viewer").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(header_of(&headers, "x-cache"), Some("MISS"), "call {i}");
        assert!(body.contains("Villa Amber"), "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "call {i} took {:?}",
            started.elapsed()
        );
    }
    // Sync routes allow 5 a minute; with Redis down nothing is counted.
    for i in 0..7 {
        let started = Instant::now();
        let (status, body) = get(&app, "/reporting/sync/runs", "viewer").await;
        assert_eq!(status, 200, "call {}: {body}", i + 1);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "call {} took {:?}",
            i + 1,
            started.elapsed()
        );
    }
    let (status, health) = read_json(app.get_anonymous("/reporting/health").await).await;
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["redis"], "disconnected", "{health}");
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["database"], "connected", "{health}");
    assert_eq!(health["pms"], "not_configured", "{health}");

    // Redis back (empty): caching resumes on its own.
    redis.restart();
    let resumed = eventually(Duration::from_secs(20), || async {
        let (status, _, _) = fetch(&app, "/reporting/listings", "viewer").await;
        assert_eq!(status, 200);
        let (_, headers, _) = fetch(&app, "/reporting/listings", "viewer").await;
        (header_of(&headers, "x-cache") == Some("HIT")).then_some(())
    })
    .await;
    assert!(
        resumed.is_some(),
        "caching did not resume within 20 s of Redis' return"
    );
    let (_, health) = read_json(app.get_anonymous("/reporting/health").await).await;
    assert_eq!(health["redis"], "connected", "{health}");
    assert_eq!(health["status"], "healthy", "{health}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn parameters_a_route_does_not_read_add_no_cache_entry(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    insert_listing(&pool, 901, "Villa Amber", "ACTIVE").await;
    let cache_of = |headers: &HeaderMap| header_of(headers, "x-cache").map(str::to_owned);
    let listing_entries = || cache_keys(&app, &["/reporting/listings?"]);

    let (status, headers, first) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    // Junk parameters (a cache-buster, a tracking tag) are ignored, as the route ignores them:
    // the same answer, from the one entry.
    for i in 1..=20 {
        let path = format!("/reporting/listings?x={i}&utm_source=mail{i}");
        let (status, headers, body) = fetch(&app, &path, "viewer").await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(cache_of(&headers).as_deref(), Some("HIT"), "{path}");
        assert_eq!(body, first, "{path}");
    }
    assert_eq!(
        listing_entries().await.len(),
        1,
        "{:?}",
        listing_entries().await
    );
    // Values are keyed as the route reads them: its defaults spelled out, a blank currency
    // (each listing's own, the default), a blank search, are the entry of the request without
    // them.
    for path in [
        "/reporting/listings?page=1&limit=20",
        "/reporting/listings?currency=",
        "/reporting/listings?search=%20&status=",
    ] {
        let (status, headers, body) = fetch(&app, path, "viewer").await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(cache_of(&headers).as_deref(), Some("HIT"), "{path}");
    }
    for (path, expected) in [
        ("/reporting/listings?status=active", "MISS"),
        ("/reporting/listings?status=ACTIVE&junk=1", "HIT"),
    ] {
        let (status, headers, body) = fetch(&app, path, "viewer").await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(cache_of(&headers).as_deref(), Some(expected), "{path}");
    }
    assert_eq!(
        listing_entries().await.len(),
        2,
        "{:?}",
        listing_entries().await
    );
    // The other cached routes alike.
    for path in ["/reporting/reservations", "/reporting/dashboard/metrics"] {
        let (status, headers, _) = fetch(&app, path, "viewer").await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(cache_of(&headers).as_deref(), Some("MISS"), "{path}");
        let junk = format!("{path}?_={}", Uuid::new_v4().simple());
        let (status, headers, _) = fetch(&app, &junk, "viewer").await;
        assert_eq!(status, 200, "{junk}");
        assert_eq!(cache_of(&headers).as_deref(), Some("HIT"), "{junk}");
    }
}

/// The cache entries in Redis whose key contains every one of `parts`.
async fn cache_keys(app: &TestApp, parts: &[&str]) -> Vec<String> {
    let mut redis = app.redis();
    let pattern = format!("{}:reporting:cache:*", app.core.redis_prefix);
    let mut keys = Vec::new();
    let mut cursor = 0_u64;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut redis)
            .await
            .unwrap();
        keys.extend(
            batch
                .into_iter()
                .filter(|k| parts.iter().all(|p| k.contains(p))),
        );
        if next == 0 {
            return keys;
        }
        cursor = next;
    }
}

async fn ttl(app: &TestApp, key: &str) -> i64 {
    let mut redis = app.redis();
    redis::cmd("TTL")
        .arg(key)
        .query_async(&mut redis)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn reads_are_cached_until_invalidated_and_expire(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let amber = insert_listing(&pool, 801, "Villa Amber", "ACTIVE").await;
    let birch = insert_listing(&pool, 802, "Villa Birch", "ACTIVE").await;
    insert_stay(
        &pool,
        &Stay {
            pms_id: 1,
            listing_pms_id: Some(801),
            check_in: NaiveDate::from_ymd_opt(2025, 3, 1).unwrap(),
            nights: 3,
            status: "CONFIRMED",
            channel: "AIRBNB",
            total: Decimal::new(30000, 2),
        },
    )
    .await;
    let cache_of = |headers: &HeaderMap| header_of(headers, "x-cache").map(str::to_owned);

    let (status, headers, first) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    let (status, headers, again) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(status, 200);
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    assert_eq!(again, first, "a hit answers the stored body");
    // Keyed by route and query, not by caller.
    let (_, headers, _) = fetch(&app, "/reporting/listings", "manager").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    // An empty page or limit is a 400, not the cached answer without the parameter.
    for query in ["limit=", "page=", "page=&limit="] {
        let path = format!("/reporting/listings?{query}");
        let (status, headers, body) = fetch(&app, &path, "viewer").await;
        assert_ne!(cache_of(&headers).as_deref(), Some("HIT"), "{path}");
        let answer = (status, serde_json::from_str(&body).unwrap());
        let message = problem(&answer, 400, "VALIDATION_ERROR");
        assert!(
            message.contains("limit") || message.contains("page"),
            "{path}: {message}"
        );
    }

    let one = format!("/reporting/listings/{amber}");
    // Another query is another entry; the order of the parameters does not matter, nor does
    // spelling out a default (page 1).
    for (path, expected) in [
        ("/reporting/listings?limit=5", "MISS"),
        ("/reporting/listings?limit=5", "HIT"),
        ("/reporting/listings?page=1&limit=5", "HIT"),
        ("/reporting/listings?page=2&limit=5", "MISS"),
        ("/reporting/listings?limit=5&page=2", "HIT"),
        ("/reporting/reservations", "MISS"),
        ("/reporting/reservations", "HIT"),
        (one.as_str(), "MISS"),
        (one.as_str(), "HIT"),
    ] {
        let (status, headers, body) = fetch(&app, path, "viewer").await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(cache_of(&headers).as_deref(), Some(expected), "{path}");
    }
    // An empty search is no filter: the same answer, from the cache or not.
    let (_, _, five) = fetch(&app, "/reporting/listings?limit=5", "viewer").await;
    let (status, _, body) = fetch(&app, "/reporting/listings?limit=5&search=", "viewer").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, five);
    // Errors are not cached.
    for _ in 0..2 {
        let (status, headers, _) = fetch(&app, "/reporting/listings?limit=500", "viewer").await;
        assert_eq!(status, 400);
        assert_ne!(cache_of(&headers).as_deref(), Some("HIT"));
    }

    // A change the API did not make is not seen while the entry holds...
    sqlx::query("UPDATE pms_listings SET name = 'Villa Amber Renamed' WHERE id = $1")
        .bind(amber)
        .execute(&pool)
        .await
        .unwrap();
    let (_, headers, body) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    assert_eq!(body, first, "still the cached answer");
    // ...until the cache is invalidated (what a completed sync does).
    jobs::reporting_cache::invalidate(&app.redis(), &app.core.redis_prefix)
        .await
        .expect("invalidated");
    for path in [
        "/reporting/listings",
        "/reporting/listings?limit=5",
        "/reporting/reservations",
    ] {
        let (_, headers, body) = fetch(&app, path, "viewer").await;
        assert_eq!(cache_of(&headers).as_deref(), Some("MISS"), "{path}");
        assert!(body.contains("Villa Amber Renamed"), "{path}: {body}");
    }
    let (_, headers, _) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));

    // Linking a listing to a villa invalidates too.
    sqlx::query("UPDATE pms_listings SET name = 'Villa Birch Renamed' WHERE id = $1")
        .bind(birch)
        .execute(&pool)
        .await
        .unwrap();
    let (_, headers, body) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    assert!(!body.contains("Villa Birch Renamed"), "{body}");
    let villa = create_villa(&app, "Villa Sunset").await;
    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/reporting/listings/{amber}"),
        "manager",
        Some(json!({"villaId": villa})),
    )
    .await;
    assert!(status == 200 || status == 204, "{status} {body}");
    let (_, headers, body) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    assert!(body.contains("Villa Birch Renamed"), "{body}");
    assert!(body.contains(&villa.to_string()), "{body}");
    let (_, headers, body) = fetch(&app, &one, "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    assert!(body.contains(&villa.to_string()), "{body}");

    // Expiry: listings 10 minutes, reservations 2, set when the entry is stored.
    let (_, headers, _) = fetch(&app, "/reporting/listings?limit=7", "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    let keys = cache_keys(&app, &["listings", "limit=7"]).await;
    assert_eq!(keys.len(), 1, "one entry for the query: {keys:?}");
    let left = ttl(&app, &keys[0]).await;
    assert!((591..=600).contains(&left), "listings entry TTL {left}");
    let (_, headers, _) = fetch(&app, "/reporting/reservations?limit=7", "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    let keys = cache_keys(&app, &["reservations", "limit=7"]).await;
    assert_eq!(keys.len(), 1, "one entry for the query: {keys:?}");
    let left = ttl(&app, &keys[0]).await;
    assert!((111..=120).contains(&left), "reservations entry TTL {left}");

    // And it does expire: the shortest class's entry, given 1 s left instead of waiting 2
    // minutes, holds until then and is gone after.
    let reservations = "/reporting/reservations?limit=7";
    let (_, headers, cached) = fetch(&app, reservations, "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    assert!(cached.contains("Guest 1"), "{cached}");
    sqlx::query("UPDATE pms_reservations SET guest_name = 'Guest Renamed' WHERE pms_id = 1")
        .execute(&pool)
        .await
        .unwrap();
    let mut redis = app.redis();
    let set: i64 = redis::cmd("EXPIRE")
        .arg(&keys[0])
        .arg(1)
        .query_async(&mut redis)
        .await
        .unwrap();
    assert_eq!(set, 1, "{} holds no entry", keys[0]);
    let (_, headers, body) = fetch(&app, reservations, "viewer").await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    assert_eq!(body, cached, "still the cached answer");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (status, headers, body) = fetch(&app, reservations, "viewer").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"), "expired");
    assert!(body.contains("Guest Renamed"), "{body}");
}

/// `GET /reporting/health` without a token.
async fn health(app: &TestApp) -> Value {
    let (status, body) = read_json(app.get_anonymous("/reporting/health").await).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        DateTime::parse_from_rfc3339(body["timestamp"].as_str().unwrap()).is_ok(),
        "{body}"
    );
    body
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn health_without_a_pms_is_healthy_and_says_not_configured(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let body = health(&app).await;
    assert_eq!(body["status"], "healthy", "{body}");
    assert_eq!(body["database"], "connected", "{body}");
    assert_eq!(body["redis"], "connected", "{body}");
    assert_eq!(body["pms"], "not_configured", "{body}");
    assert!(body["lastSync"].is_null(), "{body}");

    // lastSync is the run that finished last, whatever its outcome.
    insert_finished_run(&pool, "COMPLETED", 2).await;
    let failed = insert_finished_run(&pool, "FAILED", 1).await;
    let body = health(&app).await;
    assert_eq!(body["lastSync"]["syncId"], failed.to_string(), "{body}");
    assert_eq!(body["lastSync"]["status"], "FAILED", "{body}");
    assert!(
        DateTime::parse_from_rfc3339(body["lastSync"]["finishedAt"].as_str().unwrap()).is_ok(),
        "{body}"
    );
    assert_eq!(body["status"], "healthy", "{body}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn health_probes_the_pms_at_most_once_a_minute_and_names_the_last_sync(pool: PgPool) {
    let fake = tests::pms::start_fake().await;
    // This test is about health and the cache, not Hostaway's limits: let the sync run fast.
    fake.control.set_limits(None, None);
    let app = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            pms: Some(tests::pms::settings_for(&fake)),
            ..Default::default()
        },
    )
    .await;

    // The first health call probes the PMS.
    let body = health(&app).await;
    assert_eq!(body["pms"], "connected", "{body}");
    assert_eq!(body["status"], "healthy", "{body}");
    assert!(body["lastSync"].is_null(), "{body}");
    let seen = fake.control.requests().len();
    assert!(seen >= 1, "the probe reached the PMS");
    // The next, within a minute, answers from what was recorded.
    let body = health(&app).await;
    assert_eq!(body["pms"], "connected", "{body}");
    assert_eq!(
        fake.control.requests().len(),
        seen,
        "a health call within a minute of the probe asks the PMS nothing"
    );

    // Cached before the sync...
    let (_, headers, body) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(header_of(&headers, "x-cache"), Some("MISS"), "{body}");
    let (_, headers, body) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(header_of(&headers, "x-cache"), Some("HIT"), "{body}");
    let before: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(before["pagination"]["total"], 0);

    let worker = app.worker(tests::pms::pms_registry());
    let run = tests::pms::trigger_and_wait(
        &app,
        json!({"type": "full", "entities": ["listings", "reservations"]}),
    )
    .await;
    assert_eq!(run["status"], "COMPLETED", "{run}");

    // ...and a completed sync invalidates at once: the listings it brought are read.
    let (_, headers, body) = fetch(&app, "/reporting/listings", "viewer").await;
    assert_eq!(header_of(&headers, "x-cache"), Some("MISS"), "{body}");
    let after: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        after["pagination"]["total"].as_u64(),
        Some(fake.control.listings().len() as u64),
        "{body}"
    );

    let body = health(&app).await;
    assert_eq!(body["pms"], "connected", "{body}");
    assert_eq!(body["status"], "healthy", "{body}");
    let last = &body["lastSync"];
    assert_eq!(last["syncId"], run["syncId"], "{body}");
    assert_eq!(last["status"], "COMPLETED", "{body}");
    let finished = |v: &Value| {
        DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("{v}"))).unwrap()
    };
    assert_eq!(finished(&last["finishedAt"]), finished(&run["finishedAt"]));
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn health_with_a_failing_pms_is_degraded(pool: PgPool) {
    let fake = tests::pms::start_fake().await;
    fake.control.set_failing(Some(503));
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            pms: Some(tests::pms::settings_for(&fake)),
            ..Default::default()
        },
    )
    .await;
    let body = health(&app).await;
    assert_eq!(body["pms"], "disconnected", "{body}");
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["database"], "connected", "{body}");
    assert_eq!(body["redis"], "connected", "{body}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_reporting_route_needs_a_token_and_writes_need_write_access(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let listing = insert_listing(&pool, 1, "Villa Amber", "ACTIVE").await;
    let reservation = insert_stay(
        &pool,
        &Stay {
            pms_id: 1,
            listing_pms_id: Some(1),
            check_in: NaiveDate::from_ymd_opt(2025, 3, 1).unwrap(),
            nights: 3,
            status: "CONFIRMED",
            channel: "AIRBNB",
            total: Decimal::new(30000, 2),
        },
    )
    .await;
    let run = insert_finished_run(&pool, "COMPLETED", 1).await;
    let trigger = json!({"type": "full", "entities": ["listings"]});
    let link = json!({"villaId": null});
    let routes: [(Method, String, Option<&Value>); 8] = [
        (Method::GET, "/reporting/listings".into(), None),
        (Method::GET, format!("/reporting/listings/{listing}"), None),
        (
            Method::PATCH,
            format!("/reporting/listings/{listing}"),
            Some(&link),
        ),
        (Method::GET, "/reporting/reservations".into(), None),
        (
            Method::GET,
            format!("/reporting/reservations/{reservation}"),
            None,
        ),
        (
            Method::POST,
            "/reporting/sync/trigger".into(),
            Some(&trigger),
        ),
        (Method::GET, format!("/reporting/sync/status/{run}"), None),
        (Method::GET, "/reporting/sync/runs".into(), None),
    ];

    for (method, path, body) in &routes {
        for token in [None, Some("not-a-jwt")] {
            let answer = call(&app, method.clone(), path, token, *body).await;
            assert_eq!(
                answer.0, 401,
                "{method} {path} with {token:?}: {}",
                answer.1
            );
            problem(&answer, 401, "UNAUTHORIZED");
        }
        let writes = *method != Method::GET;
        // Read-only roles may read every route and write none.
        for role in ["viewer", "staff"] {
            let token = fresh_token(&app, role);
            let answer = call(&app, method.clone(), path, Some(&token), *body).await;
            if writes {
                problem(&answer, 403, "FORBIDDEN");
            } else {
                assert_eq!(answer.0, 200, "{role} {method} {path}: {}", answer.1);
            }
        }
    }
    // Allowed to write, but there is no PMS to sync from.
    let token = fresh_token(&app, "admin");
    let answer = call(
        &app,
        Method::POST,
        "/reporting/sync/trigger",
        Some(&token),
        Some(&trigger),
    )
    .await;
    assert_eq!(answer.0, 503, "{}", answer.1);
    assert_error_shape("reporting", &answer.1, 503, "PMS_NOT_CONFIGURED");
    // No refused call started a sync (the one run is the one inserted above).
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM pms_sync_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 1);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn bad_sync_input_is_400_in_the_reporting_shape(pool: PgPool) {
    // Configured, so that a bad body is refused for being bad, not for a missing PMS.
    let fake = tests::pms::start_fake().await;
    let app = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            pms: Some(tests::pms::settings_for(&fake)),
            ..Default::default()
        },
    )
    .await;
    // Each call as a caller of its own: sync routes allow 5 a minute per caller.
    let trigger = |body: &'static str, content_type: Option<&'static str>| {
        let mut req = app
            .http
            .post(app.url("/reporting/sync/trigger"))
            .bearer_auth(fresh_token(&app, "admin"))
            .body(body);
        if let Some(ct) = content_type {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        async move { read_json(req.send().await.unwrap()).await }
    };
    let json_type = Some("application/json");

    let answer = trigger("{}", json_type).await;
    let message = problem(&answer, 400, "VALIDATION_ERROR");
    assert!(
        message.contains("type") && message.contains("entities"),
        "both missing fields are named: {message}"
    );
    // Both wrong.
    let answer = trigger(r#"{"type": "weekly", "entities": ["guests"]}"#, json_type).await;
    problem(&answer, 400, "VALIDATION_ERROR");
    for (body, named) in [
        (r#"{"type": "full", "entities": []}"#, "entities"),
        (r#"{"type": "full"}"#, "entities"),
        (r#"{"entities": ["listings"]}"#, "type"),
        (r#"{"type": "full", "entities": "listings"}"#, "entities"),
        (
            r#"{"type": "full", "entities": ["listings", "guests"]}"#,
            "entities",
        ),
        (r#"{"type": 1, "entities": ["listings"]}"#, "type"),
    ] {
        let answer = trigger(body, json_type).await;
        let message = problem(&answer, 400, "VALIDATION_ERROR");
        assert!(message.contains(named), "{body}: {message}");
    }
    // Not JSON at all.
    for body in [r#"{"type": "full", "#, "[1, 2]", ""] {
        let answer = trigger(body, json_type).await;
        assert_eq!(answer.0, 400, "{body:?}: {}", answer.1);
        assert!(answer.1["error"]["code"].is_string(), "{}", answer.1);
        assert_error_shape(
            "reporting",
            &answer.1,
            400,
            answer.1["error"]["code"].as_str().unwrap(),
        );
    }
    // Not declared as JSON.
    for content_type in [Some("text/plain"), None] {
        let answer = trigger(
            r#"{"type": "full", "entities": ["listings"]}"#,
            content_type,
        )
        .await;
        assert!(
            (400..500).contains(&answer.0),
            "{content_type:?}: {} {}",
            answer.0,
            answer.1
        );
        let code = answer.1["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert_error_shape("reporting", &answer.1, answer.0, &code);
    }

    // The other sync routes.
    let admin = fresh_token(&app, "admin");
    let answer = call(
        &app,
        Method::GET,
        "/reporting/sync/status/not-a-uuid",
        Some(&admin),
        None,
    )
    .await;
    problem(&answer, 400, "VALIDATION_ERROR");
    let answer = call(
        &app,
        Method::GET,
        &format!("/reporting/sync/status/{}", Uuid::now_v7()),
        Some(&admin),
        None,
    )
    .await;
    problem(&answer, 404, "NOT_FOUND");
    let answer = call(
        &app,
        Method::GET,
        "/reporting/sync/runs?limit=0",
        Some(&admin),
        None,
    )
    .await;
    let message = problem(&answer, 400, "VALIDATION_ERROR");
    assert!(message.contains("limit"), "{message}");

    // Nothing was started by any of it.
    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM pms_sync_runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(runs, 0);
    assert_eq!(fake.control.requests().len(), 0, "the PMS was never asked");
}
