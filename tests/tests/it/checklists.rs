//! Work orders' checklists: answering items (PASS, FAIL, NA, un-answering), photo evidence for
//! PHOTO_REQUIRED items, the follow-up a FAIL opens (once, even for simultaneous answers), the
//! completion guard, and the work-order list's source, reservationId and taskRuleId filters.

use domain::maintenance::checklists::{NewChecklistItem, insert_items};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::management_villas::{create_villa, send};

fn assert_error(body: &Value, status: u16, code: &str) {
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["statusCode"], status, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
}

fn bad_fields(body: &Value) -> Vec<String> {
    body["error"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {body}"))
        .iter()
        .map(|f| f["field"].as_str().unwrap().to_owned())
        .collect()
}

async fn work_order(app: &TestApp, villa: Uuid, title: &str) -> Uuid {
    let (status, body) = send(
        app,
        Method::POST,
        "/maintenance/work-orders",
        "staff",
        Some(json!({"title": title, "villaId": villa, "category": "INSPECTION", "priority": "MEDIUM"})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["source"], "MANUAL", "{body}");
    assert_eq!(body["category"], "INSPECTION", "{body}");
    body["id"].as_str().unwrap().parse().unwrap()
}

fn item(text: &str, kind: &str, fail_category: &str) -> NewChecklistItem {
    NewChecklistItem {
        text: text.to_owned(),
        kind: kind.to_owned(),
        fail_category: fail_category.to_owned(),
    }
}

/// Puts `items` on the work order's checklist as the generator would; answers their ids.
async fn checklist(pool: &PgPool, order: Uuid, items: &[NewChecklistItem]) -> Vec<Uuid> {
    let mut conn = pool.acquire().await.unwrap();
    insert_items(&mut conn, order, items).await.unwrap();
    sqlx::query_scalar(
        "SELECT id FROM work_order_checklist_items WHERE work_order_id = $1 ORDER BY position",
    )
    .bind(order)
    .fetch_all(&mut *conn)
    .await
    .unwrap()
}

/// A field note of `order` (`type` TEXT or PHOTO), recorded directly.
async fn field_note(pool: &PgPool, order: Uuid, kind: &str) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO field_notes (id, villa_id, work_order_id, type, content, created_by)
         SELECT $1, villa_id, id, $2, 'evidence', 'tester' FROM work_orders WHERE id = $3",
    )
    .bind(id)
    .bind(kind)
    .bind(order)
    .execute(pool)
    .await
    .unwrap();
    id
}

async fn answer(app: &TestApp, order: Uuid, item: Uuid, role: &str, body: Value) -> (u16, Value) {
    send(
        app,
        Method::PATCH,
        &format!("/maintenance/work-orders/{order}/checklist/{item}"),
        role,
        Some(body),
    )
    .await
}

async fn get(app: &TestApp, path: &str) -> Value {
    let (status, body) = send(app, Method::GET, path, "viewer", None).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn follow_ups_in_db(pool: &PgPool, parent: Uuid) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM work_orders WHERE parent_work_order_id = $1")
        .bind(parent)
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn items_are_answered_with_their_evidence(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Checklist").await;
    let order = work_order(&app, villa, "Turnover inspection").await;
    let other = work_order(&app, villa, "Another inspection").await;
    let (_, plain) = send(
        &app,
        Method::GET,
        &format!("/maintenance/work-orders/{other}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(plain["checklist"], json!([]), "{plain}");
    assert_eq!(plain["followUps"], json!([]), "{plain}");
    assert_eq!(plain["consumables"], Value::Null, "{plain}");
    for flag in ["sameDayTurnover", "reservationChanged"] {
        assert_eq!(plain[flag], false, "{plain}");
    }

    let ids = checklist(
        &pool,
        order,
        &[
            item("Towels folded", "CHECK", "CLEANING"),
            item("Pool water clear", "PHOTO_REQUIRED", "POOL"),
            item("Safe reset", "CHECK", "SECURITY"),
        ],
    )
    .await;
    let detail = get(&app, &format!("/maintenance/work-orders/{order}")).await;
    let texts: Vec<&str> = detail["checklist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Towels folded", "Pool water clear", "Safe reset"]);
    assert_eq!(detail["checklist"][1]["kind"], "PHOTO_REQUIRED");
    assert_eq!(detail["checklist"][0]["result"], Value::Null);

    // Each result, in any letter case; the answer is the whole work order.
    for result in ["pass", "NA", "Fail", "PASS"] {
        let (status, body) = answer(
            &app,
            order,
            ids[0],
            "staff",
            json!({"result": result, "notes": "ok"}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let answered = &body["checklist"][0];
        assert_eq!(answered["result"], result.to_uppercase(), "{body}");
        assert_eq!(answered["notes"], "ok");
        assert!(answered["answeredBy"].is_string(), "{body}");
        assert!(answered["answeredAt"].is_string(), "{body}");
    }
    // That FAIL opened a follow-up; switching back to PASS keeps it, and it cannot be un-answered.
    let (status, body) = answer(&app, order, ids[0], "staff", json!({"result": null})).await;
    assert_eq!(status, 409, "{body}");
    assert_error(&body, 409, "CHECKLIST_ITEM_HAS_FOLLOW_UP");
    // An item without a follow-up can be un-answered.
    let (status, body) = answer(&app, order, ids[2], "manager", json!({"result": "NA"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = answer(&app, order, ids[2], "admin", json!({"result": null})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checklist"][2]["result"], Value::Null);
    assert_eq!(body["checklist"][2]["answeredBy"], Value::Null);

    // Checked input.
    for (bad, fields) in [
        (json!({}), vec!["result"]),
        (json!({"result": "MAYBE"}), vec!["result"]),
        (json!({"result": 3}), vec!["result"]),
        (
            json!({"result": "PASS", "notes": "x".repeat(2001), "fieldNoteId": "nope"}),
            vec!["notes", "fieldNoteId"],
        ),
    ] {
        let (status, body) = answer(&app, order, ids[2], "staff", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_error(&body, 400, "VALIDATION_ERROR");
        assert_eq!(bad_fields(&body), fields, "{body}");
    }

    // PHOTO_REQUIRED: PASS needs a PHOTO field note of this work order.
    let text_note = field_note(&pool, order, "TEXT").await;
    let foreign_photo = field_note(&pool, other, "PHOTO").await;
    let own_photo = field_note(&pool, order, "PHOTO").await;
    for body in [
        json!({"result": "PASS"}),
        json!({"result": "PASS", "fieldNoteId": text_note}),
    ] {
        let (status, answer) = answer(&app, order, ids[1], "staff", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_error(&answer, 400, "PHOTO_REQUIRED");
        assert_eq!(bad_fields(&answer), ["fieldNoteId"]);
    }
    let (status, body) = answer(
        &app,
        order,
        ids[1],
        "staff",
        json!({"result": "PASS", "fieldNoteId": foreign_photo}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_error(&body, 400, "VALIDATION_ERROR");
    assert_eq!(bad_fields(&body), ["fieldNoteId"]);
    // NA needs no photo; a note of any type of this work order may go with it.
    let (status, body) = answer(
        &app,
        order,
        ids[1],
        "staff",
        json!({"result": "NA", "fieldNoteId": text_note}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = answer(
        &app,
        order,
        ids[1],
        "staff",
        json!({"result": "PASS", "fieldNoteId": own_photo}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checklist"][1]["result"], "PASS");
    assert_eq!(body["checklist"][1]["fieldNoteId"], own_photo.to_string());

    // Who may answer, and what is not there.
    let (status, _) = answer(&app, order, ids[0], "viewer", json!({"result": "PASS"})).await;
    assert_eq!(status, 403);
    let anonymous = app
        .request(
            Method::PATCH,
            &format!("/maintenance/work-orders/{order}/checklist/{}", ids[0]),
            None,
        )
        .json(&json!({"result": "PASS"}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let (status, body) = answer(
        &app,
        Uuid::now_v7(),
        ids[0],
        "staff",
        json!({"result": "PASS"}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_error(&body, 404, "WORK_ORDER_NOT_FOUND");
    // An item of another work order is not on this one's checklist.
    let (status, body) = answer(&app, other, ids[0], "staff", json!({"result": "PASS"})).await;
    assert_eq!(status, 404, "{body}");
    assert_error(&body, 404, "CHECKLIST_ITEM_NOT_FOUND");
    let (status, body) = answer(
        &app,
        order,
        Uuid::now_v7(),
        "staff",
        json!({"result": "PASS"}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_error(&body, 404, "CHECKLIST_ITEM_NOT_FOUND");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_fail_opens_one_follow_up(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Repairs").await;
    let order = work_order(&app, villa, "Checkout inspection").await;
    let long = format!("Pool pump {}", "x".repeat(300));
    let ids = checklist(
        &pool,
        order,
        &[
            item("Pool pump quiet", "CHECK", "POOL"),
            item(&long, "CHECK", "NOT_A_CATEGORY"),
        ],
    )
    .await;

    let (status, body) = answer(
        &app,
        order,
        ids[0],
        "staff",
        json!({"result": "FAIL", "notes": "grinding noise"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let follow_up = body["checklist"][0]["followUpWorkOrderId"]
        .as_str()
        .expect("a follow-up")
        .to_owned();
    assert_eq!(
        body["followUps"],
        json!([{"id": follow_up, "title": "Pool pump quiet", "status": "OPEN"}])
    );
    let repair = get(&app, &format!("/maintenance/work-orders/{follow_up}")).await;
    assert_eq!(repair["villaId"], villa.to_string());
    assert_eq!(repair["category"], "POOL");
    assert_eq!(repair["title"], "Pool pump quiet");
    assert_eq!(repair["description"], "grinding noise");
    assert_eq!(repair["priority"], "HIGH");
    assert_eq!(repair["status"], "OPEN");
    assert_eq!(repair["source"], "INSPECTION");
    assert_eq!(repair["parentWorkOrderId"], order.to_string());
    assert_eq!(repair["history"][0]["to"], "OPEN", "{repair}");
    assert_eq!(repair["history"][0]["from"], Value::Null);

    // FAIL again, or PASS then FAIL: nothing more.
    for result in ["FAIL", "PASS", "FAIL"] {
        let (status, body) = answer(&app, order, ids[0], "staff", json!({"result": result})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["checklist"][0]["followUpWorkOrderId"], follow_up);
    }
    assert_eq!(follow_ups_in_db(&pool, order).await, 1);

    // A long text is cut to a title; an unknown fail category falls back to GENERAL.
    let (status, body) = answer(&app, order, ids[1], "staff", json!({"result": "FAIL"})).await;
    assert_eq!(status, 200, "{body}");
    let second = body["checklist"][1]["followUpWorkOrderId"]
        .as_str()
        .unwrap();
    let repair = get(&app, &format!("/maintenance/work-orders/{second}")).await;
    assert_eq!(repair["title"].as_str().unwrap().chars().count(), 200);
    assert_eq!(repair["category"], "GENERAL");
    assert_eq!(repair["description"], Value::Null);
    assert_eq!(body["followUps"].as_array().unwrap().len(), 2, "{body}");

    // The list filters by source.
    let listed = get(&app, "/maintenance/work-orders?source=inspection").await;
    let listed: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [second, follow_up.as_str()]);
}

/// Two FAIL answers of one item at once: they take turns on the item's row, the second sees the
/// first's follow-up. Both are held behind a transaction that locks the item, then released
/// together.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn simultaneous_fails_open_one_follow_up(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Race").await;
    let order = work_order(&app, villa, "Race inspection").await;
    let ids = checklist(&pool, order, &[item("Gate locks", "CHECK", "SECURITY")]).await;

    let mut hold = pool.begin().await.unwrap();
    sqlx::query("SELECT 1 FROM work_order_checklist_items WHERE id = $1 FOR UPDATE")
        .bind(ids[0])
        .execute(&mut *hold)
        .await
        .unwrap();
    let barrier = tokio::sync::Barrier::new(2);
    let item_id = ids[0];
    let fail = |notes: &'static str| {
        let app = &app;
        let barrier = &barrier;
        async move {
            barrier.wait().await;
            answer(
                app,
                order,
                item_id,
                "staff",
                json!({"result": "FAIL", "notes": notes}),
            )
            .await
        }
    };
    let release = async {
        // Both requests wait on the locks before the hold is released.
        let waiting = tests::eventually(std::time::Duration::from_secs(20), || async {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            (n >= 2).then_some(n)
        })
        .await;
        hold.commit().await.unwrap();
        waiting
    };
    let ((a, body_a), (b, body_b), waiting) = tokio::join!(fail("first"), fail("second"), release);
    assert!(
        waiting.is_some(),
        "the two answers never waited on the lock"
    );
    assert_eq!(a, 200, "{body_a}");
    assert_eq!(b, 200, "{body_b}");
    assert_eq!(follow_ups_in_db(&pool, order).await, 1);
    assert_eq!(
        body_a["checklist"][0]["followUpWorkOrderId"],
        body_b["checklist"][0]["followUpWorkOrderId"]
    );
    assert_eq!(body_b["followUps"].as_array().unwrap().len(), 1);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn completion_waits_for_every_item(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Complete").await;
    let order = work_order(&app, villa, "Checkin inspection").await;
    let ids = checklist(
        &pool,
        order,
        &[
            item("Lights work", "CHECK", "ELECTRICAL"),
            item("Keys in box", "CHECK", "SECURITY"),
        ],
    )
    .await;
    let path = format!("/maintenance/work-orders/{order}");
    let (status, body) = send(
        &app,
        Method::PATCH,
        &path,
        "staff",
        Some(json!({"status": "IN_PROGRESS"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = answer(&app, order, ids[0], "staff", json!({"result": "PASS"})).await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = send(
        &app,
        Method::PATCH,
        &path,
        "staff",
        Some(json!({"status": "COMPLETED"})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_error(&body, 409, "CHECKLIST_INCOMPLETE");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("Keys in box"), "{message}");
    assert!(!message.contains("Lights work"), "{message}");
    assert_eq!(
        body["error"]["items"],
        json!([{"id": ids[1], "text": "Keys in box"}])
    );
    assert_eq!(get(&app, &path).await["status"], "IN_PROGRESS");

    let (status, body) = answer(&app, order, ids[1], "staff", json!({"result": "NA"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        &app,
        Method::PATCH,
        &path,
        "staff",
        Some(json!({"status": "COMPLETED"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "COMPLETED");

    // A COMPLETED work order's checklist is closed.
    let (status, body) = answer(&app, order, ids[1], "staff", json!({"result": "PASS"})).await;
    assert_eq!(status, 409, "{body}");
    assert_error(&body, 409, "WORK_ORDER_CLOSED");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_list_filters_by_source_stay_and_rule(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Turnover").await;
    let manual = work_order(&app, villa, "By hand").await;
    let turnover = work_order(&app, villa, "Turnover").await;
    let reservation = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO pms_reservations (id, pms_id, check_in, check_out, nights, channel, total_amount,
             net_amount, status, raw, synced_at)
         VALUES ($1, 4242, '2026-12-01', '2026-12-05', 4, 'DIRECT', 1000, 900, 'CONFIRMED', '{}', now())",
    )
    .bind(reservation)
    .execute(&pool)
    .await
    .unwrap();
    let rule = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO task_rules (id, name, trigger, category, created_by)
         VALUES ($1, 'Checkout clean', 'CHECKOUT', 'CLEANING', 'tester')",
    )
    .bind(rule)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "UPDATE work_orders SET source = 'TURNOVER', reservation_id = $2, task_rule_id = $3,
             occurrence_index = 0, same_day_turnover = true, reservation_changed = true,
             consumables = '[{\"itemSku\": \"TOWEL\", \"wanted\": 4, \"drawn\": 3, \"shortfall\": 1}]'
         WHERE id = $1",
    )
    .bind(turnover)
    .bind(reservation)
    .bind(rule)
    .execute(&pool)
    .await
    .unwrap();

    let ids = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["id"].as_str().unwrap().to_owned())
            .collect()
    };
    for (query, expected) in [
        ("source=TURNOVER".to_owned(), vec![turnover]),
        ("source=manual".to_owned(), vec![manual]),
        ("source=PLANNED".to_owned(), vec![]),
        (format!("reservationId={reservation}"), vec![turnover]),
        (format!("taskRuleId={rule}"), vec![turnover]),
        (format!("taskRuleId={}", Uuid::now_v7()), vec![]),
        ("category=INSPECTION".to_owned(), vec![turnover, manual]),
    ] {
        let page = get(&app, &format!("/maintenance/work-orders?{query}")).await;
        let expected: Vec<String> = expected.iter().map(Uuid::to_string).collect();
        assert_eq!(ids(&page), expected, "{query}: {page}");
    }
    let page = get(&app, "/maintenance/work-orders?source=TURNOVER").await;
    let listed = &page["data"][0];
    assert_eq!(listed["reservationId"], reservation.to_string());
    assert_eq!(listed["taskRuleId"], rule.to_string());
    assert_eq!(listed["sameDayTurnover"], true);
    assert_eq!(listed["reservationChanged"], true);
    assert_eq!(listed["parentWorkOrderId"], Value::Null);
    let detail = get(&app, &format!("/maintenance/work-orders/{turnover}")).await;
    assert_eq!(
        detail["consumables"],
        json!([{"itemSku": "TOWEL", "wanted": 4, "drawn": 3, "shortfall": 1}])
    );

    let (status, body) = send(
        &app,
        Method::GET,
        "/maintenance/work-orders?source=ROBOT&reservationId=nope&taskRuleId=12",
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_error(&body, 400, "VALIDATION_ERROR");
    assert_eq!(bad_fields(&body), ["source", "reservationId", "taskRuleId"]);
}
