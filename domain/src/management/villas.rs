//! Villas as the management surface lists and reads them. The onboarding wizard writes the same
//! rows (`villa_name` is management's `name`).

use std::{collections::HashMap, sync::Arc};

use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::batch::Batcher;
use crate::crypto::FieldCipher;
use crate::pagination::PageRequest;
use crate::record::{FieldSpec, Kind, Patch, field, parse_patch, required};
use crate::{Error, Problems, Result, on_unique_violation};

pub const PROPERTY_TYPES: &[&str] = &["VILLA", "APARTMENT", "HOUSE", "CONDO", "RESORT"];
pub const VILLA_STYLES: &[&str] = &[
    "MODERN",
    "TRADITIONAL",
    "BALINESE",
    "MEDITERRANEAN",
    "TROPICAL",
    "COLONIAL",
    "CONTEMPORARY",
    "MINIMALIST",
    "RUSTIC",
];

/// A villa field table: the given fields, then the villa's optional details, which are the same
/// under both surfaces' names (onboarding's [`VILLA_FIELDS`], management's
/// `crate::management::villas::FIELDS`).
macro_rules! villa_fields {
    ($($head:expr),* $(,)?) => {
        &[
            $($head,)*
            $crate::record::field("latitude", "latitude", $crate::record::Kind::Decimal { min: -90, max: 90 }),
            $crate::record::field("longitude", "longitude", $crate::record::Kind::Decimal { min: -180, max: 180 }),
            $crate::record::field("landAreaSqm", "land_area_sqm", $crate::record::Kind::Decimal { min: 0, max: 10_000_000 }),
            $crate::record::field("livingAreaSqm", "living_area_sqm", $crate::record::Kind::Decimal { min: 0, max: 10_000_000 }),
            $crate::record::field("yearBuilt", "year_built", $crate::record::Kind::Int { min: 1800, max: 2100 }),
            $crate::record::field("checkInTime", "check_in_time", $crate::record::Kind::Time),
            $crate::record::field("checkOutTime", "check_out_time", $crate::record::Kind::Time),
        ]
    };
}

/// Step 1 and villa creation. Required fields are those of the spec's create table.
pub const VILLA_FIELDS: &[FieldSpec] = villa_fields![
    required("villaCode", "villa_code", Kind::Text(50)),
    required("villaName", "villa_name", Kind::Text(255)),
    required("address", "address", Kind::Text(500)),
    required("city", "city", Kind::Text(100)),
    required("country", "country", Kind::Text(100)),
    required("bedrooms", "bedrooms", Kind::Int { min: 1, max: 50 }),
    required("bathrooms", "bathrooms", Kind::Int { min: 1, max: 50 }),
    required("maxGuests", "max_guests", Kind::Int { min: 1, max: 100 }),
    required("propertyType", "property_type", Kind::OneOf(PROPERTY_TYPES)),
    field("description", "description", Kind::Text(5000)),
    field("villaStyle", "villa_style", Kind::OneOf(VILLA_STYLES)),
    field("postalCode", "postal_code", Kind::Text(20)),
];

macro_rules! villa_columns {
    () => {
        "villa_code, villa_name, address, city, country, bedrooms, bathrooms, max_guests, property_type,
         description, villa_style, postal_code, latitude, longitude, land_area_sqm, living_area_sqm,
         year_built, check_in_time, check_out_time, approval_threshold_amount, approval_threshold_currency"
    };
}

/// Names the wizard's villa form uses for some fields (its "field mapping"), accepted in step 1
/// and its autosave besides the record's own names.
const VILLA_ALIASES: &[(&str, &str)] = &[
    ("name", "villaName"),
    ("code", "villaCode"),
    ("type", "propertyType"),
    ("style", "villaStyle"),
    ("guests", "maxGuests"),
    ("zipCode", "postalCode"),
];

/// The villa form with its aliases resolved (a record name, when also sent, wins).
pub fn map_villa_aliases(input: &Map<String, Value>) -> Map<String, Value> {
    let mut out = input.clone();
    for (alias, name) in VILLA_ALIASES {
        if let Some(v) = input.get(*alias)
            && !input.contains_key(*name)
        {
            out.insert((*name).to_owned(), v.clone());
        }
    }
    out
}

fn villa_code_taken(e: sqlx::Error) -> Error {
    on_unique_violation(e, "villaCode", VILLA_CODE_TAKEN)
}

/// Creates a villa (status DRAFT) from a checked creation patch.
pub async fn create_villa(conn: &mut PgConnection, patch: &Patch) -> Result<Uuid> {
    insert_villa(conn, patch, "DRAFT", false)
        .await?
        .ok_or_else(|| Error::invalid("villaCode", "duplicate", VILLA_CODE_TAKEN))
}

pub(crate) const VILLA_CODE_TAKEN: &str = "a villa with this code already exists";

/// Inserts a villa from a checked patch that holds `villa_code`; `None` when that code is taken.
pub async fn insert_villa(
    conn: &mut PgConnection,
    patch: &Patch,
    status: &str,
    is_active: bool,
) -> Result<Option<Uuid>> {
    let id = Uuid::now_v7();
    let inserted = sqlx::query(concat!(
        "INSERT INTO villas (id, status, is_active, ",
        villa_columns!(),
        ") SELECT $1, $3, $4, ",
        villa_columns!(),
        " FROM jsonb_populate_record(NULL::villas, $2) ON CONFLICT (villa_code) DO NOTHING"
    ))
    .bind(id)
    .bind(patch.to_value())
    .bind(status)
    .bind(is_active)
    .execute(&mut *conn)
    .await?;
    Ok((inserted.rows_affected() == 1).then_some(id))
}

/// Applies a step-1 patch to the villa; bumps its version.
pub async fn update_villa(conn: &mut PgConnection, villa_id: Uuid, patch: &Patch) -> Result<()> {
    if patch.is_empty() {
        return Ok(());
    }
    let done = sqlx::query(concat!(
        "UPDATE villas v SET (",
        villa_columns!(),
        ") = (SELECT ",
        villa_columns!(),
        " FROM jsonb_populate_record(v, $2)), version = version + 1, updated_at = now() WHERE id = $1"
    ))
    .bind(villa_id)
    .bind(patch.to_value())
    .execute(&mut *conn)
    .await
    .map_err(villa_code_taken)?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("villa"));
    }
    Ok(())
}

/// The lifecycle states a villa row can be in (the schema's CHECK): what the onboarding API
/// shows as a villa's `status`.
pub const LIFECYCLE_STATES: &[&str] = &[
    "DRAFT",
    "IN_REVIEW",
    "APPROVED",
    "REJECTED",
    "INACTIVE",
    "ARCHIVED",
];

/// Status as the management surface shows it: ACTIVE for an active villa, otherwise the
/// lifecycle state of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VillaStatus {
    Active,
    Draft,
    InReview,
    Approved,
    Rejected,
    Inactive,
    Archived,
}

impl VillaStatus {
    pub const ALL: [VillaStatus; 7] = [
        Self::Active,
        Self::Draft,
        Self::InReview,
        Self::Approved,
        Self::Rejected,
        Self::Inactive,
        Self::Archived,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "ACTIVE",
            Self::Draft => "DRAFT",
            Self::InReview => "IN_REVIEW",
            Self::Approved => "APPROVED",
            Self::Rejected => "REJECTED",
            Self::Inactive => "INACTIVE",
            Self::Archived => "ARCHIVED",
        }
    }

    /// Any letter case.
    pub fn parse(field: &str, raw: &str) -> Result<Self> {
        crate::error::one_of(field, &raw.trim().to_uppercase(), &Self::ALL, Self::as_str)
    }

    /// The stored (lifecycle status, is_active) pair: ACTIVE is an approved, active villa.
    fn stored(self) -> (&'static str, bool) {
        match self {
            Self::Active => ("APPROVED", true),
            other => (other.as_str(), false),
        }
    }
}

/// A villa in management's list.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VillaListItem {
    pub id: Uuid,
    pub name: String,
    pub villa_code: String,
    pub status: String,
    pub property_type: Option<String>,
    pub bedrooms: Option<i32>,
    /// "City, Country" from whichever of the two is known.
    pub location: Option<String>,
}

/// Management's villa list filter, already validated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct VillaFilter {
    pub status: Option<VillaStatus>,
    /// Matched case-insensitively as a substring of name, code, city and country.
    pub search: Option<String>,
}

// `search_text` is lower(name, code, city, country), stored (migration 0006); a trigram index
// serves rare terms, the covering list index common ones.
macro_rules! search_matches {
    () => {
        "($2::text IS NULL OR search_text LIKE '%' || $2 || '%')"
    };
}
macro_rules! status_matches {
    () => {
        "($1::text IS NULL OR (CASE WHEN is_active THEN 'ACTIVE' ELSE status END) = $1)"
    };
}

/// A list filter as cached: (status, LIKE pattern).
type TotalsKey = (Option<&'static str>, Option<String>);

/// The management list's totals by (status, search pattern), each with the
/// `villa_list_version` it was counted at (migration 0005): reused only while that version is
/// current, so a total is never stale. Bounded: emptied when it reaches [`Self::MAX_ENTRIES`].
#[derive(Debug, Default)]
struct TotalsCache(std::sync::Mutex<HashMap<TotalsKey, (i64, i64)>>);

impl TotalsCache {
    const MAX_ENTRIES: usize = 10_000;

    fn get(&self, key: &TotalsKey, version: i64) -> Option<i64> {
        let map = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(key)
            .filter(|(counted_at, _)| *counted_at == version)
            .map(|(_, total)| *total)
    }

    fn put(&self, key: TotalsKey, version: i64, total: i64) {
        let mut map = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() >= Self::MAX_ENTRIES {
            map.clear();
        }
        map.insert(key, (version, total));
    }
}

async fn list(
    pool: &PgPool,
    totals: &TotalsCache,
    filter: &VillaFilter,
    page: PageRequest,
) -> Result<(Vec<VillaListItem>, i64)> {
    let status = filter.status.map(VillaStatus::as_str);
    let search = filter.search.as_deref().map(like_pattern);
    let version: i64 = sqlx::query_scalar("SELECT version FROM villa_list_version")
        .fetch_one(pool)
        .await?;
    let rows = sqlx::query_as(concat!(
        "SELECT id, villa_name AS name, villa_code,
                CASE WHEN is_active THEN 'ACTIVE' ELSE status END AS status,
                property_type, bedrooms,
                nullif(concat_ws(', ', nullif(city, ''), nullif(country, '')), '') AS location
         FROM villas WHERE ",
        status_matches!(),
        " AND ",
        search_matches!(),
        " ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    ))
    .bind(status)
    .bind(&search)
    .bind(i64::from(page.limit))
    .bind(page.offset())
    .fetch_all(pool)
    .await?;
    let key = (status, search);
    if let Some(total) = totals.get(&key, version) {
        return Ok((rows, total));
    }
    // The count and the version it belongs to, read in one snapshot.
    let (version, total): (i64, i64) = sqlx::query_as(concat!(
        "SELECT (SELECT version FROM villa_list_version), count(*) FROM villas WHERE ",
        status_matches!(),
        " AND ",
        search_matches!()
    ))
    .bind(key.0)
    .bind(&key.1)
    .fetch_one(pool)
    .await?;
    totals.put(key, version, total);
    Ok((rows, total))
}

/// Lower-cases the term and escapes LIKE's wildcards so `search=50%` means the text "50%".
pub(crate) fn like_pattern(term: &str) -> String {
    term.to_lowercase()
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// One villa as management shows it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VillaDetail {
    pub id: Uuid,
    pub name: String,
    pub villa_code: String,
    pub status: String,
    pub property_type: Option<String>,
    pub villa_style: Option<String>,
    pub bedrooms: Option<i32>,
    pub bathrooms: Option<i32>,
    pub max_guests: Option<i32>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    pub location: Option<String>,
    pub description: Option<String>,
    pub owner_id: Option<Uuid>,
    pub storage_base_path: Option<String>,
    /// This villa's own approval threshold (`{amount, currency}`), over its owner's; null: the
    /// owner's applies.
    #[schema(value_type = Option<crate::maintenance::views::Money>)]
    pub approval_threshold: Option<sqlx::types::Json<Value>>,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// Management's two hot reads, batched ([`crate::batch`]): a villa by id (many ids per query) and
/// a page of the list (one query per distinct filter and page, however many callers ask for it
/// at once). Both answer what was committed before the caller asked.
pub struct VillaReads {
    by_id: Batcher<Uuid, VillaDetail>,
    pages: Batcher<(VillaFilter, PageRequest), (Vec<VillaListItem>, i64)>,
}

impl VillaReads {
    /// Starts the loaders (on the current tokio runtime).
    pub fn new(pool: PgPool) -> Self {
        let totals = Arc::new(TotalsCache::default());
        let by_id_pool = pool.clone();
        Self {
            // A batch of ids is one index lookup each, well under a millisecond: one load at a
            // time makes the batches largest (measured: 14.9k req/s with one, 12.3k with two).
            by_id: Batcher::new(
                1,
                Arc::new(move |ids: Vec<Uuid>| {
                    let pool = by_id_pool.clone();
                    Box::pin(async move {
                        Ok(get_many(&pool, &ids)
                            .await?
                            .into_iter()
                            .map(|villa| (villa.id, villa))
                            .collect())
                    })
                }),
            ),
            // A rare term's page can take tens of milliseconds: a second loader keeps it from
            // holding up every other page.
            pages: Batcher::new(
                2,
                Arc::new(move |keys: Vec<(VillaFilter, PageRequest)>| {
                    let (pool, totals) = (pool.clone(), totals.clone());
                    Box::pin(async move {
                        let pages = futures::future::try_join_all(
                            keys.iter()
                                .map(|(filter, page)| list(&pool, &totals, filter, *page)),
                        )
                        .await?;
                        Ok(keys.into_iter().zip(pages).collect::<HashMap<_, _>>())
                    })
                }),
            ),
        }
    }

    pub async fn get(&self, id: Uuid) -> Result<VillaDetail> {
        self.by_id.load(id).await?.ok_or(Error::NotFound("villa"))
    }

    /// A page of the list and the total of villas that match.
    pub async fn list(
        &self,
        filter: VillaFilter,
        page: PageRequest,
    ) -> Result<(Vec<VillaListItem>, i64)> {
        Ok(self.pages.load((filter, page)).await?.unwrap_or_default())
    }
}

macro_rules! detail_columns {
    () => {
        "SELECT id, villa_name AS name, villa_code,
                CASE WHEN is_active THEN 'ACTIVE' ELSE status END AS status,
                property_type, villa_style, bedrooms, bathrooms, max_guests, address, city, country,
                nullif(concat_ws(', ', nullif(city, ''), nullif(country, '')), '') AS location,
                description, owner_id, storage_base_path,
                CASE WHEN approval_threshold_amount IS NOT NULL THEN jsonb_build_object(
                    'amount', approval_threshold_amount, 'currency', approval_threshold_currency) END AS approval_threshold,
                created_at, updated_at
         FROM villas "
    };
}

async fn get_many(pool: &PgPool, ids: &[Uuid]) -> Result<Vec<VillaDetail>> {
    Ok(
        sqlx::query_as(concat!(detail_columns!(), "WHERE id = ANY($1)"))
            .bind(ids)
            .fetch_all(pool)
            .await?,
    )
}

pub async fn get<'e>(db: impl sqlx::PgExecutor<'e>, id: Uuid) -> Result<VillaDetail> {
    sqlx::query_as(concat!(detail_columns!(), "WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(Error::NotFound("villa"))
}

/// A villa's fields as management creates and edits them: the onboarding record's columns under
/// management's names (`name` is `villaName`). Required to create: name, propertyType, bedrooms,
/// bathrooms, maxGuests; the address can come later (the onboarding wizard asks for it).
pub const FIELDS: &[FieldSpec] = villa_fields![
    required("name", "villa_name", Kind::Text(255)),
    required("propertyType", "property_type", Kind::OneOf(PROPERTY_TYPES)),
    field("villaStyle", "villa_style", Kind::OneOf(VILLA_STYLES)),
    required("bedrooms", "bedrooms", Kind::Int { min: 1, max: 50 }),
    required("bathrooms", "bathrooms", Kind::Int { min: 1, max: 50 }),
    required("maxGuests", "max_guests", Kind::Int { min: 1, max: 100 }),
    field("address", "address", Kind::Text(500)),
    field("city", "city", Kind::Text(100)),
    field("country", "country", Kind::Text(100)),
    field("postalCode", "postal_code", Kind::Text(20)),
    field("description", "description", Kind::Text(5000)),
];

/// Optional on create (a code is generated), never clearable.
const CODE: &[FieldSpec] = &[required("villaCode", "villa_code", Kind::Text(50))];

/// The JSON Schema of a management villa body (`SchemaUse::Create` or `Patch`), from the same
/// tables [`VillaInput::parse`] checks it with.
pub fn input_schema(usage: crate::record::SchemaUse) -> serde_json::Value {
    let mut schema = crate::record::json_schema(FIELDS, usage);
    let code = crate::record::json_schema(CODE, crate::record::SchemaUse::Patch);
    let props = schema["properties"]
        .as_object_mut()
        .expect("an object schema");
    props.extend(code["properties"].as_object().cloned().unwrap_or_default());
    props["villaCode"]["description"] = "Generated (VL-000001, ...) when not given; unique.".into();
    props.insert(
        "status".into(),
        serde_json::json!({"type": "string", "enum": VillaStatus::ALL.map(VillaStatus::as_str),
            "description": "DRAFT by default. A villa whose onboarding is in progress cannot be made ACTIVE."}),
    );
    props.extend(
        super::terms::terms_schema(false)
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    props["approvalThreshold"]["description"] =
        "This villa's own threshold, over its owner's; null: the owner's applies.".into();
    props.insert(
        "ownerId".into(),
        serde_json::json!({"type": ["string", "null"], "format": "uuid", "description": "An owner of /management/owners; null unlinks."}),
    );
    schema
}

/// A checked create or update body.
#[derive(Debug, Clone, Default)]
pub struct VillaInput {
    pub patch: Patch,
    pub status: Option<VillaStatus>,
    /// Absent: unchanged; `null`: no owner; an id: that owner.
    pub owner_id: Option<Option<Uuid>>,
}

impl VillaInput {
    /// Checks a body; `creating` requires the fields a new villa needs. Members that are not
    /// fields of a villa are ignored; an update that names none is refused.
    pub fn parse(
        input: &Map<String, Value>,
        creating: bool,
        cipher: &FieldCipher,
        problems: &mut Problems,
    ) -> VillaInput {
        let mut patch = parse_patch(FIELDS, input, "", creating, cipher, problems);
        let code = parse_patch(CODE, input, "", false, cipher, problems);
        patch.columns.extend(code.columns);
        patch.saved_fields.extend(code.saved_fields);
        super::terms::approval_terms(input, &mut patch, cipher, problems, false);
        let status = match input.get("status") {
            None => None,
            Some(Value::String(s)) => problems.check(VillaStatus::parse("status", s)),
            Some(_) => {
                problems.push(
                    "status",
                    "invalid_type",
                    "status must be a string such as ACTIVE",
                );
                None
            }
        };
        let owner_id = match input.get("ownerId") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) => match s.trim().parse::<Uuid>() {
                Ok(id) => Some(Some(id)),
                Err(_) => {
                    problems.push("ownerId", "invalid_format", "ownerId must be a UUID");
                    None
                }
            },
            Some(_) => {
                problems.push("ownerId", "invalid_format", "ownerId must be a UUID");
                None
            }
        };
        let input = VillaInput {
            patch,
            status,
            owner_id,
        };
        if !creating && problems.is_empty() && input.is_empty() {
            problems.push(
                "body",
                "required",
                "nothing to change: send at least one field of the villa",
            );
        }
        input
    }

    fn is_empty(&self) -> bool {
        self.patch.is_empty() && self.status.is_none() && self.owner_id.is_none()
    }

    /// Whether the update changes which approval threshold applies: the villa's own, or its
    /// owner (whose threshold applies when the villa has none).
    pub fn changes_approval(&self) -> bool {
        self.owner_id.is_some()
            || self
                .patch
                .saved_fields
                .iter()
                .any(|f| f == "approvalThreshold")
    }
}

/// The owner a villa is to be linked to must exist.
async fn check_owner(conn: &mut PgConnection, owner_id: Option<Uuid>) -> Result<()> {
    if let Some(id) = owner_id {
        let found: Option<bool> = sqlx::query_scalar("SELECT true FROM owners WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        if found.is_none() {
            return Err(Error::NotFound("owner"));
        }
    }
    Ok(())
}

/// Creates a villa; without a `villaCode` it gets the next free generated one (`VL-000042`).
/// Status DRAFT unless the body says otherwise.
pub async fn create(conn: &mut PgConnection, input: &VillaInput) -> Result<Uuid> {
    let owner = input.owner_id.flatten();
    check_owner(conn, owner).await?;
    let (status, is_active) = input.status.unwrap_or(VillaStatus::Draft).stored();
    let mut patch = input.patch.clone();
    let chosen = patch.columns.contains_key("villa_code");
    let mut id = None;
    // A generated code can only collide with a code someone typed; the next number is tried.
    for _ in 0..20 {
        if !chosen {
            let n: i64 = sqlx::query_scalar("SELECT nextval('villa_code_seq')")
                .fetch_one(&mut *conn)
                .await?;
            patch
                .columns
                .insert("villa_code".into(), Value::String(format!("VL-{n:06}")));
        }
        id = insert_villa(conn, &patch, status, is_active).await?;
        if id.is_some() || chosen {
            break;
        }
    }
    let id = id.ok_or_else(|| {
        if chosen {
            Error::invalid("villaCode", "duplicate", VILLA_CODE_TAKEN)
        } else {
            Error::Internal(anyhow::anyhow!("no free generated villa code"))
        }
    })?;
    if owner.is_some() {
        sqlx::query("UPDATE villas SET owner_id = $2 WHERE id = $1")
            .bind(id)
            .bind(owner)
            .execute(&mut *conn)
            .await?;
    }
    Ok(id)
}

/// Applies an update: only the fields sent change. A villa whose onboarding is under way cannot
/// be made ACTIVE here (completing the onboarding does that).
pub async fn update(conn: &mut PgConnection, id: Uuid, input: &VillaInput) -> Result<()> {
    let onboarding: Option<Option<String>> = sqlx::query_scalar(
        "SELECT p.status FROM villas v LEFT JOIN onboarding_progress p ON p.villa_id = v.id
         WHERE v.id = $1 FOR NO KEY UPDATE OF v",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(onboarding) = onboarding else {
        return Err(Error::NotFound("villa"));
    };
    if input.status == Some(VillaStatus::Active) && onboarding.as_deref() == Some("IN_PROGRESS") {
        return Err(Error::invalid(
            "status",
            "invalid_transition",
            "the villa's onboarding is in progress; it becomes ACTIVE when its onboarding is completed",
        ));
    }
    if let Some(owner) = input.owner_id {
        check_owner(conn, owner).await?;
    }
    update_villa(conn, id, &input.patch).await?;
    if input.status.is_some() || input.owner_id.is_some() {
        let (status, is_active) = input.status.map(VillaStatus::stored).unzip();
        sqlx::query(
            "UPDATE villas SET status = coalesce($2, status), is_active = coalesce($3, is_active),
                 owner_id = CASE WHEN $4 THEN $5 ELSE owner_id END, version = version + 1, updated_at = now()
             WHERE id = $1",
        )
        .bind(id)
        .bind(status)
        .bind(is_active)
        .bind(input.owner_id.is_some())
        .bind(input.owner_id.flatten())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// `NotFound("villa")` unless the villa exists (for reads of a villa's sub-resources).
pub async fn ensure_exists(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    let found: Option<bool> = sqlx::query_scalar("SELECT true FROM villas WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    found.map(|_| ()).ok_or(Error::NotFound("villa"))
}

/// What holds a villa that has operational history, kind by kind (only the kinds it has). The
/// company must keep these records: such a villa is archived, never deleted.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VillaHolds {
    #[serde(skip_serializing_if = "is_zero")]
    pub stock_items: i64,
    /// Transfers from or to one of the villa's stock locations (a cancelled or in-transit one
    /// may hold no item of the villa).
    #[serde(skip_serializing_if = "is_zero")]
    pub stock_transfers: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub assets: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub work_orders: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub emergencies: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub timesheets: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub planned_maintenance_schedules: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub field_notes: i64,
    /// Listings of the PMS linked to the villa (by its code, or by hand): their reservations
    /// are its revenue and occupancy.
    #[serde(skip_serializing_if = "is_zero")]
    pub pms_listings: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl VillaHolds {
    fn described(&self) -> Vec<String> {
        [
            (self.stock_items, "stock item"),
            (self.stock_transfers, "stock transfer"),
            (self.assets, "asset"),
            (self.work_orders, "work order"),
            (self.emergencies, "emergency"),
            (self.timesheets, "timesheet entry"),
            (
                self.planned_maintenance_schedules,
                "planned-maintenance schedule",
            ),
            (self.field_notes, "field note"),
            (self.pms_listings, "linked PMS listing"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| {
            if n == 1 {
                format!("1 {what}")
            } else if what.ends_with('y') {
                format!("{n} {}ies", what.trim_end_matches('y'))
            } else {
                format!("{n} {what}s")
            }
        })
        .collect()
    }
}

/// Refuses with 409 `VILLA_IN_USE` when the villa has operational history (stock items, stock
/// transfers, assets, work orders, emergencies, timesheets, planned-maintenance schedules, field
/// notes, linked PMS listings: deleting it would silently unlink them), naming the
/// count of each kind in `details.inUse`; the message says to archive it instead. Every delete
/// of a villa goes through here (the wizard's and management's).
pub async fn refuse_if_in_use(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    let holds: (i64, i64, i64, i64, i64, i64, i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM inventory_items WHERE property_id = $1),
                (SELECT count(*) FROM inventory_transfers t WHERE EXISTS (SELECT 1 FROM inventory_locations l
                    WHERE l.property_id = $1 AND l.id IN (t.source_location_id, t.destination_location_id))),
                (SELECT count(*) FROM assets WHERE villa_id = $1),
                (SELECT count(*) FROM work_orders WHERE villa_id = $1),
                (SELECT count(*) FROM emergencies WHERE villa_id = $1),
                (SELECT count(*) FROM timesheets WHERE villa_id = $1),
                (SELECT count(*) FROM pm_schedules s JOIN assets a ON a.id = s.asset_id WHERE a.villa_id = $1),
                (SELECT count(*) FROM field_notes WHERE villa_id = $1),
                (SELECT count(*) FROM pms_listings WHERE villa_id = $1)",
    )
    .bind(id)
    .fetch_one(&mut *conn)
    .await?;
    let holds = VillaHolds {
        stock_items: holds.0,
        stock_transfers: holds.1,
        assets: holds.2,
        work_orders: holds.3,
        emergencies: holds.4,
        timesheets: holds.5,
        planned_maintenance_schedules: holds.6,
        field_notes: holds.7,
        pms_listings: holds.8,
    };
    if holds == VillaHolds::default() {
        return Ok(());
    }
    Err(Error::ConflictWith {
        code: "VILLA_IN_USE",
        message: format!(
            "the villa has operational history ({}), which the company keeps; archive it instead (status ARCHIVED or INACTIVE keeps everything){}",
            holds.described().join(", "),
            if holds.pms_listings > 0 {
                "; a linked listing is unlinked with PATCH /reporting/listings/{id} {\"villaId\": null}"
            } else {
                ""
            }
        ),
        details: serde_json::json!({ "inUse": holds }),
    })
}
