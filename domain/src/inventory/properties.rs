//! Properties: the villas of `/management/villas`, seen from the storeroom.

use sqlx::PgConnection;

use crate::Result;
use crate::pagination::{JsonPage, PageRequest};

/// A page of properties ordered by name, with their locations and items in use.
pub async fn list(conn: &mut PgConnection, page: PageRequest) -> Result<JsonPage> {
    Ok(sqlx::query_as(
        "SELECT (SELECT count(*) FROM villas) AS total,
           coalesce((SELECT jsonb_agg(jsonb_build_object('id', v.id, 'name', v.villa_name, 'code', v.villa_code,
               'locationCount', (SELECT count(*) FROM inventory_locations l WHERE l.property_id = v.id),
               'itemCount', (SELECT count(*) FROM inventory_items i WHERE i.property_id = v.id AND i.archived_at IS NULL))
             ORDER BY v.villa_name, v.id)
           FROM (SELECT * FROM villas ORDER BY villa_name, id LIMIT $1 OFFSET $2) v), '[]')::text AS data",
    )
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_one(&mut *conn)
    .await?)
}
