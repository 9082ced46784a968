//! `/maintenance/task-rules`: the rules that turn stays into work orders (turnovers,
//! inspections): list, get, create, `PATCH` and archive. Reads are for every role; creating,
//! changing and archiving a rule are managers' and admins' (the permission table says so). Each
//! of those enqueues the turnover generation in its transaction (`jobs::maintenance::
//! GenerateTurnovers`), so a new rule covers the stays already on the books within seconds.

use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        TRIGGERS, WORK_ORDER_CATEGORIES,
        task_rules::{
            self, Filter, MAX_CHECKLIST, MAX_CHECKLIST_TEXT, MAX_CONSUMABLES, MAX_SKU, MAX_VILLAS,
            QUANTITY_PLACES, TASK_RULE_FIELDS,
        },
        views,
    },
    record::{AMOUNT_MAX, SchemaUse, json_schema, parse_patch},
};
use jobs::{Job, maintenance::GenerateTurnovers};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page, PageQuery},
    query::{bool_filter, id_filter, set_filter},
    state::AppState,
};

fn trigger_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(TRIGGERS)
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct TaskRuleQuery {
    /// `true`: the archived rules only; absent or `false`: the active ones.
    #[param(value_type = Option<bool>)]
    archived: Option<String>,
    #[param(schema_with = trigger_param)]
    trigger: Option<String>,
    /// The rules applying to this villa: those naming it and those naming no villa.
    #[param(value_type = Option<Uuid>)]
    villa_id: Option<String>,
}

/// Task rules, newest first: the active ones unless `archived=true`.
#[utoipa::path(get, operation_id = "maintenance_task_rules_list", path = "/maintenance/task-rules", tag = "maintenance",
    params(PageQuery, TaskRuleQuery),
    responses((status = 200, body = Page<views::TaskRule>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<TaskRuleQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let filter = Filter {
        archived: bool_filter(&mut problems, "archived", q.archived.as_deref()) == Some(true),
        trigger: set_filter(&mut problems, "trigger", q.trigger.as_deref(), TRIGGERS),
        villa_id: id_filter(&mut problems, "villaId", q.villa_id.as_deref()),
    };
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        task_rules::list(&mut conn, &filter, page).await?,
        page,
    ))
}

/// One task rule, archived or not.
#[utoipa::path(get, operation_id = "maintenance_task_rules_get", path = "/maintenance/task-rules/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::TaskRule)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(task_rules::get(&mut conn, id).await?))
}

/// The list members of a rule's body, beside its field table's.
fn with_lists(mut schema: Value) -> Value {
    let categories = WORK_ORDER_CATEGORIES;
    let quantity = json!({"type": ["number", "null"], "minimum": 0, "maximum": AMOUNT_MAX,
        "description": format!("At most {QUANTITY_PLACES} decimal places; default 0.")});
    schema["properties"]["villaIds"] = json!({"type": ["array", "null"], "maxItems": MAX_VILLAS,
        "items": {"type": "string", "format": "uuid"},
        "description": "The villas it applies to (each once; repeats collapse); empty: every villa linked to a listing."});
    schema["properties"]["checklist"] = json!({"type": ["array", "null"], "maxItems": MAX_CHECKLIST,
        "items": {"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": MAX_CHECKLIST_TEXT, "pattern": "\\S"},
            "kind": {"type": ["string", "null"], "enum": ["CHECK", "PHOTO_REQUIRED", null],
                     "description": "Default CHECK; any letter case."},
            "failCategory": {"type": ["string", "null"], "enum": categories.iter().map(|c| json!(c)).chain([Value::Null]).collect::<Vec<_>>(),
                     "description": "The category of the repair a failed item opens; default GENERAL."}}}});
    schema["properties"]["consumables"] = json!({"type": ["array", "null"], "maxItems": MAX_CONSUMABLES,
        "items": {"type": "object", "required": ["itemSku"], "properties": {
            "itemSku": {"type": "string", "minLength": 1, "maxLength": MAX_SKU, "pattern": "\\S"},
            "perStay": quantity, "perNight": quantity},
            "description": "What a work order draws from its villa's stock item of this SKU: perStay and perNight, not both 0; one line per SKU."}});
    schema
}

crate::computed_schema!(
    /// A new task rule. `everyNights` is required for MID_STAY and refused otherwise; defaults:
    /// `offsetDays` 0, `priority` MEDIUM, `title` the rule's name, `includeOwnerStays` false, no
    /// villas (every villa linked to a listing), no checklist, no consumables.
    TaskRuleCreate => with_lists(json_schema(TASK_RULE_FIELDS, SchemaUse::Create))
);

/// Adds a task rule (managers and admins). Every bad field is a 400 naming it (`villaIds[2]`,
/// `checklist[3].text`, `consumables[0].perNight`, ...), an unknown villa or staff member too.
#[utoipa::path(post, operation_id = "maintenance_task_rules_create", path = "/maintenance/task-rules", tag = "maintenance",
    request_body = TaskRuleCreate,
    responses((status = 201, body = views::TaskRule)))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let mut patch = parse_patch(
        TASK_RULE_FIELDS,
        &body,
        "",
        true,
        &state.cipher,
        &mut problems,
    );
    task_rules::check_every_nights(&mut patch, &body, None, &mut problems);
    let lists = task_rules::read_lists(&body, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = task_rules::create(&mut tx, &patch, &lists, &user.subject).await?;
    let rule = task_rules::get(&mut tx, id).await?;
    commit_with_generation(&state, tx).await?;
    Ok((StatusCode::CREATED, Json(rule)))
}

crate::computed_schema!(
    /// What a `PATCH` changes: any subset. `villaIds`, `checklist` and `consumables` replace the
    /// stored ones; `null` resets a field with a default to it.
    TaskRuleUpdate => with_lists(json_schema(TASK_RULE_FIELDS, SchemaUse::Patch))
);

/// Changes what the body names of a rule (managers and admins). A new `trigger` is checked with
/// the stored `everyNights` (leaving MID_STAY without naming `everyNights` clears it); an archived
/// rule is 409 `TASK_RULE_ARCHIVED`.
#[utoipa::path(patch, operation_id = "maintenance_task_rules_update", path = "/maintenance/task-rules/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)), request_body = TaskRuleUpdate,
    responses((status = 200, body = views::TaskRule),
        (status = 409, description = "`TASK_RULE_ARCHIVED`")))]
pub async fn update(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(
        TASK_RULE_FIELDS,
        &body,
        "",
        false,
        &state.cipher,
        &mut problems,
    );
    let lists = task_rules::read_lists(&body, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    task_rules::update(&mut tx, id, patch, &body, &lists).await?;
    let rule = task_rules::get(&mut tx, id).await?;
    commit_with_generation(&state, tx).await?;
    Ok(Json(rule))
}

/// Archives a rule (managers and admins): it generates nothing more, and the work orders it made
/// stay as they are. Archiving it again answers it unchanged (the first `archivedAt`).
#[utoipa::path(post, operation_id = "maintenance_task_rules_archive", path = "/maintenance/task-rules/{id}/archive", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::TaskRule)))]
pub async fn archive(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut tx = state.pool.begin().await?;
    task_rules::archive(&mut tx, id).await?;
    let rule = task_rules::get(&mut tx, id).await?;
    commit_with_generation(&state, tx).await?;
    Ok(Json(rule))
}

/// Commits a change of a rule with the turnover generation enqueued in its transaction, then
/// hands the job to its queue: the work orders follow every change of a rule.
async fn commit_with_generation(
    state: &AppState,
    mut tx: sqlx::Transaction<'static, sqlx::Postgres>,
) -> Result<(), AppError> {
    let generation = GenerateTurnovers::default().enqueue(&mut tx).await?;
    tx.commit().await?;
    state.queues.push_in_background(vec![generation]);
    Ok(())
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update))
        .routes(routes!(archive))
}
