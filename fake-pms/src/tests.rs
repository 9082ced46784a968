//! The fake's own tests: seed data, paging under both orders, a record moving during a pass, the
//! limiter, the token delay and the switches, records deleted, bookings made and changed through
//! the control routes and the webhooks they post.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{Datelike, NaiveDate, TimeDelta};
use serde_json::{Value, json};

use crate::{FakePms, FakePmsConfig, Limiter, WebhookTarget, seed_listings, seed_reservations};

fn fixed_day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 3, 15).unwrap()
}

/// No limits and no token delay: tests of paging do not wait.
fn quiet(reservations: usize) -> FakePmsConfig {
    FakePmsConfig {
        reservations,
        token_delay: Duration::ZERO,
        ..FakePmsConfig::default()
    }
    .without_limits()
}

async fn token(fake: &FakePms, http: &reqwest::Client) -> String {
    let res = http
        .post(format!("{}/accessTokens", fake.base_url))
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials&client_id=10450&client_secret=fake-pms-secret&scope=general")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert!(body["expires_in"].as_u64().unwrap() > 86_400 * 365);
    body["access_token"].as_str().unwrap().to_owned()
}

async fn get(http: &reqwest::Client, fake: &FakePms, token: &str, path: &str) -> (u16, Value) {
    let res = http
        .get(format!("{}{path}", fake.base_url))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let text = res.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn ids(page: &Value) -> Vec<i64> {
    page["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

/// Every page of `/reservations` with `afterId`, from the start until an empty page.
async fn pass(
    http: &reqwest::Client,
    fake: &FakePms,
    token: &str,
    sort: &str,
    mut between: impl FnMut(usize),
) -> Vec<i64> {
    let mut all = Vec::new();
    let mut after: Option<i64> = None;
    for page_number in 0.. {
        let cursor = after.map(|a| format!("&afterId={a}")).unwrap_or_default();
        let (status, page) = get(
            http,
            fake,
            token,
            &format!("/reservations?limit=50{sort}{cursor}"),
        )
        .await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["status"], "success");
        let got = ids(&page);
        if got.is_empty() {
            break;
        }
        after = got.last().copied();
        all.extend(got);
        between(page_number);
    }
    all
}

/// The ids in Hostaway's order computed from the records themselves.
fn expected_order(fake: &FakePms, ascending: bool) -> Vec<i64> {
    let mut keyed: Vec<(String, i64)> = fake
        .control
        .reservations()
        .iter()
        .map(|r| {
            (
                r["updatedOn"].as_str().unwrap().to_owned(),
                r["id"].as_i64().unwrap(),
            )
        })
        .collect();
    keyed.sort();
    if !ascending {
        keyed.reverse();
    }
    keyed.into_iter().map(|(_, id)| id).collect()
}

#[test]
fn seed_data_is_deterministic_and_covers_what_the_docs_list() {
    let config = FakePmsConfig {
        today: Some(fixed_day()),
        ..FakePmsConfig::default()
    };
    let listings = seed_listings(&config);
    let reservations = seed_reservations(&config, &listings);
    assert_eq!(listings, seed_listings(&config));
    assert_eq!(reservations, seed_reservations(&config, &listings));
    assert_eq!(listings.len(), 36);
    assert_eq!(reservations.len(), 1200);

    // Listings: ids from 40000, villa codes, one archived and inactive, several currencies.
    assert_eq!(listings[0]["id"], 40_000);
    assert_eq!(listings[0]["internalListingName"], "VL-001");
    let archived: Vec<&Value> = listings
        .iter()
        .filter(|l| l["specialStatus"] == "archived")
        .collect();
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0]["isActive"], 0);
    let currencies: HashSet<&str> = listings
        .iter()
        .map(|l| l["currencyCode"].as_str().unwrap())
        .collect();
    assert_eq!(
        currencies,
        HashSet::from(["USD", "THB", "EUR", "IDR", "MXN"])
    );

    // Reservations: every status and channel, unique ids from 1000000, dates within two years.
    let statuses: HashSet<&str> = reservations
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    for status in [
        "new",
        "modified",
        "cancelled",
        "ownerStay",
        "pending",
        "awaitingPayment",
        "awaitingGuestVerification",
        "unconfirmed",
        "declined",
        "expired",
        "inquiry",
        "inquiryPreapproved",
        "inquiryDenied",
        "inquiryTimedout",
        "inquiryNotPossible",
        "unknown",
    ] {
        assert!(statuses.contains(status), "{status}");
    }
    let channels: HashSet<i64> = reservations
        .iter()
        .map(|r| r["channelId"].as_i64().unwrap())
        .collect();
    for channel in [
        2018, 2001, 2005, 2002, 2010, 2007, 2000, 2013, 2022, 2019, 2026,
    ] {
        assert!(channels.contains(&channel), "{channel}");
    }
    let unique: HashSet<i64> = reservations
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(unique.len(), reservations.len());
    assert!(unique.iter().all(|&id| id >= 1_000_000));

    let today = fixed_day();
    let date = |r: &Value, key: &str| {
        NaiveDate::parse_from_str(r[key].as_str().unwrap(), "%Y-%m-%d").unwrap()
    };
    let mut across_month_end = 0;
    for r in &reservations {
        let (arrival, departure) = (date(r, "arrivalDate"), date(r, "departureDate"));
        assert!(arrival >= today - TimeDelta::days(365) && arrival < today + TimeDelta::days(365));
        assert_eq!(
            (departure - arrival).num_days(),
            r["nights"].as_i64().unwrap()
        );
        if arrival.month() != (departure - TimeDelta::days(1)).month() {
            across_month_end += 1;
        }
        // Every change happened before today (so a change made now moves the record last).
        assert!(r["updatedOn"].as_str().unwrap() < today.format("%Y-%m-%d").to_string().as_str());
        assert!(r["latestActivityOn"].as_str().unwrap() >= r["updatedOn"].as_str().unwrap());
        let listing = listings
            .iter()
            .find(|l| l["id"] == r["listingMapId"])
            .unwrap();
        assert_eq!(r["currency"], listing["currencyCode"]);
        assert!(r["totalPrice"].is_number());
    }
    assert!(across_month_end > 50, "{across_month_end}");

    let owner: Vec<&Value> = reservations
        .iter()
        .filter(|r| r["status"] == "ownerStay")
        .collect();
    assert!(!owner.is_empty());
    assert!(
        owner
            .iter()
            .all(|r| r["channelId"] == 2000 && r["totalPrice"] == 0.0)
    );
    assert!(
        reservations
            .iter()
            .any(|r| r.get("hostawayCommissionAmount").is_none())
    );
    assert!(
        reservations
            .iter()
            .any(|r| r["hostawayCommissionAmount"].is_number())
    );

    // About the size of a real record.
    let bytes: usize = reservations
        .iter()
        .map(|r| serde_json::to_string(r).unwrap().len())
        .sum();
    let average = bytes / reservations.len();
    assert!((900..=2000).contains(&average), "{average}");
}

#[test]
fn a_large_seed_is_quick() {
    let config = FakePmsConfig {
        reservations: 20_000,
        ..FakePmsConfig::default()
    };
    let started = Instant::now();
    let listings = seed_listings(&config);
    let store =
        crate::store::Store::from_json(crate::seed::seed_reservation_json(&config, &listings));
    assert_eq!(store.len(), 20_000);
    // A debug build is many times slower than the release binary the benchmark seeds 100,000 with.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn after_id_pages_cover_every_record_in_both_orders() {
    let fake = FakePms::start(quiet(537)).await;
    let http = reqwest::Client::new();
    let token = token(&fake, &http).await;

    let (_, first) = get(&http, &fake, &token, "/reservations?limit=50").await;
    assert_eq!(first["count"], 537);
    assert_eq!(first["limit"], 50);
    assert_eq!(first["page"], 1);
    assert_eq!(first["totalPages"], 11);

    let newest_first = pass(&http, &fake, &token, "", |_| {}).await;
    assert_eq!(newest_first, expected_order(&fake, false));
    let oldest_first = pass(&http, &fake, &token, "&sortOrder=updatedOn", |_| {}).await;
    assert_eq!(oldest_first, expected_order(&fake, true));

    // Offset pages of the default order, and afterId ignoring offset.
    let (_, page) = get(&http, &fake, &token, "/reservations?limit=100&offset=200").await;
    assert_eq!(ids(&page), newest_first[200..300]);
    assert_eq!(page["page"], 3);
    let cursor = newest_first[99];
    let (_, page) = get(
        &http,
        &fake,
        &token,
        &format!("/reservations?limit=100&offset=400&afterId={cursor}"),
    )
    .await;
    assert_eq!(ids(&page), newest_first[100..200]);
    // A cursor the PMS does not hold: nothing after it.
    let (status, page) = get(&http, &fake, &token, "/reservations?afterId=42").await;
    assert_eq!(status, 200);
    assert!(ids(&page).is_empty());

    // One record, and the 404s.
    let id = newest_first[7];
    let (status, one) = get(&http, &fake, &token, &format!("/reservations/{id}")).await;
    assert_eq!((status, one["status"].as_str()), (200, Some("success")));
    assert_eq!(one["result"]["id"], id);
    let (status, missing) = get(&http, &fake, &token, "/reservations/1").await;
    assert_eq!((status, missing["status"].as_str()), (404, Some("fail")));
    let (status, listing) = get(&http, &fake, &token, "/listings/40003").await;
    assert_eq!(
        (status, listing["result"]["id"].as_i64()),
        (200, Some(40_003))
    );
    let (status, _) = get(&http, &fake, &token, "/listings/39999").await;
    assert_eq!(status, 404);

    // Listings by offset.
    let (_, listings) = get(&http, &fake, &token, "/listings?limit=10&offset=30").await;
    assert_eq!(listings["count"], 36);
    assert_eq!(listings["totalPages"], 4);
    assert_eq!(listings["result"].as_array().unwrap().len(), 6);

    // Malformed parameters are the fail envelope, not a server error.
    let (status, bad) = get(&http, &fake, &token, "/reservations?limit=many").await;
    assert_eq!((status, bad["status"].as_str()), (400, Some("fail")));
}

#[tokio::test]
async fn a_record_changed_mid_pass_is_met_again_oldest_first_and_can_be_missed_newest_first() {
    let fake = FakePms::start(quiet(400)).await;
    let http = reqwest::Client::new();
    let token = token(&fake, &http).await;
    let everyone: HashSet<i64> = expected_order(&fake, true).into_iter().collect();

    // Oldest first: a record of the first page changes after that page; it moves behind the
    // cursor and comes again at the end.
    let moved = expected_order(&fake, true)[3];
    let control = fake.control.clone();
    let seen =
        pass(&http, &fake, &token, "&sortOrder=updatedOn", |page| {
            if page == 0 {
                assert!(control.update_reservation(moved, |r| r["guestNote"] =
                    "Changed during the sync".into()));
            }
        })
        .await;
    assert_eq!(seen.len(), 401);
    assert_eq!(seen.iter().filter(|&&id| id == moved).count(), 2);
    assert_eq!(seen.last(), Some(&moved));
    assert_eq!(seen.iter().copied().collect::<HashSet<_>>(), everyone);
    let (_, record) = get(&http, &fake, &token, &format!("/reservations/{moved}")).await;
    assert_eq!(record["result"]["guestNote"], "Changed during the sync");

    // Newest first (Hostaway's default): a record not reached yet that changes jumps ahead of
    // the cursor and is never met; this is why the platform syncs oldest first.
    let ahead = expected_order(&fake, false)[300];
    let control = fake.control.clone();
    let seen = pass(&http, &fake, &token, "", |page| {
        if page == 0 {
            control.update_reservation(ahead, |_| {});
        }
    })
    .await;
    assert_eq!(seen.len(), 399);
    assert!(!seen.contains(&ahead));

    // add_reservation: a new record is the newest.
    let mut copy = fake.control.reservations()[0].clone();
    copy.as_object_mut().unwrap().remove("id");
    let added = fake.control.add_reservation(copy).unwrap();
    assert_eq!(expected_order(&fake, false)[0], added);
}

#[tokio::test]
async fn filters_select_by_activity_listing_and_arrival() {
    let fake = FakePms::start(quiet(800)).await;
    let http = reqwest::Client::new();
    let token = token(&fake, &http).await;
    let all = fake.control.reservations();
    let today = fake.control.shared.config.resolved_today();
    let since = (today - TimeDelta::days(20)).format("%Y-%m-%d").to_string();
    let expected: HashSet<i64> = all
        .iter()
        .filter(|r| r["latestActivityOn"].as_str().unwrap() >= since.as_str())
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert!(!expected.is_empty());
    let (_, page) = get(
        &http,
        &fake,
        &token,
        &format!("/reservations?limit=1000&sortOrder=updatedOn&latestActivityStart={since}"),
    )
    .await;
    assert_eq!(page["count"].as_u64(), Some(expected.len() as u64));
    assert_eq!(ids(&page).into_iter().collect::<HashSet<_>>(), expected);

    let (_, page) = get(
        &http,
        &fake,
        &token,
        "/reservations?limit=1000&listingId=40002&channelId=2018",
    )
    .await;
    let got = page["result"].as_array().unwrap();
    assert!(!got.is_empty());
    assert!(
        got.iter()
            .all(|r| r["listingMapId"] == 40_002 && r["channelId"] == 2018)
    );

    let (_, page) = get(
        &http,
        &fake,
        &token,
        "/reservations?limit=1000&arrivalStartDate=2000-01-01&arrivalEndDate=2000-12-31",
    )
    .await;
    assert_eq!(page["count"], 0);
}

#[test]
fn the_limiter_is_a_sliding_window() {
    let mut limiter = Limiter::new(None, Some((2, Duration::from_secs(10))));
    let ip = "127.0.0.1".parse().unwrap();
    let t0 = Instant::now();
    assert!(limiter.admit(ip, t0).is_ok());
    assert!(limiter.admit(ip, t0 + Duration::from_secs(1)).is_ok());
    assert_eq!(
        limiter.admit(ip, t0 + Duration::from_secs(2)),
        Err(Duration::from_secs(8))
    );
    // A refused request took no slot: the first one leaving frees one.
    assert!(limiter.admit(ip, t0 + Duration::from_secs(10)).is_ok());
    assert_eq!(
        limiter.admit(ip, t0 + Duration::from_millis(10_500)),
        Err(Duration::from_millis(500))
    );

    // Per IP: another address has its own window.
    let mut limiter = Limiter::new(Some((1, Duration::from_secs(10))), None);
    let other = "10.0.0.2".parse().unwrap();
    assert!(limiter.admit(ip, t0).is_ok());
    assert!(limiter.admit(other, t0).is_ok());
    assert!(limiter.admit(ip, t0).is_err());
}

#[tokio::test]
async fn the_rate_limit_answers_429_with_retry_after_over_every_request() {
    let config = FakePmsConfig {
        reservations: 50,
        token_delay: Duration::ZERO,
        ip_limit: Some((3, Duration::from_secs(2))),
        account_limit: Some((10, Duration::from_secs(2))),
        ..FakePmsConfig::default()
    };
    let fake = FakePms::start(config).await;
    let http = reqwest::Client::new();
    let token = token(&fake, &http).await; // the token request counts too
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 200);
    assert_eq!(get(&http, &fake, &token, "/reservations").await.0, 200);

    let res = http
        .get(format!("{}/reservations", fake.base_url))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 429);
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "{retry}");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["status"], "fail");
    assert!(body["message"].as_str().unwrap().contains("rate limits"));
    assert_eq!(fake.control.rate_limited(), 1);

    tokio::time::sleep(Duration::from_secs(retry)).await;
    assert_eq!(get(&http, &fake, &token, "/reservations").await.0, 200);

    // Lifted at run time.
    fake.control.set_limits(None, None);
    for _ in 0..10 {
        assert_eq!(get(&http, &fake, &token, "/listings?limit=1").await.0, 200);
    }
    assert_eq!(fake.control.rate_limited(), 1);
}

#[tokio::test]
async fn a_token_is_valid_only_after_its_delay_and_until_revoked() {
    let config = FakePmsConfig {
        token_delay: Duration::from_millis(300),
        reservations: 20,
        ..FakePmsConfig::default()
    }
    .without_limits();
    let fake = FakePms::start(config).await;
    let http = reqwest::Client::new();

    let wrong = http
        .post(format!("{}/accessTokens", fake.base_url))
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body("grant_type=client_credentials&client_id=10450&client_secret=nope&scope=general")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 403);
    assert_eq!(wrong.json::<Value>().await.unwrap()["status"], "fail");

    let token = token(&fake, &http).await;
    assert_eq!(fake.control.token_requests(), 1);
    let (status, body) = get(&http, &fake, &token, "/listings").await;
    assert_eq!((status, body["status"].as_str()), (403, Some("fail")));
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 200);
    assert_eq!(get(&http, &fake, "not-a-token", "/listings").await.0, 403);

    fake.control.revoke_tokens();
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 403);
    let fresh = self::token(&fake, &http).await;
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(get(&http, &fake, &fresh, "/listings").await.0, 200);
    assert_eq!(fake.control.token_requests(), 2);
}

#[tokio::test]
async fn failures_delays_and_throttles_are_switches() {
    let fake = FakePms::start(quiet(30)).await;
    let http = reqwest::Client::new();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let hook: crate::RequestHook = Arc::new(move |_: &crate::RequestSeen| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    fake.control.on_request(Some(hook));

    fake.control.fail_next(2, 503);
    let token = token(&fake, &http).await; // not failed: the token route is exempt
    let res = http
        .get(format!("{}/listings", fake.base_url))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 503);
    assert!(res.text().await.unwrap().contains("<html>"));
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 503);
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 200);

    fake.control.set_failing(Some(500));
    let (status, body) = get(&http, &fake, &token, "/reservations").await;
    assert_eq!((status, body["status"].as_str()), (500, Some("fail")));
    fake.control.set_failing(None);
    assert_eq!(get(&http, &fake, &token, "/reservations").await.0, 200);

    fake.control.throttle_next(1, Some(7));
    let res = http
        .get(format!("{}/listings", fake.base_url))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 429);
    assert_eq!(res.headers()["retry-after"].to_str().unwrap(), "7");
    assert_eq!(fake.control.rate_limited(), 0);

    fake.control.set_delay(Duration::from_millis(200));
    let started = Instant::now();
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 200);
    assert!(started.elapsed() >= Duration::from_millis(200));
    fake.control.set_delay(Duration::ZERO);

    // The log and the hook saw every /v1 request, with its answer.
    let requests = fake.control.requests();
    assert_eq!(requests.len(), seen.load(Ordering::Relaxed));
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 503, 503, 200, 500, 200, 429, 200]);
    assert_eq!(requests[1].bearer.as_deref(), Some(token.as_str()));

    // The same switches over HTTP, for the binary.
    let control = format!("http://{}/_fake", fake.addr);
    let res = http
        .post(format!("{control}/fail"))
        .body(r#"{"status": 502, "count": 1}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 502);
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 200);
    let res = http
        .post(format!("{control}/limits"))
        .body(r#"{"ip": {"limit": 1, "windowSecs": 60}, "account": null}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 200);
    assert_eq!(get(&http, &fake, &token, "/listings").await.0, 429);
    let stats: Value = http
        .get(format!("{control}/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["rateLimited"], 1);
    assert_eq!(stats["reservations"], 30);
    assert_eq!(
        http.post(format!("{control}/reset"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    assert_eq!(fake.control.requests().len(), 0);
    let res = http
        .post(format!("{control}/fail"))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 400);
}

#[tokio::test]
async fn a_deleted_record_is_no_longer_returned_and_can_come_back() {
    let fake = FakePms::start(quiet(30)).await;
    let http = reqwest::Client::new();
    let token = token(&fake, &http).await;
    let listing = fake.control.listings()[3]["id"].as_i64().unwrap();
    let reservation = fake.control.reservations()[7]["id"].as_i64().unwrap();

    let removed = fake.control.delete_listing(listing).expect("the listing");
    assert_eq!(removed["id"], listing);
    let (status, page) = get(&http, &fake, &token, "/listings").await;
    assert_eq!(status, 200);
    assert!(!ids(&page).contains(&listing), "{page}");
    assert_eq!(page["count"], 35);
    let (status, _) = get(&http, &fake, &token, &format!("/listings/{listing}")).await;
    assert_eq!(status, 404);
    assert!(fake.control.delete_listing(listing).is_none());

    let record = fake
        .control
        .delete_reservation(reservation)
        .expect("the reservation");
    let (_, page) = get(&http, &fake, &token, "/reservations?limit=100").await;
    assert!(!ids(&page).contains(&reservation), "{page}");
    assert_eq!(page["count"], 29);
    let (status, _) = get(
        &http,
        &fake,
        &token,
        &format!("/reservations/{reservation}"),
    )
    .await;
    assert_eq!(status, 404);
    assert!(fake.control.delete_reservation(reservation).is_none());

    // Back again.
    assert_eq!(fake.control.add_reservation(record), Some(reservation));
    let (_, page) = get(&http, &fake, &token, "/reservations?limit=100").await;
    assert!(ids(&page).contains(&reservation), "{page}");
    let mut listings = fake.control.listings();
    listings.push(removed);
    fake.control.set_listings(listings);
    let (_, page) = get(&http, &fake, &token, "/listings").await;
    assert!(ids(&page).contains(&listing), "{page}");

    // The same over HTTP, for the binary.
    let res = http
        .post(format!("http://{}/_fake/delete", fake.addr))
        .body(format!(
            r#"{{"listings": [{listing}, -1], "reservations": [{reservation}]}}"#
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let answer: Value = res.json().await.unwrap();
    assert_eq!(
        answer["deleted"],
        serde_json::json!({"listings": 1, "reservations": 1})
    );
    let (_, page) = get(&http, &fake, &token, "/listings").await;
    assert!(!ids(&page).contains(&listing), "{page}");
    let (_, page) = get(&http, &fake, &token, "/reservations?limit=100").await;
    assert!(!ids(&page).contains(&reservation), "{page}");
}

// ---------------------------------------------------------------------------------------------
// Webhooks

/// One delivery as the receiver saw it.
#[derive(Debug, Clone)]
struct Delivery {
    authorization: Option<String>,
    content_type: Option<String>,
    body: Value,
}

/// A webhook receiver on loopback: records every request and answers the statuses it is given
/// in turn, then 200.
#[derive(Clone, Default)]
struct Receiver {
    seen: Arc<Mutex<Vec<Delivery>>>,
    answers: Arc<Mutex<VecDeque<u16>>>,
    url: String,
}

impl Receiver {
    async fn start(answers: &[u16]) -> Receiver {
        async fn receive(
            State(receiver): State<Receiver>,
            headers: HeaderMap,
            body: Bytes,
        ) -> StatusCode {
            let header = |name| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            receiver.seen.lock().unwrap().push(Delivery {
                authorization: header(axum::http::header::AUTHORIZATION),
                content_type: header(axum::http::header::CONTENT_TYPE),
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            let status = receiver.answers.lock().unwrap().pop_front().unwrap_or(200);
            StatusCode::from_u16(status).unwrap()
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver = Receiver {
            url: format!("http://{}/hook", listener.local_addr().unwrap()),
            answers: Arc::new(Mutex::new(answers.iter().copied().collect())),
            ..Receiver::default()
        };
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(receiver.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        receiver
    }

    fn seen(&self) -> Vec<Delivery> {
        self.seen.lock().unwrap().clone()
    }

    fn target(&self) -> WebhookTarget {
        WebhookTarget {
            url: self.url.clone(),
            user: "fake-pms-webhook".into(),
            password: "webhook-secret-123".into(),
        }
    }
}

/// `base64("fake-pms-webhook:webhook-secret-123")`.
const BASIC: &str = "Basic ZmFrZS1wbXMtd2ViaG9vazp3ZWJob29rLXNlY3JldC0xMjM=";

/// Polls `done` every 10 ms until it holds; fails after 10 s.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn stat(fake: &FakePms, key: &str) -> u64 {
    fake.control.stats()[key].as_u64().unwrap()
}

/// Waits until no delivery is under way, then answers (delivered, failed).
async fn settled(fake: &FakePms) -> (u64, u64) {
    eventually("the deliveries to end", || {
        stat(fake, "webhooksPending") == 0
    })
    .await;
    (
        stat(fake, "webhooksDelivered"),
        stat(fake, "webhooksFailed"),
    )
}

async fn fake_call(
    http: &reqwest::Client,
    fake: &FakePms,
    method: reqwest::Method,
    path: &str,
    body: &str,
) -> (u16, Value) {
    let res = http
        .request(method, format!("http://{}{path}", fake.addr))
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

#[tokio::test]
async fn a_patched_reservation_is_posted_as_reservation_updated() {
    let receiver = Receiver::start(&[]).await;
    let fake = FakePms::start(FakePmsConfig {
        webhook: Some(receiver.target()),
        ..quiet(40)
    })
    .await;
    let http = reqwest::Client::new();
    let before = fake.control.reservations()[5].clone();
    let id = before["id"].as_i64().unwrap();

    let (status, answer) = fake_call(
        &http,
        &fake,
        reqwest::Method::PATCH,
        &format!("/_fake/reservations/{id}"),
        r#"{"arrivalDate": "2026-12-01", "departureDate": "2026-12-05"}"#,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let stored = &answer["result"];
    assert_eq!(stored["id"], id);
    assert_eq!(stored["arrivalDate"], "2026-12-01");
    assert_eq!(stored["departureDate"], "2026-12-05");
    assert_eq!(stored["nights"], 4);
    assert_eq!(stored["previousArrivalDate"], before["arrivalDate"]);
    assert_eq!(stored["previousDepartureDate"], before["departureDate"]);
    assert_eq!(stored["guestName"], before["guestName"]);
    if before["status"] == "new" {
        assert_eq!(stored["status"], "modified");
    } else {
        assert_eq!(stored["status"], before["status"]);
    }

    eventually("the delivery", || receiver.seen().len() == 1).await;
    let delivery = &receiver.seen()[0];
    assert_eq!(delivery.authorization.as_deref(), Some(BASIC));
    assert_eq!(delivery.content_type.as_deref(), Some("application/json"));
    assert_eq!(delivery.body["event"], "reservation.updated");
    assert_eq!(delivery.body["accountId"], 10450);
    let data = &delivery.body["data"];
    assert_eq!(data["id"], id);
    assert_eq!(data["arrivalDate"], "2026-12-01");
    assert_eq!(data["departureDate"], "2026-12-05");
    let (old, new) = (
        before["updatedOn"].as_str().unwrap(),
        data["updatedOn"].as_str().unwrap(),
    );
    assert!(new > old, "updatedOn {new} is not after {old}");
    // Exactly what the API answers for it.
    let token = token(&fake, &http).await;
    let (_, one) = get(&http, &fake, &token, &format!("/reservations/{id}")).await;
    assert_eq!(data, &one["result"]);
    assert_eq!(data, stored);

    // Two quick changes: both posted, the later one newer.
    for status in ["cancelled", "new"] {
        let (code, _) = fake_call(
            &http,
            &fake,
            reqwest::Method::PATCH,
            &format!("/_fake/reservations/{id}"),
            &format!(r#"{{"status": "{status}"}}"#),
        )
        .await;
        assert_eq!(code, 200);
    }
    assert_eq!(settled(&fake).await, (3, 0));
    let seen = receiver.seen();
    let stamp = |status: &str| {
        seen.iter()
            .find(|d| d.body["data"]["status"] == status)
            .map(|d| d.body["data"]["updatedOn"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert!(stamp("new") > stamp("cancelled"));
    let cancelled = seen
        .iter()
        .find(|d| d.body["data"]["status"] == "cancelled")
        .unwrap();
    assert!(cancelled.body["data"]["cancellationDate"].is_string());
    let stats = fake.control.stats();
    assert_eq!(stats["webhook"]["url"], receiver.url.as_str());
    assert_eq!(stats["webhook"]["user"], "fake-pms-webhook");
    assert!(stats["webhook"].get("password").is_none());
}

#[tokio::test]
async fn a_posted_reservation_is_posted_as_reservation_created() {
    let receiver = Receiver::start(&[]).await;
    let fake = FakePms::start(FakePmsConfig {
        webhook: Some(receiver.target()),
        ..quiet(40)
    })
    .await;
    let http = reqwest::Client::new();
    let listing = fake.control.listings()[0]["id"].as_i64().unwrap();
    let newest_id = fake
        .control
        .reservations()
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .max()
        .unwrap();

    let (status, answer) = fake_call(
        &http,
        &fake,
        reqwest::Method::POST,
        "/_fake/reservations",
        &format!(
            r#"{{"listingMapId": {listing}, "arrivalDate": "2026-11-02", "departureDate": "2026-11-09", "guestName": "Ada Lovelace"}}"#
        ),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let stored = &answer["result"];
    let id = stored["id"].as_i64().unwrap();
    assert_eq!(id, newest_id + 1);
    assert_eq!(stored["hostawayReservationId"], id);
    assert_eq!(stored["listingMapId"], listing);
    assert_eq!(stored["guestName"], "Ada Lovelace");
    assert_eq!(stored["nights"], 7);
    assert_eq!(stored["status"], "new");
    assert_eq!(stored["channelId"], 2000);
    assert!(stored["totalPrice"].as_f64().unwrap() > 0.0);
    // Every field a seeded reservation has.
    let fields = stored.as_object().unwrap();
    for seeded in fake.control.reservations().iter().take(20) {
        for key in seeded.as_object().unwrap().keys() {
            assert!(fields.contains_key(key), "{key} missing from {stored}");
        }
    }

    eventually("the delivery", || receiver.seen().len() == 1).await;
    let delivery = &receiver.seen()[0];
    assert_eq!(delivery.authorization.as_deref(), Some(BASIC));
    assert_eq!(delivery.body["event"], "reservation.created");
    assert_eq!(delivery.body["accountId"], 10450);
    assert_eq!(&delivery.body["data"], stored);

    // In process too, from a thread outside the runtime: a replaced record is an update.
    let control = fake.control.clone();
    let again = std::thread::spawn(move || {
        control.add_reservation(json!({"id": id, "listingMapId": listing,
            "arrivalDate": "2026-11-03", "departureDate": "2026-11-09"}))
    })
    .join()
    .unwrap();
    assert_eq!(again, Some(id));
    eventually("the second delivery", || receiver.seen().len() == 2).await;
    assert_eq!(receiver.seen()[1].body["event"], "reservation.updated");
    assert_eq!(receiver.seen()[1].body["data"]["arrivalDate"], "2026-11-03");
    assert_eq!(settled(&fake).await, (2, 0));
}

#[tokio::test]
async fn the_control_routes_refuse_what_is_not_a_reservation_change() {
    let receiver = Receiver::start(&[]).await;
    let fake = FakePms::start(FakePmsConfig {
        webhook: Some(receiver.target()),
        ..quiet(10)
    })
    .await;
    let http = reqwest::Client::new();
    let id = fake.control.reservations()[0]["id"].as_i64().unwrap();
    let listing = fake.control.listings()[0]["id"].as_i64().unwrap();
    let patch = reqwest::Method::PATCH;
    let post = reqwest::Method::POST;
    let cases: Vec<(reqwest::Method, String, String, u16)> = vec![
        (
            patch.clone(),
            "/_fake/reservations/999".into(),
            r#"{"status": "cancelled"}"#.into(),
            404,
        ),
        (
            patch.clone(),
            "/_fake/reservations/abc".into(),
            "{}".into(),
            404,
        ),
        (
            patch.clone(),
            format!("/_fake/reservations/{id}"),
            "[1, 2]".into(),
            400,
        ),
        (
            patch.clone(),
            format!("/_fake/reservations/{id}"),
            "not json".into(),
            400,
        ),
        (
            patch.clone(),
            format!("/_fake/reservations/{id}"),
            String::new(),
            400,
        ),
        (
            patch.clone(),
            format!("/_fake/reservations/{id}"),
            r#"{"arrivalDate": "2026-12-05", "departureDate": "2026-12-01"}"#.into(),
            400,
        ),
        (
            patch.clone(),
            format!("/_fake/reservations/{id}"),
            r#"{"departureDate": "soon"}"#.into(),
            400,
        ),
        (
            patch.clone(),
            format!("/_fake/reservations/{id}"),
            r#"{"listingMapId": 1}"#.into(),
            400,
        ),
        (
            post.clone(),
            "/_fake/reservations".into(),
            r#"{"arrivalDate": "2026-12-01", "departureDate": "2026-12-05"}"#.into(),
            400,
        ),
        (
            post.clone(),
            "/_fake/reservations".into(),
            format!(r#"{{"listingMapId": {listing}, "arrivalDate": "2026-12-01"}}"#),
            400,
        ),
        (
            post.clone(),
            "/_fake/reservations".into(),
            format!(
                r#"{{"id": {id}, "listingMapId": {listing}, "arrivalDate": "2026-12-01", "departureDate": "2026-12-05"}}"#
            ),
            409,
        ),
    ];
    let before = fake.control.reservations();
    for (method, path, body, expected) in cases {
        let (status, answer) = fake_call(&http, &fake, method.clone(), &path, &body).await;
        assert_eq!(status, expected, "{method} {path} {body}: {answer}");
        assert_eq!(answer["status"], "fail", "{answer}");
    }
    assert_eq!(fake.control.reservations(), before);
    assert_eq!(settled(&fake).await, (0, 0));
    assert!(receiver.seen().is_empty());

    let (status, answer) = fake_call(
        &http,
        &fake,
        reqwest::Method::GET,
        &format!("/_fake/reservations/{id}"),
        "",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(answer["result"], before[0]);
}

#[tokio::test]
async fn without_a_webhook_target_nothing_is_posted() {
    let receiver = Receiver::start(&[]).await;
    let fake = FakePms::start(quiet(10)).await;
    let http = reqwest::Client::new();
    let id = fake.control.reservations()[0]["id"].as_i64().unwrap();
    let (status, answer) = fake_call(
        &http,
        &fake,
        reqwest::Method::PATCH,
        &format!("/_fake/reservations/{id}"),
        r#"{"guestName": "Nobody Told"}"#,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        fake.control
            .update_reservation(id, |r| r["guestName"] = json!("Still Nobody"))
    );
    assert_eq!(settled(&fake).await, (0, 0));
    assert!(fake.control.stats()["webhook"].is_null());

    // Set, then lifted again.
    fake.control.set_webhook(Some(receiver.target()));
    assert!(
        fake.control
            .update_reservation(id, |r| r["guestName"] = json!("Told"))
    );
    eventually("the delivery", || receiver.seen().len() == 1).await;
    fake.control.set_webhook(None);
    assert!(
        fake.control
            .update_reservation(id, |r| r["guestName"] = json!("Not told"))
    );
    assert_eq!(settled(&fake).await, (1, 0));
    assert_eq!(receiver.seen().len(), 1);
}

#[tokio::test]
async fn a_5xx_or_429_is_retried_and_another_4xx_is_not() {
    // 503, then 429, then 200: delivered at the third attempt.
    let receiver = Receiver::start(&[503, 429]).await;
    let fake = FakePms::start(FakePmsConfig {
        webhook: Some(receiver.target()),
        ..quiet(10)
    })
    .await;
    let id = fake.control.reservations()[0]["id"].as_i64().unwrap();
    assert!(
        fake.control
            .update_reservation(id, |r| r["guestName"] = json!("Retried"))
    );
    assert_eq!(settled(&fake).await, (1, 0));
    let seen = receiver.seen();
    assert_eq!(seen.len(), 3);
    assert!(seen.iter().all(|d| d.body == seen[0].body));

    // 400: failed at once, never posted again.
    let refusing = Receiver::start(&[400]).await;
    fake.control.set_webhook(Some(refusing.target()));
    assert!(
        fake.control
            .update_reservation(id, |r| r["guestName"] = json!("Refused"))
    );
    assert_eq!(settled(&fake).await, (1, 1));
    assert_eq!(refusing.seen().len(), 1);

    // Every attempt a 500: three retries, then failed.
    let failing = Receiver::start(&[500, 500, 500, 500, 500]).await;
    fake.control.set_webhook(Some(failing.target()));
    assert!(
        fake.control
            .update_reservation(id, |r| r["guestName"] = json!("Lost"))
    );
    assert_eq!(settled(&fake).await, (1, 2));
    assert_eq!(failing.seen().len(), 1 + crate::RETRY_DELAYS.len());

    fake.control.reset();
    assert_eq!(stat(&fake, "webhooksDelivered"), 0);
    assert_eq!(stat(&fake, "webhooksFailed"), 0);
    assert!(fake.control.stats()["webhook"]["url"] == receiver.url.as_str());
}

#[tokio::test]
async fn a_receiver_that_cannot_be_reached_is_retried_then_given_up() {
    // A port nobody listens on any more.
    let closed = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap()
    };
    let fake = FakePms::start(FakePmsConfig {
        webhook: Some(WebhookTarget {
            url: format!("http://{closed}/hook"),
            user: String::new(),
            password: String::new(),
        }),
        ..quiet(10)
    })
    .await;
    let id = fake.control.reservations()[0]["id"].as_i64().unwrap();
    let started = Instant::now();
    assert!(
        fake.control
            .update_reservation(id, |r| r["guestName"] = json!("Unreachable"))
    );
    // The change itself does not wait for the delivery.
    assert!(started.elapsed() < Duration::from_millis(200));
    assert_eq!(stat(&fake, "webhooksPending"), 1);
    assert_eq!(settled(&fake).await, (0, 1));
    // Every retry waited its delay.
    let waited: Duration = crate::RETRY_DELAYS.iter().sum();
    assert!(started.elapsed() >= waited);
}
