//! Properties: the villas of `/management/villas`, seen from the storeroom.

use sqlx::PgConnection;

use crate::Result;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};

/// 404 naming the property when no villa has this id.
pub async fn ensure_exists(conn: &mut PgConnection, id: uuid::Uuid) -> Result<()> {
    crate::management::villas::ensure_exists(conn, id)
        .await
        .map_err(|e| match e {
            crate::Error::NotFound(_) => crate::Error::NotFound("property"),
            other => other,
        })
}

/// A page of properties ordered by name, with their locations and items in use.
pub async fn list(conn: &mut PgConnection, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM villas v",
        item: "jsonb_build_object('id', v.id, 'name', v.villa_name, 'code', v.villa_code,
            'locationCount', (SELECT count(*) FROM inventory_locations l WHERE l.property_id = v.id),
            'itemCount', (SELECT count(*) FROM inventory_items i WHERE i.property_id = v.id AND i.archived_at IS NULL))",
        from: " FROM villas v",
        order: "v.villa_name, v.id",
    };
    json_page(conn, &list, page, |_| {}).await
}
