//! `/maintenance/pmp`: planned-maintenance templates and schedules. Creating a schedule enqueues
//! the generation of its due work orders at once (the `maintenance` queue's job; the scheduler
//! also runs it every `PM_GENERATE_INTERVAL_SECS`). A schedule starts at most a year and a day
//! back ([`pmp::MAX_START_DAYS_BACK`]) and its missed occurrences get work orders only within
//! `PM_CATCH_UP_DAYS`.

use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    maintenance::{
        pmp::{self, MAX_CHECKLIST, MAX_CHECKLIST_ITEM, SCHEDULE_FIELDS, TEMPLATE_FIELDS, Window},
        views,
    },
    record::{SchemaUse, json_schema, parse_patch},
};
use jobs::{Job, maintenance::GeneratePlannedWork};
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    paging::{JsonPageAnswer, Page, PageQuery},
    state::AppState,
};

/// Templates by name: the platform's starting set and those added since.
#[utoipa::path(get, operation_id = "maintenance_pmp_templates_list", path = "/maintenance/pmp/templates", tag = "maintenance",
    params(PageQuery),
    responses((status = 200, body = Page<views::Template>)))]
pub async fn templates(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = q.read(&mut problems);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let found = pmp::templates(&mut conn, page).await?;
    Ok(JsonPageAnswer::new(found, page))
}

crate::computed_schema!(
    /// A template; its name is unique.
    TemplateCreate => {
        let mut schema = json_schema(TEMPLATE_FIELDS, SchemaUse::Create);
        schema["properties"]["checklist"] = json!({"type": ["array", "null"], "maxItems": MAX_CHECKLIST,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_CHECKLIST_ITEM, "pattern": "\\S"}});
        schema
    }
);

/// Adds a template (managers and admins). A name in use is a 400 on `name`.
#[utoipa::path(post, operation_id = "maintenance_pmp_templates_create", path = "/maintenance/pmp/templates", tag = "maintenance",
    request_body = TemplateCreate,
    responses((status = 201, body = views::Template)))]
pub async fn create_template(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(
        TEMPLATE_FIELDS,
        &body,
        "",
        true,
        &state.cipher,
        &mut problems,
    );
    let checklist = checklist(body.get("checklist"), &mut problems);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let template = pmp::create_template(&mut conn, &patch, &checklist).await?;
    Ok((StatusCode::CREATED, Json(template)))
}

/// `checklist`: up to [`MAX_CHECKLIST`] non-empty texts (absent: none).
fn checklist(raw: Option<&Value>, problems: &mut Problems) -> Vec<String> {
    let items = match raw {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.push(
                "checklist",
                "invalid_type",
                "checklist must be an array of texts",
            );
            return Vec::new();
        }
    };
    let Some(items) = domain::record::members::at_most(items, "checklist", MAX_CHECKLIST, problems)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str().map(str::trim) {
            Some(text) if !text.is_empty() && text.chars().count() <= MAX_CHECKLIST_ITEM => {
                out.push(text.to_owned())
            }
            _ => problems.push(
                format!("checklist[{i}]"),
                "invalid_value",
                format!("must be a text of 1 to {MAX_CHECKLIST_ITEM} characters"),
            ),
        }
    }
    out
}

/// Schedules, newest first, each with its next due date.
#[utoipa::path(get, operation_id = "maintenance_pmp_schedules_list", path = "/maintenance/pmp/schedules", tag = "maintenance",
    params(PageQuery),
    responses((status = 200, body = Page<views::Schedule>)))]
pub async fn schedules(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = q.read(&mut problems);
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    let found = pmp::schedules(&mut conn, page).await?;
    Ok(JsonPageAnswer::new(found, page))
}

/// One schedule with its next due date.
#[utoipa::path(get, operation_id = "maintenance_pmp_schedules_get", path = "/maintenance/pmp/schedules/{id}", tag = "maintenance",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = views::Schedule)))]
pub async fn schedule(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(pmp::schedule(&mut conn, id).await?))
}

crate::computed_schema!(
    /// A schedule of a template on an asset: `frequency` defaults to the template's,
    /// `basis` to SCHEDULED_DATE; `startDate` at most 366 days back and 10 years ahead.
    ScheduleCreate => json_schema(SCHEDULE_FIELDS, SchemaUse::Create)
);

/// Schedules a template on an asset; the work orders of the occurrences due within
/// `PM_LEAD_DAYS` are generated at once (a schedule starting today has its first work order
/// within seconds), and of the missed ones only those within `PM_CATCH_UP_DAYS`. `startDate`
/// more than 366 days back or 10 years ahead (in the company's day, `BUSINESS_TIME_ZONE`) is a
/// 400 on `startDate`. 404 `TEMPLATE_NOT_FOUND`, `ASSET_NOT_FOUND` or `STAFF_NOT_FOUND`.
#[utoipa::path(post, operation_id = "maintenance_pmp_schedules_create", path = "/maintenance/pmp/schedules", tag = "maintenance",
    request_body = ScheduleCreate,
    responses((status = 201, body = views::Schedule),
        (status = 404, description = "No such template, asset or staff member")))]
pub async fn create_schedule(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = parse_patch(
        SCHEDULE_FIELDS,
        &body,
        "",
        true,
        &state.cipher,
        &mut problems,
    );
    let today = state.core.business_time_zone.today();
    pmp::check_start(&patch, today, &mut problems);
    problems.finish()?;
    let settings = &state.core.planned_maintenance;
    let window = Window::new(today, settings.catch_up_days, settings.lead_days);
    let mut tx = state.pool.begin().await?;
    let id = pmp::create_schedule(&mut tx, &patch, &user.subject, window).await?;
    let generation = GeneratePlannedWork {
        tick: None,
        schedule_id: Some(id),
    }
    .enqueue(&mut tx)
    .await?;
    let schedule = pmp::schedule(&mut tx, id).await?;
    tx.commit().await?;
    state.queues.push_in_background(vec![generation]);
    Ok((StatusCode::CREATED, Json(schedule)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(templates, create_template))
        .routes(routes!(schedules, create_schedule))
        .routes(routes!(schedule))
}
