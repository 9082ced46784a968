//! Planned maintenance: templates, schedules, and the generation job that turns occurrences into
//! work orders, once each, whatever the number of runs and workers.

use std::time::Duration;

use chrono::{Days, Months, NaiveDate, Utc};
use jobs::{Job, JobRegistry, maintenance::GeneratePlannedWork};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, eventually};
use uuid::Uuid;

use crate::maintenance::staff_member;
use crate::management_villas::{create_villa, send};

const POOL_PUMP: &str = "019a0000-0000-7000-8000-000000000001";

fn registry() -> JobRegistry {
    JobRegistry::new().register::<GeneratePlannedWork>()
}

async fn asset(app: &TestApp, villa: Uuid, name: &str) -> String {
    let (status, body) = send(
        app,
        Method::POST,
        "/maintenance/assets",
        "manager",
        Some(json!({"name": name, "category": "POOL", "villaId": villa})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

async fn schedule(app: &TestApp, body: Value) -> Value {
    let (status, answer) = send(
        app,
        Method::POST,
        "/maintenance/pmp/schedules",
        "staff",
        Some(body),
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    answer
}

/// The occurrence dates of a schedule's work orders, in order.
async fn occurrences(pool: &PgPool, schedule: &str) -> Vec<NaiveDate> {
    sqlx::query_scalar(
        "SELECT occurrence_date FROM work_orders WHERE schedule_id = $1::uuid ORDER BY occurrence_date",
    )
    .bind(schedule)
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn generate(pool: &PgPool) -> u64 {
    let mut conn = pool.acquire().await.unwrap();
    let until = Utc::now().date_naive() + Days::new(7);
    domain::maintenance::pmp::generate(&mut conn, until, None)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn templates_ship_a_starting_set_and_managers_add_more(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (status, page) = send(
        &app,
        Method::GET,
        "/maintenance/pmp/templates?limit=100",
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let names: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "Pool pump service",
        "AC filter cleaning",
        "Generator test",
        "Water tank cleaning",
        "Pest control treatment",
        "Fire extinguisher check",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let pump = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == POOL_PUMP)
        .unwrap();
    assert_eq!(pump["defaultFrequency"], "MONTHLY");
    assert!(pump["checklist"].as_array().unwrap().len() >= 3);
    assert_eq!(pump["builtin"], true);

    let body = json!({"name": "Solar panel cleaning", "category": "ELECTRICAL", "priority": "LOW",
                      "defaultFrequency": "QUARTERLY", "estimatedHours": 2.5,
                      "checklist": ["Rinse panels", "Check inverter log"]});
    let (status, _) = send(
        &app,
        Method::POST,
        "/maintenance/pmp/templates",
        "staff",
        Some(body.clone()),
    )
    .await;
    assert_eq!(status, 403, "staff do not add templates");
    let (status, created) = send(
        &app,
        Method::POST,
        "/maintenance/pmp/templates",
        "manager",
        Some(body.clone()),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        created["checklist"],
        json!(["Rinse panels", "Check inverter log"])
    );
    assert_eq!(created["estimatedHours"], 2.5);
    assert_eq!(created["builtin"], false);
    let (status, dup) = send(
        &app,
        Method::POST,
        "/maintenance/pmp/templates",
        "manager",
        Some(body),
    )
    .await;
    assert_eq!(status, 400, "{dup}");
    assert_eq!(dup["error"]["fields"][0]["field"], "name");
    let (status, bad) = send(
        &app,
        Method::POST,
        "/maintenance/pmp/templates",
        "manager",
        Some(
            json!({"name": "", "category": "X", "priority": "SOMEDAY", "defaultFrequency": "HOURLY",
                    "estimatedHours": -1, "checklist": ["ok", ""]}),
        ),
    )
    .await;
    assert_eq!(status, 400);
    let fields: Vec<&str> = bad["error"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "name",
            "category",
            "priority",
            "defaultFrequency",
            "estimatedHours",
            "checklist[1]"
        ]
    );
    let (_, page) = send(
        &app,
        Method::GET,
        "/maintenance/pmp/templates?limit=1&page=2",
        "viewer",
        None,
    )
    .await;
    assert_eq!(page["pagination"]["limit"], 1);
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
}

/// A schedule starting today has its first work order within seconds of its creation, built from
/// its template and asset, assigned to the schedule's assignee.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_schedule_starting_today_gets_its_work_order_within_seconds(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker = app.worker(registry());
    let villa = create_villa(&app, "Villa Planned").await;
    let pump = asset(&app, villa, "Main pool pump").await;
    let technician = staff_member(&app, "Gede").await;
    let today = Utc::now().date_naive();

    for (bad, field) in [
        (
            json!({"templateId": Uuid::now_v7(), "assetId": pump, "startDate": today}),
            "TEMPLATE_NOT_FOUND",
        ),
        (
            json!({"templateId": POOL_PUMP, "assetId": Uuid::now_v7(), "startDate": today}),
            "ASSET_NOT_FOUND",
        ),
        (
            json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": today, "assigneeId": Uuid::now_v7()}),
            "STAFF_NOT_FOUND",
        ),
    ] {
        let (status, body) = send(
            &app,
            Method::POST,
            "/maintenance/pmp/schedules",
            "staff",
            Some(bad),
        )
        .await;
        assert_eq!(status, 404, "{body}");
        assert_eq!(body["error"]["code"], field);
    }
    let (status, body) = send(
        &app,
        Method::POST,
        "/maintenance/pmp/schedules",
        "staff",
        Some(json!({"templateId": "x", "startDate": "2026-13-01", "frequency": "HOURLY", "basis": "WHENEVER"})),
    )
    .await;
    assert_eq!(status, 400);
    let fields: Vec<&str> = body["error"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["templateId", "assetId", "startDate", "frequency", "basis"]
    );

    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": today, "assigneeId": technician}),
    )
    .await;
    assert_eq!(created["frequency"], "MONTHLY", "the template's default");
    assert_eq!(created["basis"], "SCHEDULED_DATE");
    assert_eq!(created["nextDueDate"], today.to_string());
    let id = created["id"].as_str().unwrap().to_owned();
    let started = std::time::Instant::now();
    let order = eventually(Duration::from_secs(10), || async {
        let (_, page) = send(
            &app,
            Method::GET,
            &format!("/maintenance/work-orders?scheduleId={id}"),
            "viewer",
            None,
        )
        .await;
        page["data"].as_array().unwrap().first().cloned()
    })
    .await
    .expect("no work order generated");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let (_, order) = send(
        &app,
        Method::GET,
        &format!("/maintenance/work-orders/{}", order["id"].as_str().unwrap()),
        "viewer",
        None,
    )
    .await;
    assert_eq!(order["title"], "Pool pump service");
    assert_eq!(order["category"], "POOL");
    assert_eq!(order["priority"], "MEDIUM");
    assert_eq!(order["villaId"], villa.to_string());
    assert_eq!(order["asset"]["id"], pump.as_str());
    assert_eq!(order["status"], "ASSIGNED");
    assert_eq!(order["assignee"]["id"], technician.as_str());
    assert_eq!(order["scheduleId"], id.as_str());
    assert_eq!(order["occurrenceDate"], today.to_string());
    assert!(
        order["dueDate"]
            .as_str()
            .unwrap()
            .starts_with(&today.to_string())
    );
    let (_, read) = send(
        &app,
        Method::GET,
        &format!("/maintenance/pmp/schedules/{id}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(read["workOrders"], 1);
    let next = today.checked_add_months(Months::new(1)).unwrap();
    assert_eq!(read["nextDueDate"], next.to_string());
    let (_, list) = send(
        &app,
        Method::GET,
        "/maintenance/pmp/schedules",
        "viewer",
        None,
    )
    .await;
    assert_eq!(list["pagination"]["total"], 1);
    let (status, body) = send(
        &app,
        Method::GET,
        &format!("/maintenance/pmp/schedules/{}", Uuid::now_v7()),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "SCHEDULE_NOT_FOUND");
}

/// Two workers running the generation at once, then another after a restart, still leave
/// exactly one work order for the occurrence (a unique index, not a check before insert).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn generation_creates_one_work_order_per_occurrence_however_often_it_runs(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Twice").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = Utc::now().date_naive();
    // No worker yet: the generation the creation enqueued waits in the queue.
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": today, "frequency": "MONTHLY"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let mut jobs = Vec::new();
    for tick in ["a", "b", "c"] {
        let mut tx = pool.begin().await.unwrap();
        let enqueued = GeneratePlannedWork {
            tick: Some(format!("test-{tick}")),
            schedule_id: None,
        }
        .enqueue(&mut tx)
        .await
        .unwrap();
        tx.commit().await.unwrap();
        app.queues.push(&[enqueued]).await;
        jobs.push(enqueued.id);
    }
    let first = app.worker(registry());
    let second = app.worker(registry());
    let all_done = eventually(Duration::from_secs(20), || async {
        let done: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM jobs WHERE kind = 'maintenance.generate_planned_work' AND status = 'SUCCEEDED'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        (done == 4).then_some(())
    })
    .await;
    assert!(
        all_done.is_some(),
        "the four generation runs did not all succeed"
    );
    assert_eq!(occurrences(&pool, &id).await, [today]);
    first.shutdown().await;
    second.shutdown().await;

    // After a restart, a new worker and a new tick: nothing more.
    let _third = app.worker(registry());
    let mut tx = pool.begin().await.unwrap();
    let again = GeneratePlannedWork {
        tick: Some("test-after-restart".into()),
        schedule_id: None,
    }
    .enqueue(&mut tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    app.queues.push(&[again]).await;
    let result = eventually(Duration::from_secs(20), || async {
        sqlx::query_scalar::<_, Value>(
            "SELECT result FROM jobs WHERE id = $1 AND status = 'SUCCEEDED'",
        )
        .bind(again.id)
        .fetch_optional(&pool)
        .await
        .unwrap()
    })
    .await
    .expect("the run after the restart did not finish");
    assert_eq!(result["created"], 0);
    assert_eq!(occurrences(&pool, &id).await, [today]);
    let history: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM work_order_history h JOIN work_orders w ON w.id = h.work_order_id WHERE w.schedule_id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(history, 1);
}

/// A MONTHLY schedule started 40 days ago, with a lead of 7 days, has exactly the occurrences due
/// by then: its start and a month later (the next is about 20 days away).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_monthly_schedule_started_40_days_ago_has_the_occurrences_due(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Monthly").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = Utc::now().date_naive();
    let start = today - Days::new(40);
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start, "frequency": "MONTHLY"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(generate(&pool).await, 2);
    let second = start.checked_add_months(Months::new(1)).unwrap();
    assert_eq!(occurrences(&pool, &id).await, [start, second]);
    assert_eq!(generate(&pool).await, 0, "a second run creates nothing");
    let (_, read) = send(
        &app,
        Method::GET,
        &format!("/maintenance/pmp/schedules/{id}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(
        read["nextDueDate"],
        start
            .checked_add_months(Months::new(2))
            .unwrap()
            .to_string()
    );
}

/// A COMPLETED_DATE schedule waits for its work order to be completed; the next occurrence
/// counts from the completion.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_completed_date_schedule_waits_for_completion(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Completion").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = Utc::now().date_naive();
    let start = today - Days::new(20);
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start, "frequency": "WEEKLY",
               "basis": "COMPLETED_DATE"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(generate(&pool).await, 1);
    assert_eq!(
        generate(&pool).await,
        0,
        "waits: the first is not completed"
    );
    assert_eq!(occurrences(&pool, &id).await, [start]);
    let (_, read) = send(
        &app,
        Method::GET,
        &format!("/maintenance/pmp/schedules/{id}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(
        read["nextDueDate"],
        start.to_string(),
        "the open occurrence"
    );

    let order: Uuid = sqlx::query_scalar("SELECT id FROM work_orders WHERE schedule_id = $1::uuid")
        .bind(&id)
        .fetch_one(&pool)
        .await
        .unwrap();
    for status in ["IN_PROGRESS", "COMPLETED"] {
        let (code, body) = send(
            &app,
            Method::PATCH,
            &format!("/maintenance/work-orders/{order}"),
            "staff",
            Some(json!({"status": status})),
        )
        .await;
        assert_eq!(code, 200, "{body}");
    }
    let next = today + Days::new(7);
    let (_, read) = send(
        &app,
        Method::GET,
        &format!("/maintenance/pmp/schedules/{id}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(read["nextDueDate"], next.to_string());
    assert_eq!(
        generate(&pool).await,
        1,
        "completed: the next one, a week from today"
    );
    assert_eq!(occurrences(&pool, &id).await, [start, next]);
    assert_eq!(generate(&pool).await, 0);
}
