//! Hostaway's webhooks (`POST /reporting/webhooks/hostaway`): HTTP Basic credentials, the
//! account, reservations stored as the sync stores them but never over a newer version, repeats
//! and unknown events acknowledged without a change, and the turnover generation enqueued.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, json as read};

use domain::settings::{PmsCredentials, PmsSettings, WebhookCredentials};

const PATH: &str = "/reporting/webhooks/hostaway";
const ACCOUNT: &str = "70123";
const USER: &str = "hostaway";
const PASSWORD: &str = "a-long-webhook-password";

async fn app(pool: PgPool, webhook: bool) -> TestApp {
    TestApp::spawn_with(
        pool,
        TestAppOptions {
            pms: Some(PmsSettings {
                credentials: Some(PmsCredentials {
                    client_id: ACCOUNT.to_owned(),
                    client_secret: "secret".to_owned(),
                }),
                webhook: webhook.then(|| WebhookCredentials {
                    user: USER.to_owned(),
                    password: PASSWORD.to_owned(),
                }),
                ..PmsSettings::default()
            }),
            ..TestAppOptions::default()
        },
    )
    .await
}

fn reservation(id: i64, departure: &str, status: &str, updated_on: &str) -> Value {
    json!({"id": id, "listingMapId": 88, "arrivalDate": "2030-03-01", "departureDate": departure,
           "status": status, "totalPrice": 1200, "currency": "THB", "channelId": 2018,
           "guestName": "Ayu", "updatedOn": updated_on})
}

async fn deliver(app: &TestApp, auth: Option<(&str, &str)>, body: &Value) -> (u16, Value) {
    let mut req = app.request(Method::POST, PATH, None).json(body);
    if let Some((user, password)) = auth {
        req = req.basic_auth(user, Some(password));
    }
    read(req.send().await.unwrap()).await
}

async fn stored(pool: &PgPool, id: i64) -> Option<(String, String)> {
    sqlx::query_as("SELECT check_out::text, status FROM pms_reservations WHERE pms_id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await
        .unwrap()
}

async fn generations(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'maintenance.generate_turnovers'")
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn deliveries_are_authenticated_and_for_the_account(pool: PgPool) {
    let body = json!({"event": "reservation.created", "accountId": ACCOUNT,
                      "data": reservation(5001, "2030-03-05", "new", "2030-01-01 10:00:00")});
    let absent = app(pool.clone(), false).await;
    assert_eq!(deliver(&absent, Some((USER, PASSWORD)), &body).await.0, 404);
    // Checked before the body is read: a bad body is still a 404, or a 401 without credentials.
    assert_eq!(
        deliver(&absent, Some((USER, PASSWORD)), &json!([1]))
            .await
            .0,
        404
    );
    drop(absent);

    let app = app(pool.clone(), true).await;
    assert_eq!(deliver(&app, None, &body).await.0, 401);
    assert_eq!(deliver(&app, None, &json!([1])).await.0, 401);
    assert_eq!(
        deliver(&app, Some((USER, "a-wrong-password!!")), &body)
            .await
            .0,
        401
    );
    assert_eq!(
        deliver(&app, Some(("someone", PASSWORD)), &body).await.0,
        401
    );
    let other = json!({"event": "reservation.created", "accountId": 99999, "data": body["data"]});
    let (status, answer) = deliver(&app, Some((USER, PASSWORD)), &other).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(
        stored(&pool, 5001).await,
        None,
        "nothing stored by a refused delivery"
    );

    // Bad input is a 400 in the reporting shape.
    for bad in [
        json!({"event": "reservation.created"}),
        json!({"event": "reservation.created", "accountId": ACCOUNT, "data": {"id": 1}}),
        json!([1, 2]),
    ] {
        let (status, answer) = deliver(&app, Some((USER, PASSWORD)), &bad).await;
        assert_eq!(status, 400, "{bad}: {answer}");
        assert!(answer["error"]["code"].is_string(), "{answer}");
    }

    // The account id may come as a number or a string.
    let numeric = json!({"event": "reservation.created", "accountId": 70123, "data": body["data"]});
    let (status, answer) = deliver(&app, Some((USER, PASSWORD)), &numeric).await;
    assert_eq!(
        (status, answer["changed"].as_bool()),
        (200, Some(true)),
        "{answer}"
    );
    assert_eq!(
        stored(&pool, 5001).await,
        Some(("2030-03-05".to_owned(), "CONFIRMED".to_owned()))
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_delivery_never_stores_an_older_version_and_repeats_change_nothing(pool: PgPool) {
    let app = app(pool.clone(), true).await;
    let delivery =
        |event: &str, data: Value| json!({"event": event, "accountId": ACCOUNT, "data": data});
    let auth = Some((USER, PASSWORD));

    let first = delivery(
        "reservation.created",
        reservation(6001, "2030-03-05", "new", "2030-01-01 10:00:00"),
    );
    assert_eq!(deliver(&app, auth, &first).await.1["changed"], true);
    assert_eq!(
        generations(&pool).await,
        1,
        "a change enqueues the turnover generation"
    );

    // The same delivery again: acknowledged, nothing changes.
    let (status, answer) = deliver(&app, auth, &first).await;
    assert_eq!(
        (status, answer["changed"].as_bool()),
        (200, Some(false)),
        "{answer}"
    );

    // A newer version moves the stay; an older one arriving late is acknowledged and ignored.
    let newer = delivery(
        "reservation.updated",
        reservation(6001, "2030-03-07", "modified", "2030-01-02 09:00:00"),
    );
    assert_eq!(deliver(&app, auth, &newer).await.1["changed"], true);
    let older = delivery(
        "reservation.updated",
        reservation(6001, "2030-03-06", "modified", "2030-01-01 12:00:00"),
    );
    let (status, answer) = deliver(&app, auth, &older).await;
    assert_eq!(
        (status, answer["changed"].as_bool()),
        (200, Some(false)),
        "{answer}"
    );
    assert_eq!(
        stored(&pool, 6001).await,
        Some(("2030-03-07".to_owned(), "CONFIRMED".to_owned()))
    );

    // A cancellation is a newer version like any other.
    let cancelled = delivery(
        "reservation.updated",
        reservation(6001, "2030-03-07", "cancelled", "2030-01-03 08:00:00"),
    );
    assert_eq!(deliver(&app, auth, &cancelled).await.1["changed"], true);
    assert_eq!(stored(&pool, 6001).await.unwrap().1, "CANCELLED");

    // Another event: acknowledged, ignored.
    let message = delivery("message.received", json!({"id": 1, "body": "hello"}));
    let (status, answer) = deliver(&app, auth, &message).await;
    assert_eq!(
        (status, answer["changed"].as_bool()),
        (200, Some(false)),
        "{answer}"
    );
}

/// What a newcomer does in development, as a test: a booking made and then moved on the fake
/// PMS reaches the housekeeping board through the fake's webhook, the generation it enqueues and
/// a maintenance worker, with the checkout's work order on the new day.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_booking_moved_on_the_fake_pms_reaches_the_board(pool: PgPool) {
    use crate::turnovers::{day, linked_villa, rule};
    use fake_pms::{FakePms, FakePmsConfig, WebhookTarget};
    use std::time::Duration;

    let app = app(pool.clone(), true).await;
    let _worker =
        app.worker(jobs::JobRegistry::new().register::<jobs::maintenance::GenerateTurnovers>());
    let fake = FakePms::start(FakePmsConfig {
        listings: 2,
        reservations: 0,
        client_id: ACCOUNT.to_owned(),
        webhook: Some(WebhookTarget {
            url: app.url(PATH),
            user: USER.to_owned(),
            password: PASSWORD.to_owned(),
        }),
        ..FakePmsConfig::default().without_limits()
    })
    .await;
    let today = app.today();
    linked_villa(&app, 40000, "Villa Webhook").await;
    rule(&pool, "CHECKOUT", 0, None, json!({})).await;

    let control = format!("http://{}/_fake/reservations", fake.addr);
    let made = app
        .http
        .post(&control)
        .json(&json!({"listingMapId": 40000, "arrivalDate": day(today, 3),
                      "departureDate": day(today, 5), "guestName": "Ayu"}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 200);
    let made: Value = made.json().await.unwrap();
    let id = made["result"]["id"].as_i64().expect("the booking's id");

    // The board's work orders on `date`, by title, within seconds.
    let board_on = |date: chrono::NaiveDate| {
        let app = &app;
        async move {
            let (status, body) = crate::management_villas::send(
                app,
                Method::GET,
                &format!("/maintenance/turnovers?from={date}&to={date}"),
                "viewer",
                None,
            )
            .await;
            assert_eq!(status, 200, "{body}");
            body["data"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|entry| entry["workOrders"].as_array().unwrap().clone())
                .count()
        }
    };
    tests::eventually(Duration::from_secs(20), || async {
        (board_on(day(today, 5)).await == 1).then_some(())
    })
    .await
    .expect("the new booking's checkout work on the board");

    let moved = app
        .http
        .patch(format!("{control}/{id}"))
        .json(&json!({"departureDate": day(today, 7)}))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), 200);
    tests::eventually(Duration::from_secs(20), || async {
        (board_on(day(today, 7)).await == 1 && board_on(day(today, 5)).await == 0).then_some(())
    })
    .await
    .expect("the work moved with the checkout");
    let reason: String = sqlx::query_scalar(
        "SELECT h.reason FROM work_order_history h JOIN work_orders w ON w.id = h.work_order_id
         ORDER BY h.changed_at DESC, h.id DESC LIMIT 1",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        reason,
        format!(
            "reservation moved: due {} -> {}",
            day(today, 5),
            day(today, 7)
        )
    );
    // The fake counts a delivery once it has read the answer, which may come after the board.
    let stats = tests::eventually(Duration::from_secs(10), || async {
        let stats = fake.control.stats();
        (stats["webhooksPending"] == 0).then_some(stats)
    })
    .await
    .expect("no delivery left pending");
    assert_eq!(
        (
            stats["webhooksDelivered"].as_u64(),
            stats["webhooksFailed"].as_u64()
        ),
        (Some(2), Some(0))
    );
}
