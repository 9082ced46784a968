//! The records the wizard's steps 1 to 5 write: the villa itself, its owner, its contract, its
//! bank details and its OTA credentials. Each partial record is described once (see
//! [`crate::record`]); its SQL applies a patch with `jsonb_populate_record(<stored row>, patch)`,
//! so a column not in the patch keeps its value. The column lists in the SQL below are
//! compile-time text and must name the same columns as the field tables.

use serde_json::{Map, Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::crypto::FieldCipher;
use crate::record::{FieldSpec, Kind, Patch, bytea_hex, field, parse_patch, render, required};
use crate::{Error, Problems, Result};

// The villa's and the owner's own fields and writes live with them
// (`crate::management::villas`, `crate::management::owners`), which the wizard's steps 1 and 2
// use: named here too, as the steps' records.
pub use crate::management::owners::{OWNER_FIELDS, OWNER_TYPES};
pub use crate::management::villas::{
    PROPERTY_TYPES, VILLA_FIELDS, VILLA_STYLES, create_villa, insert_villa, map_villa_aliases,
    update_villa,
};

pub const CONTRACT_TYPES: &[&str] = &["EXCLUSIVE", "NON_EXCLUSIVE", "REVENUE_SHARE", "FIXED_RENT"];
pub const OTA_PLATFORMS: &[&str] = &[
    "AIRBNB",
    "BOOKING_COM",
    "EXPEDIA",
    "VRBO",
    "AGODA",
    "TRIP_COM",
    "GOOGLE",
    "DIRECT",
    "OTHER",
];

pub const CONTRACT_FIELDS: &[FieldSpec] = &[
    field("contractType", "contract_type", Kind::OneOf(CONTRACT_TYPES)),
    field(
        "commissionRate",
        "commission_rate",
        Kind::Decimal { min: 0, max: 100 },
    ),
    field(
        "managementFee",
        "management_fee",
        Kind::Decimal {
            min: 0,
            max: 1_000_000_000,
        },
    ),
    field("feeCurrency", "fee_currency", Kind::Currency),
    field("contractStartDate", "contract_start_date", Kind::Date),
    field("contractEndDate", "contract_end_date", Kind::Date),
    field("paymentTerms", "payment_terms", Kind::Text(1000)),
    field("payoutDay", "payout_day", Kind::Int { min: 1, max: 31 }),
    field(
        "cancellationPolicy",
        "cancellation_policy",
        Kind::Text(1000),
    ),
    field(
        "minimumStayNights",
        "minimum_stay_nights",
        Kind::Int { min: 0, max: 365 },
    ),
    field("insuranceProvider", "insurance_provider", Kind::Text(255)),
    field(
        "insurancePolicyNumber",
        "insurance_policy_number",
        Kind::Text(100),
    ),
    field("insuranceExpiryDate", "insurance_expiry_date", Kind::Date),
    field("specialTerms", "special_terms", Kind::Text(5000)),
];

macro_rules! contract_columns {
    () => {
        "contract_type, commission_rate, management_fee, fee_currency, contract_start_date, contract_end_date,
         payment_terms, payout_day, cancellation_policy, minimum_stay_nights, insurance_provider,
         insurance_policy_number, insurance_expiry_date, special_terms"
    };
}

pub const BANK_FIELDS: &[FieldSpec] = &[
    field("accountHolderName", "account_holder_name", Kind::Text(255)),
    field("bankName", "bank_name", Kind::Text(255)),
    field("bankAddress", "bank_address", Kind::Text(500)),
    field("bankCountry", "bank_country", Kind::Text(100)),
    field("swiftCode", "swift_code", Kind::Text(11)),
    field("currency", "currency", Kind::Currency),
    field("accountNumber", "account_number", Kind::Secret(64)),
    field("iban", "iban", Kind::Iban),
    field("branchCode", "branch_code", Kind::Text(50)),
    field("notes", "notes", Kind::Text(5000)),
];

macro_rules! bank_columns {
    () => {
        "account_holder_name, bank_name, bank_address, bank_country, swift_code, currency,
         account_number_encrypted, account_number_last4, iban_encrypted, iban_last4, branch_code, notes"
    };
}

/// Checks a villa form. `creating` requires the spec's required fields.
pub fn parse_villa(
    input: &Map<String, Value>,
    prefix: &str,
    creating: bool,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    parse_patch(
        VILLA_FIELDS,
        &map_villa_aliases(input),
        prefix,
        creating,
        cipher,
        problems,
    )
}

pub fn parse_owner(
    input: &Map<String, Value>,
    prefix: &str,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    parse_patch(OWNER_FIELDS, input, prefix, false, cipher, problems)
}

pub fn parse_contract(
    input: &Map<String, Value>,
    prefix: &str,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    let patch = parse_patch(CONTRACT_FIELDS, input, prefix, false, cipher, problems);
    if let (Some(Value::String(start)), Some(Value::String(end))) = (
        patch.columns.get("contract_start_date"),
        patch.columns.get("contract_end_date"),
    ) && end < start
    {
        // ISO dates compare as text.
        problems.push(
            format!("{prefix}contractEndDate"),
            "out_of_range",
            "must not be before contractStartDate",
        );
    }
    patch
}

pub fn parse_bank(
    input: &Map<String, Value>,
    prefix: &str,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    parse_patch(BANK_FIELDS, input, prefix, false, cipher, problems)
}
/// Upserts the villa's owner: updates the linked owner (which may be an owner of several villas,
/// created on `/management/owners`), or creates one for this villa (INDIVIDUAL unless the patch
/// says otherwise) and links it. Returns the owner's id.
pub async fn upsert_owner(conn: &mut PgConnection, villa_id: Uuid, patch: &Patch) -> Result<Uuid> {
    let linked: Option<Option<Uuid>> =
        // NO KEY UPDATE: the lock every write of a villa takes first (progress::begin_write);
        // FOR UPDATE would also wait for other transactions' foreign-key checks on the villa.
        sqlx::query_scalar("SELECT owner_id FROM villas WHERE id = $1 FOR NO KEY UPDATE")
            .bind(villa_id)
            .fetch_optional(&mut *conn)
            .await?;
    let Some(linked) = linked else {
        return Err(Error::NotFound("villa"));
    };
    if let Some(owner_id) = linked {
        crate::management::owners::update(conn, owner_id, patch).await?;
        return Ok(owner_id);
    }
    let mut patch = patch.clone();
    if patch.columns.get("owner_type").is_none_or(Value::is_null) {
        patch
            .columns
            .insert("owner_type".into(), json!("INDIVIDUAL"));
    }
    let owner_id = crate::management::owners::create(conn, &patch, Some(villa_id)).await?;
    sqlx::query(
        "UPDATE villas SET owner_id = $2, version = version + 1, updated_at = now() WHERE id = $1",
    )
    .bind(villa_id)
    .bind(owner_id)
    .execute(&mut *conn)
    .await?;
    Ok(owner_id)
}

pub async fn upsert_contract(conn: &mut PgConnection, villa_id: Uuid, patch: &Patch) -> Result<()> {
    sqlx::query(
        "INSERT INTO contractual_details (villa_id) VALUES ($1) ON CONFLICT (villa_id) DO NOTHING",
    )
    .bind(villa_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query(concat!(
        "UPDATE contractual_details c SET (",
        contract_columns!(),
        ") = (SELECT ",
        contract_columns!(),
        " FROM jsonb_populate_record(c, $2)), updated_at = now() WHERE villa_id = $1"
    ))
    .bind(villa_id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub async fn upsert_bank(conn: &mut PgConnection, villa_id: Uuid, patch: &Patch) -> Result<()> {
    sqlx::query(
        "INSERT INTO bank_details (villa_id) VALUES ($1) ON CONFLICT (villa_id) DO NOTHING",
    )
    .bind(villa_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query(concat!(
        "UPDATE bank_details b SET (",
        bank_columns!(),
        ") = (SELECT ",
        bank_columns!(),
        " FROM jsonb_populate_record(b, $2)), updated_at = now() WHERE villa_id = $1"
    ))
    .bind(villa_id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// One OTA credential as sent to step 5.
#[derive(Debug, Clone)]
pub struct OtaCredentialInput {
    /// An existing credential of the villa; when given without a password, its stored password
    /// is kept (the API never returns passwords, so a client cannot send them back).
    pub id: Option<Uuid>,
    pub patch: Patch,
}

pub const OTA_FIELDS: &[FieldSpec] = &[
    required("platform", "platform", Kind::OneOf(OTA_PLATFORMS)),
    field("propertyId", "property_id", Kind::Text(255)),
    field("username", "username", Kind::Text(255)),
    // Callers may send the password already encrypted (the management API's contract), so the
    // ciphertext's length is allowed.
    field("password", "password", Kind::Secret(4096)),
    field("listingUrl", "listing_url", Kind::Url),
    field("isActive", "is_active", Kind::Bool),
];

/// The JSON Schema of one item of step 5's `credentials`, from [`OTA_FIELDS`].
pub fn ota_credential_schema() -> Value {
    let mut schema = crate::record::json_schema(OTA_FIELDS, crate::record::SchemaUse::Create);
    schema["properties"]["id"] = json!({"type": ["string", "null"], "format": "uuid",
        "description": "A stored credential of the villa; sent without a password, it keeps its password."});
    schema
}

/// An OTA credential as `ota_json!` renders it, without its password (the OpenAPI description).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the JSON built in SQL
pub struct OtaCredentialView {
    id: Uuid,
    villa_id: Uuid,
    platform: String,
    property_id: Option<String>,
    username: Option<String>,
    listing_url: Option<String>,
    is_active: bool,
    /// Whether a password is stored (passwords are never returned).
    has_password: bool,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

/// Checks step 5's `credentials` array, reporting each bad entry's fields as
/// `credentials[i].field`.
pub fn parse_ota_credentials(
    raw: Option<&Value>,
    prefix: &str,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Option<Vec<OtaCredentialInput>> {
    let name = format!("{prefix}credentials");
    let items = crate::record::members::items(raw, &name, 50, problems)?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let item_prefix = format!("{name}[{i}].");
        let Some(obj) = crate::record::members::object(item, &name, i, problems) else {
            continue;
        };
        let id = crate::record::members::id(obj, &item_prefix, problems);
        let patch = parse_patch(OTA_FIELDS, obj, &item_prefix, true, cipher, problems);
        out.push(OtaCredentialInput { id, patch });
    }
    Some(out)
}

/// Replaces every OTA credential of the villa with `credentials`.
pub async fn replace_ota_credentials(
    conn: &mut PgConnection,
    villa_id: Uuid,
    credentials: &[OtaCredentialInput],
) -> Result<()> {
    // Passwords of credentials that are kept without being re-sent.
    let kept: Vec<(Uuid, Option<Vec<u8>>)> = sqlx::query_as(
        "DELETE FROM ota_credentials WHERE villa_id = $1 RETURNING id, password_encrypted",
    )
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?;
    for c in credentials {
        let mut columns = c.patch.columns.clone();
        let reused = c.id.filter(|id| kept.iter().any(|(k, _)| k == id));
        if !columns.contains_key("password_encrypted")
            && let Some(old) = reused.and_then(|id| kept.iter().find(|(k, _)| *k == id))
        {
            columns.insert(
                "password_encrypted".into(),
                old.1
                    .as_deref()
                    .map_or(Value::Null, |b| Value::String(bytea_hex(b))),
            );
        }
        sqlx::query(
            "INSERT INTO ota_credentials (id, villa_id, platform, property_id, username, password_encrypted, listing_url, is_active)
             SELECT $1, $2, platform, property_id, username, password_encrypted, listing_url, coalesce(($3::jsonb->>'is_active')::boolean, true)
             FROM jsonb_populate_record(NULL::ota_credentials, $3)",
        )
        .bind(reused.unwrap_or_else(Uuid::now_v7))
        .bind(villa_id)
        .bind(Value::Object(columns))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// A stored row as JSON (`to_jsonb`), or `None`.
async fn row_json(
    conn: &mut PgConnection,
    sql: &'static str,
    key: Uuid,
) -> Result<Option<Map<String, Value>>> {
    let v: Option<Value> = sqlx::query_scalar(sql)
        .bind(key)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(v.and_then(|v| match v {
        Value::Object(m) => Some(m),
        _ => None,
    }))
}

/// The stored rows of steps 1 to 4, for rendering, `hasData` and skipped fields.
#[derive(Debug, Default)]
pub struct StoredRecords {
    pub villa: Option<Map<String, Value>>,
    pub owner: Option<Map<String, Value>>,
    pub contract: Option<Map<String, Value>>,
    pub bank: Option<Map<String, Value>>,
    pub ota_count: i64,
    pub document_count: i64,
    pub staff_count: i64,
    pub facility_count: i64,
    pub photo_count: i64,
}

pub async fn stored(conn: &mut PgConnection, villa_id: Uuid) -> Result<StoredRecords> {
    let villa = row_json(
        conn,
        "SELECT to_jsonb(v) FROM villas v WHERE id = $1",
        villa_id,
    )
    .await?;
    let owner = row_json(
        conn,
        "SELECT to_jsonb(o) FROM owners o JOIN villas v ON v.owner_id = o.id WHERE v.id = $1",
        villa_id,
    )
    .await?;
    let contract = row_json(
        conn,
        "SELECT to_jsonb(c) FROM contractual_details c WHERE villa_id = $1",
        villa_id,
    )
    .await?;
    let bank = row_json(
        conn,
        "SELECT to_jsonb(b) FROM bank_details b WHERE villa_id = $1",
        villa_id,
    )
    .await?;
    let (ota_count, document_count, staff_count, facility_count, photo_count): (
        i64,
        i64,
        i64,
        i64,
        i64,
    ) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM ota_credentials WHERE villa_id = $1),
                    (SELECT count(*) FROM documents WHERE villa_id = $1),
                    (SELECT count(*) FROM villa_staff WHERE villa_id = $1),
                    (SELECT count(*) FROM facilities WHERE villa_id = $1),
                    (SELECT count(*) FROM photos WHERE villa_id = $1)",
    )
    .bind(villa_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(StoredRecords {
        villa,
        owner,
        contract,
        bank,
        ota_count,
        document_count,
        staff_count,
        facility_count,
        photo_count,
    })
}

/// The owner as the API shows it (`villaId` added when known).
pub fn render_owner(row: &Map<String, Value>, villa_id: Option<Uuid>) -> Value {
    let mut out = render(OWNER_FIELDS, row);
    out.insert("id".into(), row.get("id").cloned().unwrap_or(Value::Null));
    out.insert("villaId".into(), json!(villa_id));
    out.insert(
        "createdAt".into(),
        row.get("created_at").cloned().unwrap_or(Value::Null),
    );
    out.insert(
        "updatedAt".into(),
        row.get("updated_at").cloned().unwrap_or(Value::Null),
    );
    Value::Object(out)
}

/// Contract or bank details as the API shows them.
pub fn render_villa_record(specs: &[FieldSpec], row: &Map<String, Value>) -> Value {
    let mut out = render(specs, row);
    out.insert(
        "villaId".into(),
        row.get("villa_id").cloned().unwrap_or(Value::Null),
    );
    out.insert(
        "updatedAt".into(),
        row.get("updated_at").cloned().unwrap_or(Value::Null),
    );
    Value::Object(out)
}

pub async fn owner_of_villa(conn: &mut PgConnection, villa_id: Uuid) -> Result<Option<Value>> {
    let exists: Option<bool> = sqlx::query_scalar("SELECT true FROM villas WHERE id = $1")
        .bind(villa_id)
        .fetch_optional(&mut *conn)
        .await?;
    if exists.is_none() {
        return Err(Error::NotFound("villa"));
    }
    let row = row_json(
        conn,
        "SELECT to_jsonb(o) FROM owners o JOIN villas v ON v.owner_id = o.id WHERE v.id = $1",
        villa_id,
    )
    .await?;
    Ok(row.map(|r| render_owner(&r, Some(villa_id))))
}

// An OTA credential row as JSON, without its password (`hasPassword` says whether one is stored).
macro_rules! ota_json {
    () => {
        "jsonb_build_object('id', id, 'villaId', villa_id, 'platform', platform, 'propertyId', property_id,
            'username', username, 'listingUrl', listing_url, 'isActive', is_active,
            'hasPassword', password_encrypted IS NOT NULL, 'createdAt', created_at, 'updatedAt', updated_at)"
    };
}

/// The villa's OTA credentials, without passwords.
pub async fn ota_credentials(conn: &mut PgConnection, villa_id: Uuid) -> Result<Vec<Value>> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT ",
        ota_json!(),
        " FROM ota_credentials WHERE villa_id = $1 ORDER BY platform, created_at, id"
    ))
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// Checks one credential as the management surface takes it: platform and propertyId required;
/// the password (which the caller may send already encrypted) is encrypted again at rest.
pub fn parse_ota_credential(
    input: &Map<String, Value>,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    let patch = parse_patch(OTA_FIELDS, input, "", true, cipher, problems);
    if matches!(input.get("propertyId"), None | Some(Value::Null))
        || input
            .get("propertyId")
            .and_then(Value::as_str)
            .is_some_and(|s| s.trim().is_empty())
    {
        problems.push(
            "propertyId",
            "required",
            "propertyId (the villa's identifier on that platform) is required",
        );
    }
    patch
}

/// Adds one credential to the villa; returns it (without the password).
pub async fn add_ota_credential(
    conn: &mut PgConnection,
    villa_id: Uuid,
    patch: &Patch,
) -> Result<Value> {
    crate::management::villas::ensure_exists(conn, villa_id).await?;
    Ok(sqlx::query_scalar(concat!(
        "INSERT INTO ota_credentials (id, villa_id, platform, property_id, username, password_encrypted, listing_url, is_active)
         SELECT $1, $2, platform, property_id, username, password_encrypted, listing_url,
                coalesce(($3::jsonb->>'is_active')::boolean, true)
         FROM jsonb_populate_record(NULL::ota_credentials, $3)
         RETURNING ",
        ota_json!()
    ))
    .bind(Uuid::now_v7())
    .bind(villa_id)
    .bind(patch.to_value())
    .fetch_one(&mut *conn)
    .await?)
}
