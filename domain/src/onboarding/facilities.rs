//! A villa's facilities checklist (wizard step 8): items with category, availability, quantity,
//! condition and an optional photo held in the database.

use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::record::members;
use crate::{Problems, Result};

pub const CONDITIONS: &[&str] = &["NEW", "EXCELLENT", "GOOD", "FAIR", "POOR", "DAMAGED"];
/// Largest facility photo, decoded.
pub const MAX_PHOTO_BYTES: usize = 10 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct FacilityItem {
    /// An existing item of the villa; sent without a photo it keeps its stored photo.
    pub id: Option<Uuid>,
    pub category: String,
    pub subcategory: Option<String>,
    pub item_name: String,
    pub is_available: bool,
    pub quantity: i32,
    pub condition: Option<String>,
    pub notes: Option<String>,
    /// Decoded and checked image bytes with their type.
    pub photo: Option<(Vec<u8>, &'static str)>,
}

/// Checks step 8's `facilities` array (each bad field reported as `facilities[i].field`).
pub fn parse_checklist(
    raw: Option<&Value>,
    prefix: &str,
    problems: &mut Problems,
) -> Option<Vec<FacilityItem>> {
    let name = format!("{prefix}facilities");
    let items = members::items(raw, &name, 1000, problems)?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let p = format!("{name}[{i}].");
        let Some(obj) = members::object(item, &name, i, problems) else {
            continue;
        };
        let before = problems.len();
        let id = members::id(obj, &p, problems);
        let category = members::text(obj, "category", &p, 100, problems);
        if category.is_none() && problems.len() == before {
            problems.push(format!("{p}category"), "required", "category is required");
        }
        let subcategory = members::text(obj, "subcategory", &p, 100, problems);
        let before_name = problems.len();
        let item_name = members::text(obj, "itemName", &p, 255, problems);
        if item_name.is_none() && problems.len() == before_name {
            problems.push(format!("{p}itemName"), "required", "itemName is required");
        }
        let is_available = members::flag(obj, "isAvailable", &p, true, problems);
        let quantity = match obj.get("quantity") {
            None | Some(Value::Null) => 1,
            Some(Value::Number(n)) => match n.as_i64().filter(|q| (0..=100_000).contains(q)) {
                Some(q) => q as i32,
                None => {
                    problems.push(
                        format!("{p}quantity"),
                        "out_of_range",
                        "must be a whole number from 0 to 100000",
                    );
                    0
                }
            },
            Some(_) => {
                problems.push(
                    format!("{p}quantity"),
                    "invalid_type",
                    "must be a whole number",
                );
                0
            }
        };
        let condition = members::text(obj, "condition", &p, 20, problems).map(|c| c.to_uppercase());
        if condition
            .as_deref()
            .is_some_and(|c| !CONDITIONS.contains(&c))
        {
            problems.push(
                format!("{p}condition"),
                "invalid_value",
                format!("must be one of {}", CONDITIONS.join(", ")),
            );
        }
        let notes = members::text(obj, "notes", &p, 2000, problems);
        let photo = match obj.get("photo").or_else(|| obj.get("photoData")) {
            None | Some(Value::Null) => None,
            Some(Value::String(b64)) => match crate::uploads::decode_base64(b64) {
                None => {
                    problems.push(format!("{p}photo"), "invalid_format", "must be base64");
                    None
                }
                Some(bytes) if bytes.len() > MAX_PHOTO_BYTES => {
                    problems.push(format!("{p}photo"), "too_large", "at most 10 MB");
                    None
                }
                Some(bytes) => match crate::media::inspect(&bytes) {
                    Some(info) => Some((bytes, info.mime)),
                    None => {
                        problems.push(
                            format!("{p}photo"),
                            "invalid_image",
                            "must be a JPEG, PNG, WebP or GIF image",
                        );
                        None
                    }
                },
            },
            Some(_) => {
                problems.push(
                    format!("{p}photo"),
                    "invalid_type",
                    "must be a base64 string",
                );
                None
            }
        };
        if problems.len() > before {
            continue;
        }
        let (Some(category), Some(item_name)) = (category, item_name) else {
            continue;
        };
        out.push(FacilityItem {
            id,
            category,
            subcategory,
            item_name,
            is_available,
            quantity,
            condition,
            notes,
            photo,
        });
    }
    Some(out)
}

/// A facility item as [`of_villa`] shows it (the OpenAPI description of that JSON).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the JSON built in SQL
pub struct FacilityView {
    id: Uuid,
    villa_id: Uuid,
    category: String,
    subcategory: Option<String>,
    item_name: String,
    is_available: bool,
    quantity: i32,
    condition: Option<String>,
    notes: Option<String>,
    /// `/api/facilities/photo/{id}` when the item has a photo.
    photo_url: Option<String>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

/// The JSON Schema of one item of step 8's `facilities`, as [`parse_checklist`] checks it.
pub fn checklist_item_schema() -> Value {
    let conditions: Vec<Value> = CONDITIONS
        .iter()
        .map(|c| Value::from(*c))
        .chain([Value::Null])
        .collect();
    serde_json::json!({
        "type": "object",
        "required": ["category", "itemName"],
        "properties": {
            "id": {"type": ["string", "null"], "format": "uuid", "description": "A stored item of the villa; sent without a photo it keeps its photo."},
            "category": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": "\\S"},
            "subcategory": {"type": ["string", "null"], "maxLength": 100},
            "itemName": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "\\S"},
            "isAvailable": {"type": ["boolean", "null"], "description": "Default true."},
            "quantity": {"type": ["integer", "null"], "minimum": 0, "maximum": 100_000, "description": "Default 1."},
            "condition": {"type": ["string", "null"], "enum": conditions, "description": "Accepted in any letter case."},
            "notes": {"type": ["string", "null"], "maxLength": 2000},
            "photo": {"type": ["string", "null"], "contentEncoding": "base64", "description": "A JPEG, PNG, WebP or GIF image, base64 (a `data:` URL prefix is accepted), at most 10 MB decoded."},
        },
    })
}

/// Makes `items` the villa's whole checklist.
pub async fn replace_checklist(
    conn: &mut PgConnection,
    villa_id: Uuid,
    items: &[FacilityItem],
) -> Result<()> {
    let old: Vec<(Uuid, Option<Vec<u8>>, Option<String>)> = sqlx::query_as(
        "DELETE FROM facilities WHERE villa_id = $1 RETURNING id, photo_data, photo_mime",
    )
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?;
    for item in items {
        let kept = item.id.and_then(|id| old.iter().find(|(o, _, _)| *o == id));
        let (photo, mime) = match (&item.photo, kept) {
            (Some((bytes, mime)), _) => (Some(bytes.clone()), Some((*mime).to_owned())),
            (None, Some((_, bytes, mime))) => (bytes.clone(), mime.clone()),
            (None, None) => (None, None),
        };
        sqlx::query(
            "INSERT INTO facilities (id, villa_id, category, subcategory, item_name, is_available, quantity, condition, notes, photo_data, photo_mime)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(kept.map_or_else(Uuid::now_v7, |k| k.0))
        .bind(villa_id)
        .bind(&item.category)
        .bind(&item.subcategory)
        .bind(&item.item_name)
        .bind(item.is_available)
        .bind(item.quantity)
        .bind(&item.condition)
        .bind(&item.notes)
        .bind(photo)
        .bind(mime)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The villa's checklist as the API shows it; `photoUrl` is the photo route when there is one.
pub async fn of_villa(conn: &mut PgConnection, villa_id: Uuid) -> Result<Vec<Value>> {
    Ok(sqlx::query_scalar(
        "SELECT jsonb_build_object('id', id, 'villaId', villa_id, 'category', category, 'subcategory', subcategory,
                'itemName', item_name, 'isAvailable', is_available, 'quantity', quantity, 'condition', condition,
                'notes', notes,
                'photoUrl', CASE WHEN photo_data IS NULL THEN NULL ELSE '/api/facilities/photo/' || id END,
                'updatedAt', updated_at)
         FROM facilities WHERE villa_id = $1 ORDER BY category, subcategory NULLS FIRST, item_name, id",
    )
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// A facility's photo bytes and type.
pub async fn photo(pool: &PgPool, id: Uuid) -> Result<Option<(Vec<u8>, String)>> {
    let row: Option<(Option<Vec<u8>>, Option<String>)> =
        sqlx::query_as("SELECT photo_data, photo_mime FROM facilities WHERE id = $1")
            .bind(id)
            .fetch_optional(pool)
            .await?;
    Ok(row.and_then(|(d, m)| Some((d?, m.unwrap_or_else(|| "application/octet-stream".into())))))
}
