//! The maintenance surface: work orders (validation, paging, every allowed and refused status
//! transition, assignment, comments), assets and their health, vendors and their ratings.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::management_villas::{create_villa, send};

const STATUSES: [&str; 6] = [
    "OPEN",
    "ASSIGNED",
    "IN_PROGRESS",
    "ON_HOLD",
    "COMPLETED",
    "CANCELLED",
];

/// The maintenance error shape: `{error: {code, message, statusCode}}`.
fn assert_maintenance_error(body: &Value, status: u16, code: &str) {
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["statusCode"], status, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
}

fn bad_fields(body: &Value) -> Vec<String> {
    assert_maintenance_error(body, 400, "VALIDATION_ERROR");
    body["error"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {body}"))
        .iter()
        .map(|f| f["field"].as_str().unwrap().to_owned())
        .collect()
}

async fn post(app: &TestApp, path: &str, role: &str, body: Value) -> (u16, Value) {
    send(app, Method::POST, path, role, Some(body)).await
}

async fn patch(app: &TestApp, path: &str, role: &str, body: Value) -> (u16, Value) {
    send(app, Method::PATCH, path, role, Some(body)).await
}

async fn get(app: &TestApp, path: &str, role: &str) -> (u16, Value) {
    send(app, Method::GET, path, role, None).await
}

async fn work_order(app: &TestApp, villa: Uuid, title: &str) -> String {
    let (status, body) = post(
        app,
        "/maintenance/work-orders",
        "staff",
        json!({"title": title, "villaId": villa, "category": "PLUMBING", "priority": "HIGH"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "OPEN");
    body["id"].as_str().unwrap().to_owned()
}

pub async fn staff_member(app: &TestApp, first: &str) -> String {
    let (status, body) = post(
        app,
        "/management/staff",
        "manager",
        json!({"firstName": first, "lastName": "Tech", "defaultRole": "MAINTENANCE_TECHNICIAN"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

async fn vendor(app: &TestApp, name: &str, categories: Value) -> String {
    let (status, body) = post(
        app,
        "/maintenance/vendors",
        "manager",
        json!({"companyName": name, "email": "ops@example.com", "categories": categories,
               "phone": "+66 81-234 5678"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

/// Moves a new work order into `state` through the routes a user would use.
async fn work_order_in(app: &TestApp, villa: Uuid, technician: &str, state: &str) -> String {
    let id = work_order(app, villa, &format!("in {state}")).await;
    let path = format!("/maintenance/work-orders/{id}");
    let steps: &[Value] = match state {
        "OPEN" => &[],
        "ASSIGNED" => &[],
        "IN_PROGRESS" => &[json!({"status": "IN_PROGRESS"})],
        "ON_HOLD" => &[
            json!({"status": "IN_PROGRESS"}),
            json!({"status": "ON_HOLD", "holdReason": "waiting for parts"}),
        ],
        "COMPLETED" => &[
            json!({"status": "IN_PROGRESS"}),
            json!({"status": "COMPLETED"}),
        ],
        "CANCELLED" => &[json!({"status": "CANCELLED"})],
        other => panic!("{other}"),
    };
    if state == "ASSIGNED" {
        let (status, body) = post(
            app,
            &format!("{path}/assign"),
            "staff",
            json!({"assigneeId": technician, "assigneeType": "TECHNICIAN"}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    for step in steps {
        let (status, body) = patch(app, &path, "manager", step.clone()).await;
        assert_eq!(status, 200, "{step}: {body}");
    }
    let (_, body) = get(app, &path, "viewer").await;
    assert_eq!(body["status"], state, "{body}");
    id
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn work_orders_are_checked_opened_listed_and_read(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = create_villa(&app, "Villa Maintenance").await;
    let other = create_villa(&app, "Villa Other").await;

    let (status, body) = post(&app, "/maintenance/work-orders", "staff", json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(
        bad_fields(&body),
        ["title", "villaId", "category", "priority"]
    );
    let (status, body) = post(
        &app,
        "/maintenance/work-orders",
        "staff",
        json!({"title": "x".repeat(201), "villaId": "not-a-uuid", "category": "ROOF",
               "priority": "SOON", "dueDate": "tomorrow", "description": 7}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        bad_fields(&body),
        [
            "title",
            "villaId",
            "category",
            "priority",
            "description",
            "dueDate"
        ]
    );
    let (status, body) = post(
        &app,
        "/maintenance/work-orders",
        "staff",
        json!({"title": "Leak", "villaId": Uuid::now_v7(), "category": "PLUMBING", "priority": "LOW"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "VILLA_NOT_FOUND");

    // An asset of another villa is refused.
    let (status, asset) = post(
        &app,
        "/maintenance/assets",
        "manager",
        json!({"name": "Pump", "category": "POOL", "villaId": other}),
    )
    .await;
    assert_eq!(status, 201, "{asset}");
    let (status, body) = post(
        &app,
        "/maintenance/work-orders",
        "staff",
        json!({"title": "Pump noise", "villaId": villa, "category": "POOL", "priority": "MEDIUM",
               "assetId": asset["id"]}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["assetId"]);

    let (status, created) = post(
        &app,
        "/maintenance/work-orders",
        "staff",
        json!({"title": " Leaking tap ", "villaId": villa, "category": "plumbing", "priority": "high",
               "description": "Kitchen tap drips", "dueDate": "2026-12-01T10:00:00+07:00"}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["title"], "Leaking tap");
    assert_eq!(created["status"], "OPEN");
    assert_eq!(created["category"], "PLUMBING");
    assert_eq!(created["priority"], "HIGH");
    assert_eq!(
        created["villa"],
        json!({"id": villa, "name": "Villa Maintenance"})
    );
    assert_eq!(created["assignee"], Value::Null);
    // The ids the request named (or left out), under the same names.
    assert_eq!(created["villaId"], villa.to_string());
    assert_eq!(created["assetId"], Value::Null);
    assert_eq!(created["assigneeId"], Value::Null);
    assert_eq!(created["createdBy"], "user-1");
    assert!(
        created["dueDate"]
            .as_str()
            .unwrap()
            .starts_with("2026-12-01T03:00:00")
    );
    assert_eq!(created["history"].as_array().unwrap().len(), 1);
    assert_eq!(created["history"][0]["to"], "OPEN");
    assert_eq!(created["totalHours"], 0);

    for i in 0..4 {
        work_order(&app, villa, &format!("job {i}")).await;
    }
    work_order(&app, other, "elsewhere").await;
    let (status, page) = get(
        &app,
        &format!("/maintenance/work-orders?villaId={villa}&status=OPEN&limit=2&page=2"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["pagination"],
        json!({"page": 2, "limit": 2, "total": 5})
    );
    assert_eq!(page["data"][0]["title"], "job 1", "newest first: {page}");
    assert_eq!(page["data"][0]["villaId"], villa.to_string());
    let (_, all) = get(&app, "/maintenance/work-orders", "viewer").await;
    assert_eq!(all["pagination"]["total"], 6);
    assert_eq!(all["data"][0]["title"], "elsewhere");
    let (_, beyond) = get(&app, "/maintenance/work-orders?page=9", "viewer").await;
    assert_eq!(beyond["data"], json!([]));
    for query in [
        "page=0",
        "limit=0",
        "limit=101",
        "limit=abc",
        "status=DONE",
        "priority=x",
        "category=ROOF",
        "villaId=42",
        "assigneeId=x",
    ] {
        let (status, body) =
            get(&app, &format!("/maintenance/work-orders?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_maintenance_error(&body, 400, "VALIDATION_ERROR");
    }

    let (status, body) = get(
        &app,
        &format!("/maintenance/work-orders/{}", Uuid::now_v7()),
        "viewer",
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "WORK_ORDER_NOT_FOUND");
    let (status, _) = get(&app, "/maintenance/work-orders/nope", "viewer").await;
    assert_eq!(status, 400);

    // Access: every role reads, viewers do not write, a token is needed.
    let (status, body) = post(
        &app,
        "/maintenance/work-orders",
        "viewer",
        json!({"title": "x", "villaId": villa, "category": "OTHER", "priority": "LOW"}),
    )
    .await;
    assert_eq!(status, 403);
    assert_maintenance_error(&body, 403, "FORBIDDEN");
    let res = app.get_anonymous("/maintenance/work-orders").await;
    assert_eq!(res.status(), 401);
}

/// From every status, every other status: the allowed moves succeed and are recorded, the others
/// are 409 INVALID_STATUS_TRANSITION naming the allowed next states.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_status_transition_is_allowed_or_refused_as_the_table_says(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = create_villa(&app, "Villa Transitions").await;
    let technician = staff_member(&app, "Wayan").await;
    let allowed = |from: &str| -> &'static [&'static str] {
        match from {
            "OPEN" => &["IN_PROGRESS", "CANCELLED"],
            "ASSIGNED" => &["IN_PROGRESS", "OPEN", "CANCELLED"],
            "IN_PROGRESS" => &["ON_HOLD", "COMPLETED", "CANCELLED"],
            "ON_HOLD" => &["IN_PROGRESS", "CANCELLED"],
            "COMPLETED" => &["IN_PROGRESS"],
            _ => &[],
        }
    };
    for from in STATUSES {
        // The detail says which moves it allows now, and what each needs.
        let id = work_order_in(&app, villa, &technician, from).await;
        let (_, detail) = get(&app, &format!("/maintenance/work-orders/{id}"), "viewer").await;
        let offered: Vec<(&str, Option<&str>)> = detail["nextStatuses"]
            .as_array()
            .unwrap_or_else(|| panic!("no nextStatuses in {detail}"))
            .iter()
            .map(|m| (m["status"].as_str().unwrap(), m["requires"].as_str()))
            .collect();
        let expected: Vec<(&str, Option<&str>)> = allowed(from)
            .iter()
            .map(|to| match (from, *to) {
                (_, "ON_HOLD") => (*to, Some("holdReason")),
                ("COMPLETED", _) => (*to, Some("reason")),
                _ => (*to, None),
            })
            .collect();
        assert_eq!(offered, expected, "from {from}");
        for to in STATUSES.iter().filter(|to| **to != from) {
            let id = work_order_in(&app, villa, &technician, from).await;
            let (status, body) = patch(
                &app,
                &format!("/maintenance/work-orders/{id}"),
                "manager",
                json!({"status": to, "holdReason": "parts", "reason": "leak came back",
                       "completionNotes": "washer replaced"}),
            )
            .await;
            if allowed(from).contains(to) {
                assert_eq!(status, 200, "{from} -> {to}: {body}");
                assert_eq!(body["status"], *to);
                let last = body["history"].as_array().unwrap().last().unwrap().clone();
                assert_eq!(last["from"], from);
                assert_eq!(last["to"], *to);
                assert_eq!(last["changedBy"], "user-1");
            } else {
                assert_eq!(status, 409, "{from} -> {to}: {body}");
                assert_maintenance_error(&body, 409, "INVALID_STATUS_TRANSITION");
                let message = body["error"]["message"].as_str().unwrap();
                for next in allowed(from) {
                    assert!(message.contains(next), "{message}");
                }
            }
        }
    }

    // What a move needs, and who may cancel.
    let id = work_order_in(&app, villa, &technician, "IN_PROGRESS").await;
    let path = format!("/maintenance/work-orders/{id}");
    let (status, body) = patch(&app, &path, "staff", json!({"status": "ON_HOLD"})).await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["holdReason"]);
    let (status, body) = patch(
        &app,
        &path,
        "staff",
        json!({"status": "ON_HOLD", "holdReason": "waiting for a part"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["holdReason"], "waiting for a part");
    let (status, body) = patch(&app, &path, "staff", json!({"status": "CANCELLED"})).await;
    assert_eq!(status, 403, "{body}");
    assert_maintenance_error(&body, 403, "FORBIDDEN");
    let (status, _) = patch(&app, &path, "staff", json!({"status": "IN_PROGRESS"})).await;
    assert_eq!(status, 200);
    let (status, body) = patch(
        &app,
        &path,
        "staff",
        json!({"status": "COMPLETED", "completionNotes": "new cartridge"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["completionNotes"], "new cartridge");
    assert!(body["completedAt"].is_string());
    let (status, body) = patch(&app, &path, "staff", json!({"status": "IN_PROGRESS"})).await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["reason"]);
    let (status, body) = patch(
        &app,
        &path,
        "staff",
        json!({"status": "IN_PROGRESS", "reason": "still dripping"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["completedAt"], Value::Null);
    let reopen = body["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(reopen["reason"], "still dripping");
    // The same status again changes nothing; fields change alone.
    let (status, body) = patch(
        &app,
        &path,
        "staff",
        json!({"status": "IN_PROGRESS", "priority": "URGENT", "title": "Tap, again"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["priority"], "URGENT");
    assert_eq!(body["title"], "Tap, again");
    let (status, body) = patch(&app, &path, "staff", json!({"title": "", "status": "DONE"})).await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["title", "status"]);

    // ASSIGNED back to OPEN takes it from its assignee.
    let id = work_order_in(&app, villa, &technician, "ASSIGNED").await;
    let (status, body) = patch(
        &app,
        &format!("/maintenance/work-orders/{id}"),
        "staff",
        json!({"status": "OPEN"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["assignee"], Value::Null);
    let (status, body) = patch(
        &app,
        &format!("/maintenance/work-orders/{}", Uuid::now_v7()),
        "staff",
        json!({"status": "IN_PROGRESS"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "WORK_ORDER_NOT_FOUND");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn assignment_to_technicians_and_vendors_and_comments(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = create_villa(&app, "Villa Assign").await;
    let technician = staff_member(&app, "Ketut").await;
    let plumber = vendor(&app, "Bali Plumbing", json!(["PLUMBING"])).await;
    let id = work_order(&app, villa, "Blocked drain").await;
    let path = format!("/maintenance/work-orders/{id}/assign");

    let (status, body) = post(&app, &path, "staff", json!({"assigneeType": "ROBOT"})).await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["assigneeId", "assigneeType"]);
    let (status, body) = post(
        &app,
        &path,
        "staff",
        json!({"assigneeId": Uuid::now_v7(), "assigneeType": "TECHNICIAN"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "STAFF_NOT_FOUND");
    let (status, body) = post(
        &app,
        &path,
        "staff",
        json!({"assigneeId": technician, "assigneeType": "VENDOR"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "VENDOR_NOT_FOUND");

    let (status, body) = post(
        &app,
        &path,
        "staff",
        json!({"assigneeId": technician, "assigneeType": "TECHNICIAN", "dueDate": "2026-12-24T09:00:00Z"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ASSIGNED");
    assert_eq!(body["assignee"]["id"], technician.as_str());
    assert_eq!(body["assignee"]["name"], "Ketut Tech");
    assert_eq!(body["assignee"]["type"], "TECHNICIAN");
    assert_eq!(body["assigneeId"], technician.as_str());
    assert_eq!(body["assigneeType"], "TECHNICIAN");
    assert_eq!(body["dueDate"], "2026-12-24T09:00:00+00:00");

    // In progress, it changes hands and keeps its state.
    patch(
        &app,
        &format!("/maintenance/work-orders/{id}"),
        "staff",
        json!({"status": "IN_PROGRESS"}),
    )
    .await;
    let (status, body) = post(
        &app,
        &path,
        "staff",
        json!({"assigneeId": plumber, "assigneeType": "VENDOR"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "IN_PROGRESS");
    assert_eq!(body["assignee"]["name"], "Bali Plumbing");
    assert_eq!(body["assigneeId"], plumber.as_str());
    assert_eq!(body["assigneeType"], "VENDOR");
    let (_, mine) = get(
        &app,
        &format!("/maintenance/work-orders?assigneeId={plumber}"),
        "viewer",
    )
    .await;
    assert_eq!(mine["pagination"]["total"], 1);
    assert_eq!(mine["data"][0]["assigneeId"], plumber.as_str());
    assert_eq!(mine["data"][0]["assigneeType"], "VENDOR");

    let done = work_order_in(&app, villa, &technician, "COMPLETED").await;
    let (status, body) = post(
        &app,
        &format!("/maintenance/work-orders/{done}/assign"),
        "staff",
        json!({"assigneeId": technician, "assigneeType": "TECHNICIAN"}),
    )
    .await;
    assert_eq!(status, 409);
    assert_maintenance_error(&body, 409, "INVALID_STATUS_TRANSITION");

    // Comments.
    let comments = format!("/maintenance/work-orders/{id}/comments");
    let (status, body) = post(
        &app,
        &comments,
        "staff",
        json!({"content": "Plumber on the way", "type": "internal"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["type"], "INTERNAL");
    assert_eq!(body["author"], "user-1");
    let (status, body) = post(&app, &comments, "staff", json!({"content": "Fixed"})).await;
    assert_eq!(status, 201);
    assert_eq!(body["type"], "PUBLIC");
    for bad in [
        json!({}),
        json!({"content": ""}),
        json!({"content": "x".repeat(5001)}),
        json!({"content": "ok", "type": "SECRET"}),
    ] {
        let (status, body) = post(&app, &comments, "staff", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    let (status, body) = post(
        &app,
        &format!("/maintenance/work-orders/{}/comments", Uuid::now_v7()),
        "staff",
        json!({"content": "x"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "WORK_ORDER_NOT_FOUND");
    let (_, order) = get(&app, &format!("/maintenance/work-orders/{id}"), "viewer").await;
    let texts: Vec<&str> = order["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Plumber on the way", "Fixed"]);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn assets_keep_every_health_reading_and_show_their_warranty(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = create_villa(&app, "Villa Assets").await;
    let (status, body) = post(
        &app,
        "/maintenance/assets",
        "manager",
        json!({"name": "", "category": "ROOF", "villaId": villa, "purchaseDate": "2026-02-30",
               "condition": "SHINY"}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        bad_fields(&body),
        ["name", "category", "purchaseDate", "condition"]
    );
    let (status, body) = post(
        &app,
        "/maintenance/assets",
        "manager",
        json!({"name": "AC", "category": "HVAC", "villaId": villa, "purchaseDate": "2026-05-01",
               "warrantyEndDate": "2026-04-01"}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["warrantyEndDate"]);
    let (status, body) = post(
        &app,
        "/maintenance/assets",
        "manager",
        json!({"name": "AC", "category": "HVAC", "villaId": Uuid::now_v7()}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "VILLA_NOT_FOUND");

    let today = chrono::Utc::now().date_naive();
    let in_ten_days = (today + chrono::Days::new(10)).to_string();
    let (status, ac) = post(
        &app,
        "/maintenance/assets",
        "manager",
        json!({"name": "Bedroom AC", "category": "hvac", "villaId": villa, "brand": "Daikin",
               "model": "FTKM", "serialNumber": "SN-1", "purchaseDate": "2025-01-01",
               "warrantyEndDate": in_ten_days}),
    )
    .await;
    assert_eq!(status, 201, "{ac}");
    assert_eq!(ac["warrantyStatus"], "ACTIVE");
    assert_eq!(ac["warrantyDaysLeft"], 10);
    assert_eq!(ac["healthScore"], Value::Null);
    assert_eq!(ac["openWorkOrders"], 0);
    let (_, expired) = post(
        &app,
        "/maintenance/assets",
        "manager",
        json!({"name": "Old pump", "category": "POOL", "villaId": villa, "warrantyEndDate": "2020-01-01"}),
    )
    .await;
    assert_eq!(expired["warrantyStatus"], "EXPIRED");
    assert_eq!(expired["warrantyDaysLeft"], Value::Null);
    let (_, none) = post(
        &app,
        "/maintenance/assets",
        "manager",
        json!({"name": "Gate", "category": "SECURITY", "villaId": villa, "condition": "GOOD"}),
    )
    .await;
    assert_eq!(none["warrantyStatus"], "NONE");

    let health = format!("/maintenance/assets/{}/health", ac["id"].as_str().unwrap());
    for bad in [
        json!({"healthScore": 101, "condition": "GOOD"}),
        json!({"healthScore": -1, "condition": "GOOD"}),
        json!({"healthScore": 50}),
        json!({"healthScore": "high", "condition": "BROKEN"}),
    ] {
        let (status, body) = patch(&app, &health, "staff", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    let (status, _) = patch(
        &app,
        &health,
        "staff",
        json!({"healthScore": 90, "condition": "EXCELLENT"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = patch(
        &app,
        &health,
        "staff",
        json!({"healthScore": 40, "condition": "poor", "notes": "compressor noisy"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["healthScore"], 40);
    assert_eq!(body["condition"], "POOR");
    let scores: Vec<i64> = body["healthHistory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["healthScore"].as_i64().unwrap())
        .collect();
    assert_eq!(scores, [40, 90], "newest first");
    let (status, body) = patch(
        &app,
        &format!("/maintenance/assets/{}/health", Uuid::now_v7()),
        "staff",
        json!({"healthScore": 1, "condition": "POOR"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "ASSET_NOT_FOUND");

    // Its open work orders are counted.
    let (status, service) = post(
        &app,
        "/maintenance/work-orders",
        "staff",
        json!({"title": "Service AC", "villaId": villa, "category": "HVAC", "priority": "LOW",
               "assetId": ac["id"]}),
    )
    .await;
    assert_eq!(status, 201, "{service}");
    assert_eq!(service["assetId"], ac["id"]);
    assert_eq!(service["asset"]["id"], ac["id"]);
    let (_, read) = get(
        &app,
        &format!("/maintenance/assets/{}", ac["id"].as_str().unwrap()),
        "viewer",
    )
    .await;
    assert_eq!(read["openWorkOrders"], 1);

    let (_, poor) = get(
        &app,
        &format!("/maintenance/assets?villaId={villa}&condition=POOR"),
        "viewer",
    )
    .await;
    assert_eq!(poor["pagination"]["total"], 1);
    let (_, hvac) = get(&app, "/maintenance/assets?category=HVAC&limit=1", "viewer").await;
    assert_eq!(
        hvac["pagination"],
        json!({"page": 1, "limit": 1, "total": 1})
    );
    let (status, _) = get(&app, "/maintenance/assets?condition=SHINY", "viewer").await;
    assert_eq!(status, 400);
    let (status, body) = get(
        &app,
        &format!("/maintenance/assets/{}", Uuid::now_v7()),
        "viewer",
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "ASSET_NOT_FOUND");
    let (status, _) = post(
        &app,
        "/maintenance/assets",
        "viewer",
        json!({"name": "x", "category": "HVAC", "villaId": villa}),
    )
    .await;
    assert_eq!(status, 403);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn vendors_are_rated_once_per_completed_work_order_and_averaged(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = create_villa(&app, "Villa Vendors").await;
    let (status, body) = post(
        &app,
        "/maintenance/vendors",
        "manager",
        json!({"companyName": "", "email": "not-an-email", "categories": [], "phone": "0812"}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        bad_fields(&body),
        ["companyName", "email", "categories", "phone"]
    );
    let (status, body) = post(
        &app,
        "/maintenance/vendors",
        "manager",
        json!({"companyName": "X", "email": "x@example.com", "categories": ["ROOFING"]}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["categories"]);

    let plumber = vendor(
        &app,
        "Bali Plumbing",
        json!(["plumbing", "WATER", "PLUMBING"]),
    )
    .await;
    let pools = vendor(&app, "Pool Pros", json!(["POOL"])).await;
    let (_, detail) = get(&app, &format!("/maintenance/vendors/{plumber}"), "viewer").await;
    assert_eq!(detail["categories"], json!(["PLUMBING", "WATER"]));
    assert_eq!(detail["phone"], "+66812345678");
    assert_eq!(
        detail["rating"],
        json!({"average": null, "quality": null, "timeliness": null, "communication": null,
               "value": null, "count": 0})
    );
    let (_, by_category) = get(&app, "/maintenance/vendors?category=POOL", "viewer").await;
    assert_eq!(by_category["pagination"]["total"], 1);
    assert_eq!(by_category["data"][0]["id"], pools.as_str());

    let ratings = format!("/maintenance/vendors/{plumber}/ratings");
    let rating = |order: &str, q: i64, t: i64, c: i64, v: i64| {
        json!({"workOrderId": order, "quality": q, "timeliness": t, "communication": c, "value": v,
               "comments": "good work"})
    };
    // Only for its own, completed work orders, once each; managers and admins only.
    let open = work_order(&app, villa, "Open job").await;
    let (status, body) = post(&app, &ratings, "manager", rating(&open, 5, 5, 5, 5)).await;
    assert_eq!(status, 409);
    assert_maintenance_error(&body, 409, "WORK_ORDER_NOT_ASSIGNED_TO_VENDOR");
    post(
        &app,
        &format!("/maintenance/work-orders/{open}/assign"),
        "staff",
        json!({"assigneeId": plumber, "assigneeType": "VENDOR"}),
    )
    .await;
    let (status, body) = post(&app, &ratings, "manager", rating(&open, 5, 5, 5, 5)).await;
    assert_eq!(status, 409);
    assert_maintenance_error(&body, 409, "WORK_ORDER_NOT_COMPLETED");

    let mut completed = Vec::new();
    for title in ["Job A", "Job B"] {
        let id = work_order(&app, villa, title).await;
        post(
            &app,
            &format!("/maintenance/work-orders/{id}/assign"),
            "staff",
            json!({"assigneeId": plumber, "assigneeType": "VENDOR"}),
        )
        .await;
        for status in ["IN_PROGRESS", "COMPLETED"] {
            let (code, body) = patch(
                &app,
                &format!("/maintenance/work-orders/{id}"),
                "staff",
                json!({"status": status}),
            )
            .await;
            assert_eq!(code, 200, "{body}");
        }
        completed.push(id);
    }
    let (status, body) = post(&app, &ratings, "staff", rating(&completed[0], 5, 4, 3, 2)).await;
    assert_eq!(status, 403, "{body}");
    for bad in [
        json!({"workOrderId": completed[0], "quality": 6, "timeliness": 0, "communication": "3", "value": 2.5}),
        json!({"quality": 5, "timeliness": 5, "communication": 5, "value": 5}),
    ] {
        let (status, body) = post(&app, &ratings, "manager", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    let (status, first) = post(&app, &ratings, "manager", rating(&completed[0], 5, 4, 3, 2)).await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["average"], 3.5);
    let (status, body) = post(&app, &ratings, "manager", rating(&completed[0], 1, 1, 1, 1)).await;
    assert_eq!(status, 409);
    assert_maintenance_error(&body, 409, "ALREADY_RATED");
    let (status, _) = post(&app, &ratings, "admin", rating(&completed[1], 4, 4, 4, 3)).await;
    assert_eq!(status, 201);
    let (status, body) = post(
        &app,
        &format!("/maintenance/vendors/{pools}/ratings"),
        "manager",
        rating(&completed[1], 4, 4, 4, 4),
    )
    .await;
    assert_eq!(status, 409, "another vendor's work order: {body}");
    let (status, body) = post(
        &app,
        &format!("/maintenance/vendors/{}/ratings", Uuid::now_v7()),
        "manager",
        rating(&completed[1], 4, 4, 4, 4),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "VENDOR_NOT_FOUND");

    let (_, detail) = get(&app, &format!("/maintenance/vendors/{plumber}"), "viewer").await;
    // (5+4+3+2)/4 = 3.5 and (4+4+4+3)/4 = 3.75: average 3.625 -> 3.63.
    assert_eq!(
        detail["rating"],
        json!({"average": 3.63, "quality": 4.5, "timeliness": 4.0, "communication": 3.5,
               "value": 2.5, "count": 2})
    );
    let (_, list) = get(&app, "/maintenance/vendors?category=PLUMBING", "viewer").await;
    assert_eq!(list["data"][0]["averageRating"], 3.63);
    let (status, body) = get(
        &app,
        &format!("/maintenance/vendors/{}", Uuid::now_v7()),
        "viewer",
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "VENDOR_NOT_FOUND");
    let (status, _) = get(&app, "/maintenance/vendors?category=ROOF", "viewer").await;
    assert_eq!(status, 400);
}

const EMERGENCY_STATUSES: [&str; 5] = [
    "REPORTED",
    "ACKNOWLEDGED",
    "RESPONDING",
    "CONTAINED",
    "RESOLVED",
];

async fn emergency(app: &TestApp, villa: Uuid) -> Value {
    let (status, body) = post(
        app,
        "/maintenance/emergencies",
        "staff",
        json!({"villaId": villa, "category": "WATER", "severity": "CRITICAL",
               "description": "Burst pipe flooding the kitchen", "location": "Kitchen"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body
}

/// An emergency opens its URGENT work order in the same transaction, moves forward only (every
/// pair of statuses tried), logs actions by staff members, and shows both in its timeline.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn emergencies_open_urgent_work_and_move_forward_only(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Emergency").await;
    let responder = staff_member(&app, "Putu").await;

    let (status, body) = post(
        &app,
        "/maintenance/emergencies",
        "staff",
        json!({"location": 5}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        bad_fields(&body),
        ["villaId", "category", "severity", "description", "location"]
    );
    let (status, body) = post(
        &app,
        "/maintenance/emergencies",
        "staff",
        json!({"villaId": Uuid::now_v7(), "category": "WATER", "severity": "HIGH", "description": "x"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "VILLA_NOT_FOUND");
    let orders_before: i64 = sqlx::query_scalar("SELECT count(*) FROM work_orders")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(orders_before, 0, "nothing is left of a refused report");

    let reported = emergency(&app, villa).await;
    assert_eq!(reported["status"], "REPORTED");
    assert_eq!(reported["severity"], "CRITICAL");
    let order_id = reported["workOrderId"].as_str().unwrap();
    let (_, order) = get(
        &app,
        &format!("/maintenance/work-orders/{order_id}"),
        "viewer",
    )
    .await;
    assert_eq!(order["priority"], "URGENT");
    assert_eq!(order["status"], "OPEN");
    assert_eq!(order["category"], "WATER");
    assert_eq!(order["emergencyId"], reported["id"]);
    assert_eq!(reported["timeline"][0]["to"], "REPORTED");

    let rank = |s: &str| EMERGENCY_STATUSES.iter().position(|x| *x == s).unwrap();
    for from in EMERGENCY_STATUSES {
        for to in EMERGENCY_STATUSES {
            let id = emergency(&app, villa).await["id"]
                .as_str()
                .unwrap()
                .to_owned();
            let path = format!("/maintenance/emergencies/{id}/status");
            if from != "REPORTED" {
                let (status, body) = patch(&app, &path, "staff", json!({"status": from})).await;
                assert_eq!(status, 200, "to {from}: {body}");
            }
            let (status, body) = patch(
                &app,
                &path,
                "staff",
                json!({"status": to, "notes": "on site"}),
            )
            .await;
            if rank(to) > rank(from) {
                assert_eq!(status, 200, "{from} -> {to}: {body}");
                assert_eq!(body["status"], to);
                let last = body["timeline"].as_array().unwrap().last().unwrap().clone();
                assert_eq!(last["from"], from);
                assert_eq!(last["to"], to);
                assert_eq!(last["notes"], "on site");
            } else {
                assert_eq!(status, 409, "{from} -> {to}: {body}");
                assert_maintenance_error(&body, 409, "INVALID_STATUS_TRANSITION");
            }
        }
    }
    let id = reported["id"].as_str().unwrap();
    let (status, body) = patch(
        &app,
        &format!("/maintenance/emergencies/{id}/status"),
        "staff",
        json!({"status": "CALM"}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["status"]);
    let (status, body) = patch(
        &app,
        &format!("/maintenance/emergencies/{}/status", Uuid::now_v7()),
        "staff",
        json!({"status": "RESOLVED"}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "EMERGENCY_NOT_FOUND");

    // Actions and the timeline in time order.
    let actions = format!("/maintenance/emergencies/{id}/actions");
    let (status, body) = post(
        &app,
        &actions,
        "staff",
        json!({"action": "", "performedBy": "someone"}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["action", "performedBy"]);
    let (status, body) = post(
        &app,
        &actions,
        "staff",
        json!({"action": "x".repeat(1001), "performedBy": responder}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = post(
        &app,
        &actions,
        "staff",
        json!({"action": "Closed the main valve", "performedBy": Uuid::now_v7()}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "STAFF_NOT_FOUND");
    let (status, action) = post(
        &app,
        &actions,
        "staff",
        json!({"action": "Closed the main valve", "performedBy": responder}),
    )
    .await;
    assert_eq!(status, 201, "{action}");
    assert_eq!(action["kind"], "ACTION");
    assert_eq!(action["performedBy"], responder.as_str());
    patch(
        &app,
        &format!("/maintenance/emergencies/{id}/status"),
        "staff",
        json!({"status": "CONTAINED"}),
    )
    .await;
    let (_, read) = get(&app, &format!("/maintenance/emergencies/{id}"), "viewer").await;
    let kinds: Vec<String> = read["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e["kind"].as_str().unwrap(),
                e["to"].as_str().or(e["action"].as_str()).unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "STATUS_CHANGE:REPORTED",
            "ACTION:Closed the main valve",
            "STATUS_CHANGE:CONTAINED"
        ]
    );
    let (status, body) = post(
        &app,
        &format!("/maintenance/emergencies/{}/actions", Uuid::now_v7()),
        "staff",
        json!({"action": "x", "performedBy": responder}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "EMERGENCY_NOT_FOUND");

    let (_, contained) = get(
        &app,
        &format!(
            "/maintenance/emergencies?status=CONTAINED&villaId={villa}&severity=CRITICAL&limit=100"
        ),
        "viewer",
    )
    .await;
    assert!(contained["pagination"]["total"].as_i64().unwrap() >= 1);
    assert!(
        contained["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["status"] == "CONTAINED")
    );
    let (status, _) = get(&app, "/maintenance/emergencies?severity=EXTREME", "viewer").await;
    assert_eq!(status, 400);
    let (status, _) = post(
        &app,
        "/maintenance/emergencies",
        "viewer",
        json!({"villaId": villa, "category": "WATER", "severity": "LOW", "description": "x"}),
    )
    .await;
    assert_eq!(status, 403);
}

/// Timesheets: quarter hours, no future dates, a villa for unplanned work, totals beside the page,
/// and never more than 24 hours per person and date, even when entries race.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn timesheets_cap_a_persons_day_at_24_hours(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = create_villa(&app, "Villa Hours").await;
    let technician = staff_member(&app, "Komang").await;
    let order = work_order(&app, villa, "Fix the gate").await;
    let today = chrono::Utc::now().date_naive();
    let tomorrow = today + chrono::Days::new(1);

    let (status, body) = post(&app, "/maintenance/timesheets", "staff", json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(
        bad_fields(&body),
        ["hours", "activityType", "date", "villaId"]
    );
    for (bad, field) in [
        (
            json!({"hours": 0, "activityType": "REPAIR", "date": today, "workOrderId": order}),
            "hours",
        ),
        (
            json!({"hours": 1.3, "activityType": "REPAIR", "date": today, "workOrderId": order}),
            "hours",
        ),
        (
            json!({"hours": 24.25, "activityType": "REPAIR", "date": today, "workOrderId": order}),
            "hours",
        ),
        (
            json!({"hours": 1, "activityType": "NAPPING", "date": today, "workOrderId": order}),
            "activityType",
        ),
        (
            json!({"hours": 1, "activityType": "REPAIR", "date": tomorrow, "workOrderId": order}),
            "date",
        ),
        (
            json!({"hours": 1, "activityType": "REPAIR", "date": today, "workOrderId": "x"}),
            "workOrderId",
        ),
    ] {
        let (status, body) = post(&app, "/maintenance/timesheets", "staff", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(bad_fields(&body), [field], "{bad}");
    }
    let (status, body) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        json!({"hours": 1, "activityType": "REPAIR", "date": today, "workOrderId": Uuid::now_v7()}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "WORK_ORDER_NOT_FOUND");
    let (status, body) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        json!({"hours": 1, "activityType": "REPAIR", "date": today, "workOrderId": order,
               "staffId": Uuid::now_v7()}),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "STAFF_NOT_FOUND");

    let (status, entry) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        json!({"hours": 2.5, "activityType": "repair", "date": today, "workOrderId": order,
               "staffId": technician, "notes": "new hinge"}),
    )
    .await;
    assert_eq!(status, 201, "{entry}");
    assert_eq!(entry["hours"], 2.5);
    assert_eq!(entry["villaId"], villa.to_string());
    assert_eq!(entry["loggedBy"], "user-1");
    // Unplanned work on a villa.
    let (status, _) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        json!({"hours": 1.5, "activityType": "INSPECTION", "date": today, "villaId": villa,
               "staffId": technician}),
    )
    .await;
    assert_eq!(status, 201);

    // 20 more for the technician's day at 1 hour each, at once: exactly 20 fit (4 already).
    let racing = (0..24).map(|_| {
        let app = &app;
        let technician = technician.clone();
        async move {
            post(
                app,
                "/maintenance/timesheets",
                "staff",
                json!({"hours": 1, "activityType": "REPAIR", "date": today, "villaId": villa,
                       "staffId": technician}),
            )
            .await
        }
    });
    let answers = futures::future::join_all(racing).await;
    let accepted = answers.iter().filter(|(s, _)| *s == 201).count();
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == 409)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(accepted, 20, "{answers:?}");
    assert_eq!(refused.len(), 4);
    for body in refused {
        assert_maintenance_error(body, 409, "DAILY_HOURS_EXCEEDED");
    }
    // Another day, or another person, is not capped by this one.
    let (status, _) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        json!({"hours": 8, "activityType": "TRAVEL", "date": today - chrono::Days::new(1),
               "villaId": villa, "staffId": technician}),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        json!({"hours": 8, "activityType": "TRAVEL", "date": today, "villaId": villa}),
    )
    .await;
    assert_eq!(status, 201, "the token's subject has a day of its own");

    let (_, day) = get(
        &app,
        &format!(
            "/maintenance/timesheets?staffId={technician}&startDate={today}&endDate={today}&limit=5"
        ),
        "viewer",
    )
    .await;
    assert_eq!(day["totalHours"], 24.0);
    assert_eq!(day["pagination"]["total"], 22);
    assert_eq!(day["data"].as_array().unwrap().len(), 5);
    let (_, on_order) = get(
        &app,
        &format!("/maintenance/timesheets?workOrderId={order}"),
        "viewer",
    )
    .await;
    assert_eq!(on_order["totalHours"], 2.5);
    let (_, read) = get(&app, &format!("/maintenance/work-orders/{order}"), "viewer").await;
    assert_eq!(read["totalHours"], 2.5);
    assert_eq!(read["timesheets"][0]["notes"], "new hinge");
    for query in ["startDate=yesterday", "staffId=x", "limit=500"] {
        let (status, _) = get(&app, &format!("/maintenance/timesheets?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}");
    }
    let (status, _) = post(
        &app,
        "/maintenance/timesheets",
        "viewer",
        json!({"hours": 1, "activityType": "REPAIR", "date": today, "villaId": villa}),
    )
    .await;
    assert_eq!(status, 403);
}

/// A WAV file: a RIFF header and a second of silence.
fn wav() -> Vec<u8> {
    let data = vec![0u8; 8000];
    let mut out = Vec::new();
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&8000u32.to_le_bytes());
    out.extend_from_slice(&8000u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&8u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&data);
    out
}

async fn note(app: &TestApp, form: reqwest::multipart::Form) -> (u16, Value) {
    tests::json(
        app.request(Method::POST, "/maintenance/field-notes", Some("staff"))
            .multipart(form)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Text, voice and photo notes: checked by content, answered at once, their files in the villa's
/// Maintenance/Field-Notes folder with their bytes intact, served by fileUrl.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn field_notes_reach_the_document_store_with_their_bytes(pool: PgPool) {
    use reqwest::multipart::{Form, Part};
    let app = TestApp::spawn(pool).await;
    let _worker = app.worker(
        jobs::JobRegistry::new()
            .register::<jobs::documents::CreateVillaTree>()
            .register::<jobs::documents::StoreFieldNote>(),
    );
    let villa = create_villa(&app, "Villa Notes").await;
    let order = work_order(&app, villa, "Pump noise").await;
    let file = |name: &str, bytes: Vec<u8>| Part::bytes(bytes).file_name(name.to_owned());

    for (form, fields) in [
        (
            Form::new().text("workOrderId", order.clone()),
            vec!["content"],
        ),
        (Form::new().text("content", "x"), vec!["workOrderId"]),
        (
            Form::new()
                .text("type", "VOICE")
                .text("workOrderId", order.clone()),
            vec!["file"],
        ),
        (
            Form::new()
                .text("type", "VOICE")
                .text("workOrderId", order.clone())
                .part("file", file("note.mp3", b"%PDF-1.7 not audio".to_vec())),
            vec!["file"],
        ),
        (
            Form::new()
                .text("type", "DOODLE")
                .text("workOrderId", "nope")
                .text("content", "x"),
            vec!["type", "workOrderId"],
        ),
    ] {
        let (status, body) = note(&app, form).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(bad_fields(&body), fields, "{body}");
    }
    let (status, body) = note(
        &app,
        Form::new()
            .text("content", "x")
            .text("workOrderId", Uuid::now_v7().to_string()),
    )
    .await;
    assert_eq!(status, 404);
    assert_maintenance_error(&body, 404, "WORK_ORDER_NOT_FOUND");

    let (status, text) = note(
        &app,
        Form::new()
            .text("content", "Pump bearing sounds worn")
            .text("workOrderId", order.clone()),
    )
    .await;
    assert_eq!(status, 201, "{text}");
    assert_eq!(text["type"], "TEXT");
    assert_eq!(text["fileUrl"], Value::Null);

    let audio = wav();
    let (status, voice) = note(
        &app,
        Form::new()
            .text("type", "voice")
            .text("workOrderId", order.clone())
            .part("file", file("pump noise.wav", audio.clone())),
    )
    .await;
    assert_eq!(status, 201, "{voice}");
    assert_eq!(voice["mimeType"], "audio/wav");
    assert_eq!(voice["storageStatus"], "PENDING");
    let path = voice["storagePath"].as_str().unwrap().to_owned();
    assert!(
        path.starts_with("Villas/") && path.ends_with("/Maintenance/Field-Notes/pump-noise.wav"),
        "{path}"
    );
    let served = app
        .request(
            Method::GET,
            voice["fileUrl"].as_str().unwrap(),
            Some("viewer"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), 200);
    assert_eq!(served.headers()["content-type"], "audio/wav");
    assert_eq!(served.bytes().await.unwrap().to_vec(), audio);

    let png = {
        let img = image::RgbImage::from_pixel(16, 16, image::Rgb([30, 60, 90]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    };
    let (status, photo) = note(
        &app,
        Form::new()
            .text("type", "PHOTO")
            .text("workOrderId", order.clone())
            .part("file", file("seal.bin", png.clone())),
    )
    .await;
    assert_eq!(status, 201, "{photo}");
    assert_eq!(photo["mimeType"], "image/png");

    let id = voice["id"].as_str().unwrap().to_owned();
    let stored = tests::eventually(std::time::Duration::from_secs(20), || async {
        let (_, page) = get(
            &app,
            &format!("/maintenance/field-notes?workOrderId={order}"),
            "viewer",
        )
        .await;
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id.as_str() && n["storageStatus"] == "STORED")
            .cloned()
    })
    .await
    .expect("the voice note never reached the store");
    assert!(stored["storageUrl"].is_string());
    let on_disk = tokio::fs::read(app.core.storage_local_dir.join(&path))
        .await
        .unwrap();
    assert_eq!(on_disk, audio, "the bytes in the store are the bytes sent");
    // Still served once stored (from the store now).
    let served = app
        .request(
            Method::GET,
            &format!("/maintenance/field-notes/{id}/file"),
            Some("viewer"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(served.bytes().await.unwrap().to_vec(), audio);
    let (_, page) = get(
        &app,
        &format!("/maintenance/field-notes?workOrderId={order}"),
        "viewer",
    )
    .await;
    assert_eq!(page["pagination"]["total"], 3);
    let (status, _) = get(
        &app,
        &format!(
            "/maintenance/field-notes/{}/file",
            text["id"].as_str().unwrap()
        ),
        "viewer",
    )
    .await;
    assert_eq!(status, 404, "a TEXT note has no file");
    let (status, _) = get(&app, "/maintenance/field-notes?assetId=x", "viewer").await;
    assert_eq!(status, 400);
}

/// "Today" is the company's day (`BUSINESS_TIME_ZONE`), not UTC's: the zone is picked so that
/// its date differs from UTC's at the moment the test runs (UTC+14 late in the UTC day, UTC-11
/// early in it). And one person's 24 hours are one budget whether the entry names the staff
/// member or comes from that person's own token (the staff member's `identitySubject`).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn timesheets_use_the_business_day_and_one_budget_per_person(pool: PgPool) {
    use chrono::Timelike as _;
    let now = chrono::Utc::now();
    let (zone, local_offset_days): (&str, i64) = if now.hour() >= 10 {
        ("Pacific/Kiritimati", 1)
    } else {
        ("Pacific/Pago_Pago", -1)
    };
    let app = TestApp::spawn_with(
        pool,
        tests::TestAppOptions {
            business_time_zone: zone.parse().unwrap(),
            ..Default::default()
        },
    )
    .await;
    let villa = create_villa(&app, "Villa Zone").await;
    let utc_today = now.date_naive();
    let local_today = utc_today + chrono::TimeDelta::days(local_offset_days);
    let entry = |date: chrono::NaiveDate, hours: u32, staff: Option<&str>| json!({"hours": hours, "activityType": "REPAIR", "date": date, "villaId": villa, "staffId": staff});
    // The later of the two dates is in the future for the company only if it is not its today.
    let (status, body) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        entry(local_today, 1, None),
    )
    .await;
    assert_eq!(status, 201, "the company's today is accepted: {body}");
    if local_offset_days < 0 {
        let (status, body) = post(
            &app,
            "/maintenance/timesheets",
            "staff",
            entry(utc_today, 1, None),
        )
        .await;
        assert_eq!(
            status, 400,
            "UTC's today is tomorrow for the company: {body}"
        );
        assert_eq!(bad_fields(&body), ["date"]);
    }

    // The token's subject is linked to a staff member: both ways of logging share the budget.
    let (status, member) = post(
        &app,
        "/management/staff",
        "manager",
        json!({"firstName": "Wayan", "lastName": "S", "defaultRole": "MAINTENANCE_TECHNICIAN"}),
    )
    .await;
    assert_eq!(status, 201, "{member}");
    assert!(member["identitySubject"].is_null());
    // An existing staff member is linked to their login afterwards; a login is one person's.
    let staff = member["id"].as_str().unwrap();
    let (status, member) = patch(
        &app,
        &format!("/management/staff/{staff}"),
        "manager",
        json!({"identitySubject": "user-1", "phone": "+62 812 3456 7890"}),
    )
    .await;
    assert_eq!(status, 200, "{member}");
    assert_eq!(
        (
            member["identitySubject"].as_str(),
            member["phone"].as_str(),
            member["firstName"].as_str()
        ),
        (Some("user-1"), Some("+6281234567890"), Some("Wayan"))
    );
    let (status, other) = post(&app, "/management/staff", "manager",
        json!({"firstName": "Other", "defaultRole": "GARDENER", "lastName": "X", "identitySubject": "user-1"})).await;
    assert_eq!(status, 400, "{other}");
    let day = local_today - chrono::TimeDelta::days(1);
    let (status, body) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        entry(day, 20, Some(staff)),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        entry(day, 4, None),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body["staffId"], staff,
        "the entry from the person's token is theirs"
    );
    let (status, body) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        entry(day, 1, None),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "DAILY_HOURS_EXCEEDED");
    let (status, body) = post(
        &app,
        "/maintenance/timesheets",
        "staff",
        entry(day, 1, Some(staff)),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = get(
        &app,
        &format!("/maintenance/timesheets?staffId={staff}"),
        "manager",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["pagination"]["total"], 2);
    assert_eq!(body["totalHours"], json!(24.0));
}

/// `dueFrom` and `dueTo` are the company's days: a work order due at 01:00 in Makassar on the 2nd
/// (17:00 UTC on the 1st) is due on the 2nd.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn work_orders_filter_by_due_day_in_the_company_s_zone(pool: PgPool) {
    let app = TestApp::spawn_with(
        pool,
        tests::TestAppOptions {
            business_time_zone: "Asia/Makassar".parse().unwrap(),
            ..Default::default()
        },
    )
    .await;
    let villa = create_villa(&app, "Villa Due").await;
    for (title, due) in [
        ("late on the 1st", Some("2026-12-01T15:30:00Z")),
        ("early on the 2nd", Some("2026-12-01T17:00:00Z")),
        ("on the 3rd", Some("2026-12-03T04:00:00Z")),
        ("no due date", None),
    ] {
        let mut body =
            json!({"title": title, "villaId": villa, "category": "PLUMBING", "priority": "LOW"});
        if let Some(due) = due {
            body["dueDate"] = json!(due);
        }
        let (status, created) = post(&app, "/maintenance/work-orders", "staff", body).await;
        assert_eq!(status, 201, "{created}");
    }
    let listed = |query: &'static str| {
        let app = &app;
        async move {
            let (status, page) =
                get(app, &format!("/maintenance/work-orders?{query}"), "viewer").await;
            assert_eq!(status, 200, "{query}: {page}");
            let mut found: Vec<String> = page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["title"].as_str().unwrap().to_owned())
                .collect();
            found.sort();
            found
        }
    };
    assert_eq!(
        listed("dueFrom=2026-12-02&dueTo=2026-12-02").await,
        ["early on the 2nd"]
    );
    assert_eq!(listed("dueTo=2026-12-01").await, ["late on the 1st"]);
    assert_eq!(
        listed("dueFrom=2026-12-02").await,
        ["early on the 2nd", "on the 3rd"]
    );
    for (query, field) in [
        ("dueFrom=2026-13-01", "dueFrom"),
        ("dueFrom=2026-12-03&dueTo=2026-12-02", "dueTo"),
    ] {
        let (status, body) =
            get(&app, &format!("/maintenance/work-orders?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(bad_fields(&body), [field], "{query}");
    }
}
