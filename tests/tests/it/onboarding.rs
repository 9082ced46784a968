//! The onboarding wizard over HTTP: start to completion, every step's validation, autosave,
//! concurrent edits (If-Match), villas, owners, facilities, dashboards and internal routes.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, json};
use uuid::Uuid;

use crate::auth::assert_error_shape;

pub fn villa_body(code: &str) -> Value {
    json!({
        "villaCode": code, "villaName": format!("Villa {code}"), "address": "Jl. Pantai 1",
        "city": "Canggu", "country": "Indonesia", "bedrooms": 4, "bathrooms": 3, "maxGuests": 8,
        "propertyType": "VILLA",
    })
}

pub async fn start(app: &TestApp, code: &str) -> (Uuid, String) {
    let res = app
        .post_json("/api/onboarding/start", "manager", &villa_body(code))
        .await;
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let (status, body) = json(res).await;
    assert_eq!(status, 201, "{body}");
    (body["villaId"].as_str().unwrap().parse().unwrap(), etag)
}

fn error_fields(body: &Value) -> Vec<String> {
    body["data"]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors in {body}"))
        .iter()
        .map(|e| e["field"].as_str().unwrap().to_owned())
        .collect()
}

async fn save(app: &TestApp, villa: Uuid, step: u8, body: Value) -> (u16, Value) {
    json(
        app.post_json(
            &format!("/api/onboarding/{villa}/save-step-{step}"),
            "manager",
            &body,
        )
        .await,
    )
    .await
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_wizard_from_start_to_completion(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "BALI-001").await;

    let (_, p) = json(
        app.get(&format!("/api/onboarding/{villa}/progress"), "viewer")
            .await,
    )
    .await;
    let progress = &p["progress"];
    assert_eq!(progress["completionPercentage"], 0);
    assert_eq!(progress["currentStep"], 1);
    assert_eq!(progress["totalSteps"], 10);
    assert_eq!(progress["status"], "IN_PROGRESS");
    assert_eq!(progress["stepsCompleted"], json!(vec![false; 10]));

    // Completing too early names the missing steps.
    let early = json!({"agreedToTerms": true, "dataAccuracyConfirmed": true});
    let (status, body) = json(
        app.post_json(
            &format!("/api/onboarding/{villa}/complete"),
            "manager",
            &early,
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["data"]["missingSteps"].as_array().unwrap().len(), 10);
    assert_error_shape("onboarding", &body, 400, "ONBOARDING_INCOMPLETE");

    let steps: Vec<Value> = vec![
        json!({"description": "Cliff-top villa", "villaStyle": "balinese"}),
        json!({"firstName": "Ayu", "lastName": "Lestari", "email": "ayu@example.com", "phone": "+62 812 3456 7890", "ownerType": "INDIVIDUAL"}),
        json!({"contractType": "EXCLUSIVE", "commissionRate": 20, "contractStartDate": "2026-01-01"}),
        json!({"accountHolderName": "Ayu Lestari", "bankName": "BCA", "accountNumber": "1234567890", "iban": "GB82 WEST 1234 5698 7654 32"}),
        json!({"credentials": [{"platform": "AIRBNB", "username": "ayu", "password": "hunter2-secret", "listingUrl": "https://airbnb.com/rooms/1"}]}),
        json!({}),
        json!({"staff": [{"name": "Made Wirawan", "role": "VILLA_MANAGER", "phone": "+62 811 000 111", "isPrimary": true}]}),
        json!({"facilities": [{"category": "Kitchen", "itemName": "Oven", "quantity": 1, "condition": "GOOD"}]}),
        json!({}),
        json!({}),
    ];
    for (i, data) in steps.into_iter().enumerate() {
        let n = i as u8 + 1;
        let (status, body) = save(&app, villa, n, data).await;
        assert_eq!(status, 200, "step {n}: {body}");
        assert_eq!(body["step"], n);
        assert_eq!(body["progress"]["completionPercentage"], 10 * n);
        assert_eq!(body["progress"]["currentStep"], (n + 1).min(10));
    }

    let (_, summary) = json(
        app.get(&format!("/api/onboarding/{villa}/summary"), "viewer")
            .await,
    )
    .await;
    let details = summary["stepDetails"].as_array().unwrap();
    assert_eq!(details.len(), 10);
    assert_eq!(details[0]["name"], "villaInfo");
    assert_eq!(details[1]["name"], "ownerDetails");
    assert!(details.iter().all(|d| d["completed"] == true));
    assert_eq!(details[4]["hasData"], true);
    assert_eq!(details[5]["hasData"], false, "no documents were uploaded");

    // Terms not agreed: each flag named.
    let (status, body) = json(
        app.post_json(
            &format!("/api/onboarding/{villa}/complete"),
            "manager",
            &json!({"agreedToTerms": false}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        error_fields(&body),
        ["agreedToTerms", "dataAccuracyConfirmed"]
    );

    let (status, body) = json(
        app.post_json(
            &format!("/api/onboarding/{villa}/complete"),
            "manager",
            &json!({"agreedToTerms": true, "dataAccuracyConfirmed": true, "reviewNotes": "all good"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "COMPLETED");
    assert_eq!(body["progress"]["completionPercentage"], 100);
    assert!(body["completedAt"].is_string());
    assert!(body["completedBy"].is_string());

    let (_, v) = json(app.get(&format!("/api/villas/{villa}"), "viewer").await).await;
    let d = &v["data"];
    assert_eq!(d["villa"]["status"], "APPROVED");
    assert_eq!(d["villa"]["isActive"], true);
    assert_eq!(d["villa"]["villaStyle"], "BALINESE");
    assert_eq!(d["ownerDetails"]["email"], "ayu@example.com");
    assert_eq!(d["contractualDetails"]["commissionRate"], 20.0);
    assert_eq!(d["bankDetails"]["accountNumber"], "****7890");
    assert_eq!(d["bankDetails"]["iban"], "****5432");
    assert_eq!(d["otaCredentials"][0]["platform"], "AIRBNB");
    assert_eq!(d["otaCredentials"][0]["hasPassword"], true);
    assert!(d["otaCredentials"][0].get("password").is_none());
    assert_eq!(d["staff"][0]["firstName"], "Made");
    assert_eq!(d["staff"][0]["isPrimary"], true);
    assert_eq!(d["facilities"][0]["itemName"], "Oven");
    assert_eq!(d["onboarding"]["status"], "COMPLETED");

    // The management surface sees the same villa, active.
    let (_, m) = json(
        app.get(&format!("/management/villas/{villa}"), "viewer")
            .await,
    )
    .await;
    assert_eq!(m["status"], "ACTIVE", "{m}");

    // The dashboard counts it, with its optional fields left empty.
    let (_, stats) = json(app.get("/api/dashboard/stats", "viewer").await).await;
    let s = &stats["data"];
    assert_eq!(s["onboardingCompleted"], 1);
    assert_eq!(s["activeVillas"], 1);
    assert_eq!(s["totalOwners"], 1);
    assert!(s["averageCompletionTime"].as_f64().unwrap() >= 0.0);
    let skipped: Vec<&str> = s["mostSkippedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fieldName"].as_str().unwrap())
        .collect();
    assert!(skipped.contains(&"ownerDetails.nationality"), "{skipped:?}");
    assert!(!skipped.contains(&"ownerDetails.email"), "{skipped:?}");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn start_and_create_list_every_bad_field(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let bad = json!({"villaCode": "", "villaName": "x".repeat(256), "bedrooms": 0, "bathrooms": "two",
                     "maxGuests": 101, "propertyType": "CASTLE", "city": "Ubud"});
    for path in ["/api/onboarding/start", "/api/villas"] {
        let (status, body) = json(app.post_json(path, "manager", &bad).await).await;
        assert_eq!(status, 400, "{body}");
        assert_error_shape("onboarding", &body, 400, "VALIDATION_ERROR");
        assert_eq!(
            error_fields(&body),
            [
                "villaCode",
                "villaName",
                "address",
                "country",
                "bedrooms",
                "bathrooms",
                "maxGuests",
                "propertyType"
            ]
        );
    }
    // A code in use is a 400 on villaCode.
    let (status, _) = json(
        app.post_json("/api/villas", "manager", &villa_body("DUP-1"))
            .await,
    )
    .await;
    assert_eq!(status, 201);
    let (status, body) = json(
        app.post_json("/api/onboarding/start", "manager", &villa_body("DUP-1"))
            .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error_fields(&body), ["villaCode"]);
    // Not JSON, not an object.
    let res = app
        .request(Method::POST, "/api/villas", Some("manager"))
        .header("content-type", "application/json")
        .body("[1,2]")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let res = app
        .request(Method::POST, "/api/villas", Some("manager"))
        .body("villaCode=x")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 415);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn steps_2_to_5_report_each_bad_field(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (villa, _) = start(&app, "VAL-1").await;
    let cases = [
        (
            2,
            json!({"email": "not-an-email", "phone": "0812345", "ownerType": "ALIEN", "firstName": 5}),
            vec!["ownerType", "firstName", "email", "phone"],
        ),
        (
            3,
            json!({"contractType": "FOREVER", "commissionRate": 120, "contractStartDate": "01/02/2026", "payoutDay": 40}),
            vec![
                "contractType",
                "commissionRate",
                "contractStartDate",
                "payoutDay",
            ],
        ),
        (
            3,
            json!({"contractStartDate": "2026-05-01", "contractEndDate": "2026-04-01"}),
            vec!["contractEndDate"],
        ),
        (
            4,
            json!({"iban": "GB00 WEST 1234 5698 7654 32", "currency": "euro"}),
            vec!["currency", "iban"],
        ),
        (
            5,
            json!({"credentials": [{"platform": "MYSPACE"}, {"platform": "VRBO", "listingUrl": "ftp://x"}, 3]}),
            vec![
                "credentials[0].platform",
                "credentials[1].listingUrl",
                "credentials[2]",
            ],
        ),
        (
            7,
            json!({"staff": [{"role": "BUTLER"}, {"name": "A", "role": "CHEF", "email": "x"}]}),
            vec!["staff[0].firstName", "staff[0].role", "staff[1].email"],
        ),
        (
            8,
            json!({"facilities": [{"itemName": "Oven", "condition": "BROKEN", "quantity": -1, "photo": "%%%"}]}),
            vec![
                "facilities[0].category",
                "facilities[0].quantity",
                "facilities[0].condition",
                "facilities[0].photo",
            ],
        ),
    ];
    for (step, body, fields) in cases {
        let (status, res) = save(&app, villa, step, body).await;
        assert_eq!(status, 400, "step {step}: {res}");
        assert_eq!(error_fields(&res), fields, "step {step}");
    }
    // Nothing was marked by the refused saves.
    let (_, p) = json(
        app.get(&format!("/api/onboarding/{villa}/progress"), "viewer")
            .await,
    )
    .await;
    assert_eq!(p["progress"]["completionPercentage"], 0);
    // Partial data is accepted, and what is left out is kept.
    let (status, _) = save(
        &app,
        villa,
        2,
        json!({"firstName": "Ayu", "email": "ayu@example.com"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = save(&app, villa, 2, json!({"lastName": "Lestari"})).await;
    assert_eq!(status, 200);
    assert_eq!(body["savedFields"], json!(["lastName"]));
    let (_, owner) = json(app.get(&format!("/api/owners/{villa}"), "viewer").await).await;
    assert_eq!(owner["data"]["firstName"], "Ayu");
    assert_eq!(owner["data"]["lastName"], "Lestari");
    assert_eq!(owner["data"]["ownerType"], "INDIVIDUAL");
    // 404 for an unknown villa, 400 for a malformed id.
    let (status, body) = save(&app, Uuid::now_v7(), 1, json!({})).await;
    assert_eq!(status, 404);
    assert_error_shape("onboarding", &body, 404, "NOT_FOUND");
    let (status, _) = json(
        app.post_json("/api/onboarding/nope/save-step-1", "manager", &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 400);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn secrets_are_never_stored_or_returned_in_clear(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "SEC-1").await;
    let password = "Sup3r-Secret-Pa55";
    let account = "9876543210123";
    let (status, body) = json(
        app.post_json(
            &format!("/api/onboarding/{villa}/save-steps-1-5"),
            "manager",
            &json!({
                "bankDetails": {"accountNumber": account, "iban": "DE89 3704 0044 0532 0130 00"},
                "otaCredentials": {"credentials": [{"platform": "booking_com", "username": "u", "password": password}]},
            }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["progress"]["stepsCompleted"],
        json!([
            false, false, false, true, true, false, false, false, false, false
        ])
    );

    // Raw rows: nothing in clear, in any column of any table.
    let dump: Vec<String> = sqlx::query_scalar(
        "SELECT to_jsonb(b)::text FROM bank_details b UNION ALL SELECT to_jsonb(o)::text FROM ota_credentials o",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    for row in &dump {
        for secret in [password, account, "DE89370400440532013000"] {
            assert!(!row.contains(secret), "{secret} in clear: {row}");
            assert!(!row.contains(&hex(secret)), "{secret} as hex: {row}");
        }
    }
    // Nor in any answer.
    let text = app
        .get(&format!("/api/villas/{villa}"), "admin")
        .await
        .text()
        .await
        .unwrap();
    assert!(
        !text.contains(password) && !text.contains(account),
        "{text}"
    );
    assert!(text.contains("****0123"), "{text}");

    // Re-sending a credential by id without its password keeps the stored one.
    let (_, v) = json(app.get(&format!("/api/villas/{villa}"), "admin").await).await;
    let id = v["data"]["otaCredentials"][0]["id"].clone();
    let (status, _) = save(
        &app,
        villa,
        5,
        json!({"credentials": [{"id": id, "platform": "BOOKING_COM", "username": "u2"}]}),
    )
    .await;
    assert_eq!(status, 200);
    let stored: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT password_encrypted FROM ota_credentials WHERE villa_id = $1")
            .bind(villa)
            .fetch_one(&pool)
            .await
            .unwrap();
    let cipher = domain::crypto::FieldCipher::new(&app.core.data_encryption_key);
    assert_eq!(cipher.decrypt(&stored.unwrap()).unwrap(), password);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_stale_if_match_is_refused_with_412(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (villa, etag) = start(&app, "ETAG-1").await;
    let path = format!("/api/onboarding/{villa}/save-step-1");
    let send = |tag: String, body: Value| {
        app.request(Method::POST, &path, Some("manager"))
            .header("if-match", tag)
            .json(&body)
            .send()
    };
    // Alice saves with the tag she read: fine, and she gets a new one.
    let res = send(etag.clone(), json!({"description": "Alice"}))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let newer = res.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(newer, etag);
    // Bob saves with the tag he read before Alice's save: refused, nothing overwritten.
    let (status, body) = json(
        send(etag.clone(), json!({"description": "Bob"}))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 412, "{body}");
    assert_error_shape("onboarding", &body, 412, "PRECONDITION_FAILED");
    let res = app.get(&format!("/api/villas/{villa}"), "viewer").await;
    let (_, v) = json(res).await;
    assert_eq!(v["data"]["villa"]["description"], "Alice");
    // A tag of another record never matches.
    let (status, _) = json(
        send(
            "\"progress-00000000-0000-0000-0000-000000000000-1\"".into(),
            json!({}),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 412);
    // The progress read carries the current tag.
    let res = app
        .get(&format!("/api/onboarding/{villa}/progress"), "viewer")
        .await;
    assert_eq!(res.headers()["etag"].to_str().unwrap(), newer);
    // Deleting a villa with a stale villa tag is refused too.
    let res = app
        .request(
            Method::DELETE,
            &format!("/api/villas/{villa}"),
            Some("admin"),
        )
        .header("if-match", format!("\"villa-{villa}-0\""))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 412);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn autosave_of_steps_1_to_5_never_answers_an_error_status(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "AUTO-1").await;
    let path = format!("/api/onboarding/{villa}/autosave");
    let autosave = |body: Value| {
        app.request(Method::POST, &path, Some("manager"))
            .header("x-auto-save", "true")
            .json(&body)
            .send()
    };
    let saves = [
        (1, json!({"name": "Renamed Villa", "bedrooms": 5})),
        (2, json!({"firstName": "Ayu", "nationality": "Indonesian"})),
        (3, json!({"commissionRate": "17.5"})),
        (4, json!({"bankName": "Mandiri"})),
        (
            5,
            json!({"credentials": [{"platform": "AGODA", "username": "a"}]}),
        ),
    ];
    for (step, data) in saves {
        let (status, body) =
            json(autosave(json!({"step": step, "data": data})).await.unwrap()).await;
        assert_eq!(status, 200);
        assert_eq!(body["success"], true, "step {step}: {body}");
        assert!(
            !body["savedFields"].as_array().unwrap().is_empty(),
            "{body}"
        );
    }
    let (_, v) = json(app.get(&format!("/api/villas/{villa}"), "viewer").await).await;
    let d = &v["data"];
    assert_eq!(d["villa"]["villaName"], "Renamed Villa");
    assert_eq!(d["villa"]["bedrooms"], 5);
    assert_eq!(d["ownerDetails"]["nationality"], "Indonesian");
    assert_eq!(d["contractualDetails"]["commissionRate"], 17.5);
    assert_eq!(d["bankDetails"]["bankName"], "Mandiri");
    assert_eq!(d["otaCredentials"][0]["platform"], "AGODA");
    // Autosave does not complete steps.
    assert_eq!(d["onboarding"]["completionPercentage"], 0);

    // Failures of every kind: 200 with success false and the reason.
    let failures = [
        json!({"step": 2, "data": {"email": "nope"}}),
        json!({"step": 11, "data": {}}),
        json!({"data": {}}),
        json!({"step": 1, "data": []}),
    ];
    for body in failures {
        let (status, res) = json(autosave(body.clone()).await.unwrap()).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(res["success"], false, "{res}");
        assert!(res["message"].is_string());
    }
    // Malformed JSON, an unknown villa, a stale tag: still 200, even without the header.
    let res = app
        .request(Method::POST, &path, Some("manager"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let (status, res) = json(res).await;
    assert_eq!((status, res["success"].clone()), (200, json!(false)));
    let (status, res) = json(
        app.post_json(
            &format!("/api/onboarding/{}/autosave", Uuid::now_v7()),
            "manager",
            &json!({"step": 1, "data": {}}),
        )
        .await,
    )
    .await;
    assert_eq!((status, res["success"].clone()), (200, json!(false)));
    assert_eq!(res["data"]["code"], "NOT_FOUND");
    let res = app
        .request(Method::POST, &path, Some("manager"))
        .header("if-match", format!("\"progress-{villa}-1\""))
        .json(&json!({"step": 1, "data": {}}))
        .send()
        .await
        .unwrap();
    let (status, res) = json(res).await;
    assert_eq!(
        (status, res["data"]["code"].clone()),
        (200, json!("PRECONDITION_FAILED"))
    );
    // Any /api write sent as an autosave answers 200 on failure too.
    let res = app
        .request(
            Method::POST,
            &format!("/api/onboarding/{villa}/save-step-2"),
            Some("manager"),
        )
        .header("x-auto-save", "true")
        .json(&json!({"email": "bad"}))
        .send()
        .await
        .unwrap();
    let (status, res) = json(res).await;
    assert_eq!((status, res["success"].clone()), (200, json!(false)));
    assert_eq!(res["data"]["errors"][0]["field"], "email");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn combined_generic_and_legacy_saves(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (villa, _) = start(&app, "COMBO-1").await;
    let (status, body) = json(
        app.post_json(
            &format!("/api/onboarding/{villa}/save-steps-1-5"),
            "manager",
            &json!({"villaInfo": {"bedrooms": 60}, "ownerDetails": {"email": "x"}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        error_fields(&body),
        ["villaInfo.bedrooms", "ownerDetails.email"]
    );

    // Generic step: completed false saves without completing; true completes.
    let path = format!("/api/onboarding/{villa}/step/3");
    let (status, body) = json(
        app.post_json(
            &path,
            "manager",
            &json!({"data": {"contractType": "revenue_share"}, "completed": false}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["progress"]["stepsCompleted"][2], false);
    let (_, body) = json(
        app.post_json(&path, "manager", &json!({"data": {}, "completed": true}))
            .await,
    )
    .await;
    assert_eq!(body["progress"]["stepsCompleted"][2], true);
    let (status, body) = json(
        app.post_json(
            &format!("/api/onboarding/{villa}/step/0"),
            "manager",
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error_fields(&body), ["stepNumber"]);

    // Legacy segments: villa id in the body.
    let (status, body) = json(
        app.post_json(
            "/api/onboarding/staff/complete",
            "manager",
            &json!({"villaId": villa, "staff": [{"firstName": "Ketut", "role": "gardener"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["progress"]["staffConfigCompleted"], true);
    let (status, body) = json(
        app.post_json("/api/onboarding/documents/complete", "manager", &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error_fields(&body), ["villaId"]);
    let (status, body) = json(
        app.get(&format!("/api/onboarding/progress/{villa}"), "viewer")
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["progress"]["completionPercentage"], 20);
    let (status, body) = json(
        app.post_json(
            "/api/onboarding/basic-info/start",
            "manager",
            &villa_body("LEG-2"),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = json(
        app.post_json(
            "/api/onboarding/finalize",
            "manager",
            &json!({"villaId": villa, "agreedToTerms": true, "dataAccuracyConfirmed": true}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(body["data"]["missingSteps"].is_array());
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn villas_owners_facilities_and_deletion(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "LIST-1").await;
    start(&app, "LIST-2").await;
    let (status, body) = json(app.get("/api/villas?limit=1", "viewer").await).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    assert_eq!(body["pagination"]["total"], 2);
    assert_eq!(body["data"][0]["villaCode"], "LIST-2");
    let (status, _) = json(app.get("/api/villas?limit=0", "viewer").await).await;
    assert_eq!(status, 400);

    // Owners.
    let (status, body) = json(app.get(&format!("/api/owners/{villa}"), "viewer").await).await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = json(
        app.post_json("/api/owners", "manager", &json!({"firstName": "No villa"}))
            .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(error_fields(&body), ["villaId"]);
    let (status, body) = json(
        app.post_json(
            "/api/owners",
            "manager",
            &json!({"villaId": villa, "ownerType": "COMPANY", "companyName": "PT Villa"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = json(
        app.post_json(
            "/api/owners",
            "manager",
            &json!({"villaId": villa, "contactPerson": "Wayan"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["companyName"], "PT Villa");
    assert_eq!(body["data"]["contactPerson"], "Wayan");

    // Facilities with a photo.
    let png = {
        let img = image::RgbImage::from_pixel(8, 8, image::Rgb([1, 2, 3]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    };
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let (status, body) = save(&app, villa, 8, json!({"facilities": [
        {"category": "Pool", "itemName": "Pool pump", "photo": b64, "condition": "good"},
        {"category": "Kitchen", "subcategory": "Appliances", "itemName": "Oven", "isAvailable": false, "quantity": 0},
    ]})).await;
    assert_eq!(status, 200, "{body}");
    let (status, list) = json(
        app.get(&format!("/api/facilities/villa/{villa}"), "viewer")
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let items = list["data"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    let pump = items.iter().find(|i| i["itemName"] == "Pool pump").unwrap();
    assert_eq!(pump["condition"], "GOOD");
    let photo_url = pump["photoUrl"].as_str().unwrap();
    let res = app.get(photo_url, "viewer").await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/png");
    assert_eq!(res.bytes().await.unwrap().to_vec(), png);
    let oven = items.iter().find(|i| i["itemName"] == "Oven").unwrap();
    assert!(oven["photoUrl"].is_null());
    let (status, _) = json(
        app.get(
            &format!("/api/facilities/villa/{}", Uuid::now_v7()),
            "viewer",
        )
        .await,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = json(
        app.get(
            &format!("/api/facilities/photo/{}", Uuid::now_v7()),
            "viewer",
        )
        .await,
    )
    .await;
    assert_eq!(status, 404);

    // Deleting removes every record at once.
    let res = app
        .request(
            Method::DELETE,
            &format!("/api/villas/{villa}"),
            Some("admin"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    for table in [
        "onboarding_progress",
        "onboarding_steps",
        "facilities",
        "contractual_details",
    ] {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM {table} WHERE villa_id = $1"
        )))
        .bind(villa)
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(n, 0, "{table}");
    }
    let owners: i64 = sqlx::query_scalar("SELECT count(*) FROM owners")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(owners, 0, "the villa's own owner goes with it");
    let (status, _) = json(app.get(&format!("/api/villas/{villa}"), "viewer").await).await;
    assert_eq!(status, 404);
    let res = app
        .request(
            Method::DELETE,
            &format!("/api/villas/{villa}"),
            Some("admin"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // A viewer may not delete; a manager may not read the internal docs.
    let res = app
        .request(
            Method::DELETE,
            &format!("/api/villas/{}", Uuid::now_v7()),
            Some("viewer"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn dashboards_list_paged_views(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (villa, _) = start(&app, "DASH-1").await;
    save(&app, villa, 2, json!({"firstName": "Ayu"})).await;
    save(
        &app,
        villa,
        7,
        json!({"staff": [{"firstName": "Made", "role": "CHEF"}]}),
    )
    .await;
    let (status, body) = json(app.get("/api/dashboard/villas", "viewer").await).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"][0]["onboardingStatus"], "IN_PROGRESS");
    assert_eq!(body["data"][0]["completionPercentage"], 20);
    assert_eq!(body["data"][0]["ownerName"], "Ayu");
    let (_, body) = json(app.get("/api/dashboard/owners", "viewer").await).await;
    assert_eq!(body["data"][0]["villas"][0]["villaCode"], "DASH-1");
    let (_, body) = json(app.get("/api/dashboard/staff", "viewer").await).await;
    assert_eq!(body["data"][0]["assignments"][0]["role"], "CHEF");
    let (_, body) = json(app.get("/api/dashboard/documents", "viewer").await).await;
    assert_eq!(body["pagination"]["total"], 0);
    let (_, body) = json(app.get("/api/dashboard/management", "viewer").await).await;
    assert_eq!(body["data"]["metrics"]["totalStaff"], 1);
    let (_, body) = json(
        app.get("/api/dashboard/onboarding-overview", "viewer")
            .await,
    )
    .await;
    assert_eq!(body["data"]["byStatus"]["IN_PROGRESS"], 1);
    assert_eq!(body["data"]["stepCompletion"][1]["completedCount"], 1);
    assert_eq!(body["data"]["inProgress"][0]["villaCode"], "DASH-1");
    let (_, stats) = json(app.get("/api/dashboard/stats", "viewer").await).await;
    for key in [
        "totalVillas",
        "activeVillas",
        "pendingOnboarding",
        "onboardingInProgress",
        "onboardingCompleted",
        "staffCount",
        "totalDocuments",
        "totalOwners",
        "averageCompletionTime",
    ] {
        assert!(stats["data"][key].is_number(), "{key}: {stats}");
    }
    assert_eq!(stats["data"]["onboardingInProgress"], 1);
    let (status, _) = json(app.get("/api/dashboard/staff?page=0", "viewer").await).await;
    assert_eq!(status, 400);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn monitoring_routes_and_debug_are_internal(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    for _ in 0..3 {
        app.get("/api/dashboard/stats", "viewer").await;
    }
    app.get(&format!("/api/villas/{}", Uuid::now_v7()), "viewer")
        .await;
    for path in [
        "/api/docs/monitoring",
        "/api/docs/routes",
        "/api/docs/dashboard",
    ] {
        assert_eq!(app.get(path, "manager").await.status(), 403, "{path}");
        assert_eq!(app.get_anonymous(path).await.status(), 401, "{path}");
    }
    let (status, body) = json(app.get("/api/docs/monitoring", "admin").await).await;
    assert_eq!(status, 200);
    let m = &body["data"];
    let recent = m["recentRequests"].as_array().unwrap();
    assert!(
        recent
            .iter()
            .any(|r| r["status"] == 404 && r["path"].as_str().unwrap().starts_with("/api/villas/"))
    );
    assert!(
        recent
            .iter()
            .all(|r| r["requestId"].is_string() && r["clientAddress"] == "127.0.0.1")
    );
    let stats = m["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["route"] == "/api/dashboard/stats")
        .unwrap();
    assert_eq!(stats["calls"], 3);
    let (_, routes) = json(app.get("/api/docs/routes", "admin").await).await;
    let routes = routes["data"].as_array().unwrap();
    for (method, path) in [
        ("POST", "/api/onboarding/{villaId}/save-step-7"),
        ("GET", "/api/photos-enhanced/public/{id}"),
        ("POST", "/api/onboarding/finalize"),
    ] {
        assert!(
            routes
                .iter()
                .any(|r| r["method"] == method && r["path"] == path),
            "{method} {path}"
        );
    }
    let res = app.get("/api/docs/dashboard", "admin").await;
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = res.text().await.unwrap();
    assert!(html.contains("/api/dashboard/stats") && html.contains("Last requests"));
    // Debug routes do not exist in production...
    assert_eq!(app.get("/api/debug/test", "admin").await.status(), 404);
    // ...and are admin-only in development.
    let dev = TestApp::spawn_with(
        pool,
        TestAppOptions {
            development: true,
            ..TestAppOptions::default()
        },
    )
    .await;
    assert_eq!(
        dev.get("/api/debug/check-data", "manager").await.status(),
        403
    );
    let (status, body) = json(dev.get("/api/debug/check-data", "admin").await).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["completedWithIncompleteSteps"], 0);
    assert_eq!(dev.get("/api/debug/test", "admin").await.status(), 200);
}

/// Forty saves of one villa's steps 1 to 10 at the same moment (tabs and autosaves racing) all
/// succeed and none is lost. Saves once took the villa's and the progress's locks in opposite
/// orders: Postgres broke the deadlocks and the API answered 500.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn concurrent_saves_of_one_villa_neither_fail_nor_lose_a_step(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "VL-RACE").await;
    let saves = (0..40u8).map(|i| {
        let step = i % 10 + 1;
        let body = match step {
            1 => json!({"description": format!("save {i}")}),
            2 => json!({"firstName": "Ayu", "lastName": format!("Save {i}")}),
            _ => json!({}),
        };
        let app = &app;
        async move { (step, save(app, villa, step, body).await) }
    });
    let answers = futures::future::join_all(saves).await;
    for (step, (status, body)) in &answers {
        assert_eq!(*status, 200, "step {step}: {body}");
        assert_eq!(body["success"], true, "step {step}: {body}");
    }

    let (status, progress) = json(
        app.get(&format!("/api/onboarding/{villa}/progress"), "viewer")
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        progress["progress"]["completionPercentage"], 100,
        "{progress}"
    );
    let completed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM onboarding_steps WHERE villa_id = $1 AND status = 'COMPLETED'",
    )
    .bind(villa)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(completed, 10);
    // Step 2's saves all went to one owner, created once.
    let owners: i64 = sqlx::query_scalar("SELECT count(*) FROM owners")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(owners, 1);
    let version: i32 =
        sqlx::query_scalar("SELECT version FROM onboarding_progress WHERE villa_id = $1")
            .bind(villa)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(
        version >= 40,
        "every save bumped the version once: {version}"
    );
}

/// Every legacy segment route takes its documented body and answers its documented success (each
/// answer checked against the API description like every other): step saves and completions with
/// the villa in the body, the uploads, and finalize.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_legacy_segment_route_answers_as_documented(pool: PgPool) {
    use base64::Engine as _;
    let app = TestApp::spawn(pool).await;
    let (villa, _) = start(&app, "VL-LEGACY").await;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let png = {
        let img = image::RgbImage::from_pixel(8, 8, image::Rgb([9, 8, 7]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    };
    let post = |path: &'static str, body: Value| {
        let app = &app;
        async move { json(app.post_json(path, "manager", &body).await).await }
    };
    for (path, body, status, step_flag) in [
        (
            "/api/onboarding/basic-info/save",
            json!({"villaId": villa, "description": "Ocean view"}),
            200,
            None,
        ),
        (
            "/api/onboarding/basic-info/complete",
            json!({"villaId": villa, "villaName": "Villa Legacy"}),
            200,
            Some("villaInfoCompleted"),
        ),
        (
            "/api/onboarding/documents/upload",
            json!({"villaId": villa, "documentType": "HOUSE_RULES",
            "fileName": "rules.txt", "fileContent": b64(b"no parties")}),
            201,
            None,
        ),
        (
            "/api/onboarding/documents/complete",
            json!({"villaId": villa}),
            200,
            Some("documentsUploaded"),
        ),
        (
            "/api/onboarding/facilities/save",
            json!({"villaId": villa, "facilities": [
            {"category": "KITCHEN", "itemName": "Oven", "quantity": 1, "condition": "good"}]}),
            200,
            None,
        ),
        (
            "/api/onboarding/facilities/complete",
            json!({"villaId": villa}),
            200,
            Some("facilitiesCompleted"),
        ),
        (
            "/api/onboarding/photos/upload",
            json!({"villaId": villa, "category": "exterior_views",
            "fileName": "front.png", "fileContent": b64(&png)}),
            201,
            None,
        ),
        (
            "/api/onboarding/photos/complete",
            json!({"villaId": villa}),
            200,
            Some("photosUploaded"),
        ),
        (
            "/api/onboarding/staff/save",
            json!({"villaId": villa, "staff": [
            {"name": "Made Wirawan", "role": "gardener", "isPrimary": true}]}),
            200,
            None,
        ),
        (
            "/api/onboarding/staff/complete",
            json!({"villaId": villa}),
            200,
            Some("staffConfigCompleted"),
        ),
    ] {
        let (got, answer) = post(path, body).await;
        assert_eq!(got, status, "{path}: {answer}");
        assert_eq!(answer["success"], true, "{path}: {answer}");
        if let Some(flag) = step_flag {
            assert_eq!(answer["progress"][flag], true, "{path}: {answer}");
        }
    }
    for (step, body) in [
        (
            2,
            json!({"firstName": "Ayu", "lastName": "Lestari", "phone": "+62 812 3456 7890"}),
        ),
        (3, json!({"contractType": "EXCLUSIVE"})),
        (4, json!({"bankName": "BCA"})),
        (5, json!({"credentials": []})),
        (10, json!({})),
    ] {
        let (got, answer) = save(&app, villa, step, body).await;
        assert_eq!(got, 200, "step {step}: {answer}");
    }
    let (got, answer) = post(
        "/api/onboarding/finalize",
        json!({"villaId": villa, "agreedToTerms": true, "dataAccuracyConfirmed": true}),
    )
    .await;
    assert_eq!(got, 200, "{answer}");
    assert_eq!(answer["status"], "COMPLETED");
    let (_, bundle) = json(app.get(&format!("/api/villas/{villa}"), "viewer").await).await;
    let data = &bundle["data"];
    assert_eq!(data["villa"]["description"], "Ocean view");
    assert_eq!(data["villa"]["villaName"], "Villa Legacy");
    assert_eq!(data["documents"].as_array().unwrap().len(), 1);
    assert_eq!(data["photos"].as_array().unwrap().len(), 1);
    assert_eq!(data["facilities"][0]["condition"], "GOOD");
    assert_eq!(data["staff"][0]["role"], "GARDENER");
}
