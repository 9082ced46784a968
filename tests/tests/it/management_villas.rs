//! The management villa reads that the foundation ships (list with paging, status and search;
//! one villa). Creating and editing come with the management API.

use sqlx::PgPool;
use tests::{TestApp, json};
use uuid::Uuid;

use crate::auth::assert_error_shape;

async fn insert_villa(
    pool: &PgPool,
    code: &str,
    name: &str,
    city: &str,
    country: &str,
    active: bool,
) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO villas (id, villa_code, villa_name, city, country, bedrooms, property_type, status, is_active)
         VALUES ($1, $2, $3, $4, $5, 3, 'VILLA', $6, $7)",
    )
    .bind(id)
    .bind(code)
    .bind(name)
    .bind(city)
    .bind(country)
    .bind(if active { "APPROVED" } else { "DRAFT" })
    .bind(active)
    .execute(pool)
    .await
    .unwrap();
    id
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn villas_list_pages_filters_and_searches(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let sunset = insert_villa(&pool, "PHK-001", "Villa Sunset", "Phuket", "Thailand", true).await;
    insert_villa(&pool, "SMI-002", "Casa Azul", "Samui", "Thailand", false).await;
    insert_villa(&pool, "BAL-003", "Rumah 100%", "Ubud", "Indonesia", true).await;

    let (status, body) = json(app.get("/management/villas?limit=2", "viewer").await).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["pagination"],
        serde_json::json!({"page": 1, "limit": 2, "total": 3})
    );
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    let (_, last) = json(app.get("/management/villas?limit=2&page=2", "viewer").await).await;
    assert_eq!(last["data"].as_array().unwrap().len(), 1);
    let (_, beyond) = json(app.get("/management/villas?limit=2&page=3", "viewer").await).await;
    assert_eq!(beyond["data"].as_array().unwrap().len(), 0);
    assert_eq!(beyond["pagination"]["total"], 3);

    let (_, found) = json(app.get("/management/villas?search=sUnS", "viewer").await).await;
    assert_eq!(found["data"][0]["id"], sunset.to_string());
    assert_eq!(found["data"][0]["location"], "Phuket, Thailand");
    assert_eq!(found["data"][0]["status"], "ACTIVE");
    for (term, n) in [
        ("thai", 2),
        ("phk-0", 1),
        ("indonesia", 1),
        ("100%", 1),
        ("%", 1),
        ("_", 0),
        ("nowhere", 0),
    ] {
        let (_, r) = json(
            app.get(
                &format!("/management/villas?search={}", urlencode(term)),
                "viewer",
            )
            .await,
        )
        .await;
        assert_eq!(r["pagination"]["total"], n, "search {term}");
    }
    let (_, drafts) = json(app.get("/management/villas?status=DRAFT", "viewer").await).await;
    assert_eq!(drafts["pagination"]["total"], 1);
    assert_eq!(drafts["data"][0]["name"], "Casa Azul");
    let (_, active) = json(
        app.get("/management/villas?status=ACTIVE&search=thailand", "viewer")
            .await,
    )
    .await;
    assert_eq!(active["pagination"]["total"], 1);

    let (status, body) = json(app.get("/management/villas?limit=101", "viewer").await).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["details"][0]["field"], "limit");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn one_villa_by_id(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let id = insert_villa(
        &pool,
        "PHK-001",
        "Villa Sunset",
        "Phuket",
        "Thailand",
        false,
    )
    .await;
    let (status, body) = json(app.get(&format!("/management/villas/{id}"), "viewer").await).await;
    assert_eq!(status, 200);
    assert_eq!(body["name"], "Villa Sunset");
    assert_eq!(body["status"], "DRAFT");
    let (status, body) = json(
        app.get(&format!("/management/villas/{}", Uuid::now_v7()), "viewer")
            .await,
    )
    .await;
    assert_eq!(status, 404);
    assert_error_shape("management", &body, 404, "NOT_FOUND");
}

/// The by-id and list reads are batched across concurrent requests: each caller still gets its
/// own villa (or its own 404, or its own page), and a read that follows a write sees the write.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn concurrent_reads_each_get_their_own_answer(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let mut villas = Vec::new();
    for i in 0..30 {
        let city = if i % 3 == 0 { "Ubud" } else { "Galle" };
        let id = insert_villa(
            &pool,
            &format!("CC-{i:03}"),
            &format!("Villa {i}"),
            city,
            "Asia",
            true,
        )
        .await;
        villas.push((id, format!("Villa {i}")));
    }
    let unknown: Vec<Uuid> = (0..10).map(|_| Uuid::now_v7()).collect();
    let by_id = villas
        .iter()
        .map(|(id, name)| (*id, Some(name.clone())))
        .chain(unknown.iter().map(|id| (*id, None)))
        .map(|(id, name)| {
            let app = &app;
            async move {
                let (status, body) =
                    json(app.get(&format!("/management/villas/{id}"), "viewer").await).await;
                match name {
                    Some(name) => {
                        assert_eq!(status, 200, "{body}");
                        assert_eq!(body["id"], id.to_string());
                        assert_eq!(body["name"], name.as_str());
                    }
                    None => assert_eq!(status, 404, "{body}"),
                }
            }
        });
    let pages = [
        ("ubud", 1, 10),
        ("ubud", 2, 0),
        ("galle", 1, 20),
        ("galle", 2, 0),
        ("cc-", 3, 0),
    ]
    .into_iter()
    .map(|(term, page, rows)| {
        let app = &app;
        async move {
            let (status, body) = json(
                app.get(
                    &format!("/management/villas?search={term}&page={page}&limit=20"),
                    "viewer",
                )
                .await,
            )
            .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                body["data"].as_array().unwrap().len(),
                rows,
                "{term} page {page}"
            );
            let expected = match term {
                "ubud" => 10,
                "galle" => 20,
                _ => 30,
            };
            assert_eq!(body["pagination"]["total"], expected, "{term}");
        }
    });
    futures::future::join(
        futures::future::join_all(by_id),
        futures::future::join_all(pages),
    )
    .await;

    let (renamed, _) = &villas[0];
    sqlx::query("UPDATE villas SET villa_name = 'Villa Renamed' WHERE id = $1")
        .bind(renamed)
        .execute(&pool)
        .await
        .unwrap();
    let (_, body) = json(
        app.get(&format!("/management/villas/{renamed}"), "viewer")
            .await,
    )
    .await;
    assert_eq!(body["name"], "Villa Renamed");
    let (_, body) = json(app.get("/management/villas?search=renamed", "viewer").await).await;
    assert_eq!(body["pagination"]["total"], 1);
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The fields of every invalid field listed in a management error body.
pub fn detail_fields(body: &serde_json::Value) -> Vec<String> {
    let mut fields: Vec<String> = body["error"]["details"]
        .as_array()
        .unwrap_or_else(|| panic!("no details in {body}"))
        .iter()
        .map(|d| d["field"].as_str().unwrap().to_owned())
        .collect();
    fields.sort();
    fields
}

pub async fn send(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    role: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut req = app.request(method, path, Some(role));
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    if res.status() == 204 {
        return (204, serde_json::Value::Null);
    }
    json(res).await
}

/// Creates a villa on the management surface; returns its id.
pub async fn create_villa(app: &TestApp, name: &str) -> Uuid {
    let (status, body) = send(
        app,
        reqwest::Method::POST,
        "/management/villas",
        "manager",
        Some(
            serde_json::json!({"name": name, "propertyType": "VILLA", "villaStyle": "MODERN",
            "bedrooms": 3, "bathrooms": 2, "maxGuests": 6}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().parse().unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn create_answers_the_villa_with_a_generated_code(pool: PgPool) {
    use reqwest::Method;
    use serde_json::json;
    let app = TestApp::spawn(pool.clone()).await;
    let (status, villa) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(
            json!({"name": "Villa Sunset", "propertyType": "villa", "villaStyle": "MODERN",
            "bedrooms": 4, "bathrooms": 3, "maxGuests": 8, "city": "Ubud", "country": "Indonesia"}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{villa}");
    assert_eq!(villa["name"], "Villa Sunset");
    assert_eq!(villa["propertyType"], "VILLA");
    assert_eq!(villa["villaStyle"], "MODERN");
    assert_eq!(
        (&villa["bedrooms"], &villa["bathrooms"], &villa["maxGuests"]),
        (&json!(4), &json!(3), &json!(8))
    );
    assert_eq!(villa["location"], "Ubud, Indonesia");
    assert_eq!(villa["status"], "DRAFT");
    let code = villa["villaCode"].as_str().unwrap();
    assert!(
        code.starts_with("VL-") && code.len() == 9,
        "generated code {code}"
    );
    let id = villa["id"].as_str().unwrap();
    let (status, read) = send(
        &app,
        Method::GET,
        &format!("/management/villas/{id}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(read, villa);
    // The next one gets the next code; a code chosen by hand is kept, and must be unique.
    let second = create_villa(&app, "Villa Two").await;
    let (_, second) = send(
        &app,
        Method::GET,
        &format!("/management/villas/{second}"),
        "viewer",
        None,
    )
    .await;
    assert_ne!(second["villaCode"], villa["villaCode"]);
    let body = json!({"name": "Coded", "propertyType": "HOUSE", "bedrooms": 1, "bathrooms": 1,
        "maxGuests": 2, "villaCode": "PHK-777", "status": "ACTIVE"});
    let (status, coded) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(body.clone()),
    )
    .await;
    assert_eq!(status, 201, "{coded}");
    assert_eq!(coded["villaCode"], "PHK-777");
    assert_eq!(coded["status"], "ACTIVE");
    let (status, dup) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(body),
    )
    .await;
    assert_eq!(status, 400);
    assert_error_shape("management", &dup, 400, "VALIDATION_ERROR");
    assert_eq!(detail_fields(&dup), ["villaCode"]);
    // A generated code steps over a code typed by hand.
    let next: i64 = sqlx::query_scalar("SELECT last_value + 1 FROM villa_code_seq")
        .fetch_one(&pool)
        .await
        .unwrap();
    let taken = format!("VL-{next:06}");
    let (status, _) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(
            json!({"name": "Squatter", "propertyType": "VILLA", "bedrooms": 1, "bathrooms": 1,
            "maxGuests": 2, "villaCode": taken}),
        ),
    )
    .await;
    assert_eq!(status, 201);
    let after = create_villa(&app, "After").await;
    let (_, after) = send(
        &app,
        Method::GET,
        &format!("/management/villas/{after}"),
        "viewer",
        None,
    )
    .await;
    assert_ne!(after["villaCode"], taken.as_str());
    let (_, list) = send(
        &app,
        Method::GET,
        "/management/villas?search=sunset",
        "viewer",
        None,
    )
    .await;
    assert_eq!(list["pagination"]["total"], 1);
    assert_eq!(list["data"][0]["id"], id);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn create_lists_every_bad_field(pool: PgPool) {
    use reqwest::Method;
    use serde_json::json;
    let app = TestApp::spawn(pool.clone()).await;
    let (status, body) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 400);
    assert_error_shape("management", &body, 400, "VALIDATION_ERROR");
    assert_eq!(
        detail_fields(&body),
        ["bathrooms", "bedrooms", "maxGuests", "name", "propertyType"]
    );
    let (status, body) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(
            json!({"name": " ", "propertyType": "CASTLE", "villaStyle": "GOTHIC", "bedrooms": 0,
            "bathrooms": "many", "maxGuests": 500, "status": "SOLD", "ownerId": "nobody",
            "checkInTime": "3pm", "latitude": 91}),
        ),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        detail_fields(&body),
        [
            "bathrooms",
            "bedrooms",
            "checkInTime",
            "latitude",
            "maxGuests",
            "name",
            "ownerId",
            "propertyType",
            "status",
            "villaStyle"
        ]
    );
    for detail in body["error"]["details"].as_array().unwrap() {
        assert!(!detail["message"].as_str().unwrap().is_empty(), "{detail}");
    }
    let enumeration = body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["field"] == "propertyType")
        .unwrap();
    assert!(
        enumeration["message"]
            .as_str()
            .unwrap()
            .contains("VILLA, APARTMENT, HOUSE, CONDO, RESORT")
    );
    // Not JSON, not an object, not sent as JSON.
    let res = app
        .request(Method::POST, "/management/villas", Some("manager"))
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    let (status, body) = json(res).await;
    assert_eq!(status, 400);
    assert_error_shape("management", &body, 400, "VALIDATION_ERROR");
    let (status, _) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(json!([1, 2])),
    )
    .await;
    assert_eq!(status, 400);
    let res = app
        .request(Method::POST, "/management/villas", Some("manager"))
        .body("name=x")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 415);
    // An owner id that names no owner.
    let (status, body) = send(
        &app,
        Method::POST,
        "/management/villas",
        "manager",
        Some(
            json!({"name": "X", "propertyType": "VILLA", "bedrooms": 1, "bathrooms": 1,
            "maxGuests": 2, "ownerId": Uuid::now_v7()}),
        ),
    )
    .await;
    assert_eq!(status, 404);
    assert_error_shape("management", &body, 404, "NOT_FOUND");
    let villas: i64 = sqlx::query_scalar("SELECT count(*) FROM villas")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(villas, 0);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn patch_changes_only_the_fields_sent(pool: PgPool) {
    use reqwest::Method;
    use serde_json::json;
    let app = TestApp::spawn(pool.clone()).await;
    let id = create_villa(&app, "Villa Patch").await;
    let path = format!("/management/villas/{id}");
    let (status, villa) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"bedrooms": 5, "description": "Sea view", "city": "Canggu"})),
    )
    .await;
    assert_eq!(status, 200, "{villa}");
    assert_eq!(villa["bedrooms"], 5);
    assert_eq!(villa["description"], "Sea view");
    assert_eq!(villa["location"], "Canggu");
    assert_eq!(villa["name"], "Villa Patch");
    assert_eq!(villa["bathrooms"], 2);
    assert_eq!(villa["villaStyle"], "MODERN");
    // null clears an optional field; a required one cannot be cleared.
    let (status, villa) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"description": null})),
    )
    .await;
    assert_eq!(status, 200);
    assert!(villa["description"].is_null());
    assert_eq!(villa["bedrooms"], 5);
    for (body, field) in [
        (json!({"name": null}), "name"),
        (json!({"bedrooms": 51}), "bedrooms"),
        (json!({"villaCode": ""}), "villaCode"),
        (json!({"status": "GONE"}), "status"),
        (json!({}), "body"),
        (json!({"unknownField": 1}), "body"),
    ] {
        let (status, err) = send(&app, Method::PATCH, &path, "manager", Some(body.clone())).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    let (status, villa) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"status": "inactive"})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(villa["status"], "INACTIVE");
    let (status, villa) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"status": "ACTIVE"})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(villa["status"], "ACTIVE");
    let (_, active) = send(
        &app,
        Method::GET,
        "/management/villas?status=ACTIVE",
        "viewer",
        None,
    )
    .await;
    assert_eq!(active["data"][0]["id"], id.to_string());
    // A villa in onboarding is not ACTIVE until its onboarding is completed.
    let (onboarding, _) = crate::onboarding::start(&app, "ONB-1").await;
    let (status, err) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{onboarding}"),
        "manager",
        Some(json!({"status": "ACTIVE"})),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(detail_fields(&err), ["status"]);
    // The wizard sees management's edit: same row.
    send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{onboarding}"),
        "manager",
        Some(json!({"name": "Renamed by management"})),
    )
    .await;
    let (_, wizard) = json(
        app.get(&format!("/api/villas/{onboarding}"), "viewer")
            .await,
    )
    .await;
    assert_eq!(
        wizard["data"]["villa"]["villaName"], "Renamed by management",
        "{wizard}"
    );
    let (status, err) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{}", Uuid::now_v7()),
        "manager",
        Some(json!({"bedrooms": 2})),
    )
    .await;
    assert_eq!(status, 404);
    assert_error_shape("management", &err, 404, "NOT_FOUND");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn delete_removes_the_villa_and_what_depends_on_it(pool: PgPool) {
    use reqwest::Method;
    use serde_json::json;
    let app = TestApp::spawn(pool.clone()).await;
    let (_, owner) = send(
        &app,
        Method::POST,
        "/management/owners",
        "manager",
        Some(
            json!({"ownerType": "COMPANY", "companyName": "PT Villa", "registrationNumber": "RN-1",
            "contactPerson": "Ayu"}),
        ),
    )
    .await;
    let id = create_villa(&app, "Doomed").await;
    send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{id}"),
        "manager",
        Some(json!({"ownerId": owner["id"]})),
    )
    .await;
    let (_, member) = send(
        &app,
        Method::POST,
        "/management/staff",
        "manager",
        Some(json!({"firstName": "Made", "lastName": "W", "defaultRole": "GARDENER"})),
    )
    .await;
    let (status, _) = send(
        &app,
        Method::POST,
        &format!("/management/villas/{id}/staff"),
        "manager",
        Some(json!({"staffId": member["id"]})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _) = send(
        &app,
        Method::POST,
        &format!("/management/villas/{id}/ota-credentials"),
        "manager",
        Some(json!({"platform": "AIRBNB", "propertyId": "123", "password": "x"})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{id}/onboarding/steps/BASIC_INFO"),
        "manager",
        Some(json!({"status": "COMPLETED"})),
    )
    .await;
    assert_eq!(status, 200);

    let (status, body) = send(
        &app,
        Method::DELETE,
        &format!("/management/villas/{id}"),
        "staff",
        None,
    )
    .await;
    assert_eq!(status, 403);
    assert_error_shape("management", &body, 403, "FORBIDDEN");
    let res = app
        .request(
            Method::DELETE,
            &format!("/management/villas/{id}"),
            Some("manager"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert!(res.bytes().await.unwrap().is_empty());
    let (status, _) = send(
        &app,
        Method::GET,
        &format!("/management/villas/{id}"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("/management/villas/{id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 404);
    for table in [
        "villa_staff",
        "ota_credentials",
        "onboarding_progress",
        "onboarding_steps",
    ] {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM {table} WHERE villa_id = $1"
        )))
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(n, 0, "{table}");
    }
    // The owner and the staff member stand on their own.
    let (status, owner) = send(
        &app,
        Method::GET,
        &format!("/management/owners/{}", owner["id"].as_str().unwrap()),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(owner["villaIds"], json!([]));
    let (status, member) = send(
        &app,
        Method::GET,
        &format!("/management/staff/{}", member["id"].as_str().unwrap()),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(member["assignments"], json!([]));
}

/// Every management route: 401 without a token, 403 for a role that may not use it.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_route_needs_a_token_and_the_permission(pool: PgPool) {
    use reqwest::Method;
    let app = TestApp::spawn(pool.clone()).await;
    let v = Uuid::now_v7();
    let routes = [
        (Method::GET, "/management/villas".to_owned()),
        (Method::POST, "/management/villas".to_owned()),
        (Method::GET, format!("/management/villas/{v}")),
        (Method::PATCH, format!("/management/villas/{v}")),
        (Method::DELETE, format!("/management/villas/{v}")),
        (Method::GET, "/management/owners".to_owned()),
        (Method::POST, "/management/owners".to_owned()),
        (Method::GET, format!("/management/owners/{v}")),
        (Method::PATCH, format!("/management/owners/{v}")),
        (Method::GET, "/management/staff".to_owned()),
        (Method::POST, "/management/staff".to_owned()),
        (Method::GET, format!("/management/staff/{v}")),
        (Method::GET, format!("/management/villas/{v}/staff")),
        (Method::POST, format!("/management/villas/{v}/staff")),
        (Method::DELETE, format!("/management/villas/{v}/staff/{v}")),
        (Method::GET, format!("/management/villas/{v}/documents")),
        (Method::POST, format!("/management/villas/{v}/documents")),
        (Method::DELETE, format!("/management/documents/{v}")),
        (Method::GET, format!("/management/villas/{v}/photos")),
        (Method::POST, format!("/management/villas/{v}/photos")),
        (Method::PATCH, format!("/management/photos/{v}/cover")),
        (Method::GET, format!("/management/villas/{v}/onboarding")),
        (
            Method::PATCH,
            format!("/management/villas/{v}/onboarding/steps/BASIC_INFO"),
        ),
        (
            Method::GET,
            format!("/management/villas/{v}/ota-credentials"),
        ),
        (
            Method::POST,
            format!("/management/villas/{v}/ota-credentials"),
        ),
    ];
    for (method, path) in &routes {
        let res = app
            .request(method.clone(), path, None)
            .send()
            .await
            .unwrap();
        let (status, body) = json(res).await;
        assert_eq!(status, 401, "{method} {path}");
        assert_error_shape("management", &body, 401, "UNAUTHORIZED");
        // Viewers read; staff read villas; neither writes.
        let writes = *method != Method::GET;
        let (status, body) = json(
            app.request(method.clone(), path, Some("viewer"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        if writes {
            assert_eq!(status, 403, "{method} {path}");
            assert_error_shape("management", &body, 403, "FORBIDDEN");
        } else {
            assert!(status == 200 || status == 404, "{method} {path}: {status}");
        }
    }
}

/// Totals are cached per filter but never stale: every change of what the list counts shows at
/// once, whichever way it was written.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn cached_totals_follow_every_change(pool: PgPool) {
    use reqwest::Method;
    use serde_json::json;
    let app = TestApp::spawn(pool.clone()).await;
    let total = |query: &'static str| {
        let app = &app;
        async move {
            let (status, body) = send(app, Method::GET, query, "viewer", None).await;
            assert_eq!(status, 200, "{body}");
            body["pagination"]["total"].as_i64().unwrap()
        }
    };
    let version = || async {
        sqlx::query_scalar::<_, i64>("SELECT version FROM villa_list_version")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    let a = create_villa(&app, "Lotus One").await;
    assert_eq!(total("/management/villas?search=lotus").await, 1);
    assert_eq!(total("/management/villas?search=lotus").await, 1);
    insert_villa(&pool, "LOT-2", "Lotus Two", "Ubud", "Indonesia", true).await;
    assert_eq!(total("/management/villas?search=lotus").await, 2);
    assert_eq!(
        total("/management/villas?search=lotus&status=ACTIVE").await,
        1
    );
    // An edit of a field the list does not filter on leaves the counter alone.
    let before = version().await;
    send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{a}"),
        "manager",
        Some(json!({"description": "Pond view"})),
    )
    .await;
    assert_eq!(version().await, before);
    send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{a}"),
        "manager",
        Some(json!({"name": "Jasmine One", "status": "ACTIVE"})),
    )
    .await;
    assert_eq!(total("/management/villas?search=lotus").await, 1);
    assert_eq!(
        total("/management/villas?search=lotus&status=ACTIVE").await,
        1
    );
    assert_eq!(
        total("/management/villas?search=jasmine&status=ACTIVE").await,
        1
    );
    sqlx::query("DELETE FROM villas WHERE villa_code = 'LOT-2'")
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(total("/management/villas?search=lotus").await, 0);
    send(
        &app,
        Method::DELETE,
        &format!("/management/villas/{a}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(
        total("/management/villas?search=jasmine&status=ACTIVE").await,
        0
    );
    assert_eq!(total("/management/villas").await, 0);
}

/// A villa with operational history is kept (ARCHITECTURE.md, "One data model"): both surfaces'
/// deletes answer 409 VILLA_IN_USE counting what holds it, in their own error shape, and nothing
/// is removed; archiving keeps it all. Before: 500 on a foreign key (stock) or a silent cascade
/// through maintenance's history.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_villa_with_history_is_refused_and_can_be_archived_instead(pool: PgPool) {
    use reqwest::Method;
    use serde_json::json;
    let app = TestApp::spawn(pool.clone()).await;
    let id = create_villa(&app, "Busy").await;
    let (status, body) = send(
        &app,
        Method::POST,
        "/inventory/locations",
        "manager",
        Some(json!({"name": "Store", "type": "STORAGE", "propertyId": id})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let location = body["id"].clone();
    let mut towel = serde_json::Value::Null;
    for sku in ["TOWEL-1", "SHEET-1"] {
        let (status, body) = send(
            &app,
            Method::POST,
            "/inventory/items",
            "manager",
            Some(
                json!({"name": sku, "sku": sku, "category": "LINENS", "propertyId": id,
                        "locationId": location, "unit": "EACH", "quantity": 5}),
            ),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        if towel.is_null() {
            towel = body["id"].clone();
        }
        let (status, body) = send(
            &app,
            Method::POST,
            "/inventory/movements",
            "manager",
            Some(json!({"itemId": body["id"], "type": "USE", "quantity": 1})),
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, body) = send(
        &app,
        Method::POST,
        "/maintenance/work-orders",
        "staff",
        Some(json!({"title": "Leak", "villaId": id, "category": "PLUMBING", "priority": "HIGH"})),
    )
    .await;
    assert_eq!(status, 201, "{body}");

    let (status, body) = send(
        &app,
        Method::DELETE,
        &format!("/management/villas/{id}"),
        "admin",
        None,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "VILLA_IN_USE");
    assert_eq!(
        body["error"]["inUse"],
        json!({"stockItems": 2, "workOrders": 1})
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("2 stock items")
            && message.contains("1 work order")
            && message.contains("archive"),
        "{message}"
    );
    let (status, body) = send(
        &app,
        Method::DELETE,
        &format!("/api/villas/{id}"),
        "admin",
        None,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["statusCode"], 409);
    assert_eq!(body["data"]["code"], "VILLA_IN_USE");
    assert_eq!(
        body["data"]["inUse"],
        json!({"stockItems": 2, "workOrders": 1})
    );
    let kept: (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM villas WHERE id = $1), (SELECT count(*) FROM inventory_movements),
                (SELECT count(*) FROM work_orders WHERE villa_id = $1)")
        .bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!(
        kept,
        (1, 4, 1),
        "villa, its ledger (2 INITIAL and 2 USE) and work order kept"
    );

    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{id}"),
        "manager",
        Some(json!({"status": "ARCHIVED"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ARCHIVED");
    let (status, body) = send(
        &app,
        Method::GET,
        &format!("/inventory/items?propertyId={id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(
        (status, body["pagination"]["total"].clone()),
        (200, json!(2)),
        "{body}"
    );

    // A villa whose only stock history is a transfer into one of its locations (cancelled, so
    // no item of its own) is kept too: the transfer is the other villa's history as well.
    let receiving = create_villa(&app, "Receiving").await;
    let (_, shelf) = send(
        &app,
        Method::POST,
        "/inventory/locations",
        "manager",
        Some(json!({"name": "Linen shelf", "type": "STORAGE", "propertyId": receiving})),
    )
    .await;
    let (status, transfer) = send(
        &app,
        Method::POST,
        "/inventory/transfers",
        "staff",
        Some(
            json!({"sourceLocationId": location, "destinationLocationId": shelf["id"],
                    "items": [{"itemId": towel, "quantity": 1}]}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{transfer}");
    let (status, body) = send(
        &app,
        Method::POST,
        &format!(
            "/inventory/transfers/{}/cancel",
            transfer["id"].as_str().unwrap()
        ),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        &app,
        Method::DELETE,
        &format!("/management/villas/{receiving}"),
        "admin",
        None,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "VILLA_IN_USE");
    assert_eq!(body["error"]["inUse"], json!({"stockTransfers": 1}));

    // A villa with nothing but its own records (and a stock location without items) goes.
    let empty = create_villa(&app, "Empty").await;
    let (status, _) = send(
        &app,
        Method::POST,
        "/inventory/locations",
        "manager",
        Some(json!({"name": "Shelf", "type": "STORAGE", "propertyId": empty})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, body) = send(
        &app,
        Method::DELETE,
        &format!("/management/villas/{empty}"),
        "admin",
        None,
    )
    .await;
    assert_eq!(status, 204, "{body}");
    let (status, _) = send(
        &app,
        Method::GET,
        &format!("/management/villas/{empty}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 404);
}

/// A work order being written for the villa while its delete arrives: the test holds the work
/// order's transaction open (its foreign key holds a key-share lock on the villa) while the
/// delete is sent, then commits. The delete must see it and refuse: a count taken before the
/// villa row is locked would see nothing and the delete would then cascade the new work order
/// away (or answer 500 on the foreign key).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_delete_racing_a_new_work_order_keeps_both(pool: PgPool) {
    use reqwest::Method;
    let app = TestApp::spawn(pool.clone()).await;
    let id = create_villa(&app, "Racing").await;
    let mut writer = pool.begin().await.unwrap();
    sqlx::query(
        "INSERT INTO work_orders (id, villa_id, title, category, priority, created_by)
         VALUES ($1, $2, 'Broken pump', 'POOL', 'HIGH', 'test')",
    )
    .bind(uuid::Uuid::now_v7())
    .bind(id)
    .execute(&mut *writer)
    .await
    .unwrap();
    let delete = {
        let req = app.request(
            Method::DELETE,
            &format!("/management/villas/{id}"),
            Some("admin"),
        );
        tokio::spawn(async move { req.send().await.unwrap() })
    };
    // The delete is waiting on the villa row (it cannot finish while the writer holds its lock).
    let waiting = tests::eventually(std::time::Duration::from_secs(10), || {
        let pool = pool.clone();
        async move {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT version FROM villas%'",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            (n > 0).then_some(())
        }
    })
    .await;
    assert!(waiting.is_some(), "the delete never waited for the writer");
    writer.commit().await.unwrap();
    let res = delete.await.unwrap();
    let (status, body) = json(res).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["inUse"]["workOrders"], 1);
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM work_orders WHERE villa_id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 1);
}

/// A villa linked to a PMS listing is kept like one with history (it was deleted, 204, and the
/// listing silently unlinked, keeping its "linked by hand" mark with no villa): 409
/// VILLA_IN_USE counting the listings, on both surfaces; once the listing is unlinked, the
/// delete goes through.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_villa_linked_to_a_pms_listing_is_refused_until_unlinked(pool: PgPool) {
    use reqwest::Method;
    use serde_json::json;
    let app = TestApp::spawn(pool.clone()).await;
    let id = create_villa(&app, "Linked").await;
    let listing =
        crate::reporting_dashboard::insert_listing(&pool, 9101, "Villa Linked", "ACTIVE", "THB")
            .await;
    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/reporting/listings/{listing}"),
        "manager",
        Some(json!({"villaId": id})),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    for path in [
        format!("/management/villas/{id}"),
        format!("/api/villas/{id}"),
    ] {
        let (status, body) = send(&app, Method::DELETE, &path, "admin", None).await;
        assert_eq!(status, 409, "{path}: {body}");
        let error = if path.starts_with("/api") {
            &body["data"]
        } else {
            &body["error"]
        };
        assert_eq!(error["code"], "VILLA_IN_USE", "{body}");
        assert_eq!(error["inUse"], json!({"pmsListings": 1}), "{body}");
    }
    let linked: Option<Uuid> =
        sqlx::query_scalar("SELECT villa_id FROM pms_listings WHERE id = $1")
            .bind(listing)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(linked, Some(id), "the listing is still linked");

    let (status, body) = send(
        &app,
        Method::PATCH,
        &format!("/reporting/listings/{listing}"),
        "manager",
        Some(json!({"villaId": null})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        &app,
        Method::DELETE,
        &format!("/management/villas/{id}"),
        "admin",
        None,
    )
    .await;
    assert_eq!(status, 204, "{body}");
}
