//! Reports, computed on request from the items and the ledger. Quantities are summed per unit
//! (litres and pieces do not add up) and values per currency (never summed across currencies);
//! every report says when it was computed (`asOf`).

use chrono::NaiveDate;
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::Result;
use crate::clock::BusinessZone;

/// The filters a report takes (each where it makes sense).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub property_id: Option<Uuid>,
    pub location_id: Option<Uuid>,
    /// A category code; the categories under it are included.
    pub category: Option<String>,
}

/// Per property and category: items in use, quantity per unit, items at or below their minimum,
/// items out of stock, and what is in transit towards the property.
pub async fn stock(conn: &mut PgConnection, f: &Filter) -> Result<Value> {
    Ok(sqlx::query_scalar(
        "WITH picked AS (
            SELECT i.* FROM inventory_items i
            WHERE i.archived_at IS NULL AND ($1::uuid IS NULL OR i.property_id = $1)
              AND ($2::uuid IS NULL OR i.location_id = $2)
              AND ($3::text IS NULL OR i.category IN (SELECT inventory_category_codes($3)))),
         stock AS (
            SELECT property_id, category, count(*) AS items,
                   count(*) FILTER (WHERE min_stock > 0 AND quantity <= min_stock) AS low,
                   count(*) FILTER (WHERE quantity = 0) AS out
            FROM picked GROUP BY 1, 2),
         units AS (
            SELECT property_id, category, jsonb_object_agg(unit, quantity) AS by_unit
            FROM (SELECT property_id, category, unit, sum(quantity) AS quantity FROM picked GROUP BY 1, 2, 3) u
            GROUP BY 1, 2),
         transit AS (
            SELECT property_id, category, jsonb_object_agg(unit, quantity) AS by_unit
            FROM (SELECT dl.property_id, i.category, i.unit, sum(tl.quantity) AS quantity
                  FROM inventory_transfers t
                  JOIN inventory_transfer_lines tl ON tl.transfer_id = t.id
                  JOIN inventory_locations dl ON dl.id = t.destination_location_id
                  JOIN inventory_items i ON i.id = tl.item_id
                  WHERE t.status = 'IN_TRANSIT' AND ($1::uuid IS NULL OR dl.property_id = $1)
                    AND ($2::uuid IS NULL OR t.destination_location_id = $2)
                    AND ($3::text IS NULL OR i.category IN (SELECT inventory_category_codes($3)))
                  GROUP BY 1, 2, 3) t
            GROUP BY 1, 2),
         rows AS (
            SELECT coalesce(s.property_id, t.property_id) AS property_id, coalesce(s.category, t.category) AS category,
                   coalesce(s.items, 0) AS items, coalesce(s.low, 0) AS low, coalesce(s.out, 0) AS out,
                   coalesce(u.by_unit, '{}') AS by_unit, coalesce(t.by_unit, '{}') AS in_transit
            FROM stock s
            LEFT JOIN units u ON u.property_id = s.property_id AND u.category = s.category
            FULL JOIN transit t ON t.property_id = s.property_id AND t.category = s.category)
         SELECT jsonb_build_object('asOf', now(),
            'rows', coalesce(jsonb_agg(jsonb_build_object(
                'property', jsonb_build_object('id', v.id, 'name', v.villa_name), 'category', r.category,
                'itemCount', r.items, 'quantityByUnit', r.by_unit, 'atOrBelowMinimum', r.low, 'outOfStock', r.out,
                'inTransitByUnit', r.in_transit) ORDER BY v.villa_name, v.id, r.category), '[]'),
            'totals', jsonb_build_object('itemCount', coalesce(sum(r.items), 0),
                'atOrBelowMinimum', coalesce(sum(r.low), 0), 'outOfStock', coalesce(sum(r.out), 0)))
         FROM rows r JOIN villas v ON v.id = r.property_id",
    )
    .bind(f.property_id)
    .bind(f.location_id)
    .bind(&f.category)
    .fetch_one(&mut *conn)
    .await?)
}

/// Per movement type in the period (dates inclusive, days of `zone`, the company's): the count,
/// the quantity per unit and the value (quantity × unit cost) per currency; and per property,
/// what came in and went out.
pub async fn movements(
    conn: &mut PgConnection,
    f: &Filter,
    start: NaiveDate,
    end: NaiveDate,
    zone: BusinessZone,
) -> Result<Value> {
    Ok(sqlx::query_scalar(
        "WITH picked AS (
            SELECT m.type, abs(m.change) AS quantity, m.change > 0 AS incoming, abs(m.change) * m.unit_cost AS value,
                   i.unit, i.currency, i.property_id
            FROM inventory_movements m JOIN inventory_items i ON i.id = m.item_id
            WHERE m.created_at >= $4::date::timestamp AT TIME ZONE $6::text
              AND m.created_at < ($5::date + 1)::timestamp AT TIME ZONE $6::text
              AND ($1::uuid IS NULL OR i.property_id = $1) AND ($2::uuid IS NULL OR i.location_id = $2)
              AND ($3::text IS NULL OR i.category IN (SELECT inventory_category_codes($3)))),
         by_type AS (
            SELECT type, sum(count) AS count,
                   jsonb_object_agg(unit, quantity) FILTER (WHERE unit IS NOT NULL) AS by_unit
            FROM (SELECT type, unit, count(*) AS count, sum(quantity) AS quantity FROM picked GROUP BY 1, 2) q
            GROUP BY 1),
         type_values AS (
            SELECT type, jsonb_object_agg(currency, value) AS by_currency
            FROM (SELECT type, currency, round(sum(value), 2) AS value FROM picked WHERE value IS NOT NULL GROUP BY 1, 2) v
            GROUP BY 1),
         flows AS (
            SELECT property_id, incoming,
                   jsonb_object_agg(unit, quantity) AS by_unit
            FROM (SELECT property_id, incoming, unit, sum(quantity) AS quantity FROM picked GROUP BY 1, 2, 3) q
            GROUP BY 1, 2),
         flow_values AS (
            SELECT property_id, incoming, jsonb_object_agg(currency, value) AS by_currency
            FROM (SELECT property_id, incoming, currency, round(sum(value), 2) AS value FROM picked
                  WHERE value IS NOT NULL GROUP BY 1, 2, 3) v
            GROUP BY 1, 2),
         properties AS (SELECT DISTINCT property_id FROM picked)
         SELECT jsonb_build_object('asOf', now(), 'startDate', $4::date, 'endDate', $5::date,
            'byType', (SELECT coalesce(jsonb_agg(jsonb_build_object('type', t.type, 'count', t.count,
                    'quantityByUnit', coalesce(t.by_unit, '{}'), 'valueByCurrency', coalesce(tv.by_currency, '{}'))
                ORDER BY t.type), '[]')
                FROM by_type t LEFT JOIN type_values tv ON tv.type = t.type),
            'byProperty', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'property', jsonb_build_object('id', v.id, 'name', v.villa_name),
                    'in', jsonb_build_object('quantityByUnit', coalesce(fi.by_unit, '{}'), 'valueByCurrency', coalesce(vi.by_currency, '{}')),
                    'out', jsonb_build_object('quantityByUnit', coalesce(fo.by_unit, '{}'), 'valueByCurrency', coalesce(vo.by_currency, '{}')))
                ORDER BY v.villa_name, v.id), '[]')
                FROM properties p JOIN villas v ON v.id = p.property_id
                LEFT JOIN flows fi ON fi.property_id = p.property_id AND fi.incoming
                LEFT JOIN flows fo ON fo.property_id = p.property_id AND NOT fo.incoming
                LEFT JOIN flow_values vi ON vi.property_id = p.property_id AND vi.incoming
                LEFT JOIN flow_values vo ON vo.property_id = p.property_id AND NOT vo.incoming))",
    )
    .bind(f.property_id)
    .bind(f.location_id)
    .bind(&f.category)
    .bind(start)
    .bind(end)
    .bind(zone.name())
    .fetch_one(&mut *conn)
    .await?)
}

/// The stock value (quantity × unit cost) per property, category and currency; totals per
/// currency; the 10 most valuable items.
pub async fn valuation(conn: &mut PgConnection, f: &Filter) -> Result<Value> {
    Ok(sqlx::query_scalar(
        "WITH picked AS (
            SELECT i.*, i.quantity * i.unit_cost AS value FROM inventory_items i
            WHERE i.archived_at IS NULL AND ($1::uuid IS NULL OR i.property_id = $1)
              AND ($2::uuid IS NULL OR i.location_id = $2)
              AND ($3::text IS NULL OR i.category IN (SELECT inventory_category_codes($3))))
         SELECT jsonb_build_object('asOf', now(),
            'rows', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'property', jsonb_build_object('id', v.id, 'name', v.villa_name), 'category', r.category,
                    'currency', r.currency, 'itemCount', r.items, 'unvaluedItemCount', r.unvalued, 'value', r.value)
                ORDER BY v.villa_name, v.id, r.category, r.currency), '[]')
                FROM (SELECT property_id, category, currency, count(*) AS items, count(*) FILTER (WHERE unit_cost IS NULL) AS unvalued,
                             round(coalesce(sum(value), 0), 2) AS value
                      FROM picked GROUP BY 1, 2, 3) r JOIN villas v ON v.id = r.property_id),
            'totals', (SELECT coalesce(jsonb_agg(jsonb_build_object('currency', t.currency, 'value', t.value)
                ORDER BY t.currency), '[]')
                FROM (SELECT currency, round(coalesce(sum(value), 0), 2) AS value FROM picked GROUP BY 1) t),
            'topItems', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', p.id, 'name', p.name, 'sku', p.sku,
                    'property', jsonb_build_object('id', v.id, 'name', v.villa_name), 'category', p.category,
                    'quantity', p.quantity, 'unit', p.unit, 'unitCost', p.unit_cost, 'currency', p.currency,
                    'value', round(p.value, 2)) ORDER BY p.value DESC, p.id), '[]')
                FROM (SELECT * FROM picked WHERE value IS NOT NULL ORDER BY value DESC, id LIMIT 10) p
                JOIN villas v ON v.id = p.property_id))",
    )
    .bind(f.property_id)
    .bind(f.location_id)
    .bind(&f.category)
    .fetch_one(&mut *conn)
    .await?)
}
