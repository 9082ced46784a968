//! The supplies forecast (`GET /inventory/reports/forecast`) against a fixture computed by hand,
//! and its FORECAST_SHORTAGE alerts: raised with the report's figures, and resolved when a
//! cancelled stay removes the cause (through the turnover generation that a stay change runs,
//! which enqueues the evaluation).

use std::time::Duration;

use chrono::NaiveDate;
use jobs::Job as _;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, eventually};
use uuid::Uuid;

use crate::inventory::{get, item, location};
use crate::turnovers::{day, generate, linked_villa, stay};

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn date(v: &Value) -> Option<NaiveDate> {
    v.as_str().map(|s| s.parse().unwrap())
}

/// The report's line of `sku`.
fn line<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

fn balance_on(line: &Value, on: NaiveDate) -> f64 {
    let d = line["days"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| date(&d["date"]) == Some(on))
        .unwrap_or_else(|| panic!("no {on} in {line}"));
    num(&d["balance"])
}

async fn open_forecast_alerts(pool: &PgPool) -> Vec<(String, String, f64, Option<NaiveDate>)> {
    sqlx::query_as::<_, (String, String, rust_decimal::Decimal, Option<NaiveDate>)>(
        "SELECT i.name, a.severity, a.projected_balance, a.run_out_date
         FROM inventory_alerts a JOIN inventory_items i ON i.id = a.item_id
         WHERE a.type = 'FORECAST_SHORTAGE' AND a.status <> 'RESOLVED' ORDER BY i.name",
    )
    .fetch_all(pool)
    .await
    .unwrap()
    .into_iter()
    .map(|(n, s, b, r)| (n, s, b.to_string().parse().unwrap(), r))
    .collect()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_forecast_follows_the_stays_and_its_alerts_follow_the_forecast(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let t = app.today();
    let villa = linked_villa(&app, 801, "Villa Forecast").await;
    // E began before today (nights T-3..T+1), A three nights, B two, C an owner's two, D
    // cancelled.
    let e = stay(&pool, 98001, 801, "CONFIRMED", day(t, -3), day(t, 2)).await;
    let a = stay(&pool, 98002, 801, "CONFIRMED", day(t, 1), day(t, 4)).await;
    stay(&pool, 98003, 801, "CONFIRMED", day(t, 6), day(t, 8)).await;
    stay(&pool, 98004, 801, "OWNER_STAY", day(t, 10), day(t, 12)).await;
    stay(&pool, 98005, 801, "CANCELLED", day(t, 2), day(t, 5)).await;
    // A checkout clean drawing 2 soaps a stay and a towel a night (guests' stays only).
    sqlx::query(
        "INSERT INTO task_rules (id, name, trigger, offset_days, category, priority, consumables, created_by)
         VALUES ($1, 'Checkout clean', 'CHECKOUT', 0, 'CLEANING', 'MEDIUM', $2, 'test')",
    )
    .bind(Uuid::now_v7())
    .bind(json!([{"itemSku": "SOAP", "perStay": 2, "perNight": 0}, {"itemSku": "TOWEL", "perStay": 0, "perNight": 1}]))
    .execute(&pool)
    .await
    .unwrap();
    let store = location(&app, villa, "Store", None).await;
    let shelf = location(&app, villa, "Shelf", None).await;
    item(
        &app,
        villa,
        &store,
        "SOAP",
        json!({"name": "Soap", "quantity": 10, "minStock": 4, "maxStock": 20}),
    )
    .await;
    // A second soap holding less: the rule draws from the one holding the most.
    item(
        &app,
        villa,
        &shelf,
        "SOAP",
        json!({"name": "Soap (shelf)", "quantity": 3}),
    )
    .await;
    item(
        &app,
        villa,
        &store,
        "TOWEL",
        json!({"name": "Towel", "quantity": 9, "minStock": 2}),
    )
    .await;
    let tea = item(
        &app,
        villa,
        &store,
        "TEA",
        json!({"name": "Tea", "quantity": 5, "minStock": 1, "usePerStay": 1, "usePerNight": 0.5}),
    )
    .await;
    assert_eq!(tea["usePerNight"].as_f64(), Some(0.5), "{tea}");
    item(
        &app,
        villa,
        &store,
        "WATER",
        json!({"name": "Water", "quantity": 1, "usePerNight": 2}),
    )
    .await;

    let path = format!("/inventory/reports/forecast?propertyId={villa}&days=14&limit=100");
    let (status, report) = get(&app, &path, "viewer").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["pagination"]["total"], 5);
    assert_eq!(date(&report["from"]), Some(t));
    assert_eq!(date(&report["to"]), Some(day(t, 13)));
    assert_eq!(report["days"], 14);

    // Soap: 2 at each guest checkout (E on T+2, A on T+4, B on T+8).
    let soap = line(&report, "Soap");
    assert_eq!(num(&soap["expectedUse"]), 6.0);
    assert_eq!(num(&soap["balanceAtHorizon"]), 4.0);
    assert_eq!(balance_on(soap, day(t, 1)), 10.0);
    assert_eq!(balance_on(soap, day(t, 2)), 8.0);
    assert_eq!(balance_on(soap, day(t, 8)), 4.0);
    assert_eq!(
        (date(&soap["runOutDate"]), date(&soap["belowMinimumOn"])),
        (None, None)
    );
    assert_eq!(
        num(&soap["orderQuantity"]),
        16.0,
        "back to the maximum of 20"
    );
    assert_eq!(num(&line(&report, "Soap (shelf)")["expectedUse"]), 0.0);
    assert_eq!(line(&report, "Soap")["days"].as_array().unwrap().len(), 14);

    // Towel: a towel a night of each guest stay, at its checkout: 5 (E), 3 (A), 2 (B).
    let towel = line(&report, "Towel");
    assert_eq!(num(&towel["expectedUse"]), 10.0);
    assert_eq!(balance_on(towel, day(t, 2)), 4.0);
    assert_eq!(balance_on(towel, day(t, 4)), 1.0);
    assert_eq!(num(&towel["balanceAtHorizon"]), -1.0);
    assert_eq!(
        date(&towel["runOutDate"]),
        Some(day(t, 8)),
        "9 held, 10 used by T+8"
    );
    assert_eq!(date(&towel["belowMinimumOn"]), Some(day(t, 4)));
    assert_eq!(
        num(&towel["orderQuantity"]),
        3.0,
        "no maximum: back to the minimum of 2"
    );

    // Tea: 1 at every checkout (owner stays too) and 0.5 a night inside the window (9 nights).
    let tea = line(&report, "Tea");
    assert_eq!(num(&tea["expectedUse"]), 8.5);
    assert_eq!(balance_on(tea, t), 4.5);
    assert_eq!(balance_on(tea, day(t, 2)), 2.0);
    assert_eq!(num(&tea["balanceAtHorizon"]), -3.5);
    assert_eq!(date(&tea["runOutDate"]), Some(day(t, 6)));
    assert_eq!(date(&tea["belowMinimumOn"]), Some(day(t, 4)));
    assert_eq!(num(&tea["orderQuantity"]), 4.5);
    let water = line(&report, "Water");
    assert_eq!(
        date(&water["runOutDate"]),
        Some(t),
        "2 a night from tonight, 1 held"
    );

    // Completing E's checkout clean draws now what the forecast expected of it: its occurrence
    // leaves the forecast and the stock drops by as much, so nothing ahead changes.
    generate(&app).await;
    let clean: Uuid = sqlx::query_scalar("SELECT id FROM work_orders WHERE reservation_id = $1")
        .bind(e)
        .fetch_one(&pool)
        .await
        .unwrap();
    for status in ["IN_PROGRESS", "COMPLETED"] {
        let (code, body) = crate::management_villas::send(
            &app,
            reqwest::Method::PATCH,
            &format!("/maintenance/work-orders/{clean}"),
            "staff",
            Some(json!({"status": status})),
        )
        .await;
        assert_eq!(code, 200, "{body}");
    }
    let (_, after) = get(&app, &path, "viewer").await;
    for (name, quantity, balance) in [("Soap", 8.0, 4.0), ("Towel", 4.0, -1.0)] {
        let l = line(&after, name);
        assert_eq!(num(&l["quantity"]), quantity, "{name} drawn: {l}");
        assert_eq!(num(&l["balanceAtHorizon"]), balance, "{name}: {l}");
    }
    assert_eq!(date(&line(&after, "Towel")["runOutDate"]), Some(day(t, 8)));

    // Bad input is named.
    for (query, field) in [
        (format!("propertyId={villa}&days=0"), "days"),
        (format!("propertyId={villa}&days=121"), "days"),
        ("days=30".to_owned(), "propertyId"),
        ("propertyId=villa".to_owned(), "propertyId"),
    ] {
        let (status, body) = get(
            &app,
            &format!("/inventory/reports/forecast?{query}"),
            "viewer",
        )
        .await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.to_string().contains(field), "{query}: {body}");
    }
    let (status, _) = get(
        &app,
        &format!("/inventory/reports/forecast?propertyId={}", Uuid::now_v7()),
        "viewer",
    )
    .await;
    assert_eq!(status, 404);

    // The alert evaluation over FORECAST_ALERT_DAYS (14) and FORECAST_CRITICAL_DAYS (3): the
    // report's figures, CRITICAL for the water running out tonight, nothing for the soap.
    let worker = app.worker(
        jobs::JobRegistry::new()
            .register::<jobs::alerts::EvaluateStockAlerts>()
            .register::<jobs::maintenance::GenerateTurnovers>(),
    );
    let mut tx = pool.begin().await.unwrap();
    let full = jobs::alerts::EvaluateStockAlerts::after_calendar_change()
        .enqueue(&mut tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    app.queues.push(&[full]).await;
    let alerts = eventually(Duration::from_secs(20), || async {
        Some(open_forecast_alerts(&pool).await).filter(|a| a.len() == 3)
    })
    .await
    .expect("three forecast alerts");
    assert_eq!(
        alerts,
        vec![
            (
                "Tea".to_owned(),
                "WARNING".to_owned(),
                -3.5,
                Some(day(t, 6))
            ),
            (
                "Towel".to_owned(),
                "WARNING".to_owned(),
                -1.0,
                Some(day(t, 8))
            ),
            ("Water".to_owned(), "CRITICAL".to_owned(), -17.0, Some(t)),
        ]
    );
    assert_eq!(
        num(&water["balanceAtHorizon"]),
        -17.0,
        "the report says the same"
    );
    let (_, listed) = get(
        &app,
        "/inventory/alerts?type=FORECAST_SHORTAGE&limit=100",
        "viewer",
    )
    .await;
    let towel_alert = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["item"]["name"] == "Towel")
        .unwrap()
        .clone();
    assert_eq!(
        towel_alert["runOutDate"].as_str(),
        Some(day(t, 8).to_string().as_str()),
        "{towel_alert}"
    );
    assert_eq!(num(&towel_alert["threshold"]), 2.0);

    // A cancelled stay (A, as the PMS sync or a webhook stores it) runs the turnover generation,
    // which enqueues the evaluation: the towel no longer runs out (7 of 9) nor passes its
    // minimum, and its alert is resolved by the platform.
    sqlx::query("UPDATE pms_reservations SET status = 'CANCELLED' WHERE id = $1")
        .bind(a)
        .execute(&pool)
        .await
        .unwrap();
    let mut tx = pool.begin().await.unwrap();
    let run = jobs::maintenance::GenerateTurnovers::default()
        .enqueue(&mut tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    app.queues.push(&[run]).await;
    let resolved = eventually(Duration::from_secs(20), || async {
        let action: Option<String> = sqlx::query_scalar(
            "SELECT a.resolution_action FROM inventory_alerts a JOIN inventory_items i ON i.id = a.item_id
             WHERE i.name = 'Towel' AND a.type = 'FORECAST_SHORTAGE' AND a.status = 'RESOLVED'",
        )
        .fetch_optional(&pool)
        .await
        .unwrap();
        action
    })
    .await;
    assert_eq!(resolved.as_deref(), Some("AUTO_RESOLVED"));
    let (_, report) = get(&app, &path, "viewer").await;
    assert_eq!(num(&line(&report, "Towel")["balanceAtHorizon"]), 2.0);
    assert_eq!(line(&report, "Towel")["runOutDate"], Value::Null);
    drop(worker);
}
