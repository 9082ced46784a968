//! Work orders' checklists: the items a generated work order carries (copied from its task rule)
//! and their answers. A FAIL opens one follow-up work order on the same villa, once per item.

use sqlx::PgConnection;
use uuid::Uuid;

use super::WORK_ORDER_CATEGORIES;
use super::work_orders::{lock, record_history};
use crate::{Error, Result};

/// CHECK, or PHOTO_REQUIRED: a PASS needs a PHOTO field note of the work order.
pub const KINDS: &[&str] = &["CHECK", "PHOTO_REQUIRED"];

pub const RESULTS: &[&str] = &["PASS", "FAIL", "NA"];

/// An item to put on a work order's checklist.
#[derive(Debug, Clone)]
pub struct NewChecklistItem {
    /// 1 to 500 characters.
    pub text: String,
    /// One of [`KINDS`].
    pub kind: String,
    /// The category of the work order a FAIL opens (a work-order category).
    pub fail_category: String,
}

/// Puts `items` on the work order's checklist, in their order (positions 0, 1, ...). Meant for a
/// work order that has no checklist yet (the generator, as it creates one).
pub async fn insert_items(
    conn: &mut PgConnection,
    work_order_id: Uuid,
    items: &[NewChecklistItem],
) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
    let kinds: Vec<&str> = items.iter().map(|i| i.kind.as_str()).collect();
    let categories: Vec<&str> = items.iter().map(|i| i.fail_category.as_str()).collect();
    sqlx::query(
        "INSERT INTO work_order_checklist_items (id, work_order_id, position, text, kind, fail_category)
         SELECT uuid_v7(), $1, (x.n - 1)::integer, x.text, x.kind, x.category
         FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS x(text, kind, category, n)",
    )
    .bind(work_order_id)
    .bind(&texts)
    .bind(&kinds)
    .bind(&categories)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A checked answer to one item. It replaces the item's answer whole: notes and field note left
/// out are none.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// PASS, FAIL or NA; `None` un-answers the item.
    pub result: Option<&'static str>,
    pub notes: Option<String>,
    pub field_note_id: Option<Uuid>,
}

/// The item as it stands, locked.
#[derive(sqlx::FromRow)]
struct Item {
    text: String,
    kind: String,
    fail_category: String,
    follow_up_work_order_id: Option<Uuid>,
}

/// Answers one item of the work order's checklist, under the work order's row lock (the lock a
/// completion takes, so no item is un-answered while it completes) and the item's. A COMPLETED or
/// CANCELLED work order's checklist is closed (409 `WORK_ORDER_CLOSED`); an item of another work
/// order is 404. The field note must be one of this work order (400 on `fieldNoteId`); a PASS of
/// a PHOTO_REQUIRED item needs a PHOTO one (400 `PHOTO_REQUIRED` on `fieldNoteId`). A FAIL opens
/// the item's follow-up work order unless it has one already; un-answering an item with a
/// follow-up is 409 `CHECKLIST_ITEM_HAS_FOLLOW_UP`.
pub async fn answer(
    conn: &mut PgConnection,
    work_order_id: Uuid,
    item_id: Uuid,
    a: &Answer,
    by: &str,
) -> Result<()> {
    let status = lock(conn, work_order_id).await?;
    if matches!(status.as_str(), "COMPLETED" | "CANCELLED") {
        let hint = if status == "COMPLETED" {
            "; reopen it first"
        } else {
            ""
        };
        return Err(Error::conflict(
            "WORK_ORDER_CLOSED",
            format!("a {status} work order's checklist cannot be answered{hint}"),
        ));
    }
    // The item's row lock: two answers of one item at once take turns, so the second sees the
    // follow-up the first opened (the UNIQUE on follow_up_work_order_id is the backstop).
    let item: Item = sqlx::query_as(
        "SELECT text, kind, fail_category, follow_up_work_order_id FROM work_order_checklist_items
         WHERE id = $1 AND work_order_id = $2 FOR UPDATE",
    )
    .bind(item_id)
    .bind(work_order_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("checklist item"))?;

    let Some(result) = a.result else {
        if item.follow_up_work_order_id.is_some() {
            return Err(Error::conflict(
                "CHECKLIST_ITEM_HAS_FOLLOW_UP",
                "the item's FAIL opened a follow-up work order: it can change its result but not be un-answered",
            ));
        }
        sqlx::query(
            "UPDATE work_order_checklist_items SET result = NULL, notes = NULL, field_note_id = NULL,
                 answered_by = NULL, answered_at = NULL
             WHERE id = $1",
        )
        .bind(item_id)
        .execute(&mut *conn)
        .await?;
        return touch(conn, work_order_id).await;
    };

    let note_type = match a.field_note_id {
        None => None,
        Some(note) => Some(
            sqlx::query_scalar::<_, String>(
                "SELECT type FROM field_notes WHERE id = $1 AND work_order_id = $2",
            )
            .bind(note)
            .bind(work_order_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| {
                Error::invalid(
                    "fieldNoteId",
                    "not_found",
                    "fieldNoteId is not a field note of this work order",
                )
            })?,
        ),
    };
    if item.kind == "PHOTO_REQUIRED" && result == "PASS" && note_type.as_deref() != Some("PHOTO") {
        return Err(Error::invalid(
            "fieldNoteId",
            "PHOTO_REQUIRED",
            "a PASS of a PHOTO_REQUIRED item needs fieldNoteId: a PHOTO field note of this work order",
        ));
    }
    sqlx::query(
        "UPDATE work_order_checklist_items SET result = $2, notes = $3, field_note_id = $4,
             answered_by = $5, answered_at = now()
         WHERE id = $1",
    )
    .bind(item_id)
    .bind(result)
    .bind(&a.notes)
    .bind(a.field_note_id)
    .bind(by)
    .execute(&mut *conn)
    .await?;
    if result == "FAIL" && item.follow_up_work_order_id.is_none() {
        open_follow_up(conn, work_order_id, item_id, &item, a.notes.as_deref(), by).await?;
    }
    touch(conn, work_order_id).await
}

/// The work order changed (its checklist did).
async fn touch(conn: &mut PgConnection, work_order_id: Uuid) -> Result<()> {
    sqlx::query("UPDATE work_orders SET updated_at = now() WHERE id = $1")
        .bind(work_order_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Opens the repair a failed item calls for: on the parent's villa, in the item's fail category
/// (GENERAL when it is not a work-order category), titled with the item's text (its first 200
/// characters), described by the answer's notes, HIGH, OPEN, source INSPECTION; the item records
/// it and its history its opening.
async fn open_follow_up(
    conn: &mut PgConnection,
    parent: Uuid,
    item_id: Uuid,
    item: &Item,
    notes: Option<&str>,
    by: &str,
) -> Result<()> {
    let category = WORK_ORDER_CATEGORIES
        .iter()
        .find(|c| **c == item.fail_category)
        .copied()
        .unwrap_or("GENERAL");
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO work_orders (id, villa_id, title, description, category, priority, status, source,
                                  parent_work_order_id, created_by)
         SELECT $1, p.villa_id, left($2, 200), $3, $4, 'HIGH', 'OPEN', 'INSPECTION', p.id, $5
         FROM work_orders p WHERE p.id = $6",
    )
    .bind(id)
    .bind(&item.text)
    .bind(notes)
    .bind(category)
    .bind(by)
    .bind(parent)
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE work_order_checklist_items SET follow_up_work_order_id = $2 WHERE id = $1")
        .bind(item_id)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    record_history(
        conn,
        id,
        None,
        "OPEN",
        Some("opened by a failed checklist item"),
        by,
    )
    .await
}
