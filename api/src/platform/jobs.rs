//! Operators' view of the job pipeline (admin only, see auth::permissions):
//! `GET /admin/queues`, `GET /admin/jobs`, `GET /admin/jobs/{id}`,
//! `POST /admin/jobs/{id}/retry`, `POST /admin/jobs/diagnostic`.

use crate::paging::PageQuery;
use axum::{Json, extract::State, http::StatusCode};
use domain::{
    Problems,
    job_store::{self, JobRecord, JobStatus, QueueCounts},
    pagination::Pagination,
};
use jobs::{
    Job, Queue,
    system::{DiagnosticJob, MAX_DIAGNOSTIC_SLEEP_MS},
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    error::AppError,
    extract::{ApiJson, ApiPath, ApiQuery},
    state::AppState,
};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueOverview {
    #[serde(flatten)]
    counts: QueueCounts,
    /// Deliveries waiting in Redis; `null` when Redis is unreachable.
    redis_backlog: Option<u64>,
}

#[derive(Serialize, ToSchema)]
pub struct QueuesResponse {
    data: Vec<QueueOverview>,
}

/// Depth and job states of every queue.
#[utoipa::path(get, path = "/admin/queues", tag = "admin",
    responses((status = 200, body = QueuesResponse), (status = 401), (status = 403)))]
pub async fn queues(State(state): State<AppState>) -> Result<Json<QueuesResponse>, AppError> {
    let counts = job_store::counts_by_queue(&state.pool).await?;
    let mut data = Vec::new();
    for queue in Queue::ALL {
        let counts = counts
            .iter()
            .find(|c| c.queue == queue.name())
            .cloned()
            .unwrap_or(QueueCounts {
                queue: queue.name().to_owned(),
                queued: 0,
                running: 0,
                succeeded: 0,
                failed: 0,
                oldest_queued_secs: None,
            });
        data.push(QueueOverview {
            counts,
            redis_backlog: state.queues.backlog(queue).await.ok(),
        });
    }
    Ok(Json(QueuesResponse { data }))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JobListQuery {
    /// QUEUED, RUNNING, SUCCEEDED or FAILED.
    status: Option<String>,
    queue: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct JobList {
    data: Vec<JobRecord>,
    pagination: Pagination,
}

/// Most recent jobs, newest first, filtered by status and queue.
#[utoipa::path(get, operation_id = "admin_jobs_list", path = "/admin/jobs", tag = "admin", params(PageQuery, JobListQuery),
    responses((status = 200, body = JobList), (status = 400), (status = 401), (status = 403)))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<JobListQuery>,
) -> Result<Json<JobList>, AppError> {
    let mut problems = Problems::new();
    let page = paging.read(&mut problems);
    let status = q.status.as_deref().and_then(|s| {
        let parsed = JobStatus::parse(s);
        if parsed.is_none() {
            problems.push(
                "status",
                "invalid_value",
                "must be QUEUED, RUNNING, SUCCEEDED or FAILED",
            );
        }
        parsed
    });
    let queue = q.queue.as_deref().and_then(|name| {
        let parsed = Queue::parse(name);
        if parsed.is_none() {
            let names: Vec<&str> = Queue::ALL.iter().map(|q| q.name()).collect();
            problems.push(
                "queue",
                "invalid_value",
                format!("must be one of {}", names.join(", ")),
            );
        }
        parsed
    });
    problems.finish()?;
    let (data, total) = job_store::recent(
        &state.pool,
        status,
        queue.map(Queue::name),
        i64::from(page.limit),
        page.offset(),
    )
    .await?;
    Ok(Json(JobList {
        data,
        pagination: Pagination {
            page: page.page,
            limit: page.limit,
            total,
        },
    }))
}

/// One job: status, attempts, progress, result or error.
#[utoipa::path(get, operation_id = "admin_jobs_get", path = "/admin/jobs/{id}", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = JobRecord), (status = 400), (status = 404)))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<Json<JobRecord>, AppError> {
    job_store::get(&state.pool, id)
        .await?
        .map(Json)
        .ok_or(AppError::NotFound("job"))
}

/// Queues a FAILED job again with fresh attempts. A job that works on a record its failure
/// closed reopens it in the same transaction: a failed export is made again from the start
/// (`PROCESSING`, its error cleared), a failed sync run is run again (`RUNNING`). 409 when the
/// job is not FAILED, when its export or sync run is no longer FAILED (`NOTHING_TO_RETRY`:
/// request a new export, trigger a new sync) or when another sync run is going
/// (`SYNC_IN_PROGRESS`).
#[utoipa::path(post, path = "/admin/jobs/{id}/retry", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 202, body = JobRecord), (status = 404),
        (status = 409, description = "Not FAILED (`CONFLICT`); its export is COMPLETED or EXPIRED, or its sync run COMPLETED (`NOTHING_TO_RETRY`: request a new export, trigger a new sync); another sync run is going (`SYNC_IN_PROGRESS`: retry once it has finished, or trigger a new sync)")))]
pub async fn retry(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<Uuid>,
) -> Result<(StatusCode, Json<JobRecord>), AppError> {
    let job = job_store::get(&state.pool, id)
        .await?
        .ok_or(AppError::NotFound("job"))?;
    if !jobs::retry::retry_failed(&state.pool, id).await? {
        return Err(AppError::Conflict {
            code: "CONFLICT",
            message: format!(
                "job {id} is {}, only FAILED jobs can be retried",
                job.status
            ),
        });
    }
    if let Some(queue) = Queue::parse(&job.queue) {
        state.queues.push_in_background(vec![jobs::Enqueued {
            queue,
            id,
            inserted: true,
        }]);
    }
    let job = job_store::get(&state.pool, id)
        .await?
        .ok_or(AppError::NotFound("job"))?;
    Ok((StatusCode::ACCEPTED, Json(job)))
}

/// The body of a diagnostic job (`jobs::system::DiagnosticJob`, which refuses other members).
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // documents the body
pub struct DiagnosticBody {
    /// How long the job sleeps, in milliseconds (default 0).
    #[schema(minimum = 0, maximum = 60_000)]
    sleep_ms: Option<u64>,
    /// How many runs fail before one succeeds (default 0).
    #[schema(minimum = 0)]
    fail_attempts: Option<u32>,
    note: Option<String>,
}

/// Enqueues a diagnostic job to check the pipeline end to end; poll `/admin/jobs/{id}`.
#[utoipa::path(post, path = "/admin/jobs/diagnostic", tag = "admin",
    request_body = DiagnosticBody,
    responses((status = 202, body = JobRecord)))]
pub async fn diagnostic(
    State(state): State<AppState>,
    ApiJson(job): ApiJson<DiagnosticJob>,
) -> Result<(StatusCode, Json<JobRecord>), AppError> {
    if job.sleep_ms > MAX_DIAGNOSTIC_SLEEP_MS {
        return Err(AppError::invalid(
            "sleepMs",
            "out_of_range",
            format!("at most {MAX_DIAGNOSTIC_SLEEP_MS}"),
        ));
    }
    let mut tx = state.pool.begin().await?;
    let enqueued = job.enqueue(&mut tx).await?;
    tx.commit().await?;
    state.queues.push_in_background(vec![enqueued]);
    let record = job_store::get(&state.pool, enqueued.id)
        .await?
        .ok_or(AppError::NotFound("job"))?;
    Ok((StatusCode::ACCEPTED, Json(record)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(queues))
        .routes(routes!(list))
        .routes(routes!(diagnostic))
        .routes(routes!(get))
        .routes(routes!(retry))
}
