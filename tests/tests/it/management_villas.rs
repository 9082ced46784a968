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

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
