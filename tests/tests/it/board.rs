//! The housekeeping board (`GET /maintenance/turnovers`): each villa and day with a checkout or a
//! check-in of a stay that counts, by date then villa name, with the work orders generated for
//! that villa and day; its range, defaults and filter; every role reads it.

use chrono::NaiveDate;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::reporting_dashboard::insert_listing;
use crate::turnovers::{day, generate, linked_villa, rule, stay};

async fn get(app: &TestApp, path: &str, role: &str) -> (u16, Value) {
    let res = app.get(path, role).await;
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

/// The parameters a 400 names, in the maintenance error shape.
fn bad_fields(body: &Value) -> Vec<String> {
    assert_eq!(body["error"]["code"], "VALIDATION_ERROR", "{body}");
    assert_eq!(body["error"]["statusCode"], 400, "{body}");
    body["error"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {body}"))
        .iter()
        .map(|f| f["field"].as_str().unwrap().to_owned())
        .collect()
}

/// An entry as (date, villa name, checkout ids, check-in ids, sameDayTurnover).
type Entry = (String, String, Vec<String>, Vec<String>, bool);

fn entries(body: &Value) -> Vec<Entry> {
    let ids = |list: &Value| {
        list.as_array()
            .unwrap()
            .iter()
            .map(|s| s["reservationId"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {body}"))
        .iter()
        .map(|e| {
            (
                e["date"].as_str().unwrap().to_owned(),
                e["villa"]["name"].as_str().unwrap().to_owned(),
                ids(&e["checkouts"]),
                ids(&e["checkins"]),
                e["sameDayTurnover"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn entry<'a>(body: &'a Value, date: NaiveDate, villa: &str) -> &'a Value {
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["date"] == date.to_string() && e["villa"]["name"] == villa)
        .unwrap_or_else(|| panic!("no entry for {villa} on {date} in {body}"))
}

struct Board {
    today: NaiveDate,
    zephyr: Uuid,
    amber: Uuid,
    /// Zephyr: T-3 → T+1, T+1 → T+4 (4 guests), T+8 → T+10.
    z_before: Uuid,
    z_turn: Uuid,
    z_later: Uuid,
    /// Amber: an owner stay T+2 → T+4, a stay T+6 → T+9.
    a_owner: Uuid,
    a_stay: Uuid,
    checkout_rule: Uuid,
    checkin_rule: Uuid,
}

/// Two villas ("Zephyr Villa" made first, so that name order is not creation order), their
/// stays, a cancelled stay and a stay on an unlinked listing, a CHECKOUT rule and a CHECKIN rule
/// (owner stays included) generated, and a manual work order due on a board day.
async fn seed(app: &TestApp) -> Board {
    let pool = &app.pool;
    let today = app.today();
    let zephyr = linked_villa(app, 601, "Zephyr Villa").await;
    let amber = linked_villa(app, 602, "Amber Villa").await;
    insert_listing(pool, 603, "Unlinked", "ACTIVE", "THB").await;

    let z_before = stay(pool, 7001, 601, "CONFIRMED", day(today, -3), day(today, 1)).await;
    let z_turn = stay(pool, 7002, 601, "CONFIRMED", day(today, 1), day(today, 4)).await;
    sqlx::query(
        "UPDATE pms_reservations SET raw = json_build_object('id', 7002, 'numberOfGuests', 4)
         WHERE id = $1",
    )
    .bind(z_turn)
    .execute(pool)
    .await
    .unwrap();
    let z_later = stay(pool, 7003, 601, "CONFIRMED", day(today, 8), day(today, 10)).await;
    let a_owner = stay(pool, 7004, 602, "OWNER_STAY", day(today, 2), day(today, 4)).await;
    let a_stay = stay(pool, 7005, 602, "CONFIRMED", day(today, 6), day(today, 9)).await;
    // Not on the board: cancelled, and on a listing no villa is linked to.
    stay(pool, 7006, 602, "CANCELLED", day(today, 1), day(today, 3)).await;
    stay(pool, 7007, 603, "CONFIRMED", day(today, 3), day(today, 5)).await;

    let checkout_rule = rule(pool, "CHECKOUT", 0, None, json!({})).await;
    let checkin_rule = rule(pool, "CHECKIN", 0, None, json!({"includeOwnerStays": true})).await;
    generate(app).await;

    // A manual work order due on a board day is not the board's.
    let res = app
        .request(Method::POST, "/maintenance/work-orders", Some("manager"))
        .json(
            &json!({"title": "Fix the gate", "villaId": zephyr, "category": "GENERAL",
                      "priority": "LOW", "dueDate": format!("{}T12:00:00Z", day(today, 1))}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 201);

    Board {
        today,
        zephyr,
        amber,
        z_before,
        z_turn,
        z_later,
        a_owner,
        a_stay,
        checkout_rule,
        checkin_rule,
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn shows_each_villa_and_day_with_its_stays_and_work_orders(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let b = seed(&app).await;
    let t = b.today;
    let s = |id: Uuid| id.to_string();

    // The default range: today and the next six.
    let (status, body) = get(&app, "/maintenance/turnovers", "viewer").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        entries(&body),
        [
            (
                day(t, 1).to_string(),
                "Zephyr Villa".to_owned(),
                vec![s(b.z_before)],
                vec![s(b.z_turn)],
                true
            ),
            (
                day(t, 2).to_string(),
                "Amber Villa".to_owned(),
                vec![],
                vec![s(b.a_owner)],
                false
            ),
            (
                day(t, 4).to_string(),
                "Amber Villa".to_owned(),
                vec![s(b.a_owner)],
                vec![],
                false
            ),
            (
                day(t, 4).to_string(),
                "Zephyr Villa".to_owned(),
                vec![s(b.z_turn)],
                vec![],
                false
            ),
            (
                day(t, 6).to_string(),
                "Amber Villa".to_owned(),
                vec![],
                vec![s(b.a_stay)],
                false
            ),
        ]
    );

    // The same-day turnover: the checkout's and the check-in's work orders, not the manual one.
    let turn = entry(&body, day(t, 1), "Zephyr Villa");
    assert_eq!(turn["villa"]["id"], s(b.zephyr));
    assert_eq!(turn["checkouts"][0]["guestName"], "Guest 7001");
    assert_eq!(turn["checkouts"][0]["checkOut"], day(t, 1).to_string());
    assert_eq!(turn["checkins"][0]["checkIn"], day(t, 1).to_string());
    assert_eq!(turn["checkins"][0]["nights"], 3);
    assert_eq!(turn["checkins"][0]["guests"], 4);
    let mut rules: Vec<&str> = turn["workOrders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            assert_eq!(w["status"], "OPEN", "{w}");
            assert_eq!(w["assignee"], Value::Null, "{w}");
            w["taskRuleId"].as_str().unwrap()
        })
        .collect();
    rules.sort_unstable();
    let mut expected = [s(b.checkout_rule), s(b.checkin_rule)];
    expected.sort_unstable();
    assert_eq!(rules, expected);

    // The owner stay: its check-in's work order (the rule includes owner stays), no guests
    // count; its checkout has none (the CHECKOUT rule leaves owner stays out).
    let owner_in = entry(&body, day(t, 2), "Amber Villa");
    assert_eq!(owner_in["villa"]["id"], s(b.amber));
    assert_eq!(owner_in["checkins"][0]["nights"], 2);
    assert_eq!(owner_in["checkins"][0]["guests"], Value::Null);
    assert_eq!(owner_in["workOrders"].as_array().unwrap().len(), 1);
    assert_eq!(owner_in["workOrders"][0]["taskRuleId"], s(b.checkin_rule));
    let owner_out = entry(&body, day(t, 4), "Amber Villa");
    assert_eq!(owner_out["workOrders"], json!([]));
    let z_out = entry(&body, day(t, 4), "Zephyr Villa");
    assert_eq!(z_out["workOrders"].as_array().unwrap().len(), 1);
    assert_eq!(z_out["workOrders"][0]["taskRuleId"], s(b.checkout_rule));

    // A cancelled work order leaves the board.
    sqlx::query("UPDATE work_orders SET status = 'CANCELLED' WHERE reservation_id = $1")
        .bind(b.z_turn)
        .execute(&pool)
        .await
        .unwrap();
    let (_, body) = get(&app, "/maintenance/turnovers", "viewer").await;
    let turn = entry(&body, day(t, 1), "Zephyr Villa");
    assert_eq!(turn["workOrders"].as_array().unwrap().len(), 1, "{turn}");
    assert_eq!(turn["workOrders"][0]["taskRuleId"], s(b.checkout_rule));

    // An explicit range, one villa.
    let path = format!(
        "/maintenance/turnovers?from={}&to={}&villaId={}",
        day(t, 4),
        day(t, 10),
        b.zephyr
    );
    let (status, body) = get(&app, &path, "staff").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        entries(&body),
        [
            (
                day(t, 4).to_string(),
                "Zephyr Villa".to_owned(),
                vec![s(b.z_turn)],
                vec![],
                false
            ),
            (
                day(t, 8).to_string(),
                "Zephyr Villa".to_owned(),
                vec![],
                vec![s(b.z_later)],
                false
            ),
            (
                day(t, 10).to_string(),
                "Zephyr Villa".to_owned(),
                vec![s(b.z_later)],
                vec![],
                false
            ),
        ]
    );
    // Only `from`: that day and the next six.
    let (_, body) = get(
        &app,
        &format!("/maintenance/turnovers?from={}", day(t, 4)),
        "viewer",
    )
    .await;
    let dates: Vec<String> = entries(&body).into_iter().map(|e| e.0).collect();
    assert_eq!(
        dates,
        [
            day(t, 4),
            day(t, 4),
            day(t, 6),
            day(t, 8),
            day(t, 9),
            day(t, 10)
        ]
        .map(|d| d.to_string())
    );
    // An unknown villa: an empty board.
    let (status, body) = get(
        &app,
        &format!("/maintenance/turnovers?villaId={}", Uuid::now_v7()),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"], json!([]));
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn refuses_a_bad_range_and_is_read_by_every_role(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let t = app.today();

    let cases = [
        (format!("from={}&to={}", day(t, 3), day(t, 2)), vec!["to"]),
        // 63 dates.
        (format!("from={}&to={}", t, day(t, 62)), vec!["to"]),
        ("from=2026-02-30".to_owned(), vec!["from"]),
        ("from=tomorrow&to=x".to_owned(), vec!["from", "to"]),
        ("villaId=nope".to_owned(), vec!["villaId"]),
    ];
    for (query, fields) in cases {
        let (status, body) = get(&app, &format!("/maintenance/turnovers?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(bad_fields(&body), fields, "{query}");
    }
    // 62 dates is the most.
    let (status, body) = get(
        &app,
        &format!("/maintenance/turnovers?from={}&to={}", t, day(t, 61)),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{body}");

    for role in ["admin", "manager", "staff", "viewer"] {
        let (status, body) = get(&app, "/maintenance/turnovers", role).await;
        assert_eq!(status, 200, "{role}: {body}");
        assert_eq!(body["data"], json!([]));
    }
    let res = app.get_anonymous("/maintenance/turnovers").await;
    assert_eq!(res.status().as_u16(), 401);
}
