//! Task rules: which stays (their villas, owner stays or not), when (a trigger's date plus an
//! offset, or every few nights of a long stay) and what work order each makes, with its checklist
//! and the consumables it draws. This file reads and writes the rules; archiving one stops its
//! generation and leaves the work orders it made as they are.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::{CHECKLIST_KINDS, PRIORITIES, TRIGGERS, WORK_ORDER_CATEGORIES};
use crate::pagination::{JsonPage, ListSql, PageRequest, json_page};
use crate::record::{FieldSpec, Kind, Patch, field, members, parse_amount, required};
use crate::{Error, Problems, Refusal, Result, on_refusal};

/// A rule's own fields; `villaIds`, `checklist` and `consumables` are read by [`read_lists`].
/// On create, absent `offsetDays`, `priority` and `includeOwnerStays` take their defaults (0,
/// MEDIUM, false), and so does a `null` on `PATCH`.
pub const TASK_RULE_FIELDS: &[FieldSpec] = &[
    required("name", "name", Kind::Text(200)),
    required("trigger", "trigger", Kind::OneOf(TRIGGERS)),
    field("offsetDays", "offset_days", Kind::Int { min: -30, max: 30 }),
    field("everyNights", "every_nights", Kind::Int { min: 2, max: 60 }),
    required("category", "category", Kind::OneOf(WORK_ORDER_CATEGORIES)),
    field("priority", "priority", Kind::OneOf(PRIORITIES)),
    field("title", "title", Kind::Text(200)),
    field("defaultAssigneeId", "default_assignee_id", Kind::Uuid),
    field("includeOwnerStays", "include_owner_stays", Kind::Bool),
];

/// Most villas a rule names.
pub const MAX_VILLAS: usize = 500;
/// Most checklist items a rule holds, and the longest one.
pub const MAX_CHECKLIST: usize = 100;
pub const MAX_CHECKLIST_TEXT: usize = 500;
/// Most consumable lines a rule holds, and the longest SKU.
pub const MAX_CONSUMABLES: usize = 50;
pub const MAX_SKU: usize = 64;
/// Decimal places of a consumable's quantities (those of a stock quantity).
pub const QUANTITY_PLACES: u32 = 3;
/// The category of the repair a failed checklist item opens when it names none.
pub const DEFAULT_FAIL_CATEGORY: &str = "GENERAL";

/// The members of a body that are lists: each `None` when absent (a `PATCH` leaves it as it
/// is), `null` meaning empty.
#[derive(Debug, Default, Clone)]
pub struct Lists {
    /// Each once, sorted; with the position each was first given at (for the problems).
    pub villa_ids: Option<Vec<(usize, Uuid)>>,
    /// `[{text, kind, failCategory}]`, as stored.
    pub checklist: Option<Value>,
    /// `[{itemSku, perStay, perNight}]`, the quantities as decimal strings (the SQL stores them as
    /// JSON numbers, read from the text, never through a float).
    pub consumables: Option<Value>,
}

/// Reads `villaIds`, `checklist` and `consumables` of `body`, recording every bad member as
/// `villaIds[i]`, `checklist[i].text`, `consumables[i].perNight`, ...
pub fn read_lists(body: &Map<String, Value>, problems: &mut Problems) -> Lists {
    Lists {
        villa_ids: array_member(body, "villaIds", MAX_VILLAS, problems)
            .map(|v| villa_ids(v, problems)),
        checklist: array_member(body, "checklist", MAX_CHECKLIST, problems)
            .map(|v| Value::Array(checklist(v, problems))),
        consumables: array_member(body, "consumables", MAX_CONSUMABLES, problems)
            .map(|v| Value::Array(consumables(v, problems))),
    }
}

/// The array under `name`: absent is `None`, `null` an empty one; anything else than an array,
/// or one longer than `max`, is a problem (and an empty one, so that nothing is written).
fn array_member<'a>(
    body: &'a Map<String, Value>,
    name: &str,
    max: usize,
    problems: &mut Problems,
) -> Option<&'a [Value]> {
    match body.get(name)? {
        Value::Null => Some(&[]),
        Value::Array(items) => Some(members::at_most(items, name, max, problems).unwrap_or(&[])),
        _ => {
            problems.push(name, "invalid_type", format!("{name} must be an array"));
            Some(&[])
        }
    }
}

fn villa_ids(items: &[Value], problems: &mut Problems) -> Vec<(usize, Uuid)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str().and_then(|s| s.trim().parse::<Uuid>().ok()) {
            Some(id) => {
                if seen.insert(id) {
                    out.push((i, id));
                }
            }
            None => problems.push(
                format!("villaIds[{i}]"),
                "invalid_format",
                "must be a villa's id (a UUID)",
            ),
        }
    }
    out.sort_by_key(|(_, id)| *id);
    out
}

fn checklist(items: &[Value], problems: &mut Problems) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = members::object(item, "checklist", i, problems) else {
            continue;
        };
        let prefix = format!("checklist[{i}].");
        let text = match obj.get("text") {
            Some(Value::String(s)) if !s.trim().is_empty() => {
                let s = s.trim();
                if s.chars().count() > MAX_CHECKLIST_TEXT {
                    problems.push(
                        format!("{prefix}text"),
                        "too_long",
                        format!("at most {MAX_CHECKLIST_TEXT} characters"),
                    );
                    None
                } else {
                    Some(s.to_owned())
                }
            }
            None | Some(Value::Null) | Some(Value::String(_)) => {
                problems.push(format!("{prefix}text"), "required", "text is required");
                None
            }
            Some(_) => {
                problems.push(format!("{prefix}text"), "invalid_type", "must be a string");
                None
            }
        };
        let kind = closed(obj, "kind", &prefix, CHECKLIST_KINDS, "CHECK", problems);
        let fail = closed(
            obj,
            "failCategory",
            &prefix,
            WORK_ORDER_CATEGORIES,
            DEFAULT_FAIL_CATEGORY,
            problems,
        );
        if let (Some(text), Some(kind), Some(fail)) = (text, kind, fail) {
            out.push(json!({"text": text, "kind": kind, "failCategory": fail}));
        }
    }
    out
}

/// A member of a closed set (any letter case), `default` when absent or `null`.
fn closed(
    obj: &Map<String, Value>,
    key: &str,
    prefix: &str,
    set: &'static [&'static str],
    default: &'static str,
    problems: &mut Problems,
) -> Option<&'static str> {
    match obj.get(key) {
        None | Some(Value::Null) => Some(default),
        Some(Value::String(s)) => problems.closed(&format!("{prefix}{key}"), s, set),
        Some(_) => {
            problems.push(
                format!("{prefix}{key}"),
                "invalid_type",
                format!("must be one of {}", set.join(", ")),
            );
            None
        }
    }
}

fn consumables(items: &[Value], problems: &mut Problems) -> Vec<Value> {
    let mut out = Vec::new();
    let mut skus = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = members::object(item, "consumables", i, problems) else {
            continue;
        };
        let prefix = format!("consumables[{i}].");
        let sku = match obj.get("itemSku") {
            Some(Value::String(s)) if !s.trim().is_empty() => {
                let s = s.trim();
                if s.chars().count() > MAX_SKU {
                    problems.push(
                        format!("{prefix}itemSku"),
                        "too_long",
                        format!("at most {MAX_SKU} characters"),
                    );
                    None
                } else if !skus.insert(s.to_owned()) {
                    problems.push(
                        format!("{prefix}itemSku"),
                        "duplicate",
                        "another line draws this SKU already: one line per SKU",
                    );
                    None
                } else {
                    Some(s.to_owned())
                }
            }
            None | Some(Value::Null) | Some(Value::String(_)) => {
                problems.push(
                    format!("{prefix}itemSku"),
                    "required",
                    "itemSku is required",
                );
                None
            }
            Some(_) => {
                problems.push(
                    format!("{prefix}itemSku"),
                    "invalid_type",
                    "must be a string",
                );
                None
            }
        };
        let mut quantity = |key: &str| match obj.get(key) {
            None | Some(Value::Null) => Some(rust_decimal::Decimal::ZERO),
            Some(raw) => match parse_amount(raw, QUANTITY_PLACES, false) {
                Ok(d) => Some(d),
                Err((code, message)) => {
                    problems.push(format!("{prefix}{key}"), code, message);
                    None
                }
            },
        };
        let per_stay = quantity("perStay");
        let per_night = quantity("perNight");
        let (Some(sku), Some(per_stay), Some(per_night)) = (sku, per_stay, per_night) else {
            continue;
        };
        if per_stay.is_zero() && per_night.is_zero() {
            problems.push(
                format!("consumables[{i}]"),
                "invalid_value",
                "draws nothing: perStay or perNight must be above 0",
            );
            continue;
        }
        out.push(json!({"itemSku": sku, "perStay": per_stay.to_string(),
            "perNight": per_night.to_string()}));
    }
    out
}

/// Sets `every_nights` in `patch` to what the rule will hold, checking the pair: MID_STAY needs
/// `everyNights`, any other trigger refuses it (400 on `everyNights`). `stored` is the rule's
/// trigger and `every_nights` when it is changed: leaving MID_STAY without naming `everyNights`
/// clears it. `body` is the request, to tell a member the field table refused already (nothing
/// more is said of it).
pub fn check_every_nights(
    patch: &mut Patch,
    body: &Map<String, Value>,
    stored: Option<(&str, Option<i32>)>,
    problems: &mut Problems,
) {
    let refused =
        |json: &str| body.contains_key(json) && !patch.saved_fields.iter().any(|f| f == json);
    if refused("trigger") || refused("everyNights") {
        return;
    }
    let Some(trigger) = patch
        .columns
        .get("trigger")
        .and_then(Value::as_str)
        .or(stored.map(|(t, _)| t))
        .map(str::to_owned)
    else {
        // A create without a trigger: the field table said so.
        return;
    };
    let named = body.contains_key("everyNights");
    let value = if named {
        patch
            .columns
            .get("every_nights")
            .cloned()
            .unwrap_or(Value::Null)
    } else if trigger == "MID_STAY" {
        stored.and_then(|(_, n)| n).map_or(Value::Null, Value::from)
    } else {
        Value::Null
    };
    match (trigger == "MID_STAY", value.is_null()) {
        (true, true) => problems.push(
            "everyNights",
            "required",
            "everyNights (2 to 60) is required for a MID_STAY rule",
        ),
        (false, false) => problems.push(
            "everyNights",
            "invalid_value",
            format!("everyNights applies only to MID_STAY rules; this one is {trigger}"),
        ),
        _ => {}
    }
    patch.columns.insert("every_nights".into(), value);
}

/// Checks that the villas and the assignee exist, locking them (`FOR KEY SHARE`) so that none is
/// deleted before the rule refers to it: an unknown one is a 400 on `villaIds[i]` (its position
/// in the body) or `defaultAssigneeId`.
async fn check_references(
    conn: &mut PgConnection,
    villas: Option<&[(usize, Uuid)]>,
    assignee: Option<Uuid>,
) -> Result<()> {
    let mut problems = Problems::new();
    if let Some(villas) = villas.filter(|v| !v.is_empty()) {
        let ids: Vec<Uuid> = villas.iter().map(|(_, id)| *id).collect();
        let found: Vec<Uuid> = sqlx::query_scalar(
            "SELECT id FROM villas WHERE id = ANY($1) ORDER BY id FOR KEY SHARE",
        )
        .bind(&ids)
        .fetch_all(&mut *conn)
        .await?;
        let found: BTreeSet<Uuid> = found.into_iter().collect();
        let mut missing: Vec<&(usize, Uuid)> = villas
            .iter()
            .filter(|(_, id)| !found.contains(id))
            .collect();
        missing.sort_by_key(|(i, _)| *i);
        for (i, id) in missing {
            problems.push(
                format!("villaIds[{i}]"),
                "not_found",
                format!("no villa has the id {id}"),
            );
        }
    }
    if let Some(staff) = assignee {
        let found: Option<bool> =
            sqlx::query_scalar("SELECT true FROM staff WHERE id = $1 FOR KEY SHARE")
                .bind(staff)
                .fetch_optional(&mut *conn)
                .await?;
        if found.is_none() {
            problems.push(
                "defaultAssigneeId",
                "not_found",
                "no staff member has this id",
            );
        }
    }
    problems.finish()
}

/// A villa or staff member deleted while the rule was written (should the locks above ever not
/// hold it): still a 400, never a 500.
fn gone(err: sqlx::Error, field: &'static str, what: &'static str) -> Error {
    on_refusal(err, Refusal::ForeignKey, || {
        Error::invalid(
            field,
            "not_found",
            format!("{what} does not exist (any more)"),
        )
    })
}

// The consumables `$n` as stored: each quantity a JSON number read from its decimal text.
macro_rules! stored_consumables {
    ($n:literal) => {
        concat!(
            "(SELECT coalesce(jsonb_agg(jsonb_build_object('itemSku', c->>'itemSku',
                 'perStay', (c->>'perStay')::numeric, 'perNight', (c->>'perNight')::numeric) ORDER BY k), '[]')
              FROM jsonb_array_elements(",
            $n,
            "::jsonb) WITH ORDINALITY e(c, k))"
        )
    };
}

/// Creates a rule (its fields checked by [`TASK_RULE_FIELDS`], [`check_every_nights`] and
/// [`read_lists`]); an unknown villa or staff member is a 400.
pub async fn create(
    conn: &mut PgConnection,
    patch: &Patch,
    lists: &Lists,
    by: &str,
) -> Result<Uuid> {
    let villas = lists.villa_ids.as_deref().unwrap_or_default();
    check_references(conn, Some(villas), patch.uuid("default_assignee_id")).await?;
    let id = Uuid::now_v7();
    sqlx::query(concat!(
        "INSERT INTO task_rules (id, name, trigger, offset_days, every_nights, category, priority, title,
                                 default_assignee_id, include_owner_stays, checklist, consumables, created_by)
         SELECT $1, r.name, r.trigger, coalesce(r.offset_days, 0), r.every_nights, r.category,
                coalesce(r.priority, 'MEDIUM'), r.title, r.default_assignee_id,
                coalesce(r.include_owner_stays, false), coalesce($3, '[]'::jsonb), ",
        stored_consumables!("coalesce($4, '[]')"),
        ", $5
         FROM jsonb_populate_record(NULL::task_rules, $2) r"
    ))
    .bind(id)
    .bind(patch.to_value())
    .bind(&lists.checklist)
    .bind(&lists.consumables)
    .bind(by)
    .execute(&mut *conn)
    .await
    .map_err(|e| gone(e, "defaultAssigneeId", "the staff member"))?;
    set_villas(conn, id, villas).await?;
    Ok(id)
}

async fn set_villas(conn: &mut PgConnection, id: Uuid, villas: &[(usize, Uuid)]) -> Result<()> {
    let ids: Vec<Uuid> = villas.iter().map(|(_, id)| *id).collect();
    sqlx::query("DELETE FROM task_rule_villas WHERE task_rule_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO task_rule_villas (task_rule_id, villa_id) SELECT $1, unnest($2::uuid[])",
    )
    .bind(id)
    .bind(&ids)
    .execute(&mut *conn)
    .await
    .map_err(|e| gone(e, "villaIds", "a villa"))?;
    Ok(())
}

/// Changes what the body names of a rule (under its row lock): 404 `TASK_RULE_NOT_FOUND`, 409
/// `TASK_RULE_ARCHIVED`; the trigger and `everyNights` are checked against the stored row;
/// `villaIds`, `checklist` and `consumables` replace the stored ones.
pub async fn update(
    conn: &mut PgConnection,
    id: Uuid,
    mut patch: Patch,
    body: &Map<String, Value>,
    lists: &Lists,
) -> Result<()> {
    let stored: Option<(String, Option<i32>, bool)> = sqlx::query_as(
        "SELECT trigger, every_nights, archived_at IS NOT NULL FROM task_rules WHERE id = $1 FOR UPDATE",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let (trigger, every_nights, archived) = stored.ok_or(Error::NotFound("task rule"))?;
    if archived {
        return Err(Error::conflict(
            "TASK_RULE_ARCHIVED",
            "the rule is archived; an archived rule cannot be changed",
        ));
    }
    let mut problems = Problems::new();
    check_every_nights(
        &mut patch,
        body,
        Some((&trigger, every_nights)),
        &mut problems,
    );
    problems.finish()?;
    check_references(
        conn,
        lists.villa_ids.as_deref(),
        patch.uuid("default_assignee_id"),
    )
    .await?;
    sqlx::query(concat!(
        "UPDATE task_rules t SET name = r.name, trigger = r.trigger, offset_days = coalesce(r.offset_days, 0),
                every_nights = r.every_nights, category = r.category, priority = coalesce(r.priority, 'MEDIUM'),
                title = r.title, default_assignee_id = r.default_assignee_id,
                include_owner_stays = coalesce(r.include_owner_stays, false),
                checklist = coalesce($3, t.checklist),
                consumables = CASE WHEN $4::jsonb IS NULL THEN t.consumables ELSE ",
        stored_consumables!("$4"),
        " END, revision = t.revision + 1, updated_at = now()
         FROM jsonb_populate_record((SELECT s FROM task_rules s WHERE s.id = $1), $2) r
         WHERE t.id = $1"
    ))
    .bind(id)
    .bind(patch.to_value())
    .bind(&lists.checklist)
    .bind(&lists.consumables)
    .execute(&mut *conn)
    .await
    .map_err(|e| gone(e, "defaultAssigneeId", "the staff member"))?;
    if let Some(villas) = &lists.villa_ids {
        set_villas(conn, id, villas).await?;
    }
    Ok(())
}

/// Archives a rule once: archiving it again changes nothing (its `archivedAt` stays). 404
/// `TASK_RULE_NOT_FOUND`.
pub async fn archive(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    let done = sqlx::query(
        "UPDATE task_rules SET archived_at = coalesce(archived_at, now()),
                updated_at = CASE WHEN archived_at IS NULL THEN now() ELSE updated_at END
         WHERE id = $1",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("task rule"));
    }
    Ok(())
}

// A rule row (alias `r`) as JSON, its villas sorted.
macro_rules! rule_json {
    () => {
        "jsonb_build_object('id', r.id, 'name', r.name, 'trigger', r.trigger, 'offsetDays', r.offset_days,
            'everyNights', r.every_nights,
            'villaIds', coalesce((SELECT jsonb_agg(v.villa_id ORDER BY v.villa_id) FROM task_rule_villas v
                                  WHERE v.task_rule_id = r.id), '[]'),
            'category', r.category, 'priority', r.priority, 'title', r.title,
            'defaultAssigneeId', r.default_assignee_id, 'includeOwnerStays', r.include_owner_stays,
            'checklist', r.checklist, 'consumables', r.consumables, 'archivedAt', r.archived_at,
            'createdBy', r.created_by, 'createdAt', r.created_at, 'updatedAt', r.updated_at)"
    };
}

/// The filters of the rule list.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// `true`: the archived rules only; otherwise the active ones.
    pub archived: bool,
    pub trigger: Option<&'static str>,
    /// The rules applying to this villa: those naming it and those naming none.
    pub villa_id: Option<Uuid>,
}

/// A page of rules, newest first.
pub async fn list(conn: &mut PgConnection, filter: &Filter, page: PageRequest) -> Result<JsonPage> {
    let list = ListSql {
        count_from: " FROM task_rules r",
        item: rule_json!(),
        from: " FROM task_rules r",
        order: "r.created_at DESC, r.id DESC",
    };
    json_page(conn, &list, page, |sql| {
        sql.push(if filter.archived {
            " WHERE r.archived_at IS NOT NULL"
        } else {
            " WHERE r.archived_at IS NULL"
        });
        if let Some(trigger) = filter.trigger {
            sql.push(" AND r.trigger = ").push_bind(trigger);
        }
        if let Some(villa) = filter.villa_id {
            sql.push(
                " AND (NOT EXISTS (SELECT 1 FROM task_rule_villas v WHERE v.task_rule_id = r.id)
                  OR EXISTS (SELECT 1 FROM task_rule_villas v WHERE v.task_rule_id = r.id AND v.villa_id = ",
            )
            .push_bind(villa)
            .push("))");
        }
    })
    .await
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        rule_json!(),
        " FROM task_rules r WHERE r.id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("task rule"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_read_with_defaults_and_every_bad_member_named() {
        let body = json!({
            "villaIds": ["019a0000-0000-7000-8000-000000000002", "019a0000-0000-7000-8000-000000000001",
                         "019a0000-0000-7000-8000-000000000002", "nope"],
            "checklist": [{"text": " Towels ", "kind": "photo_required"}, {"text": ""}, {"text": "x", "kind": "LOOK"}],
            "consumables": [{"itemSku": "SOAP", "perStay": 2}, {"itemSku": "TP", "perNight": "0.5"},
                            {"itemSku": "X"}, {"itemSku": "Y", "perStay": 1.2345}]
        });
        let mut problems = Problems::new();
        let lists = read_lists(body.as_object().unwrap(), &mut problems);
        let villas: Vec<usize> = lists.villa_ids.unwrap().iter().map(|(i, _)| *i).collect();
        assert_eq!(villas, [1, 0]);
        assert_eq!(
            lists.checklist.unwrap(),
            json!([{"text": "Towels", "kind": "PHOTO_REQUIRED", "failCategory": "GENERAL"}])
        );
        assert_eq!(
            lists.consumables.unwrap(),
            json!([{"itemSku": "SOAP", "perStay": "2", "perNight": "0"},
                   {"itemSku": "TP", "perStay": "0", "perNight": "0.5"}])
        );
        let Err(Error::Validation(fields)) = problems.finish() else {
            panic!()
        };
        let names: Vec<_> = fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(
            names,
            [
                "villaIds[3]",
                "checklist[1].text",
                "checklist[2].kind",
                "consumables[2]",
                "consumables[3].perStay"
            ]
        );
    }
}
