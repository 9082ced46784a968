//! `/reporting/sync`: synchronisation runs with the PMS. A trigger answers at once (202) with the
//! run it started, or with the one already started or running (one run at a time); the run is a
//! job on the `pms` queue (`jobs::pms`, run by `worker-pms`), and its status route reads it from
//! Postgres, with `Retry-After` until it has finished.

use axum::{
    Json,
    extract::State,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use domain::{
    Problems,
    reporting::{
        SYNC_ENTITIES, SYNC_STATUSES, SYNC_TYPES,
        sync_runs::{self, Entity, Started, SyncKind},
    },
};
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::{ApiJson, ApiPath, ApiQuery, Object},
    paging::{JsonPageAnswer, Page, PageQuery},
    state::AppState,
};

/// Seconds a client waits before asking for a run's status again (`Retry-After`). The rate
/// limit of the sync routes may raise it (`limits::enforce`).
pub const POLL_AFTER_SECS: u64 = 2;

crate::computed_schema!(
    /// What to synchronise.
    SyncTrigger => json!({
        "type": "object",
        "required": ["type", "entities"],
        "properties": {
            "type": {"type": "string", "enum": SYNC_TYPES,
                "description": "`full`: every listing and reservation; once it completes, the records of the entities it read that the PMS no longer returned are retired (a listing INACTIVE with `removedFromPms`, a reservation REMOVED; counted in `progress.*.retired`). `incremental`: the listings, and the reservations with activity since the last completed sync that included reservations (less PMS_SYNC_MARGIN_SECS); every reservation when there is none. It retires nothing."},
            "entities": {"type": "array", "minItems": 1, "maxItems": SYNC_ENTITIES.len(), "uniqueItems": true,
                "items": {"type": "string", "enum": SYNC_ENTITIES},
                "description": "Listings are synchronised before reservations."}
        }
    })
);

crate::computed_schema!(
    /// The run a trigger started, or the run already started or running.
    SyncStarted => json!({
        "type": "object",
        "required": ["syncId", "status", "startedAt"],
        "properties": {
            "syncId": {"type": "string", "format": "uuid"},
            "status": {"type": "string", "enum": SYNC_STATUSES,
                "description": "STARTED for a new run; the run already going answers its own (STARTED or RUNNING)."},
            "startedAt": {"type": "string", "format": "date-time"}
        }
    })
);

/// One entity's progress in a run.
fn progress_schema() -> Value {
    let count = json!({"type": "integer", "minimum": 0});
    json!({
        "type": "object",
        "properties": {
            "fetched": {"type": "integer", "minimum": 0, "description": "Distinct records received from the PMS."},
            "created": count,
            "updated": count,
            "unchanged": {"type": "integer", "minimum": 0, "description": "Received as already stored: nothing written."},
            "skipped": {"type": "integer", "minimum": 0, "description": "Distinct records received that could not be read (no id, no dates): left out."},
            "retired": {"type": "integer", "minimum": 0, "description": "Stored records the PMS no longer returned, retired once every page was stored (a listing INACTIVE with `removedFromPms`, a reservation REMOVED): full syncs only, and only when the run met at least as many records as the PMS counted; 0 otherwise."},
            "pagesDone": count,
            "pagesTotal": {"type": ["integer", "null"], "minimum": 0, "description": "When the PMS tells it. When the reservations are read again from the start (records moved during a pass), the pages of the earlier passes are included."}
        }
    })
}

crate::computed_schema!(
    /// A sync run: STARTED (queued) → RUNNING → COMPLETED or FAILED (with `error`).
    ReportingSyncRun => json!({
        "type": "object",
        "required": ["syncId", "type", "entities", "status", "startedAt", "finishedAt", "progress", "error"],
        "properties": {
            "syncId": {"type": "string", "format": "uuid"},
            "type": {"type": "string", "enum": SYNC_TYPES},
            "entities": {"type": "array", "items": {"type": "string", "enum": SYNC_ENTITIES}},
            "status": {"type": "string", "enum": SYNC_STATUSES},
            "startedAt": {"type": "string", "format": "date-time"},
            "finishedAt": {"type": ["string", "null"], "format": "date-time"},
            "progress": {"type": "object",
                "description": "Per entity, once its synchronisation has begun.",
                "properties": {"listings": progress_schema(), "reservations": progress_schema()}},
            "error": {"type": ["string", "null"], "description": "Why the run FAILED."},
            "triggeredBy": {"type": ["string", "null"], "description": "The token subject that triggered it, or `scheduler`."},
            "activitySince": {"type": ["string", "null"], "format": "date-time",
                "description": "Incremental: the reservations asked for had activity since this instant."}
        }
    })
);

/// The type and entities of a trigger body, every bad member reported.
fn parse_trigger(body: &Object, problems: &mut Problems) -> Option<(SyncKind, Vec<Entity>)> {
    let kind = match body.get("type") {
        None | Some(Value::Null) => {
            problems.push(
                "type",
                "required",
                format!("type is required: one of {}", SYNC_TYPES.join(", ")),
            );
            None
        }
        Some(Value::String(s)) => {
            let found = SyncKind::parse(s);
            if found.is_none() {
                problems.push(
                    "type",
                    "invalid_value",
                    format!("must be one of {}", SYNC_TYPES.join(", ")),
                );
            }
            found
        }
        Some(_) => {
            problems.push(
                "type",
                "invalid_type",
                format!("must be a string: one of {}", SYNC_TYPES.join(", ")),
            );
            None
        }
    };
    let entities = match body.get("entities") {
        None | Some(Value::Null) => {
            problems.push(
                "entities",
                "required",
                format!(
                    "entities is required: a non-empty array of {}",
                    SYNC_ENTITIES.join(", ")
                ),
            );
            None
        }
        Some(Value::Array(items)) if items.is_empty() => {
            problems.push(
                "entities",
                "too_short",
                format!("must name at least one of {}", SYNC_ENTITIES.join(", ")),
            );
            None
        }
        Some(Value::Array(items)) => {
            // Each entity at most once: a longer array is refused before its members are read.
            let items =
                domain::record::members::at_most(items, "entities", SYNC_ENTITIES.len(), problems)?;
            let before = problems.len();
            let mut entities: Vec<Entity> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let field = format!("entities[{i}]");
                match item {
                    Value::String(s) => match Entity::parse(s) {
                        Some(entity) if entities.contains(&entity) => problems.push(
                            field,
                            "duplicate",
                            format!("{} is named more than once", entity.as_str()),
                        ),
                        Some(entity) => entities.push(entity),
                        None => problems.push(
                            field,
                            "invalid_value",
                            format!("must be one of {}", SYNC_ENTITIES.join(", ")),
                        ),
                    },
                    _ => problems.push(
                        field,
                        "invalid_type",
                        format!("must be a string: one of {}", SYNC_ENTITIES.join(", ")),
                    ),
                }
            }
            (problems.len() == before).then_some(entities)
        }
        Some(_) => {
            problems.push(
                "entities",
                "invalid_type",
                format!("must be an array of {}", SYNC_ENTITIES.join(", ")),
            );
            None
        }
    };
    Some((kind?, entities?))
}

/// Starts a sync run, or answers the one already started or running (one at a time). 503
/// `PMS_NOT_CONFIGURED` without `PMS_CLIENT_ID` and `PMS_CLIENT_SECRET`.
#[utoipa::path(post, operation_id = "reporting_sync_trigger", path = "/reporting/sync/trigger", tag = "reporting",
    request_body = SyncTrigger,
    responses(
        (status = 202, description = "The run, queued (or the run already going). `Location` names its status route; `Retry-After` says when to ask it.", body = SyncStarted),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 5 sync requests a minute per caller; `retryAfter` and `Retry-After` say when to try again"),
        (status = 503, description = "PMS_NOT_CONFIGURED: the PMS credentials (PMS_CLIENT_ID, PMS_CLIENT_SECRET) are not set")))]
pub async fn trigger(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<Response, AppError> {
    let mut problems = Problems::new();
    let parsed = parse_trigger(&body, &mut problems);
    let (kind, entities) = problems.finish_with(parsed)?;
    if state.pms.is_none() {
        return Err(AppError::UnavailableWith {
            code: "PMS_NOT_CONFIGURED",
            message: "the PMS is not configured (PMS_CLIENT_ID and PMS_CLIENT_SECRET)".into(),
        });
    }
    let triggered = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        let triggered = jobs::pms::trigger(&mut tx, kind, &entities, &user.subject).await?;
        tx.commit().await?;
        Ok(triggered)
    })
    .await?;
    if let Some(enqueued) = triggered.enqueued {
        state.queues.push_in_background(vec![enqueued]);
    }
    let run = match triggered.started {
        Started::New(run) | Started::AlreadyActive(run) => run,
    };
    let body = json!({"syncId": run.id, "status": run.status, "startedAt": run.started_at});
    Ok(super::accepted(
        format!("/reporting/sync/status/{}", run.id),
        POLL_AFTER_SECS,
        body,
    ))
}

/// One run, read from Postgres: status, progress per entity, error. `Retry-After` until it is
/// COMPLETED or FAILED.
#[utoipa::path(get, operation_id = "reporting_sync_status", path = "/reporting/sync/status/{syncId}", tag = "reporting",
    params(("syncId" = Uuid, Path)),
    responses(
        (status = 200, description = "The run; `Retry-After` while it is STARTED or RUNNING", body = ReportingSyncRun),
        (status = 404, description = "No such run"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 5 sync requests a minute per caller")))]
pub async fn status(
    State(state): State<AppState>,
    ApiPath(sync_id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    let mut conn = state.pool.acquire().await?;
    let run = sync_runs::status(&mut conn, sync_id).await?;
    let finished = matches!(run["status"].as_str(), Some("COMPLETED" | "FAILED"));
    let mut res = Json(run).into_response();
    if !finished {
        res.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(POLL_AFTER_SECS));
    }
    Ok(res)
}

/// Past and current runs, newest first.
#[utoipa::path(get, operation_id = "reporting_sync_runs", path = "/reporting/sync/runs", tag = "reporting",
    params(PageQuery),
    responses(
        (status = 200, body = Page<ReportingSyncRun>),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 5 sync requests a minute per caller")))]
pub async fn runs(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let page = paging.parse()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        sync_runs::list(&mut conn, page).await?,
        page,
    ))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(trigger))
        .routes(routes!(status))
        .routes(routes!(runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: Value) -> Result<(&'static str, Vec<&'static str>), Vec<String>> {
        let Value::Object(body) = body else {
            unreachable!()
        };
        let mut problems = Problems::new();
        let parsed = parse_trigger(&body, &mut problems);
        problems
            .finish_with(parsed)
            .map(|(kind, entities)| (kind.as_str(), entities.iter().map(|e| e.as_str()).collect()))
            .map_err(|e| match e {
                domain::Error::Validation(fields) => fields.into_iter().map(|f| f.field).collect(),
                other => vec![other.to_string()],
            })
    }

    #[test]
    fn trigger_bodies() {
        assert_eq!(
            parse(json!({"type": "full", "entities": ["listings", "reservations"]})),
            Ok(("full", vec!["listings", "reservations"]))
        );
        assert_eq!(
            parse(json!({"type": "Incremental", "entities": ["reservations"]})),
            Ok(("incremental", vec!["reservations"]))
        );
        assert_eq!(
            parse(json!({})),
            Err(vec!["type".into(), "entities".into()])
        );
        assert_eq!(
            parse(json!({"type": 1, "entities": []})),
            Err(vec!["type".into(), "entities".into()])
        );
        assert_eq!(
            parse(json!({"type": "partial", "entities": ["listings", "guests"]})),
            Err(vec!["type".into(), "entities[1]".into()])
        );
        assert_eq!(
            parse(json!({"type": "full", "entities": ["listings", "listings"]})),
            Err(vec!["entities[1]".into()])
        );
        assert_eq!(
            parse(json!({"type": "full", "entities": [3, "guests"]})),
            Err(vec!["entities[0]".into(), "entities[1]".into()])
        );
        // More members than there are entities: refused whole, before they are read.
        assert_eq!(
            parse(json!({"type": "partial", "entities": ["listings", "guests", "listings", 3]})),
            Err(vec!["type".into(), "entities".into()])
        );
        assert_eq!(
            parse(json!({"type": "full", "entities": "listings"})),
            Err(vec!["entities".into()])
        );
    }
}
