//! Planned maintenance: templates, schedules, and the generation job that turns occurrences into
//! work orders, once each, whatever the number of runs and workers; missed occurrences only
//! within PM_CATCH_UP_DAYS; "today" the company's day.

use std::time::Duration;

use chrono::{Days, Months, NaiveDate, Utc};
use domain::{clock::BusinessZone, maintenance::pmp::Window};
use jobs::{Job, JobRegistry, maintenance::GeneratePlannedWork};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestWorker, eventually};
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

/// The window a generation run of this app covers today (catch-up 31 days, lead 7).
fn window(app: &TestApp) -> Window {
    let pm = &app.core.planned_maintenance;
    Window::new(
        app.core.business_time_zone.today(),
        pm.catch_up_days,
        pm.lead_days,
    )
}

async fn generate(app: &TestApp) -> u64 {
    let mut conn = app.pool.acquire().await.unwrap();
    domain::maintenance::pmp::generate(&mut conn, window(app), None)
        .await
        .unwrap()
}

/// The fields a 400 names, in order.
fn fields(body: &Value) -> Vec<&str> {
    body["error"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect()
}

/// The result of the first generation job that succeeded, once one has.
async fn generation_result(pool: &PgPool) -> Option<Value> {
    eventually(Duration::from_secs(20), || async move {
        sqlx::query_scalar::<_, Value>(
            "SELECT result FROM jobs WHERE kind = 'maintenance.generate_planned_work' AND status = 'SUCCEEDED'
             ORDER BY finished_at LIMIT 1",
        )
        .fetch_optional(pool)
        .await
        .unwrap()
    })
    .await
}

/// Holds every generation run at the point where it inserts work orders: a SHARE lock on
/// `work_orders` lets a run read (and so check what exists) but not insert, until the returned
/// transaction ends. Any implementation has to pass there.
async fn hold_inserts(pool: &PgPool) -> sqlx::Transaction<'static, sqlx::Postgres> {
    let mut gate = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE work_orders IN SHARE MODE")
        .execute(&mut *gate)
        .await
        .unwrap();
    gate
}

/// Waits until `runs` sessions of this test's database (its own) wait for a lock: the runs are
/// all in flight, held at the same moment.
async fn wait_until_held(pool: &PgPool, runs: i64) {
    let held = eventually(Duration::from_secs(10), || async move {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE NOT l.granted AND a.datname = current_database()",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        (waiting >= runs).then_some(())
    })
    .await;
    assert!(
        held.is_some(),
        "fewer than {runs} generation runs reached the held point"
    );
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
    let today = app.core.business_time_zone.today();

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
    assert_eq!(order["source"], "PLANNED");
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

/// Four generation jobs on two workers, held at the same point and released together, then
/// another after a restart, still leave exactly one work order per occurrence (a unique index,
/// not a check before insert).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn generation_creates_one_work_order_per_occurrence_however_often_it_runs(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Twice").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = app.core.business_time_zone.today();
    let start = today - Days::new(3);
    // Daily from 3 days back to today + 7 (the lead).
    let expected: Vec<NaiveDate> = (0..11).map(|d| start + Days::new(d)).collect();
    // No worker yet: the generation the creation enqueued waits in the queue.
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start, "frequency": "DAILY"}),
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
    // The runs are held where they insert until at least two of them are in flight at once, so
    // that they overlap for certain instead of by chance.
    let gate = hold_inserts(&pool).await;
    let first = app.worker(registry());
    let second = app.worker(registry());
    wait_until_held(&pool, 2).await;
    gate.commit().await.unwrap();
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
    assert_eq!(occurrences(&pool, &id).await, expected);
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
    assert_eq!(occurrences(&pool, &id).await, expected);
    let history: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM work_order_history h JOIN work_orders w ON w.id = h.work_order_id WHERE w.schedule_id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(history, 11, "one opening entry per work order");
}

/// A MONTHLY schedule started 25 days ago, with a lead of 7 days, has exactly the occurrences due
/// by then: its start and a month later (3 to 6 days ahead; the next is a month further).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_monthly_schedule_started_25_days_ago_has_the_occurrences_due(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Monthly").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = app.core.business_time_zone.today();
    let start = today - Days::new(25);
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start, "frequency": "MONTHLY"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(generate(&app).await, 2);
    let second = start.checked_add_months(Months::new(1)).unwrap();
    assert_eq!(occurrences(&pool, &id).await, [start, second]);
    assert_eq!(generate(&app).await, 0, "a second run creates nothing");
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
    let today = app.core.business_time_zone.today();
    let start = today - Days::new(20);
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start, "frequency": "WEEKLY",
               "basis": "COMPLETED_DATE"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(generate(&app).await, 1);
    assert_eq!(generate(&app).await, 0, "waits: the first is not completed");
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
        generate(&app).await,
        1,
        "completed: the next one, a week from today"
    );
    assert_eq!(occurrences(&pool, &id).await, [start, next]);
    assert_eq!(generate(&app).await, 0);
}

/// A schedule starts at most 366 days back (a DAILY one from 0001-01-01 was once accepted and
/// never produced a work order) and at most 10 years ahead, in the company's day; the refusal
/// names `startDate` beside every other bad field.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_schedule_starts_at_most_366_days_back(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let villa = create_villa(&app, "Villa Bounds").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = app.core.business_time_zone.today();
    let too_far_ahead = today.checked_add_months(Months::new(121)).unwrap();
    for (start, why) in [
        ("0001-01-01".to_owned(), "year 1"),
        ((today - Days::new(367)).to_string(), "367 days back"),
        (too_far_ahead.to_string(), "more than 10 years ahead"),
    ] {
        let (status, body) = send(
            &app,
            Method::POST,
            "/maintenance/pmp/schedules",
            "staff",
            Some(
                json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start,
                        "frequency": "DAILY"}),
            ),
        )
        .await;
        assert_eq!(status, 400, "{why}: {body}");
        assert_eq!(fields(&body), ["startDate"], "{why}: {body}");
    }
    let (status, body) = send(
        &app,
        Method::POST,
        "/maintenance/pmp/schedules",
        "staff",
        Some(json!({"templateId": POOL_PUMP, "startDate": "0001-01-01"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(fields(&body), ["assetId", "startDate"], "every bad field");
    let (_, list) = send(
        &app,
        Method::GET,
        "/maintenance/pmp/schedules",
        "viewer",
        None,
    )
    .await;
    assert_eq!(list["pagination"]["total"], 0, "nothing refused was kept");

    // 366 days back is accepted; what comes next is the first occurrence within the catch-up.
    let start = today - Days::new(366);
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start, "frequency": "DAILY"}),
    )
    .await;
    let first = today - Days::new(31);
    assert_eq!(created["startDate"], start.to_string());
    assert_eq!(created["nextDueDate"], first.to_string());
    let ahead = today.checked_add_months(Months::new(120)).unwrap();
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": ahead}),
    )
    .await;
    assert_eq!(created["nextDueDate"], ahead.to_string());
}

/// A DAILY schedule started 100 days back: its first generation (the job its creation enqueues)
/// creates the work orders of the occurrences from PM_CATCH_UP_DAYS (31) back to PM_LEAD_DAYS (7)
/// ahead, today's among them, and none older; the next tick creates nothing.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn missed_occurrences_get_work_orders_only_within_the_catch_up(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker = app.worker(registry());
    let villa = create_villa(&app, "Villa Catch-up").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = app.core.business_time_zone.today();
    let pm = &app.core.planned_maintenance;
    assert_eq!((pm.catch_up_days, pm.lead_days), (31, 7));
    let first = today - Days::new(31);
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": today - Days::new(100),
               "frequency": "DAILY"}),
    )
    .await;
    assert_eq!(
        created["nextDueDate"],
        first.to_string(),
        "the first occurrence that gets a work order"
    );
    let id = created["id"].as_str().unwrap().to_owned();
    let result = generation_result(&pool)
        .await
        .expect("the generation did not finish");
    // 31 days back, today and 7 ahead: 39 occurrences.
    let expected: Vec<NaiveDate> = (0..39).map(|d| first + Days::new(d)).collect();
    assert!(expected.contains(&today));
    assert_eq!(expected.last(), Some(&(today + Days::new(7))));
    assert_eq!(result["created"], 39, "{result}");
    assert_eq!(occurrences(&pool, &id).await, expected);
    let (_, read) = send(
        &app,
        Method::GET,
        &format!("/maintenance/pmp/schedules/{id}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(read["workOrders"], 39);
    assert_eq!(read["nextDueDate"], (today + Days::new(8)).to_string());
    assert_eq!(generate(&app).await, 0, "the next tick creates nothing");
}

/// Two direct generation runs held at the same point and released together create each work
/// order once, and both succeed.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn two_generation_runs_held_together_create_each_work_order_once(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Race").await;
    let pump = asset(&app, villa, "Pump").await;
    let today = app.core.business_time_zone.today();
    let start = today - Days::new(10);
    // No worker: the generation the creation enqueued waits; only the two runs below generate.
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": start, "frequency": "DAILY"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();

    // Both runs start while the test holds a SHARE lock on work_orders: each may read what
    // exists, but neither can insert, and the test waits until both are waiting for the lock,
    // then releases it. A check-then-insert implementation (read which occurrences have no work
    // order, then insert those) has by then made its check in both runs, on the same state: both
    // found the 18 occurrences missing, and both insert them once released. Without the unique
    // index that is 36 work orders; with it and a plain INSERT the second run fails on the
    // unique violation. Either fails the assertions below (exactly one work order per occurrence,
    // both runs succeeded, 18 created in all). The statement under test inserts with ON CONFLICT
    // DO NOTHING against the unique index, so the second run waits for the first's rows and
    // skips them.
    let gate = hold_inserts(&pool).await;
    let horizon = window(&app);
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut conn = pool.acquire().await.unwrap();
                domain::maintenance::pmp::generate(&mut conn, horizon, None).await
            })
        })
        .collect();
    wait_until_held(&pool, 2).await;
    gate.commit().await.unwrap();
    let mut total = 0;
    for run in runs {
        total += run.await.unwrap().expect("a generation run failed");
    }
    // Daily from 10 days back to today + 7: 18 occurrences.
    let expected: Vec<NaiveDate> = (0..18).map(|d| start + Days::new(d)).collect();
    assert_eq!(occurrences(&pool, &id).await, expected);
    assert_eq!(total, 18, "the two runs created each work order once");
    let history: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM work_order_history h JOIN work_orders w ON w.id = h.work_order_id WHERE w.schedule_id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(history, 18);
}

/// "Today" is the company's day: a worker of a company whose date differs from UTC's generates
/// the occurrence due on its own today, not on UTC's.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn generation_counts_days_in_the_business_time_zone(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Far East").await;
    let pump = asset(&app, villa, "Pump").await;
    let utc_today = Utc::now().date_naive();
    // From 10:00 UTC it is already tomorrow at UTC+14; before 12:00 UTC it is still yesterday at
    // UTC-12 (`Etc/GMT+12`): at any moment one of the two is on another date than UTC.
    let zone = ["Pacific/Kiritimati", "Etc/GMT+12"]
        .into_iter()
        .map(|name| name.parse::<BusinessZone>().unwrap())
        .find(|zone| zone.today() != utc_today)
        .expect("one of the zones is on another date than UTC");
    let local_today = zone.today();
    let created = schedule(
        &app,
        json!({"templateId": POOL_PUMP, "assetId": pump, "startDate": local_today,
               "frequency": "DAILY"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    // The company's worker, with no lead: only the occurrences up to its own today are due. A
    // generation counting in UTC would create none east of UTC (its today is before the start)
    // and two west of it (its today is a day after the start).
    let mut core = app.core.clone();
    core.business_time_zone = zone;
    core.planned_maintenance.lead_days = 0;
    let _worker = TestWorker::start(pool.clone(), &core, registry());
    let result = generation_result(&pool)
        .await
        .expect("the generation did not finish");
    if zone.today() != local_today {
        // Midnight passed in that zone during the test: nothing to compare.
        return;
    }
    assert_eq!(result["until"], local_today.to_string(), "{zone:?}");
    assert_eq!(
        occurrences(&pool, &id).await,
        [local_today],
        "{zone:?} on {local_today}, UTC on {utc_today}"
    );
}
