//! Vendors (companies a work order can be assigned to) and their ratings: one rating per
//! completed work order they were assigned, averaged per criterion.

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::CATEGORIES;
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, required};
use crate::{Error, Result};

/// A new vendor.
pub const CREATE_FIELDS: &[FieldSpec] = &[
    required("companyName", "company_name", Kind::Text(255)),
    required("email", "email", Kind::Email),
    required("categories", "categories", Kind::Tags(CATEGORIES)),
    field("contactName", "contact_name", Kind::Text(255)),
    field("phone", "phone", Kind::Phone),
    field("notes", "notes", Kind::Text(5000)),
];

/// A rating: four criteria from 1 to 5 and a comment.
pub const RATING_FIELDS: &[FieldSpec] = &[
    required("workOrderId", "work_order_id", Kind::Uuid),
    required("quality", "quality", Kind::Int { min: 1, max: 5 }),
    required("timeliness", "timeliness", Kind::Int { min: 1, max: 5 }),
    required(
        "communication",
        "communication",
        Kind::Int { min: 1, max: 5 },
    ),
    required("value", "value", Kind::Int { min: 1, max: 5 }),
    field("comments", "comments", Kind::Text(2000)),
];

pub async fn create(conn: &mut PgConnection, patch: &Patch) -> Result<Uuid> {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO vendors (id, company_name, contact_name, email, phone, categories, notes)
         SELECT $1, company_name, contact_name, email, phone, categories, notes
         FROM jsonb_populate_record(NULL::vendors, $2)",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// Rates the vendor's work on one work order: it must be assigned to that vendor and COMPLETED,
/// and is rated once (409 `WORK_ORDER_NOT_ASSIGNED_TO_VENDOR`, `WORK_ORDER_NOT_COMPLETED`,
/// `ALREADY_RATED`). Answers the rating.
pub async fn rate(
    conn: &mut PgConnection,
    vendor_id: Uuid,
    patch: &Patch,
    by: &str,
) -> Result<Value> {
    let vendor: Option<bool> = sqlx::query_scalar("SELECT true FROM vendors WHERE id = $1")
        .bind(vendor_id)
        .fetch_optional(&mut *conn)
        .await?;
    vendor.ok_or(Error::NotFound("vendor"))?;
    let work_order_id = patch
        .uuid("work_order_id")
        .ok_or(Error::NotFound("work order"))?;
    let order: Option<(String, Option<Uuid>)> = sqlx::query_as(
        "SELECT status, assignee_vendor_id FROM work_orders WHERE id = $1 FOR SHARE",
    )
    .bind(work_order_id)
    .fetch_optional(&mut *conn)
    .await?;
    let (status, assigned) = order.ok_or(Error::NotFound("work order"))?;
    if assigned != Some(vendor_id) {
        return Err(Error::conflict(
            "WORK_ORDER_NOT_ASSIGNED_TO_VENDOR",
            "the work order is not assigned to this vendor",
        ));
    }
    if status != "COMPLETED" {
        return Err(Error::conflict(
            "WORK_ORDER_NOT_COMPLETED",
            format!("the work order is {status}; only a COMPLETED work order can be rated"),
        ));
    }
    let rating: Option<Value> = sqlx::query_scalar(
        "INSERT INTO vendor_ratings (id, vendor_id, work_order_id, quality, timeliness, communication, value, comments, rated_by)
         SELECT $1, $2, work_order_id, quality, timeliness, communication, value, comments, $3
         FROM jsonb_populate_record(NULL::vendor_ratings, $4)
         ON CONFLICT (vendor_id, work_order_id) DO NOTHING
         RETURNING jsonb_build_object('id', id, 'vendorId', vendor_id, 'workOrderId', work_order_id,
             'quality', quality, 'timeliness', timeliness, 'communication', communication, 'value', value,
             'average', round((quality + timeliness + communication + value) / 4.0, 2),
             'comments', comments, 'ratedBy', rated_by, 'createdAt', created_at)",
    )
    .bind(Uuid::now_v7())
    .bind(vendor_id)
    .bind(by)
    .bind(patch.to_value())
    .fetch_optional(&mut *conn)
    .await?;
    rating.ok_or_else(|| {
        Error::conflict(
            "ALREADY_RATED",
            "this vendor's work on this work order is rated already",
        )
    })
}

// A vendor row (alias `vd`) as a list item, with its average rating.
macro_rules! vendor_item {
    () => {
        "jsonb_build_object('id', vd.id, 'companyName', vd.company_name, 'contactName', vd.contact_name,
            'email', vd.email, 'phone', vd.phone, 'categories', to_jsonb(vd.categories), 'notes', vd.notes,
            'averageRating', (SELECT round(avg((r.quality + r.timeliness + r.communication + r.value) / 4.0), 2)
                FROM vendor_ratings r WHERE r.vendor_id = vd.id),
            'createdAt', vd.created_at, 'updatedAt', vd.updated_at)"
    };
}

/// A page of vendors, newest first, offering `category` when given.
pub async fn list(
    conn: &mut PgConnection,
    category: Option<&'static str>,
    page: PageRequest,
) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM vendors vd",
        item: vendor_item!(),
        from: " FROM vendors vd",
        order: "vd.created_at DESC, vd.id DESC",
    };
    json_page(conn, &list, page, |sql| {
        if let Some(category) = category {
            sql.push(" WHERE ")
                .push_bind(category)
                .push(" = ANY (vd.categories)");
        }
    })
    .await
}

/// One vendor with its rating per criterion (averages to 2 decimals, null when unrated).
pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        vendor_item!(),
        " || jsonb_build_object('rating', (SELECT jsonb_build_object(
                'average', round(avg((r.quality + r.timeliness + r.communication + r.value) / 4.0), 2),
                'quality', round(avg(r.quality), 2), 'timeliness', round(avg(r.timeliness), 2),
                'communication', round(avg(r.communication), 2), 'value', round(avg(r.value), 2),
                'count', count(*)) FROM vendor_ratings r WHERE r.vendor_id = vd.id))",
        " FROM vendors vd WHERE vd.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("vendor"))
}
