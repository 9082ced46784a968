//! The onboarding dashboard's aggregates and views (`/api/dashboard/*`).

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

/// Documents with their villa and expiry status: EXPIRED, EXPIRING_SOON (within 30 days),
/// VALID, or NO_EXPIRY.
pub async fn documents(pool: &PgPool, p: PageRequest) -> Result<Page> {
    page(
        pool,
        "SELECT jsonb_build_object('id', d.id, 'villaId', d.villa_id, 'villaName', v.villa_name, 'villaCode', v.villa_code,
                'fileName', d.file_name, 'documentType', d.document_type, 'fileSize', d.file_size,
                'fileUrl', '/api/documents/' || d.id || '/file', 'storagePath', d.storage_path,
                'expiryDate', d.expiry_date,
                'expiryStatus', CASE WHEN d.expiry_date IS NULL THEN 'NO_EXPIRY'
                                     WHEN d.expiry_date < current_date THEN 'EXPIRED'
                                     WHEN d.expiry_date <= current_date + 30 THEN 'EXPIRING_SOON'
                                     ELSE 'VALID' END,
                'createdAt', d.created_at)
         FROM documents d JOIN villas v ON v.id = d.villa_id
         ORDER BY d.expiry_date ASC NULLS LAST, d.created_at DESC, d.id LIMIT $1 OFFSET $2",
        "SELECT count(*) FROM documents",
        p,
    )
    .await
}

/// Villas, owners and key metrics in one view.
pub async fn management(pool: &PgPool) -> Result<Value> {
    let metrics: Value = sqlx::query_scalar(
        "SELECT jsonb_build_object(
            'villasByStatus', coalesce((SELECT jsonb_object_agg(status, n) FROM
                (SELECT status, count(*) AS n FROM villas GROUP BY status) s), '{}'::jsonb),
            'activeVillas', (SELECT count(*) FROM villas WHERE is_active),
            'totalOwners', (SELECT count(*) FROM owners),
            'totalStaff', (SELECT count(*) FROM staff),
            'totalDocuments', (SELECT count(*) FROM documents),
            'totalPhotos', (SELECT count(*) FROM photos),
            'documentsExpiringSoon', (SELECT count(*) FROM documents WHERE expiry_date BETWEEN current_date AND current_date + 30),
            'totalBedrooms', coalesce((SELECT sum(bedrooms) FROM villas WHERE is_active), 0),
            'totalGuestCapacity', coalesce((SELECT sum(max_guests) FROM villas WHERE is_active), 0))",
    )
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
