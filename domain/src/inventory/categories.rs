//! Item categories: a tree whose top level ships with the platform. Items name a category by its
//! code; filtering items by a category includes the categories under it.

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Problems, Result};

pub const CREATE_FIELDS: &[FieldSpec] = &[
    required("name", "name", Kind::Text(100)),
    field("parentId", "parent_id", Kind::Uuid),
    field("description", "description", Kind::Text(1000)),
    field("code", "code", Kind::Text(60)),
];

/// A code: upper-case letters, digits and `_`, 1 to 60 characters.
pub fn is_code(code: &str) -> bool {
    (1..=60).contains(&code.len())
        && code
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The code derived from a name: `Bed sheets (king)` → `BED_SHEETS_KING`.
pub fn code_from_name(name: &str) -> String {
    let mut code = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            code.push(c.to_ascii_uppercase());
        } else if !code.ends_with('_') && !code.is_empty() {
            code.push('_');
        }
    }
    let code: String = code.trim_end_matches('_').chars().take(60).collect();
    code.trim_end_matches('_').to_owned()
}

/// The code a new category gets: the one sent (upper-cased, checked), or one derived from the
/// name. A problem on `code` when neither makes a valid code.
pub fn code_of(patch: &Patch, problems: &mut Problems) -> Option<String> {
    match patch.columns.get("code").and_then(Value::as_str) {
        Some(sent) => {
            let code = sent.to_uppercase();
            if is_code(&code) {
                Some(code)
            } else {
                problems.push(
                    "code",
                    "invalid_format",
                    "upper-case letters, digits and _ only (1 to 60)",
                );
                None
            }
        }
        None => {
            let name = patch.columns.get("name").and_then(Value::as_str)?;
            let code = code_from_name(name);
            if code.is_empty() {
                problems.push(
                    "code",
                    "required",
                    "the name has no letters or digits to make a code from; send a code",
                );
                None
            } else {
                Some(code)
            }
        }
    }
}

/// Creates a category; a parent must exist (400 on `parentId`); a taken code is 409
/// `DUPLICATE_CODE`.
pub async fn create(conn: &mut PgConnection, patch: &Patch, code: &str) -> Result<Uuid> {
    if let Some(parent) = patch.uuid("parent_id") {
        let found: Option<bool> =
            sqlx::query_scalar("SELECT true FROM inventory_categories WHERE id = $1")
                .bind(parent)
                .fetch_optional(&mut *conn)
                .await?;
        if found.is_none() {
            return Err(Error::invalid(
                "parentId",
                "invalid_value",
                "no category has this id",
            ));
        }
    }
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO inventory_categories (id, code, name, parent_id, description)
         SELECT $1, $2, name, parent_id, description FROM jsonb_populate_record(NULL::inventory_categories, $3)",
    )
    .bind(id)
    .bind(code)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await
    .map_err(|err| {
        crate::on_refusal(err, crate::Refusal::Unique, || {
            Error::conflict(
                "DUPLICATE_CODE",
                format!("a category already has the code {code}"),
            )
        })
    })?;
    Ok(id)
}

macro_rules! category_view {
    () => {
        "jsonb_build_object('id', c.id, 'code', c.code, 'name', c.name, 'parentId', c.parent_id,
            'description', c.description, 'path', inventory_category_path(c.id), 'builtin', c.builtin,
            'itemCount', (SELECT count(*) FROM inventory_items i WHERE i.category = c.code AND i.archived_at IS NULL),
            'createdAt', c.created_at)"
    };
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        category_view!(),
        " FROM inventory_categories c WHERE c.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("category"))
}

/// A page of categories ordered by path (a parent just before its children), all of them or
/// those directly under `parent_id`.
pub async fn list(
    conn: &mut PgConnection,
    parent_id: Option<Uuid>,
    page: PageRequest,
) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM inventory_categories c",
        item: category_view!(),
        from: " FROM inventory_categories c",
        order: "inventory_category_path(c.id), c.id",
    };
    json_page(conn, &list, page, |sql| {
        if let Some(parent) = parent_id {
            sql.push(" WHERE c.parent_id = ").push_bind(parent);
        }
    })
    .await
}
