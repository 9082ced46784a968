//! Stock alerts, raised and resolved by the alerts jobs (worker-alerts), handled by people; and
//! the inventory reports.

use std::{sync::Arc, time::Duration};

use chrono::{Days, NaiveDate};
use domain::{clock::BusinessZone, inventory::alerts::Evaluated};
use jobs::{Job, JobContext, JobRegistry, JobServices, alerts::EvaluateStockAlerts};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::{PgPool, postgres::PgPoolOptions};
use tests::{TestApp, TestAppOptions, TestWorker, eventually};
use tokio::sync::Barrier;
use uuid::Uuid;

use crate::inventory::{assert_inventory_error, bad_fields, get, item, location, movement, post};
use crate::management_villas::{create_villa, send};

fn registry() -> JobRegistry {
    JobRegistry::new().register::<EvaluateStockAlerts>()
}

/// The alerts of `item` with `status` (any status when None), waiting up to 10 s for `count`.
async fn alerts_of(app: &TestApp, item: &str, status: Option<&str>, count: usize) -> Vec<Value> {
    let query = match status {
        Some(s) => format!("/inventory/alerts?itemId={item}&status={s}"),
        None => format!("/inventory/alerts?itemId={item}"),
    };
    let found = eventually(Duration::from_secs(10), || async {
        let (status, page) = get(app, &query, "viewer").await;
        assert_eq!(status, 200, "{page}");
        let data = page["data"].as_array().unwrap().clone();
        (data.len() == count).then_some(data)
    })
    .await;
    found.unwrap_or_else(|| panic!("{query}: not {count} alerts within 10 s"))
}

async fn open_alerts(pool: &PgPool, item: &str) -> Vec<(String, String)> {
    sqlx::query_as(
        "SELECT type, status FROM inventory_alerts WHERE item_id = $1::uuid AND status <> 'RESOLVED' ORDER BY type",
    )
    .bind(item)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Waits until every job has run (the evaluations the changes enqueued).
async fn settled(pool: &PgPool) {
    eventually(Duration::from_secs(10), || async {
        let waiting: i64 =
            sqlx::query_scalar("SELECT count(*) FROM jobs WHERE status <> 'SUCCEEDED'")
                .fetch_one(pool)
                .await
                .unwrap();
        (waiting == 0).then_some(())
    })
    .await
    .expect("every enqueued evaluation ran within 10 s");
}

/// (type, status, severity, resolutionAction) of an alert.
type AlertRow = (String, String, String, Option<String>);

/// Every alert of `item`, oldest first.
async fn alert_rows(pool: &PgPool, item: &str) -> Vec<AlertRow> {
    sqlx::query_as(
        "SELECT type, status, severity, resolution_action FROM inventory_alerts
         WHERE item_id = $1::uuid ORDER BY created_at, id",
    )
    .bind(item)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// One direct evaluation of `item` on `today`, on a connection of its own.
async fn evaluate_now(pool: &PgPool, item: &str, today: NaiveDate) -> Evaluated {
    let mut conn = pool.acquire().await.unwrap();
    domain::inventory::alerts::evaluate(
        &mut conn,
        Some(item.parse().unwrap()),
        30,
        Default::default(),
        today,
    )
    .await
    .unwrap()
}

async fn resolve(app: &TestApp, alert: &Value, action: &str) {
    let (status, done) = post(
        app,
        &format!(
            "/inventory/alerts/{}/resolve",
            alert["id"].as_str().unwrap()
        ),
        "staff",
        json!({"action": action}),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "RESOLVED");
}

fn row(kind: &str, status: &str, severity: &str, action: Option<&str>) -> AlertRow {
    (
        kind.to_owned(),
        status.to_owned(),
        severity.to_owned(),
        action.map(str::to_owned),
    )
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn alerts_are_raised_by_jobs_once_and_resolved_when_their_cause_goes(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker = app.worker(registry());
    let villa = create_villa(&app, "Villa Alert").await;
    let store = location(&app, villa, "Store", None).await;
    let soap = item(
        &app,
        villa,
        &store,
        "SOAP",
        json!({"name": "Hand soap", "quantity": 6, "minStock": 5, "category": "TOILETRIES"}),
    )
    .await;
    let id = soap["id"].as_str().unwrap().to_owned();

    // Above the minimum: nothing. Down to it: LOW_STOCK, a WARNING; to 0: CRITICAL.
    let (status, _) = movement(&app, &id, "USE", json!(1)).await;
    assert_eq!(status, 201);
    let alert = alerts_of(&app, &id, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(alert["type"], "LOW_STOCK");
    assert_eq!(alert["severity"], "WARNING");
    // The ids the list filters by, under the same names, beside the records they name.
    assert_eq!(alert["itemId"], id);
    assert_eq!(alert["propertyId"], villa.to_string());
    assert_eq!(alert["locationId"], store);
    assert_eq!(alert["item"]["id"], id);
    assert_eq!(alert["item"]["sku"], "SOAP");
    assert_eq!(alert["property"]["name"], "Villa Alert");
    assert_eq!(alert["location"]["name"], "Store");
    assert_eq!(alert["threshold"].as_f64(), Some(5.0));
    assert_eq!(alert["currentQuantity"].as_f64(), Some(5.0));
    let (status, _) = movement(&app, &id, "USE", json!(5)).await;
    assert_eq!(status, 201);
    let critical = eventually(Duration::from_secs(10), || async {
        let (_, a) = get(
            &app,
            &format!("/inventory/alerts/{}", alert["id"].as_str().unwrap()),
            "viewer",
        )
        .await;
        (a["severity"] == "CRITICAL").then_some(a)
    })
    .await
    .expect("the alert turns CRITICAL at 0");
    assert!(
        critical["message"]
            .as_str()
            .unwrap()
            .contains("out of stock"),
        "{critical}"
    );

    let damaged = item(
        &app,
        villa,
        &store,
        "FAN",
        json!({"name": "Ceiling fan", "condition": "DAMAGED", "category": "ELECTRONICS"}),
    )
    .await;
    let fan = damaged["id"].as_str().unwrap().to_owned();
    let (status, _) = send(
        &app,
        Method::PATCH,
        &format!("/inventory/items/{fan}"),
        "manager",
        Some(json!({"condition": "POOR"})),
    )
    .await;
    assert_eq!(status, 200);
    let fan_alert = alerts_of(&app, &fan, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(fan_alert["type"], "CONDITION");
    assert_eq!(fan_alert["severity"], "WARNING");
    settled(&pool).await;
    assert_eq!(
        open_alerts(&pool, &id).await,
        [("LOW_STOCK".to_owned(), "ACTIVE".to_owned())]
    );
    let counts: Vec<(String, i64)> =
        sqlx::query_as("SELECT type, count(*) FROM inventory_alerts GROUP BY type ORDER BY type")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        counts,
        [("CONDITION".to_owned(), 1), ("LOW_STOCK".to_owned(), 1)]
    );

    // Restocked above the minimum: resolved by the platform.
    let (status, _) = movement(&app, &id, "PURCHASE", json!(24)).await;
    assert_eq!(status, 201);
    let resolved = alerts_of(&app, &id, Some("RESOLVED"), 1).await.remove(0);
    assert_eq!(resolved["resolutionAction"], "AUTO_RESOLVED");
    assert!(resolved["resolvedAt"].is_string());
    // Repaired: resolved too; archived: resolved too.
    let (status, _) = send(
        &app,
        Method::PATCH,
        &format!("/inventory/items/{fan}"),
        "manager",
        Some(json!({"condition": "GOOD"})),
    )
    .await;
    assert_eq!(status, 200);
    alerts_of(&app, &fan, Some("RESOLVED"), 1).await;
    let (status, _) = movement(&app, &id, "USE", json!(20)).await;
    assert_eq!(status, 201);
    alerts_of(&app, &id, Some("ACTIVE"), 1).await;
    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("/inventory/items/{id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 204);
    alerts_of(&app, &id, Some("RESOLVED"), 2).await;
    assert!(open_alerts(&pool, &id).await.is_empty());
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn people_acknowledge_and_resolve_alerts_and_the_refused_moves_are_409(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker = app.worker(registry());
    let villa = create_villa(&app, "Villa Ack").await;
    let store = location(&app, villa, "Store", None).await;
    let cups = item(
        &app,
        villa,
        &store,
        "CUP",
        json!({"quantity": 1, "minStock": 4, "category": "TABLEWARE"}),
    )
    .await;
    let cups_id = cups["id"].as_str().unwrap().to_owned();
    let alert = alerts_of(&app, &cups_id, Some("ACTIVE"), 1).await.remove(0);
    let alert_id = alert["id"].as_str().unwrap().to_owned();

    let (status, _) = post(
        &app,
        &format!("/inventory/alerts/{alert_id}/acknowledge"),
        "viewer",
        json!({}),
    )
    .await;
    assert_eq!(status, 403);
    let (status, acked) = post(
        &app,
        &format!("/inventory/alerts/{alert_id}/acknowledge"),
        "staff",
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{acked}");
    assert_eq!(acked["status"], "ACKNOWLEDGED");
    assert_eq!(acked["acknowledgedBy"], "user-1");
    let (status, again) = post(
        &app,
        &format!("/inventory/alerts/{alert_id}/acknowledge"),
        "staff",
        json!({}),
    )
    .await;
    assert_eq!(status, 409, "{again}");
    assert_inventory_error(&again, "INVALID_ALERT_STATE");
    for (body, field) in [
        (json!({}), "action"),
        (json!({"action": "IGNORED"}), "action"),
        (json!({"action": "REORDERED", "notes": 7}), "notes"),
    ] {
        let (status, answer) = post(
            &app,
            &format!("/inventory/alerts/{alert_id}/resolve"),
            "staff",
            body.clone(),
        )
        .await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(bad_fields(&answer), [field]);
    }
    let (status, done) = post(
        &app,
        &format!("/inventory/alerts/{alert_id}/resolve"),
        "staff",
        json!({"action": "reordered", "notes": "two boxes ordered"}),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "RESOLVED");
    assert_eq!(done["resolutionAction"], "REORDERED");
    assert_eq!(done["resolutionNotes"], "two boxes ordered");
    for action in ["resolve", "acknowledge"] {
        let (status, body) = post(
            &app,
            &format!("/inventory/alerts/{alert_id}/{action}"),
            "staff",
            json!({"action": "OTHER"}),
        )
        .await;
        assert_eq!(status, 409, "{action}: {body}");
        assert_inventory_error(&body, "INVALID_ALERT_STATE");
    }
    let (status, _) = post(
        &app,
        &format!("/inventory/alerts/{}/acknowledge", Uuid::now_v7()),
        "staff",
        json!({}),
    )
    .await;
    assert_eq!(status, 404);

    // An ACTIVE alert can be resolved without acknowledging it first.
    let plates = item(
        &app,
        villa,
        &store,
        "PLATE",
        json!({"quantity": 0, "minStock": 2, "category": "TABLEWARE"}),
    )
    .await;
    let plates_id = plates["id"].as_str().unwrap().to_owned();
    let plate_alert = alerts_of(&app, &plates_id, Some("ACTIVE"), 1)
        .await
        .remove(0);
    assert_eq!(plate_alert["severity"], "CRITICAL");
    let (status, done) = post(
        &app,
        &format!(
            "/inventory/alerts/{}/resolve",
            plate_alert["id"].as_str().unwrap()
        ),
        "manager",
        json!({"action": "DISMISSED"}),
    )
    .await;
    assert_eq!(status, 200, "{done}");

    // The list: newest first, filters, paging.
    for (query, total) in [
        (String::new(), 2),
        ("status=RESOLVED".to_owned(), 2),
        ("type=LOW_STOCK".to_owned(), 2),
        (format!("propertyId={villa}"), 2),
        ("type=EXPIRY".to_owned(), 0),
        ("limit=1&page=2".to_owned(), 2),
    ] {
        let (status, page) = get(&app, &format!("/inventory/alerts?{query}"), "viewer").await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["pagination"]["total"], total, "{query}: {page}");
    }
    let (_, page) = get(&app, "/inventory/alerts", "viewer").await;
    assert_eq!(page["data"][0]["item"]["sku"], "PLATE");
    for (query, field) in [
        ("status=CLOSED", "status"),
        ("type=RUST", "type"),
        ("propertyId=1", "propertyId"),
        ("limit=500", "limit"),
    ] {
        let (status, body) = get(&app, &format!("/inventory/alerts?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}");
        assert_eq!(bad_fields(&body), [field]);
    }
}

/// A fresh cause (four items just below their minimum, one of them just damaged, no alert yet)
/// evaluated by 24 callers released together at a barrier: 16 direct evaluations, each on a
/// connection of its own opened beforehand, and 8 runs of the alerts job, half of each for the one
/// item, half for every item. Exactly one alert per item and type comes out, and the callers
/// together report exactly those as opened. An evaluation that checks for an open alert and then
/// inserts one fails this: the callers' checks all run before any insert commits, so each finds
/// none and inserts its own (or, with the unique index, all but one fail on it). The upsert lets
/// the unique index decide: one caller inserts, the others wait for its commit and update.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_fresh_cause_evaluated_by_many_callers_at_once_opens_one_alert(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Race").await;
    let store = location(&app, villa, "Store", None).await;
    let mut fresh = Vec::new();
    for n in 0..4 {
        let created = item(
            &app,
            villa,
            &store,
            &format!("RACE-{n}"),
            json!({"quantity": 10, "minStock": 5, "category": "TOILETRIES"}),
        )
        .await;
        fresh.push(created["id"].as_str().unwrap().to_owned());
    }
    // No worker runs yet: the evaluations these changes enqueue wait in the queue.
    for id in &fresh {
        let (status, body) = movement(&app, id, "USE", json!(6)).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/inventory/items/{}", fresh[0]),
        "manager",
        Some(json!({"condition": "DAMAGED"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let before: i64 = sqlx::query_scalar("SELECT count(*) FROM inventory_alerts")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(before, 0, "no alert before the race");

    let callers = 24;
    let racers = PgPoolOptions::new()
        .max_connections(callers)
        .connect_with(pool.connect_options().as_ref().clone())
        .await
        .unwrap();
    // Every connection opened before the race, so that none of the callers starts late.
    let mut warm = Vec::new();
    for _ in 0..callers {
        warm.push(racers.acquire().await.unwrap());
    }
    drop(warm);
    let services = Arc::new(JobServices::from_settings(&app.core));
    let today = services.business_time_zone.today();
    let one: Uuid = fresh[0].parse().unwrap();
    let barrier = Arc::new(Barrier::new(usize::try_from(callers).unwrap()));
    let mut racing = Vec::new();
    for n in 0..16 {
        let mut conn = racers.acquire().await.unwrap();
        let barrier = barrier.clone();
        let only = (n % 2 == 0).then_some(one);
        racing.push(tokio::spawn(async move {
            barrier.wait().await;
            domain::inventory::alerts::evaluate(&mut conn, only, 30, Default::default(), today)
                .await
                .unwrap()
                .opened
        }));
    }
    for n in 0..8 {
        let ctx = JobContext {
            pool: racers.clone(),
            services: services.clone(),
            job_id: Uuid::now_v7(),
            attempt: 1,
            max_attempts: 1,
            worker: format!("racer-{n}").into(),
        };
        let job = if n % 2 == 0 {
            EvaluateStockAlerts::item(one)
        } else {
            EvaluateStockAlerts::default()
        };
        let barrier = barrier.clone();
        racing.push(tokio::spawn(async move {
            barrier.wait().await;
            let result = job.run(ctx).await.unwrap();
            result["opened"].as_i64().unwrap()
        }));
    }
    let mut opened = 0;
    for caller in racing {
        opened += caller.await.unwrap();
    }

    let mut expected: Vec<(String, String, i64)> = fresh
        .iter()
        .map(|id| (id.clone(), "LOW_STOCK".to_owned(), 1))
        .collect();
    expected.push((fresh[0].clone(), "CONDITION".to_owned(), 1));
    expected.sort();
    let per_cause = || async {
        let mut found: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT item_id::text, type, count(*) FROM inventory_alerts WHERE status = 'ACTIVE' GROUP BY 1, 2",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        found.sort();
        found
    };
    assert_eq!(per_cause().await, expected, "one alert per item and type");
    assert_eq!(opened, 5, "the five alerts reported opened once each");
    let all: i64 = sqlx::query_scalar("SELECT count(*) FROM inventory_alerts")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(all, 5);
    // The evaluations the changes enqueued, run now, change nothing.
    let _worker = app.worker(registry());
    settled(&pool).await;
    assert_eq!(per_cause().await, expected);
}

/// Enqueues and pushes a full evaluation, as the scheduler's tick does.
async fn full_evaluation(app: &TestApp, tick: &str) {
    let mut tx = app.pool.begin().await.unwrap();
    let job = EvaluateStockAlerts {
        tick: Some(tick.to_owned()),
        ..Default::default()
    }
    .enqueue(&mut tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    app.queues.push(&[job]).await;
}

/// A person's resolution holds while the cause lasts: evaluated again (directly, by the item's
/// job, by a full evaluation) with the stock still low, the alert stays resolved; reaching 0 (a
/// worse cause) raises a new CRITICAL alert; resolved at CRITICAL, it holds until a restock
/// above the minimum clears the cause, and the next drop raises a new alert.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_resolution_holds_until_the_cause_clears_or_gets_worse(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker = app.worker(registry());
    let villa = create_villa(&app, "Villa Resolve").await;
    let store = location(&app, villa, "Store", None).await;
    let soap = item(
        &app,
        villa,
        &store,
        "SOAP",
        json!({"quantity": 8, "minStock": 5, "category": "TOILETRIES"}),
    )
    .await;
    let id = soap["id"].as_str().unwrap().to_owned();
    let today = chrono::Utc::now().date_naive();
    let reordered = row("LOW_STOCK", "RESOLVED", "WARNING", Some("REORDERED"));

    // Down to 4: a WARNING, which a storekeeper resolves (two boxes are on their way).
    let (status, _) = movement(&app, &id, "USE", json!(4)).await;
    assert_eq!(status, 201);
    let warning = alerts_of(&app, &id, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(warning["severity"], "WARNING");
    resolve(&app, &warning, "REORDERED").await;

    // The cause unchanged: evaluated directly, by the item's job after a withdrawal that keeps it
    // a WARNING, and by a full evaluation, it stays resolved and nothing new is raised.
    assert_eq!(evaluate_now(&pool, &id, today).await, Evaluated::default());
    let (status, _) = movement(&app, &id, "USE", json!(1)).await;
    assert_eq!(status, 201);
    full_evaluation(&app, "resolve-1").await;
    settled(&pool).await;
    assert_eq!(evaluate_now(&pool, &id, today).await, Evaluated::default());
    assert_eq!(
        alert_rows(&pool, &id).await,
        std::slice::from_ref(&reordered)
    );

    // Worse: out of stock. A new alert, CRITICAL; the person's resolution stays as it was.
    let (status, _) = movement(&app, &id, "USE", json!(3)).await;
    assert_eq!(status, 201);
    let critical = alerts_of(&app, &id, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(critical["severity"], "CRITICAL");
    assert_ne!(critical["id"], warning["id"]);
    settled(&pool).await;
    assert_eq!(
        alert_rows(&pool, &id).await,
        [
            reordered.clone(),
            row("LOW_STOCK", "ACTIVE", "CRITICAL", None)
        ]
    );

    // Resolved at CRITICAL: nothing is worse, so nothing new while the shelf is empty or
    // half-filled below the minimum.
    resolve(&app, &critical, "DISMISSED").await;
    let dismissed = row("LOW_STOCK", "RESOLVED", "CRITICAL", Some("DISMISSED"));
    assert_eq!(evaluate_now(&pool, &id, today).await, Evaluated::default());
    let (status, _) = movement(&app, &id, "PURCHASE", json!(2)).await;
    assert_eq!(status, 201);
    full_evaluation(&app, "resolve-2").await;
    settled(&pool).await;
    assert_eq!(
        alert_rows(&pool, &id).await,
        [reordered.clone(), dismissed.clone()]
    );

    // The cause clears (restocked above the minimum), then comes back: a new alert.
    let (status, _) = movement(&app, &id, "PURCHASE", json!(10)).await;
    assert_eq!(status, 201);
    settled(&pool).await;
    assert!(open_alerts(&pool, &id).await.is_empty());
    let (status, _) = movement(&app, &id, "USE", json!(8)).await;
    assert_eq!(status, 201);
    let again = alerts_of(&app, &id, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(again["severity"], "WARNING");
    settled(&pool).await;
    assert_eq!(
        alert_rows(&pool, &id).await,
        [
            reordered,
            dismissed,
            row("LOW_STOCK", "ACTIVE", "WARNING", None)
        ]
    );
}

/// A resolved EXPIRY WARNING ("expires on ...") stays resolved until the date passes; then the
/// item has expired, which is worse: a new CRITICAL alert ("expired on ..."), whether the
/// evaluation runs on a later day (direct, with that day) or the date is behind (the job).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_resolved_expiry_warning_stays_resolved_until_the_date_passes(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker = app.worker(registry());
    let villa = create_villa(&app, "Villa Dairy").await;
    let store = location(&app, villa, "Fridge", None).await;
    // The test app's company day is UTC's.
    let today = chrono::Utc::now().date_naive();
    let soon = today + Days::new(10);
    let mut ids = Vec::new();
    for sku in ["MILK", "JUICE"] {
        let created = item(
            &app,
            villa,
            &store,
            sku,
            json!({"quantity": 4, "unit": "LITER", "expiryDate": soon.to_string(), "category": "GUEST_AMENITIES"}),
        )
        .await;
        let id = created["id"].as_str().unwrap().to_owned();
        let warning = alerts_of(&app, &id, Some("ACTIVE"), 1).await.remove(0);
        assert_eq!(warning["type"], "EXPIRY");
        assert_eq!(warning["severity"], "WARNING");
        assert!(
            warning["message"].as_str().unwrap().contains("expires on"),
            "{warning}"
        );
        resolve(&app, &warning, "OTHER").await;
        ids.push(id);
    }
    let (milk, juice) = (&ids[0], &ids[1]);
    let resolved = row("EXPIRY", "RESOLVED", "WARNING", Some("OTHER"));

    // Today, and on the expiry date itself: still resolved.
    full_evaluation(&app, "expiry-1").await;
    settled(&pool).await;
    for day in [today, soon] {
        assert_eq!(evaluate_now(&pool, milk, day).await, Evaluated::default());
    }
    assert_eq!(
        alert_rows(&pool, milk).await,
        std::slice::from_ref(&resolved)
    );
    assert_eq!(
        alert_rows(&pool, juice).await,
        std::slice::from_ref(&resolved)
    );

    // The day after: expired, worse than when it was resolved.
    let done = evaluate_now(&pool, milk, soon + Days::new(1)).await;
    assert_eq!(
        done,
        Evaluated {
            opened: 1,
            resolved: 0,
            released: 1
        }
    );
    let expired = alerts_of(&app, milk, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(expired["severity"], "CRITICAL");
    assert!(
        expired["message"].as_str().unwrap().contains("expired on"),
        "{expired}"
    );
    assert_eq!(
        alert_rows(&pool, milk).await,
        [resolved.clone(), row("EXPIRY", "ACTIVE", "CRITICAL", None)]
    );

    // The juice's date goes by (time passing, no change of its own), and the scheduler's tick
    // evaluates every item.
    sqlx::query("UPDATE inventory_items SET expiry_date = $2 WHERE id = $1::uuid")
        .bind(juice)
        .bind(today - Days::new(1))
        .execute(&pool)
        .await
        .unwrap();
    full_evaluation(&app, "expiry-2").await;
    settled(&pool).await;
    assert_eq!(
        alert_rows(&pool, juice).await,
        [resolved, row("EXPIRY", "ACTIVE", "CRITICAL", None)]
    );
}

/// Expiry is measured against the company's day (`BUSINESS_TIME_ZONE`), not UTC's nor the
/// database session's: an item expiring today on Baker Island (UTC−12) is expiring for a company
/// there and already expired for one on Kiritimati (UTC+14), whose day is always at least one
/// ahead of it.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn expiry_alerts_measure_the_company_s_day(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Zones").await;
    let store = location(&app, villa, "Store", None).await;
    let west: BusinessZone = "Etc/GMT+12".parse().unwrap();
    let east: BusinessZone = "Pacific/Kiritimati".parse().unwrap();
    let expiry = west.today();
    assert!(east.today() > expiry);
    let milk = item(
        &app,
        villa,
        &store,
        "MILK",
        json!({"quantity": 4, "unit": "LITER", "expiryDate": expiry.to_string(), "category": "GUEST_AMENITIES"}),
    )
    .await;
    let id = milk["id"].as_str().unwrap().to_owned();

    // A worker of the company in the west evaluates the new item: it expires today.
    let mut core = app.core.clone();
    core.business_time_zone = west;
    let worker = TestWorker::start(pool.clone(), &core, registry());
    let alert = alerts_of(&app, &id, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(alert["severity"], "WARNING");
    assert!(
        alert["message"].as_str().unwrap().contains("expires on"),
        "{alert}"
    );
    worker.shutdown().await;

    // The same data on Kiritimati's day: expired.
    core.business_time_zone = east;
    let worker = TestWorker::start(pool.clone(), &core, registry());
    full_evaluation(&app, "east-1").await;
    let path = format!("/inventory/alerts/{}", alert["id"].as_str().unwrap());
    let expired = eventually(Duration::from_secs(10), || async {
        let (_, a) = get(&app, &path, "viewer").await;
        (a["severity"] == "CRITICAL").then_some(a)
    })
    .await
    .expect("CRITICAL on Kiritimati's day");
    assert!(
        expired["message"].as_str().unwrap().contains("expired on"),
        "{expired}"
    );
    drop(worker);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_periodic_evaluation_raises_expiry_alerts_as_dates_come_near(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Expiry").await;
    let store = location(&app, villa, "Store", None).await;
    let far = (chrono::Utc::now().date_naive() + chrono::Days::new(90)).to_string();
    let milk = item(
        &app,
        villa,
        &store,
        "MILK",
        json!({"quantity": 4, "unit": "LITER", "expiryDate": far, "category": "GUEST_AMENITIES"}),
    )
    .await;
    let water = item(
        &app,
        villa,
        &store,
        "WATER",
        json!({"quantity": 24, "unit": "BOTTLE", "expiryDate": far, "category": "GUEST_AMENITIES"}),
    )
    .await;
    let worker = app.worker(registry());
    let (milk_id, water_id) = (milk["id"].as_str().unwrap(), water["id"].as_str().unwrap());
    eventually(Duration::from_secs(10), || async {
        let waiting: i64 =
            sqlx::query_scalar("SELECT count(*) FROM jobs WHERE status <> 'SUCCEEDED'")
                .fetch_one(&pool)
                .await
                .unwrap();
        (waiting == 0).then_some(())
    })
    .await
    .expect("the creations' evaluations ran");
    assert!(open_alerts(&pool, milk_id).await.is_empty());

    // Time passes (no change to the items, so no evaluation of its own): one date comes within
    // EXPIRY_ALERT_DAYS (30), the other goes by.
    sqlx::query("UPDATE inventory_items SET expiry_date = current_date + 10 WHERE id = $1::uuid")
        .bind(milk_id)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE inventory_items SET expiry_date = current_date - 1 WHERE id = $1::uuid")
        .bind(water_id)
        .execute(&pool)
        .await
        .unwrap();
    // The scheduler's tick: a full evaluation.
    let mut tx = pool.begin().await.unwrap();
    let tick = EvaluateStockAlerts {
        tick: Some("900s-1".into()),
        ..Default::default()
    }
    .enqueue(&mut tx)
    .await
    .unwrap();
    let same_tick = EvaluateStockAlerts {
        tick: Some("900s-1".into()),
        ..Default::default()
    }
    .enqueue(&mut tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert!(tick.inserted && !same_tick.inserted, "one job per tick");
    app.queues.push(&[tick]).await;
    let milk_alert = alerts_of(&app, milk_id, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(milk_alert["type"], "EXPIRY");
    assert_eq!(milk_alert["severity"], "WARNING");
    let water_alert = alerts_of(&app, water_id, Some("ACTIVE"), 1).await.remove(0);
    assert_eq!(water_alert["severity"], "CRITICAL");
    assert!(
        water_alert["message"].as_str().unwrap().contains("expired"),
        "{water_alert}"
    );
    drop(worker);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn reports_sum_per_unit_and_currency_and_say_when(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let sunset = create_villa(&app, "Villa Sunset").await;
    let moon = create_villa(&app, "Villa Moon").await;
    let store = location(&app, sunset, "Store", None).await;
    let shed = location(&app, moon, "Shed", None).await;
    let sheets = item(
        &app,
        sunset,
        &store,
        "SHEET",
        json!({"quantity": 10, "unitCost": 200, "minStock": 12, "category": "LINENS"}),
    )
    .await;
    item(
        &app,
        sunset,
        &store,
        "CHLORINE",
        json!({"quantity": 2.5, "unit": "KG", "unitCost": 90, "category": "POOL_SUPPLIES"}),
    )
    .await;
    item(&app, sunset, &store, "WINE", json!({"quantity": 3, "unit": "BOTTLE", "unitCost": 20, "currency": "EUR", "category": "GUEST_AMENITIES"})).await;
    item(
        &app,
        moon,
        &shed,
        "HOSE",
        json!({"quantity": 0, "minStock": 1, "category": "GARDEN_SUPPLIES"}),
    )
    .await;
    let (status, _) = movement(&app, sheets["id"].as_str().unwrap(), "USE", json!(4)).await;
    assert_eq!(status, 201);

    let (status, stock) = get(&app, "/inventory/reports/stock", "viewer").await;
    assert_eq!(status, 200, "{stock}");
    assert!(stock["asOf"].is_string());
    assert_eq!(
        stock["totals"],
        json!({"itemCount": 4, "atOrBelowMinimum": 2, "outOfStock": 1})
    );
    let linens = stock["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["category"] == "LINENS")
        .unwrap();
    assert_eq!(linens["property"]["name"], "Villa Sunset");
    assert_eq!(linens["quantityByUnit"]["EACH"].as_f64(), Some(6.0));
    let (_, only_moon) = get(
        &app,
        &format!("/inventory/reports/stock?propertyId={moon}"),
        "viewer",
    )
    .await;
    assert_eq!(only_moon["rows"].as_array().unwrap().len(), 1);
    let (_, pool_only) = get(
        &app,
        "/inventory/reports/stock?category=pool_supplies",
        "viewer",
    )
    .await;
    assert_eq!(
        pool_only["rows"][0]["quantityByUnit"]["KG"].as_f64(),
        Some(2.5)
    );

    let (status, value) = get(&app, "/inventory/reports/valuation", "viewer").await;
    assert_eq!(status, 200, "{value}");
    assert!(value["asOf"].is_string());
    // Never summed across currencies: 6 × 200 + 2.5 × 90 THB, 3 × 20 EUR.
    assert_eq!(
        value["totals"],
        json!([{"currency": "EUR", "value": 60.0}, {"currency": "THB", "value": 1425.0}])
    );
    assert_eq!(value["topItems"][0]["sku"], "SHEET");
    assert_eq!(value["topItems"].as_array().unwrap().len(), 3);
    let (_, at_store) = get(
        &app,
        &format!("/inventory/reports/valuation?locationId={store}&category=LINENS"),
        "viewer",
    )
    .await;
    assert_eq!(
        at_store["totals"],
        json!([{"currency": "THB", "value": 1200.0}])
    );

    let today = chrono::Utc::now().date_naive();
    let (status, moves) = get(
        &app,
        &format!("/inventory/reports/movements?startDate={today}&endDate={today}"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{moves}");
    assert_eq!(moves["startDate"], today.to_string());
    let use_row = moves["byType"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == "USE")
        .unwrap();
    assert_eq!(use_row["count"], 1);
    assert_eq!(use_row["quantityByUnit"]["EACH"].as_f64(), Some(4.0));
    assert_eq!(use_row["valueByCurrency"]["THB"].as_f64(), Some(800.0));
    let initial = moves["byType"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == "INITIAL")
        .unwrap();
    assert_eq!(initial["count"], 3);
    let sunset_flow = moves["byProperty"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["property"]["name"] == "Villa Sunset")
        .unwrap();
    assert_eq!(
        sunset_flow["in"]["valueByCurrency"]["EUR"].as_f64(),
        Some(60.0)
    );
    assert_eq!(
        sunset_flow["out"]["quantityByUnit"]["EACH"].as_f64(),
        Some(4.0)
    );
    let (_, default_period) = get(&app, "/inventory/reports/movements", "viewer").await;
    assert_eq!(default_period["endDate"], today.to_string());
    let (_, empty) = get(
        &app,
        "/inventory/reports/movements?startDate=2020-01-01&endDate=2020-01-31",
        "viewer",
    )
    .await;
    assert_eq!(empty["byType"], json!([]));
    for (query, field) in [
        (
            "movements?startDate=2026-05-02&endDate=2026-05-01",
            "endDate",
        ),
        ("movements?startDate=01/05/2026", "startDate"),
        (
            "movements?startDate=2000-01-01&endDate=2026-01-01",
            "startDate",
        ),
        ("stock?propertyId=nope", "propertyId"),
        ("valuation?category=NOPE", "category"),
    ] {
        let (status, body) = get(&app, &format!("/inventory/reports/{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(bad_fields(&body), [field], "{query}");
    }
    let res = app
        .request(Method::GET, "/inventory/reports/stock", None)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}

/// A report's default period ends on the company's today (`BUSINESS_TIME_ZONE`), and the days of
/// a period (the report's, the movement list's date filters) are the company's: the zone is
/// picked so that its date differs from UTC's when the test runs (UTC+14 late in the UTC day,
/// UTC-11 early in it).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn report_periods_and_date_filters_are_the_company_s_days(pool: PgPool) {
    use chrono::Timelike as _;
    let zone: BusinessZone = if chrono::Utc::now().hour() >= 10 {
        "Pacific/Kiritimati"
    } else {
        "Pacific/Pago_Pago"
    }
    .parse()
    .unwrap();
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            business_time_zone: zone,
            ..Default::default()
        },
    )
    .await;
    let (local_today, utc_today) = (zone.today(), chrono::Utc::now().date_naive());
    assert_ne!(local_today, utc_today);
    let villa = create_villa(&app, "Villa Day").await;
    let store = location(&app, villa, "Store", None).await;
    let towels = item(&app, villa, &store, "TWL", json!({"quantity": 5})).await;
    let (status, body) = movement(&app, towels["id"].as_str().unwrap(), "USE", json!(1)).await;
    assert_eq!(status, 201, "{body}");

    let (status, default_period) = get(&app, "/inventory/reports/movements", "viewer").await;
    assert_eq!(status, 200, "{default_period}");
    assert_eq!(default_period["endDate"], local_today.to_string());
    assert_eq!(
        default_period["startDate"],
        (local_today - Days::new(30)).to_string()
    );
    // What happened just now happened on the company's today, not on the other date.
    for (day, uses, listed) in [(local_today, 1, 2), (utc_today, 0, 0)] {
        let (_, report) = get(
            &app,
            &format!("/inventory/reports/movements?startDate={day}&endDate={day}"),
            "viewer",
        )
        .await;
        let counted = report["byType"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["type"] == "USE")
            .map_or(0, |r| r["count"].as_i64().unwrap());
        assert_eq!(counted, uses, "{day}: {report}");
        let (_, page) = get(
            &app,
            &format!("/inventory/movements?startDate={day}&endDate={day}"),
            "viewer",
        )
        .await;
        assert_eq!(page["pagination"]["total"], listed, "{day}: {page}");
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_open_alerts_list_by_severity_in_one_request(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker = app.worker(registry());
    let villa = create_villa(&app, "Villa Severity").await;
    let store = location(&app, villa, "Store", None).await;
    // Raised in this order: a WARNING, a CRITICAL (nothing left), another WARNING.
    let mut ids = Vec::new();
    for (sku, quantity) in [("TOWEL", 2), ("SOAP", 0), ("CUP", 1)] {
        let made = item(
            &app,
            villa,
            &store,
            sku,
            json!({"quantity": quantity, "minStock": 5, "category": "TABLEWARE"}),
        )
        .await;
        let id = made["id"].as_str().unwrap().to_owned();
        alerts_of(&app, &id, Some("ACTIVE"), 1).await;
        ids.push(id);
    }
    // One acknowledged and one resolved: OPEN keeps the first and drops the second.
    let towel = alerts_of(&app, &ids[0], None, 1).await.remove(0);
    let (status, _) = post(
        &app,
        &format!(
            "/inventory/alerts/{}/acknowledge",
            towel["id"].as_str().unwrap()
        ),
        "staff",
        json!({}),
    )
    .await;
    assert_eq!(status, 200);
    let cup = alerts_of(&app, &ids[2], None, 1).await.remove(0);
    resolve(&app, &cup, "REORDERED").await;

    let (status, page) = get(
        &app,
        "/inventory/alerts?status=OPEN&sort=severity",
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let listed: Vec<(&str, &str, &str)> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["itemId"].as_str().unwrap(),
                a["severity"].as_str().unwrap(),
                a["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (ids[1].as_str(), "CRITICAL", "ACTIVE"),
            (ids[0].as_str(), "WARNING", "ACKNOWLEDGED"),
        ]
    );
    assert_eq!(page["pagination"]["total"], 2, "{page}");
    // Newest first stays the default.
    let (_, page) = get(&app, "/inventory/alerts", "viewer").await;
    let newest: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["itemId"].as_str().unwrap())
        .collect();
    assert_eq!(newest, [ids[2].as_str(), ids[1].as_str(), ids[0].as_str()]);
    let (status, answer) = get(&app, "/inventory/alerts?sort=loudest", "viewer").await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&answer), ["sort"]);
}
