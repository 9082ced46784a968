//! Task rules (`/maintenance/task-rules`): create with every field and with the defaults, every
//! validation rule naming its field, unknown villas and staff, the MID_STAY pair, partial
//! `PATCH`es, archiving, the list's filters and paging, and who may do what.

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::maintenance::staff_member;
use crate::management_villas::{create_villa, send};

const RULES: &str = "/maintenance/task-rules";

fn assert_maintenance_error(body: &Value, status: u16, code: &str) {
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["statusCode"], status, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
}

fn bad_fields(body: &Value) -> Vec<String> {
    assert_maintenance_error(body, 400, "VALIDATION_ERROR");
    body["error"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {body}"))
        .iter()
        .map(|f| f["field"].as_str().unwrap().to_owned())
        .collect()
}

async fn create(app: &TestApp, body: Value) -> Value {
    let (status, rule) = send(app, Method::POST, RULES, "manager", Some(body)).await;
    assert_eq!(status, 201, "{rule}");
    rule
}

fn minimal(name: &str) -> Value {
    json!({"name": name, "trigger": "CHECKOUT", "category": "CLEANING"})
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_rule_is_created_with_every_field_and_read_back(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let a = create_villa(&app, "Villa A").await;
    let b = create_villa(&app, "Villa B").await;
    let tech = staff_member(&app, "Made").await;
    let body = json!({
        "name": "Turnover clean", "trigger": "checkin", "offsetDays": -1,
        "villaIds": [b, a, b], "category": "inspection", "priority": "high",
        "title": "Pre-arrival inspection", "defaultAssigneeId": tech, "includeOwnerStays": true,
        "checklist": [
            {"text": "  Towels folded  ", "kind": "photo_required", "failCategory": "cleaning", "extra": 1},
            {"text": "Pool clear"}
        ],
        "consumables": [
            {"itemSku": "SOAP-1", "perStay": 2, "perNight": 0.125},
            {"itemSku": "TP", "perNight": "0.1"}
        ],
        "unknownMember": "ignored"
    });
    let rule = create(&app, body).await;
    let mut villas = vec![a.to_string(), b.to_string()];
    villas.sort();
    assert_eq!(rule["name"], "Turnover clean");
    assert_eq!(rule["trigger"], "CHECKIN");
    assert_eq!(rule["offsetDays"], -1);
    assert_eq!(rule["everyNights"], Value::Null);
    assert_eq!(rule["villaIds"], json!(villas));
    assert_eq!(rule["category"], "INSPECTION");
    assert_eq!(rule["priority"], "HIGH");
    assert_eq!(rule["title"], "Pre-arrival inspection");
    assert_eq!(rule["defaultAssigneeId"], tech);
    assert_eq!(rule["includeOwnerStays"], true);
    assert_eq!(
        rule["checklist"],
        json!([
            {"text": "Towels folded", "kind": "PHOTO_REQUIRED", "failCategory": "CLEANING"},
            {"text": "Pool clear", "kind": "CHECK", "failCategory": "GENERAL"}
        ])
    );
    assert_eq!(
        rule["consumables"],
        json!([
            {"itemSku": "SOAP-1", "perStay": 2, "perNight": 0.125},
            {"itemSku": "TP", "perStay": 0, "perNight": 0.1}
        ])
    );
    assert_eq!(rule["archivedAt"], Value::Null);
    assert!(rule["createdAt"].is_string() && rule["updatedAt"].is_string());
    assert!(rule["createdBy"].is_string());

    let id = rule["id"].as_str().unwrap();
    let (status, read) = send(&app, Method::GET, &format!("{RULES}/{id}"), "viewer", None).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read, rule);

    // Defaults.
    let plain = create(&app, minimal("Checkout clean")).await;
    assert_eq!(plain["offsetDays"], 0);
    assert_eq!(plain["priority"], "MEDIUM");
    assert_eq!(plain["title"], Value::Null);
    assert_eq!(plain["defaultAssigneeId"], Value::Null);
    assert_eq!(plain["includeOwnerStays"], false);
    assert_eq!(plain["villaIds"], json!([]));
    assert_eq!(plain["checklist"], json!([]));
    assert_eq!(plain["consumables"], json!([]));

    // An unknown rule.
    let (status, body) = send(
        &app,
        Method::GET,
        &format!("{RULES}/{}", Uuid::now_v7()),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_maintenance_error(&body, 404, "TASK_RULE_NOT_FOUND");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_bad_field_is_named(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let base = minimal("Rule");
    let with = |extra: Value| {
        let mut body = base.clone();
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let long = "x".repeat(201);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["name", "trigger", "category"]),
        (with(json!({"name": long})), vec!["name"]),
        (with(json!({"trigger": "WEEKLY"})), vec!["trigger"]),
        (with(json!({"offsetDays": 31})), vec!["offsetDays"]),
        (with(json!({"offsetDays": -31})), vec!["offsetDays"]),
        (with(json!({"offsetDays": 1.5})), vec!["offsetDays"]),
        (with(json!({"category": "GARDENING"})), vec!["category"]),
        (with(json!({"priority": "NOW"})), vec!["priority"]),
        (with(json!({"title": "t".repeat(201)})), vec!["title"]),
        (
            with(json!({"defaultAssigneeId": "nope"})),
            vec!["defaultAssigneeId"],
        ),
        (
            with(json!({"includeOwnerStays": "yes"})),
            vec!["includeOwnerStays"],
        ),
        // The MID_STAY pair.
        (with(json!({"everyNights": 3})), vec!["everyNights"]),
        (with(json!({"trigger": "MID_STAY"})), vec!["everyNights"]),
        (
            with(json!({"trigger": "MID_STAY", "everyNights": 1})),
            vec!["everyNights"],
        ),
        (
            with(json!({"trigger": "MID_STAY", "everyNights": 61})),
            vec!["everyNights"],
        ),
        // Villas.
        (with(json!({"villaIds": "all"})), vec!["villaIds"]),
        (
            with(json!({"villaIds": ["nope", 3]})),
            vec!["villaIds[0]", "villaIds[1]"],
        ),
        (
            with(json!({"villaIds": vec![Uuid::nil().to_string(); 501]})),
            vec!["villaIds"],
        ),
        // Checklist.
        (with(json!({"checklist": {"text": "a"}})), vec!["checklist"]),
        (with(json!({"checklist": ["a"]})), vec!["checklist[0]"]),
        (
            with(
                json!({"checklist": [{"text": "ok"}, {"text": "  "}, {"text": "x".repeat(501)}, {"text": 3}]}),
            ),
            vec![
                "checklist[1].text",
                "checklist[2].text",
                "checklist[3].text",
            ],
        ),
        (
            with(json!({"checklist": [{"text": "a", "kind": "LOOK", "failCategory": "NOPE"}]})),
            vec!["checklist[0].kind", "checklist[0].failCategory"],
        ),
        // Consumables.
        (with(json!({"consumables": [1]})), vec!["consumables[0]"]),
        (
            with(
                json!({"consumables": [{"perStay": 1}, {"itemSku": "s".repeat(65), "perStay": 1}]}),
            ),
            vec!["consumables[0].itemSku", "consumables[1].itemSku"],
        ),
        (
            with(json!({"consumables": [{"itemSku": "A", "perStay": -1, "perNight": 0.0001}]})),
            vec!["consumables[0].perStay", "consumables[0].perNight"],
        ),
        (
            with(
                json!({"consumables": [{"itemSku": "A", "perStay": 1e11}, {"itemSku": "B", "perNight": "x"}]}),
            ),
            vec!["consumables[0].perStay", "consumables[1].perNight"],
        ),
        (
            with(json!({"consumables": [{"itemSku": "A", "perStay": 0, "perNight": 0}]})),
            vec!["consumables[0]"],
        ),
        (
            with(
                json!({"consumables": [{"itemSku": "A", "perStay": 1}, {"itemSku": "A", "perNight": 1}]}),
            ),
            vec!["consumables[1].itemSku"],
        ),
    ];
    for (body, expected) in cases {
        let (status, answer) = send(&app, Method::POST, RULES, "manager", Some(body.clone())).await;
        assert_eq!(status, 400, "{body} -> {answer}");
        assert_eq!(bad_fields(&answer), expected, "{body}");
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM task_rules")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(count, 0);

    // Unknown villas and staff: 400 naming them.
    let villa = create_villa(&app, "Villa Known").await;
    let (status, answer) = send(
        &app,
        Method::POST,
        RULES,
        "manager",
        Some(with(json!({"villaIds": [villa, Uuid::now_v7()],
                         "defaultAssigneeId": Uuid::now_v7()}))),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(bad_fields(&answer), ["villaIds[1]", "defaultAssigneeId"]);

    // A MID_STAY rule with its nights.
    let rule = create(&app, with(json!({"trigger": "mid_stay", "everyNights": 3}))).await;
    assert_eq!(rule["trigger"], "MID_STAY");
    assert_eq!(rule["everyNights"], 3);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn checklists_and_consumables_are_bounded(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let items = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({"text": format!("Item {i}")}))
            .collect()
    };
    let lines = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({"itemSku": format!("SKU-{i}"), "perStay": 1}))
            .collect()
    };
    let mut body = minimal("Big");
    body["checklist"] = json!(items(100));
    body["consumables"] = json!(lines(50));
    let rule = create(&app, body.clone()).await;
    assert_eq!(rule["checklist"].as_array().unwrap().len(), 100);
    assert_eq!(rule["consumables"].as_array().unwrap().len(), 50);

    body["checklist"] = json!(items(101));
    body["consumables"] = json!(lines(51));
    let (status, answer) = send(&app, Method::POST, RULES, "manager", Some(body)).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(bad_fields(&answer), ["checklist", "consumables"]);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_patch_changes_what_it_names(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let a = create_villa(&app, "Villa A").await;
    let b = create_villa(&app, "Villa B").await;
    let tech = staff_member(&app, "Wayan").await;
    let mut body = minimal("Clean");
    body["villaIds"] = json!([a]);
    body["checklist"] = json!([{"text": "Beds"}]);
    body["consumables"] = json!([{"itemSku": "SOAP", "perStay": 1}]);
    body["offsetDays"] = json!(2);
    let rule = create(&app, body).await;
    let path = format!("{RULES}/{}", rule["id"].as_str().unwrap());

    let (status, changed) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"priority": "urgent", "villaIds": [b], "defaultAssigneeId": tech})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["priority"], "URGENT");
    assert_eq!(changed["villaIds"], json!([b]));
    assert_eq!(changed["defaultAssigneeId"], tech);
    for unchanged in [
        "name",
        "trigger",
        "offsetDays",
        "category",
        "title",
        "checklist",
        "consumables",
        "includeOwnerStays",
        "createdAt",
    ] {
        assert_eq!(changed[unchanged], rule[unchanged], "{unchanged}");
    }

    // Lists replace; null resets a field with a default.
    let (status, changed) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(
            json!({"villaIds": [], "checklist": [{"text": "Floors", "kind": "PHOTO_REQUIRED"}],
                    "consumables": null, "offsetDays": null, "title": "Deep clean"}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["villaIds"], json!([]));
    assert_eq!(
        changed["checklist"],
        json!([{"text": "Floors", "kind": "PHOTO_REQUIRED", "failCategory": "GENERAL"}])
    );
    assert_eq!(changed["consumables"], json!([]));
    assert_eq!(changed["offsetDays"], 0);
    assert_eq!(changed["title"], "Deep clean");
    assert_eq!(changed["priority"], "URGENT");

    // The MID_STAY pair, checked against the stored row.
    let (status, answer) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"trigger": "MID_STAY"})),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(bad_fields(&answer), ["everyNights"]);
    let (status, answer) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"everyNights": 4})),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(bad_fields(&answer), ["everyNights"]);
    let (status, mid) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"trigger": "MID_STAY", "everyNights": 4})),
    )
    .await;
    assert_eq!(status, 200, "{mid}");
    assert_eq!(mid["everyNights"], 4);
    let (status, mid) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"everyNights": 7})),
    )
    .await;
    assert_eq!(status, 200, "{mid}");
    assert_eq!(
        (mid["trigger"].as_str(), mid["everyNights"].as_i64()),
        (Some("MID_STAY"), Some(7))
    );
    let (status, answer) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"everyNights": null})),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(bad_fields(&answer), ["everyNights"]);
    // Leaving MID_STAY clears the nights.
    let (status, back) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"trigger": "CHECKOUT"})),
    )
    .await;
    assert_eq!(status, 200, "{back}");
    assert_eq!(back["everyNights"], Value::Null);

    // Bad fields and unknown references on a PATCH; a required field cannot be cleared.
    let (status, answer) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"name": null, "villaIds": [Uuid::now_v7()], "defaultAssigneeId": Uuid::now_v7()})),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(bad_fields(&answer), ["name"]);
    let (status, answer) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"villaIds": [Uuid::now_v7()], "defaultAssigneeId": Uuid::now_v7()})),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(bad_fields(&answer), ["villaIds[0]", "defaultAssigneeId"]);

    let (status, answer) = send(
        &app,
        Method::PATCH,
        &format!("{RULES}/{}", Uuid::now_v7()),
        "manager",
        Some(json!({"priority": "LOW"})),
    )
    .await;
    assert_eq!(status, 404, "{answer}");
    assert_maintenance_error(&answer, 404, "TASK_RULE_NOT_FOUND");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn archiving_is_once_and_freezes_the_rule(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let rule = create(&app, minimal("Clean")).await;
    let path = format!("{RULES}/{}", rule["id"].as_str().unwrap());

    let (status, archived) = send(
        &app,
        Method::POST,
        &format!("{path}/archive"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 200, "{archived}");
    assert!(archived["archivedAt"].is_string(), "{archived}");
    let (status, again) = send(
        &app,
        Method::POST,
        &format!("{path}/archive"),
        "admin",
        None,
    )
    .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again, archived);

    let (status, answer) = send(
        &app,
        Method::PATCH,
        &path,
        "manager",
        Some(json!({"priority": "LOW"})),
    )
    .await;
    assert_eq!(status, 409, "{answer}");
    assert_maintenance_error(&answer, 409, "TASK_RULE_ARCHIVED");

    let (status, answer) = send(
        &app,
        Method::POST,
        &format!("{RULES}/{}/archive", Uuid::now_v7()),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 404, "{answer}");
    assert_maintenance_error(&answer, 404, "TASK_RULE_NOT_FOUND");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_list_filters_and_pages(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let a = create_villa(&app, "Villa A").await;
    let b = create_villa(&app, "Villa B").await;
    let everywhere = create(&app, minimal("Everywhere")).await;
    let mut only_a = minimal("Only A");
    only_a["villaIds"] = json!([a]);
    only_a["trigger"] = json!("CHECKIN");
    let only_a = create(&app, only_a).await;
    let mut only_b = minimal("Only B");
    only_b["villaIds"] = json!([b]);
    let only_b = create(&app, only_b).await;
    let gone = create(&app, minimal("Gone")).await;
    let (status, _) = send(
        &app,
        Method::POST,
        &format!("{RULES}/{}/archive", gone["id"].as_str().unwrap()),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 200);

    let names = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let list = |query: String| {
        let app = &app;
        async move {
            let (status, page) =
                send(app, Method::GET, &format!("{RULES}{query}"), "viewer", None).await;
            assert_eq!(status, 200, "{query}: {page}");
            page
        }
    };
    let page = list(String::new()).await;
    assert_eq!(names(&page), ["Only B", "Only A", "Everywhere"]);
    assert_eq!(page["pagination"]["total"], 3);
    assert_eq!(names(&list("?archived=true".into()).await), ["Gone"]);
    assert_eq!(
        names(&list("?archived=false".into()).await),
        ["Only B", "Only A", "Everywhere"]
    );
    assert_eq!(names(&list("?trigger=checkin".into()).await), ["Only A"]);
    assert_eq!(
        names(&list(format!("?villaId={a}")).await),
        ["Only A", "Everywhere"]
    );
    assert_eq!(
        names(&list(format!("?villaId={b}&trigger=CHECKOUT")).await),
        ["Only B", "Everywhere"]
    );
    let page = list("?limit=2&page=2".into()).await;
    assert_eq!(names(&page), ["Everywhere"]);
    assert_eq!(
        page["pagination"],
        json!({"page": 2, "limit": 2, "total": 3})
    );
    assert_eq!(page["data"][0], everywhere);
    let _ = (only_a, only_b);

    let (status, answer) = send(
        &app,
        Method::GET,
        &format!("{RULES}?archived=maybe&trigger=DAILY&villaId=x&limit=0"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    let mut fields = bad_fields(&answer);
    fields.sort();
    assert_eq!(fields, ["archived", "limit", "trigger", "villaId"]);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn only_managers_and_admins_write(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let rule = create(&app, minimal("Clean")).await;
    let id = rule["id"].as_str().unwrap();
    let admin = {
        let (status, body) = send(
            &app,
            Method::POST,
            RULES,
            "admin",
            Some(minimal("By admin")),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        body
    };
    assert_eq!(admin["name"], "By admin");

    for role in ["staff", "viewer"] {
        let writes = [
            (Method::POST, RULES.to_owned(), Some(minimal("No"))),
            (
                Method::PATCH,
                format!("{RULES}/{id}"),
                Some(json!({"priority": "LOW"})),
            ),
            (Method::POST, format!("{RULES}/{id}/archive"), None),
        ];
        for (method, path, body) in writes {
            let (status, answer) = send(&app, method.clone(), &path, role, body).await;
            assert_eq!(status, 403, "{role} {method} {path}: {answer}");
            assert_maintenance_error(&answer, 403, "FORBIDDEN");
        }
        let (status, _) = send(&app, Method::GET, RULES, role, None).await;
        assert_eq!(status, 200, "{role}");
        let (status, _) = send(&app, Method::GET, &format!("{RULES}/{id}"), role, None).await;
        assert_eq!(status, 200, "{role}");
    }
    let (status, stored) = send(&app, Method::GET, &format!("{RULES}/{id}"), "viewer", None).await;
    assert_eq!(status, 200);
    assert_eq!(stored, rule);

    let res = app.get_anonymous(RULES).await;
    assert_eq!(res.status(), 401);
    let res = app
        .request(Method::POST, RULES, None)
        .json(&minimal("Anonymous"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}
