//! The inventory surface: items on a ledger that never goes negative, movements, transfers with
//! receipt and discrepancies, category and location trees, properties and reports.

use std::collections::HashMap;

use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::TestApp;
use uuid::Uuid;

use crate::management_villas::{create_villa, send};

/// The inventory error shape: `{error: {code, message, details}}`.
pub fn assert_inventory_error(body: &Value, code: &str) {
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    assert!(body["error"]["details"].is_object(), "{body}");
}

/// The fields a 400 names, in `details.fields`.
pub fn bad_fields(body: &Value) -> Vec<String> {
    assert_inventory_error(body, "VALIDATION_ERROR");
    body["error"]["details"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no fields in {body}"))
        .iter()
        .map(|f| f["field"].as_str().unwrap().to_owned())
        .collect()
}

pub async fn post(app: &TestApp, path: &str, role: &str, body: Value) -> (u16, Value) {
    send(app, Method::POST, path, role, Some(body)).await
}

pub async fn get(app: &TestApp, path: &str, role: &str) -> (u16, Value) {
    send(app, Method::GET, path, role, None).await
}

async fn patch(app: &TestApp, path: &str, role: &str, body: Value) -> (u16, Value) {
    send(app, Method::PATCH, path, role, Some(body)).await
}

pub async fn location(app: &TestApp, property: Uuid, name: &str, parent: Option<&str>) -> String {
    let (status, body) = post(
        app,
        "/inventory/locations",
        "manager",
        json!({"name": name, "type": "STORAGE", "propertyId": property, "parentId": parent}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

/// Creates an item; `extra` adds or overrides fields.
pub async fn item(app: &TestApp, property: Uuid, location: &str, sku: &str, extra: Value) -> Value {
    let mut body = json!({"name": format!("Item {sku}"), "sku": sku, "category": "LINENS",
        "propertyId": property, "locationId": location, "unit": "EACH"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let (status, created) = post(app, "/inventory/items", "manager", body).await;
    assert_eq!(status, 201, "{created}");
    created
}

pub async fn movement(app: &TestApp, item: &str, kind: &str, quantity: Value) -> (u16, Value) {
    post(
        app,
        "/inventory/movements",
        "staff",
        json!({"itemId": item, "type": kind, "quantity": quantity}),
    )
    .await
}

fn dec(v: &Value) -> Decimal {
    v.to_string()
        .trim_matches('"')
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {v}"))
}

async fn quantity_of(app: &TestApp, item: &str) -> Decimal {
    let (status, body) = get(app, &format!("/inventory/items/{item}"), "viewer").await;
    assert_eq!(status, 200, "{body}");
    dec(&body["quantity"])
}

/// Every item's quantity equals the sum of its movements' changes (no constraint says so; that
/// neither goes below 0 is a CHECK, not worth asserting).
pub async fn assert_ledger_holds(pool: &PgPool) {
    let broken: Vec<(Uuid, Decimal, Option<Decimal>)> = sqlx::query_as(
        "SELECT i.id, i.quantity, (SELECT sum(change) FROM inventory_movements m WHERE m.item_id = i.id)
         FROM inventory_items i
         WHERE i.quantity <> coalesce((SELECT sum(change) FROM inventory_movements m WHERE m.item_id = i.id), 0)",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert!(broken.is_empty(), "ledger broken: {broken:?}");
}

/// The ledger of `item` as `GET /inventory/movements` lists it, every page.
async fn ledger_of(app: &TestApp, item: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for page in 1.. {
        let (status, body) = get(
            app,
            &format!("/inventory/movements?itemId={item}&limit=100&page={page}"),
            "viewer",
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let data = body["data"].as_array().unwrap();
        if data.is_empty() {
            break;
        }
        all.extend(data.iter().cloned());
    }
    all
}

/// What the answers say the ledger of `item` holds, checked against the API: its quantity is the
/// starting quantity plus the change of every movement answered 201 (`answered`, as answered)
/// plus what the answered transfers moved (`transferred`); the ledger lists exactly those
/// movements (by id, each with the change it answered) besides its INITIAL movement (`start`)
/// and its transfer movements (summing to `transferred`). A movement lost, doubled, or written
/// while its POST answered an error fails this.
async fn assert_ledger_is(
    app: &TestApp,
    item: &str,
    start: Decimal,
    answered: &[Value],
    transferred: Decimal,
) {
    let mut listed = Vec::new();
    let (mut initial, mut transfers) = (Decimal::ZERO, Decimal::ZERO);
    for m in ledger_of(app, item).await {
        assert_eq!(m["itemId"], item, "{m}");
        match m["type"].as_str().unwrap() {
            "INITIAL" => initial += dec(&m["change"]),
            "TRANSFER_IN" | "TRANSFER_OUT" => transfers += dec(&m["change"]),
            _ => listed.push((m["id"].as_str().unwrap().to_owned(), dec(&m["change"]))),
        }
    }
    let mut expected: Vec<(String, Decimal)> = answered
        .iter()
        .map(|m| (m["id"].as_str().unwrap().to_owned(), dec(&m["change"])))
        .collect();
    listed.sort();
    expected.sort();
    assert_eq!(
        listed, expected,
        "item {item}: the ledger lists exactly the movements answered 201"
    );
    assert_eq!(initial, start, "item {item}: its INITIAL movement");
    assert_eq!(
        transfers, transferred,
        "item {item}: its transfer movements"
    );
    let posted: Decimal = expected.iter().map(|(_, change)| *change).sum();
    assert_eq!(
        quantity_of(app, item).await,
        start + posted + transferred,
        "item {item}: the quantity the answers add up to"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn items_are_checked_created_listed_updated_and_archived(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Sunset").await;
    let other = create_villa(&app, "Villa Moon").await;
    let cupboard = location(&app, villa, "Linen cupboard", None).await;
    let elsewhere = location(&app, other, "Store", None).await;

    // Every bad field at once, in details.fields.
    let (status, body) = post(
        &app,
        "/inventory/items",
        "manager",
        json!({"sku": "", "category": "LINENS", "propertyId": "nope", "locationId": cupboard,
               "unit": "BUCKET", "quantity": -1, "minStock": 1.2345, "condition": "SHINY",
               "unitCost": -5, "currency": "BAHT", "expiryDate": "2026-02-30"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let mut fields = bad_fields(&body);
    fields.sort();
    assert_eq!(
        fields,
        [
            "condition",
            "currency",
            "expiryDate",
            "minStock",
            "name",
            "propertyId",
            "quantity",
            "sku",
            "unit",
            "unitCost"
        ]
    );
    let (status, body) = post(
        &app,
        "/inventory/items",
        "manager",
        json!({"name": "Sheet", "sku": "S-1", "category": "LINENS", "propertyId": villa,
               "locationId": cupboard, "unit": "EACH", "minStock": 10, "maxStock": 5}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["maxStock"]);
    let (status, body) = post(
        &app,
        "/inventory/items",
        "manager",
        json!({"name": "Sheet", "sku": "S-1", "category": "NOT_A_CATEGORY", "propertyId": villa,
               "locationId": cupboard, "unit": "EACH"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["category"]);
    // A location of another property.
    let (status, body) = post(
        &app,
        "/inventory/items",
        "manager",
        json!({"name": "Sheet", "sku": "S-1", "category": "LINENS", "propertyId": villa,
               "locationId": elsewhere, "unit": "EACH"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["locationId"]);
    // An unknown property.
    let (status, body) = post(
        &app,
        "/inventory/items",
        "manager",
        json!({"name": "Sheet", "sku": "S-1", "category": "LINENS", "propertyId": Uuid::now_v7(),
               "locationId": cupboard, "unit": "EACH"}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_inventory_error(&body, "NOT_FOUND");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("property")
    );
    // Staff record stock, they do not decide what the storeroom holds; no token is 401.
    let sheet = json!({"name": "King sheet", "sku": "LIN-KS", "category": "linens", "propertyId": villa,
        "locationId": cupboard, "unit": "each", "quantity": 12.5, "minStock": 4, "maxStock": 40,
        "condition": "NEW", "unitCost": 350.25, "expiryDate": "2030-01-01"});
    let (status, body) = post(&app, "/inventory/items", "staff", sheet.clone()).await;
    assert_eq!(status, 403, "{body}");
    assert_inventory_error(&body, "FORBIDDEN");
    let res = app
        .request(Method::POST, "/inventory/items", None)
        .json(&sheet)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    let (status, created) = post(&app, "/inventory/items", "manager", sheet.clone()).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["category"], "LINENS");
    assert_eq!(created["unit"], "EACH");
    assert_eq!(created["currency"], "THB");
    assert_eq!(dec(&created["quantity"]), Decimal::new(125, 1));
    assert_eq!(dec(&created["unitCost"]), Decimal::new(35025, 2));
    assert_eq!(created["property"]["name"], "Villa Sunset");
    assert_eq!(created["location"]["name"], "Linen cupboard");
    assert_eq!(created["locationPath"], "Villa Sunset / Linen cupboard");
    let movements = created["movements"].as_array().unwrap();
    assert_eq!(movements.len(), 1);
    assert_eq!(movements[0]["type"], "INITIAL");
    assert_eq!(dec(&movements[0]["balanceAfter"]), Decimal::new(125, 1));
    let id = created["id"].as_str().unwrap().to_owned();

    // One sku per location; the same product elsewhere is another stock item.
    let (status, body) = post(&app, "/inventory/items", "manager", sheet.clone()).await;
    assert_eq!(status, 409, "{body}");
    assert_inventory_error(&body, "DUPLICATE_SKU");
    let shelf = location(&app, villa, "Laundry shelf", None).await;
    let mut same_elsewhere = sheet.clone();
    same_elsewhere["locationId"] = json!(shelf);
    same_elsewhere["quantity"] = json!(0);
    let (status, body) = post(&app, "/inventory/items", "manager", same_elsewhere).await;
    assert_eq!(status, 201, "{body}");

    // The quantity is the ledger's.
    let path = format!("/inventory/items/{id}");
    let (status, body) = patch(&app, &path, "manager", json!({"quantity": 3})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["quantity"]);
    assert!(
        body["error"]["details"]["fields"][0]["message"]
            .as_str()
            .unwrap()
            .contains("ADJUSTMENT")
    );
    let (status, body) = patch(&app, &path, "manager", json!({"maxStock": 1})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["maxStock"]);
    let (status, updated) = patch(
        &app,
        &path,
        "manager",
        json!({"minStock": 20, "condition": "good", "name": "King bed sheet"}),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["name"], "King bed sheet");
    assert_eq!(updated["condition"], "GOOD");
    assert_eq!(updated["lowStock"], true);
    assert_eq!(dec(&updated["quantity"]), Decimal::new(125, 1));
    let (status, _) = patch(&app, &path, "staff", json!({"minStock": 1})).await;
    assert_eq!(status, 403);

    // Lists: ordered by name, filtered, paged.
    let towel = item(
        &app,
        villa,
        &shelf,
        "TOW-1",
        json!({"name": "Beach towel", "category": "TOWELS", "quantity": 30}),
    )
    .await;
    let (status, page) = get(
        &app,
        &format!("/inventory/items?propertyId={villa}"),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let names: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Beach towel", "King bed sheet", "King sheet"]);
    assert_eq!(
        page["pagination"],
        json!({"page": 1, "limit": 20, "total": 3})
    );
    for (query, expected) in [
        ("search=towel", 1),
        ("search=lin-ks", 2),
        // The sheet below its new minimum, and the empty one on the shelf.
        ("lowStock=true", 2),
        ("lowStock=false", 3),
        ("category=TOWELS", 1),
        (&*format!("locationId={shelf}"), 2),
        ("condition=GOOD", 1),
        ("limit=1&page=3", 3),
        ("page=9", 3),
    ] {
        let (status, page) = get(
            &app,
            &format!("/inventory/items?propertyId={villa}&{query}"),
            "viewer",
        )
        .await;
        assert_eq!(status, 200, "{query}: {page}");
        assert_eq!(page["pagination"]["total"], expected, "{query}: {page}");
    }
    let (_, last) = get(
        &app,
        &format!("/inventory/items?propertyId={villa}&limit=1&page=3"),
        "viewer",
    )
    .await;
    assert_eq!(last["data"][0]["name"], "King sheet");
    let (_, beyond) = get(&app, "/inventory/items?page=9", "viewer").await;
    assert_eq!(beyond["data"], json!([]));
    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("page=0", "page"),
        ("lowStock=maybe", "lowStock"),
        ("propertyId=x", "propertyId"),
        ("condition=SHINY", "condition"),
        ("category=NOPE", "category"),
    ] {
        let (status, body) = get(&app, &format!("/inventory/items?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(bad_fields(&body), [field], "{query}");
    }

    // Archiving: out of lists and reads, movements kept.
    let towel_id = towel["id"].as_str().unwrap();
    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("/inventory/items/{towel_id}"),
        "staff",
        None,
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("/inventory/items/{towel_id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, body) = get(&app, &format!("/inventory/items/{towel_id}"), "viewer").await;
    assert_eq!(status, 404, "{body}");
    assert_inventory_error(&body, "NOT_FOUND");
    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("/inventory/items/{towel_id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (_, page) = get(
        &app,
        &format!("/inventory/items?propertyId={villa}"),
        "viewer",
    )
    .await;
    assert_eq!(page["pagination"]["total"], 2);
    let (_, moves) = get(
        &app,
        &format!("/inventory/movements?itemId={towel_id}"),
        "viewer",
    )
    .await;
    assert_eq!(moves["pagination"]["total"], 1, "{moves}");
    assert_ledger_holds(&pool).await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn categories_and_locations_are_trees(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let (status, page) = get(&app, "/inventory/categories?limit=100", "viewer").await;
    assert_eq!(status, 200, "{page}");
    let codes: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    for shipped in [
        "LINENS",
        "TOWELS",
        "BEDDING",
        "KITCHENWARE",
        "TABLEWARE",
        "CLEANING_SUPPLIES",
        "TOILETRIES",
        "GUEST_AMENITIES",
        "FURNITURE",
        "ELECTRONICS",
        "APPLIANCES",
        "POOL_SUPPLIES",
        "GARDEN_SUPPLIES",
        "MAINTENANCE_PARTS",
        "SAFETY_EQUIPMENT",
        "OTHER",
    ] {
        assert!(codes.contains(&shipped), "{shipped} missing");
    }
    let linens = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "LINENS")
        .unwrap()["id"]
        .clone();

    let (status, body) = post(
        &app,
        "/inventory/categories",
        "manager",
        json!({"name": "  "}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["name"]);
    let (status, body) = post(
        &app,
        "/inventory/categories",
        "manager",
        json!({"name": "x", "code": "bad code"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["code"]);
    let (status, body) = post(
        &app,
        "/inventory/categories",
        "manager",
        json!({"name": "x", "parentId": Uuid::now_v7()}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["parentId"]);
    let (status, body) = post(
        &app,
        "/inventory/categories",
        "staff",
        json!({"name": "Bed sheets"}),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let (status, sheets) = post(
        &app,
        "/inventory/categories",
        "manager",
        json!({"name": "Bed sheets (king)", "parentId": linens, "description": "King size"}),
    )
    .await;
    assert_eq!(status, 201, "{sheets}");
    assert_eq!(sheets["code"], "BED_SHEETS_KING");
    assert_eq!(sheets["parentId"], linens);
    assert_eq!(sheets["path"], "Linens / Bed sheets (king)");
    assert_eq!(sheets["builtin"], false);
    let (status, body) = post(
        &app,
        "/inventory/categories",
        "manager",
        json!({"name": "Bed sheets king"}),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_inventory_error(&body, "DUPLICATE_CODE");
    let (status, one) = get(
        &app,
        &format!("/inventory/categories/{}", sheets["id"].as_str().unwrap()),
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["code"], "BED_SHEETS_KING");
    let (status, children) = get(
        &app,
        &format!(
            "/inventory/categories?parentId={}",
            linens.as_str().unwrap()
        ),
        "viewer",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(children["pagination"]["total"], 1);
    let (status, _) = get(
        &app,
        &format!("/inventory/categories/{}", Uuid::now_v7()),
        "viewer",
    )
    .await;
    assert_eq!(status, 404);

    // Locations: a tree inside one property, each with its path.
    let villa = create_villa(&app, "Villa Sunset").await;
    let other = create_villa(&app, "Villa Moon").await;
    let (status, body) = post(
        &app,
        "/inventory/locations",
        "manager",
        json!({"name": "", "type": "CELLAR", "propertyId": villa, "parentId": "x"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let mut fields = bad_fields(&body);
    fields.sort();
    assert_eq!(fields, ["name", "parentId", "type"]);
    let (status, body) = post(
        &app,
        "/inventory/locations",
        "manager",
        json!({"name": "House", "type": "BUILDING", "propertyId": Uuid::now_v7()}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, house) = post(
        &app,
        "/inventory/locations",
        "manager",
        json!({"name": "Main house", "type": "building", "propertyId": villa}),
    )
    .await;
    assert_eq!(status, 201, "{house}");
    let house_id = house["id"].as_str().unwrap();
    let (status, cupboard) = post(
        &app,
        "/inventory/locations",
        "manager",
        json!({"name": "Linen cupboard", "type": "CUPBOARD", "propertyId": villa, "parentId": house_id,
               "description": "Upstairs landing"}),
    )
    .await;
    assert_eq!(status, 201, "{cupboard}");
    assert_eq!(
        cupboard["path"],
        "Villa Sunset / Main house / Linen cupboard"
    );
    assert_eq!(cupboard["parentId"], house["id"]);
    let (status, body) = post(
        &app,
        "/inventory/locations",
        "manager",
        json!({"name": "Shed", "type": "STORAGE", "propertyId": other, "parentId": house_id}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["parentId"]);
    let (status, body) = post(
        &app,
        "/inventory/locations",
        "staff",
        json!({"name": "Shed", "type": "STORAGE", "propertyId": other}),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    location(&app, other, "Shed", None).await;
    for (query, total) in [
        (format!("propertyId={villa}"), 2),
        (format!("parentId={house_id}"), 1),
        ("type=CUPBOARD".to_owned(), 1),
        (String::new(), 3),
    ] {
        let (status, page) = get(&app, &format!("/inventory/locations?{query}"), "viewer").await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["pagination"]["total"], total, "{query}: {page}");
    }
    let (_, page) = get(
        &app,
        &format!("/inventory/locations?propertyId={villa}"),
        "viewer",
    )
    .await;
    assert_eq!(page["data"][0]["path"], "Villa Sunset / Main house");
    assert_eq!(
        page["data"][1]["path"],
        "Villa Sunset / Main house / Linen cupboard"
    );
    let (status, body) = get(&app, "/inventory/locations?type=CELLAR", "viewer").await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["type"]);
    let (status, one) = get(&app, &format!("/inventory/locations/{house_id}"), "viewer").await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["path"], "Villa Sunset / Main house");

    // Items filed under a sub-category are found under its parent.
    let cupboard_id = cupboard["id"].as_str().unwrap();
    item(
        &app,
        villa,
        cupboard_id,
        "KS-1",
        json!({"category": "BED_SHEETS_KING"}),
    )
    .await;
    item(
        &app,
        villa,
        cupboard_id,
        "TW-1",
        json!({"category": "TOWELS"}),
    )
    .await;
    let (_, page) = get(&app, "/inventory/items?category=LINENS", "viewer").await;
    assert_eq!(page["pagination"]["total"], 1, "{page}");
    assert_eq!(page["data"][0]["sku"], "KS-1");

    // The villas are the properties.
    let (status, page) = get(&app, "/inventory/properties", "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["pagination"]["total"], 2);
    assert_eq!(page["data"][1]["name"], "Villa Sunset");
    assert_eq!(page["data"][1]["locationCount"], 2);
    assert_eq!(page["data"][1]["itemCount"], 2);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn movements_keep_the_ledger_and_refuse_what_would_go_below_zero(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Ledger").await;
    let store = location(&app, villa, "Store", None).await;
    let chlorine = item(
        &app,
        villa,
        &store,
        "CHL",
        json!({"unit": "KG", "quantity": 10, "unitCost": 100, "category": "POOL_SUPPLIES"}),
    )
    .await;
    let id = chlorine["id"].as_str().unwrap().to_owned();

    // Checks, every bad field at once.
    let (status, body) = post(
        &app,
        "/inventory/movements",
        "staff",
        json!({"itemId": "x", "type": "STEAL", "quantity": "lots", "referenceType": "INVOICE", "notes": 5}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let mut fields = bad_fields(&body);
    fields.sort();
    assert_eq!(
        fields,
        ["itemId", "notes", "quantity", "referenceType", "type"]
    );
    for (body, field) in [
        (
            json!({"itemId": id, "type": "INITIAL", "quantity": 1}),
            "type",
        ),
        (
            json!({"itemId": id, "type": "TRANSFER_IN", "quantity": 1}),
            "type",
        ),
        (
            json!({"itemId": id, "type": "USE", "quantity": 0}),
            "quantity",
        ),
        (
            json!({"itemId": id, "type": "USE", "quantity": -1}),
            "quantity",
        ),
        (
            json!({"itemId": id, "type": "USE", "quantity": 0.0001}),
            "quantity",
        ),
        (
            json!({"itemId": id, "type": "ADJUSTMENT", "quantity": 0}),
            "quantity",
        ),
        (
            json!({"itemId": id, "type": "USE", "quantity": 1, "unitCost": 5}),
            "unitCost",
        ),
        (
            json!({"itemId": id, "type": "USE", "quantity": 1, "referenceType": "WORK_ORDER", "referenceId": "WO-1"}),
            "referenceId",
        ),
        (
            json!({"itemId": id, "type": "USE", "quantity": 1, "referenceType": "WORK_ORDER", "referenceId": Uuid::now_v7()}),
            "referenceId",
        ),
    ] {
        let (status, answer) = post(&app, "/inventory/movements", "staff", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(bad_fields(&answer), [field], "{body}");
    }
    let (status, body) = movement(&app, &Uuid::now_v7().to_string(), "USE", json!(1)).await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = post(
        &app,
        "/inventory/movements",
        "viewer",
        json!({"itemId": id, "type": "USE", "quantity": 1}),
    )
    .await;
    assert_eq!(status, 403);

    // A purchase at another price: the unit cost becomes the weighted average.
    let (status, bought) = post(
        &app,
        "/inventory/movements",
        "staff",
        json!({"itemId": id, "type": "PURCHASE", "quantity": 30, "unitCost": 120, "referenceType": "PURCHASE_ORDER",
               "referenceId": "PO-77", "notes": "monthly order"}),
    )
    .await;
    assert_eq!(status, 201, "{bought}");
    assert_eq!(bought["type"], "PURCHASE");
    assert_eq!(dec(&bought["quantity"]), Decimal::from(30));
    assert_eq!(dec(&bought["balanceAfter"]), Decimal::from(40));
    assert_eq!(dec(&bought["unitCost"]), Decimal::from(120));
    assert_eq!(bought["referenceId"], "PO-77");
    assert_eq!(bought["createdBy"], "user-1");
    let (_, detail) = get(&app, &format!("/inventory/items/{id}"), "viewer").await;
    assert_eq!(dec(&detail["unitCost"]), Decimal::from(115)); // (10×100 + 30×120) / 40

    // Out, with a work order reference; an adjustment both ways.
    let (status, wo) = post(
        &app,
        "/maintenance/work-orders",
        "staff",
        json!({"title": "Shock the pool", "villaId": villa, "category": "POOL", "priority": "HIGH"}),
    )
    .await;
    assert_eq!(status, 201, "{wo}");
    let (status, used) = post(
        &app,
        "/inventory/movements",
        "staff",
        json!({"itemId": id, "type": "USE", "quantity": 2.5, "referenceType": "WORK_ORDER", "referenceId": wo["id"]}),
    )
    .await;
    assert_eq!(status, 201, "{used}");
    assert_eq!(used["referenceType"], "WORK_ORDER");
    assert_eq!(used["referenceId"], wo["id"]);
    assert_eq!(dec(&used["quantity"]), Decimal::new(25, 1));
    assert_eq!(dec(&used["change"]), Decimal::new(-25, 1));
    assert_eq!(dec(&used["balanceAfter"]), Decimal::new(375, 1));
    let (status, adjusted) = movement(&app, &id, "ADJUSTMENT", json!(-0.5)).await;
    assert_eq!(status, 201, "{adjusted}");
    assert_eq!(dec(&adjusted["quantity"]), Decimal::new(-5, 1));
    assert_eq!(dec(&adjusted["balanceAfter"]), Decimal::from(37));

    // Too much: refused with the figures, nothing written.
    let (status, refused) = movement(&app, &id, "LOSS", json!(37.001)).await;
    assert_eq!(status, 409, "{refused}");
    assert_inventory_error(&refused, "INSUFFICIENT_STOCK");
    assert_eq!(
        dec(&refused["error"]["details"]["available"]),
        Decimal::from(37)
    );
    assert_eq!(
        dec(&refused["error"]["details"]["requested"]),
        Decimal::new(37001, 3)
    );
    let (status, refused) = movement(&app, &id, "ADJUSTMENT", json!(-38)).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(quantity_of(&app, &id).await, Decimal::from(37));
    let (status, damaged) = movement(&app, &id, "DAMAGE", json!(37)).await;
    assert_eq!(status, 201, "{damaged}");
    let (status, returned) = movement(&app, &id, "RETURN", json!(1)).await;
    assert_eq!(status, 201, "{returned}");

    // The list: newest first, filters, paging.
    let (status, page) = get(&app, &format!("/inventory/movements?itemId={id}"), "viewer").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["pagination"]["total"], 6);
    let types: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "RETURN",
            "DAMAGE",
            "ADJUSTMENT",
            "USE",
            "PURCHASE",
            "INITIAL"
        ],
        "{page}"
    );
    assert_eq!(page["data"][0]["item"]["sku"], "CHL");
    // The list answers the ids its filters name.
    assert_eq!(page["data"][0]["itemId"], id);
    assert_eq!(page["data"][0]["propertyId"], villa.to_string());
    assert_eq!(page["data"][0]["property"]["id"], villa.to_string());
    let today = chrono::Utc::now().date_naive();
    for (query, total) in [
        ("type=USE".to_owned(), 1),
        (format!("propertyId={villa}"), 6),
        (format!("startDate={today}&endDate={today}"), 6),
        (format!("startDate={}", today + chrono::Days::new(1)), 0),
        ("limit=2&page=4".to_owned(), 6),
    ] {
        let (status, page) = get(&app, &format!("/inventory/movements?{query}"), "viewer").await;
        assert_eq!(status, 200, "{query}: {page}");
        assert_eq!(page["pagination"]["total"], total, "{query}");
    }
    for (query, field) in [
        ("type=THEFT", "type"),
        ("startDate=yesterday", "startDate"),
        ("startDate=2026-05-02&endDate=2026-05-01", "endDate"),
    ] {
        let (status, body) = get(&app, &format!("/inventory/movements?{query}"), "viewer").await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(bad_fields(&body), [field]);
    }
    // Exactly the five movements answered 201 (the refused ones left nothing), and the quantity
    // they add up to from the 10 kg it started with.
    assert_ledger_is(
        &app,
        &id,
        Decimal::from(10),
        &[bought, used, adjusted, damaged, returned],
        Decimal::ZERO,
    )
    .await;
    assert_ledger_holds(&pool).await;

    // Past the largest quantity the ledger keeps (after years of purchases): a 400, not a 500.
    let (status, body) = movement(&app, &id, "PURCHASE", json!(10_000_000_001_u64)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["quantity"]);
    sqlx::query("UPDATE inventory_items SET quantity = 999999999990 WHERE id = $1::uuid")
        .bind(&id)
        .execute(&pool)
        .await
        .unwrap();
    let (status, body) = movement(&app, &id, "PURCHASE", json!(20)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["quantity"]);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn fifty_simultaneous_withdrawals_from_twenty_leave_zero(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Rush").await;
    let store = location(&app, villa, "Store", None).await;
    let towels = item(&app, villa, &store, "TWL", json!({"quantity": 20})).await;
    let id = towels["id"].as_str().unwrap().to_owned();
    let attempts = (0..50).map(|_| {
        let app = &app;
        let id = id.clone();
        async move { movement(app, &id, "USE", json!(1)).await }
    });
    let answers = futures::future::join_all(attempts).await;
    let mut counts: HashMap<u16, usize> = HashMap::new();
    for (status, body) in &answers {
        *counts.entry(*status).or_default() += 1;
        if *status == 409 {
            assert_inventory_error(body, "INSUFFICIENT_STOCK");
            assert_eq!(
                dec(&body["error"]["details"]["available"]),
                Decimal::ZERO,
                "{body}"
            );
        }
    }
    assert_eq!(counts.get(&201), Some(&20), "{counts:?}");
    assert_eq!(counts.get(&409), Some(&30), "{counts:?}");
    // Each success left its own balance: 19 down to 0, once each.
    let succeeded: Vec<Value> = answers
        .into_iter()
        .filter(|(s, _)| *s == 201)
        .map(|(_, b)| b)
        .collect();
    let mut balances: Vec<Decimal> = succeeded.iter().map(|b| dec(&b["balanceAfter"])).collect();
    balances.sort();
    assert_eq!(balances, (0..20).map(Decimal::from).collect::<Vec<_>>());
    // The ledger holds exactly the twenty answered 201, none of the thirty refused, and the
    // quantity is what they add up to.
    assert_ledger_is(&app, &id, Decimal::from(20), &succeeded, Decimal::ZERO).await;
    assert_ledger_holds(&pool).await;
}

async fn transfer(app: &TestApp, source: &str, destination: &str, lines: Value) -> (u16, Value) {
    post(
        app,
        "/inventory/transfers",
        "staff",
        json!({"sourceLocationId": source, "destinationLocationId": destination, "items": lines,
               "notes": "weekly linen run"}),
    )
    .await
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn transfers_are_in_transit_until_received_or_cancelled(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let sunset = create_villa(&app, "Villa Sunset").await;
    let moon = create_villa(&app, "Villa Moon").await;
    let warehouse = location(&app, sunset, "Warehouse", None).await;
    let cupboard = location(&app, moon, "Linen cupboard", None).await;
    let sheets = item(
        &app,
        sunset,
        &warehouse,
        "SHEET",
        json!({"quantity": 50, "unitCost": 200, "category": "LINENS"}),
    )
    .await;
    let towels = item(
        &app,
        sunset,
        &warehouse,
        "TOWEL",
        json!({"quantity": 10, "unitCost": 80, "category": "TOWELS"}),
    )
    .await;
    // Moon already keeps towels under that sku, not sheets.
    let moon_towels = item(
        &app,
        moon,
        &cupboard,
        "TOWEL",
        json!({"quantity": 2, "unitCost": 80, "category": "TOWELS"}),
    )
    .await;
    let (sheet_id, towel_id) = (
        sheets["id"].as_str().unwrap(),
        towels["id"].as_str().unwrap(),
    );

    // Checks.
    let (status, body) = post(
        &app,
        "/inventory/transfers",
        "staff",
        json!({"sourceLocationId": warehouse, "destinationLocationId": warehouse,
               "items": [{"itemId": sheet_id, "quantity": 0}, {"itemId": sheet_id, "quantity": 1}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let mut fields = bad_fields(&body);
    fields.sort();
    assert_eq!(
        fields,
        [
            "destinationLocationId",
            "items[0].quantity",
            "items[1].itemId"
        ]
    );
    let (status, body) = transfer(&app, &warehouse, &cupboard, json!([])).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["items"]);
    let (status, body) = transfer(
        &app,
        &cupboard,
        &warehouse,
        json!([{"itemId": sheet_id, "quantity": 1}]),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(bad_fields(&body), ["items[0].itemId"]);
    let (status, body) = transfer(
        &app,
        &warehouse,
        &Uuid::now_v7().to_string(),
        json!([{"itemId": sheet_id, "quantity": 1}]),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = post(&app, "/inventory/transfers", "viewer", json!({})).await;
    assert_eq!(status, 403);

    // All or nothing: one short line and nothing moves.
    let (status, body) = transfer(
        &app,
        &warehouse,
        &cupboard,
        json!([{"itemId": sheet_id, "quantity": 20}, {"itemId": towel_id, "quantity": 11}]),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_inventory_error(&body, "INSUFFICIENT_STOCK");
    assert_eq!(body["error"]["details"]["itemId"], towel_id);
    assert_eq!(quantity_of(&app, sheet_id).await, Decimal::from(50));
    let (_, none) = get(&app, "/inventory/transfers", "viewer").await;
    assert_eq!(none["pagination"]["total"], 0);

    // Sent: out of the source at once, in transit.
    let (status, sent) = transfer(
        &app,
        &warehouse,
        &cupboard,
        json!([{"itemId": sheet_id, "quantity": 20}, {"itemId": towel_id, "quantity": 6}]),
    )
    .await;
    assert_eq!(status, 201, "{sent}");
    assert_eq!(sent["status"], "IN_TRANSIT");
    // The ids the request named, under the same names, beside the locations they name.
    assert_eq!(sent["sourceLocationId"], warehouse);
    assert_eq!(sent["destinationLocationId"], cupboard);
    assert_eq!(sent["sourceLocation"]["id"], warehouse);
    assert_eq!(sent["destinationLocation"]["id"], cupboard);
    assert_eq!(sent["items"][0]["itemId"], sheet_id);
    assert_eq!(sent["sourceLocation"]["path"], "Villa Sunset / Warehouse");
    assert_eq!(
        sent["destinationLocation"]["path"],
        "Villa Moon / Linen cupboard"
    );
    assert_eq!(quantity_of(&app, sheet_id).await, Decimal::from(30));
    assert_eq!(quantity_of(&app, towel_id).await, Decimal::from(4));
    let id = sent["id"].as_str().unwrap().to_owned();
    let (_, stock) = get(
        &app,
        &format!("/inventory/reports/stock?propertyId={moon}"),
        "viewer",
    )
    .await;
    let linens = stock["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["category"] == "LINENS")
        .unwrap();
    assert_eq!(
        dec(&linens["inTransitByUnit"]["EACH"]),
        Decimal::from(20),
        "{stock}"
    );

    // A receipt names every line once, each at most what was sent.
    let receive = format!("/inventory/transfers/{id}/receive");
    for (body, field) in [
        (
            json!({"items": [{"itemId": sheet_id, "receivedQuantity": 21}, {"itemId": towel_id, "receivedQuantity": 6}]}),
            "items[0].receivedQuantity",
        ),
        (
            json!({"items": [{"itemId": sheet_id, "receivedQuantity": 20}]}),
            "items",
        ),
        (
            json!({"items": [{"itemId": sheet_id, "receivedQuantity": 20}, {"itemId": Uuid::now_v7(), "receivedQuantity": 1}, {"itemId": towel_id, "receivedQuantity": 6}]}),
            "items[1].itemId",
        ),
    ] {
        let (status, answer) = post(&app, &receive, "staff", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(bad_fields(&answer), [field], "{body}");
    }
    // 18 of 20 sheets arrive (a new stock item at the cupboard), all 6 towels (into the towels
    // the cupboard already keeps).
    let (status, received) = post(
        &app,
        &receive,
        "staff",
        json!({"items": [{"itemId": sheet_id, "receivedQuantity": 18, "notes": "two torn"},
                         {"itemId": towel_id, "receivedQuantity": 6}]}),
    )
    .await;
    assert_eq!(status, 200, "{received}");
    assert_eq!(received["status"], "RECEIVED_WITH_DISCREPANCY");
    let lines = received["items"].as_array().unwrap();
    assert_eq!(dec(&lines[0]["sent"]), Decimal::from(20));
    assert_eq!(dec(&lines[0]["received"]), Decimal::from(18));
    assert_eq!(dec(&lines[0]["discrepancy"]), Decimal::from(2));
    assert_eq!(dec(&lines[1]["discrepancy"]), Decimal::ZERO);
    assert_eq!(lines[1]["destinationItemId"], moon_towels["id"]);
    let new_sheets = lines[0]["destinationItemId"].as_str().unwrap();
    let (_, created) = get(&app, &format!("/inventory/items/{new_sheets}"), "viewer").await;
    assert_eq!(created["sku"], "SHEET");
    assert_eq!(created["name"], sheets["name"]);
    assert_eq!(created["propertyId"], moon.to_string());
    assert_eq!(dec(&created["quantity"]), Decimal::from(18));
    assert_eq!(dec(&created["unitCost"]), Decimal::from(200));
    assert_eq!(
        quantity_of(&app, moon_towels["id"].as_str().unwrap()).await,
        Decimal::from(8)
    );
    let (status, again) = post(&app, &receive, "staff", json!({"items": []})).await;
    assert_eq!(status, 409, "{again}");
    assert_inventory_error(&again, "INVALID_TRANSFER_STATE");

    // Received in full: RECEIVED.
    let (_, full) = transfer(
        &app,
        &warehouse,
        &cupboard,
        json!([{"itemId": towel_id, "quantity": 1}]),
    )
    .await;
    let (status, full) = post(
        &app,
        &format!(
            "/inventory/transfers/{}/receive",
            full["id"].as_str().unwrap()
        ),
        "staff",
        json!({"items": [{"itemId": towel_id, "receivedQuantity": 1}]}),
    )
    .await;
    assert_eq!(status, 200, "{full}");
    assert_eq!(full["status"], "RECEIVED");

    // Cancelled: the stock goes back to the source.
    let (_, doomed) = transfer(
        &app,
        &warehouse,
        &cupboard,
        json!([{"itemId": sheet_id, "quantity": 5}]),
    )
    .await;
    let doomed_id = doomed["id"].as_str().unwrap();
    assert_eq!(quantity_of(&app, sheet_id).await, Decimal::from(25));
    let (status, cancelled) = post(
        &app,
        &format!("/inventory/transfers/{doomed_id}/cancel"),
        "staff",
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "CANCELLED");
    assert_eq!(quantity_of(&app, sheet_id).await, Decimal::from(30));
    for action in ["cancel", "receive"] {
        let (status, body) = post(
            &app,
            &format!("/inventory/transfers/{doomed_id}/{action}"),
            "staff",
            json!({"items": []}),
        )
        .await;
        assert_eq!(status, 409, "{action}: {body}");
        assert_inventory_error(&body, "INVALID_TRANSFER_STATE");
    }
    let (status, _) = post(
        &app,
        &format!("/inventory/transfers/{}/cancel", Uuid::now_v7()),
        "staff",
        json!({}),
    )
    .await;
    assert_eq!(status, 404);

    // Lists and reads.
    let (status, one) = get(&app, &format!("/inventory/transfers/{id}"), "viewer").await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["status"], "RECEIVED_WITH_DISCREPANCY");
    assert_eq!(one["sourceLocationId"], warehouse);
    assert_eq!(one["destinationLocationId"], cupboard);
    let (_, page) = get(&app, "/inventory/transfers?status=CANCELLED", "viewer").await;
    assert_eq!(page["data"][0]["id"], doomed_id);
    assert_eq!(page["data"][0]["sourceLocationId"], warehouse);
    assert_eq!(page["data"][0]["destinationLocationId"], cupboard);
    for (query, total) in [
        (String::new(), 3),
        ("status=CANCELLED".to_owned(), 1),
        (format!("locationId={cupboard}"), 3),
        ("limit=1&page=2".to_owned(), 3),
    ] {
        let (status, page) = get(&app, &format!("/inventory/transfers?{query}"), "viewer").await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["pagination"]["total"], total, "{query}");
    }
    let (status, body) = get(&app, "/inventory/transfers?status=LOST", "viewer").await;
    assert_eq!(status, 400);
    assert_eq!(bad_fields(&body), ["status"]);
    assert_ledger_holds(&pool).await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_ledger_holds_after_a_random_mix_of_movements_and_transfers(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Mix").await;
    let a = location(&app, villa, "A", None).await;
    let b = location(&app, villa, "B", None).await;
    let mut items = Vec::new();
    for n in 0..4 {
        let created = item(
            &app,
            villa,
            &a,
            &format!("MIX-{n}"),
            json!({"quantity": 10, "unit": "KG"}),
        )
        .await;
        items.push(created["id"].as_str().unwrap().to_owned());
    }
    // A fixed seed: the same mix every run.
    let mut seed: u64 = 0x5eed;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut outcomes: HashMap<u16, usize> = HashMap::new();
    let mut in_transit = Vec::new();
    // What the answers say: per item, the movements answered 201 and the net change of the
    // answered transfers.
    let mut posted: HashMap<String, Vec<Value>> = HashMap::new();
    let mut transferred: HashMap<String, Decimal> = HashMap::new();
    for round in 0..12 {
        let mut batch = Vec::new();
        for _ in 0..8 {
            let item = items[usize::try_from(next(4)).unwrap()].clone();
            let quantity =
                json!(Decimal::new(i64::try_from(next(4000)).unwrap() + 1, 3).to_string());
            let kind = ["PURCHASE", "USE", "LOSS", "ADJUSTMENT", "RETURN", "DAMAGE"]
                [usize::try_from(next(6)).unwrap()];
            let quantity = if kind == "ADJUSTMENT" && next(2) == 0 {
                json!(format!("-{}", quantity.as_str().unwrap()))
            } else {
                quantity
            };
            batch.push((item, kind, quantity));
        }
        let app_ref = &app;
        let moves =
            futures::future::join_all(batch.into_iter().map(|(item, kind, quantity)| async move {
                movement(app_ref, &item, kind, quantity).await
            }));
        let lines = json!([{"itemId": items[round % 4], "quantity": "1.5"}]);
        let (moves, sent) = tokio::join!(moves, transfer(&app, &a, &b, lines));
        for (status, body) in moves {
            assert!(status == 201 || status == 409, "{status}: {body}");
            *outcomes.entry(status).or_default() += 1;
            if status == 201 {
                let item = body["itemId"].as_str().unwrap().to_owned();
                posted.entry(item).or_default().push(body);
            }
        }
        assert!(sent.0 == 201 || sent.0 == 409, "{sent:?}");
        if sent.0 == 201 {
            let line = &sent.1["items"][0];
            *transferred
                .entry(line["itemId"].as_str().unwrap().to_owned())
                .or_default() -= dec(&line["sent"]);
            in_transit.push(sent.1["id"].as_str().unwrap().to_owned());
        }
        assert_ledger_holds(&pool).await;
    }
    // Half received short, half cancelled.
    for (n, id) in in_transit.iter().enumerate() {
        let (_, t) = get(&app, &format!("/inventory/transfers/{id}"), "viewer").await;
        let item_id = t["items"][0]["itemId"].clone();
        let (status, body) = if n % 2 == 0 {
            post(
                &app,
                &format!("/inventory/transfers/{id}/receive"),
                "staff",
                json!({"items": [{"itemId": item_id, "receivedQuantity": 1.25}]}),
            )
            .await
        } else {
            post(
                &app,
                &format!("/inventory/transfers/{id}/cancel"),
                "staff",
                json!({}),
            )
            .await
        };
        assert_eq!(status, 200, "{body}");
        // Received: what arrived went into the item with the sku at B; cancelled: all of it back.
        let line = &body["items"][0];
        let (into, change) = if n % 2 == 0 {
            (&line["destinationItemId"], dec(&line["received"]))
        } else {
            (&line["itemId"], dec(&line["sent"]))
        };
        *transferred
            .entry(into.as_str().unwrap().to_owned())
            .or_default() += change;
    }
    assert!(
        outcomes.get(&201).copied().unwrap_or(0) > 20,
        "{outcomes:?}"
    );
    assert_ledger_holds(&pool).await;
    // Each item, at A and at B, holds what the answers add up to, and its ledger exactly the
    // movements answered 201.
    for item in &items {
        let answered = posted.remove(item).unwrap_or_default();
        let moved = transferred.remove(item).unwrap_or_default();
        assert_ledger_is(&app, item, Decimal::from(10), &answered, moved).await;
    }
    assert!(
        posted.is_empty(),
        "movements answered for unknown items: {posted:?}"
    );
    for (item, moved) in &transferred {
        assert_ledger_is(&app, item, Decimal::ZERO, &[], *moved).await;
    }
}
