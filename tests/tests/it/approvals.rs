//! Repair costs and the owner's approval: cost lines and their totals, the threshold in and out
//! (villa over owner, other currencies, company-billed and actual lines not counted), the guard
//! on starting and completing, the owner's page over HTTP (approve, decline, second use, expired,
//! replaced, forged, another approval's token, an estimate changed under the page), the e-mail
//! sent once through the SMTP stand-in, the phone approval and the emergency skip.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, eventually};
use uuid::Uuid;

use crate::management_villas::send;

/// An owner (with an e-mail address unless `email` is None) and a villa of theirs.
async fn owner_and_villa(app: &TestApp, threshold: Value, email: Option<&str>) -> (Uuid, Uuid) {
    let mut body = json!({"ownerType": "INDIVIDUAL", "firstName": "Maya", "lastName": "Santoso",
        "phone": "+62 812 3456 7890", "approvalThreshold": threshold, "managementFeePercent": 18.5});
    if let Some(email) = email {
        body["email"] = json!(email);
    }
    let (status, owner) = send(
        app,
        Method::POST,
        "/management/owners",
        "manager",
        Some(body),
    )
    .await;
    assert_eq!(status, 201, "{owner}");
    let owner_id: Uuid = owner["id"].as_str().unwrap().parse().unwrap();
    let (status, villa) = send(
        app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(json!({"name": "Villa Kemboja", "propertyType": "VILLA", "bedrooms": 3,
            "bathrooms": 2, "maxGuests": 6, "city": "Ubud", "country": "Indonesia", "ownerId": owner_id})),
    )
    .await;
    assert_eq!(status, 201, "{villa}");
    (owner_id, villa["id"].as_str().unwrap().parse().unwrap())
}

async fn work_order(app: &TestApp, villa: Uuid, title: &str) -> Uuid {
    let (status, body) = send(
        app,
        Method::POST,
        "/maintenance/work-orders",
        "staff",
        Some(
            json!({"title": title, "villaId": villa, "category": "POOL", "priority": "HIGH",
            "description": "The pump hums & trips the breaker <daily>."}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().parse().unwrap()
}

/// Adds a cost line; answers the work order.
async fn cost(
    app: &TestApp,
    order: Uuid,
    amount: &str,
    currency: &str,
    bill_to: &str,
    estimate: bool,
) -> Value {
    let (status, body) = send(
        app,
        Method::POST,
        &format!("/maintenance/work-orders/{order}/costs"),
        "staff",
        Some(json!({"kind": "PARTS", "description": format!("{bill_to} line of {amount}"),
            "amount": amount.parse::<f64>().unwrap(), "currency": currency, "billTo": bill_to, "estimate": estimate})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body
}

async fn detail(app: &TestApp, order: Uuid) -> Value {
    let (status, body) = send(
        app,
        Method::GET,
        &format!("/maintenance/work-orders/{order}"),
        "staff",
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn move_to(app: &TestApp, order: Uuid, status: &str) -> (u16, Value) {
    send(
        app,
        Method::PATCH,
        &format!("/maintenance/work-orders/{order}"),
        "manager",
        Some(json!({"status": status})),
    )
    .await
}

/// `{amount, currency}` as numbers and code (amounts are compared as numbers: `500.00` is 500).
fn money(v: &Value) -> Option<(f64, String)> {
    Some((v["amount"].as_f64()?, v["currency"].as_str()?.to_owned()))
}

fn usd(amount: f64) -> Option<(f64, String)> {
    Some((amount, "USD".to_owned()))
}

fn total(order: &Value, currency: &str, bill_to: &str) -> Value {
    order["costTotals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["currency"] == currency && t["billTo"] == bill_to)
        .cloned()
        .unwrap_or(Value::Null)
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_owner_billed_estimate_above_the_threshold_holds_the_work_order(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (owner, villa) = owner_and_villa(
        &app,
        json!({"amount": 500, "currency": "usd"}),
        Some("maya@example.test"),
    )
    .await;
    let (_, shown) = send(
        &app,
        Method::GET,
        &format!("/management/owners/{owner}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(money(&shown["approvalThreshold"]), usd(500.0));
    assert_eq!(shown["managementFeePercent"].as_f64(), Some(18.5));
    let order = work_order(&app, villa, "Pool pump").await;

    // Under the threshold, company-billed and actual costs: no approval.
    let o = cost(&app, order, "400", "USD", "OWNER", true).await;
    assert_eq!(o["status"], "OPEN", "{o}");
    assert_eq!(money(&o["approvalThreshold"]), usd(500.0));
    cost(&app, order, "1000", "USD", "COMPANY", true).await;
    let o = cost(&app, order, "900.5", "USD", "OWNER", false).await;
    assert_eq!(o["status"], "OPEN", "{o}");
    let owner_usd = total(&o, "USD", "OWNER");
    let figures = ["estimated", "actual", "total"].map(|k| owner_usd[k].as_f64());
    assert_eq!(figures, [Some(400.0), Some(900.5), Some(1300.5)], "{o}");
    assert_eq!(
        total(&o, "USD", "COMPANY")["estimated"].as_f64(),
        Some(1000.0)
    );
    assert_eq!(o["costs"].as_array().unwrap().len(), 3);

    // Exactly at the threshold is within it; a cent above is not.
    let o = cost(&app, order, "100", "USD", "OWNER", true).await;
    assert_eq!(o["status"], "OPEN", "500.00 is not above 500: {o}");
    let o = cost(&app, order, "0.01", "USD", "OWNER", true).await;
    assert_eq!(o["status"], "AWAITING_APPROVAL", "{o}");
    assert_eq!(o["statusBeforeApproval"], "OPEN");
    assert_eq!(
        o["nextStatuses"],
        json!([{"status": "CANCELLED", "requires": null}])
    );
    let last = o["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["from"].as_str(), last["to"].as_str()),
        (Some("OPEN"), Some("AWAITING_APPROVAL"))
    );
    assert!(
        last["reason"].as_str().unwrap().contains("USD 500.01"),
        "{last}"
    );
    let cent: Uuid = o["costs"].as_array().unwrap().last().unwrap()["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    // It can neither start nor complete.
    for to in ["IN_PROGRESS", "COMPLETED"] {
        let (status, body) = move_to(&app, order, to).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["error"]["code"], "OWNER_APPROVAL_REQUIRED", "{body}");
    }
    // Assigning it keeps it waiting, and the approval will return it ASSIGNED.
    let (status, staff) = send(
        &app,
        Method::POST,
        "/management/staff",
        "manager",
        Some(
            json!({"firstName": "Wayan", "lastName": "Sudirta", "defaultRole": "POOL_TECHNICIAN"}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{staff}");
    let (status, o) = send(
        &app,
        Method::POST,
        &format!("/maintenance/work-orders/{order}/assign"),
        "manager",
        Some(json!({"assigneeId": staff["id"], "assigneeType": "TECHNICIAN"})),
    )
    .await;
    assert_eq!(status, 200, "{o}");
    assert_eq!(o["status"], "AWAITING_APPROVAL");
    assert_eq!(o["statusBeforeApproval"], "ASSIGNED");

    // Removing the cent returns it; lowering a line by PATCH too.
    let (status, o) = send(
        &app,
        Method::DELETE,
        &format!("/maintenance/work-orders/{order}/costs/{cent}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 200, "{o}");
    assert_eq!(o["status"], "ASSIGNED", "{o}");
    assert!(o["statusBeforeApproval"].is_null());

    // Another currency always needs approval.
    let o = cost(&app, order, "5", "EUR", "OWNER", true).await;
    assert_eq!(o["status"], "AWAITING_APPROVAL", "{o}");
    let eur: Uuid = o["costs"].as_array().unwrap().last().unwrap()["id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let (status, o) = send(
        &app,
        Method::PATCH,
        &format!("/maintenance/work-orders/{order}/costs/{eur}"),
        "manager",
        Some(json!({"billTo": "COMPANY"})),
    )
    .await;
    assert_eq!(status, 200, "{o}");
    assert_eq!(
        o["status"], "ASSIGNED",
        "a company-billed EUR line needs nothing: {o}"
    );

    // The villa's own threshold wins over the owner's; null gives the owner's back.
    let o = cost(&app, order, "200", "USD", "OWNER", true).await;
    assert_eq!(
        o["status"], "AWAITING_APPROVAL",
        "USD 700 over the owner's 500: {o}"
    );
    let (status, v) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{villa}"),
        "manager",
        Some(json!({"approvalThreshold": {"amount": "1000.00", "currency": "USD"}})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(money(&v["approvalThreshold"]), usd(1000.0));
    // A changed threshold moves the villa's work orders at once.
    let o = detail(&app, order).await;
    assert_eq!(
        o["status"], "ASSIGNED",
        "USD 700 under the villa's 1000: {o}"
    );
    assert_eq!(money(&o["approvalThreshold"]), usd(1000.0));
    let o = cost(&app, order, "1", "USD", "COMPANY", true).await;
    assert_eq!(o["status"], "ASSIGNED");
    let (status, v) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{villa}"),
        "manager",
        Some(json!({"approvalThreshold": null})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert!(v["approvalThreshold"].is_null());
    assert_eq!(
        detail(&app, order).await["status"],
        "AWAITING_APPROVAL",
        "the owner's 500 applies again"
    );
    // No threshold at all: nothing needs approval.
    let (status, _) = send(
        &app,
        Method::PATCH,
        &format!("/management/owners/{owner}"),
        "manager",
        Some(json!({"approvalThreshold": null})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        detail(&app, order).await["status"],
        "ASSIGNED",
        "no threshold: nothing to wait for"
    );
    let o = cost(&app, order, "99999", "JPY", "OWNER", true).await;
    assert_eq!(o["status"], "ASSIGNED", "{o}");
    assert!(o["approvalThreshold"].is_null());

    // Bad input: every field named.
    let (status, body) = send(&app, Method::PATCH, &format!("/management/owners/{owner}"), "manager",
        Some(json!({"approvalThreshold": {"amount": -1, "currency": "US"}, "managementFeePercent": 101}))).await;
    assert_eq!(status, 400, "{body}");
    let fields: Vec<&str> = body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    for f in [
        "approvalThreshold.amount",
        "approvalThreshold.currency",
        "managementFeePercent",
    ] {
        assert!(fields.contains(&f), "{f} not in {body}");
    }
    let (status, body) = send(
        &app,
        Method::POST,
        &format!("/maintenance/work-orders/{order}/costs"),
        "staff",
        Some(json!({"kind": "MAGIC", "amount": 1.234, "currency": "dollars", "billTo": "ME"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let fields: Vec<&str> = body["error"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    for f in [
        "kind",
        "description",
        "amount",
        "currency",
        "billTo",
        "estimate",
    ] {
        assert!(fields.contains(&f), "{f} not in {body}");
    }
    let (status, body) = send(
        &app,
        Method::GET,
        &format!("/maintenance/work-orders/{}/costs", Uuid::now_v7()),
        "staff",
        None,
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = send(
        &app,
        Method::GET,
        &format!("/maintenance/work-orders/{order}/costs?limit=2"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    assert_eq!(
        body["pagination"]["total"], 8,
        "nine lines added, one removed"
    );
    // While the owner is asked, staff cannot change the lines; a manager can.
    let (status, v) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{villa}"),
        "manager",
        Some(json!({"approvalThreshold": {"amount": 500, "currency": "USD"}})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let o = detail(&app, order).await;
    assert_eq!(o["status"], "AWAITING_APPROVAL", "{o}");
    let line = body["data"][0]["id"].as_str().unwrap().to_owned();
    let path = format!("/maintenance/work-orders/{order}/costs/{line}");
    let (status, refused) = send(
        &app,
        Method::PATCH,
        &path,
        "staff",
        Some(json!({"billTo": "COMPANY"})),
    )
    .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "OWNER_APPROVAL_PENDING");
    let (status, o) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"description": "Pump, checked"})),
    )
    .await;
    assert_eq!(status, 200, "{o}");
    // Viewers read costs but do not write them.
    let (status, _) = send(&app, Method::POST, &format!("/maintenance/work-orders/{order}/costs"), "viewer",
        Some(json!({"kind": "LABOUR", "description": "x", "amount": 1, "currency": "USD", "billTo": "OWNER", "estimate": true}))).await;
    assert_eq!(status, 403);
}

/// A page's HTML, with its status; asserts what every page of the owner's must be.
async fn page(app: &TestApp, url: &str) -> (u16, String) {
    let res = app.http.get(url).send().await.unwrap();
    read_page(res).await
}

async fn read_page(res: reqwest::Response) -> (u16, String) {
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let html = res.text().await.unwrap();
    assert!(
        headers[reqwest::header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{status}: {headers:?}"
    );
    assert_eq!(headers[reqwest::header::CACHE_CONTROL], "no-store");
    assert_eq!(headers[reqwest::header::REFERRER_POLICY], "no-referrer");
    assert!(!html.contains("<script"), "{html}");
    (status, html)
}

async fn post_form(app: &TestApp, url: &str, form: &[(&str, &str)]) -> (u16, String) {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let res = app
        .http
        .post(url)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .unwrap();
    read_page(res).await
}

/// The `seen` value of the page's form.
fn seen_of(html: &str) -> String {
    let at = html
        .find("name=\"seen\" value=\"")
        .expect("the form's estimate")
        + 19;
    html[at..].split('"').next().unwrap().to_owned()
}

/// A PHOTO field note of `order` (a 900 × 600 JPEG) sent as the technician's app sends it.
async fn photo_note(app: &TestApp, order: Uuid) -> Uuid {
    let img = image::RgbImage::from_fn(900, 600, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, 90])
    });
    let mut jpeg = std::io::Cursor::new(Vec::new());
    img.write_to(&mut jpeg, image::ImageFormat::Jpeg).unwrap();
    let form = reqwest::multipart::Form::new()
        .text("type", "PHOTO")
        .text("workOrderId", order.to_string())
        .part(
            "file",
            reqwest::multipart::Part::bytes(jpeg.into_inner())
                .file_name("pump.jpg")
                .mime_str("image/jpeg")
                .unwrap(),
        );
    let res = app
        .request(Method::POST, "/maintenance/field-notes", Some("staff"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    let (status, body) = tests::json(res).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().parse().unwrap()
}

async fn request_link(app: &TestApp, order: Uuid) -> Value {
    let (status, body) = send(
        app,
        Method::POST,
        &format!("/maintenance/work-orders/{order}/approval-requests"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_owner_decides_on_the_page_of_a_signed_link_once(pool: PgPool) {
    let mailbox = fake_smtp::Mailbox::default();
    let smtp = fake_smtp::start(0, mailbox.clone()).await.unwrap();
    let app = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            smtp_url: Some(format!("smtp://{smtp}")),
            ..Default::default()
        },
    )
    .await;
    let (_, villa) = owner_and_villa(
        &app,
        json!({"amount": 350, "currency": "USD"}),
        Some("maya@example.test"),
    )
    .await;
    let order = work_order(&app, villa, "Pool pump <replacement>").await;
    cost(&app, order, "620", "USD", "OWNER", true).await;
    assert_eq!(detail(&app, order).await["status"], "AWAITING_APPROVAL");

    // Staff cannot ask the owner; a manager can.
    let (status, _) = send(
        &app,
        Method::POST,
        &format!("/maintenance/work-orders/{order}/approval-requests"),
        "staff",
        None,
    )
    .await;
    assert_eq!(status, 403);
    let request = request_link(&app, order).await;
    assert_eq!(request["email"]["status"], "QUEUED", "{request}");
    assert_eq!(request["email"]["to"], "maya@example.test");
    assert_eq!(request["estimate"], json!({"USD": "620.00"}));
    let url = request["approvalUrl"].as_str().unwrap().to_owned();
    assert!(
        url.starts_with(&format!("{}/approvals/", app.base)),
        "{url}"
    );

    // The e-mail goes out once, through the relay, with the link.
    let worker = app.worker(jobs::JobRegistry::new().register::<jobs::mail::SendApprovalRequest>());
    let mails = eventually(Duration::from_secs(20), || {
        let mailbox = mailbox.clone();
        async move { Some(mailbox.mails()).filter(|m| !m.is_empty()) }
    })
    .await
    .expect("the approval e-mail reached the relay");
    assert_eq!(mails[0].to, vec!["maya@example.test".to_owned()]);
    assert!(
        mails[0].header("Subject").unwrap().contains("Pool pump"),
        "{:?}",
        mails[0]
    );
    assert!(mails[0].body().contains(&url), "{}", mails[0].body());
    assert!(
        mails[0].body().contains("USD 620.00"),
        "{}",
        mails[0].body()
    );
    let sent = eventually(Duration::from_secs(10), || async {
        let o = detail(&app, order).await;
        Some(o).filter(|o| o["approvals"][0]["emailSentAt"].is_string())
    })
    .await
    .expect("the request records its e-mail");
    assert!(sent["history"].as_array().unwrap().iter().any(|h| {
        h["reason"]
            .as_str()
            .unwrap_or("")
            .contains("e-mail sent to maya@example.test")
    }));
    // Enqueueing it again adds nothing, and a run of it now would find nothing to send.
    let approval_id: Uuid = request["id"].as_str().unwrap().parse().unwrap();
    {
        use jobs::Job as _;
        let mut tx = pool.begin().await.unwrap();
        let again = jobs::mail::SendApprovalRequest { approval_id }
            .enqueue(&mut tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert!(!again.inserted, "one e-mail job per request");
        let mut conn = pool.acquire().await.unwrap();
        let left = domain::maintenance::approvals::mail_to_send(&mut conn, approval_id)
            .await
            .unwrap();
        assert!(left.is_none(), "a sent request has nothing left to send");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(mailbox.mails().len(), 1);
    drop(worker);

    // A photo of the work: its field note, as a technician takes it.
    let photo = photo_note(&app, order).await;

    // The page: the villa, the work order (escaped), the lines, the form; no script.
    let (status, html) = page(&app, &url).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains(&format!("photos/{photo}")), "{html}");
    let res = app
        .http
        .get(format!("{url}/photos/{photo}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()[reqwest::header::CONTENT_TYPE], "image/jpeg");
    let small = image::load_from_memory(&res.bytes().await.unwrap()).unwrap();
    assert!(
        small.width() <= 400 && small.height() <= 400,
        "a thumbnail, not the 900 px original"
    );
    let (status, _) = page(&app, &format!("{url}/photos/{}", Uuid::now_v7())).await;
    assert_eq!(status, 404, "a photo the page does not show");
    for text in [
        "Villa Kemboja",
        "Pool pump &lt;replacement&gt;",
        "hums &amp; trips",
        "USD 620.00",
        "Approve",
        "Decline",
        "USD 350.00",
    ] {
        assert!(html.contains(text), "{text} not in {html}");
    }
    assert!(!html.contains("<replacement>"));
    assert_eq!(seen_of(&html), "USD 620.00");

    // A forged token, another approval's id under this one's MAC, garbage: 404 and nothing.
    let token = url.rsplit('/').next().unwrap().to_owned();
    let mut forged = token.clone().into_bytes();
    forged[42] = if forged[42] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    for bad in [forged.as_str(), "not-a-token", &"A".repeat(43)] {
        let (status, html) = page(&app, &app.url(&format!("/approvals/{bad}"))).await;
        assert_eq!(status, 404, "{html}");
        let (status, _) = post_form(
            &app,
            &app.url(&format!("/approvals/{bad}")),
            &[("decision", "APPROVED"), ("seen", "USD 620.00")],
        )
        .await;
        assert_eq!(status, 404);
    }

    // Another work order's link decides only that one.
    let other = work_order(&app, villa, "Gate motor").await;
    cost(&app, other, "400", "USD", "OWNER", true).await;
    let other_url = request_link(&app, other).await["approvalUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    let other_token = other_url.rsplit('/').next().unwrap();
    let spliced = format!("{}{}", &token[..22], &other_token[22..]);
    let (status, _) = page(&app, &app.url(&format!("/approvals/{spliced}"))).await;
    assert_eq!(status, 404, "an id under another approval's MAC");

    // A form without a decision, or with too long a note, changes nothing.
    let (status, html) = post_form(&app, &url, &[("seen", "USD 620.00")]).await;
    assert_eq!(status, 400, "{html}");
    let (status, html) = post_form(
        &app,
        &url,
        &[
            ("decision", "APPROVED"),
            ("note", "a\0b"),
            ("seen", "USD 620.00"),
        ],
    )
    .await;
    assert_eq!(status, 400, "a NUL in the note: {html}");
    let huge = "x".repeat(100 * 1024);
    let (status, html) = post_form(&app, &url, &[("decision", "APPROVED"), ("note", &huge)]).await;
    assert_eq!(
        status, 413,
        "a form past 64 KiB is refused as a page: {html}"
    );
    let long = "x".repeat(2001);
    let (status, _) = post_form(
        &app,
        &url,
        &[
            ("decision", "APPROVED"),
            ("note", &long),
            ("seen", "USD 620.00"),
        ],
    )
    .await;
    assert_eq!(status, 400);

    // The estimate changed under the open page: 409 with the new page, nothing recorded.
    let o = cost(&app, order, "30", "USD", "OWNER", true).await;
    assert_eq!(o["status"], "AWAITING_APPROVAL");
    let (status, html) = post_form(
        &app,
        &url,
        &[("decision", "APPROVED"), ("seen", "USD 620.00")],
    )
    .await;
    assert_eq!(status, 409, "{html}");
    assert!(
        html.contains("USD 650.00") && html.contains("estimate changed"),
        "{html}"
    );
    assert_eq!(seen_of(&html), "USD 650.00");
    assert_eq!(detail(&app, order).await["status"], "AWAITING_APPROVAL");

    // Approve: the work order goes back to where it was; when, from where, the note.
    let (status, html) = post_form(
        &app,
        &url,
        &[
            ("decision", "APPROVED"),
            ("note", "Go ahead, thanks"),
            ("seen", "USD 650.00"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("approved"), "{html}");
    let o = detail(&app, order).await;
    assert_eq!(o["status"], "OPEN", "{o}");
    let step = &o["approvals"][0];
    assert_eq!(step["channel"], "LINK");
    assert_eq!(step["decision"], "APPROVED");
    assert_eq!(step["note"], "Go ahead, thanks");
    assert_eq!(step["decidedFrom"], "127.0.0.1");
    assert_eq!(step["decidedBy"], "owner (approval link)");
    assert_eq!(step["estimate"], json!({"USD": "650.00"}));
    assert!(step["decidedAt"].is_string());
    let last = o["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["from"].as_str(), last["to"].as_str()),
        (Some("AWAITING_APPROVAL"), Some("OPEN"))
    );
    assert!(
        last["reason"]
            .as_str()
            .unwrap()
            .contains("Go ahead, thanks"),
        "{last}"
    );
    let (status, _) = move_to(&app, order, "IN_PROGRESS").await;
    assert_eq!(status, 200, "an approved work order starts");

    // A used link shows no photo any more.
    let (status, _) = page(&app, &format!("{url}/photos/{photo}")).await;
    assert_eq!(status, 404);
    // A second use: 410, nothing changes (not even a decline).
    let (status, html) = page(&app, &url).await;
    assert_eq!(status, 410, "{html}");
    assert!(html.contains("already been answered"), "{html}");
    let (status, _) = post_form(
        &app,
        &url,
        &[("decision", "DECLINED"), ("seen", "USD 650.00")],
    )
    .await;
    assert_eq!(status, 410);
    assert_eq!(detail(&app, order).await["status"], "IN_PROGRESS");

    // An approval covers what it was given for: more needs another.
    let o = cost(&app, order, "100", "USD", "OWNER", true).await;
    assert_eq!(o["status"], "AWAITING_APPROVAL", "{o}");
    assert_eq!(o["statusBeforeApproval"], "IN_PROGRESS");

    // Decline on the other work order's link: CANCELLED, the note as reason.
    let (_, html) = page(&app, &other_url).await;
    let (status, html) = post_form(
        &app,
        &other_url,
        &[
            ("decision", "declined"),
            ("note", "Too expensive"),
            ("seen", &seen_of(&html)),
        ],
    )
    .await;
    assert_eq!(status, 200, "{html}");
    let o = detail(&app, other).await;
    assert_eq!(o["status"], "CANCELLED");
    let last = o["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["to"], "CANCELLED");
    assert!(
        last["reason"].as_str().unwrap().contains("Too expensive"),
        "{last}"
    );

    // A newer request replaces the unused link; an expired link changes nothing.
    let first = request_link(&app, order).await["approvalUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = request_link(&app, order).await;
    let (status, html) = page(&app, &first).await;
    assert_eq!(status, 410, "{html}");
    assert!(html.contains("replaced"), "{html}");
    let second_id: Uuid = second["id"].as_str().unwrap().parse().unwrap();
    sqlx::query(
        "UPDATE work_order_approvals SET expires_at = now() - interval '1 second' WHERE id = $1",
    )
    .bind(second_id)
    .execute(&pool)
    .await
    .unwrap();
    let second_url = second["approvalUrl"].as_str().unwrap();
    let (status, html) = page(&app, second_url).await;
    assert_eq!(status, 410);
    assert!(html.contains("expired"), "{html}");
    let (status, _) = post_form(
        &app,
        second_url,
        &[("decision", "APPROVED"), ("seen", "USD 750.00")],
    )
    .await;
    assert_eq!(status, 410);
    assert_eq!(detail(&app, order).await["status"], "AWAITING_APPROVAL");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_phone_approval_is_recorded_and_an_emergency_skips_the_wait(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (_, villa) = owner_and_villa(&app, json!({"amount": 350, "currency": "USD"}), None).await;
    let order = work_order(&app, villa, "Roof leak").await;

    // Not waiting: nothing to approve.
    let (status, body) = send(
        &app,
        Method::POST,
        &format!("/maintenance/work-orders/{order}/approval"),
        "manager",
        Some(json!({"decision": "APPROVED"})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "APPROVAL_NOT_NEEDED");
    cost(&app, order, "1200", "USD", "OWNER", true).await;

    // No SMTP_URL and no e-mail address: the link is made, and the answer says why no e-mail.
    let request = request_link(&app, order).await;
    assert_eq!(request["email"]["status"], "NOT_SENT", "{request}");
    assert!(
        request["email"]["reason"]
            .as_str()
            .unwrap()
            .contains("no e-mail address"),
        "{request}"
    );
    let url = request["approvalUrl"].as_str().unwrap().to_owned();

    let path = format!("/maintenance/work-orders/{order}/approval");
    let (status, _) = send(
        &app,
        Method::POST,
        &path,
        "staff",
        Some(json!({"decision": "APPROVED"})),
    )
    .await;
    assert_eq!(status, 403);
    let (status, body) = send(
        &app,
        Method::POST,
        &path,
        "manager",
        Some(json!({"decision": "MAYBE"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, o) = send(
        &app,
        Method::POST,
        &path,
        "manager",
        Some(json!({"decision": "approved", "note": "Owner called back at 14:10"})),
    )
    .await;
    assert_eq!(status, 200, "{o}");
    assert_eq!(o["status"], "OPEN");
    let phone = o["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["channel"] == "PHONE")
        .unwrap()
        .clone();
    assert_eq!(phone["decision"], "APPROVED");
    assert_eq!(phone["note"], "Owner called back at 14:10");
    assert!(
        phone["decidedBy"]
            .as_str()
            .is_some_and(|by| !by.is_empty() && by != "owner (approval link)")
    );
    let last = o["history"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["reason"].as_str().unwrap().contains("by phone"),
        "{last}"
    );
    // The link sent before is closed by the phone decision.
    let (status, _) = page(&app, &url).await;
    assert_eq!(status, 410);
    let (status, body) = send(
        &app,
        Method::POST,
        &path,
        "manager",
        Some(json!({"decision": "DECLINED"})),
    )
    .await;
    assert_eq!(status, 409, "{body}");

    // An emergency's work order is flagged, not held.
    let (status, emergency) = send(&app, Method::POST, "/maintenance/emergencies", "staff",
        Some(json!({"villaId": villa, "category": "PLUMBING", "severity": "CRITICAL", "description": "Burst pipe in the kitchen"}))).await;
    assert_eq!(status, 201, "{emergency}");
    let urgent: Uuid = emergency["workOrderId"].as_str().unwrap().parse().unwrap();
    let o = cost(&app, urgent, "2400", "USD", "OWNER", true).await;
    assert_eq!(o["status"], "OPEN", "{o}");
    assert_eq!(o["approvalSkipped"], "EMERGENCY");
    let last = o["history"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["reason"]
            .as_str()
            .unwrap()
            .contains("skipped: an emergency"),
        "{last}"
    );
    let (status, body) = move_to(&app, urgent, "IN_PROGRESS").await;
    assert_eq!(status, 200, "{body}");
    // Under the threshold it is no longer flagged.
    let line: Uuid = o["costs"][0]["id"].as_str().unwrap().parse().unwrap();
    let (status, o) = send(
        &app,
        Method::PATCH,
        &format!("/maintenance/work-orders/{urgent}/costs/{line}"),
        "staff",
        Some(json!({"amount": 100})),
    )
    .await;
    assert_eq!(status, 200, "{o}");
    assert!(o["approvalSkipped"].is_null(), "{o}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn two_answers_at_once_record_one_decision(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (_, villa) = owner_and_villa(&app, json!({"amount": 100, "currency": "USD"}), None).await;
    let order = work_order(&app, villa, "Water heater").await;
    cost(&app, order, "300", "USD", "OWNER", true).await;
    let url = request_link(&app, order).await["approvalUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    // The work order's row held by another transaction while both answers arrive: both wait on
    // it, and the one that gets it second finds the link used.
    let mut holder = pool.begin().await.unwrap();
    let holder_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *holder)
        .await
        .unwrap();
    sqlx::query("SELECT 1 FROM work_orders WHERE id = $1 FOR UPDATE")
        .bind(order)
        .execute(&mut *holder)
        .await
        .unwrap();
    let approve = post_form(
        &app,
        &url,
        &[("decision", "APPROVED"), ("seen", "USD 300.00")],
    );
    let decline = post_form(
        &app,
        &url,
        &[("decision", "DECLINED"), ("seen", "USD 300.00")],
    );
    let release = async {
        tests::wait_blocked_by(&pool, holder_pid, 2).await;
        holder.commit().await.unwrap();
    };
    let ((a, _), (d, _), ()) = tokio::join!(approve, decline, release);
    let mut statuses = [a, d];
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [200, 410],
        "one decision recorded, the other refused"
    );
    let o = detail(&app, order).await;
    let decided: Vec<&Value> = o["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["decision"].is_null())
        .collect();
    assert_eq!(decided.len(), 1, "{o}");
    let expected = if a == 200 { "OPEN" } else { "CANCELLED" };
    assert_eq!(o["status"], expected, "{o}");
}
