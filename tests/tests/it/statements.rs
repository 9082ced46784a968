//! Monthly owner statements (`GET /reporting/owner-statements`, the `ownerStatement` export):
//! a month of two villas' stays in two currencies, stays across the month's edges, owner-billed
//! costs of work orders completed in and out of the month, the fee and the balance, each total
//! the sum of its lines and the gross the dashboard's revenue of the owner's listings.

use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::management_villas::send;
use crate::reporting_dashboard::{Stay, date, insert_listing, insert_stay};

async fn linked(app: &TestApp, owner: Uuid, name: &str, pms_id: i64) -> Uuid {
    let (status, villa) = send(app, Method::POST, "/management/villas", "manager",
        Some(json!({"name": name, "propertyType": "VILLA", "bedrooms": 2, "bathrooms": 2, "maxGuests": 4, "ownerId": owner}))).await;
    assert_eq!(status, 201, "{villa}");
    let id: Uuid = villa["id"].as_str().unwrap().parse().unwrap();
    insert_listing(
        &app.pool,
        pms_id,
        &format!("{name} listing"),
        "ACTIVE",
        "USD",
    )
    .await;
    sqlx::query("UPDATE pms_listings SET villa_id = $1 WHERE pms_id = $2")
        .bind(id)
        .bind(pms_id)
        .execute(&app.pool)
        .await
        .unwrap();
    id
}

#[allow(clippy::too_many_arguments)]
async fn booked(
    pool: &PgPool,
    pms_id: i64,
    listing: i64,
    status: &str,
    currency: &str,
    from: &str,
    to: &str,
    total: i64,
    commission: i64,
) {
    let id = insert_stay(
        pool,
        &Stay {
            pms_id,
            listing_pms_id: listing,
            status,
            currency: Some(currency),
            check_in: date(from),
            check_out: date(to),
            channel: "AIRBNB",
            total: Decimal::from(total),
        },
    )
    .await;
    sqlx::query("UPDATE pms_reservations SET channel_commission = $2 WHERE id = $1")
        .bind(id)
        .bind(Decimal::from(commission))
        .execute(pool)
        .await
        .unwrap();
}

/// A work order of `villa` with these cost lines (amount, currency, billTo, estimate), completed
/// at `completed_at`.
async fn completed_work(
    app: &TestApp,
    villa: Uuid,
    title: &str,
    lines: &[(i64, &str, &str, bool)],
    completed_at: &str,
) {
    let (status, order) = send(
        app,
        Method::POST,
        "/maintenance/work-orders",
        "manager",
        Some(json!({"title": title, "villaId": villa, "category": "GENERAL", "priority": "LOW"})),
    )
    .await;
    assert_eq!(status, 201, "{order}");
    let id = order["id"].as_str().unwrap().to_owned();
    for (amount, currency, bill_to, estimate) in lines {
        let (status, body) = send(app, Method::POST, &format!("/maintenance/work-orders/{id}/costs"), "manager",
            Some(json!({"kind": "PARTS", "description": format!("{amount} {currency}"), "amount": amount,
                "currency": currency, "billTo": bill_to, "estimate": estimate}))).await;
        assert_eq!(status, 201, "{body}");
    }
    sqlx::query("UPDATE work_orders SET status = 'COMPLETED', status_before_approval = NULL, completed_at = $2::timestamptz WHERE id = $1::uuid")
        .bind(&id)
        .bind(completed_at)
        .execute(&app.pool)
        .await
        .unwrap();
}

fn totals_of<'a>(totals: &'a Value, currency: &str) -> &'a Value {
    totals
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["currency"] == currency)
        .unwrap_or_else(|| panic!("no {currency} in {totals}"))
}

fn figures(t: &Value) -> [f64; 7] {
    [
        "nights",
        "gross",
        "channelCommission",
        "net",
        "managementFee",
        "ownerCosts",
        "balance",
    ]
    .map(|k| t[k].as_f64().unwrap_or_else(|| panic!("{k} in {t}")))
}

fn cents(x: f64) -> i64 {
    (x * 100.0).round() as i64
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_statement_adds_up_and_its_gross_is_the_dashboards_revenue(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (status, owner) = send(&app, Method::POST, "/management/owners", "manager",
        Some(json!({"ownerType": "COMPANY", "companyName": "Santoso Holdings", "registrationNumber": "R-1",
            "contactPerson": "Dewi", "managementFeePercent": 20}))).await;
    assert_eq!(status, 201, "{owner}");
    let owner: Uuid = owner["id"].as_str().unwrap().parse().unwrap();
    let (_, other) = send(&app, Method::POST, "/management/owners", "manager",
        Some(json!({"ownerType": "INDIVIDUAL", "firstName": "Other", "lastName": "Owner", "phone": "+62 811 222 333"}))).await;
    let other: Uuid = other["id"].as_str().unwrap().parse().unwrap();
    let alam = linked(&app, owner, "Alam", 901).await;
    let bukit = linked(&app, owner, "Bukit", 902).await;
    let elsewhere = linked(&app, other, "Elsewhere", 903).await;

    booked(
        &pool,
        9101,
        901,
        "CONFIRMED",
        "USD",
        "2026-09-03",
        "2026-09-06",
        300,
        45,
    )
    .await;
    // Three nights from 30 August: one in September.
    booked(
        &pool,
        9102,
        901,
        "CONFIRMED",
        "USD",
        "2026-08-30",
        "2026-09-02",
        600,
        90,
    )
    .await;
    booked(
        &pool,
        9103,
        901,
        "CONFIRMED",
        "EUR",
        "2026-09-10",
        "2026-09-12",
        400,
        0,
    )
    .await;
    booked(
        &pool,
        9104,
        901,
        "CANCELLED",
        "USD",
        "2026-09-20",
        "2026-09-22",
        999,
        0,
    )
    .await;
    booked(
        &pool,
        9105,
        901,
        "OWNER_STAY",
        "USD",
        "2026-09-23",
        "2026-09-25",
        0,
        0,
    )
    .await;
    // Five nights from 28 September: three in September.
    booked(
        &pool,
        9201,
        902,
        "CONFIRMED",
        "USD",
        "2026-09-28",
        "2026-10-03",
        1000,
        100,
    )
    .await;
    booked(
        &pool,
        9301,
        903,
        "CONFIRMED",
        "USD",
        "2026-09-05",
        "2026-09-07",
        5000,
        0,
    )
    .await;
    // Three stays of 100 with one of their three nights in September: 33.333… each, which the
    // statement writes 33.34 + 33.33 + 33.33 = 100.00, the dashboard's revenue.
    for k in 0..3 {
        booked(
            &pool,
            9202 + k,
            902,
            "CONFIRMED",
            "GBP",
            "2026-09-30",
            "2026-10-03",
            100,
            0,
        )
        .await;
    }
    completed_work(
        &app,
        alam,
        "Pump repair",
        &[
            (120, "USD", "OWNER", false),
            (500, "USD", "OWNER", true),
            (80, "USD", "COMPANY", false),
        ],
        "2026-09-15T10:00:00Z",
    )
    .await;
    completed_work(
        &app,
        bukit,
        "Gate motor",
        &[(50, "EUR", "OWNER", false)],
        "2026-09-30T23:00:00Z",
    )
    .await;
    completed_work(
        &app,
        bukit,
        "Roof",
        &[(700, "USD", "OWNER", false)],
        "2026-10-01T00:30:00Z",
    )
    .await;
    completed_work(
        &app,
        elsewhere,
        "Not theirs",
        &[(10, "USD", "OWNER", false)],
        "2026-09-10T00:00:00Z",
    )
    .await;

    let (status, st) = tests::pms::get(
        &app,
        &format!("/reporting/owner-statements?ownerId={owner}&month=2026-09"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{st}");
    assert_eq!(st["month"], "2026-09");
    assert_eq!(
        (st["from"].as_str(), st["to"].as_str()),
        (Some("2026-09-01"), Some("2026-09-30"))
    );
    assert_eq!(st["owner"]["name"], "Santoso Holdings");
    let villas = st["villas"].as_array().unwrap();
    assert_eq!(
        villas
            .iter()
            .map(|v| v["villa"]["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["Alam", "Bukit"]
    );

    // By hand.
    let alam_st = &villas[0];
    assert_eq!(alam_st["stays"].as_array().unwrap().len(), 3);
    assert_eq!(
        figures(totals_of(&alam_st["totals"], "USD")),
        [4.0, 500.0, 75.0, 425.0, 85.0, 120.0, 220.0]
    );
    assert_eq!(
        figures(totals_of(&alam_st["totals"], "EUR")),
        [2.0, 400.0, 0.0, 400.0, 80.0, 0.0, 320.0]
    );
    let bukit_st = &villas[1];
    assert_eq!(
        figures(totals_of(&bukit_st["totals"], "USD")),
        [3.0, 600.0, 60.0, 540.0, 108.0, 0.0, 432.0]
    );
    assert_eq!(
        figures(totals_of(&bukit_st["totals"], "EUR")),
        [0.0, 0.0, 0.0, 0.0, 0.0, 50.0, -50.0]
    );
    assert_eq!(
        bukit_st["ownerCosts"].as_array().unwrap().len(),
        1,
        "the roof completed in October"
    );
    assert_eq!(
        figures(totals_of(&st["totals"], "USD")),
        [7.0, 1100.0, 135.0, 965.0, 193.0, 120.0, 652.0]
    );
    assert_eq!(
        figures(totals_of(&st["totals"], "EUR")),
        [2.0, 400.0, 0.0, 400.0, 80.0, 50.0, 270.0]
    );
    assert_eq!(
        figures(totals_of(&st["totals"], "GBP")),
        [3.0, 100.0, 0.0, 100.0, 20.0, 0.0, 80.0]
    );
    let mut thirds: Vec<f64> = villas[1]["stays"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["currency"] == "GBP")
        .map(|s| s["gross"].as_f64().unwrap())
        .collect();
    thirds.sort_by(|a, b| b.partial_cmp(a).unwrap());
    assert_eq!(thirds, [33.34, 33.33, 33.33]);

    // Every total is the sum of its lines.
    for villa in villas {
        for t in villa["totals"].as_array().unwrap() {
            let c = t["currency"].as_str().unwrap();
            let stays: Vec<&Value> = villa["stays"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["currency"] == c)
                .collect();
            let sum = |k: &str| {
                stays
                    .iter()
                    .map(|s| cents(s[k].as_f64().unwrap()))
                    .sum::<i64>()
            };
            assert_eq!(cents(t["gross"].as_f64().unwrap()), sum("gross"));
            assert_eq!(
                cents(t["channelCommission"].as_f64().unwrap()),
                sum("channelCommission")
            );
            assert_eq!(cents(t["net"].as_f64().unwrap()), sum("net"));
            assert_eq!(
                t["nights"].as_i64().unwrap(),
                stays
                    .iter()
                    .map(|s| s["nights"].as_i64().unwrap())
                    .sum::<i64>()
            );
            let costs: i64 = villa["ownerCosts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["currency"] == c)
                .map(|x| cents(x["amount"].as_f64().unwrap()))
                .sum();
            assert_eq!(cents(t["ownerCosts"].as_f64().unwrap()), costs);
        }
    }
    for t in st["totals"].as_array().unwrap() {
        let c = t["currency"].as_str().unwrap();
        for k in ["gross", "net", "managementFee", "ownerCosts", "balance"] {
            let sum: i64 = villas
                .iter()
                .filter_map(|v| {
                    v["totals"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|x| x["currency"] == c)
                })
                .map(|x| cents(x[k].as_f64().unwrap()))
                .sum();
            assert_eq!(cents(t[k].as_f64().unwrap()), sum, "{c} {k}");
        }
    }

    // The gross is the dashboard's revenue of the owner's listings, per currency.
    let listings: Vec<String> = sqlx::query_scalar(
        "SELECT id::text FROM pms_listings WHERE pms_id IN (901, 902) ORDER BY pms_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for (currency, gross) in [("USD", 1100.0), ("EUR", 400.0), ("GBP", 100.0)] {
        let (status, metrics) = tests::pms::get(&app, &format!(
            "/reporting/dashboard/metrics?startDate=2026-09-01&endDate=2026-09-30&currency={currency}&listingIds={}",
            listings.join(",")), "viewer").await;
        assert_eq!(status, 200, "{metrics}");
        assert_eq!(
            metrics["revenue"]["total"].as_f64(),
            Some(gross),
            "{currency}: {metrics}"
        );
    }

    // Bad input.
    for (query, status_wanted) in [
        ("month=2026-09".to_owned(), 400),
        (format!("ownerId={owner}&month=2026-13"), 400),
        ("ownerId=x".to_owned(), 400),
        (format!("ownerId={}&month=2026-09", Uuid::now_v7()), 404),
    ] {
        let (status, body) = tests::pms::get(
            &app,
            &format!("/reporting/owner-statements?{query}"),
            "viewer",
        )
        .await;
        assert_eq!(status, status_wanted, "{query}: {body}");
    }

    // The export: the same lines and totals, as CSV.
    let _worker = app.worker(crate::reporting_exports::exports_registry());
    let id = crate::reporting_exports::start(
        &app,
        &json!({"type": "ownerStatement", "format": "csv", "ownerId": owner, "month": "2026-09"}),
    )
    .await;
    let export = crate::reporting_exports::wait_done(&app, id).await;
    assert_eq!(export["status"], "COMPLETED", "{export}");
    // Alam: 3 stays, 1 cost, 2 totals; Bukit: 4 stays, 1 cost, 3 totals; the owner: 3 totals.
    assert_eq!(export["rowCount"], 3 + 1 + 2 + 4 + 1 + 3 + 3, "{export}");
    let (_, bytes) = crate::reporting_exports::download(&app, id).await;
    let rows = crate::reporting_exports::parse_csv(
        String::from_utf8_lossy(&bytes).trim_start_matches('\u{feff}'),
    );
    assert_eq!(rows[0][0], "Villa");
    let owner_usd = rows
        .iter()
        .find(|r| r[1] == "Owner total" && r[6] == "USD")
        .unwrap();
    assert_eq!(
        &owner_usd[7..13],
        ["1100.00", "135.00", "965.00", "120.00", "193.00", "652.00"]
    );
    for body in [
        json!({"type": "ownerStatement", "ownerId": owner, "startDate": "2026-09-01"}),
        json!({"type": "ownerStatement", "month": "2026-09"}),
        json!({"type": "revenue", "ownerId": owner}),
        json!({"type": "ownerStatement", "ownerId": owner, "month": "2026-09", "currency": "USD"}),
    ] {
        let res = tests::pms::request(&app, Method::POST, "/reporting/export", "viewer")
            .json(&body)
            .send()
            .await
            .unwrap();
        let (status, answer) = tests::json(res).await;
        assert_eq!(status, 400, "{body}: {answer}");
    }
}
