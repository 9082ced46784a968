//! Turnover generation (`domain::maintenance::turnovers`): one work order per rule, stay and
//! occurrence inside the horizon, kept in step with the stays as they move, cancel and come back,
//! and exactly once under runs at once. Rules are written with SQL here (their routes have tests
//! of their own); stays as the PMS sync stores them.

use std::time::Duration;

use chrono::{Days, NaiveDate};
use domain::maintenance::turnovers::{self, Generated, Horizon};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::management_villas::create_villa;
use crate::reporting_dashboard::{Stay, insert_listing, insert_stay};

/// A villa linked to the listing `pms_id`.
pub(crate) async fn linked_villa(app: &TestApp, pms_id: i64, name: &str) -> Uuid {
    let villa = create_villa(app, name).await;
    insert_listing(&app.pool, pms_id, name, "ACTIVE", "THB").await;
    sqlx::query("UPDATE pms_listings SET villa_id = $1 WHERE pms_id = $2")
        .bind(villa)
        .bind(pms_id)
        .execute(&app.pool)
        .await
        .unwrap();
    villa
}

pub(crate) async fn stay(
    pool: &PgPool,
    pms_id: i64,
    listing: i64,
    status: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Uuid {
    insert_stay(
        pool,
        &Stay {
            pms_id,
            listing_pms_id: listing,
            status,
            currency: Some("THB"),
            check_in: from,
            check_out: to,
            channel: "AIRBNB",
            total: Decimal::from(1000),
        },
    )
    .await
}

/// A rule written as the routes store one.
pub(crate) async fn rule(
    pool: &PgPool,
    trigger: &str,
    offset: i32,
    every: Option<i32>,
    extra: Value,
) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO task_rules (id, name, trigger, offset_days, every_nights, category, priority,
                                 include_owner_stays, checklist, created_by)
         VALUES ($1, $2, $3, $4, $5, 'CLEANING', 'MEDIUM', coalesce(($6->>'includeOwnerStays')::bool, false),
                 coalesce($6->'checklist', '[]'), 'test')",
    )
    .bind(id)
    .bind(format!("{trigger} {offset}"))
    .bind(trigger)
    .bind(offset)
    .bind(every)
    .bind(&extra)
    .execute(pool)
    .await
    .unwrap();
    id
}

pub(crate) fn day(today: NaiveDate, n: i64) -> NaiveDate {
    if n >= 0 {
        today.checked_add_days(Days::new(n.unsigned_abs())).unwrap()
    } else {
        today.checked_sub_days(Days::new(n.unsigned_abs())).unwrap()
    }
}

pub(crate) async fn generate(app: &TestApp) -> Generated {
    let mut conn = app.pool.acquire().await.unwrap();
    let today = app.core.business_time_zone.today();
    turnovers::generate(&mut conn, Horizon::new(today, 60))
        .await
        .unwrap()
}

/// The generated work orders of a stay: (rule, occurrence, due date, status, priority, same day,
/// changed), in occurrence order.
async fn work_of(
    pool: &PgPool,
    reservation: Uuid,
) -> Vec<(Uuid, i32, NaiveDate, String, String, bool, bool)> {
    sqlx::query_as(
        "SELECT task_rule_id, occurrence_index, due_date::date, status, priority, same_day_turnover,
                reservation_changed
         FROM work_orders WHERE reservation_id = $1 ORDER BY task_rule_id, occurrence_index",
    )
    .bind(reservation)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn each_trigger_and_offset_gives_its_work_order_once_with_the_rules_checklist(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.core.business_time_zone.today();
    linked_villa(&app, 501, "Villa Turnover").await;
    let checkout = rule(
        &pool,
        "CHECKOUT",
        0,
        None,
        json!({"checklist": [{"text": "Strip beds", "kind": "CHECK"},
                             {"text": "Photo of the pool", "kind": "PHOTO_REQUIRED", "failCategory": "POOL"}]}),
    )
    .await;
    let arrival = rule(&pool, "CHECKIN", -1, None, json!({})).await;
    let mid = rule(&pool, "MID_STAY", 0, Some(4), json!({})).await;
    // Ten nights: mid-stay occurrences after nights 4 and 8.
    let long = stay(&pool, 9001, 501, "CONFIRMED", day(today, 3), day(today, 13)).await;
    // Owner stays only for rules that include them; a stay beyond the horizon gets nothing yet.
    let owner = stay(
        &pool,
        9002,
        501,
        "OWNER_STAY",
        day(today, 20),
        day(today, 22),
    )
    .await;
    let far = stay(
        &pool,
        9003,
        501,
        "CONFIRMED",
        day(today, 90),
        day(today, 95),
    )
    .await;

    let first = generate(&app).await;
    let mut work = work_of(&pool, long).await;
    work.sort_by_key(|w| w.2);
    let got: Vec<(Uuid, i32, NaiveDate)> = work.iter().map(|w| (w.0, w.1, w.2)).collect();
    assert_eq!(
        got,
        vec![
            (arrival, 0, day(today, 2)),
            (mid, 1, day(today, 7)),
            (mid, 2, day(today, 11)),
            (checkout, 0, day(today, 13)),
        ]
    );
    assert!(
        work_of(&pool, owner).await.is_empty(),
        "owner stays are left out by default"
    );
    assert!(work_of(&pool, far).await.is_empty(), "beyond the horizon");
    assert_eq!(first.created, 4);

    let items: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT i.text, i.kind, i.fail_category FROM work_order_checklist_items i
         JOIN work_orders w ON w.id = i.work_order_id
         WHERE w.task_rule_id = $1 ORDER BY i.position",
    )
    .bind(checkout)
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(
        items,
        vec![
            ("Strip beds".into(), "CHECK".into(), "GENERAL".into()),
            (
                "Photo of the pool".into(),
                "PHOTO_REQUIRED".into(),
                "POOL".into()
            ),
        ]
    );
    let source: String = sqlx::query_scalar("SELECT DISTINCT source FROM work_orders")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(source, "TURNOVER");

    // A second run creates nothing; a rule that includes owner stays covers the one on the books.
    assert_eq!(generate(&app).await, Generated::default());
    let owners = rule(
        &pool,
        "CHECKOUT",
        0,
        None,
        json!({"includeOwnerStays": true}),
    )
    .await;
    let third = generate(&app).await;
    assert!(
        work_of(&pool, owner)
            .await
            .iter()
            .any(|w| w.0 == owners && w.2 == day(today, 22))
    );
    assert_eq!(
        third.created, 2,
        "the new rule covers both stays already on the books"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_moved_stay_moves_open_work_and_flags_started_work(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.core.business_time_zone.today();
    linked_villa(&app, 502, "Villa Moves").await;
    rule(&pool, "CHECKOUT", 0, None, json!({})).await;
    rule(&pool, "CHECKIN", 0, None, json!({})).await;
    let booked = stay(&pool, 9101, 502, "CONFIRMED", day(today, 5), day(today, 8)).await;
    generate(&app).await;
    // The arrival's work has started; the checkout's has not.
    sqlx::query("UPDATE work_orders SET status = 'IN_PROGRESS' WHERE reservation_id = $1 AND due_date::date = $2")
        .bind(booked)
        .bind(day(today, 5))
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE pms_reservations SET check_in = $2, check_out = $3 WHERE id = $1")
        .bind(booked)
        .bind(day(today, 6))
        .bind(day(today, 10))
        .execute(&pool)
        .await
        .unwrap();
    let run = generate(&app).await;
    assert_eq!((run.moved, run.flagged, run.created), (1, 1, 0));
    let work = work_of(&pool, booked).await;
    let dates: Vec<(NaiveDate, &str, bool)> =
        work.iter().map(|w| (w.2, w.3.as_str(), w.6)).collect();
    assert!(
        dates.contains(&(day(today, 10), "OPEN", false)),
        "{dates:?}"
    );
    assert!(
        dates.contains(&(day(today, 5), "IN_PROGRESS", true)),
        "{dates:?}"
    );
    let reason: String = sqlx::query_scalar(
        "SELECT h.reason FROM work_order_history h JOIN work_orders w ON w.id = h.work_order_id
         WHERE w.reservation_id = $1 AND w.status = 'OPEN' ORDER BY h.changed_at DESC, h.id DESC LIMIT 1",
    )
    .bind(booked)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        reason,
        format!(
            "reservation moved: due {} -> {}",
            day(today, 8),
            day(today, 10)
        )
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_cancelled_stay_cancels_its_open_work_which_comes_back_with_the_stay(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.core.business_time_zone.today();
    linked_villa(&app, 503, "Villa Cancels").await;
    rule(&pool, "CHECKOUT", 0, None, json!({})).await;
    let booked = stay(&pool, 9201, 503, "CONFIRMED", day(today, 2), day(today, 4)).await;
    generate(&app).await;
    let set_status = |status: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query("UPDATE pms_reservations SET status = $2 WHERE id = $1")
                .bind(booked)
                .bind(status)
                .execute(&pool)
                .await
                .unwrap();
        }
    };
    set_status("CANCELLED").await;
    let run = generate(&app).await;
    assert_eq!(run.cancelled, 1);
    assert_eq!(work_of(&pool, booked).await[0].3, "CANCELLED");
    let reason: String = sqlx::query_scalar(
        "SELECT h.reason FROM work_order_history h JOIN work_orders w ON w.id = h.work_order_id
         WHERE w.reservation_id = $1 AND h.to_status = 'CANCELLED'",
    )
    .bind(booked)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(reason, "reservation cancelled");

    set_status("CONFIRMED").await;
    let run = generate(&app).await;
    assert_eq!((run.restored, run.created), (1, 0));
    let work = work_of(&pool, booked).await;
    assert_eq!((work.len(), work[0].3.as_str()), (1, "OPEN"));
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_checkout_and_an_arrival_on_one_day_are_a_same_day_turnover_until_one_moves(
    pool: PgPool,
) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.core.business_time_zone.today();
    linked_villa(&app, 504, "Villa Same Day").await;
    rule(&pool, "CHECKOUT", 0, None, json!({})).await;
    let leaving = stay(&pool, 9301, 504, "CONFIRMED", day(today, 1), day(today, 5)).await;
    let arriving = stay(&pool, 9302, 504, "CONFIRMED", day(today, 5), day(today, 9)).await;
    generate(&app).await;
    let work = work_of(&pool, leaving).await;
    assert_eq!((work[0].4.as_str(), work[0].5), ("HIGH", true));
    assert!(
        !work_of(&pool, arriving).await[0].5,
        "the arrival's own checkout is not"
    );

    sqlx::query("UPDATE pms_reservations SET check_in = $2 WHERE id = $1")
        .bind(arriving)
        .bind(day(today, 6))
        .execute(&pool)
        .await
        .unwrap();
    generate(&app).await;
    let work = work_of(&pool, leaving).await;
    assert_eq!(
        (work[0].4.as_str(), work[0].5),
        ("MEDIUM", false),
        "undone with the move"
    );
}

/// Two runs started together, both held in flight (the first before its first write, on a lock
/// of `work_orders` this test holds; the second at the runs' own advisory lock, behind the
/// first) and released together, create one work order per rule, stay and occurrence.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn two_runs_at_once_create_one_work_order_per_occurrence(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.core.business_time_zone.today();
    linked_villa(&app, 505, "Villa Race").await;
    rule(&pool, "CHECKOUT", 0, None, json!({})).await;
    rule(&pool, "MID_STAY", 0, Some(2), json!({})).await;
    for n in 0..10 {
        stay(
            &pool,
            9400 + n,
            505,
            "CONFIRMED",
            day(today, n * 5),
            day(today, n * 5 + 5),
        )
        .await;
    }
    let mut gate = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE work_orders IN SHARE ROW EXCLUSIVE MODE")
        .execute(&mut *gate)
        .await
        .unwrap();
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let app_pool = pool.clone();
            tokio::spawn(async move {
                let mut conn = app_pool.acquire().await.unwrap();
                turnovers::generate(&mut conn, Horizon::new(today, 60))
                    .await
                    .unwrap()
            })
        })
        .collect();
    // One run waits on the table lock before writing, the other on the runs' lock.
    tests::eventually(Duration::from_secs(20), || async {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
             WHERE NOT l.granted AND (c.relname = 'work_orders' OR l.locktype = 'advisory')",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        (waiting == 2).then_some(())
    })
    .await
    .expect("both runs in flight, held");
    gate.commit().await.unwrap();
    let mut created = 0;
    for run in runs {
        created += run.await.unwrap().created;
    }
    let (rows, keys): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(DISTINCT (task_rule_id, reservation_id, occurrence_index)) FROM work_orders",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(rows, keys, "one work order per key");
    assert_eq!(
        u64::try_from(rows).unwrap(),
        created,
        "each counted by the run that made it"
    );
    // 10 checkouts (those from today on) and 2 mid-stay occurrences of each 5-night stay.
    assert_eq!(rows, 10 + 20);
}

/// A rule created through the API covers the stays already on the books within seconds: its
/// creation enqueues the generation, which a maintenance worker runs; archiving it leaves its
/// work orders as they are.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_new_rule_covers_the_stays_on_the_books_through_the_worker(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let _worker =
        app.worker(jobs::JobRegistry::new().register::<jobs::maintenance::GenerateTurnovers>());
    let today = app.core.business_time_zone.today();
    let villa = linked_villa(&app, 506, "Villa Worker").await;
    let booked = stay(&pool, 9501, 506, "CONFIRMED", day(today, 3), day(today, 7)).await;
    let (status, body) = crate::management_villas::send(
        &app,
        reqwest::Method::POST,
        "/maintenance/task-rules",
        "manager",
        Some(
            json!({"name": "Turnover clean", "trigger": "CHECKOUT", "category": "CLEANING",
                    "villaIds": [villa], "checklist": [{"text": "Beds made"}]}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let rule: Uuid = body["id"].as_str().unwrap().parse().unwrap();
    let work = tests::eventually(Duration::from_secs(20), || async {
        let work = work_of(&pool, booked).await;
        (!work.is_empty()).then_some(work)
    })
    .await
    .expect("the rule's work order within seconds");
    assert_eq!((work[0].0, work[0].2), (rule, day(today, 7)));

    let (status, _) = crate::management_villas::send(
        &app,
        reqwest::Method::POST,
        &format!("/maintenance/task-rules/{rule}/archive"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(generate(&app).await, Generated::default());
    assert_eq!(work_of(&pool, booked).await[0].3, "OPEN", "left as it is");
}

/// The generated work order of a stay (one rule): its id, due date, title and category.
async fn the_work_of(pool: &PgPool, reservation: Uuid) -> (Uuid, NaiveDate, String, String, bool) {
    sqlx::query_as(
        "SELECT id, due_date::date, title, category, reservation_changed FROM work_orders
         WHERE reservation_id = $1",
    )
    .bind(reservation)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// A work order's checklist as (text, result), in order, with the items' ids.
async fn checklist_of(pool: &PgPool, order: Uuid) -> Vec<(Uuid, String, Option<String>)> {
    sqlx::query_as(
        "SELECT id, text, result FROM work_order_checklist_items WHERE work_order_id = $1
         ORDER BY position",
    )
    .bind(order)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// A rule changed through the API: its open work follows it (date, title, category, the items
/// not yet answered) and keeps what was answered; started work is neither moved nor flagged as a
/// changed reservation (the stay did not change). Between two changes of the rule, a person's
/// own edits (another title, another day) stay.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_changed_rule_is_followed_by_open_work_keeping_answered_items(pool: PgPool) {
    use crate::management_villas::send;
    use reqwest::Method;
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.today();
    let villa = linked_villa(&app, 507, "Villa Rules").await;
    let (status, body) = send(
        &app,
        Method::POST,
        "/maintenance/task-rules",
        "manager",
        Some(
            json!({"name": "Clean", "trigger": "CHECKOUT", "category": "CLEANING",
                    "villaIds": [villa],
                    "checklist": [{"text": "Beds"}, {"text": "Towels"}, {"text": "Pool"}]}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let rule = body["id"].as_str().unwrap().to_owned();
    let open = stay(&pool, 9601, 507, "CONFIRMED", day(today, 2), day(today, 5)).await;
    let started = stay(&pool, 9602, 507, "CONFIRMED", day(today, 6), day(today, 9)).await;
    generate(&app).await;
    let (order, ..) = the_work_of(&pool, open).await;
    let (started_order, ..) = the_work_of(&pool, started).await;
    sqlx::query("UPDATE work_orders SET status = 'IN_PROGRESS' WHERE id = $1")
        .bind(started_order)
        .execute(&pool)
        .await
        .unwrap();
    let items = checklist_of(&pool, order).await;
    for (item, result) in [(items[1].0, "PASS"), (items[2].0, "NA")] {
        let (status, body) = send(
            &app,
            Method::PATCH,
            &format!("/maintenance/work-orders/{order}/checklist/{item}"),
            "staff",
            Some(json!({"result": result})),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }

    // A person renames the work and moves it a day later: runs leave that as it is.
    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/maintenance/work-orders/{order}"),
        "manager",
        Some(json!({"title": "Clean before the VIP", "dueDate": format!("{}T00:00:00Z", day(today, 7))})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(generate(&app).await, Generated::default());
    let (_, due, title, ..) = the_work_of(&pool, open).await;
    assert_eq!(
        (due, title.as_str()),
        (day(today, 7), "Clean before the VIP")
    );

    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/maintenance/task-rules/{rule}"),
        "manager",
        Some(
            json!({"offsetDays": 1, "title": "Deep clean", "category": "INSPECTION",
                    "checklist": [{"text": "Towels"}, {"text": "Linen", "kind": "PHOTO_REQUIRED"},
                                  {"text": "Beds"}]}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let run = generate(&app).await;
    assert_eq!(
        (run.moved, run.flagged, run.created, run.cancelled),
        (1, 0, 0, 0)
    );

    let (_, due, title, category, _) = the_work_of(&pool, open).await;
    assert_eq!(
        (due, title.as_str(), category.as_str()),
        (day(today, 6), "Deep clean", "INSPECTION")
    );
    let after = checklist_of(&pool, order).await;
    let shown: Vec<(&str, Option<&str>)> = after
        .iter()
        .map(|(_, text, result)| (text.as_str(), result.as_deref()))
        .collect();
    assert_eq!(
        shown,
        [
            ("Towels", Some("PASS")),
            ("Linen", None),
            ("Beds", None),
            ("Pool", Some("NA")),
        ],
        "the rule's items in its order, then answered items it no longer has"
    );
    assert_eq!(after[0].0, items[1].0, "the answered item is the same item");
    assert_eq!(after[3].0, items[2].0);
    let kind: String =
        sqlx::query_scalar("SELECT kind FROM work_order_checklist_items WHERE id = $1")
            .bind(after[1].0)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(kind, "PHOTO_REQUIRED");
    let reason: String = sqlx::query_scalar(
        "SELECT reason FROM work_order_history WHERE work_order_id = $1
         ORDER BY changed_at DESC, id DESC LIMIT 1",
    )
    .bind(order)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        reason,
        format!(
            "task rule changed: due {} -> {}",
            day(today, 7),
            day(today, 6)
        )
    );

    let (_, started_due, started_title, _, changed) = the_work_of(&pool, started).await;
    assert_eq!(
        (started_due, started_title.as_str(), changed),
        (day(today, 9), "Clean", false),
        "started work stays, and its stay did not change"
    );
    assert_eq!(
        generate(&app).await,
        Generated::default(),
        "a second run changes nothing"
    );
}

/// A rule changed while a run is under way (after it read the rules, before it wrote) is
/// followed by the next run: the run records the revision whose dates it wrote, not the newer
/// one. Forced: the run is held at the work order's row lock, with the rule changed meanwhile.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_rule_changed_during_a_run_is_followed_by_the_next_run(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.today();
    linked_villa(&app, 508, "Villa Overlap").await;
    let rule_id = rule(&pool, "CHECKOUT", 0, None, json!({})).await;
    let booked = stay(&pool, 9701, 508, "CONFIRMED", day(today, 2), day(today, 5)).await;
    generate(&app).await;
    let (order, ..) = the_work_of(&pool, booked).await;
    // The stay moves, so the next run writes to the work order.
    sqlx::query("UPDATE pms_reservations SET check_out = $2 WHERE id = $1")
        .bind(booked)
        .bind(day(today, 6))
        .execute(&pool)
        .await
        .unwrap();

    let mut holder = pool.begin().await.unwrap();
    let holder_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *holder)
        .await
        .unwrap();
    sqlx::query("SELECT id FROM work_orders WHERE id = $1 FOR UPDATE")
        .bind(order)
        .execute(&mut *holder)
        .await
        .unwrap();
    let change_rule_meanwhile = async {
        // The run, at the work order's row.
        tests::wait_blocked_by(&pool, holder_pid, 1).await;
        // What PATCH /maintenance/task-rules/{id} writes: the offset, and the next revision.
        sqlx::query("UPDATE task_rules SET offset_days = 1, revision = revision + 1 WHERE id = $1")
            .bind(rule_id)
            .execute(&pool)
            .await
            .unwrap();
        holder.commit().await.unwrap();
    };
    let (run, ()) = tokio::join!(generate(&app), change_rule_meanwhile);
    assert_eq!(run.moved, 1);
    let (_, due, ..) = the_work_of(&pool, booked).await;
    assert_eq!(
        due,
        day(today, 6),
        "the run wrote the dates of the rule it read"
    );

    let next = generate(&app).await;
    assert_eq!(next.moved, 1, "the next run follows the rule's change");
    let (_, due, ..) = the_work_of(&pool, booked).await;
    assert_eq!(due, day(today, 7));
}

/// What moves a work order is what its rule counts from: a CHECKOUT rule's work order that a
/// person rescheduled stays where it is when the arrival changes, and follows when the checkout
/// does. A change of the rule that leaves its checklist alone keeps every item (its id too).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_reschedule_stays_until_what_the_rule_counts_from_changes(pool: PgPool) {
    use crate::management_villas::send;
    use reqwest::Method;
    let app = TestApp::spawn(pool.clone()).await;
    let today = app.today();
    let villa = linked_villa(&app, 509, "Villa Reschedule").await;
    let (status, body) = send(
        &app,
        Method::POST,
        "/maintenance/task-rules",
        "manager",
        Some(
            json!({"name": "Clean", "trigger": "CHECKOUT", "category": "CLEANING",
                    "villaIds": [villa], "checklist": [{"text": "Beds"}, {"text": "Beds"}]}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let rule = body["id"].as_str().unwrap().to_owned();
    let booked = stay(&pool, 9801, 509, "CONFIRMED", day(today, 2), day(today, 5)).await;
    generate(&app).await;
    let (order, ..) = the_work_of(&pool, booked).await;
    let items = checklist_of(&pool, order).await;
    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/maintenance/work-orders/{order}"),
        "manager",
        Some(json!({"dueDate": format!("{}T00:00:00Z", day(today, 6))})),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // The arrival moves a day earlier: the checkout, and the reschedule, stay.
    sqlx::query("UPDATE pms_reservations SET check_in = $2 WHERE id = $1")
        .bind(booked)
        .bind(day(today, 1))
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(generate(&app).await.moved, 0);
    assert_eq!(the_work_of(&pool, booked).await.1, day(today, 6));

    // A new title only: the same items, the same ids.
    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/maintenance/task-rules/{rule}"),
        "manager",
        Some(json!({"title": "Turnover clean"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    generate(&app).await;
    let (_, due, title, ..) = the_work_of(&pool, booked).await;
    assert_eq!((due, title.as_str()), (day(today, 5), "Turnover clean"));
    assert_eq!(checklist_of(&pool, order).await, items);

    // The checkout moves: the work order follows it.
    sqlx::query("UPDATE pms_reservations SET check_out = $2 WHERE id = $1")
        .bind(booked)
        .bind(day(today, 8))
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(generate(&app).await.moved, 1);
    assert_eq!(the_work_of(&pool, booked).await.1, day(today, 8));
}
