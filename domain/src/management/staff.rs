//! Staff and their assignment to villas. The wizard's step 7 sets a villa's team in one go.

use serde_json::{Map, Value};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::crypto::FieldCipher;
use crate::pagination::PageRequest;
use crate::record::{
    FieldSpec, Kind, Patch, field, is_email, is_international_phone, members, parse_patch,
    required, to_e164,
};
use crate::{Error, Problems, Result};

pub const STAFF_ROLES: &[&str] = &[
    "HOUSEKEEPER",
    "GARDENER",
    "POOL_TECHNICIAN",
    "MAINTENANCE_TECHNICIAN",
    "VILLA_MANAGER",
    "CHEF",
    "SECURITY",
    "DRIVER",
];

/// One member of a villa's team as step 7 sends it.
#[derive(Debug, Clone)]
pub struct TeamMember {
    /// An existing staff member (updated and assigned); without it one is created.
    pub id: Option<Uuid>,
    pub first_name: String,
    pub last_name: Option<String>,
    pub role: String,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub is_primary: bool,
}

/// Checks step 7's `staff` array: each member needs a name (`firstName`, or `name` which is
/// split at its first space) and a role; phone and email are checked when given; at most one
/// primary per role.
pub fn parse_team(
    raw: Option<&Value>,
    prefix: &str,
    problems: &mut Problems,
) -> Option<Vec<TeamMember>> {
    let name = format!("{prefix}staff");
    let items = members::items(raw, &name, 200, problems)?;
    let mut team = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let p = format!("{name}[{i}].");
        let Some(obj) = members::object(item, &name, i, problems) else {
            continue;
        };
        let before = problems.len();
        let id = members::id(obj, &p, problems);
        let full = members::text(obj, "name", &p, 200, problems);
        let mut first = members::text(obj, "firstName", &p, 100, problems);
        let mut last = members::text(obj, "lastName", &p, 100, problems);
        if first.is_none()
            && let Some(full) = full
        {
            let mut parts = full.splitn(2, ' ');
            first = parts.next().map(str::to_owned);
            last = last.or_else(|| parts.next().map(|s| s.trim().to_owned()));
        }
        if first.is_none() {
            problems.push(
                format!("{p}firstName"),
                "required",
                "firstName (or name) is required",
            );
        }
        let role = members::text(obj, "role", &p, 50, problems).map(|r| r.to_uppercase());
        match &role {
            None => problems.push(format!("{p}role"), "required", "role is required"),
            Some(r) if !STAFF_ROLES.contains(&r.as_str()) => problems.push(
                format!("{p}role"),
                "invalid_value",
                format!("must be one of {}", STAFF_ROLES.join(", ")),
            ),
            Some(_) => {}
        }
        let phone = members::text(obj, "phone", &p, 40, problems);
        if phone.as_deref().is_some_and(|s| !is_international_phone(s)) {
            problems.push(
                format!("{p}phone"),
                "invalid_format",
                "must be a phone number in international format: + then 7 to 15 digits",
            );
        }
        let email = members::text(obj, "email", &p, 254, problems);
        if email.as_deref().is_some_and(|s| !is_email(s)) {
            problems.push(
                format!("{p}email"),
                "invalid_format",
                "must be an email address like name@example.com",
            );
        }
        let is_primary = members::flag(obj, "isPrimary", &p, false, problems);
        if problems.len() > before {
            continue;
        }
        let (Some(first_name), Some(role)) = (first, role) else {
            continue;
        };
        if is_primary
            && team
                .iter()
                .any(|m: &TeamMember| m.is_primary && m.role == role)
        {
            problems.push(
                format!("{p}isPrimary"),
                "duplicate",
                format!("only one primary {role} per villa"),
            );
            continue;
        }
        team.push(TeamMember {
            id,
            first_name,
            last_name: last,
            role,
            phone,
            email,
            is_primary,
        });
    }
    Some(team)
}

/// Makes `team` the villa's whole team: existing members (by id) are updated, new ones created,
/// and assignments of anyone not listed are removed (the staff records stay, for other villas).
pub async fn replace_team(
    conn: &mut PgConnection,
    villa_id: Uuid,
    team: &[TeamMember],
) -> Result<()> {
    sqlx::query("DELETE FROM villa_staff WHERE villa_id = $1")
        .bind(villa_id)
        .execute(&mut *conn)
        .await?;
    for m in team {
        let id = match m.id {
            Some(id) => {
                let found = sqlx::query(
                    "UPDATE staff SET first_name = $2, last_name = $3, phone = $4, email = $5, updated_at = now()
                     WHERE id = $1",
                )
                .bind(id)
                .bind(&m.first_name)
                .bind(&m.last_name)
                .bind(&m.phone)
                .bind(&m.email)
                .execute(&mut *conn)
                .await?;
                if found.rows_affected() == 0 {
                    return Err(Error::NotFound("staff member"));
                }
                id
            }
            None => {
                let id = Uuid::now_v7();
                sqlx::query(
                    "INSERT INTO staff (id, first_name, last_name, phone, email, default_role) VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(id)
                .bind(&m.first_name)
                .bind(&m.last_name)
                .bind(&m.phone)
                .bind(&m.email)
                .bind(&m.role)
                .execute(&mut *conn)
                .await?;
                id
            }
        };
        sqlx::query(
            "INSERT INTO villa_staff (villa_id, staff_id, role, is_primary) VALUES ($1, $2, $3, $4)
             ON CONFLICT (villa_id, staff_id) DO UPDATE SET role = EXCLUDED.role, is_primary = EXCLUDED.is_primary",
        )
        .bind(villa_id)
        .bind(id)
        .bind(&m.role)
        .bind(m.is_primary)
        .execute(&mut *conn)
        .await
        .map_err(|e| crate::on_unique_violation(e, "staff", "only one primary per role per villa"))?;
    }
    Ok(())
}

/// The villa's team as the API shows it.
pub async fn team_of_villa(conn: &mut PgConnection, villa_id: Uuid) -> Result<Vec<Value>> {
    Ok(sqlx::query_scalar(
        "SELECT jsonb_build_object('id', s.id, 'villaId', vs.villa_id, 'firstName', s.first_name, 'lastName', s.last_name,
                'name', concat_ws(' ', s.first_name, s.last_name), 'role', vs.role, 'phone', s.phone, 'email', s.email,
                'isPrimary', vs.is_primary, 'isActive', s.is_active)
         FROM villa_staff vs JOIN staff s ON s.id = vs.staff_id
         WHERE vs.villa_id = $1 ORDER BY vs.role, vs.is_primary DESC, s.first_name",
    )
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// A member of a villa's team as [`team_of_villa`] shows it (the OpenAPI description).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the JSON built in SQL
pub struct TeamMemberView {
    /// The staff member.
    id: Uuid,
    villa_id: Uuid,
    first_name: String,
    last_name: Option<String>,
    /// First and last name.
    name: String,
    role: String,
    phone: Option<String>,
    email: Option<String>,
    is_primary: bool,
    is_active: bool,
}

/// The JSON Schema of one member of step 7's `staff`, as [`parse_team`] checks it.
pub fn team_member_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "required": ["role"],
        "description": "firstName, or name (split at its first space), is required.",
        "properties": {
            "id": {"type": ["string", "null"], "format": "uuid", "description": "An existing staff member, updated and assigned; without it one is created."},
            "firstName": {"type": ["string", "null"], "maxLength": 100},
            "lastName": {"type": ["string", "null"], "maxLength": 100},
            "name": {"type": ["string", "null"], "maxLength": 200},
            "role": {"type": "string", "enum": STAFF_ROLES, "description": "Accepted in any letter case."},
            "phone": {"type": ["string", "null"], "pattern": crate::record::PHONE_PATTERN, "maxLength": 40},
            "email": {"type": ["string", "null"], "format": "email", "maxLength": 254},
            "isPrimary": {"type": ["boolean", "null"], "description": "At most one primary per role."},
        },
        "anyOf": [
            {"required": ["firstName"], "properties": {"firstName": {"type": "string", "pattern": "\\S"}}},
            {"required": ["name"], "properties": {"name": {"type": "string", "pattern": "\\S"}}},
        ],
    })
}

/// A staff member as `POST /management/staff` creates it. `defaultRole` is the role they are
/// usually assigned with (`role` is accepted as its alias).
pub const STAFF_FIELDS: &[FieldSpec] = &[
    required("firstName", "first_name", Kind::Text(100)),
    required("lastName", "last_name", Kind::Text(100)),
    required("defaultRole", "default_role", Kind::OneOf(STAFF_ROLES)),
    field("email", "email", Kind::Email),
    field("phone", "phone", Kind::Phone),
    field("nationality", "nationality", Kind::Text(100)),
    // The person's login (`sub` of their token): hours they log themselves count against the
    // same day as hours logged for them.
    field("identitySubject", "identity_subject", Kind::Text(255)),
];

/// Checks a new staff member; the phone is stored in E.164 form.
pub fn parse_new(
    input: &Map<String, Value>,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    let mut input = input.clone();
    if !input.contains_key("defaultRole")
        && let Some(role) = input.get("role").cloned()
    {
        input.insert("defaultRole".into(), role);
    }
    let mut patch = parse_patch(STAFF_FIELDS, &input, "", true, cipher, problems);
    to_e164(&mut patch, &[("phone", "phone")], problems);
    patch
}

// A staff row (alias `s`) with its villa assignments, as JSON.
macro_rules! staff_json {
    () => {
        "jsonb_build_object('id', s.id, 'firstName', s.first_name, 'lastName', s.last_name,
            'name', concat_ws(' ', s.first_name, s.last_name), 'email', s.email, 'phone', s.phone,
            'defaultRole', s.default_role, 'nationality', s.nationality, 'isActive', s.is_active,
            'identitySubject', s.identity_subject,
            'assignments', coalesce((SELECT jsonb_agg(jsonb_build_object('villaId', vs.villa_id,
                    'villaName', v.villa_name, 'role', vs.role, 'isPrimary', vs.is_primary)
                    ORDER BY v.villa_name, vs.villa_id)
                FROM villa_staff vs JOIN villas v ON v.id = vs.villa_id WHERE vs.staff_id = s.id), '[]'),
            'createdAt', s.created_at, 'updatedAt', s.updated_at)"
    };
}

/// A staff member as `staff_json!` renders it (the OpenAPI description of that JSON).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the JSON built in SQL
pub struct StaffView {
    id: Uuid,
    first_name: String,
    last_name: Option<String>,
    /// First and last name.
    name: String,
    email: Option<String>,
    phone: Option<String>,
    default_role: String,
    nationality: Option<String>,
    is_active: bool,
    /// The person's login at the identity provider (`sub` of their token), if linked.
    identity_subject: Option<String>,
    assignments: Vec<StaffVillaAssignment>,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

/// One villa a staff member works at.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct StaffVillaAssignment {
    villa_id: Uuid,
    villa_name: String,
    role: String,
    is_primary: bool,
}

/// An assignment as [`assign`] answers it.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct AssignmentView {
    villa_id: Uuid,
    staff_id: Uuid,
    role: String,
    is_primary: bool,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

/// A login (`identity_subject`) is one person's: a second member with it is a 400 on the field.
fn login_taken(e: sqlx::Error) -> Error {
    crate::on_unique_violation(
        e,
        "identitySubject",
        "another staff member has this identity subject",
    )
}

/// Checks a change to a staff member: any subset of the fields (a required one cannot be
/// cleared); the phone is stored in E.164 form.
pub fn parse_update(
    input: &Map<String, Value>,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    let mut patch = parse_patch(STAFF_FIELDS, input, "", false, cipher, problems);
    to_e164(&mut patch, &[("phone", "phone")], problems);
    patch
}

/// Applies `patch` to the staff member (only the fields it holds change): 404 when there is no
/// such member, 400 on `identitySubject` when another member has that login.
pub async fn update(conn: &mut PgConnection, id: Uuid, patch: &Patch) -> Result<()> {
    let updated = sqlx::query(
        "UPDATE staff s SET first_name = p.first_name, last_name = p.last_name, email = p.email,
             phone = p.phone, default_role = p.default_role, nationality = p.nationality,
             identity_subject = p.identity_subject, updated_at = now()
         FROM staff current,
              jsonb_populate_record(NULL::staff, to_jsonb(current) || $2) p
         WHERE s.id = $1 AND current.id = $1",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await
    .map_err(login_taken)?;
    if updated.rows_affected() == 0 {
        return Err(Error::NotFound("staff member"));
    }
    Ok(())
}

pub async fn create(conn: &mut PgConnection, patch: &Patch) -> Result<Uuid> {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO staff (id, first_name, last_name, email, phone, default_role, nationality, identity_subject)
         SELECT $1, first_name, last_name, email, phone, default_role, nationality, identity_subject
         FROM jsonb_populate_record(NULL::staff, $2)",
    )
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await
    .map_err(login_taken)?;
    Ok(id)
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    sqlx::query_scalar(concat!(
        "SELECT ",
        staff_json!(),
        " FROM staff s WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("staff member"))
}

/// The staff list filter, already validated.
#[derive(Debug, Clone, Default)]
pub struct StaffFilter {
    pub role: Option<&'static str>,
    /// Case-insensitive substring of first and last name or email.
    pub search: Option<String>,
}

pub fn parse_role(field: &str, raw: &str) -> Result<&'static str> {
    crate::error::one_of(
        field,
        &raw.trim().to_uppercase(),
        STAFF_ROLES,
        |r: &'static str| r,
    )
}

impl StaffFilter {
    /// The conditions of the filters given, each value bound ([`json_page`] says why only
    /// those).
    fn push_conditions(&self, sql: &mut sqlx::QueryBuilder<sqlx::Postgres>) {
        sql.push(" WHERE true");
        if let Some(role) = self.role {
            sql.push(" AND s.default_role = ").push_bind(role);
        }
        if let Some(search) = &self.search {
            sql.push(
                " AND lower(s.first_name || ' ' || coalesce(s.last_name, '') || ' ' || coalesce(s.email, '')) LIKE '%' || ",
            )
            .push_bind(crate::management::villas::like_pattern(search))
            .push(" || '%'");
        }
    }
}

/// A page of staff, newest first, and the total matching the filter.
pub async fn list(
    conn: &mut PgConnection,
    filter: &StaffFilter,
    page: PageRequest,
) -> Result<crate::pagination::JsonPage> {
    let list = crate::pagination::ListSql {
        count_from: " FROM staff s",
        item: staff_json!(),
        from: " FROM staff s",
        order: "s.created_at DESC, s.id DESC",
    };
    crate::pagination::json_page(conn, &list, page, |sql| filter.push_conditions(sql)).await
}

/// One assignment of a staff member to a villa.
#[derive(Debug, Clone)]
pub struct Assignment {
    pub staff_id: Uuid,
    pub role: &'static str,
    pub is_primary: bool,
}

/// Assigns a staff member to a villa, or updates their assignment there. A new primary for a
/// role unsets the villa's previous primary for that role in the same transaction; the villa row
/// is locked first so that two assignments to one villa are applied one after the other. Returns
/// the assignment and whether it is new.
pub async fn assign(
    conn: &mut PgConnection,
    villa_id: Uuid,
    a: &Assignment,
) -> Result<(Value, bool)> {
    let villa: Option<bool> =
        sqlx::query_scalar("SELECT true FROM villas WHERE id = $1 FOR NO KEY UPDATE")
            .bind(villa_id)
            .fetch_optional(&mut *conn)
            .await?;
    if villa.is_none() {
        return Err(Error::NotFound("villa"));
    }
    let staff: Option<bool> = sqlx::query_scalar("SELECT true FROM staff WHERE id = $1")
        .bind(a.staff_id)
        .fetch_optional(&mut *conn)
        .await?;
    if staff.is_none() {
        return Err(Error::NotFound("staff member"));
    }
    if a.is_primary {
        sqlx::query(
            "UPDATE villa_staff SET is_primary = false, updated_at = now()
             WHERE villa_id = $1 AND role = $2 AND is_primary AND staff_id <> $3",
        )
        .bind(villa_id)
        .bind(a.role)
        .bind(a.staff_id)
        .execute(&mut *conn)
        .await?;
    }
    let (row, created): (Value, bool) = sqlx::query_as(
        "INSERT INTO villa_staff (villa_id, staff_id, role, is_primary) VALUES ($1, $2, $3, $4)
         ON CONFLICT (villa_id, staff_id) DO UPDATE
             SET role = EXCLUDED.role, is_primary = EXCLUDED.is_primary, updated_at = now()
         RETURNING jsonb_build_object('villaId', villa_id, 'staffId', staff_id, 'role', role,
             'isPrimary', is_primary, 'createdAt', created_at, 'updatedAt', updated_at),
             (xmax = 0)",
    )
    .bind(villa_id)
    .bind(a.staff_id)
    .bind(a.role)
    .bind(a.is_primary)
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| {
        crate::on_unique_violation(
            e,
            "isPrimary",
            "the villa already has a primary for this role",
        )
    })?;
    Ok((row, created))
}

/// Ends a staff member's assignment to a villa (the staff record stays).
pub async fn unassign(conn: &mut PgConnection, villa_id: Uuid, staff_id: Uuid) -> Result<()> {
    let done = sqlx::query("DELETE FROM villa_staff WHERE villa_id = $1 AND staff_id = $2")
        .bind(villa_id)
        .bind(staff_id)
        .execute(&mut *conn)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("staff assignment"));
    }
    Ok(())
}

/// The staff member's default role (`NotFound` when there is no such staff member).
pub async fn default_role(conn: &mut PgConnection, id: Uuid) -> Result<&'static str> {
    let role: String = sqlx::query_scalar("SELECT default_role FROM staff WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("staff member"))?;
    parse_role("role", &role)
}
