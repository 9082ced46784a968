//! The dashboard of `/reporting` (issue 18): `/dashboard/metrics`, `/charts`, `/occupancy` and
//! `/reservations` over a fixture whose every figure is worked out by hand in the comments and
//! written here as a literal: stays across the period's edges and a month end, two overlapping
//! owner stays, a cancelled stay, an inquiry, a stay in another currency and one in none, stays in
//! the previous period, and an INACTIVE listing. Every refused input, the defaults, the cache and
//! the rate limit of the dashboard class. The fixture is SQL (no sync needed); the exports' tests
//! load it too.

use std::str::FromStr;

use chrono::{NaiveDate, TimeDelta};
use reqwest::{Method, header::HeaderMap};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, json as read_json};
use uuid::Uuid;

use crate::auth::assert_error_shape;

const METRICS: &str = "/reporting/dashboard/metrics";
const CHARTS: &str = "/reporting/dashboard/charts";
const OCCUPANCY: &str = "/reporting/dashboard/occupancy";
const RESERVATIONS: &str = "/reporting/dashboard/reservations";

/// The fixture's listings: (PMS id, name, status, currency). The names are not in the order of
/// the letters the comments use, so that an order by occupancy is never an order by name.
const LISTINGS: [(i64, &str, &str, &str); 4] = [
    (101, "Villa Zinnia", "ACTIVE", "THB"),   // A
    (102, "Villa Amber", "ACTIVE", "THB"),    // B
    (103, "Villa Magnolia", "ACTIVE", "USD"), // C
    (104, "Villa Dune", "INACTIVE", "THB"),   // D
];

/// (PMS id, listing PMS id, status, currency, check-in, check-out, channel, totalAmount)
type StayRow = (
    i64,
    i64,
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// The fixture's reservations (#1 to #13 by PMS id). A night is dated by its evening: a stay
/// occupies the nights from its check-in to the day before its check-out. The tests read March
/// 2026 (31 nights), whose previous period is 2026-01-29 .. 2026-02-28 (31 nights).
const STAYS: [StayRow; 13] = [
    // #1 A: 26 February – 3 March (6 nights), 6,000.00 = 1,000 a night. Across the period's start
    // and a month end: 3 nights in March, 3 in the previous period, where it checks in.
    (
        1,
        101,
        "CONFIRMED",
        Some("THB"),
        "2026-02-26",
        "2026-03-04",
        "AIRBNB",
        "6000.00",
    ),
    // #2 A: 10–14 March (5 nights), 7,500.00 = 1,500 a night.
    (
        2,
        101,
        "CONFIRMED",
        Some("THB"),
        "2026-03-10",
        "2026-03-15",
        "DIRECT",
        "7500.00",
    ),
    // #3, #4 A: owner stays 20–23 and 22–24 March. A's nights 20–24 are blocked: 5 nights, the
    // 22nd and 23rd once.
    (
        3,
        101,
        "OWNER_STAY",
        Some("THB"),
        "2026-03-20",
        "2026-03-24",
        "DIRECT",
        "0.00",
    ),
    (
        4,
        101,
        "OWNER_STAY",
        Some("THB"),
        "2026-03-22",
        "2026-03-25",
        "DIRECT",
        "0.00",
    ),
    // #5 A: cancelled: nothing.
    (
        5,
        101,
        "CANCELLED",
        Some("THB"),
        "2026-03-16",
        "2026-03-19",
        "AIRBNB",
        "9999.00",
    ),
    // #6 B: 30 March – 1 April (3 nights), 1,000.00 = 333.333… a night. Across the period's end and
    // a month end: 2 nights in March, 666.666….
    (
        6,
        102,
        "CONFIRMED",
        Some("THB"),
        "2026-03-30",
        "2026-04-02",
        "AIRBNB",
        "1000.00",
    ),
    // #7 B: an inquiry: nothing.
    (
        7,
        102,
        "INQUIRY",
        Some("THB"),
        "2026-03-05",
        "2026-03-08",
        "AIRBNB",
        "4500.00",
    ),
    // #8 B: 5–8 March (4 nights), 4,000.00 = 1,000 a night.
    (
        8,
        102,
        "CONFIRMED",
        Some("THB"),
        "2026-03-05",
        "2026-03-09",
        "BOOKING_COM",
        "4000.00",
    ),
    // #9 C: 10–12 March (3 nights) in USD, 300.00 = 100 a night: its nights count, its money only
    // in USD.
    (
        9,
        103,
        "CONFIRMED",
        Some("USD"),
        "2026-03-10",
        "2026-03-13",
        "AIRBNB",
        "300.00",
    ),
    // #10 C: 20–21 March (2 nights) with no currency: its nights count, its money never.
    (
        10,
        103,
        "CONFIRMED",
        None,
        "2026-03-20",
        "2026-03-22",
        "AIRBNB",
        "500.00",
    ),
    // #11 D (INACTIVE): 3–5 March (3 nights), 3,000.00: only when listingIds names D.
    (
        11,
        104,
        "CONFIRMED",
        Some("THB"),
        "2026-03-03",
        "2026-03-06",
        "AIRBNB",
        "3000.00",
    ),
    // #12 B: 10–14 February (5 nights), 2,500.00 = 500 a night: the previous period.
    (
        12,
        102,
        "CONFIRMED",
        Some("THB"),
        "2026-02-10",
        "2026-02-15",
        "AIRBNB",
        "2500.00",
    ),
    // #13 A: 27–30 January (4 nights), 4,000.00 = 1,000 a night. Across the previous period's
    // start: 2 nights (29th, 30th) in it, checked in before it.
    (
        13,
        101,
        "CONFIRMED",
        Some("THB"),
        "2026-01-27",
        "2026-01-31",
        "AIRBNB",
        "4000.00",
    ),
];

/// The fixture's listings by the letters of the comments, and its reservations.
pub struct Fixture {
    /// A: Villa Zinnia, PMS id 101.
    pub a: Uuid,
    /// B: Villa Amber, PMS id 102.
    pub b: Uuid,
    /// C: Villa Magnolia, PMS id 103 (a USD listing).
    pub c: Uuid,
    /// D: Villa Dune, PMS id 104, INACTIVE.
    pub d: Uuid,
    reservations: Vec<Uuid>,
}

impl Fixture {
    /// The id of reservation `#pms_id`.
    pub fn reservation(&self, pms_id: usize) -> Uuid {
        self.reservations[pms_id - 1]
    }
}

/// A reservation as a sync would have stored it.
pub struct Stay<'a> {
    pub pms_id: i64,
    pub listing_pms_id: i64,
    pub status: &'a str,
    pub currency: Option<&'a str>,
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub channel: &'a str,
    pub total: Decimal,
}

pub fn date(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_else(|_| panic!("not a date: {s}"))
}

/// A decimal written as text (`"15166.67"`).
pub fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap_or_else(|_| panic!("not a decimal: {s}"))
}

/// A JSON number as a decimal (figures are JSON numbers).
pub fn num(v: &Value) -> Decimal {
    assert!(v.is_number(), "not a JSON number: {v}");
    Decimal::from_str(&v.to_string())
        .or_else(|_| Decimal::from_scientific(&v.to_string()))
        .unwrap_or_else(|_| panic!("not a decimal: {v}"))
}

/// A listing as a sync would have stored it: 3 bedrooms, in Canggu.
pub async fn insert_listing(
    pool: &PgPool,
    pms_id: i64,
    name: &str,
    status: &str,
    currency: &str,
) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_listings (id, pms_id, name, status, bedrooms, location, currency, raw,
                                   synced_at)
         VALUES ($1, $2, $3, $4, 3, 'Canggu, Indonesia', $5, $6, now())",
    )
    .bind(id)
    .bind(pms_id)
    .bind(name)
    .bind(status)
    .bind(currency)
    .bind(json!({"id": pms_id, "name": name}))
    .execute(pool)
    .await
    .unwrap();
    id
}

/// Stores `s` with the guest "Guest <PMS id>", as many nights as days from check-in to
/// check-out, and a net amount of 90 % of the total.
pub async fn insert_stay(pool: &PgPool, s: &Stay<'_>) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_reservations (id, pms_id, listing_pms_id, guest_name, check_in, check_out,
                                       nights, channel, channel_name, total_amount, net_amount,
                                       tax_amount, channel_commission, hostaway_commission,
                                       currency, status, pms_status, raw, synced_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6 - $5, $7, lower($7), $8, round($8 * 0.9, 2), 0, 0, 0,
                 $9, $10, NULL, $11, now())",
    )
    .bind(id)
    .bind(s.pms_id)
    .bind(s.listing_pms_id)
    .bind(format!("Guest {}", s.pms_id))
    .bind(s.check_in)
    .bind(s.check_out)
    .bind(s.channel)
    .bind(s.total)
    .bind(s.currency)
    .bind(s.status)
    .bind(json!({"id": s.pms_id, "listingMapId": s.listing_pms_id}))
    .execute(pool)
    .await
    .unwrap();
    id
}

/// Loads the fixture's listings and reservations.
pub async fn load_fixture(pool: &PgPool) -> Fixture {
    let mut listings = Vec::new();
    for (pms_id, name, status, currency) in LISTINGS {
        listings.push(insert_listing(pool, pms_id, name, status, currency).await);
    }
    let mut reservations = Vec::new();
    for (pms_id, listing_pms_id, status, currency, check_in, check_out, channel, total) in STAYS {
        let stay = Stay {
            pms_id,
            listing_pms_id,
            status,
            currency,
            check_in: date(check_in),
            check_out: date(check_out),
            channel,
            total: d(total),
        };
        reservations.push(insert_stay(pool, &stay).await);
    }
    Fixture {
        a: listings[0],
        b: listings[1],
        c: listings[2],
        d: listings[3],
        reservations,
    }
}

/// GET `path` as a viewer of a subject no other request used: dashboard routes allow 120 a
/// minute per subject, and these tests read more than a few times.
async fn get(app: &TestApp, path: &str) -> (u16, Value) {
    tests::pms::get(app, path, "viewer").await
}

/// [`get`] with the answer's headers.
async fn fetch(app: &TestApp, path: &str) -> (u16, HeaderMap, Value) {
    let res = tests::pms::request(app, Method::GET, path, "viewer")
        .send()
        .await
        .unwrap();
    let headers = res.headers().clone();
    let (status, body) = read_json(res).await;
    (status, headers, body)
}

fn header_of<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Asserts a 400 `VALIDATION_ERROR` in the reporting shape whose message names `field`;
/// answers the message.
pub fn refused(answer: &(u16, Value), field: &str) -> String {
    let (status, body) = answer;
    assert_eq!(*status, 400, "expected a 400 naming {field}: {body}");
    assert_error_shape("reporting", body, 400, "VALIDATION_ERROR");
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains(field),
        "the message names {field}: {message}"
    );
    message
}

/// An app whose `BUSINESS_TIME_ZONE` is now far from midnight and, most hours, on another date
/// than UTC ([`tests::zone_far_from_midnight`]), for the tests of "today": they take it from the
/// app ([`TestApp::today`]), so that the day cannot change between the test's reading and the
/// API's, and a test reading UTC's date instead fails.
pub async fn app_far_from_midnight(pool: PgPool) -> TestApp {
    let options = TestAppOptions {
        business_time_zone: tests::zone_far_from_midnight(),
        ..TestAppOptions::default()
    };
    TestApp::spawn_with(pool, options).await
}

/// Asserts `m[name]` is `{<value_key>: value, previous, change}` (`change` None: null).
fn assert_figure(
    m: &Value,
    name: &str,
    value_key: &str,
    value: &str,
    previous: &str,
    change: Option<&str>,
) {
    let figure = &m[name];
    assert_eq!(
        num(&figure[value_key]),
        d(value),
        "{name}.{value_key} in {m}"
    );
    assert_eq!(
        num(&figure["previous"]),
        d(previous),
        "{name}.previous in {m}"
    );
    match change {
        Some(change) => assert_eq!(num(&figure["change"]), d(change), "{name}.change in {m}"),
        None => assert!(figure["change"].is_null(), "{name}.change in {m}"),
    }
}

/// Asserts bookings `{count, previous, change}`: the counts are integers.
fn assert_bookings(m: &Value, count: i64, previous: i64, change: Option<&str>) {
    assert_eq!(m["bookings"]["count"].as_i64(), Some(count), "{m}");
    assert_eq!(m["bookings"]["previous"].as_i64(), Some(previous), "{m}");
    match change {
        Some(change) => assert_eq!(num(&m["bookings"]["change"]), d(change), "{m}"),
        None => assert!(m["bookings"]["change"].is_null(), "{m}"),
    }
}

/// The numbers of a JSON array.
fn series(v: &Value) -> Vec<Decimal> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(num)
        .collect()
}

/// `count` times `value`, run after run: `runs(&[(3, "1000"), (1, "0")])` is 1000, 1000, 1000, 0.
fn runs(parts: &[(usize, &str)]) -> Vec<Decimal> {
    parts
        .iter()
        .flat_map(|&(count, value)| std::iter::repeat_n(d(value), count))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("not a string: {s}"))
                .to_owned()
        })
        .collect()
}

/// The dates `from ..= to` as `YYYY-MM-DD`.
fn days(from: NaiveDate, to: NaiveDate) -> Vec<String> {
    from.iter_days()
        .take_while(|day| *day <= to)
        .map(|day| day.to_string())
        .collect()
}

/// Asserts a chart: its labels, its series, and the previous period's series with its dates.
fn assert_chart(
    chart: &Value,
    label: &str,
    labels: &[String],
    data: &[Decimal],
    previous: (&str, &str, &[Decimal]),
) {
    assert_eq!(strings(&chart["labels"]), labels, "labels of {chart}");
    let datasets = chart["datasets"]
        .as_array()
        .unwrap_or_else(|| panic!("no datasets in {chart}"));
    assert_eq!(datasets.len(), 2, "{chart}");
    assert_eq!(datasets[0]["label"], label, "{chart}");
    assert_eq!(series(&datasets[0]["data"]), data, "{label} of {chart}");
    let (start, end, previous_data) = previous;
    assert_eq!(datasets[1]["label"], "Previous period", "{chart}");
    assert_eq!(datasets[1]["startDate"], start, "{chart}");
    assert_eq!(datasets[1]["endDate"], end, "{chart}");
    assert_eq!(
        series(&datasets[1]["data"]),
        previous_data,
        "previous period of {chart}"
    );
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn metrics_follow_the_stated_definitions_over_the_period_and_the_previous_one(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;

    // Every ACTIVE listing (A, B, C), in THB (REPORTING_CURRENCY's default).
    let march = format!("{METRICS}?startDate=2026-03-01&endDate=2026-03-31");
    let (status, m) = get(&app, &march).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(
        m["period"],
        json!({"startDate": "2026-03-01", "endDate": "2026-03-31"})
    );
    // The 31 nights ending the day before the 1st of March.
    assert_eq!(
        m["previousPeriod"],
        json!({"startDate": "2026-01-29", "endDate": "2026-02-28"})
    );
    assert_eq!(m["currency"], "THB");
    assert!(m["listingIds"].is_null(), "{m}");
    // Available: 3 listings × 31 nights = 93, less A's 5 blocked nights (20–24 March) = 88.
    // Booked: #1 3 (1–3 March) + #2 5 + #6 2 (30–31 March) + #8 4 + #9 3 + #10 2 = 19 (#5
    // cancelled, #7 an inquiry, #11 on the INACTIVE D: nothing).
    // Previous: 93 available; booked #13 2 (29–30 January) + #12 5 + #1 3 (26–28 February) = 10.
    assert_eq!(
        m["nights"],
        json!({"booked": 19, "available": 88, "previousBooked": 10, "previousAvailable": 93,
            "priced": 14, "previousPriced": 10})
    );
    // Revenue, THB stays only: #1 3 × 1,000 + #2 7,500 + #6 2 × 333.333… + #8 4,000
    // = 15,166.666… → 15,166.67 (rounded at the end: two nights rounded first would give .66).
    // Previous: #13 2 × 1,000 + #12 2,500 + #1 3 × 1,000 = 7,500.
    // Change: (15,166.67 − 7,500) / 7,500 × 100 = 102.222… → 102.22.
    assert_figure(&m, "revenue", "total", "15166.67", "7500", Some("102.22"));
    // Occupancy: 19 / 88 × 100 = 21.5909… → 21.59; previous 10 / 93 × 100 = 10.7526… → 10.75;
    // change from those rounded figures, as stated: (21.59 − 10.75) / 10.75 × 100 = 100.837… →
    // 100.84 (from the unrounded ones it would be 100.7954… → 100.80).
    assert_figure(&m, "occupancy", "rate", "21.59", "10.75", Some("100.84"));
    // ADR over the THB nights only (19 less #9's 3 in USD and #10's 2 without currency = 14):
    // 15,166.666… / 14 = 1,083.333… → 1,083.33; previous 7,500 / 10 = 750;
    // change (1,083.33 − 750) / 750 × 100 = 44.444 → 44.44.
    assert_figure(&m, "adr", "value", "1083.33", "750", Some("44.44"));
    // Check-ins in March of counted stays, any currency: #2, #6, #8, #9, #10 = 5 (#1 checked in
    // in February); previous: #1, #12 = 2 (#13 checked in on 27 January); (5 − 2) / 2 × 100 = 150.
    assert_bookings(&m, 5, 2, Some("150"));
    // RevPAR: 15,166.666… / 88 = 172.348… → 172.35; previous 7,500 / 93 = 80.645… → 80.65;
    // change (172.35 − 80.65) / 80.65 × 100 = 113.7011… → 113.70 (unrounded: 113.71).
    assert_figure(&m, "revpar", "value", "172.35", "80.65", Some("113.70"));

    // In USD (the currency is read in any letter case): only #9's money, 3 × 100 = 300 over its
    // 3 nights; nothing in USD before, so every money change is null. Nights and bookings do not
    // depend on the currency.
    let (status, m) = get(
        &app,
        &format!("{METRICS}?startDate=2026-03-01&endDate=2026-03-31&currency=usd"),
    )
    .await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["currency"], "USD");
    assert_figure(&m, "revenue", "total", "300", "0", None);
    // ADR 300 / 3 = 100.
    assert_figure(&m, "adr", "value", "100", "0", None);
    // RevPAR 300 / 88 = 3.409… → 3.41.
    assert_figure(&m, "revpar", "value", "3.41", "0", None);
    assert_figure(&m, "occupancy", "rate", "21.59", "10.75", Some("100.84"));
    assert_bookings(&m, 5, 2, Some("150"));

    // Named listings, an INACTIVE one among them: A and D.
    let (status, m) = get(
        &app,
        &format!(
            "{METRICS}?startDate=2026-03-01&endDate=2026-03-31&listingIds={},{}",
            f.a, f.d
        ),
    )
    .await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(
        sorted(strings(&m["listingIds"])),
        sorted(vec![f.a.to_string(), f.d.to_string()]),
        "{m}"
    );
    // Available: 2 × 31 = 62, less A's 5 blocked = 57; booked #1 3 + #2 5 + #11 3 = 11.
    // Previous: 62 available; booked #13 2 + #1 3 = 5.
    assert_eq!(
        m["nights"],
        json!({"booked": 11, "available": 57, "previousBooked": 5, "previousAvailable": 62,
            "priced": 11, "previousPriced": 5})
    );
    // Revenue 3,000 + 7,500 + 3,000 = 13,500; previous 2,000 + 3,000 = 5,000; change 170.
    assert_figure(&m, "revenue", "total", "13500", "5000", Some("170"));
    // 11 / 57 × 100 = 19.298… → 19.30; 5 / 62 × 100 = 8.0645… → 8.06;
    // change (19.30 − 8.06) / 8.06 × 100 = 139.454… → 139.45 (unrounded: 139.30).
    assert_figure(&m, "occupancy", "rate", "19.30", "8.06", Some("139.45"));
    // 13,500 / 11 = 1,227.2727… → 1,227.27; 5,000 / 5 = 1,000; change 22.727 → 22.73.
    assert_figure(&m, "adr", "value", "1227.27", "1000", Some("22.73"));
    // #2 and #11 check in; before, #1: (2 − 1) / 1 × 100 = 100.
    assert_bookings(&m, 2, 1, Some("100"));
    // 13,500 / 57 = 236.842… → 236.84; 5,000 / 62 = 80.645… → 80.65;
    // change (236.84 − 80.65) / 80.65 × 100 = 193.664… → 193.66 (unrounded: 193.68).
    assert_figure(&m, "revpar", "value", "236.84", "80.65", Some("193.66"));

    // C alone in THB: money 0 now and before (null changes), nights all the same: #9 3 + #10 2
    // of 31: 16.129… → 16.13, before 0 of 31 → 0: a change from 0 is null too.
    let (status, m) = get(
        &app,
        &format!(
            "{METRICS}?startDate=2026-03-01&endDate=2026-03-31&listingIds={}",
            f.c
        ),
    )
    .await;
    assert_eq!(status, 200, "{m}");
    assert_figure(&m, "revenue", "total", "0", "0", None);
    assert_figure(&m, "occupancy", "rate", "16.13", "0", None);
    assert_figure(&m, "adr", "value", "0", "0", None);
    assert_bookings(&m, 2, 0, None);
    assert_figure(&m, "revpar", "value", "0", "0", None);

    // B over the ten nights 1–10 March (previous: 19–28 February, nothing): #8's 4 nights,
    // 4,000 of 10 nights: occupancy 40, ADR 1,000, RevPAR 400, one check-in.
    let (status, m) = get(
        &app,
        &format!(
            "{METRICS}?startDate=2026-03-01&endDate=2026-03-10&listingIds={}",
            f.b
        ),
    )
    .await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(
        m["previousPeriod"],
        json!({"startDate": "2026-02-19", "endDate": "2026-02-28"})
    );
    assert_figure(&m, "revenue", "total", "4000", "0", None);
    assert_figure(&m, "occupancy", "rate", "40", "0", None);
    assert_figure(&m, "adr", "value", "1000", "0", None);
    assert_bookings(&m, 1, 0, None);
    assert_figure(&m, "revpar", "value", "400", "0", None);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_change_is_computed_from_the_figures_as_shown_and_is_null_from_a_shown_zero(
    pool: PgPool,
) {
    let app = TestApp::spawn(pool.clone()).await;
    let listing = insert_listing(&pool, 401, "Villa Sliver", "ACTIVE", "THB").await;
    let stay = |pms_id: i64, check_in: &str, check_out: &str, total: &str| Stay {
        pms_id,
        listing_pms_id: 401,
        status: "CONFIRMED",
        currency: Some("THB"),
        check_in: date(check_in),
        check_out: date(check_out),
        channel: "AIRBNB",
        total: d(total),
    };
    // The period: 1–3 March 2026 (3 nights); the previous one: 26–28 February.
    // #1: 28 February – 2 March, 0.01 over 3 nights: 0.00333… on the 28th (previous), 0.00666…
    // on the 1st and 2nd; it checks in in the previous period.
    insert_stay(&pool, &stay(1, "2026-02-28", "2026-03-03", "0.01")).await;
    // #2: the 3rd, 300.00, a check-in.
    insert_stay(&pool, &stay(2, "2026-03-03", "2026-03-04", "300.00")).await;
    let path = format!("{METRICS}?startDate=2026-03-01&endDate=2026-03-03&listingIds={listing}");
    let (status, m) = get(&app, &path).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(
        m["nights"],
        json!({"booked": 3, "available": 3, "previousBooked": 1, "previousAvailable": 3,
            "priced": 3, "previousPriced": 1})
    );
    // Revenue 300.00666… → 300.01; previous 0.00333… → 0.00: shown as 0, so no change (from the
    // unrounded figures it would be (300.00666… − 0.00333…) / 0.00333… × 100 = 9,000,100 %).
    assert_figure(&m, "revenue", "total", "300.01", "0", None);
    // ADR 300.00666… / 3 = 100.002… → 100.00; previous 0.00333… / 1 → 0.00: null.
    assert_figure(&m, "adr", "value", "100", "0", None);
    // RevPAR 300.00666… / 3 → 100.00; previous 0.00333… / 3 = 0.0011… → 0.00: null.
    assert_figure(&m, "revpar", "value", "100", "0", None);
    // Occupancy 3 / 3 = 100; previous 1 / 3 = 33.333… → 33.33; change from those:
    // (100 − 33.33) / 33.33 × 100 = 200.030… → 200.03 (from the unrounded ones: 200).
    assert_figure(&m, "occupancy", "rate", "100", "33.33", Some("200.03"));
    // #2 checks in now, #1 before: no change.
    assert_bookings(&m, 1, 1, Some("0"));
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn without_dates_the_period_is_the_thirty_nights_ending_today(pool: PgPool) {
    let app = app_far_from_midnight(pool.clone()).await;
    // The API's business day, never UTC's nor the database's current_date.
    let today = app.today();
    let day = |offset: i64| today + TimeDelta::days(offset);
    insert_listing(&pool, 201, "Villa Today", "ACTIVE", "THB").await;
    let stay = |pms_id: i64, check_in: i64, check_out: i64, total: &str| Stay {
        pms_id,
        listing_pms_id: 201,
        status: "CONFIRMED",
        currency: Some("THB"),
        check_in: day(check_in),
        check_out: day(check_out),
        channel: "AIRBNB",
        total: d(total),
    };
    // #1: today−31 .. today−29 (3 nights), 3,000.00 = 1,000 a night: today−29 is in the default
    // period [today−29, today]; today−31 and today−30 are in the previous one
    // [today−59, today−30], where it checks in.
    insert_stay(&pool, &stay(1, -31, -28, "3000.00")).await;
    // #2: today and tomorrow, 500.00 = 250 a night: today is inside, and it checks in.
    insert_stay(&pool, &stay(2, 0, 2, "500.00")).await;
    let period = |from: i64, to: i64| json!({"startDate": day(from).to_string(), "endDate": day(to).to_string()});

    let (status, m) = get(&app, METRICS).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["period"], period(-29, 0));
    assert_eq!(m["previousPeriod"], period(-59, -30));
    // 1,000 + 250 = 1,250; previous 2 × 1,000 = 2,000; (1,250 − 2,000) / 2,000 × 100 = −37.5.
    assert_figure(&m, "revenue", "total", "1250", "2000", Some("-37.50"));
    // 2 of 30 nights both times: 6.666… → 6.67, a change of 0 (not null: previous is not 0).
    assert_figure(&m, "occupancy", "rate", "6.67", "6.67", Some("0"));
    // 1,250 / 2 = 625; 2,000 / 2 = 1,000; −37.5.
    assert_figure(&m, "adr", "value", "625", "1000", Some("-37.50"));
    assert_bookings(&m, 1, 1, Some("0"));
    // 1,250 / 30 = 41.666… → 41.67; 2,000 / 30 = 66.666… → 66.67;
    // (41.67 − 66.67) / 66.67 × 100 = −37.498… → −37.50.
    assert_figure(&m, "revpar", "value", "41.67", "66.67", Some("-37.50"));
    // Empty values are absent ones.
    let (status, same) = get(&app, &format!("{METRICS}?startDate=&endDate=")).await;
    assert_eq!(status, 200, "{same}");
    assert_eq!(same["period"], period(-29, 0));
    assert_eq!(same["revenue"], m["revenue"]);

    // Only an end: the 30 nights ending then. Only a start: until today.
    let (status, m) = get(&app, &format!("{METRICS}?endDate=2026-03-31")).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(
        m["period"],
        json!({"startDate": "2026-03-02", "endDate": "2026-03-31"})
    );
    let (status, m) = get(&app, &format!("{METRICS}?startDate={}", day(-9))).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(m["period"], period(-9, 0));
    assert_eq!(m["previousPeriod"], period(-19, -10));
    // A start after today, with no end, starts after its end.
    let answer = get(&app, &format!("{METRICS}?startDate={}", day(1))).await;
    refused(&answer, "startDate");

    // The other routes default alike: daily revenue over the 30 nights, against the previous 30.
    let (status, chart) = get(&app, CHARTS).await;
    assert_eq!(status, 200, "{chart}");
    assert_eq!(chart["type"], "revenue");
    assert_eq!(chart["period"], "daily");
    assert_eq!(chart["startDate"], day(-29).to_string());
    assert_eq!(chart["endDate"], day(0).to_string());
    assert_eq!(chart["currency"], "THB");
    // Today−29: #1's 1,000; today: #2's 250. Previous (label for label, 30 nights earlier):
    // today−31 and today−30 are its last two nights, #1's 1,000 each.
    assert_chart(
        &chart,
        "Revenue",
        &days(day(-29), day(0)),
        &runs(&[(1, "1000"), (28, "0"), (1, "250")]),
        (
            &day(-59).to_string(),
            &day(-30).to_string(),
            &runs(&[(28, "0"), (2, "1000")]),
        ),
    );
    let (status, occupancy) = get(&app, OCCUPANCY).await;
    assert_eq!(status, 200, "{occupancy}");
    let calendar = occupancy["calendar"].as_array().unwrap();
    let dates: Vec<String> = calendar
        .iter()
        .map(|n| n["date"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(dates, days(day(-29), day(0)));
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn bad_dashboard_input_is_400_naming_the_parameter(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let unknown = Uuid::now_v7();
    let many: Vec<String> = (0..501).map(|_| Uuid::now_v7().to_string()).collect();
    let many = many.join(",");
    let march = "startDate=2026-03-01&endDate=2026-03-31";

    for route in [METRICS, CHARTS, OCCUPANCY] {
        for (query, field) in [
            ("startDate=2026-13-01".to_owned(), "startDate"),
            (
                "startDate=2026-02-30&endDate=2026-03-31".to_owned(),
                "startDate",
            ),
            (
                "startDate=01/03/2026&endDate=2026-03-31".to_owned(),
                "startDate",
            ),
            ("endDate=2026-02-30".to_owned(), "endDate"),
            ("endDate=31-03-2026".to_owned(), "endDate"),
            // The start after the end.
            (
                "startDate=2026-03-31&endDate=2026-03-01".to_owned(),
                "startDate",
            ),
            // 2025-01-01 .. 2026-01-02: 365 + 2 = 367 nights, one more than a year of 366.
            (
                "startDate=2025-01-01&endDate=2026-01-02".to_owned(),
                "endDate",
            ),
            (format!("{march}&listingIds=not-a-uuid"), "listingIds"),
            (format!("{march}&listingIds={},,{}", f.a, f.b), "listingIds"),
            (format!("{march}&listingIds={many}"), "listingIds"),
        ] {
            let answer = get(&app, &format!("{route}?{query}")).await;
            refused(&answer, field);
        }
        // An id no listing has is named.
        let answer = get(
            &app,
            &format!("{route}?{march}&listingIds={},{unknown}", f.a),
        )
        .await;
        let message = refused(&answer, "listingIds");
        assert!(message.contains(&unknown.to_string()), "{message}");
        // 2025-01-01 .. 2026-01-01: 366 nights, the most.
        let year = format!("{route}?startDate=2025-01-01&endDate=2026-01-01");
        let (status, body) = get(&app, &year).await;
        assert_eq!(status, 200, "{route}: {body}");
    }
    for route in [METRICS, CHARTS] {
        for currency in ["US", "US1", "DOLLARS", "€€€"] {
            let answer = get(&app, &format!("{route}?{march}&currency={currency}")).await;
            refused(&answer, "currency");
        }
    }
    for (query, field) in [
        (format!("{march}&type=pie"), "type"),
        (format!("{march}&period=yearly"), "period"),
        // Weeks and days: at most 366 nights.
        (
            "period=weekly&startDate=2025-01-01&endDate=2026-01-02".to_owned(),
            "endDate",
        ),
        (
            "period=daily&startDate=2025-01-01&endDate=2026-01-02".to_owned(),
            "endDate",
        ),
        // Months: at most 730. 2024-03-31 .. 2026-03-31 is 731 nights (2024 is a leap year).
        (
            "period=monthly&startDate=2024-03-31&endDate=2026-03-31".to_owned(),
            "endDate",
        ),
    ] {
        let answer = get(&app, &format!("{CHARTS}?{query}")).await;
        refused(&answer, field);
    }
    // 2024-04-01 .. 2026-03-31: 365 + 365 = 730 nights, for months only.
    let (status, chart) = get(
        &app,
        &format!("{CHARTS}?period=monthly&startDate=2024-04-01&endDate=2026-03-31"),
    )
    .await;
    assert_eq!(status, 200, "{chart}");

    for query in ["limit=0", "limit=101", "limit=x", "limit=2.5", "limit=-1"] {
        let answer = get(&app, &format!("{RESERVATIONS}?{query}")).await;
        refused(&answer, "limit");
    }
    let answer = get(&app, &format!("{RESERVATIONS}?status=NOPE")).await;
    let message = refused(&answer, "status");
    assert!(
        message.contains("CONFIRMED"),
        "names the accepted values: {message}"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn charts_bucket_by_day_week_and_month_beside_the_previous_period(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let chart = |query: &str| {
        let (app, path) = (&app, format!("{CHARTS}?{query}"));
        async move {
            let (status, chart) = get(app, &path).await;
            assert_eq!(status, 200, "{path}: {chart}");
            chart
        }
    };
    let march = days(date("2026-03-01"), date("2026-03-31"));

    // Daily revenue (the defaults: type revenue, period daily).
    let daily = chart("startDate=2026-03-01&endDate=2026-03-31").await;
    assert_eq!(daily["type"], "revenue");
    assert_eq!(daily["period"], "daily");
    assert_eq!(daily["currency"], "THB");
    assert_chart(
        &daily,
        "Revenue",
        &march,
        &runs(&[
            // 1–3 March: #1, 1,000 a night.
            (3, "1000"),
            (1, "0"),
            // 5–8: #8, 1,000 a night (#7 is an inquiry).
            (4, "1000"),
            (1, "0"),
            // 10–14: #2, 1,500 a night (#9 is in USD).
            (5, "1500"),
            // 15–29: nothing in THB (#5 cancelled, #3 and #4 owner stays, #10 without currency).
            (15, "0"),
            // 30–31: #6, 1,000 / 3 = 333.333… → 333.33 a night.
            (2, "333.33"),
        ]),
        (
            "2026-01-29",
            "2026-02-28",
            &runs(&[
                // 29–30 January: #13, 1,000 a night.
                (2, "1000"),
                // 31 January – 9 February.
                (10, "0"),
                // 10–14 February: #12, 500 a night.
                (5, "500"),
                // 15–25 February.
                (11, "0"),
                // 26–28 February: #1, 1,000 a night.
                (3, "1000"),
            ]),
        ),
    );

    // Daily occupancy: booked / available listings that night × 100.
    let daily = chart("type=occupancy&period=daily&startDate=2026-03-01&endDate=2026-03-31").await;
    assert_eq!(daily["type"], "occupancy");
    assert_chart(
        &daily,
        "Occupancy",
        &march,
        &runs(&[
            // 1–3: #1, 1 of 3 listings: 33.33.
            (3, "33.33"),
            (1, "0"),
            // 5–8: #8.
            (4, "33.33"),
            (1, "0"),
            // 10–12: #2 and #9, 2 of 3: 66.67.
            (3, "66.67"),
            // 13–14: #2.
            (2, "33.33"),
            // 15–19: nothing (#5 is cancelled).
            (5, "0"),
            // 20–21: #10 booked; A blocked, so 1 of 2 available: 50.
            (2, "50"),
            // 22–24: A blocked, nothing booked: 0 of 2.
            (3, "0"),
            (5, "0"),
            // 30–31: #6.
            (2, "33.33"),
        ]),
        (
            "2026-01-29",
            "2026-02-28",
            &runs(&[
                (2, "33.33"),
                (10, "0"),
                (5, "33.33"),
                (11, "0"),
                (3, "33.33"),
            ]),
        ),
    );

    // Weekly: weeks start on Monday and are labelled by it; 1 March 2026 is a Sunday, so the
    // first bucket is that one night (of the week of Monday 23 February) and the last is 30–31
    // March. The previous period's buckets are the same ones 31 nights earlier: 29 Jan,
    // 30 Jan – 5 Feb, 6–12, 13–19, 20–26, 27–28 Feb.
    let labels: Vec<String> = [
        "2026-02-23",
        "2026-03-02",
        "2026-03-09",
        "2026-03-16",
        "2026-03-23",
        "2026-03-30",
    ]
    .map(str::to_owned)
    .to_vec();
    let weekly = chart("period=weekly&startDate=2026-03-01&endDate=2026-03-31").await;
    assert_eq!(weekly["period"], "weekly");
    assert_chart(
        &weekly,
        "Revenue",
        &labels,
        &[
            // 1 March: #1's 1,000.
            d("1000"),
            // 2–8: #1's 2 nights 2,000 + #8's 4,000.
            d("6000"),
            // 9–15: #2's 7,500.
            d("7500"),
            d("0"),
            d("0"),
            // 30–31: #6's 2 nights, 666.666… → 666.67 (not 2 × 333.33).
            d("666.67"),
        ],
        (
            "2026-01-29",
            "2026-02-28",
            &[
                // 29 January: #13.
                d("1000"),
                // 30 January – 5 February: #13's 30 January.
                d("1000"),
                // 6–12 February: #12's 10, 11, 12: 3 × 500.
                d("1500"),
                // 13–19: #12's 13, 14.
                d("1000"),
                // 20–26: #1's 26th.
                d("1000"),
                // 27–28: #1's 27th and 28th.
                d("2000"),
            ],
        ),
    );
    let weekly =
        chart("type=occupancy&period=weekly&startDate=2026-03-01&endDate=2026-03-31").await;
    assert_chart(
        &weekly,
        "Occupancy",
        &labels,
        &[
            // 1 March: 1 booked of 3.
            d("33.33"),
            // 2–8: #1 2 + #8 4 = 6 of 21: 28.571… → 28.57.
            d("28.57"),
            // 9–15: #2 5 + #9 3 = 8 of 21: 38.095… → 38.10.
            d("38.10"),
            // 16–22: #10 2 of 21 less A's 20, 21, 22 blocked = 18: 11.11.
            d("11.11"),
            // 23–29: nothing of 21 less A's 23, 24 = 19.
            d("0"),
            // 30–31: #6 2 of 6.
            d("33.33"),
        ],
        (
            "2026-01-29",
            "2026-02-28",
            &[
                // 1 of 3; 1 of 21: 4.76; 3 of 21: 14.29; 2 of 21: 9.52; 1 of 21; 2 of 6.
                d("33.33"),
                d("4.76"),
                d("14.29"),
                d("9.52"),
                d("4.76"),
                d("33.33"),
            ],
        ),
    );

    // Monthly, partial at both ends: 15–31 January (17 nights), February (28), March (31), 1–10
    // April (10): 86 nights, whose previous period (2025-10-21 .. 2026-01-14) has no stay.
    let labels: Vec<String> = ["2026-01", "2026-02", "2026-03", "2026-04"]
        .map(str::to_owned)
        .to_vec();
    let monthly = chart("period=monthly&startDate=2026-01-15&endDate=2026-04-10").await;
    assert_eq!(monthly["period"], "monthly");
    assert_chart(
        &monthly,
        "Revenue",
        &labels,
        &[
            // #13's 4 nights (27–30 January).
            d("4000"),
            // #12 2,500 + #1's 26–28 February 3,000.
            d("5500"),
            // As /dashboard/metrics over March.
            d("15166.67"),
            // #6's 1 April: 333.33.
            d("333.33"),
        ],
        ("2025-10-21", "2026-01-14", &runs(&[(4, "0")])),
    );
    let monthly =
        chart("type=occupancy&period=monthly&startDate=2026-01-15&endDate=2026-04-10").await;
    assert_chart(
        &monthly,
        "Occupancy",
        &labels,
        &[
            // 4 of 17 × 3 = 51: 7.843… → 7.84.
            d("7.84"),
            // #12 5 + #1 3 = 8 of 84: 9.523… → 9.52.
            d("9.52"),
            d("21.59"),
            // #6's 1 April: 1 of 30.
            d("3.33"),
        ],
        ("2025-10-21", "2026-01-14", &runs(&[(4, "0")])),
    );
    // Two years of months: 2024-04 .. 2026-03 (730 nights). The previous period is the 730 nights
    // before: 2022-04-02 .. 2024-03-31.
    let long = chart("period=monthly&startDate=2024-04-01&endDate=2026-03-31").await;
    let labels = strings(&long["labels"]);
    assert_eq!(labels.len(), 24, "{long}");
    assert_eq!(labels[0], "2024-04");
    assert_eq!(labels[23], "2026-03");
    assert_eq!(long["datasets"][1]["startDate"], "2022-04-02");
    assert_eq!(long["datasets"][1]["endDate"], "2024-03-31");
    assert_eq!(
        series(&long["datasets"][0]["data"]),
        [
            runs(&[(21, "0")]),
            // January 2026: #13's 4,000; February: 5,500; March: 15,166.67.
            vec![d("4000"), d("5500"), d("15166.67")],
        ]
        .concat()
    );
    assert_eq!(series(&long["datasets"][1]["data"]), runs(&[(24, "0")]));

    // In USD: #9's 100 a night on 10–12 March, and nothing else.
    let usd = chart("startDate=2026-03-01&endDate=2026-03-31&currency=USD").await;
    assert_eq!(usd["currency"], "USD");
    assert_eq!(
        series(&usd["datasets"][0]["data"]),
        runs(&[(9, "0"), (3, "100"), (19, "0")])
    );
    // D alone (INACTIVE, named): #11 fills 3–5 March.
    let dune = chart(&format!(
        "type=occupancy&startDate=2026-03-01&endDate=2026-03-31&listingIds={}",
        f.d
    ))
    .await;
    assert_eq!(
        series(&dune["datasets"][0]["data"]),
        runs(&[(2, "0"), (3, "100"), (26, "0")])
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn occupancy_has_every_night_and_the_busiest_listing_first(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;

    let march = format!("{OCCUPANCY}?startDate=2026-03-01&endDate=2026-03-31");
    let (status, body) = get(&app, &march).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["startDate"], "2026-03-01");
    assert_eq!(body["endDate"], "2026-03-31");
    let calendar = body["calendar"]
        .as_array()
        .unwrap_or_else(|| panic!("no calendar in {body}"));
    // (booked, available, occupancy) of each night of March, listings A, B, C.
    let expected: Vec<(i64, i64, &str)> = [
        // 1–3: #1 (A).
        (3, (1, 3, "33.33")),
        (1, (0, 3, "0")),
        // 5–8: #8 (B).
        (4, (1, 3, "33.33")),
        (1, (0, 3, "0")),
        // 10–12: #2 (A) and #9 (C).
        (3, (2, 3, "66.67")),
        // 13–14: #2.
        (2, (1, 3, "33.33")),
        (5, (0, 3, "0")),
        // 20–21: #10 (C); A blocked.
        (2, (1, 2, "50")),
        // 22–24: A blocked.
        (3, (0, 2, "0")),
        (5, (0, 3, "0")),
        // 30–31: #6 (B).
        (2, (1, 3, "33.33")),
    ]
    .into_iter()
    .flat_map(|(count, night)| std::iter::repeat_n(night, count))
    .collect();
    assert_eq!(calendar.len(), 31, "{body}");
    let march = days(date("2026-03-01"), date("2026-03-31"));
    for ((night, day), (booked, available, occupancy)) in calendar.iter().zip(march).zip(expected) {
        assert_eq!(night["date"], day.as_str(), "{night}");
        assert_eq!(night["bookedNights"].as_i64(), Some(booked), "{night}");
        assert_eq!(
            night["availableNights"].as_i64(),
            Some(available),
            "{night}"
        );
        assert_eq!(num(&night["occupancy"]), d(occupancy), "{night}");
    }
    // By listing, the highest occupancy first: A 8 booked (#1 3 + #2 5) of 31 less 5 blocked =
    // 26: 30.769… → 30.77; B 6 (#8 4 + #6 2) of 31: 19.35; C 5 (#9 3 + #10 2) of 31: 16.13.
    let by_property = body["byProperty"]
        .as_array()
        .unwrap_or_else(|| panic!("no byProperty in {body}"));
    let rows = by_property
        .iter()
        .map(|p| {
            (
                p["listingId"].as_str().unwrap().to_owned(),
                p["name"].as_str().unwrap().to_owned(),
                num(&p["occupancy"]),
                p["bookedNights"].as_i64(),
                p["availableNights"].as_i64(),
            )
        })
        .collect::<Vec<_>>();
    assert_eq!(
        rows,
        [
            (
                f.a.to_string(),
                "Villa Zinnia".to_owned(),
                d("30.77"),
                Some(8),
                Some(26)
            ),
            (
                f.b.to_string(),
                "Villa Amber".to_owned(),
                d("19.35"),
                Some(6),
                Some(31)
            ),
            (
                f.c.to_string(),
                "Villa Magnolia".to_owned(),
                d("16.13"),
                Some(5),
                Some(31)
            ),
        ]
    );
    // Each listing night by night: A booked on 1–3 and 10–14, blocked on 20–24; C on 10–12 and
    // 20–21. The nights of the listings add up to the calendar's.
    let nightly = |i: usize, field: &str| -> Vec<i64> {
        by_property[i]["nightly"][field]
            .as_array()
            .unwrap_or_else(|| panic!("no nightly {field} in {}", by_property[i]))
            .iter()
            .map(|n| n.as_i64().unwrap())
            .collect()
    };
    let nights_of = |ranges: &[(usize, usize)]| -> Vec<i64> {
        (1..=31)
            .map(|day| i64::from(ranges.iter().any(|&(a, b)| (a..=b).contains(&day))))
            .collect()
    };
    assert_eq!(nightly(0, "bookedNights"), nights_of(&[(1, 3), (10, 14)]));
    assert_eq!(
        nightly(0, "availableNights"),
        nights_of(&[(1, 19), (25, 31)])
    );
    assert_eq!(nightly(2, "bookedNights"), nights_of(&[(10, 12), (20, 21)]));
    for (night, entry) in calendar.iter().enumerate() {
        for field in ["bookedNights", "availableNights"] {
            let sum: i64 = (0..3).map(|i| nightly(i, field)[night]).sum();
            assert_eq!(entry[field].as_i64(), Some(sum), "{field} of {entry}");
        }
    }

    // D alone: one listing a night, #11 on 3–5 March: 100 % those nights; 3 of 31 = 9.68.
    let (status, body) = get(
        &app,
        &format!(
            "{OCCUPANCY}?startDate=2026-03-01&endDate=2026-03-31&listingIds={}",
            f.d
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let occupancy: Vec<Decimal> = body["calendar"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            assert_eq!(n["availableNights"], 1, "{n}");
            num(&n["occupancy"])
        })
        .collect();
    assert_eq!(occupancy, runs(&[(2, "0"), (3, "100"), (26, "0")]));
    assert_eq!(body["byProperty"][0]["listingId"], f.d.to_string());
    assert_eq!(num(&body["byProperty"][0]["occupancy"]), d("9.68"));
    assert_eq!(body["byProperty"].as_array().map(Vec::len), Some(1));

    // Equal occupancy (none, in April after #6): by name.
    let (status, body) = get(
        &app,
        &format!(
            "{OCCUPANCY}?startDate=2026-04-05&endDate=2026-04-10&listingIds={},{}",
            f.c, f.b
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> = body["byProperty"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Villa Amber", "Villa Magnolia"]);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn dashboard_reservations_are_those_in_progress_and_arriving_soonest_first(pool: PgPool) {
    let app = app_far_from_midnight(pool.clone()).await;
    let today = app.today();
    let day = |offset: i64| today + TimeDelta::days(offset);
    let listing = insert_listing(&pool, 301, "Villa Today", "ACTIVE", "THB").await;
    // (PMS id, status, check-in, check-out) relative to today.
    let mut stays: Vec<(i64, &str, i64, i64)> = vec![
        // In progress.
        (1, "CONFIRMED", -3, 2),
        // Arriving today.
        (2, "CONFIRMED", 0, 3),
        (3, "CONFIRMED", 5, 7),
        // Left this morning: no longer in progress.
        (4, "CONFIRMED", -5, 0),
        (5, "CANCELLED", 1, 4),
        (6, "CONFIRMED", 10, 12),
        (7, "OWNER_STAY", 2, 4),
        // Long gone.
        (8, "CONFIRMED", -40, -35),
        (9, "PENDING", 1, 2),
    ];
    // Seven more arrivals, three weeks on.
    stays.extend((10..=16).map(|pms_id| (pms_id, "CONFIRMED", 10 + pms_id, 12 + pms_id)));
    let mut ids = std::collections::HashMap::new();
    for &(pms_id, status, check_in, check_out) in &stays {
        let id = insert_stay(
            &pool,
            &Stay {
                pms_id,
                listing_pms_id: 301,
                status,
                currency: Some("THB"),
                check_in: day(check_in),
                check_out: day(check_out),
                channel: "AIRBNB",
                total: d("1000.00"),
            },
        )
        .await;
        ids.insert(pms_id, id.to_string());
    }
    let listed = |body: &Value| -> Vec<i64> {
        body["data"]
            .as_array()
            .unwrap_or_else(|| panic!("no data in {body}"))
            .iter()
            .map(|r| r["pmsId"].as_i64().unwrap())
            .collect()
    };

    // CONFIRMED, 10 by default, soonest check-in first: the one in progress, then arrivals.
    let (status, body) = get(&app, RESERVATIONS).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(listed(&body), [1, 2, 3, 6, 10, 11, 12, 13, 14, 15]);
    let first = &body["data"][0];
    assert_eq!(first["id"], ids[&1].as_str());
    assert_eq!(first["guestName"], "Guest 1");
    assert_eq!(
        first["listing"],
        json!({"id": listing, "name": "Villa Today"})
    );
    assert_eq!(first["checkIn"], day(-3).to_string());
    assert_eq!(first["checkOut"], day(2).to_string());
    assert_eq!(first["nights"], 5);
    assert_eq!(first["channel"], "AIRBNB");
    assert_eq!(num(&first["totalAmount"]), d("1000"));
    assert_eq!(num(&first["netAmount"]), d("900"));
    assert_eq!(first["currency"], "THB");
    assert_eq!(first["status"], "CONFIRMED");

    for (query, expected) in [
        ("limit=100", vec![1, 2, 3, 6, 10, 11, 12, 13, 14, 15, 16]),
        ("limit=2", vec![1, 2]),
        ("limit=1", vec![1]),
        ("status=CANCELLED", vec![5]),
        ("status=OWNER_STAY", vec![7]),
        ("status=PENDING&limit=5", vec![9]),
        ("status=DECLINED", vec![]),
    ] {
        let (status, body) = get(&app, &format!("{RESERVATIONS}?{query}")).await;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(listed(&body), expected, "{query}");
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn dashboard_answers_are_cached_until_invalidated_and_limited_to_120_a_minute(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    load_fixture(&pool).await;
    let march = "startDate=2026-03-01&endDate=2026-03-31";
    let metrics = format!("{METRICS}?{march}");
    let cache_of = |headers: &HeaderMap| header_of(headers, "x-cache").map(str::to_owned);

    for path in [
        metrics.clone(),
        format!("{CHARTS}?{march}"),
        format!("{OCCUPANCY}?{march}"),
        RESERVATIONS.to_owned(),
    ] {
        let (status, headers, first) = fetch(&app, &path).await;
        assert_eq!(status, 200, "{path}: {first}");
        assert_eq!(cache_of(&headers).as_deref(), Some("MISS"), "{path}");
        assert_eq!(
            header_of(&headers, "ratelimit-limit"),
            Some("120"),
            "{path}"
        );
        // Keyed by route and query, not by caller: another caller's request is a hit.
        let (_, headers, again) = fetch(&app, &path).await;
        assert_eq!(cache_of(&headers).as_deref(), Some("HIT"), "{path}");
        assert_eq!(again, first, "{path}");
    }

    // A change the API did not make (#2 cancelled in the PMS) is not seen while the entry holds...
    sqlx::query("UPDATE pms_reservations SET status = 'CANCELLED' WHERE pms_id = 2")
        .execute(&pool)
        .await
        .unwrap();
    let (_, headers, m) = fetch(&app, &metrics).await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    assert_eq!(num(&m["revenue"]["total"]), d("15166.67"));
    // ...until the cache is invalidated, as every completed sync does: 15,166.666… less #2's
    // 7,500 = 7,666.666… → 7,666.67.
    jobs::reporting_cache::invalidate(&app.redis(), &app.core.redis_prefix)
        .await
        .expect("invalidated");
    let (_, headers, m) = fetch(&app, &metrics).await;
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    assert_eq!(num(&m["revenue"]["total"]), d("7666.67"));

    // 120 a minute per caller, cached answers included, in any 60 seconds: a burst of 120 is
    // served, then nothing more until the first of them is a minute old (not one every half
    // second as the minute's allowance would come back on average).
    let mut claims = app.idp.claims(&["viewer"]);
    claims["sub"] = json!(format!("dashboard-{}", Uuid::new_v4().simple()));
    let token = app.idp.sign("k1", &claims);
    let send = || async {
        let res = app
            .http
            .get(app.url(&metrics))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let headers = res.headers().clone();
        let (status, body) = read_json(res).await;
        (status, headers, body)
    };
    let started = std::time::Instant::now();
    for served in 0..120_u64 {
        let (status, headers, body) = send().await;
        assert_eq!(status, 200, "call {}: {body}", served + 1);
        assert_eq!(
            header_of(&headers, "ratelimit-remaining"),
            Some((119 - served).to_string().as_str()),
            "call {}",
            served + 1
        );
    }
    // Three seconds more of requests, one every 200 ms: every one refused.
    for i in 0..15 {
        let (status, headers, body) = send().await;
        let elapsed = started.elapsed().as_secs();
        assert!(
            elapsed < 55,
            "the test is too slow to show a window: {elapsed} s"
        );
        assert_eq!(status, 429, "request {} after the burst: {body}", i + 1);
        assert_error_shape("reporting", &body, 429, "RATE_LIMIT_EXCEEDED");
        // A slot frees when the burst's first request leaves the window.
        let retry_after = body["error"]["retryAfter"]
            .as_u64()
            .unwrap_or_else(|| panic!("retryAfter in whole seconds: {body}"));
        assert!(
            (59 - elapsed.min(59)..=61 - elapsed).contains(&retry_after),
            "retryAfter {retry_after} {elapsed} s after the first request"
        );
        assert_eq!(
            header_of(&headers, "retry-after"),
            Some(retry_after.to_string().as_str())
        );
        assert_eq!(header_of(&headers, "ratelimit-remaining"), Some("0"));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// A zone 11 hours behind UTC and one 14 ahead: at every instant the second's date is a day or two
/// after the first's, so two replicas in these zones show what one sees before and after midnight.
fn yesterday_and_today() -> (domain::clock::BusinessZone, domain::clock::BusinessZone) {
    (
        "Pacific/Pago_Pago".parse().unwrap(),
        "Pacific/Kiritimati".parse().unwrap(),
    )
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_answer_cached_before_midnight_is_not_served_after_it(pool: PgPool) {
    // Two replicas of one platform (one database, one Redis prefix, so one cache) whose company
    // days differ: the first answers on "yesterday", the second on "today".
    let (behind, ahead) = yesterday_and_today();
    let prefix = tests::unique_prefix();
    let replica = |business_time_zone| TestAppOptions {
        redis_prefix: Some(prefix.clone()),
        business_time_zone,
        ..Default::default()
    };
    let yesterday_app = TestApp::spawn_with(pool.clone(), replica(behind)).await;
    let today_app = TestApp::spawn_with(pool.clone(), replica(ahead)).await;
    let today = ahead.today();
    assert!(behind.today() < today);
    insert_listing(&pool, 401, "Villa Midnight", "ACTIVE", "THB").await;
    // Left this morning (today's morning): still in progress yesterday, gone today.
    insert_stay(
        &pool,
        &Stay {
            pms_id: 1,
            listing_pms_id: 401,
            status: "CONFIRMED",
            currency: Some("THB"),
            check_in: today - TimeDelta::days(3),
            check_out: today,
            channel: "AIRBNB",
            total: d("3000.00"),
        },
    )
    .await;
    let cache_of = |headers: &HeaderMap| header_of(headers, "x-cache").map(str::to_owned);
    let stays = |body: &Value| body["data"].as_array().map_or(usize::MAX, Vec::len);

    let (status, headers, before) = fetch(&yesterday_app, RESERVATIONS).await;
    assert_eq!(status, 200, "{before}");
    assert_eq!(cache_of(&headers).as_deref(), Some("MISS"));
    assert_eq!(stays(&before), 1, "in progress yesterday: {before}");
    let (status, headers, after) = fetch(&today_app, RESERVATIONS).await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(
        cache_of(&headers).as_deref(),
        Some("MISS"),
        "yesterday's answer served today: {after}"
    );
    assert_eq!(stays(&after), 0, "left this morning: {after}");
    // Today's answer is cached for today.
    let (_, headers, again) = fetch(&today_app, RESERVATIONS).await;
    assert_eq!(cache_of(&headers).as_deref(), Some("HIT"));
    assert_eq!(again, after);

    // The default period (the 30 nights ending today) is today's, on every route that has one.
    for path in [
        METRICS.to_owned(),
        CHARTS.to_owned(),
        OCCUPANCY.to_owned(),
        "/reporting/listings".to_owned(),
    ] {
        let (status, headers, before) = fetch(&yesterday_app, &path).await;
        assert_eq!(status, 200, "{path}: {before}");
        assert_eq!(cache_of(&headers).as_deref(), Some("MISS"), "{path}");
        let (status, headers, after) = fetch(&today_app, &path).await;
        assert_eq!(status, 200, "{path}: {after}");
        assert_eq!(
            cache_of(&headers).as_deref(),
            Some("MISS"),
            "{path}: yesterday's answer served today"
        );
        let end = match path.as_str() {
            METRICS => &after["period"]["endDate"],
            "/reporting/listings" => &after["data"][0]["metrics"]["endDate"],
            _ => &after["endDate"],
        };
        assert_eq!(end, &json!(today.to_string()), "{path}: {after}");
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_dashboard_route_needs_a_token_and_any_role_may_read(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    load_fixture(&pool).await;
    for route in [METRICS, CHARTS, OCCUPANCY, RESERVATIONS] {
        for token in [None, Some("not-a-jwt")] {
            let mut req = app.http.get(app.url(route));
            if let Some(token) = token {
                req = req.bearer_auth(token);
            }
            let (status, body) = read_json(req.send().await.unwrap()).await;
            assert_eq!(status, 401, "{route} with {token:?}: {body}");
            assert_error_shape("reporting", &body, 401, "UNAUTHORIZED");
        }
        for role in ["viewer", "staff", "manager", "admin"] {
            let (status, body) = tests::pms::get(&app, route, role).await;
            assert_eq!(status, 200, "{role} {route}: {body}");
        }
    }
}
