//! The onboarding dashboard's aggregates and views (`/api/dashboard/*`).

use chrono::NaiveDate;
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::Result;
use crate::onboarding::Step;
use crate::pagination::PageRequest;

/// `GET /api/dashboard/stats`.
pub async fn stats(pool: &PgPool) -> Result<Value> {
    let counts: Value = sqlx::query_scalar(
        "SELECT jsonb_build_object(
            'totalVillas', (SELECT count(*) FROM villas),
            'activeVillas', (SELECT count(*) FROM villas WHERE is_active),
            'pendingOnboarding', (SELECT count(*) FROM villas v WHERE NOT EXISTS
                (SELECT 1 FROM onboarding_progress p WHERE p.villa_id = v.id AND p.status <> 'NOT_STARTED')),
            'onboardingInProgress', (SELECT count(*) FROM onboarding_progress WHERE status = 'IN_PROGRESS'),
            'onboardingCompleted', (SELECT count(*) FROM onboarding_progress WHERE status = 'COMPLETED'),
            'staffCount', (SELECT count(*) FROM staff WHERE is_active),
            'totalDocuments', (SELECT count(*) FROM documents),
            'totalOwners', (SELECT count(*) FROM owners),
            'averageCompletionTime', coalesce((SELECT round((avg(extract(epoch FROM completed_at - started_at)) / 3600)::numeric, 2)
                FROM onboarding_progress WHERE status = 'COMPLETED' AND completed_at IS NOT NULL), 0))",
    )
    .fetch_one(pool)
    .await?;
    let skipped: Vec<Value> = sqlx::query_scalar(
        "SELECT jsonb_build_object('fieldName', f, 'skipCount', count(*))
         FROM onboarding_progress, unnest(skipped_fields) AS f
         WHERE status = 'COMPLETED' GROUP BY f ORDER BY count(*) DESC, f",
    )
    .fetch_all(pool)
    .await?;
    let mut out = counts;
    // numeric comes back from jsonb as a number already; make sure it is a JSON number.
    out["mostSkippedFields"] = Value::Array(skipped);
    Ok(out)
}

/// A page of rows and the total, as every listing view returns them.
pub struct Page {
    pub items: Vec<Value>,
    pub total: i64,
}

async fn page(
    pool: &PgPool,
    rows: &'static str,
    count: &'static str,
    p: PageRequest,
) -> Result<Page> {
    let items = sqlx::query_scalar(rows)
        .bind(i64::from(p.limit))
        .bind(p.offset())
        .fetch_all(pool)
        .await?;
    let total = sqlx::query_scalar(count).fetch_one(pool).await?;
    Ok(Page { items, total })
}

/// Villas with their onboarding state and owner.
pub async fn villas(pool: &PgPool, p: PageRequest) -> Result<Page> {
    page(
        pool,
        "SELECT jsonb_build_object('id', v.id, 'villaCode', v.villa_code, 'villaName', v.villa_name,
                'city', v.city, 'country', v.country, 'propertyType', v.property_type, 'status', v.status,
                'isActive', v.is_active, 'onboardingStatus', coalesce(p.status, 'NOT_STARTED'),
                'completionPercentage', 10 * (SELECT count(*) FROM onboarding_steps s WHERE s.villa_id = v.id AND s.status = 'COMPLETED'),
                'ownerName', nullif(coalesce(o.company_name, concat_ws(' ', o.first_name, o.last_name)), ''),
                'createdAt', v.created_at, 'updatedAt', v.updated_at)
         FROM villas v LEFT JOIN onboarding_progress p ON p.villa_id = v.id LEFT JOIN owners o ON o.id = v.owner_id
         ORDER BY v.created_at DESC, v.id DESC LIMIT $1 OFFSET $2",
        "SELECT count(*) FROM villas",
        p,
    )
    .await
}

/// Owners with the names of their villas.
pub async fn owners(pool: &PgPool, p: PageRequest) -> Result<Page> {
    page(
        pool,
        "SELECT jsonb_build_object('id', o.id, 'ownerType', o.owner_type, 'firstName', o.first_name, 'lastName', o.last_name,
                'companyName', o.company_name, 'email', o.email, 'phone', o.phone, 'nationality', o.nationality,
                'villas', coalesce((SELECT jsonb_agg(jsonb_build_object('id', v.id, 'villaName', v.villa_name, 'villaCode', v.villa_code)
                                              ORDER BY v.villa_name) FROM villas v WHERE v.owner_id = o.id), '[]'::jsonb),
                'createdAt', o.created_at)
         FROM owners o ORDER BY o.created_at DESC, o.id DESC LIMIT $1 OFFSET $2",
        "SELECT count(*) FROM owners",
        p,
    )
    .await
}

/// Staff across all villas, with their assignments.
pub async fn staff(pool: &PgPool, p: PageRequest) -> Result<Page> {
    page(
        pool,
        "SELECT jsonb_build_object('id', s.id, 'firstName', s.first_name, 'lastName', s.last_name, 'email', s.email,
                'phone', s.phone, 'defaultRole', s.default_role, 'isActive', s.is_active,
                'assignments', coalesce((SELECT jsonb_agg(jsonb_build_object('villaId', v.id, 'villaName', v.villa_name,
                                                 'role', vs.role, 'isPrimary', vs.is_primary) ORDER BY v.villa_name)
                                         FROM villa_staff vs JOIN villas v ON v.id = vs.villa_id WHERE vs.staff_id = s.id), '[]'::jsonb))
         FROM staff s ORDER BY s.first_name, s.last_name NULLS FIRST, s.id LIMIT $1 OFFSET $2",
        "SELECT count(*) FROM staff",
        p,
    )
    .await
}

/// Documents with their villa and expiry status as of `today` (the company's day): EXPIRED,
/// EXPIRING_SOON (within 30 days), VALID, or NO_EXPIRY.
pub async fn documents(pool: &PgPool, p: PageRequest, today: NaiveDate) -> Result<Page> {
    let items = sqlx::query_scalar(
        "SELECT jsonb_build_object('id', d.id, 'villaId', d.villa_id, 'villaName', v.villa_name, 'villaCode', v.villa_code,
                'fileName', d.file_name, 'documentType', d.document_type, 'fileSize', d.file_size,
                'fileUrl', '/api/documents/' || d.id || '/file', 'storagePath', d.storage_path,
                'expiryDate', d.expiry_date,
                'expiryStatus', CASE WHEN d.expiry_date IS NULL THEN 'NO_EXPIRY'
                                     WHEN d.expiry_date < $3::date THEN 'EXPIRED'
                                     WHEN d.expiry_date <= $3::date + 30 THEN 'EXPIRING_SOON'
                                     ELSE 'VALID' END,
                'createdAt', d.created_at)
         FROM documents d JOIN villas v ON v.id = d.villa_id
         ORDER BY d.expiry_date ASC NULLS LAST, d.created_at DESC, d.id LIMIT $1 OFFSET $2",
    )
    .bind(i64::from(p.limit))
    .bind(p.offset())
    .bind(today)
    .fetch_all(pool)
    .await?;
    let total = sqlx::query_scalar("SELECT count(*) FROM documents")
        .fetch_one(pool)
        .await?;
    Ok(Page { items, total })
}

/// Villas, owners and key metrics in one view; documents expiring within 30 days of `today` (the
/// company's day).
pub async fn management(pool: &PgPool, today: NaiveDate) -> Result<Value> {
    let metrics: Value = sqlx::query_scalar(
        "SELECT jsonb_build_object(
            'villasByStatus', coalesce((SELECT jsonb_object_agg(status, n) FROM
                (SELECT status, count(*) AS n FROM villas GROUP BY status) s), '{}'::jsonb),
            'activeVillas', (SELECT count(*) FROM villas WHERE is_active),
            'totalOwners', (SELECT count(*) FROM owners),
            'totalStaff', (SELECT count(*) FROM staff),
            'totalDocuments', (SELECT count(*) FROM documents),
            'totalPhotos', (SELECT count(*) FROM photos),
            'documentsExpiringSoon', (SELECT count(*) FROM documents WHERE expiry_date BETWEEN $1::date AND $1::date + 30),
            'totalBedrooms', coalesce((SELECT sum(bedrooms) FROM villas WHERE is_active), 0),
            'totalGuestCapacity', coalesce((SELECT sum(max_guests) FROM villas WHERE is_active), 0))",
    )
    .bind(today)
    .fetch_one(pool)
    .await?;
    let first = PageRequest { page: 1, limit: 10 };
    Ok(json!({
        "metrics": metrics,
        "recentVillas": villas(pool, first).await?.items,
        "recentOwners": owners(pool, first).await?.items,
    }))
}

/// Onboarding across villas: counts by status, how many villas completed each step, and the
/// villas still in progress (most recently updated first).
pub async fn onboarding_overview(pool: &PgPool, p: PageRequest) -> Result<(Value, Page)> {
    let by_status: Value = sqlx::query_scalar(
        "SELECT jsonb_build_object(
            'NOT_STARTED', (SELECT count(*) FROM villas v WHERE NOT EXISTS (SELECT 1 FROM onboarding_progress p WHERE p.villa_id = v.id)),
            'IN_PROGRESS', (SELECT count(*) FROM onboarding_progress WHERE status = 'IN_PROGRESS'),
            'COMPLETED', (SELECT count(*) FROM onboarding_progress WHERE status = 'COMPLETED'))",
    )
    .fetch_one(pool)
    .await?;
    let per_step: Vec<(String, i64)> = sqlx::query_as(
        "SELECT step, count(*) FILTER (WHERE status = 'COMPLETED') FROM onboarding_steps GROUP BY step",
    )
    .fetch_all(pool)
    .await?;
    let steps: Vec<Value> = Step::ALL
        .iter()
        .map(|s| {
            let n = per_step
                .iter()
                .find(|(name, _)| name == s.as_str())
                .map_or(0, |(_, n)| *n);
            json!({"step": s.number(), "name": s.summary_name(), "title": s.title(), "completedCount": n})
        })
        .collect();
    let in_progress = page(
        pool,
        "SELECT jsonb_build_object('villaId', v.id, 'villaName', v.villa_name, 'villaCode', v.villa_code,
                'status', p.status, 'startedAt', p.started_at, 'updatedAt', p.updated_at,
                'completionPercentage', 10 * (SELECT count(*) FROM onboarding_steps s WHERE s.villa_id = v.id AND s.status = 'COMPLETED'))
         FROM onboarding_progress p JOIN villas v ON v.id = p.villa_id WHERE p.status = 'IN_PROGRESS'
         ORDER BY p.updated_at DESC, v.id LIMIT $1 OFFSET $2",
        "SELECT count(*) FROM onboarding_progress WHERE status = 'IN_PROGRESS'",
        p,
    )
    .await?;
    Ok((
        json!({"byStatus": by_status, "stepCompletion": steps}),
        in_progress,
    ))
}

/// `GET /api/debug/check-data`: records that break the model's rules (each should be 0).
pub async fn integrity(pool: &PgPool) -> Result<Value> {
    Ok(sqlx::query_scalar(
        "SELECT jsonb_build_object(
            'progressWithoutTenSteps', (SELECT count(*) FROM onboarding_progress p
                WHERE (SELECT count(*) FROM onboarding_steps s WHERE s.villa_id = p.villa_id) <> 10),
            'completedWithIncompleteSteps', (SELECT count(*) FROM onboarding_progress p WHERE p.status = 'COMPLETED'
                AND EXISTS (SELECT 1 FROM onboarding_steps s WHERE s.villa_id = p.villa_id AND s.status <> 'COMPLETED')),
            'approvedButInactive', (SELECT count(*) FROM villas v JOIN onboarding_progress p ON p.villa_id = v.id
                WHERE p.status = 'COMPLETED' AND NOT v.is_active),
            'documentsAwaitingStore', (SELECT count(*) FROM documents WHERE storage_file_id IS NULL),
            'photosAwaitingStore', (SELECT count(*) FROM photos WHERE storage_file_id IS NULL),
            'photosWithoutThumbnail', (SELECT count(*) FROM photos WHERE thumbnail_content IS NULL),
            'ownersWithoutVilla', (SELECT count(*) FROM owners o WHERE NOT EXISTS (SELECT 1 FROM villas v WHERE v.owner_id = o.id)))",
    )
    .fetch_one(pool)
    .await?)
}

/// The OpenAPI description of the JSON these queries build (documentation only; the API's tests
/// validate every answer against it).
pub mod views {
    #![allow(dead_code)]
    use std::collections::BTreeMap;

    use chrono::{DateTime, NaiveDate, Utc};
    use utoipa::ToSchema;
    use uuid::Uuid;

    /// `GET /api/dashboard/stats`.
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct DashboardStats {
        total_villas: i64,
        active_villas: i64,
        /// Villas whose onboarding has not started.
        pending_onboarding: i64,
        onboarding_in_progress: i64,
        onboarding_completed: i64,
        /// Active staff members.
        staff_count: i64,
        total_documents: i64,
        total_owners: i64,
        /// Hours from start to completion, on average over completed onboardings (0 when none).
        average_completion_time: f64,
        /// Optional fields most often left empty in completed onboardings.
        most_skipped_fields: Vec<SkippedField>,
    }

    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct SkippedField {
        /// `<step>.<field>`, e.g. `villaInfo.description`.
        field_name: String,
        skip_count: i64,
    }

    /// A villa with its onboarding state and owner.
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct DashboardVilla {
        id: Uuid,
        villa_code: String,
        villa_name: String,
        city: Option<String>,
        country: Option<String>,
        property_type: Option<String>,
        status: String,
        is_active: bool,
        /// NOT_STARTED, IN_PROGRESS or COMPLETED.
        onboarding_status: String,
        completion_percentage: i64,
        owner_name: Option<String>,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    }

    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct VillaRef {
        id: Uuid,
        villa_name: String,
        villa_code: String,
    }

    /// An owner with the villas it owns.
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct DashboardOwner {
        id: Uuid,
        owner_type: String,
        first_name: Option<String>,
        last_name: Option<String>,
        company_name: Option<String>,
        email: Option<String>,
        phone: Option<String>,
        nationality: Option<String>,
        villas: Vec<VillaRef>,
        created_at: DateTime<Utc>,
    }

    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StaffAssignment {
        villa_id: Uuid,
        villa_name: String,
        role: String,
        is_primary: bool,
    }

    /// A staff member with their villas.
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct DashboardStaff {
        id: Uuid,
        first_name: String,
        last_name: Option<String>,
        email: Option<String>,
        phone: Option<String>,
        default_role: String,
        is_active: bool,
        assignments: Vec<StaffAssignment>,
    }

    #[derive(ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ExpiryStatus {
        Expired,
        /// Within 30 days.
        ExpiringSoon,
        Valid,
        NoExpiry,
    }

    /// A document with its villa and how close it is to expiring.
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct DashboardDocument {
        id: Uuid,
        villa_id: Uuid,
        villa_name: String,
        villa_code: String,
        file_name: String,
        document_type: String,
        file_size: i64,
        file_url: String,
        storage_path: String,
        expiry_date: Option<NaiveDate>,
        expiry_status: ExpiryStatus,
        created_at: DateTime<Utc>,
    }

    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ManagementMetrics {
        /// Villa count by status.
        villas_by_status: BTreeMap<String, i64>,
        active_villas: i64,
        total_owners: i64,
        total_staff: i64,
        total_documents: i64,
        total_photos: i64,
        documents_expiring_soon: i64,
        total_bedrooms: i64,
        total_guest_capacity: i64,
    }

    /// `GET /api/dashboard/management`.
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ManagementDashboard {
        metrics: ManagementMetrics,
        /// The 10 newest villas.
        recent_villas: Vec<DashboardVilla>,
        /// The 10 newest owners.
        recent_owners: Vec<DashboardOwner>,
    }

    /// Onboardings by status.
    #[derive(ToSchema)]
    pub struct OnboardingByStatus {
        #[schema(rename = "NOT_STARTED")]
        not_started: i64,
        #[schema(rename = "IN_PROGRESS")]
        in_progress: i64,
        #[schema(rename = "COMPLETED")]
        completed: i64,
    }

    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StepCompletion {
        step: u8,
        name: String,
        title: String,
        /// Villas that completed this step.
        completed_count: i64,
    }

    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct OnboardingOverview {
        by_status: OnboardingByStatus,
        step_completion: Vec<StepCompletion>,
        /// The page of onboardings in progress that `pagination` describes.
        in_progress: Vec<OnboardingInProgress>,
    }

    /// A villa whose onboarding is in progress.
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct OnboardingInProgress {
        villa_id: Uuid,
        villa_name: String,
        villa_code: String,
        status: String,
        started_at: Option<DateTime<Utc>>,
        updated_at: Option<DateTime<Utc>>,
        completion_percentage: i64,
    }

    /// `GET /api/debug/check-data`: records that break the model's rules (each should be 0).
    #[derive(ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct IntegrityChecks {
        progress_without_ten_steps: i64,
        completed_with_incomplete_steps: i64,
        approved_but_inactive: i64,
        documents_awaiting_store: i64,
        photos_awaiting_store: i64,
        photos_without_thumbnail: i64,
        owners_without_villa: i64,
    }
}
