//! Owners of villas, individuals or companies, as the management surface lists, creates and
//! edits them. An owner can own several villas (`villas.owner_id`); the owner that the onboarding
//! wizard's step 2 writes ([`crate::onboarding::records::upsert_owner`]) is one of these.

use serde_json::{Map, Value};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::crypto::FieldCipher;
use crate::pagination::PageRequest;
use crate::record::{FieldSpec, Kind, Patch, field, parse_patch, render, required, to_e164};
use crate::{Error, Problems, Result};

pub const OWNER_TYPES: &[&str] = &["INDIVIDUAL", "COMPANY"];

pub const OWNER_FIELDS: &[FieldSpec] = &[
    // Defaults to INDIVIDUAL when an owner is first created; cannot be cleared.
    required("ownerType", "owner_type", Kind::OneOf(OWNER_TYPES)),
    field("firstName", "first_name", Kind::Text(100)),
    field("lastName", "last_name", Kind::Text(100)),
    field("email", "email", Kind::Email),
    field("phone", "phone", Kind::Phone),
    field("alternativePhone", "alternative_phone", Kind::Phone),
    field("nationality", "nationality", Kind::Text(100)),
    field("passportNumber", "passport_number", Kind::Text(50)),
    field("taxId", "tax_id", Kind::Text(50)),
    field("companyName", "company_name", Kind::Text(255)),
    field("registrationNumber", "registration_number", Kind::Text(100)),
    field("contactPerson", "contact_person", Kind::Text(255)),
    field("companyTaxId", "company_tax_id", Kind::Text(50)),
    field("address", "address", Kind::Text(500)),
    field("city", "city", Kind::Text(100)),
    field("country", "country", Kind::Text(100)),
    field("postalCode", "postal_code", Kind::Text(20)),
    field("preferredLanguage", "preferred_language", Kind::Text(50)),
    field(
        "communicationPreference",
        "communication_preference",
        Kind::OneOf(&["EMAIL", "PHONE", "WHATSAPP", "SMS"]),
    ),
    field("notes", "notes", Kind::Text(5000)),
];

/// What each owner type needs, as (JSON name, column).
const INDIVIDUAL_NEEDS: &[(&str, &str)] = &[
    ("firstName", "first_name"),
    ("lastName", "last_name"),
    ("phone", "phone"),
];
const COMPANY_NEEDS: &[(&str, &str)] = &[
    ("companyName", "company_name"),
    ("registrationNumber", "registration_number"),
    ("contactPerson", "contact_person"),
];

/// Checks a create (`stored` is `None`) or update body. The fields an owner type needs are
/// checked on the owner as it will be after the update, so changing `ownerType` asks for the
/// other type's fields. Phones are stored in E.164 form.
pub fn parse(
    input: &Map<String, Value>,
    stored: Option<&Map<String, Value>>,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    let creating = stored.is_none();
    let before = problems.len();
    let mut patch = parse_patch(OWNER_FIELDS, input, "", creating, cipher, problems);
    to_e164(
        &mut patch,
        &[
            ("phone", "phone"),
            ("alternativePhone", "alternative_phone"),
        ],
        problems,
    );
    super::terms::approval_terms(input, &mut patch, cipher, problems, true);
    if problems.len() > before {
        return patch;
    }
    let after = |column: &str| -> bool {
        let v = patch
            .columns
            .get(column)
            .or_else(|| stored.and_then(|s| s.get(column)));
        matches!(v, Some(Value::String(s)) if !s.trim().is_empty())
    };
    let owner_type = patch
        .columns
        .get("owner_type")
        .or_else(|| stored.and_then(|s| s.get("owner_type")))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let needs = match owner_type.as_str() {
        "INDIVIDUAL" => INDIVIDUAL_NEEDS,
        "COMPANY" => COMPANY_NEEDS,
        _ => &[],
    };
    for (name, column) in needs {
        if !after(column) {
            problems.push(
                *name,
                "required",
                format!("{name} is required for an {owner_type} owner"),
            );
        }
    }
    if !creating && patch.is_empty() && problems.len() == before {
        problems.push(
            "body",
            "required",
            "nothing to change: send at least one field of the owner",
        );
    }
    patch
}

macro_rules! owner_columns {
    () => {
        "owner_type, first_name, last_name, email, phone, alternative_phone, nationality, passport_number,
         tax_id, company_name, registration_number, contact_person, company_tax_id, address, city, country,
         postal_code, preferred_language, communication_preference, notes,
         approval_threshold_amount, approval_threshold_currency, management_fee_percent"
    };
}

// An owner row with the ids of its villas, as JSON (alias `o`).
macro_rules! owner_row {
    () => {
        "to_jsonb(o) || jsonb_build_object('villa_ids', coalesce(
            (SELECT jsonb_agg(v.id ORDER BY v.created_at, v.id) FROM villas v WHERE v.owner_id = o.id), '[]'))"
    };
}

/// The JSON Schema of an owner as [`render_owner`] shows it, from the same field table.
pub fn owner_schema() -> Value {
    let schema = crate::record::with_members(
        crate::record::json_schema(OWNER_FIELDS, crate::record::SchemaUse::Answer),
        serde_json::json!({
            "id": {"type": "string", "format": "uuid"},
            "villaIds": {"type": "array", "items": {"type": "string", "format": "uuid"}, "description": "The villas it owns, oldest first."},
            "createdAt": {"type": "string", "format": "date-time"},
            "updatedAt": {"type": "string", "format": "date-time"},
        }),
    );
    crate::record::with_members(schema, super::terms::terms_schema(true))
}

/// The owner as the management surface shows it: its fields, `villaIds`, timestamps.
fn render_owner(row: &Map<String, Value>) -> Value {
    let mut out = render(OWNER_FIELDS, row);
    out.insert(
        "approvalThreshold".into(),
        super::terms::render_threshold(row),
    );
    out.insert(
        "managementFeePercent".into(),
        row.get("management_fee_percent")
            .cloned()
            .unwrap_or(Value::Null),
    );
    for (json_name, column) in [
        ("id", "id"),
        ("villaIds", "villa_ids"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    ] {
        out.insert(
            json_name.into(),
            row.get(column).cloned().unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The stored row (as `to_jsonb`, plus `villa_ids`).
pub async fn stored(conn: &mut PgConnection, id: Uuid) -> Result<Map<String, Value>> {
    let row: Option<Value> = sqlx::query_scalar(concat!(
        "SELECT ",
        owner_row!(),
        " FROM owners o WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(object).ok_or(Error::NotFound("owner"))
}

pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    Ok(render_owner(&stored(conn, id).await?))
}

/// Creates an owner; `created_for_villa` when the onboarding wizard creates it for one villa
/// (it is then deleted with that villa, see `onboarding::delete_villa`).
pub async fn create(
    conn: &mut PgConnection,
    patch: &Patch,
    created_for_villa: Option<Uuid>,
) -> Result<Uuid> {
    let id = Uuid::now_v7();
    sqlx::query(concat!(
        "INSERT INTO owners (id, created_for_villa, ",
        owner_columns!(),
        ") SELECT $1, $3, ",
        owner_columns!(),
        " FROM jsonb_populate_record(NULL::owners, $2)"
    ))
    .bind(id)
    .bind(patch.to_value())
    .bind(created_for_villa)
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

pub async fn update(conn: &mut PgConnection, id: Uuid, patch: &Patch) -> Result<()> {
    let done = sqlx::query(concat!(
        "UPDATE owners o SET (",
        owner_columns!(),
        ") = (SELECT ",
        owner_columns!(),
        " FROM jsonb_populate_record(o, $2)), updated_at = now() WHERE id = $1"
    ))
    .bind(id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("owner"));
    }
    Ok(())
}

/// Locks the owner for an update and returns its stored row.
pub async fn lock(conn: &mut PgConnection, id: Uuid) -> Result<Map<String, Value>> {
    sqlx::query("SELECT 1 FROM owners WHERE id = $1 FOR NO KEY UPDATE")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    stored(conn, id).await
}

/// The owner list filter, already validated.
#[derive(Debug, Clone, Default)]
pub struct OwnerFilter {
    pub owner_type: Option<&'static str>,
    /// Case-insensitive substring of first and last name, company name or email.
    pub search: Option<String>,
}

/// Parses `ownerType` of the list query.
pub fn parse_owner_type(raw: &str) -> Result<&'static str> {
    crate::error::one_of(
        "ownerType",
        &raw.trim().to_uppercase(),
        OWNER_TYPES,
        |t: &'static str| t,
    )
}

macro_rules! owner_filter {
    () => {
        " FROM owners o WHERE ($1::text IS NULL OR owner_type = $1)
          AND ($2::text IS NULL OR lower(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' '
               || coalesce(company_name, '') || ' ' || coalesce(email, '')) LIKE '%' || $2 || '%')"
    };
}

/// A page of owners, newest first, and the total matching the filter.
pub async fn list(
    conn: &mut PgConnection,
    filter: &OwnerFilter,
    page: PageRequest,
) -> Result<(Vec<Value>, i64)> {
    let search = filter
        .search
        .as_deref()
        .map(crate::management::villas::like_pattern);
    let rows: Vec<Value> = sqlx::query_scalar(concat!(
        "SELECT ",
        owner_row!(),
        owner_filter!(),
        " ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    ))
    .bind(filter.owner_type)
    .bind(&search)
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(&mut *conn)
    .await?;
    let total = sqlx::query_scalar(concat!("SELECT count(*)", owner_filter!()))
        .bind(filter.owner_type)
        .bind(&search)
        .fetch_one(&mut *conn)
        .await?;
    Ok((
        rows.into_iter().map(|r| render_owner(&object(r))).collect(),
        total,
    ))
}
