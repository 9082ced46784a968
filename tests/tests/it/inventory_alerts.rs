//! Stock alerts, raised and resolved by the alerts jobs (worker-alerts), handled by people; and
//! the inventory reports.

use std::time::Duration;

use jobs::{Job, JobRegistry, alerts::EvaluateStockAlerts};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, eventually};
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

    // Many evaluations at once, from jobs and directly: still one open alert per item and type.
    let mut enqueued = Vec::new();
    let mut tx = pool.begin().await.unwrap();
    for n in 0..10 {
        enqueued.push(
            EvaluateStockAlerts {
                item_id: None,
                tick: Some(format!("race-{n}")),
            }
            .enqueue(&mut tx)
            .await
            .unwrap(),
        );
    }
    tx.commit().await.unwrap();
    app.queues.push(&enqueued).await;
    let direct = (0..10).map(|_| {
        let pool = pool.clone();
        async move {
            let mut conn = pool.acquire().await.unwrap();
            domain::inventory::alerts::evaluate(&mut conn, None, 30)
                .await
                .unwrap()
        }
    });
    futures::future::join_all(direct).await;
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
    eventually(Duration::from_secs(10), || async {
        let done: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'alerts.evaluate_stock' AND status <> 'SUCCEEDED'")
            .fetch_one(&pool).await.unwrap();
        (done == 0).then_some(())
    })
    .await
    .expect("every evaluation ran");
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
        ("status=OPEN", "status"),
        ("type=RUST", "type"),
        ("propertyId=1", "propertyId"),
        ("limit=500", "limit"),
    ] {
        let (status, body) = get(&app, &format!("/inventory/alerts?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}");
        assert_eq!(bad_fields(&body), [field]);
    }
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
        item_id: None,
        tick: Some("900s-1".into()),
    }
    .enqueue(&mut tx)
    .await
    .unwrap();
    let same_tick = EvaluateStockAlerts {
        item_id: None,
        tick: Some("900s-1".into()),
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
