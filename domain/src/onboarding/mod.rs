//! The onboarding wizard: its progress record and the records its steps write, and the views the
//! onboarding API shows of a villa.

pub mod dashboard;
pub mod facilities;
pub mod progress;
pub mod records;

use serde_json::{Map, Value, json};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::pagination::PageRequest;
use crate::record::{empty_optional_fields, render};
use crate::{Error, Result};
pub use progress::{Progress, Step};
use records::{BANK_FIELDS, CONTRACT_FIELDS, OWNER_FIELDS, StoredRecords, VILLA_FIELDS};

/// A villa row (`to_jsonb`) as the onboarding API shows it.
pub fn render_villa(row: &Map<String, Value>) -> Value {
    let mut out = render(VILLA_FIELDS, row);
    for (json, column) in [
        ("id", "id"),
        ("status", "status"),
        ("isActive", "is_active"),
        ("ownerId", "owner_id"),
        ("storageBasePath", "storage_base_path"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
        ("version", "version"),
    ] {
        out.insert(json.into(), row.get(column).cloned().unwrap_or(Value::Null));
    }
    Value::Object(out)
}

/// The JSON Schemas of the records as this API answers them, from the field tables that check
/// and render them.
pub mod schemas {
    use serde_json::{Value, json};

    use super::records::{BANK_FIELDS, CONTRACT_FIELDS, OWNER_FIELDS, VILLA_FIELDS};
    use crate::record::{SchemaUse, json_schema, with_members};

    /// A villa as [`super::render_villa`] shows it.
    pub fn villa() -> Value {
        with_members(
            json_schema(VILLA_FIELDS, SchemaUse::Answer),
            json!({
                "id": {"type": "string", "format": "uuid"},
                "status": {"type": "string", "enum": crate::management::villas::LIFECYCLE_STATES, "description": "The villa's lifecycle state."},
                "isActive": {"type": "boolean"},
                "ownerId": {"type": ["string", "null"], "format": "uuid"},
                "storageBasePath": {"type": ["string", "null"]},
                "createdAt": {"type": "string", "format": "date-time"},
                "updatedAt": {"type": "string", "format": "date-time"},
                "version": {"type": "integer", "description": "The value behind the villa's `ETag`."},
            }),
        )
    }

    /// An owner as [`super::records::render_owner`] shows it.
    pub fn owner() -> Value {
        with_members(
            json_schema(OWNER_FIELDS, SchemaUse::Answer),
            json!({
                "id": {"type": "string", "format": "uuid"},
                "villaId": {"type": ["string", "null"], "format": "uuid", "description": "The villa it was read for."},
                "createdAt": {"type": "string", "format": "date-time"},
                "updatedAt": {"type": "string", "format": "date-time"},
            }),
        )
    }

    fn villa_record(fields: &[crate::record::FieldSpec]) -> Value {
        with_members(
            json_schema(fields, SchemaUse::Answer),
            json!({
                "villaId": {"type": "string", "format": "uuid"},
                "updatedAt": {"type": "string", "format": "date-time"},
            }),
        )
    }

    /// Contractual details as [`super::records::render_villa_record`] shows them.
    pub fn contract() -> Value {
        villa_record(CONTRACT_FIELDS)
    }

    /// Bank details, account number and IBAN masked.
    pub fn bank() -> Value {
        villa_record(BANK_FIELDS)
    }
}

/// The villa's `ETag`.
pub fn villa_etag(villa: &Value) -> String {
    format!(
        "\"villa-{}-{}\"",
        villa["id"].as_str().unwrap_or_default(),
        villa["version"].as_i64().unwrap_or_default()
    )
}

pub async fn villa(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    let row: Option<Value> = sqlx::query_scalar("SELECT to_jsonb(v) FROM villas v WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    match row {
        Some(Value::Object(row)) => Ok(render_villa(&row)),
        _ => Err(Error::NotFound("villa")),
    }
}

/// Villas with basic info, newest first, and the total.
pub async fn list_villas(pool: &PgPool, page: PageRequest) -> Result<(Vec<Value>, i64)> {
    let rows: Vec<Value> = sqlx::query_scalar(
        "SELECT to_jsonb(v) FROM villas v ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2",
    )
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM villas")
        .fetch_one(pool)
        .await?;
    Ok((
        rows.iter()
            .filter_map(Value::as_object)
            .map(render_villa)
            .collect(),
        total,
    ))
}

/// Everything the wizard knows of a villa (`GET /api/villas/:id`).
pub async fn villa_bundle(conn: &mut PgConnection, id: Uuid) -> Result<Value> {
    let villa = villa(conn, id).await?;
    let stored = records::stored(conn, id).await?;
    let onboarding = {
        let p = progress::get(conn, id).await?;
        (p.status != "NOT_STARTED").then_some(p)
    };
    Ok(json!({
        "villa": villa,
        "ownerDetails": stored.owner.as_ref().map(|o| records::render_owner(o, Some(id))),
        "contractualDetails": stored.contract.as_ref().map(|c| records::render_villa_record(CONTRACT_FIELDS, c)),
        "bankDetails": stored.bank.as_ref().map(|b| records::render_villa_record(BANK_FIELDS, b)),
        "otaCredentials": records::ota_credentials(conn, id).await?,
        "documents": crate::management::documents::of_villa(conn, id).await?,
        "staff": crate::management::staff::team_of_villa(conn, id).await?,
        "facilities": crate::onboarding::facilities::of_villa(conn, id).await?,
        "photos": crate::management::photos::of_villa(conn, id).await?,
        "onboarding": onboarding,
    }))
}

/// Deletes the villa and, through the schema's cascades, every record that is only its own;
/// with `expected`, only if the villa is still at that version. A villa with operational history
/// is refused with 409 `VILLA_IN_USE` naming what holds it ([`in_use`]). Returns its
/// document-store folder, if one was ever fixed, for the caller to enqueue its removal.
pub async fn delete_villa(
    conn: &mut PgConnection,
    id: Uuid,
    expected: Option<i32>,
) -> Result<Option<String>> {
    // The row lock first: records being written for this villa (they hold a key-share lock
    // through their foreign key) commit before the count below sees them, and new ones wait
    // for this transaction, then fail their foreign key instead of being deleted with it.
    let version: i32 = sqlx::query_scalar("SELECT version FROM villas WHERE id = $1 FOR UPDATE")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("villa"))?;
    if expected.is_some_and(|e| e != version) {
        return Err(Error::PreconditionFailed);
    }
    crate::management::villas::refuse_if_in_use(conn, id).await?;
    let (folder, owner): (Option<String>, Option<Uuid>) =
        sqlx::query_as("DELETE FROM villas WHERE id = $1 RETURNING storage_folder, owner_id")
            .bind(id)
            .fetch_one(&mut *conn)
            .await?;
    // An owner created by this villa's step 2 goes with it, unless another villa was linked to
    // it since; owners created on their own (`/management/owners`) stay.
    if let Some(owner) = owner {
        sqlx::query(
            "DELETE FROM owners o WHERE id = $1 AND created_for_villa = $2
             AND NOT EXISTS (SELECT 1 FROM villas WHERE owner_id = o.id)",
        )
        .bind(owner)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(folder)
}

/// Whether each step has data, for the summary.
fn has_data(step: Step, s: &StoredRecords) -> bool {
    match step {
        Step::BasicInfo => s.villa.is_some(),
        Step::OwnerDetails => s.owner.is_some(),
        Step::ContractDetails => s.contract.is_some(),
        Step::BankDetails => s.bank.is_some(),
        Step::OtaCredentials => s.ota_count > 0,
        Step::Documents => s.document_count > 0,
        Step::StaffConfiguration => s.staff_count > 0,
        Step::Facilities => s.facility_count > 0,
        Step::Photos => s.photo_count > 0,
        Step::Review => false,
    }
}

/// One step in the summary.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepDetail {
    pub step: u8,
    /// villaInfo, ownerDetails, ...
    pub name: &'static str,
    pub title: &'static str,
    pub completed: bool,
    pub has_data: bool,
}

/// `GET /api/onboarding/:villaId/summary`: the progress and, per step, its name, whether it is
/// completed and whether it has data.
pub async fn summary(
    conn: &mut PgConnection,
    villa_id: Uuid,
) -> Result<(Progress, Vec<StepDetail>)> {
    let progress = progress::get(conn, villa_id).await?;
    let stored = records::stored(conn, villa_id).await?;
    let details = Step::ALL
        .iter()
        .zip(&progress.steps_completed)
        .map(|(step, done)| StepDetail {
            step: step.number(),
            name: step.summary_name(),
            title: step.title(),
            completed: *done,
            has_data: has_data(*step, &stored) || (*step == Step::Review && *done),
        })
        .collect();
    Ok((progress, details))
}

/// The optional fields of steps 1 to 4 left empty (for `mostSkippedFields`).
pub async fn skipped_fields(conn: &mut PgConnection, villa_id: Uuid) -> Result<Vec<String>> {
    let s = records::stored(conn, villa_id).await?;
    let mut out = empty_optional_fields(
        VILLA_FIELDS,
        s.villa.as_ref(),
        Step::BasicInfo.summary_name(),
    );
    out.extend(empty_optional_fields(
        OWNER_FIELDS,
        s.owner.as_ref(),
        Step::OwnerDetails.summary_name(),
    ));
    out.extend(empty_optional_fields(
        CONTRACT_FIELDS,
        s.contract.as_ref(),
        Step::ContractDetails.summary_name(),
    ));
    out.extend(empty_optional_fields(
        BANK_FIELDS,
        s.bank.as_ref(),
        Step::BankDetails.summary_name(),
    ));
    Ok(out)
}
