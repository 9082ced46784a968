//! Turnover consumables (issue 29): completing a generated work order draws its rule's
//! consumables from the villa's stock through the ledger, once, and records the shortfall.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::inventory::{get, item, location};
use crate::management_villas::{create_villa, send};
use crate::turnovers::{day, generate, linked_villa, stay};

/// A CHECKOUT rule named `name` with these consumables, written as the routes store one.
async fn rule_with(pool: &PgPool, name: &str, consumables: Value) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO task_rules (id, name, trigger, offset_days, category, priority, consumables, created_by)
         VALUES ($1, $2, 'CHECKOUT', 0, 'CLEANING', 'MEDIUM', $3, 'test')",
    )
    .bind(id)
    .bind(name)
    .bind(consumables)
    .execute(pool)
    .await
    .unwrap();
    id
}

async fn work_order_of(pool: &PgPool, rule: Uuid, reservation: Uuid) -> String {
    let id: Uuid = sqlx::query_scalar(
        "SELECT id FROM work_orders WHERE task_rule_id = $1 AND reservation_id = $2",
    )
    .bind(rule)
    .bind(reservation)
    .fetch_one(pool)
    .await
    .unwrap();
    id.to_string()
}

async fn set_status(app: &TestApp, id: &str, body: Value) -> Value {
    let (status, answer) = send(
        app,
        Method::PATCH,
        &format!("/maintenance/work-orders/{id}"),
        "staff",
        Some(body),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    answer
}

/// The USE movements of a villa, oldest first.
async fn uses_of(app: &TestApp, villa: Uuid) -> Vec<Value> {
    let (status, body) = get(
        app,
        &format!("/inventory/movements?propertyId={villa}&type=USE&limit=100"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mut all = body["data"].as_array().unwrap().clone();
    all.reverse();
    all
}

async fn quantity(app: &TestApp, item: &str) -> f64 {
    let (status, body) = get(app, &format!("/inventory/items/{item}"), "viewer").await;
    assert_eq!(status, 200, "{body}");
    body["quantity"]
        .to_string()
        .trim_matches('"')
        .parse()
        .unwrap()
}

fn id_of(item: &Value) -> String {
    item["id"].as_str().unwrap().to_owned()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn completing_a_turnover_draws_its_consumables_once_and_records_the_shortfall(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.core.business_time_zone.today();
    let villa = linked_villa(&app, 701, "Villa Consumables").await;
    // Three nights.
    let reservation = stay(&pool, 9701, 701, "CONFIRMED", day(today, 1), day(today, 4)).await;
    let rule = rule_with(
        &pool,
        "Checkout clean",
        json!([
            {"itemSku": "SOAP", "perStay": 2, "perNight": 0},
            {"itemSku": "TP", "perStay": 0, "perNight": 1.5},
            {"itemSku": "WATER", "perStay": 1, "perNight": 2},
            {"itemSku": "COFFEE", "perStay": 0.25, "perNight": 0.125},
        ]),
    )
    .await;
    generate(&app).await;
    let order = work_order_of(&pool, rule, reservation).await;

    let store = location(&app, villa, "Store", None).await;
    let kitchen = location(&app, villa, "Kitchen", None).await;
    let soap = item(&app, villa, &store, "SOAP", json!({"quantity": 10})).await;
    let tp = item(&app, villa, &store, "TP", json!({"quantity": 3})).await;
    // WATER at two locations: drawn from the one holding the most only.
    let water_big = item(&app, villa, &store, "WATER", json!({"quantity": 5})).await;
    let water_small = item(&app, villa, &kitchen, "WATER", json!({"quantity": 4})).await;
    // COFFEE: archived here, and held by another villa: neither is drawn.
    let archived = item(&app, villa, &kitchen, "COFFEE", json!({"quantity": 9})).await;
    let (status, body) = send(
        &app,
        Method::DELETE,
        &format!("/inventory/items/{}", id_of(&archived)),
        "manager",
        None,
    )
    .await;
    assert!(status == 200 || status == 204, "{status} {body}");
    let elsewhere = create_villa(&app, "Villa Elsewhere").await;
    let other_store = location(&app, elsewhere, "Store", None).await;
    let foreign = item(
        &app,
        elsewhere,
        &other_store,
        "COFFEE",
        json!({"quantity": 9}),
    )
    .await;
    sqlx::query("DELETE FROM jobs WHERE kind = 'alerts.evaluate_stock'")
        .execute(&pool)
        .await
        .unwrap();

    set_status(&app, &order, json!({"status": "IN_PROGRESS"})).await;
    assert!(
        uses_of(&app, villa).await.is_empty(),
        "nothing before completion"
    );
    let done = set_status(&app, &order, json!({"status": "COMPLETED"})).await;
    let expected = json!([
        {"itemSku": "SOAP", "wanted": 2, "drawn": 2, "shortfall": 0},
        {"itemSku": "TP", "wanted": 4.5, "drawn": 3, "shortfall": 1.5},
        {"itemSku": "WATER", "wanted": 7, "drawn": 5, "shortfall": 2},
        {"itemSku": "COFFEE", "wanted": 0.625, "drawn": 0, "shortfall": 0.625},
    ]);
    assert_eq!(done["consumables"], expected, "{done}");
    let (_, detail) = get(&app, &format!("/maintenance/work-orders/{order}"), "viewer").await;
    assert_eq!(detail["consumables"], expected);

    let uses = uses_of(&app, villa).await;
    let got: Vec<(String, f64)> = uses
        .iter()
        .map(|m| {
            (
                m["itemId"].as_str().unwrap().to_owned(),
                m["quantity"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (id_of(&soap), 2.0),
            (id_of(&tp), 3.0),
            (id_of(&water_big), 5.0)
        ]
    );
    for m in &uses {
        assert_eq!(m["workOrderId"], order.as_str(), "{m}");
        assert_eq!(m["referenceType"], "WORK_ORDER");
        assert_eq!(m["referenceId"], order.as_str());
        assert_eq!(
            m["notes"],
            "turnover consumables of rule \"Checkout clean\""
        );
        assert_eq!(m["type"], "USE");
    }
    assert_eq!(quantity(&app, &id_of(&soap)).await, 8.0);
    assert_eq!(quantity(&app, &id_of(&tp)).await, 0.0);
    assert_eq!(quantity(&app, &id_of(&water_big)).await, 0.0);
    assert_eq!(quantity(&app, &id_of(&water_small)).await, 4.0);
    assert_eq!(quantity(&app, &id_of(&foreign)).await, 9.0);
    let archived_left: f64 =
        sqlx::query_scalar("SELECT quantity::float8 FROM inventory_items WHERE id = $1")
            .bind(archived["id"].as_str().unwrap().parse::<Uuid>().unwrap())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(archived_left, 9.0);
    crate::inventory::assert_ledger_holds(&pool).await;

    // The low-stock alerts follow: one evaluation per item drawn, enqueued with the completion.
    let mut evaluated: Vec<String> = sqlx::query_scalar(
        "SELECT payload->>'itemId' FROM jobs WHERE kind = 'alerts.evaluate_stock'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    evaluated.sort();
    let mut drawn = vec![id_of(&soap), id_of(&tp), id_of(&water_big)];
    drawn.sort();
    assert_eq!(evaluated, drawn);

    // Reopened and completed again: nothing more is drawn, even with stock back.
    set_status(
        &app,
        &order,
        json!({"status": "IN_PROGRESS", "reason": "missed the terrace"}),
    )
    .await;
    let (status, body) = crate::inventory::movement(&app, &id_of(&tp), "PURCHASE", json!(10)).await;
    assert_eq!(status, 201, "{body}");
    let again = set_status(&app, &order, json!({"status": "COMPLETED"})).await;
    assert_eq!(again["consumables"], expected);
    assert_eq!(uses_of(&app, villa).await.len(), 3);
    assert_eq!(quantity(&app, &id_of(&soap)).await, 8.0);
    assert_eq!(quantity(&app, &id_of(&tp)).await, 10.0);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn completions_at_once_draw_once_and_work_without_a_stay_draws_nothing(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.core.business_time_zone.today();
    let villa = linked_villa(&app, 702, "Villa Race").await;
    let first = stay(&pool, 9702, 702, "CONFIRMED", day(today, 1), day(today, 3)).await;
    let second = stay(&pool, 9703, 702, "CONFIRMED", day(today, 5), day(today, 7)).await;
    let rule = rule_with(
        &pool,
        "Towels",
        json!([{"itemSku": "TOWEL", "perStay": 1, "perNight": 1}]),
    )
    .await;
    generate(&app).await;
    let store = location(&app, villa, "Store", None).await;
    let towel = item(&app, villa, &store, "TOWEL", json!({"quantity": 100})).await;

    let order = work_order_of(&pool, rule, first).await;
    set_status(&app, &order, json!({"status": "IN_PROGRESS"})).await;
    let path = format!("/maintenance/work-orders/{order}");
    let complete = || {
        send(
            &app,
            Method::PATCH,
            &path,
            "staff",
            Some(json!({"status": "COMPLETED"})),
        )
    };
    // Both completions arrive while a transaction holds the work order's row: they are both in
    // flight, waiting on it, when it is released.
    let mut holder = pool.begin().await.unwrap();
    let holder_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *holder)
        .await
        .unwrap();
    sqlx::query("SELECT id FROM work_orders WHERE id = $1 FOR UPDATE")
        .bind(order.parse::<Uuid>().unwrap())
        .execute(&mut *holder)
        .await
        .unwrap();
    let release = async {
        // The two completions, the second queued behind the first for the row.
        tests::wait_blocked_by(&pool, holder_pid, 2).await;
        holder.commit().await.unwrap();
    };
    let (a, b, ()) = tokio::join!(complete(), complete(), release);
    assert_eq!((a.0, b.0), (200, 200), "{a:?} {b:?}");
    assert_eq!(uses_of(&app, villa).await.len(), 1);
    assert_eq!(quantity(&app, &id_of(&towel)).await, 97.0);

    // A work order whose stay is gone draws nothing and records nothing.
    let orphan = work_order_of(&pool, rule, second).await;
    sqlx::query("UPDATE work_orders SET reservation_id = NULL WHERE id = $1")
        .bind(orphan.parse::<Uuid>().unwrap())
        .execute(&pool)
        .await
        .unwrap();
    set_status(&app, &orphan, json!({"status": "IN_PROGRESS"})).await;
    let done = set_status(&app, &orphan, json!({"status": "COMPLETED"})).await;
    assert_eq!(done["consumables"], Value::Null);
    assert_eq!(uses_of(&app, villa).await.len(), 1);
    assert_eq!(quantity(&app, &id_of(&towel)).await, 97.0);
}
