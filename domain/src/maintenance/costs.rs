//! A work order's cost lines (`/maintenance/work-orders/{id}/costs`): labour, parts, a vendor's
//! invoice, estimated or actual, billed to the owner or kept by the company. Every change of the
//! lines reassesses whether the owner must approve ([`super::approvals::reassess`]), under the
//! work order's row lock.

use sqlx::PgConnection;
use uuid::Uuid;

use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, required};
use crate::{Error, Result};

pub const COST_KINDS: &[&str] = &["LABOUR", "PARTS", "VENDOR_INVOICE", "OTHER"];

/// Who pays a line: the owner (it counts towards the approval threshold when estimated, and
/// towards the owner's statement once the work order is completed) or the company.
pub const BILL_TO: &[&str] = &["OWNER", "COMPANY"];

/// The most cost lines a work order holds: a repair has a handful; the bound keeps a work order's
/// detail, its approval page and its totals small whatever a client sends.
pub const MAX_COST_LINES: i64 = 200;

/// A cost line, every field required to create it; an update changes the fields sent.
pub const COST_FIELDS: &[FieldSpec] = &[
    required("kind", "kind", Kind::OneOf(COST_KINDS)),
    required("description", "description", Kind::Text(500)),
    required("amount", "amount", Kind::Amount(2)),
    required("currency", "currency", Kind::Currency),
    required("billTo", "bill_to", Kind::OneOf(BILL_TO)),
    required("estimate", "estimate", Kind::Bool),
];

/// The lines of a work order, oldest first (404 when there is no such work order).
pub async fn list(
    conn: &mut PgConnection,
    work_order: Uuid,
    page: PageRequest,
) -> Result<JsonPage> {
    super::work_orders::ensure_exists(conn, work_order).await?;
    let list = ListSql {
        count_from: " FROM work_order_costs c",
        item: super::work_orders::cost_line!(),
        from: " FROM work_order_costs c",
        order: "c.created_at, c.id",
    };
    json_page(conn, &list, page, |sql| {
        sql.push(" WHERE c.work_order_id = ").push_bind(work_order);
    })
    .await
}

/// Adds a line from a checked [`COST_FIELDS`] create patch, then reassesses the approval.
pub async fn create(
    conn: &mut PgConnection,
    work_order: Uuid,
    patch: &Patch,
    by: &str,
) -> Result<Uuid> {
    super::work_orders::lock(conn, work_order).await?;
    let count: i64 =
        sqlx::query_scalar("SELECT count(*) FROM work_order_costs WHERE work_order_id = $1")
            .bind(work_order)
            .fetch_one(&mut *conn)
            .await?;
    if count >= MAX_COST_LINES {
        return Err(Error::conflict(
            "TOO_MANY_COST_LINES",
            format!("a work order holds at most {MAX_COST_LINES} cost lines"),
        ));
    }
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO work_order_costs (id, work_order_id, kind, description, amount, currency, bill_to, estimate, created_by)
         SELECT $1, $2, kind, description, amount, currency, bill_to, estimate, $3
         FROM jsonb_populate_record(NULL::work_order_costs, $4)",
    )
    .bind(id)
    .bind(work_order)
    .bind(by)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    super::approvals::reassess(conn, work_order, by).await?;
    Ok(id)
}

/// While the owner is asked to approve the lines, only a manager changes or removes them (adding
/// one is anyone's: it can only ask for more): 409 `OWNER_APPROVAL_PENDING` otherwise.
fn check_may_change(status: &str, manager: bool) -> Result<()> {
    if status == "AWAITING_APPROVAL" && !manager {
        return Err(Error::conflict(
            "OWNER_APPROVAL_PENDING",
            "the work order awaits the owner's approval of these lines: only managers and admins change or remove them now",
        ));
    }
    Ok(())
}

/// Changes the fields sent, then reassesses the approval. `manager`: the caller may change the
/// lines an owner is asked to approve.
pub async fn update(
    conn: &mut PgConnection,
    work_order: Uuid,
    id: Uuid,
    patch: &Patch,
    manager: bool,
    by: &str,
) -> Result<()> {
    let status = super::work_orders::lock(conn, work_order).await?;
    check_may_change(&status, manager)?;
    let done = sqlx::query(
        "UPDATE work_order_costs c SET (kind, description, amount, currency, bill_to, estimate) =
             (SELECT kind, description, amount, currency, bill_to, estimate FROM jsonb_populate_record(c, $3)),
             updated_at = now()
         WHERE c.id = $1 AND c.work_order_id = $2",
    )
    .bind(id)
    .bind(work_order)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("cost line"));
    }
    super::approvals::reassess(conn, work_order, by).await
}

/// Removes a line, then reassesses the approval.
pub async fn delete(
    conn: &mut PgConnection,
    work_order: Uuid,
    id: Uuid,
    manager: bool,
    by: &str,
) -> Result<()> {
    let status = super::work_orders::lock(conn, work_order).await?;
    check_may_change(&status, manager)?;
    let done = sqlx::query("DELETE FROM work_order_costs WHERE id = $1 AND work_order_id = $2")
        .bind(id)
        .bind(work_order)
        .execute(&mut *conn)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("cost line"));
    }
    super::approvals::reassess(conn, work_order, by).await
}
