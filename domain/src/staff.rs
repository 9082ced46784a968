//! Staff and their assignment to villas. The wizard's step 7 sets a villa's team in one go.

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::record::{is_email, is_international_phone, members};
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
