//! Owners and staff on the management surface: validation per owner type, several villas per
//! owner, the onboarding wizard's owner among them, paging and search, assignments with one
//! primary per role.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::auth::assert_error_shape;
use crate::management_villas::{create_villa, detail_fields, send};

async fn post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    send(app, Method::POST, path, "manager", Some(body)).await
}

async fn get(app: &TestApp, path: &str) -> (u16, Value) {
    send(app, Method::GET, path, "viewer", None).await
}

fn individual(first: &str) -> Value {
    json!({"ownerType": "INDIVIDUAL", "firstName": first, "lastName": "Lestari",
        "phone": "+62 812-3456-7890", "email": format!("{}@example.com", first.to_lowercase())})
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn owners_are_checked_by_type(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (status, owner) = post(&app, "/management/owners", individual("Ayu")).await;
    assert_eq!(status, 201, "{owner}");
    assert_eq!(owner["ownerType"], "INDIVIDUAL");
    assert_eq!(owner["phone"], "+6281234567890", "stored in E.164 form");
    assert_eq!(owner["villaIds"], json!([]));
    let (status, company) = post(
        &app,
        "/management/owners",
        json!({"ownerType": "company", "companyName": "PT Bali Villas", "registrationNumber": "AHU-123",
            "contactPerson": "Made"}),
    )
    .await;
    assert_eq!(status, 201, "{company}");
    assert_eq!(company["ownerType"], "COMPANY");

    for (body, fields) in [
        (
            json!({"ownerType": "INDIVIDUAL"}),
            vec!["firstName", "lastName", "phone"],
        ),
        (
            json!({"ownerType": "COMPANY", "firstName": "Ayu"}),
            vec!["companyName", "contactPerson", "registrationNumber"],
        ),
        (
            json!({"ownerType": "INDIVIDUAL", "firstName": "A", "lastName": "B", "phone": "0812345678"}),
            vec!["phone"],
        ),
        (
            json!({"ownerType": "INDIVIDUAL", "firstName": "A", "lastName": "B", "phone": "+62 812", "email": "not-mail"}),
            vec!["email", "phone"],
        ),
        (json!({"firstName": "A"}), vec!["ownerType"]),
        (json!({"ownerType": "TRUST"}), vec!["ownerType"]),
    ] {
        let (status, err) = post(&app, "/management/owners", body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_error_shape("management", &err, 400, "VALIDATION_ERROR");
        assert_eq!(detail_fields(&err), fields, "{body}");
    }

    let id = owner["id"].as_str().unwrap();
    let (status, read) = get(&app, &format!("/management/owners/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(read, owner);
    let (status, err) = get(&app, &format!("/management/owners/{}", Uuid::now_v7())).await;
    assert_eq!(status, 404);
    assert_error_shape("management", &err, 404, "NOT_FOUND");
    let (status, err) = get(&app, "/management/owners/42").await;
    assert_eq!(status, 400);
    assert_error_shape("management", &err, 400, "VALIDATION_ERROR");

    // An update must leave the owner with what its type needs.
    let path = format!("/management/owners/{id}");
    let (status, err) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"ownerType": "COMPANY"})),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        detail_fields(&err),
        ["companyName", "contactPerson", "registrationNumber"]
    );
    let (status, err) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"phone": null})),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(detail_fields(&err), ["phone"]);
    let (status, updated) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"notes": "Prefers WhatsApp", "communicationPreference": "whatsapp"})),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["notes"], "Prefers WhatsApp");
    assert_eq!(updated["communicationPreference"], "WHATSAPP");
    assert_eq!(updated["firstName"], "Ayu");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_owner_owns_several_villas_and_the_wizards_owner_is_one_of_them(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (_, owner) = post(&app, "/management/owners", individual("Wayan")).await;
    let owner_id = owner["id"].as_str().unwrap().to_owned();
    let a = create_villa(&app, "Villa A").await;
    let b = create_villa(&app, "Villa B").await;
    for v in [a, b] {
        let (status, villa) = send(
            &app,
            Method::PATCH,
            &format!("/management/villas/{v}"),
            "manager",
            Some(json!({"ownerId": owner_id})),
        )
        .await;
        assert_eq!(status, 200, "{villa}");
        assert_eq!(villa["ownerId"], owner_id.as_str());
    }
    let (_, read) = get(&app, &format!("/management/owners/{owner_id}")).await;
    assert_eq!(read["villaIds"], json!([a, b]));
    // The wizard's step 2 on villa A edits that same owner.
    let (status, body) = send(
        &app,
        Method::POST,
        &format!("/api/onboarding/{a}/save-step-2"),
        "manager",
        Some(json!({"nationality": "Indonesian"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, read) = get(&app, &format!("/management/owners/{owner_id}")).await;
    assert_eq!(read["nationality"], "Indonesian");
    // A villa onboarded without an owner gets one from step 2, listed here too.
    let (wizard_villa, _) = crate::onboarding::start(&app, "WIZ-1").await;
    let (status, _) = send(
        &app,
        Method::POST,
        &format!("/api/onboarding/{wizard_villa}/save-step-2"),
        "manager",
        Some(json!({"firstName": "Ketut", "lastName": "Sari", "phone": "+62 811 222 333"})),
    )
    .await;
    assert_eq!(status, 200);
    let (_, list) = get(&app, "/management/owners?search=ketut").await;
    assert_eq!(list["pagination"]["total"], 1);
    assert_eq!(list["data"][0]["villaIds"], json!([wizard_villa]));
    // Unlinking an owner from a villa.
    let (_, villa) = send(
        &app,
        Method::PATCH,
        &format!("/management/villas/{b}"),
        "manager",
        Some(json!({"ownerId": null})),
    )
    .await;
    assert!(villa["ownerId"].is_null());
    let (_, read) = get(&app, &format!("/management/owners/{owner_id}")).await;
    assert_eq!(read["villaIds"], json!([a]));
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn owner_and_staff_lists_page_filter_and_search(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    for name in ["Ayu", "Budi", "Citra"] {
        post(&app, "/management/owners", individual(name)).await;
    }
    post(
        &app,
        "/management/owners",
        json!({"ownerType": "COMPANY", "companyName": "Ayu Holdings", "registrationNumber": "R1", "contactPerson": "X"}),
    )
    .await;
    let (status, page) = get(&app, "/management/owners?limit=3").await;
    assert_eq!(status, 200);
    assert_eq!(
        page["pagination"],
        json!({"page": 1, "limit": 3, "total": 4})
    );
    assert_eq!(page["data"].as_array().unwrap().len(), 3);
    assert_eq!(
        page["data"][0]["companyName"], "Ayu Holdings",
        "newest first"
    );
    let (_, last) = get(&app, "/management/owners?limit=3&page=2").await;
    assert_eq!(last["data"].as_array().unwrap().len(), 1);
    assert_eq!(last["data"][0]["firstName"], "Ayu");
    let (_, empty) = get(&app, "/management/owners?limit=3&page=3").await;
    assert_eq!(empty["data"], json!([]));
    assert_eq!(empty["pagination"]["total"], 4);
    let (_, ayu) = get(&app, "/management/owners?search=AYU").await;
    assert_eq!(ayu["pagination"]["total"], 2);
    let (_, companies) = get(&app, "/management/owners?ownerType=company&search=ayu").await;
    assert_eq!(companies["pagination"]["total"], 1);
    for query in [
        "page=0",
        "limit=0",
        "limit=101",
        "page=x",
        "ownerType=TRUST",
    ] {
        let (status, err) = get(&app, &format!("/management/owners?{query}")).await;
        assert_eq!(status, 400, "{query}");
        assert_error_shape("management", &err, 400, "VALIDATION_ERROR");
    }

    for (first, role) in [
        ("Made", "GARDENER"),
        ("Nyoman", "CHEF"),
        ("Komang", "GARDENER"),
    ] {
        let (status, member) = post(
            &app,
            "/management/staff",
            json!({"firstName": first, "lastName": "Putra", "email": format!("{first}@villa.test"),
                "phone": "+62 811 000 111", "defaultRole": role}),
        )
        .await;
        assert_eq!(status, 201, "{member}");
    }
    let (_, page) = get(&app, "/management/staff?limit=2&page=2").await;
    assert_eq!(
        page["pagination"],
        json!({"page": 2, "limit": 2, "total": 3})
    );
    assert_eq!(page["data"][0]["firstName"], "Made");
    let (_, gardeners) = get(&app, "/management/staff?role=gardener").await;
    assert_eq!(gardeners["pagination"]["total"], 2);
    let (_, found) = get(&app, "/management/staff?search=nyoman@").await;
    assert_eq!(found["pagination"]["total"], 1);
    assert_eq!(found["data"][0]["defaultRole"], "CHEF");
    let (status, _) = get(&app, "/management/staff?role=PILOT").await;
    assert_eq!(status, 400);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn staff_are_created_read_and_checked(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (status, member) = post(
        &app,
        "/management/staff",
        json!({"firstName": "Made", "lastName": "Wirawan", "email": "made@villa.test",
            "phone": "+62 811 000 111", "role": "pool_technician"}),
    )
    .await;
    assert_eq!(status, 201, "{member}");
    assert_eq!(member["defaultRole"], "POOL_TECHNICIAN");
    assert_eq!(member["phone"], "+62811000111");
    assert_eq!(member["assignments"], json!([]));
    let id = member["id"].as_str().unwrap();
    let (status, read) = get(&app, &format!("/management/staff/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(read, member);
    let (status, _) = get(&app, &format!("/management/staff/{}", Uuid::now_v7())).await;
    assert_eq!(status, 404);
    let (status, err) = post(&app, "/management/staff", json!({})).await;
    assert_eq!(status, 400);
    assert_eq!(
        detail_fields(&err),
        ["defaultRole", "firstName", "lastName"]
    );
    let (status, err) = post(
        &app,
        "/management/staff",
        json!({"firstName": "A", "lastName": "B", "defaultRole": "PILOT", "email": "x", "phone": "12"}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(detail_fields(&err), ["defaultRole", "email", "phone"]);
    let message = err["error"]["details"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("HOUSEKEEPER") && message.contains("DRIVER"),
        "{message}"
    );
}

async fn new_staff(app: &TestApp, first: &str, role: &str) -> String {
    let (status, member) = post(
        app,
        "/management/staff",
        json!({"firstName": first, "lastName": "Putra", "defaultRole": role}),
    )
    .await;
    assert_eq!(status, 201);
    member["id"].as_str().unwrap().to_owned()
}

async fn primaries(pool: &PgPool, villa: Uuid, role: &str) -> Vec<Uuid> {
    sqlx::query_scalar(
        "SELECT staff_id FROM villa_staff WHERE villa_id = $1 AND role = $2 AND is_primary",
    )
    .bind(villa)
    .bind(role)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_villa_has_one_primary_per_role(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Team").await;
    let a = new_staff(&app, "Ayu", "HOUSEKEEPER").await;
    let b = new_staff(&app, "Budi", "HOUSEKEEPER").await;
    let c = new_staff(&app, "Citra", "CHEF").await;
    let path = format!("/management/villas/{villa}/staff");
    let (status, first) = post(
        &app,
        &path,
        json!({"staffId": a, "role": "HOUSEKEEPER", "isPrimary": true}),
    )
    .await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["isPrimary"], true);
    assert_eq!(first["role"], "HOUSEKEEPER");
    // A second primary housekeeper replaces the first; a primary chef does not touch them.
    let (status, _) = post(
        &app,
        &path,
        json!({"staffId": b, "role": "HOUSEKEEPER", "isPrimary": true}),
    )
    .await;
    assert_eq!(status, 201);
    let (status, chef) = post(&app, &path, json!({"staffId": c, "isPrimary": true})).await;
    assert_eq!(status, 201);
    assert_eq!(chef["role"], "CHEF", "the default role when none is sent");
    assert_eq!(
        primaries(&pool, villa, "HOUSEKEEPER").await,
        [b.parse::<Uuid>().unwrap()]
    );
    assert_eq!(primaries(&pool, villa, "CHEF").await.len(), 1);
    // Assigning again updates the assignment.
    let (status, again) = post(
        &app,
        &path,
        json!({"staffId": a, "role": "HOUSEKEEPER", "isPrimary": true}),
    )
    .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        primaries(&pool, villa, "HOUSEKEEPER").await,
        [a.parse::<Uuid>().unwrap()]
    );
    let (_, team) = get(&app, &path).await;
    assert_eq!(team["data"].as_array().unwrap().len(), 3);
    let (_, member) = get(&app, &format!("/management/staff/{a}")).await;
    assert_eq!(
        member["assignments"],
        json!([{"villaId": villa, "villaName": "Villa Team", "role": "HOUSEKEEPER", "isPrimary": true}])
    );
    // The wizard's step 7 sees the same team.
    let (_, wizard) = json_get(&app, &format!("/api/villas/{villa}")).await;
    assert_eq!(wizard["data"]["staff"].as_array().unwrap().len(), 3);

    for (body, status, field) in [
        (json!({"staffId": "not-a-uuid"}), 400, Some("staffId")),
        (json!({}), 400, Some("staffId")),
        (json!({"staffId": a, "role": "PILOT"}), 400, Some("role")),
        (
            json!({"staffId": a, "isPrimary": "yes"}),
            400,
            Some("isPrimary"),
        ),
        (json!({"staffId": Uuid::now_v7()}), 404, None),
    ] {
        let (got, err) = post(&app, &path, body.clone()).await;
        assert_eq!(got, status, "{body}: {err}");
        if let Some(field) = field {
            assert_eq!(detail_fields(&err), [field]);
        } else {
            assert_error_shape("management", &err, 404, "NOT_FOUND");
        }
    }
    let (status, _) = post(
        &app,
        &format!("/management/villas/{}/staff", Uuid::now_v7()),
        json!({"staffId": a}),
    )
    .await;
    assert_eq!(status, 404);

    // Ten simultaneous primary assignments: every one answered, one primary at the end.
    let mut ids = Vec::new();
    for i in 0..10 {
        ids.push(new_staff(&app, &format!("Gardener{i}"), "GARDENER").await);
    }
    let calls = ids.iter().map(|id| {
        post(
            &app,
            &path,
            json!({"staffId": id, "role": "GARDENER", "isPrimary": true}),
        )
    });
    for (status, body) in futures::future::join_all(calls).await {
        assert_eq!(status, 201, "{body}");
    }
    assert_eq!(primaries(&pool, villa, "GARDENER").await.len(), 1);

    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("{path}/{a}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("{path}/{a}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert!(primaries(&pool, villa, "HOUSEKEEPER").await.is_empty());
}

async fn json_get(app: &TestApp, path: &str) -> (u16, Value) {
    tests::json(app.get(path, "viewer").await).await
}
