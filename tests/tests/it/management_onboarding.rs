//! The onboarding record through management's step names, shared with the wizard in both
//! directions; OTA credentials whose passwords are never shown or stored in clear.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::auth::assert_error_shape;
use crate::management_villas::{create_villa, detail_fields, send};

fn status_of<'a>(overview: &'a Value, step: &str) -> &'a Value {
    &overview["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == step)
        .unwrap_or_else(|| panic!("no {step} in {overview}"))["status"]
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn management_and_the_wizard_share_one_onboarding_record(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Onboard").await;
    let path = format!("/management/villas/{villa}/onboarding");
    let (status, fresh) = send(&app, Method::GET, &path, "viewer", None).await;
    assert_eq!(status, 200, "{fresh}");
    assert_eq!(fresh["overallStatus"], "NOT_STARTED");
    assert_eq!(fresh["completionPercentage"], 0);
    let names: Vec<&str> = fresh["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "BASIC_INFO",
            "OWNER_DETAILS",
            "CONTRACT_DETAILS",
            "BANK_DETAILS",
            "OTA_CREDENTIALS",
            "DOCUMENTS",
            "STAFF_CONFIGURATION",
            "FACILITIES",
            "PHOTOS",
            "REVIEW"
        ]
    );
    assert!(
        fresh["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["status"] == "PENDING")
    );

    // Management to wizard.
    let (status, after) = send(
        &app,
        Method::PATCH,
        &format!("{path}/steps/BASIC_INFO"),
        "manager",
        Some(json!({"status": "COMPLETED"})),
    )
    .await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(after["overallStatus"], "IN_PROGRESS");
    assert_eq!(after["completionPercentage"], 10);
    assert_eq!(status_of(&after, "BASIC_INFO"), "COMPLETED");
    let (_, wizard) = send(
        &app,
        Method::GET,
        &format!("/api/onboarding/{villa}/progress"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(wizard["progress"]["villaInfoCompleted"], true, "{wizard}");
    assert_eq!(wizard["progress"]["completionPercentage"], 10);
    assert_eq!(wizard["progress"]["currentStep"], 2);

    // Wizard to management.
    let (status, body) = send(
        &app,
        Method::POST,
        &format!("/api/onboarding/{villa}/save-step-2"),
        "manager",
        Some(json!({"ownerType": "INDIVIDUAL", "firstName": "Ayu", "lastName": "L", "phone": "+62 812 3456 7890"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, read) = send(&app, Method::GET, &path, "viewer", None).await;
    assert_eq!(status_of(&read, "OWNER_DETAILS"), "COMPLETED");
    assert_eq!(read["completionPercentage"], 20);

    // Any status of the four, and back; SKIPPED does not count as completed.
    for (step, status) in [
        ("photos", "in_progress"),
        ("PHOTOS", "SKIPPED"),
        ("OWNER_DETAILS", "PENDING"),
    ] {
        let (code, body) = send(
            &app,
            Method::PATCH,
            &format!("{path}/steps/{step}"),
            "manager",
            Some(json!({ "status": status })),
        )
        .await;
        assert_eq!(code, 200, "{body}");
        assert_eq!(
            status_of(&body, &step.to_uppercase()),
            status.to_uppercase().as_str()
        );
    }
    let (_, read) = send(&app, Method::GET, &path, "viewer", None).await;
    assert_eq!(read["completionPercentage"], 10);
    let (_, wizard) = send(
        &app,
        Method::GET,
        &format!("/api/onboarding/{villa}/progress"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(wizard["progress"]["ownerDetailsCompleted"], false);

    for (step, body, field) in [
        ("PAYMENT", json!({"status": "COMPLETED"}), "step"),
        ("REVIEW", json!({"status": "DONE"}), "status"),
        ("REVIEW", json!({}), "status"),
        ("REVIEW", json!({"status": " "}), "status"),
        ("REVIEW", json!({"status": 3}), "status"),
    ] {
        let (code, err) = send(
            &app,
            Method::PATCH,
            &format!("{path}/steps/{step}"),
            "manager",
            Some(body.clone()),
        )
        .await;
        assert_eq!(code, 400, "{step} {body}");
        assert_error_shape("management", &err, 400, "VALIDATION_ERROR");
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    let unknown = format!("/management/villas/{}/onboarding", Uuid::now_v7());
    let (code, _) = send(&app, Method::GET, &unknown, "viewer", None).await;
    assert_eq!(code, 404);
    let (code, _) = send(
        &app,
        Method::PATCH,
        &format!("{unknown}/steps/REVIEW"),
        "manager",
        Some(json!({"status": "COMPLETED"})),
    )
    .await;
    assert_eq!(code, 404);
    let (code, err) = send(
        &app,
        Method::PATCH,
        &format!("{path}/steps/REVIEW"),
        "viewer",
        Some(json!({"status": "COMPLETED"})),
    )
    .await;
    assert_eq!(code, 403);
    assert_error_shape("management", &err, 403, "FORBIDDEN");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn ota_passwords_are_never_shown_nor_stored_in_clear(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa OTA").await;
    let path = format!("/management/villas/{villa}/ota-credentials");
    // What a caller sends: its own ciphertext of the password.
    let password = "enc:v1:Zm9vYmFyLXN1cGVyLXNlY3JldC1wYXNzd29yZC0xMjM0NTY3ODkw";
    let (status, created) = send(
        &app,
        Method::POST,
        &path,
        "manager",
        Some(
            json!({"platform": "booking_com", "password": password, "propertyId": "BK-99812",
            "username": "villa-ota", "listingUrl": "https://booking.com/hotel/villa-ota"}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["platform"], "BOOKING_COM");
    assert_eq!(created["propertyId"], "BK-99812");
    assert_eq!(created["hasPassword"], true);
    assert!(created["createdAt"].is_string() && created["updatedAt"].is_string());
    assert!(created.get("password").is_none(), "{created}");
    let (status, _) = send(
        &app,
        Method::POST,
        &path,
        "manager",
        Some(json!({"platform": "DIRECT", "propertyId": "own-site"})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, list) = send(&app, Method::GET, &path, "viewer", None).await;
    assert_eq!(status, 200);
    let items = list["data"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["platform"], "BOOKING_COM");
    assert_eq!(items[1]["hasPassword"], false);

    // Nowhere in any answer about the villa, on either surface.
    let mut answers = vec![created.to_string(), list.to_string()];
    for read in [
        format!("/api/villas/{villa}"),
        format!("/api/onboarding/{villa}/summary"),
        format!("/management/villas/{villa}"),
    ] {
        let res = app.get(&read, "admin").await;
        answers.push(res.text().await.unwrap());
    }
    for answer in &answers {
        assert!(
            !answer.contains(password),
            "password in an answer: {answer}"
        );
        assert!(
            !answer.contains("Zm9vYmFy"),
            "part of it in an answer: {answer}"
        );
    }
    // Nowhere in the database in clear: not in any column of any row of any table.
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'")
            .fetch_all(&pool)
            .await
            .unwrap();
    for table in tables {
        let found: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM \"{table}\" t WHERE position($1 in t::text) > 0
                 OR position($2 in t::text) > 0"
        )))
        .bind(password)
        .bind(hex(password.as_bytes()))
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(found, 0, "the password is in clear in {table}");
    }
    let stored: Vec<u8> = sqlx::query_scalar(
        "SELECT password_encrypted FROM ota_credentials WHERE property_id = 'BK-99812'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(
        stored.len() > password.len(),
        "ciphertext with nonce and tag"
    );
    assert!(
        !stored
            .windows(password.len())
            .any(|w| w == password.as_bytes())
    );

    for (body, fields) in [
        (json!({}), vec!["platform", "propertyId"]),
        (
            json!({"platform": "MYSPACE", "propertyId": "1"}),
            vec!["platform"],
        ),
        (
            json!({"platform": "AIRBNB", "propertyId": "1", "password": "p".repeat(4097), "listingUrl": "ftp://x"}),
            vec!["listingUrl", "password"],
        ),
        (
            json!({"platform": "AIRBNB", "propertyId": 5, "isActive": "yes"}),
            vec!["isActive", "propertyId"],
        ),
    ] {
        let (status, err) = send(&app, Method::POST, &path, "manager", Some(body.clone())).await;
        assert_eq!(status, 400, "{body}");
        assert_error_shape("management", &err, 400, "VALIDATION_ERROR");
        assert_eq!(detail_fields(&err), fields, "{body}");
    }
    let message = {
        let (_, err) = send(
            &app,
            Method::POST,
            &path,
            "manager",
            Some(json!({"platform": "MYSPACE", "propertyId": "1"})),
        )
        .await;
        err["error"]["details"][0]["message"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        message.contains("AIRBNB") && message.contains("TRIP_COM") && message.contains("OTHER")
    );
    let unknown = format!("/management/villas/{}/ota-credentials", Uuid::now_v7());
    let (status, _) = send(
        &app,
        Method::POST,
        &unknown,
        "manager",
        Some(json!({"platform": "AIRBNB", "propertyId": "1"})),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = send(&app, Method::GET, &unknown, "viewer", None).await;
    assert_eq!(status, 404);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
