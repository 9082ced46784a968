//! Locations of a property: a tree (a building, its floors, a room, a cupboard in it), each shown
//! with its path of names from the property down.

use serde_json::Value;
use sqlx::{PgConnection, Postgres, QueryBuilder};
use uuid::Uuid;

use super::LOCATION_TYPES;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Result};

pub const CREATE_FIELDS: &[FieldSpec] = &[
    required("name", "name", Kind::Text(200)),
    required("type", "type", Kind::OneOf(LOCATION_TYPES)),
    required("propertyId", "property_id", Kind::Uuid),
    field("parentId", "parent_id", Kind::Uuid),
    field("description", "description", Kind::Text(1000)),
];

/// Creates a location. The property must exist (404); a parent must be a location of the same
/// property (400 on `parentId`).
pub async fn create(conn: &mut PgConnection, patch: &Patch) -> Result<Uuid> {
    let property = patch
        .uuid("property_id")
        .ok_or(Error::NotFound("property"))?;
    super::properties::ensure_exists(conn, property).await?;
    if let Some(parent) = patch.uuid("parent_id") {
        let of: Option<Uuid> =
            sqlx::query_scalar("SELECT property_id FROM inventory_locations WHERE id = $1")
                .bind(parent)
                .fetch_optional(&mut *conn)
                .await?;
        if of != Some(property) {
            return Err(Error::invalid(
                "parentId",
                "invalid_value",
                "must be a location of the same property",
            ));
        }
    }
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO inventory_locations (id, property_id, parent_id, name, type, description)
         SELECT $1, property_id, parent_id, name, type, description
         FROM jsonb_populate_record(NULL::inventory_locations, $2)",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

// A location row (alias `l`, its property `v`) as the API shows it.
macro_rules! location_view {
    () => {
        "jsonb_build_object('id', l.id, 'name', l.name, 'type', l.type, 'propertyId', l.property_id,
            'property', jsonb_build_object('id', v.id, 'name', v.villa_name),
            'parentId', l.parent_id, 'description', l.description, 'path', inventory_location_path(l.id),
            'itemCount', (SELECT count(*) FROM inventory_items i WHERE i.location_id = l.id AND i.archived_at IS NULL),
            'createdAt', l.created_at)"
    };
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        location_view!(),
        " FROM inventory_locations l JOIN villas v ON v.id = l.property_id WHERE l.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("location"))
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub property_id: Option<Uuid>,
    pub parent_id: Option<Uuid>,
    pub kind: Option<&'static str>,
}

impl Filter {
    fn push_conditions(&self, sql: &mut QueryBuilder<Postgres>) {
        sql.push(" WHERE true");
        if let Some(property) = self.property_id {
            sql.push(" AND l.property_id = ").push_bind(property);
        }
        if let Some(parent) = self.parent_id {
            sql.push(" AND l.parent_id = ").push_bind(parent);
        }
        if let Some(kind) = self.kind {
            sql.push(" AND l.type = ").push_bind(kind);
        }
    }
}

/// A page of locations ordered by path.
pub async fn list(conn: &mut PgConnection, f: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM inventory_locations l",
        item: location_view!(),
        from: " FROM inventory_locations l JOIN villas v ON v.id = l.property_id",
        order: "inventory_location_path(l.id), l.id",
    };
    json_page(conn, &list, page, |sql| f.push_conditions(sql)).await
}
