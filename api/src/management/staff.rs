//! `/management/staff` and `/management/villas/{villaId}/staff`: staff members, and their
//! assignment to villas (at most one primary per role and villa).

use crate::paging::{JsonPageAnswer, PageQuery};
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    management::staff::{self, Assignment, StaffFilter},
    record::members,
};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Items, created, search_term};
use crate::{
    error::AppError,
    extract::Object,
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StaffListQuery {
    /// Default role: HOUSEKEEPER, GARDENER, POOL_TECHNICIAN, MAINTENANCE_TECHNICIAN,
    /// VILLA_MANAGER, CHEF, SECURITY or DRIVER.
    role: Option<String>,
    /// Case-insensitive substring of first and last name or email.
    search: Option<String>,
}

/// Lists staff, newest first, each with their villa assignments.
#[utoipa::path(get, operation_id = "management_staff_list", path = "/management/staff", tag = "management", params(PageQuery, StaffListQuery),
    responses((status = 200, body = super::Page<domain::management::staff::StaffView>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<StaffListQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let role = q
        .role
        .as_deref()
        .and_then(|r| problems.check(staff::parse_role("role", r)));
    let search = search_term(&mut problems, q.search.as_deref());
    problems.finish()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        staff::list(&mut conn, &StaffFilter { role, search }, page).await?,
        page,
    ))
}

/// One staff member, with their villa assignments.
#[utoipa::path(get, operation_id = "management_staff_get", path = "/management/staff/{id}", tag = "management", params(("id" = Uuid, Path)),
    responses((status = 200, body = domain::management::staff::StaffView)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<Value>, AppError> {
    let mut conn = state.pool.acquire().await?;
    Ok(Json(staff::get(&mut conn, id).await?))
}

/// Creates a staff member.
#[utoipa::path(post, operation_id = "management_staff_create", path = "/management/staff", tag = "management",
    request_body = StaffCreate,
    responses((status = 201, body = domain::management::staff::StaffView)))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let patch = staff::parse_new(&body, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = staff::create(&mut tx, &patch).await?;
    let member = staff::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok(created(member))
}

/// Changes a staff member: only the fields sent change (`null` or `""` clears an optional one).
/// Linking `identitySubject` (the person's login, `sub` of their token) makes the hours they log
/// themselves count against the same day as hours logged for them.
#[utoipa::path(patch, operation_id = "management_staff_update", path = "/management/staff/{id}", tag = "management",
    params(("id" = Uuid, Path)), request_body = StaffUpdate,
    responses((status = 200, body = domain::management::staff::StaffView)))]
pub async fn update(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Json<Value>, AppError> {
    let mut problems = Problems::new();
    let patch = staff::parse_update(&body, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    staff::update(&mut tx, id, &patch).await?;
    let member = staff::get(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Json(member))
}

/// Assigns a staff member to the villa, or updates their assignment (201 when new, 200 when
/// updated). Unknown villa or staff member: 404.
#[utoipa::path(post, operation_id = "management_villa_staff_assign", path = "/management/villas/{villaId}/staff", tag = "management",
    params(("villaId" = Uuid, Path)), request_body = AssignmentBody,
    responses((status = 201, body = domain::management::staff::AssignmentView, description = "Assigned"),
        (status = 200, body = domain::management::staff::AssignmentView, description = "The assignment was updated"),
        (status = 404, description = "No such villa or staff member")))]
pub async fn assign(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Object>,
) -> Result<(StatusCode, Json<Value>), AppError> {
    let mut problems = Problems::new();
    let staff_id = match body.get("staffId") {
        Some(Value::String(s)) if s.trim().parse::<Uuid>().is_ok() => s.trim().parse().ok(),
        None | Some(Value::Null) => {
            problems.push("staffId", "required", "staffId is required");
            None
        }
        Some(_) => {
            problems.push("staffId", "invalid_format", "staffId must be a UUID");
            None
        }
    };
    let role = members::text(&body, "role", "", 50, &mut problems)
        .and_then(|r| problems.check(staff::parse_role("role", &r)));
    let is_primary = members::flag(&body, "isPrimary", "", false, &mut problems);
    let staff_id = problems.finish_with(staff_id)?;
    let mut tx = state.pool.begin().await?;
    let role = match role {
        Some(r) => r,
        None => staff::default_role(&mut tx, staff_id).await?,
    };
    let assignment = Assignment {
        staff_id,
        role,
        is_primary,
    };
    let (record, is_new) = staff::assign(&mut tx, villa_id, &assignment).await?;
    tx.commit().await?;
    Ok((
        if is_new {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        },
        Json(record),
    ))
}

/// The villa's team: everyone assigned to it, with their role there.
#[utoipa::path(get, operation_id = "management_villa_staff_list", path = "/management/villas/{villaId}/staff", tag = "management",
    params(("villaId" = Uuid, Path)),
    responses((status = 200, body = Items<domain::management::staff::TeamMemberView>)))]
pub async fn team(
    State(state): State<AppState>,
    ApiPath(villa_id): ApiPath<Uuid>,
) -> Result<Json<Items<Value>>, AppError> {
    let mut conn = state.pool.acquire().await?;
    domain::management::villas::ensure_exists(&mut conn, villa_id).await?;
    Ok(Json(Items {
        data: staff::team_of_villa(&mut conn, villa_id).await?,
    }))
}

/// Ends the staff member's assignment to the villa (the staff record stays).
#[utoipa::path(delete, operation_id = "management_villa_staff_unassign", path = "/management/villas/{villaId}/staff/{staffId}", tag = "management",
    params(("villaId" = Uuid, Path), ("staffId" = Uuid, Path)),
    responses((status = 204, description = "Unassigned")))]
pub async fn unassign(
    State(state): State<AppState>,
    ApiPath((villa_id, staff_id)): ApiPath<(Uuid, Uuid)>,
) -> Result<StatusCode, AppError> {
    let mut conn = state.pool.acquire().await?;
    staff::unassign(&mut conn, villa_id, staff_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update))
        .routes(routes!(team, assign))
        .routes(routes!(unassign))
}

crate::computed_schema!(
    /// A new staff member (`role` is accepted for `defaultRole`); the phone is stored in E.164
    /// form.
    StaffCreate => domain::record::json_schema(
        domain::management::staff::STAFF_FIELDS,
        domain::record::SchemaUse::Create,
    )
);
crate::computed_schema!(
    /// An assignment: the role at this villa defaults to the member's default role; a new primary
    /// replaces the villa's previous primary for that role.
    AssignmentBody => serde_json::json!({
        "type": "object",
        "required": ["staffId"],
        "properties": {
            "staffId": {"type": "string", "format": "uuid"},
            "role": {"type": ["string", "null"], "enum": domain::management::staff::STAFF_ROLES.iter().map(|r| serde_json::Value::from(*r)).chain([serde_json::Value::Null]).collect::<Vec<_>>()},
            "isPrimary": {"type": ["boolean", "null"], "description": "Default false."},
        },
    })
);

crate::computed_schema!(
    /// A change to a staff member: any subset of its fields.
    StaffUpdate => domain::record::json_schema(
        domain::management::staff::STAFF_FIELDS,
        domain::record::SchemaUse::Patch,
    )
);
