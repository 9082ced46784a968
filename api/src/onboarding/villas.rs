//! `/api/villas`: list, create, read (with everything the wizard stored), delete.

use crate::paging::PageQuery;
use axum::{extract::State, http::HeaderMap};
use domain::{
    Problems,
    onboarding::{self, records},
    pagination::Pagination,
};
use jobs::{Job, documents::DeleteVillaFolder};
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use super::{Answer, DataMessage, DataPage, Reply, bodies, if_match};
use crate::extract::Object;
use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
};

/// Villas with basic info, newest first, paged (`page`, `limit`; the spec shows no paging, and
/// an unpaged list grows without bound).
#[utoipa::path(get, operation_id = "api_villas_list", path = "/api/villas", tag = "onboarding", params(PageQuery),
    responses((status = 200, body = Answer<DataPage<Vec<bodies::OnboardingVilla>>>)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Reply, AppError> {
    let page = q.parse()?;
    let (villas, total) = onboarding::list_villas(&state.pool, page).await?;
    Ok(Reply::new(json!({
        "data": villas,
        "pagination": Pagination { page: page.page, limit: page.limit, total },
        "message": format!("{total} villas"),
    })))
}

/// Creates a villa (DRAFT) without starting its onboarding. 400 lists every bad field; a villa
/// code in use is a 400 on `villaCode`.
#[utoipa::path(post, path = "/api/villas", tag = "onboarding",
    request_body = bodies::VillaCreate,
    responses((status = 201, body = Answer<DataMessage<bodies::OnboardingVilla>>, description = "With the villa `ETag`")))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Object>,
) -> Result<Reply, AppError> {
    let mut problems = Problems::new();
    let patch = records::parse_villa(&body, "", true, &state.cipher, &mut problems);
    problems.finish()?;
    let mut tx = state.pool.begin().await?;
    let id = records::create_villa(&mut tx, &patch).await?;
    let villa = onboarding::villa(&mut tx, id).await?;
    tx.commit().await?;
    let etag = onboarding::villa_etag(&villa);
    Ok(Reply::data(villa, "villa created").etag(etag).created())
}

/// The villa with everything the wizard stored: owner, contract, bank details (masked), OTA
/// credentials (without passwords), documents, staff, facilities, photos and onboarding.
#[utoipa::path(get, operation_id = "api_villas_get", path = "/api/villas/{id}", tag = "onboarding", params(("id" = Uuid, Path)),
    responses((status = 200, body = Answer<DataMessage<bodies::VillaBundle>>, description = "With the villa `ETag`")))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    let mut conn = state.pool.acquire().await?;
    let bundle = onboarding::villa_bundle(&mut conn, id).await?;
    let etag = onboarding::villa_etag(&bundle["villa"]);
    Ok(Reply::data(bundle, "villa").etag(etag))
}

/// Deletes the villa and all its records at once, and enqueues the removal of its document-store
/// folder. With `If-Match`, only if the villa is still at that version (412 otherwise). A villa
/// with operational history is kept: 409 `VILLA_IN_USE`, `data.inUse` counting it by kind.
#[utoipa::path(delete, path = "/api/villas/{id}", tag = "onboarding", params(("id" = Uuid, Path)),
    responses((status = 200, body = Answer<DataMessage<bodies::VillaDeleted>>),
        (status = 409, description = "`VILLA_IN_USE`: the villa has operational history (stock items, stock transfers, assets, work orders, emergencies, timesheets, planned-maintenance schedules, field notes, linked PMS listings); `data.inUse` counts it by kind. Archive it instead (status ARCHIVED or INACTIVE)."),
        (status = 412, description = "`If-Match` names an older version of the villa")))]
pub async fn delete(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Reply, AppError> {
    let expected = if_match(&headers, "villa", id)?;
    let job = delete_with_folder(&state, id, expected).await?;
    Ok(Reply::data(
        bodies::VillaDeleted {
            id,
            folder_removal_job_id: job.map(|j| j.id),
        },
        "villa and all its records deleted",
    ))
}

/// Deletes the villa and its records (with `expected`, only at that version) and enqueues the
/// removal of its document-store folder; returns that job. Both surfaces' deletes.
pub async fn delete_with_folder(
    state: &AppState,
    id: Uuid,
    expected: Option<i32>,
) -> Result<Option<jobs::Enqueued>, AppError> {
    let mut tx = state.pool.begin().await?;
    let folder = onboarding::delete_villa(&mut tx, id, expected).await?;
    let job = match folder {
        Some(folder) => Some(
            DeleteVillaFolder {
                villa_id: id,
                folder,
            }
            .enqueue(&mut tx)
            .await?,
        ),
        None => None,
    };
    tx.commit().await?;
    if let Some(job) = job {
        state.queues.push_in_background(vec![job]);
    }
    Ok(job)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, delete))
}
