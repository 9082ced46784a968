//! The PMS synchronisation end to end (issue 17, "What it must show"): `POST
//! /reporting/sync/trigger`, the `pms.sync` job on a worker, the fake of Hostaway's API, and what
//! the reporting routes and tables hold afterwards. Full and incremental syncs, a second sync
//! writing nothing, records moving between pages, a 429 honoured, a token renewed after a 403,
//! the PMS failing then recovering, a worker killed mid-sync, one sync at a time, the scheduler,
//! every mapping, and one PMS rate limit for every worker together. And records the PMS no longer
//! has (issue 27): retired by a completed full sync of their entity, back when met again.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use chrono::{Days, NaiveDate, Utc};
use domain::{crypto::FieldCipher, settings::PmsSettings};
use fake_pms::{FakePms, FakePmsConfig, RequestHook, RequestSeen};
use jobs::{Job, Periodic, pms::ScheduleSync};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{
    TestApp, TestAppOptions, eventually, job_status, json,
    pms::{
        get, pms_registry, request, settings_for, start_fake_with, trigger, trigger_and_wait,
        wait_finished,
    },
};
use tokio::sync::Barrier;
use uuid::Uuid;

use crate::management_villas::send;

fn full() -> Value {
    json!({"type": "full", "entities": ["listings", "reservations"]})
}

/// The fake with `config`'s data and no rate limits of its own: the tests that are not about
/// limits measure the sync, not the wait (the limiter's test sets them).
async fn unthrottled(config: FakePmsConfig) -> FakePms {
    start_fake_with(FakePmsConfig {
        ip_limit: None,
        account_limit: None,
        ..config
    })
    .await
}

/// The fake with its seed data (a few dozen listings, two years of reservations).
async fn seeded_fake() -> FakePms {
    unthrottled(FakePmsConfig::default()).await
}

async fn small_fake(listings: usize, reservations: usize) -> FakePms {
    unthrottled(FakePmsConfig {
        listings,
        reservations,
        ..FakePmsConfig::default()
    })
    .await
}

async fn app_with(pool: PgPool, pms: PmsSettings) -> TestApp {
    TestApp::spawn_with(
        pool,
        TestAppOptions {
            pms: Some(pms),
            ..TestAppOptions::default()
        },
    )
    .await
}

fn len(records: &[Value]) -> i64 {
    len_of(records)
}

fn len_of<T>(rows: &[T]) -> i64 {
    i64::try_from(rows.len()).unwrap()
}

/// The PMS ids of `records`, sorted.
fn ids_of(records: &[Value]) -> Vec<i64> {
    let mut ids: Vec<i64> = records
        .iter()
        .map(|r| r["id"].as_i64().unwrap_or_else(|| panic!("no id in {r}")))
        .collect();
    ids.sort_unstable();
    ids
}

async fn stored_listing_ids(pool: &PgPool) -> Vec<i64> {
    sqlx::query_scalar("SELECT pms_id FROM pms_listings ORDER BY pms_id")
        .fetch_all(pool)
        .await
        .unwrap()
}

async fn stored_reservation_ids(pool: &PgPool) -> Vec<i64> {
    sqlx::query_scalar("SELECT pms_id FROM pms_reservations ORDER BY pms_id")
        .fetch_all(pool)
        .await
        .unwrap()
}

/// Every listing and reservation of `fake` is stored, once (pms_id is unique; the lists are
/// equal, so none is missing and none is extra).
async fn assert_stored_once(pool: &PgPool, fake: &FakePms) {
    assert_eq!(
        stored_listing_ids(pool).await,
        ids_of(&fake.control.listings()),
        "stored listings"
    );
    assert_eq!(
        stored_reservation_ids(pool).await,
        ids_of(&fake.control.reservations()),
        "stored reservations"
    );
}

/// (table, pms id, row version, synced_at) of every stored row: a row written again, even with
/// the same values, gets a new xmin.
async fn row_versions(pool: &PgPool) -> Vec<(String, i64, String, String)> {
    sqlx::query_as(
        "SELECT 'listing' AS t, pms_id, xmin::text, synced_at::text FROM pms_listings
         UNION ALL
         SELECT 'reservation', pms_id, xmin::text, synced_at::text FROM pms_reservations
         ORDER BY 1, 2",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// [fetched, created, updated, unchanged] of `entity` in a run's status.
fn counts(run: &Value, entity: &str) -> [i64; 4] {
    ["fetched", "created", "updated", "unchanged"].map(|k| {
        run["progress"][entity][k]
            .as_i64()
            .unwrap_or_else(|| panic!("no progress.{entity}.{k} in {run}"))
    })
}

fn pages_done(run: &Value, entity: &str) -> i64 {
    run["progress"][entity]["pagesDone"].as_i64().unwrap_or(0)
}

#[track_caller]
fn assert_completed(run: &Value) {
    assert_eq!(run["status"], "COMPLETED", "{run}");
}

fn sync_id(started: &Value) -> String {
    started["syncId"]
        .as_str()
        .unwrap_or_else(|| panic!("no syncId in {started}"))
        .to_owned()
}

/// `pagination.total` of a list route.
async fn total(app: &TestApp, path: &str) -> i64 {
    let (status, page) = get(app, path, "viewer").await;
    assert_eq!(status, 200, "{path}: {page}");
    page["pagination"]["total"]
        .as_i64()
        .unwrap_or_else(|| panic!("{path}: no total in {page}"))
}

/// An amount the PMS sent as a JSON number or a numeric string.
fn pms_amount(v: &Value) -> f64 {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or(0.0)
}

/// A money figure of an answer (rendered as a JSON number).
fn money(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("not a JSON number: {v}"))
}

/// Reservation ids in Hostaway's `sortOrder=updatedOn` order (oldest change first), the order
/// the sync pages through: a change moves a record to the end.
fn update_order(records: &[Value]) -> Vec<i64> {
    let mut keyed: Vec<(String, i64)> = records
        .iter()
        .map(|r| {
            (
                r["updatedOn"].as_str().unwrap_or_default().to_owned(),
                r["id"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, id)| id).collect()
}

/// The scheduler's tick of the periodic sync, enqueued and pushed as the scheduler does.
async fn schedule_tick(app: &TestApp, tick: &str) -> Uuid {
    let mut tx = app.pool.begin().await.unwrap();
    let job = ScheduleSync::for_tick(tick.to_owned())
        .enqueue(&mut tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    app.queues.push(&[job]).await;
    job.id
}

async fn wait_job(pool: &PgPool, id: Uuid, status: &str) {
    let reached = eventually(Duration::from_secs(20), || async {
        (job_status(pool, id).await.as_deref() == Some(status)).then_some(())
    })
    .await;
    assert!(
        reached.is_some(),
        "job {id} not {status} within 20 s: {:?}",
        job_status(pool, id).await
    );
}

async fn run_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM pms_sync_runs")
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_full_sync_stores_every_listing_and_reservation_once(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());

    let (status, started, headers) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{started}");
    assert_eq!(started["status"], "STARTED");
    assert!(
        started["startedAt"]
            .as_str()
            .is_some_and(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok()),
        "{started}"
    );
    let id = sync_id(&started);
    let location = headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        location.ends_with(&format!("/reporting/sync/status/{id}")),
        "Location: {location}"
    );
    let retry_after = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    assert!(
        retry_after.is_some_and(|s| s >= 1),
        "Retry-After: {retry_after:?}"
    );

    let run = wait_finished(&app, &id).await;
    assert_completed(&run);
    assert_eq!(run["syncId"], id.as_str());
    assert_eq!(run["type"], "full");
    assert_eq!(run["entities"], json!(["listings", "reservations"]));
    assert!(
        run["finishedAt"].is_string() && run["error"].is_null(),
        "{run}"
    );

    let listings = fake.control.listings();
    let reservations = fake.control.reservations();
    assert!(reservations.len() > 50, "more than one page of seed data");
    for (entity, n) in [
        ("listings", len(&listings)),
        ("reservations", len(&reservations)),
    ] {
        assert_eq!(counts(&run, entity), [n, n, 0, 0], "{entity}: {run}");
        assert!(pages_done(&run, entity) >= 1, "{entity}: {run}");
    }
    // Pages of 50: every one of them was stored and counted.
    assert!(
        pages_done(&run, "reservations") >= (len(&reservations) + 49) / 50,
        "{run}"
    );

    assert_eq!(
        total(&app, "/reporting/listings?limit=1").await,
        len(&listings)
    );
    assert_eq!(
        total(&app, "/reporting/reservations?limit=1").await,
        len(&reservations)
    );
    assert_stored_once(&pool, &fake).await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_second_sync_of_unchanged_data_writes_no_row(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);
    // A sync that stored stays enqueues the turnover generation with its completion; one that
    // finds nothing new does not.
    let generations = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM jobs WHERE kind = 'maintenance.generate_turnovers'",
        )
        .fetch_one(&pool)
        .await
        .unwrap()
    };
    assert_eq!(generations().await, 1);
    sqlx::query("DELETE FROM jobs WHERE kind = 'maintenance.generate_turnovers'")
        .execute(&pool)
        .await
        .unwrap();
    let before = row_versions(&pool).await;
    let listings = len(&fake.control.listings());
    let reservations = len(&fake.control.reservations());
    assert_eq!(len_of(&before), listings + reservations);

    let again = trigger_and_wait(&app, full()).await;
    assert_completed(&again);
    assert_eq!(
        counts(&again, "listings"),
        [listings, 0, 0, listings],
        "{again}"
    );
    assert_eq!(
        counts(&again, "reservations"),
        [reservations, 0, 0, reservations],
        "{again}"
    );
    assert!(
        row_versions(&pool).await == before,
        "a sync that finds nothing new writes no row"
    );
    assert_eq!(generations().await, 0, "nothing changed: no generation");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_incremental_sync_asks_for_recent_activity_and_writes_only_what_changed(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);

    let all = fake.control.reservations();
    let ids = ids_of(&all);
    let mut changed = [ids[0], ids[ids.len() / 2], ids[ids.len() - 1]];
    changed.sort_unstable();
    for &id in &changed {
        // Also moves the record's updatedOn and latestActivityOn to now.
        assert!(fake.control.update_reservation(id, move |r| {
            r["guestName"] = json!(format!("Renamed {id}"));
        }));
    }
    let before = row_versions(&pool).await;
    let asked_before = fake.control.requests().len();

    let run = trigger_and_wait(
        &app,
        json!({"type": "incremental", "entities": ["reservations"]}),
    )
    .await;
    assert_completed(&run);
    assert_eq!(run["type"], "incremental");
    assert!(run["activitySince"].is_string(), "{run}");
    let [fetched, created, updated, unchanged] = counts(&run, "reservations");
    assert_eq!((created, updated), (0, 3), "{run}");
    assert_eq!(unchanged, fetched - 3, "{run}");
    assert!(
        fetched < len(&all),
        "an incremental sync fetches only what had activity lately: {run}"
    );

    // Every reservations request of the run named the activity it wanted.
    let asked: Vec<RequestSeen> = fake
        .control
        .requests()
        .into_iter()
        .skip(asked_before)
        .filter(|r| r.method == "GET" && r.path.ends_with("/reservations"))
        .collect();
    assert!(!asked.is_empty());
    let today = Utc::now().date_naive();
    for r in &asked {
        let since = r
            .query
            .iter()
            .find(|(k, _)| k == "latestActivityStart")
            .and_then(|(_, v)| NaiveDate::parse_from_str(v, "%Y-%m-%d").ok());
        assert!(
            since.is_some_and(|d| (today - Days::new(2)..=today).contains(&d)),
            "reservations asked with {:?}",
            r.query
        );
    }

    // Only the three changed rows were written.
    let after = row_versions(&pool).await;
    assert_eq!(after.len(), before.len());
    let rewritten: Vec<i64> = after
        .iter()
        .zip(&before)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.1)
        .collect();
    assert_eq!(rewritten, changed);
    let names: Vec<(i64, Option<String>)> = sqlx::query_as(
        "SELECT pms_id, guest_name FROM pms_reservations WHERE pms_id = ANY($1) ORDER BY pms_id",
    )
    .bind(changed.as_slice())
    .fetch_all(&pool)
    .await
    .unwrap();
    let expected: Vec<(i64, Option<String>)> = changed
        .iter()
        .map(|id| (*id, Some(format!("Renamed {id}"))))
        .collect();
    assert_eq!(names, expected);

    // And the reading route shows it.
    let our_id: String =
        sqlx::query_scalar("SELECT id::text FROM pms_reservations WHERE pms_id = $1")
            .bind(changed[0])
            .fetch_one(&pool)
            .await
            .unwrap();
    let (status, one) = get(&app, &format!("/reporting/reservations/{our_id}"), "viewer").await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["guestName"], format!("Renamed {}", changed[0]).as_str());
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn records_moving_between_pages_during_a_sync_are_stored_once_with_their_latest_data(
    pool: PgPool,
) {
    let fake = seeded_fake().await;
    let app = app_with(
        pool.clone(),
        PmsSettings {
            page_size: 20,
            ..settings_for(&fake)
        },
    )
    .await;
    let _worker = app.worker(pms_registry());

    let order = update_order(&fake.control.reservations());
    assert!(order.len() > 300, "seed data: {} reservations", order.len());
    // Once page 3 (order[40..60]) is answered, records change, each moving to the end of the
    // updatedOn order: some of pages 1 to 3 (already received), some not reached yet, and last
    // the record the next page's cursor names (order[59]), so that the cursor now points past
    // every record the pass has not seen.
    let moved = [
        order[0], order[7], order[19], order[33], order[45], order[90], order[300], order[59],
    ];
    let fired = Arc::new(AtomicBool::new(false));
    let hook: RequestHook = {
        let control = fake.control.clone();
        let fired = fired.clone();
        let asked = AtomicUsize::new(0);
        // The fake calls it once a request's answer is ready, before sending it, with no lock
        // held.
        Arc::new(move |seen: &RequestSeen| {
            if seen.method != "GET" || !seen.path.ends_with("/reservations") {
                return;
            }
            if asked.fetch_add(1, Ordering::SeqCst) != 2 {
                return;
            }
            for id in moved {
                control.update_reservation(id, move |r| {
                    r["guestName"] = json!(format!("Moved {id}"));
                    r["totalPrice"] = json!(4321.5);
                });
            }
            fired.store(true, Ordering::SeqCst);
        })
    };
    fake.control.on_request(Some(hook));
    let run = trigger_and_wait(&app, full()).await;
    fake.control.on_request(None);
    assert_completed(&run);
    assert!(
        fired.load(Ordering::SeqCst),
        "the records changed during the sync"
    );

    let current = fake.control.reservations();
    let n = len(&current);
    let [fetched, created, _, _] = counts(&run, "reservations");
    assert_eq!(
        (fetched, created),
        (n, n),
        "every reservation counted once: {run}"
    );
    let stored: Vec<(i64, Option<String>, f64)> = sqlx::query_as(
        "SELECT pms_id, guest_name, total_amount::float8 FROM pms_reservations ORDER BY pms_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let mut expected: Vec<(i64, Option<String>, f64)> = current
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap_or_default(),
                r["guestName"].as_str().map(str::to_owned),
                pms_amount(&r["totalPrice"]),
            )
        })
        .collect();
    expected.sort_by_key(|e| e.0);
    assert_eq!(stored.len(), expected.len(), "one row per reservation");
    for (s, e) in stored.iter().zip(&expected) {
        assert!(
            s.0 == e.0 && s.1 == e.1 && (s.2 - e.2).abs() < 0.006,
            "stored {s:?}, the PMS has {e:?}"
        );
    }
    let stored_moved: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pms_reservations WHERE guest_name LIKE 'Moved %' AND total_amount = 4321.50",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        stored_moved,
        len_of(&moved),
        "the moved records stored with their change"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_429_from_the_pms_is_honoured(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    // A 429 with `Retry-After: 1` lands on pages, not on the token: on the request that follows
    // the token's answer (the first page of listings), and on the one that follows the first
    // page of reservations (the second page, in the middle of the pass).
    let hook: RequestHook = {
        let control = fake.control.clone();
        let after_token = AtomicBool::new(false);
        let after_first_page = AtomicBool::new(false);
        // The fake calls it once a request's answer is ready, before sending it: the throttle
        // is in place before the client can send its next request.
        Arc::new(move |seen: &RequestSeen| {
            let ok = (200..300).contains(&seen.status);
            let once = |fired: &AtomicBool| !fired.swap(true, Ordering::SeqCst);
            let token = seen.method == "POST" && seen.path.ends_with("/accessTokens");
            let reservations = seen.method == "GET" && seen.path.ends_with("/reservations");
            if ok && ((token && once(&after_token)) || (reservations && once(&after_first_page))) {
                control.throttle_next(1, Some(1));
            }
        })
    };
    fake.control.on_request(Some(hook));
    let run = trigger_and_wait(&app, full()).await;
    fake.control.on_request(None);

    assert_completed(&run);
    for (entity, n) in [
        ("listings", len(&fake.control.listings())),
        ("reservations", len(&fake.control.reservations())),
    ] {
        assert_eq!(counts(&run, entity), [n, n, 0, 0], "{entity}: {run}");
    }
    assert_stored_once(&pool, &fake).await;
    assert_eq!(
        fake.control.token_requests(),
        1,
        "a 429 is no reason for a new token"
    );

    let seen = fake.control.requests();
    let throttled: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, r)| r.status == 429)
        .map(|(i, _)| i)
        .collect();
    let refused: Vec<(&str, &str)> = throttled
        .iter()
        .map(|&i| (seen[i].method.as_str(), seen[i].path.as_str()))
        .collect();
    assert_eq!(
        refused,
        [("GET", "/v1/listings"), ("GET", "/v1/reservations")],
        "a page of each was refused"
    );
    let second_page = &seen[throttled[1]];
    assert!(
        second_page.query.iter().any(|(k, _)| k == "afterId"),
        "the reservations page refused follows a cursor: {:?}",
        second_page.query
    );
    for i in throttled {
        let refused = &seen[i];
        // The sync waited: the next request it sent is the same one again, a second later.
        let again = seen
            .get(i + 1)
            .unwrap_or_else(|| panic!("{} {} never asked again", refused.method, refused.path));
        assert!(
            again.method == refused.method
                && again.path == refused.path
                && again.query == refused.query,
            "after the 429 on {} {} {:?} came {} {} {:?}",
            refused.method,
            refused.path,
            refused.query,
            again.method,
            again.path,
            again.query
        );
        assert_eq!(again.status, 200, "{} {}", again.method, again.path);
        let waited = again.at.duration_since(refused.at);
        assert!(
            waited >= Duration::from_millis(950),
            "{} asked again after {waited:?}; Retry-After said 1 s",
            refused.path
        );
    }
}

/// The token of the last request the fake accepted.
fn last_accepted_token(fake: &FakePms) -> String {
    fake.control
        .requests()
        .iter()
        .rev()
        .filter(|r| r.status == 200)
        .find_map(|r| r.bearer.clone())
        .filter(|t| !t.is_empty())
        .expect("an accepted request with a token")
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_token_is_kept_encrypted_and_renewed_after_a_403(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);
    assert_eq!(
        fake.control.token_requests(),
        1,
        "one token for every request of the sync"
    );
    let old = last_accepted_token(&fake);

    fake.control.revoke_tokens();
    let run = trigger_and_wait(&app, full()).await;
    assert_completed(&run);
    let reservations = len(&fake.control.reservations());
    assert_eq!(counts(&run, "reservations")[0], reservations, "{run}");
    assert_eq!(
        fake.control.token_requests(),
        2,
        "renewed once, after the 403"
    );
    assert!(
        fake.control
            .requests()
            .iter()
            .any(|r| r.status == 403 && r.bearer.as_deref() == Some(old.as_str())),
        "the revoked token was refused"
    );
    let new = last_accepted_token(&fake);
    assert_ne!(new, old);

    let stored: Vec<Vec<u8>> = sqlx::query_scalar("SELECT token FROM pms_tokens")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1, "one token for the account");
    for plain in [&old, &new] {
        assert!(
            !stored[0]
                .windows(plain.len())
                .any(|w| w == plain.as_bytes()),
            "the token is stored in clear"
        );
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_pms_failing_for_a_moment_is_retried_and_the_sync_completes(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    fake.control.fail_next(3, 503);

    assert_completed(&trigger_and_wait(&app, full()).await);
    assert_eq!(
        fake.control
            .requests()
            .iter()
            .filter(|r| r.status == 503)
            .count(),
        3
    );
    assert_stored_once(&pool, &fake).await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_pms_failing_for_good_fails_the_run_and_a_later_sync_completes(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(
        pool.clone(),
        PmsSettings {
            max_retries: 1,
            ..settings_for(&fake)
        },
    )
    .await;
    fake.control.set_failing(Some(500));
    let (status, started, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{started}");
    let id = sync_id(&started);
    // One attempt of the job instead of five with backoff (minutes): the run must say FAILED
    // after its last attempt, whichever it is.
    let limited = sqlx::query(
        "UPDATE jobs SET max_attempts = 1
         WHERE id = (SELECT job_id FROM pms_sync_runs WHERE id = $1::uuid)",
    )
    .bind(id.as_str())
    .execute(&pool)
    .await
    .unwrap()
    .rows_affected();
    assert_eq!(limited, 1, "the run names its job");
    let worker = app.worker(pms_registry());

    let failed = wait_finished(&app, &id).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    assert!(
        failed["error"].as_str().is_some_and(|e| !e.is_empty()),
        "a failed run says why: {failed}"
    );
    assert!(failed["finishedAt"].is_string(), "{failed}");
    assert!(fake.control.requests().iter().any(|r| r.status == 500));

    fake.control.set_failing(None);
    let (status, again, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{again}");
    let again = sync_id(&again);
    assert_ne!(
        again, id,
        "a failed run is over: a trigger starts a new one"
    );
    assert_completed(&wait_finished(&app, &again).await);
    assert_stored_once(&pool, &fake).await;
    worker.shutdown().await;
}

/// An operator's retry of a failed sync's job runs the sync again to COMPLETED (it used to
/// stay FAILED while the retry reported success); while another run is going, the retry is
/// refused with 409 SYNC_IN_PROGRESS and changes nothing.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_operators_retry_of_a_failed_sync_runs_it_again(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(
        pool.clone(),
        PmsSettings {
            max_retries: 1,
            ..settings_for(&fake)
        },
    )
    .await;
    fake.control.set_failing(Some(500));
    let (status, started, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{started}");
    let id = sync_id(&started);
    let job: Uuid = sqlx::query_scalar("SELECT job_id FROM pms_sync_runs WHERE id = $1::uuid")
        .bind(id.as_str())
        .fetch_one(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE jobs SET max_attempts = 1 WHERE id = $1")
        .bind(job)
        .execute(&pool)
        .await
        .unwrap();
    let worker = app.worker(pms_registry());
    assert_eq!(wait_finished(&app, &id).await["status"], "FAILED");
    worker.shutdown().await;

    // Another run going: refused, nothing changes.
    let other = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_sync_runs (id, kind, entities, status) VALUES ($1, 'full', '{listings}', 'STARTED')",
    )
    .bind(other)
    .execute(&pool)
    .await
    .unwrap();
    let retry = format!("/admin/jobs/{job}/retry");
    let (status, refused) = json(
        app.request(Method::POST, &retry, Some("admin"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "SYNC_IN_PROGRESS", "{refused}");
    assert_eq!(job_status(&pool, job).await.as_deref(), Some("FAILED"));
    sqlx::query("DELETE FROM pms_sync_runs WHERE id = $1")
        .bind(other)
        .execute(&pool)
        .await
        .unwrap();

    fake.control.set_failing(None);
    let (status, answer) = json(
        app.request(Method::POST, &retry, Some("admin"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    let (_, run) = get(&app, &format!("/reporting/sync/status/{id}"), "admin").await;
    assert!(
        run["status"] == "RUNNING" || run["status"] == "STARTED",
        "the retried run is going again: {run}"
    );
    assert!(run["error"].is_null(), "{run}");
    let worker = app.worker(pms_registry());
    assert_completed(&wait_finished(&app, &id).await);
    assert_stored_once(&pool, &fake).await;
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_worker_killed_mid_sync_leaves_a_run_another_completes_with_every_record_once(
    pool: PgPool,
) {
    let fake = seeded_fake().await;
    let app = app_with(
        pool.clone(),
        PmsSettings {
            page_size: 20,
            ..settings_for(&fake)
        },
    )
    .await;
    // The order the sync reads reservations in: its first page is order[..20].
    let order = update_order(&fake.control.reservations());
    // Slow answers: the kill lands between pages of reservations.
    fake.control.set_delay(Duration::from_millis(200));
    let doomed = app.worker(pms_registry());
    let (status, started, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{started}");
    let id = sync_id(&started);
    let path = format!("/reporting/sync/status/{id}");
    let mid = eventually(Duration::from_secs(30), || async {
        let (_, run) = get(&app, &path, "viewer").await;
        (pages_done(&run, "reservations") >= 2).then_some(run)
    })
    .await
    .expect("two pages of reservations stored within 30 s");
    doomed.kill().await;
    assert_eq!(mid["status"], "RUNNING", "{mid}");

    // Records of the first page, stored before the kill, change now: each moves behind the
    // cursor (last in the order of changes), so the resumed attempt meets them again.
    let mut changed = [order[0], order[2], order[5], order[9], order[14]];
    changed.sort_unstable();
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pms_reservations WHERE pms_id = ANY($1)")
            .bind(changed.as_slice())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(stored, 5, "the first page was stored before the kill");
    for &pms_id in &changed {
        assert!(fake.control.update_reservation(pms_id, move |r| {
            r["guestName"] = json!(format!("Changed {pms_id}"));
            r["totalPrice"] = json!(1234.5);
        }));
    }

    // Slower than a sync needs, so that the resumed attempt is still under way when a trigger
    // comes.
    fake.control.set_delay(Duration::from_millis(100));
    let rescuer = app.worker(pms_registry());
    // It takes the job over once its lease (15 s in tests) expires.
    let attempts = || async {
        sqlx::query_scalar::<_, i32>(
            "SELECT j.attempts FROM jobs j JOIN pms_sync_runs r ON r.job_id = j.id
             WHERE r.id = $1::uuid",
        )
        .bind(id.as_str())
        .fetch_one(&pool)
        .await
        .unwrap()
    };
    let resumed = eventually(Duration::from_secs(40), || async {
        (attempts().await >= 2).then_some(())
    })
    .await;
    assert!(resumed.is_some(), "no worker took the run over within 40 s");
    // A trigger while the run is resumed answers that run.
    let (status, again, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{again}");
    assert_eq!(again["syncId"], id.as_str(), "{again}");

    let run = wait_finished(&app, &id).await;
    assert_completed(&run);
    assert_stored_once(&pool, &fake).await;
    assert_eq!(run_count(&pool).await, 1);
    let reservations = len(&fake.control.reservations());
    let [fetched, created, _, _] = counts(&run, "reservations");
    assert_eq!(
        (fetched, created),
        (reservations, reservations),
        "every reservation counted once, those met again by the resumed attempt too: {run}"
    );
    assert_eq!(
        counts(&run, "listings")[0],
        len(&fake.control.listings()),
        "{run}"
    );
    // Stored with their change: the resumed attempt read them again.
    let rows: Vec<(i64, Option<String>, f64)> = sqlx::query_as(
        "SELECT pms_id, guest_name, total_amount::float8 FROM pms_reservations
         WHERE pms_id = ANY($1) ORDER BY pms_id",
    )
    .bind(changed.as_slice())
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), changed.len());
    for ((pms_id, name, total), expected) in rows.iter().zip(changed) {
        assert_eq!(*pms_id, expected);
        assert_eq!(
            name.as_deref(),
            Some(format!("Changed {expected}").as_str())
        );
        assert!((total - 1234.5).abs() < 0.001, "{pms_id}: total {total}");
    }
    assert_eq!(attempts().await, 2, "the second worker finished the run");
    rescuer.shutdown().await;
}

/// A transaction of the test that has inserted a STARTED run and not committed it: while it is
/// open, the index of the active run makes every trigger's insert wait for it. Answers the
/// transaction, its session's pid and the run's id.
async fn hold_active_run(pool: &PgPool) -> (sqlx::Transaction<'static, sqlx::Postgres>, i32, Uuid) {
    let mut held = pool.begin().await.unwrap();
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *held)
        .await
        .unwrap();
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_sync_runs (id, kind, entities, status, triggered_by)
         VALUES ($1, 'full', ARRAY['listings', 'reservations'], 'STARTED', 'the test')",
    )
    .bind(id)
    .execute(&mut *held)
    .await
    .unwrap();
    (held, pid, id)
}

/// `POST /reporting/sync/trigger` (a full sync, as an admin) on a task of its own, sent once
/// `start` (when given) lets every task waiting on it go at once.
fn spawn_trigger(
    app: &TestApp,
    start: Option<Arc<Barrier>>,
) -> tokio::task::JoinHandle<(u16, Value)> {
    let req = request(app, Method::POST, "/reporting/sync/trigger", "admin").json(&full());
    tokio::spawn(async move {
        if let Some(start) = start {
            start.wait().await;
        }
        json(req.send().await.unwrap()).await
    })
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn one_sync_runs_at_a_time(pool: PgPool) {
    let fake = small_fake(5, 20).await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    // No worker yet: the runs stay STARTED while the callers race.

    // A trigger that meets a run being started by another transaction waits for it, and once it
    // is committed answers that run rather than a second one.
    let (held, holder, held_id) = hold_active_run(&pool).await;
    let waiting = spawn_trigger(&app, None);
    tests::wait_blocked_by(&pool, holder, 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "the trigger answered while the other run was not committed"
    );
    held.commit().await.unwrap();
    let (status, body) = waiting.await.unwrap();
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["syncId"], held_id.to_string(), "the held run: {body}");
    assert_eq!(body["status"], "STARTED", "{body}");
    assert_eq!(run_count(&pool).await, 1, "no second run");
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'pms.sync'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(jobs, 0, "no job for a run that was not started");
    // That run (of the test, without a job) is over.
    sqlx::query(
        "UPDATE pms_sync_runs SET status = 'FAILED', finished_at = now(), error = 'ended by the test'
         WHERE id = $1",
    )
    .bind(held_id)
    .execute(&pool)
    .await
    .unwrap();

    // Two triggers released together, both held on a run being started, which is then rolled
    // back: both are inside their transactions at once, each having found no active run, and
    // only the index decides between them.
    let (held, holder, rolled_back) = hold_active_run(&pool).await;
    let barrier = Arc::new(Barrier::new(2));
    let racers = [
        spawn_trigger(&app, Some(barrier.clone())),
        spawn_trigger(&app, Some(barrier)),
    ];
    tests::wait_blocked_by(&pool, holder, 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        racers.iter().all(|r| !r.is_finished()),
        "a trigger answered while the other run was not committed"
    );
    held.rollback().await.unwrap();
    let mut ids = Vec::new();
    for racer in racers {
        let (status, body) = racer.await.unwrap();
        assert_eq!(status, 202, "{body}");
        ids.push(sync_id(&body));
    }
    assert_eq!(ids[0], ids[1], "both callers are answered the one run");
    assert_ne!(
        ids[0],
        rolled_back.to_string(),
        "the rolled back run is not answered"
    );
    let (active, all): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status IN ('STARTED', 'RUNNING')), count(*) FROM pms_sync_runs",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        (active, all),
        (1, 2),
        "the run ended by the test, and one new run"
    );
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'pms.sync'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(jobs, 1);

    // Another kind of sync asked while it waits: still that run.
    let (status, again, _) = trigger(
        &app,
        &json!({"type": "incremental", "entities": ["reservations"]}),
    )
    .await;
    assert_eq!(status, 202, "{again}");
    assert_eq!(again["syncId"], ids[0].as_str());
    let res = request(
        &app,
        Method::GET,
        &format!("/reporting/sync/status/{}", ids[0]),
        "viewer",
    )
    .send()
    .await
    .unwrap();
    assert!(
        res.headers().contains_key("retry-after"),
        "a run not finished says when to ask again"
    );
    let (status, run) = json(res).await;
    assert_eq!(
        (status, run["status"].as_str()),
        (200, Some("STARTED")),
        "{run}"
    );

    let _worker = app.worker(pms_registry());
    assert_completed(&wait_finished(&app, &ids[0]).await);
    assert_eq!(run_count(&pool).await, 2);
    assert_stored_once(&pool, &fake).await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn without_pms_credentials_a_trigger_is_503_and_the_scheduler_starts_nothing(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (status, body, _) = trigger(&app, &full()).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "PMS_NOT_CONFIGURED", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert_eq!(run_count(&pool).await, 0);

    let _worker = app.worker(pms_registry());
    let tick = schedule_tick(&app, "900s-1").await;
    wait_job(&pool, tick, "SUCCEEDED").await;
    let result: Option<Value> = sqlx::query_scalar("SELECT result FROM jobs WHERE id = $1")
        .bind(tick)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(
        result.as_ref().is_some_and(|r| r["skipped"].is_string()),
        "{result:?}"
    );
    assert_eq!(run_count(&pool).await, 0);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_scheduler_starts_an_incremental_sync_when_the_pms_is_configured(pool: PgPool) {
    let fake = small_fake(6, 40).await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    let tick = schedule_tick(&app, "900s-1").await;
    let id = eventually(Duration::from_secs(20), || async {
        sqlx::query_scalar::<_, String>("SELECT id::text FROM pms_sync_runs")
            .fetch_optional(&pool)
            .await
            .unwrap()
    })
    .await
    .expect("the tick starts a run within 20 s");

    let run = wait_finished(&app, &id).await;
    assert_completed(&run);
    assert_eq!(run["type"], "incremental");
    assert_eq!(run["triggeredBy"], "scheduler");
    assert_eq!(run["entities"], json!(["listings", "reservations"]));
    // With no sync before it, the incremental sync brings everything.
    assert_stored_once(&pool, &fake).await;
    wait_job(&pool, tick, "SUCCEEDED").await;
}

/// A Hostaway listing; `place` is (city, country).
fn listing(
    id: i64,
    name: &str,
    internal: Option<&str>,
    place: (Option<&str>, Option<&str>),
    bedrooms: i64,
    currency: &str,
    archived: bool,
) -> Value {
    let (city, country) = place;
    let special = archived.then_some("archived");
    json!({
        "id": id, "name": name, "externalListingName": name, "internalListingName": internal,
        "city": city, "country": country, "bedroomsNumber": bedrooms, "personCapacity": 6,
        "currencyCode": currency, "specialStatus": special,
    })
}

fn reservation(id: i64, listing: i64, channel_id: i64, channel_name: &str, status: &str) -> Value {
    json!({
        "id": id, "hostawayReservationId": id, "listingMapId": listing,
        "channelId": channel_id, "channelName": channel_name,
        "guestName": format!("Guest {id}"), "confirmationCode": format!("HM-{id}"),
        // Across a month end.
        "arrivalDate": "2025-01-30", "departureDate": "2025-02-02", "nights": 3,
        "totalPrice": 300, "taxAmount": 30, "channelCommissionAmount": 20,
        "hostawayCommissionAmount": 10, "currency": "EUR", "status": status,
        "reservationDate": "2025-01-02 09:30:00", "insertedOn": "2025-01-02 09:30:00",
        "updatedOn": "2025-01-03 10:00:00", "latestActivityOn": "2025-01-03 10:00:00",
    })
}

/// (channelId, channelName, our channel): the issue's table, and two the table does not name.
const CHANNELS: [(i64, &str, &str); 12] = [
    (2018, "airbnbOfficial", "AIRBNB"),
    (2001, "airbnb", "AIRBNB"),
    (2005, "bookingcom", "BOOKING_COM"),
    (2002, "homeaway", "VRBO"),
    (2010, "vrboical", "VRBO"),
    (2007, "expedia", "EXPEDIA"),
    (2000, "direct", "DIRECT"),
    (2013, "bookingengine", "DIRECT"),
    (2022, "google", "GOOGLE"),
    (2020, "partner", "OTHER"),
    (2009, "homeawayical", "OTHER"),
    (2019, "marriott", "OTHER"),
];

/// (Hostaway status, ours).
const STATUSES: [(&str, &str); 17] = [
    ("new", "CONFIRMED"),
    ("modified", "CONFIRMED"),
    ("pending", "PENDING"),
    ("awaitingPayment", "PENDING"),
    ("awaitingGuestVerification", "PENDING"),
    ("cancelled", "CANCELLED"),
    ("ownerStay", "OWNER_STAY"),
    ("inquiry", "INQUIRY"),
    ("inquiryPreapproved", "INQUIRY"),
    ("inquiryDenied", "INQUIRY"),
    ("inquiryTimedout", "INQUIRY"),
    ("inquiryNotPossible", "INQUIRY"),
    ("declined", "DECLINED"),
    ("expired", "EXPIRED"),
    ("unconfirmed", "UNKNOWN"),
    ("unknown", "UNKNOWN"),
    ("somethingNew", "UNKNOWN"),
];

/// Our id of the stored record with PMS id `pms_id`.
async fn our_reservation_id(pool: &PgPool, pms_id: i64) -> String {
    sqlx::query_scalar("SELECT id::text FROM pms_reservations WHERE pms_id = $1")
        .bind(pms_id)
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_field_is_mapped_as_the_issue_says(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    let (status, villa) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(
            json!({"name": "Villa Frangipani", "propertyType": "VILLA", "bedrooms": 4,
            "bathrooms": 3, "maxGuests": 8, "villaCode": "PHK-777", "status": "ACTIVE"}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{villa}");
    let villa_id = villa["id"].as_str().unwrap().to_owned();

    let listings = |frangipani: &str| {
        vec![
            // Its internal name is the villa's code in another letter case.
            listing(
                9001,
                frangipani,
                Some("phk-777"),
                (Some("Canggu"), Some("Indonesia")),
                4,
                "IDR",
                false,
            ),
            listing(
                9002,
                "Old Cottage",
                Some("OLD-1"),
                (Some("Ubud"), None),
                2,
                "USD",
                true,
            ),
            listing(
                9003,
                "Sea Loft",
                None,
                (Some("Lisbon"), Some("Portugal")),
                1,
                "EUR",
                false,
            ),
        ]
    };
    fake.control.set_listings(listings("Villa Frangipani"));
    let mut reservations = Vec::new();
    for (id, (channel_id, name, _)) in (7001_i64..).zip(&CHANNELS) {
        reservations.push(reservation(id, 9001, *channel_id, name, "new"));
    }
    for (id, (status, _)) in (7101_i64..).zip(&STATUSES) {
        reservations.push(reservation(id, 9003, 2000, "direct", status));
    }
    // Every deduction present: net = 1000.50 - 100.25 - 150.10 - 30.15 = 720.00.
    let mut paid = reservation(7201, 9001, 2005, "bookingcom", "modified");
    paid["totalPrice"] = json!(1000.5);
    paid["taxAmount"] = json!(100.25);
    paid["channelCommissionAmount"] = json!(150.1);
    paid["hostawayCommissionAmount"] = json!(30.15);
    // Commissions absent, then null: they count as 0.
    let mut absent = reservation(7202, 9003, 2000, "direct", "new");
    absent["totalPrice"] = json!(500);
    absent["taxAmount"] = json!(50);
    if let Some(fields) = absent.as_object_mut() {
        fields.remove("channelCommissionAmount");
        fields.remove("hostawayCommissionAmount");
    }
    let mut nulls = reservation(7203, 9002, 2002, "homeaway", "ownerStay");
    nulls["totalPrice"] = json!(800);
    nulls["taxAmount"] = json!(80);
    nulls["channelCommissionAmount"] = Value::Null;
    nulls["hostawayCommissionAmount"] = Value::Null;
    // Of a listing the PMS did not send (yet).
    let orphan = reservation(7204, 424_242, 2018, "airbnbOfficial", "new");
    reservations.extend([paid, absent, nulls, orphan]);
    let sent = reservations.len();
    fake.control.set_reservations(reservations);

    assert_completed(&trigger_and_wait(&app, full()).await);

    // Reservations: channel, channelName, status, pmsStatus.
    let (status, page) = get(&app, "/reporting/reservations?limit=100", "viewer").await;
    assert_eq!(status, 200, "{page}");
    let data = page["data"].as_array().unwrap();
    assert_eq!(data.len(), sent, "{page}");
    let by_pms = |pms_id: i64| {
        data.iter()
            .find(|r| r["pmsId"] == pms_id)
            .unwrap_or_else(|| panic!("reservation {pms_id} not listed"))
    };
    for (id, (_, name, channel)) in (7001_i64..).zip(&CHANNELS) {
        let r = by_pms(id);
        assert_eq!(
            (r["channel"].as_str(), r["channelName"].as_str()),
            (Some(*channel), Some(*name)),
            "{r}"
        );
        assert_eq!(r["status"], "CONFIRMED", "{r}");
    }
    for (id, (pms_status, ours)) in (7101_i64..).zip(&STATUSES) {
        let r = by_pms(id);
        assert_eq!(
            (r["status"].as_str(), r["pmsStatus"].as_str()),
            (Some(*ours), Some(*pms_status)),
            "{r}"
        );
    }

    // One reservation with every field.
    let paid_id = our_reservation_id(&pool, 7201).await;
    let (status, r) = get(
        &app,
        &format!("/reporting/reservations/{paid_id}"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["id"], paid_id.as_str());
    assert_eq!(r["pmsId"], 7201);
    assert_eq!(r["guestName"], "Guest 7201");
    assert_eq!(r["listing"]["name"], "Villa Frangipani", "{r}");
    assert_eq!(r["listingPmsId"], 9001);
    assert_eq!(
        (&r["checkIn"], &r["checkOut"], &r["nights"]),
        (&json!("2025-01-30"), &json!("2025-02-02"), &json!(3))
    );
    assert_eq!(
        (&r["channel"], &r["channelName"], &r["currency"]),
        (&json!("BOOKING_COM"), &json!("bookingcom"), &json!("EUR"))
    );
    assert_eq!(
        (&r["status"], &r["pmsStatus"]),
        (&json!("CONFIRMED"), &json!("modified"))
    );
    let figures = |r: &Value| {
        [
            "totalAmount",
            "taxAmount",
            "channelCommissionAmount",
            "hostawayCommissionAmount",
            "netAmount",
        ]
        .map(|k| money(&r[k]))
    };
    let close = |a: [f64; 5], b: [f64; 5]| a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 0.001);
    assert!(
        close(figures(&r), [1000.5, 100.25, 150.1, 30.15, 720.0]),
        "{r}"
    );
    let id = our_reservation_id(&pool, 7202).await;
    let (_, r) = get(&app, &format!("/reporting/reservations/{id}"), "viewer").await;
    assert!(close(figures(&r), [500.0, 50.0, 0.0, 0.0, 450.0]), "{r}");
    let id = our_reservation_id(&pool, 7203).await;
    let (_, r) = get(&app, &format!("/reporting/reservations/{id}"), "viewer").await;
    assert!(close(figures(&r), [800.0, 80.0, 0.0, 0.0, 720.0]), "{r}");
    assert_eq!(
        (&r["status"], &r["channel"]),
        (&json!("OWNER_STAY"), &json!("VRBO"))
    );
    let id = our_reservation_id(&pool, 7204).await;
    let (_, r) = get(&app, &format!("/reporting/reservations/{id}"), "viewer").await;
    assert!(r["listing"].is_null(), "{r}");
    assert_eq!(r["listingPmsId"], 424_242);
    // The raw record is kept, fields we do not map included.
    let raw: Option<String> = sqlx::query_scalar(
        "SELECT raw->>'confirmationCode' FROM pms_reservations WHERE pms_id = 7201",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(raw.as_deref(), Some("HM-7201"));

    // Listings, by name: status, location, bedrooms, currency, villa link.
    let (status, page) = get(&app, "/reporting/listings?limit=100", "viewer").await;
    assert_eq!(status, 200, "{page}");
    let data = page["data"].as_array().unwrap();
    let names: Vec<&str> = data.iter().filter_map(|l| l["name"].as_str()).collect();
    assert_eq!(names, ["Old Cottage", "Sea Loft", "Villa Frangipani"]);
    let shown = |l: &Value| {
        json!([
            l["pmsId"],
            l["status"],
            l["location"],
            l["bedrooms"],
            l["currency"],
            l["villaId"]
        ])
    };
    assert_eq!(
        data.iter().map(shown).collect::<Vec<_>>(),
        [
            json!([9002, "INACTIVE", "Ubud", 2, "USD", null]),
            json!([9003, "ACTIVE", "Lisbon, Portugal", 1, "EUR", null]),
            json!([9001, "ACTIVE", "Canggu, Indonesia", 4, "IDR", villa_id]),
        ]
    );
    assert!(data.iter().all(|l| l["metrics"].is_object()), "{page}");
    let listing_id = data[2]["id"].as_str().unwrap().to_owned();
    let listing_path = format!("/reporting/listings/{listing_id}");
    let (status, one) = get(&app, &listing_path, "viewer").await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(
        (&one["name"], &one["villaId"]),
        (&json!("Villa Frangipani"), &json!(villa_id))
    );

    // Unlinked by hand: a later sync that rewrites the listing leaves it unlinked.
    let res = request(&app, Method::PATCH, &listing_path, "manager")
        .json(&json!({"villaId": null}))
        .send()
        .await
        .unwrap();
    assert!(
        matches!(res.status().as_u16(), 200 | 204),
        "PATCH answered {}",
        res.status()
    );
    let (_, one) = get(&app, &listing_path, "viewer").await;
    assert!(one["villaId"].is_null(), "{one}");
    fake.control
        .set_listings(listings("Villa Frangipani Renamed"));
    let again = trigger_and_wait(&app, full()).await;
    assert_completed(&again);
    assert_eq!(
        counts(&again, "listings")[2],
        1,
        "the renamed listing was written: {again}"
    );
    let (_, one) = get(&app, &listing_path, "viewer").await;
    assert_eq!(one["name"], "Villa Frangipani Renamed", "{one}");
    assert!(
        one["villaId"].is_null(),
        "the link by hand survives a sync: {one}"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn past_runs_are_listed_newest_first_and_unknown_runs_are_404(pool: PgPool) {
    let fake = small_fake(3, 8).await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    let mut ids = Vec::new();
    for body in [
        full(),
        json!({"type": "incremental", "entities": ["reservations"]}),
        json!({"type": "full", "entities": ["listings"]}),
    ] {
        let run = trigger_and_wait(&app, body).await;
        assert_completed(&run);
        ids.push(sync_id(&run));
    }
    let listed = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .unwrap_or_else(|| panic!("no data in {page}"))
            .iter()
            .map(sync_id)
            .collect()
    };
    let (status, first) = get(&app, "/reporting/sync/runs?page=1&limit=2", "viewer").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(
        first["pagination"],
        json!({"page": 1, "limit": 2, "total": 3})
    );
    assert_eq!(listed(&first), [ids[2].clone(), ids[1].clone()]);
    assert_eq!(first["data"][0]["entities"], json!(["listings"]));
    assert_eq!(first["data"][1]["type"], "incremental");
    assert_eq!(first["data"][1]["status"], "COMPLETED");
    let (status, second) = get(&app, "/reporting/sync/runs?page=2&limit=2", "viewer").await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(listed(&second), [ids[0].clone()]);

    let (status, body) = get(&app, "/reporting/sync/runs?limit=101", "viewer").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("VALIDATION_ERROR")),
        "{body}"
    );
    let (status, body) = get(
        &app,
        &format!("/reporting/sync/status/{}", Uuid::new_v4()),
        "viewer",
    )
    .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("NOT_FOUND")),
        "{body}"
    );
    assert!(body["error"]["retryAfter"].is_null(), "{body}");
    let (status, body) = get(&app, "/reporting/sync/status/not-a-uuid", "viewer").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("VALIDATION_ERROR")),
        "{body}"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_worker_together_stays_within_the_pms_rate_limit(pool: PgPool) {
    let window = Duration::from_secs(2);
    let fake = start_fake_with(FakePmsConfig {
        listings: 10,
        reservations: 20,
        ip_limit: Some((5, window)),
        account_limit: None,
        ..FakePmsConfig::default()
    })
    .await;
    let settings = PmsSettings {
        rate_limit: 5,
        rate_window: window,
        page_size: 5,
        ..settings_for(&fake)
    };
    let app = app_with(pool.clone(), settings.clone()).await;
    let _worker = app.worker(pms_registry());
    // Another worker process's client: another connection pool and HTTP client, the same Redis
    // prefix, so the same budget and the same stored token.
    let other = jobs::pms::PmsClient::new(
        &settings,
        pool.clone(),
        app.redis(),
        &app.core.redis_prefix,
        FieldCipher::new(&app.core.data_encryption_key),
        reqwest::Client::new(),
    )
    .expect("the PMS is configured");

    let (status, started, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{started}");
    let pages = tokio::spawn(async move {
        for _ in 0..6 {
            if let Err(e) = other.reservations_page(None, 5, None).await {
                panic!("the other worker's request failed: {e}");
            }
        }
    });
    let run = wait_finished(&app, &sync_id(&started)).await;
    assert_completed(&run);
    pages.await.unwrap();
    assert_stored_once(&pool, &fake).await;

    assert_eq!(
        fake.control.rate_limited(),
        0,
        "the PMS never had to refuse a request"
    );
    assert_eq!(
        fake.control.token_requests(),
        1,
        "one token, shared by both processes"
    );
    let mut times: Vec<_> = fake.control.requests().iter().map(|r| r.at).collect();
    times.sort();
    assert!(times.len() > 10, "{} requests", times.len());
    // A little under the window, for the time a request takes from our limiter to the PMS.
    let span = window - Duration::from_millis(100);
    for (i, start) in times.iter().enumerate() {
        let within = times[i..]
            .iter()
            .take_while(|t| t.duration_since(*start) < span)
            .count();
        assert!(
            within <= 5,
            "{within} requests within {span:?} from request {i}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Records the PMS no longer has (issue 27, defect 4): retired by a completed full sync, back
// when a later sync meets them.

/// `progress.<entity>.retired` of a run.
#[track_caller]
fn retired(run: &Value, entity: &str) -> i64 {
    run["progress"][entity]["retired"]
        .as_i64()
        .unwrap_or_else(|| panic!("no progress.{entity}.retired in {run}"))
}

/// The PMS ids of the stored listings marked removed from the PMS, sorted.
async fn removed_listings(pool: &PgPool) -> Vec<i64> {
    sqlx::query_scalar("SELECT pms_id FROM pms_listings WHERE removed_from_pms ORDER BY pms_id")
        .fetch_all(pool)
        .await
        .unwrap()
}

/// The PMS ids of the stored reservations REMOVED, sorted.
async fn removed_reservations(pool: &PgPool) -> Vec<i64> {
    sqlx::query_scalar(
        "SELECT pms_id FROM pms_reservations WHERE status = 'REMOVED' ORDER BY pms_id",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// `/reporting/dashboard/metrics` with `query`.
async fn dashboard(app: &TestApp, query: &str) -> Value {
    let path = format!("/reporting/dashboard/metrics{query}");
    let (status, metrics) = get(app, &path, "viewer").await;
    assert_eq!(status, 200, "{path}: {metrics}");
    metrics
}

fn available_nights(metrics: &Value) -> i64 {
    metrics["nights"]["available"]
        .as_i64()
        .unwrap_or_else(|| panic!("no nights.available in {metrics}"))
}

/// The first ACTIVE listing stored (PMS id, our id).
async fn an_active_listing(pool: &PgPool) -> (i64, String) {
    sqlx::query_as(
        "SELECT pms_id, id::text FROM pms_listings WHERE status = 'ACTIVE' ORDER BY pms_id LIMIT 1",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_listing_deleted_in_the_pms_is_retired_by_a_full_sync_and_comes_back(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    let first = trigger_and_wait(&app, full()).await;
    assert_completed(&first);
    assert_eq!(
        (retired(&first, "listings"), retired(&first, "reservations")),
        (0, 0),
        "{first}"
    );
    let active = total(&app, "/reporting/listings?status=ACTIVE&limit=1").await;

    // A listing linked to a villa by hand, with its nights in the dashboard.
    let (pms_id, our_id) = an_active_listing(&pool).await;
    let listing_path = format!("/reporting/listings/{our_id}");
    let villa = crate::management_villas::create_villa(&app, "Villa Retired").await;
    let (status, body) = send(
        &app,
        Method::PATCH,
        &listing_path,
        "manager",
        Some(json!({"villaId": villa})),
    )
    .await;
    assert!(status == 200 || status == 204, "{status} {body}");
    let (status, before) = get(&app, &listing_path, "viewer").await;
    assert_eq!(status, 200, "{before}");
    assert_eq!(before["removedFromPms"], false, "{before}");
    let its_nights = before["metrics"]["availableNights"]
        .as_i64()
        .unwrap_or_else(|| panic!("no metrics.availableNights in {before}"));
    assert!(its_nights > 0, "{before}");
    // Read (and cached) before the sync: the answer after it must not be this one.
    let all_nights = available_nights(&dashboard(&app, "").await);

    let deleted = fake
        .control
        .delete_listing(pms_id)
        .expect("a listing of the fake");
    let run = trigger_and_wait(&app, full()).await;
    assert_completed(&run);
    assert_eq!(
        (retired(&run, "listings"), retired(&run, "reservations")),
        (1, 0),
        "{run}"
    );
    let (_, gone) = get(&app, &listing_path, "viewer").await;
    assert_eq!(
        (&gone["status"], &gone["removedFromPms"], &gone["villaId"]),
        (&json!("INACTIVE"), &json!(true), &json!(villa)),
        "retired, still linked to its villa: {gone}"
    );
    assert_eq!(removed_listings(&pool).await, [pms_id]);
    assert_eq!(
        total(&app, "/reporting/listings?status=ACTIVE&limit=1").await,
        active - 1
    );
    assert_eq!(
        available_nights(&dashboard(&app, "").await),
        all_nights - its_nights,
        "its nights left the available nights"
    );
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM pms_sync_seen")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        left, 0,
        "a finished run leaves none of its records met behind"
    );

    // The PMS has it again: the next sync brings it back, with the PMS's status.
    let mut listings = fake.control.listings();
    listings.push(deleted);
    fake.control.set_listings(listings);
    let back = trigger_and_wait(&app, full()).await;
    assert_completed(&back);
    assert_eq!(retired(&back, "listings"), 0, "{back}");
    assert_eq!(
        counts(&back, "listings")[2],
        1,
        "the listing rewritten: {back}"
    );
    let (_, again) = get(&app, &listing_path, "viewer").await;
    assert_eq!(
        (
            &again["status"],
            &again["removedFromPms"],
            &again["villaId"]
        ),
        (&json!("ACTIVE"), &json!(false), &json!(villa)),
        "{again}"
    );
    assert_eq!(available_nights(&dashboard(&app, "").await), all_nights);
    assert!(removed_listings(&pool).await.is_empty());
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_reservation_the_pms_no_longer_returns_is_removed_and_comes_back(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);

    // A counted stay: CONFIRMED, of an ACTIVE listing, priced, at least one night.
    let (pms_id, check_in, currency, share, pms_status): (i64, NaiveDate, String, f64, String) =
        sqlx::query_as(
            "SELECT r.pms_id, r.check_in, r.currency, (r.total_amount / (r.check_out - r.check_in))::float8,
                    r.pms_status
             FROM pms_reservations r JOIN pms_listings l ON l.pms_id = r.listing_pms_id
             WHERE r.status = 'CONFIRMED' AND l.status = 'ACTIVE' AND r.currency IS NOT NULL
               AND r.check_out > r.check_in AND r.total_amount > 0
             ORDER BY r.pms_id LIMIT 1",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
    let our_id = our_reservation_id(&pool, pms_id).await;
    let path = format!("/reporting/reservations/{our_id}");
    // The night it checks in, in its currency.
    let night = format!("?startDate={check_in}&endDate={check_in}&currency={currency}");
    let before = dashboard(&app, &night).await;
    let revenue = money(&before["revenue"]["total"]);
    let bookings = before["bookings"]["count"].as_i64().unwrap();
    assert!(bookings >= 1 && revenue >= share - 0.01, "{before}");

    let record = fake
        .control
        .delete_reservation(pms_id)
        .expect("a reservation of the fake");
    let run = trigger_and_wait(&app, full()).await;
    assert_completed(&run);
    assert_eq!(
        (retired(&run, "listings"), retired(&run, "reservations")),
        (0, 1),
        "{run}"
    );
    let (status, gone) = get(&app, &path, "viewer").await;
    assert_eq!(status, 200, "{gone}");
    assert_eq!(
        (&gone["status"], &gone["pmsStatus"]),
        (&json!("REMOVED"), &json!(pms_status)),
        "REMOVED, with what the PMS last said of it: {gone}"
    );
    assert_eq!(removed_reservations(&pool).await, [pms_id]);
    assert_eq!(
        total(&app, "/reporting/reservations?status=REMOVED&limit=1").await,
        1
    );
    let after = dashboard(&app, &night).await;
    assert_eq!(
        after["bookings"]["count"].as_i64(),
        Some(bookings - 1),
        "it left the bookings: {after}"
    );
    let lost = revenue - money(&after["revenue"]["total"]);
    assert!(
        (lost - share).abs() < 0.011,
        "its night's revenue ({share}) left the revenue, which lost {lost}: {after}"
    );

    // The PMS returns it again: an incremental sync meets it (its activity is new) and brings
    // it back with its status.
    assert_eq!(fake.control.add_reservation(record), Some(pms_id));
    let back = trigger_and_wait(
        &app,
        json!({"type": "incremental", "entities": ["reservations"]}),
    )
    .await;
    assert_completed(&back);
    assert_eq!(retired(&back, "reservations"), 0, "{back}");
    let (_, again) = get(&app, &path, "viewer").await;
    assert_eq!(again["status"], "CONFIRMED", "{again}");
    assert!(removed_reservations(&pool).await.is_empty());
    let restored = dashboard(&app, &night).await;
    assert_eq!(
        restored["bookings"]["count"].as_i64(),
        Some(bookings),
        "{restored}"
    );
    assert!(
        (money(&restored["revenue"]["total"]) - revenue).abs() < 0.001,
        "{restored}"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_incremental_sync_retires_nothing(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);
    let (listing, _) = an_active_listing(&pool).await;
    let reservation = ids_of(&fake.control.reservations())[10];
    fake.control.delete_listing(listing).expect("a listing");
    fake.control
        .delete_reservation(reservation)
        .expect("a reservation");

    // It reads every listing, but an incremental sync retires nothing.
    let run = trigger_and_wait(
        &app,
        json!({"type": "incremental", "entities": ["listings", "reservations"]}),
    )
    .await;
    assert_completed(&run);
    assert_eq!(
        (retired(&run, "listings"), retired(&run, "reservations")),
        (0, 0),
        "{run}"
    );
    assert!(removed_listings(&pool).await.is_empty());
    assert!(removed_reservations(&pool).await.is_empty());

    // The next full sync does.
    let full_run = trigger_and_wait(&app, full()).await;
    assert_completed(&full_run);
    assert_eq!(
        (
            retired(&full_run, "listings"),
            retired(&full_run, "reservations")
        ),
        (1, 1),
        "{full_run}"
    );
    assert_eq!(removed_listings(&pool).await, [listing]);
    assert_eq!(removed_reservations(&pool).await, [reservation]);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_full_sync_retires_only_the_entities_it_read(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(pool.clone(), settings_for(&fake)).await;
    let _worker = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);
    let (listing, _) = an_active_listing(&pool).await;
    let reservation = ids_of(&fake.control.reservations())[20];
    fake.control.delete_listing(listing).expect("a listing");
    fake.control
        .delete_reservation(reservation)
        .expect("a reservation");

    let listings_only =
        trigger_and_wait(&app, json!({"type": "full", "entities": ["listings"]})).await;
    assert_completed(&listings_only);
    assert_eq!(retired(&listings_only, "listings"), 1, "{listings_only}");
    assert!(
        listings_only["progress"].get("reservations").is_none(),
        "{listings_only}"
    );
    assert_eq!(removed_listings(&pool).await, [listing]);
    assert!(
        removed_reservations(&pool).await.is_empty(),
        "a run limited to listings retires no reservation"
    );

    let reservations_only =
        trigger_and_wait(&app, json!({"type": "full", "entities": ["reservations"]})).await;
    assert_completed(&reservations_only);
    assert_eq!(
        retired(&reservations_only, "reservations"),
        1,
        "{reservations_only}"
    );
    assert_eq!(removed_reservations(&pool).await, [reservation]);
    assert_eq!(removed_listings(&pool).await, [listing]);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_full_sync_that_fails_retires_nothing(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(
        pool.clone(),
        PmsSettings {
            max_retries: 1,
            ..settings_for(&fake)
        },
    )
    .await;
    let worker = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);
    worker.shutdown().await;
    let (listing, _) = an_active_listing(&pool).await;
    let reservation = ids_of(&fake.control.reservations())[30];
    fake.control.delete_listing(listing).expect("a listing");
    fake.control
        .delete_reservation(reservation)
        .expect("a reservation");

    // Every listing is read, then the PMS fails for good on the reservations.
    let hook: RequestHook = {
        let control = fake.control.clone();
        Arc::new(move |seen: &RequestSeen| {
            if seen.path.ends_with("/reservations") {
                control.set_failing(Some(500));
            }
        })
    };
    fake.control.on_request(Some(hook));
    let (status, started, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{started}");
    let id = sync_id(&started);
    // One attempt of the job (see a_pms_failing_for_good_fails_the_run_and_a_later_sync_completes).
    sqlx::query(
        "UPDATE jobs SET max_attempts = 1
         WHERE id = (SELECT job_id FROM pms_sync_runs WHERE id = $1::uuid)",
    )
    .bind(id.as_str())
    .execute(&pool)
    .await
    .unwrap();
    let worker = app.worker(pms_registry());
    let failed = wait_finished(&app, &id).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    assert_eq!(
        counts(&failed, "listings")[0],
        len(&fake.control.listings()),
        "every listing was read: {failed}"
    );
    assert!(removed_listings(&pool).await.is_empty());
    assert!(removed_reservations(&pool).await.is_empty());

    fake.control.on_request(None);
    fake.control.set_failing(None);
    let run = trigger_and_wait(&app, full()).await;
    assert_completed(&run);
    assert_eq!(removed_listings(&pool).await, [listing]);
    assert_eq!(removed_reservations(&pool).await, [reservation]);
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_full_sync_resumed_after_a_kill_retires_exactly_what_no_attempt_met(pool: PgPool) {
    let fake = seeded_fake().await;
    let app = app_with(
        pool.clone(),
        PmsSettings {
            page_size: 20,
            ..settings_for(&fake)
        },
    )
    .await;
    let first = app.worker(pms_registry());
    assert_completed(&trigger_and_wait(&app, full()).await);
    first.shutdown().await;

    // Gone from the PMS: a listing, and reservations the first pages would have held, the
    // middle and the end of the order the sync reads them in.
    let (listing, _) = an_active_listing(&pool).await;
    fake.control.delete_listing(listing).expect("a listing");
    let order = update_order(&fake.control.reservations());
    let mut deleted = [order[3], order[order.len() / 2], order[order.len() - 1]];
    deleted.sort_unstable();
    for id in deleted {
        fake.control.delete_reservation(id).expect("a reservation");
    }

    // Killed once it stored two pages of reservations: what it met is the run's, not its own.
    fake.control.set_delay(Duration::from_millis(200));
    let doomed = app.worker(pms_registry());
    let (status, started, _) = trigger(&app, &full()).await;
    assert_eq!(status, 202, "{started}");
    let id = sync_id(&started);
    let path = format!("/reporting/sync/status/{id}");
    let mid = eventually(Duration::from_secs(30), || async {
        let (_, run) = get(&app, &path, "viewer").await;
        (pages_done(&run, "reservations") >= 2).then_some(run)
    })
    .await
    .expect("two pages of reservations stored within 30 s");
    doomed.kill().await;
    assert_eq!(mid["status"], "RUNNING", "{mid}");
    assert!(
        removed_listings(&pool).await.is_empty() && removed_reservations(&pool).await.is_empty(),
        "nothing is retired before every page is stored"
    );

    // Another worker takes the run over once the lease (15 s in tests) lapses.
    fake.control.set_delay(Duration::ZERO);
    let rescuer = app.worker(pms_registry());
    let run = wait_finished(&app, &id).await;
    assert_completed(&run);
    let attempts: i32 = sqlx::query_scalar(
        "SELECT j.attempts FROM jobs j JOIN pms_sync_runs r ON r.job_id = j.id WHERE r.id = $1::uuid",
    )
    .bind(id.as_str())
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(attempts, 2, "the second worker finished the run");
    assert_eq!(
        (retired(&run, "listings"), retired(&run, "reservations")),
        (1, len_of(&deleted)),
        "each retired record counted once: {run}"
    );
    assert_eq!(removed_listings(&pool).await, [listing]);
    assert_eq!(
        removed_reservations(&pool).await,
        deleted,
        "exactly the reservations no attempt met, none of those the killed attempt met"
    );
    let reservations = len(&fake.control.reservations());
    assert_eq!(counts(&run, "reservations")[0], reservations, "{run}");
    rescuer.shutdown().await;
}
