//! Villas as the management surface lists and reads them. The onboarding wizard writes the same
//! rows (`villa_name` is management's `name`).

use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

use crate::pagination::PageRequest;
use crate::{Error, Result};

/// Status as the management surface shows it: ACTIVE for an active villa, otherwise the
/// lifecycle state of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
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

    pub fn parse(field: &str, raw: &str) -> Result<Self> {
        crate::error::one_of(field, raw, &Self::ALL, Self::as_str)
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
#[derive(Debug, Clone, Default)]
pub struct VillaFilter {
    pub status: Option<VillaStatus>,
    /// Matched case-insensitively as a substring of name, code, city and country.
    pub search: Option<String>,
}

// The search expression is the one `villas_search_trgm` indexes, so the planner can use it.
macro_rules! search_matches {
    () => {
        "($2::text IS NULL OR lower(villa_name || ' ' || villa_code || ' ' || coalesce(city, '') || ' '
          || coalesce(country, '')) LIKE '%' || $2 || '%')"
    };
}
macro_rules! status_matches {
    () => {
        "($1::text IS NULL OR (CASE WHEN is_active THEN 'ACTIVE' ELSE status END) = $1)"
    };
}

pub async fn list(
    pool: &PgPool,
    filter: &VillaFilter,
    page: PageRequest,
) -> Result<(Vec<VillaListItem>, i64)> {
    let status = filter.status.map(VillaStatus::as_str);
    let search = filter.search.as_deref().map(like_pattern);
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
    let total = sqlx::query_scalar(concat!(
        "SELECT count(*) FROM villas WHERE ",
        status_matches!(),
        " AND ",
        search_matches!()
    ))
    .bind(status)
    .bind(&search)
    .fetch_one(pool)
    .await?;
    Ok((rows, total))
}

/// Lower-cases the term and escapes LIKE's wildcards so `search=50%` means the text "50%".
fn like_pattern(term: &str) -> String {
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
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

pub async fn get(pool: &PgPool, id: Uuid) -> Result<VillaDetail> {
    sqlx::query_as(
        "SELECT id, villa_name AS name, villa_code,
                CASE WHEN is_active THEN 'ACTIVE' ELSE status END AS status,
                property_type, villa_style, bedrooms, bathrooms, max_guests, address, city, country,
                nullif(concat_ws(', ', nullif(city, ''), nullif(country, '')), '') AS location,
                description, owner_id, storage_base_path, created_at, updated_at
         FROM villas WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("villa"))
}
