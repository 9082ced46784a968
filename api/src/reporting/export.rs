//! `/reporting/export`: spreadsheet exports of the reporting data, made by a job. A request
//! answers at once (202) with the export it started; the export is a job on the `exports` queue
//! (`jobs::exports`, run by `worker-exports`) that writes the file into the document store; its
//! status route reads it from Postgres, with `Retry-After` until it has finished; the download
//! streams the file from the store. Files expire after EXPORT_RETENTION_DAYS.
//!
//! Making an export only reads what the caller may already read (`auth::permissions`, READS).
//! Its rows and figures are those of the GET routes for the same filters: the reservations of
//! `/reporting/reservations`, the figures of `/reporting/dashboard/metrics`
//! (`domain::reporting::figures`).

use axum::{
    Json,
    extract::State,
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use chrono::NaiveDate;
use domain::{
    Problems,
    reporting::{
        CHANNELS, RESERVATION_STATUSES,
        exports::{
            self, Download, EXPORT_FORMATS, EXPORT_STATUSES, EXPORT_TYPES, ExportFormat,
            ExportSpec, ExportType,
        },
        figures::{self, Currency, MAX_LISTING_IDS, Period, Scope},
    },
    storage::StoragePath,
};
use jobs::exports::Started;
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{
    auth::CurrentUser,
    error::{AppError, retry_transient},
    extract::{ApiJson, ApiPath, ApiQuery, Object},
    files::{attachment, bytes_response},
    paging::{JsonPageAnswer, Page, PageQuery},
    query::date_filter,
    state::AppState,
};

/// Seconds a client waits before asking for an export again (`Retry-After`, and `retryAfter`
/// of the download's 409). The rate limit may raise the header (`limits::enforce`).
pub const POLL_AFTER_SECS: u64 = 2;

/// The request's `endDate`, with each type's longest period as [`ExportType::max_nights`] has it.
fn period_end_description() -> String {
    let most = |kind: ExportType| kind.max_nights().unwrap_or_default();
    format!(
        "reservations: check-in on or before this date (optional). Other types: the period's last \
         night, included (default today, BUSINESS_TIME_ZONE); at most {} nights for listings and \
         occupancy, {} for revenue (by month: two years).",
        most(ExportType::Listings),
        most(ExportType::Revenue)
    )
}

crate::computed_schema!(
    /// What to export.
    ExportRequest => json!({
        "type": "object",
        "required": ["type"],
        "description": format!("{} {}", figures::DEFINITIONS, figures::PERIOD_DEFINITION),
        "properties": {
            "type": {"type": "string", "enum": EXPORT_TYPES,
                "description": "`reservations`: one row per reservation, exactly the reservations GET /reporting/reservations lists for the same filters, in its order. `listings`: one row per listing in scope with its figures over the period. `occupancy`: one row per listing and night. `revenue`: one row per listing and month of the period (the months at its edges partial: only the nights inside), then a Total row whose figures are computed as GET /reporting/dashboard/metrics computes them for the same period, listings and currency (that route answers periods of up to 366 nights)."},
            "format": {"type": "string", "enum": EXPORT_FORMATS, "default": "excel",
                "description": "`excel`: an .xlsx workbook, its header row frozen and filtered, typed cells, and a Definitions sheet (period, filters, when it was made, every column's definition). `csv`: UTF-8 with a byte-order mark, dates as YYYY-MM-DD, money with 2 decimals."},
            "startDate": {"type": "string", "format": "date",
                "description": "reservations: check-in on or after this date (optional, as in the list). Other types: the period's first night (default 29 days before endDate)."},
            "endDate": {"type": "string", "format": "date",
                "description": period_end_description()},
            "listingIds": {"type": "array", "maxItems": MAX_LISTING_IDS, "items": {"type": "string", "format": "uuid"},
                "description": "Listing ids (ours): exactly those listings, whatever their status (default: every ACTIVE listing for figures, every listing for reservations). An unknown id is a 400 naming it."},
            "currency": {"type": "string", "pattern": "^[A-Za-z]{3}$",
                "description": "ISO 4217 code of the money figures of listings and revenue (default REPORTING_CURRENCY, itself THB unless set); stays in other currencies are left out of money figures, never converted."},
            "status": {"type": "string", "enum": RESERVATION_STATUSES,
                "description": "reservations only: their status."},
            "channel": {"type": "string", "enum": CHANNELS,
                "description": "reservations only: their channel."},
            "ownerId": {"type": "string", "format": "uuid",
                "description": "ownerStatement only (required): the owner (404 OWNER_NOT_FOUND when there is none)."},
            "month": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$",
                "description": "ownerStatement only: the month, YYYY-MM (default the month before this one, the company's)."}
        }
    })
);

crate::computed_schema!(
    /// The export a request started, or an identical request's that serves it.
    ExportStarted => json!({
        "type": "object",
        "required": ["exportId", "status"],
        "properties": {
            "exportId": {"type": "string", "format": "uuid"},
            "status": {"type": "string", "enum": ["PROCESSING", "COMPLETED"],
                "description": "PROCESSING: being made (a new export, or an identical request's); COMPLETED: an identical request's export, made from the same data and not expired, ready to download."}
        }
    })
);

crate::computed_schema!(
    /// An export: PROCESSING → COMPLETED (EXPIRED once its retention has passed) or FAILED (with
    /// `error`).
    ReportingExport => json!({
        "type": "object",
        "required": ["exportId", "type", "format", "status", "progress", "rowCount", "fileName",
            "downloadUrl", "error", "createdAt", "completedAt", "expiresAt"],
        "properties": {
            "exportId": {"type": "string", "format": "uuid"},
            "type": {"type": "string", "enum": EXPORT_TYPES},
            "format": {"type": "string", "enum": EXPORT_FORMATS},
            "status": {"type": "string", "enum": EXPORT_STATUSES,
                "description": "PROCESSING while the job makes the file (poll as `Retry-After` says); COMPLETED: `downloadUrl` serves it; FAILED: `error` says why; EXPIRED: the file was removed after EXPORT_RETENTION_DAYS."},
            "progress": {"type": "integer", "minimum": 0, "maximum": 100, "description": "Percent of the rows written."},
            "rowCount": {"type": ["integer", "null"], "minimum": 0, "description": "Data rows in the file, once COMPLETED (the revenue export's Total row included)."},
            "fileName": {"type": "string", "description": "What the download is called: the type and the period."},
            "downloadUrl": {"type": ["string", "null"], "description": "While COMPLETED: the route that serves the file."},
            "error": {"type": ["string", "null"], "description": "Why it FAILED."},
            "createdAt": {"type": "string", "format": "date-time"},
            "completedAt": {"type": ["string", "null"], "format": "date-time"},
            "expiresAt": {"type": ["string", "null"], "format": "date-time", "description": "When the file is removed (COMPLETED)."},
            "sizeBytes": {"type": ["integer", "null"], "minimum": 0},
            "startDate": {"type": ["string", "null"], "format": "date"},
            "endDate": {"type": ["string", "null"], "format": "date"},
            "listingIds": {"type": "array", "items": {"type": "string", "format": "uuid"},
                "description": "The listings asked for; empty for the default scope."},
            "requestedBy": {"type": ["string", "null"], "description": "The token subject that asked for it."}
        }
    })
);

/// A member that must be a string when present; absent, `null` and blank read as absent.
fn text<'a>(body: &'a Object, problems: &mut Problems, field: &str) -> Option<&'a str> {
    match body.get(field) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.trim()).filter(|s| !s.is_empty()),
        Some(_) => {
            problems.push(field, "invalid_type", format!("{field} must be a string"));
            None
        }
    }
}

/// `listingIds`: an array of ids, read as the dashboard's comma-separated ones are
/// ([`figures::listing_ids_of`]: each once, in the order sent); a member that is not a string
/// is a problem of its own.
fn body_listing_ids(body: &Object, problems: &mut Problems) -> Vec<Uuid> {
    let items = match body.get("listingIds") {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.push(
                "listingIds",
                "invalid_type",
                "listingIds must be an array of listing ids",
            );
            return Vec::new();
        }
    };
    let Some(items) =
        domain::record::members::at_most(items, "listingIds", MAX_LISTING_IDS, problems)
    else {
        return Vec::new();
    };
    let mut members = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => members.push(s.as_str()),
            _ => problems.push(
                format!("listingIds[{i}]"),
                "invalid_type",
                "must be a listing id (a UUID string)",
            ),
        }
    }
    figures::listing_ids_of(problems, "listingIds", members)
}

/// What an export request asks for, defaults applied; every bad member reported. The listing
/// ids are not checked against the listings here ([`Scope::resolve`] does).
/// `today` and `zone` are the company's (`BUSINESS_TIME_ZONE`): the default period's end, and
/// the days an owner statement's work orders are completed on.
fn parse_export(
    body: &Object,
    problems: &mut Problems,
    today: NaiveDate,
    zone: &str,
    default_currency: &Currency,
) -> Option<ExportSpec> {
    // The list's filter is `listingId`; an export takes several. Ignored, it would export every
    // listing's reservations: refused with the name to use.
    if body.contains_key("listingId") {
        problems.push(
            "listingId",
            "unknown_field",
            "an export names its listings in listingIds, an array of listing ids",
        );
    }
    let kind = match body.get("type") {
        None | Some(Value::Null) => {
            problems.push(
                "type",
                "required",
                format!("type is required: one of {}", EXPORT_TYPES.join(", ")),
            );
            None
        }
        Some(Value::String(s)) => {
            let found = ExportType::parse(s.trim());
            if found.is_none() {
                problems.push(
                    "type",
                    "invalid_value",
                    format!("type must be one of {}", EXPORT_TYPES.join(", ")),
                );
            }
            found
        }
        Some(_) => {
            problems.push(
                "type",
                "invalid_type",
                format!("type must be a string: one of {}", EXPORT_TYPES.join(", ")),
            );
            None
        }
    };
    let format = match text(body, problems, "format") {
        None => Some(ExportFormat::Excel),
        Some(raw) => {
            let found = ExportFormat::parse(raw);
            if found.is_none() {
                problems.push(
                    "format",
                    "invalid_value",
                    format!("format must be one of {}", EXPORT_FORMATS.join(", ")),
                );
            }
            found
        }
    };
    let start = text(body, problems, "startDate");
    let end = text(body, problems, "endDate");
    // An owner statement is an owner's month; the other types take neither.
    let owner_id = text(body, problems, "ownerId");
    let month = text(body, problems, "month");
    let statement = if kind == Some(ExportType::OwnerStatement) {
        for (field, given) in [
            ("startDate", start.is_some()),
            ("endDate", end.is_some()),
            ("listingIds", body.contains_key("listingIds")),
        ] {
            if given {
                problems.push(
                    field,
                    "not_applicable",
                    format!("{field} does not apply to an owner statement: it covers the owner's villas over `month`"),
                );
            }
        }
        let owner = crate::query::id_filter(problems, "ownerId", owner_id);
        if owner_id.is_none() {
            problems.push(
                "ownerId",
                "required",
                "ownerId is required for an owner statement",
            );
        }
        let month = super::statements::read_month(problems, month, today);
        Some(owner.zip(month))
    } else {
        for (field, value) in [("ownerId", owner_id), ("month", month)] {
            if value.is_some() {
                problems.push(
                    field,
                    "not_applicable",
                    format!("{field} applies only to type ownerStatement"),
                );
            }
        }
        None
    };
    let dates = match kind.and_then(ExportType::max_nights) {
        // A period of figures, defaults applied.
        Some(max_nights) => Period::parse(problems, start, end, today, max_nights)
            .map(|period| (Some(period.start), Some(period.end))),
        // Reservations (or an unknown type): the list's optional check-in bounds, any span.
        None => {
            let start = date_filter(problems, "startDate", start);
            let end = date_filter(problems, "endDate", end);
            if let (Some(start), Some(end)) = (start, end)
                && end < start
            {
                problems.push("endDate", "out_of_range", "must not be before startDate");
            }
            Some((start, end))
        }
    };
    let listing_ids = body_listing_ids(body, problems);
    let currency = text(body, problems, "currency");
    if kind == Some(ExportType::OwnerStatement) && currency.is_some() {
        problems.push(
            "currency",
            "not_applicable",
            "currency does not apply to an owner statement: it shows every currency apart",
        );
    }
    let currency = Currency::parse(problems, "currency", currency, default_currency);
    let status = text(body, problems, "status");
    let channel = text(body, problems, "channel");
    let (status, channel) = match kind {
        Some(ExportType::Reservations) => (
            status.and_then(|s| problems.closed("status", s, RESERVATION_STATUSES)),
            channel.and_then(|c| problems.closed("channel", c, CHANNELS)),
        ),
        Some(other) => {
            for (field, value) in [("status", status), ("channel", channel)] {
                if value.is_some() {
                    problems.push(
                        field,
                        "not_applicable",
                        format!(
                            "{field} applies only to type reservations, not {}",
                            other.as_str()
                        ),
                    );
                }
            }
            (None, None)
        }
        None => (None, None),
    };
    let ((mut start_date, mut end_date), currency) = dates.zip(currency)?;
    let mut owner = None;
    if let Some(statement) = statement {
        let (owner_id, month) = statement?;
        (start_date, end_date, owner) = (Some(month.first), Some(month.last_day()), Some(owner_id));
    }
    Some(ExportSpec {
        kind: kind?,
        format: format?,
        start_date,
        end_date,
        listing_ids,
        currency,
        status: status.map(str::to_owned),
        channel: channel.map(str::to_owned),
        owner_id: owner,
        time_zone: owner.map(|_| zone.to_owned()),
    })
}

/// Starts an export of the reporting data; the file is made by a job. Poll the status route
/// that `Location` names (as `Retry-After` says) until it is COMPLETED, then download it. An
/// identical request (same type, format, period and filters, defaults applied) while such an
/// export is PROCESSING, or COMPLETED, not expired and made after the last completed sync,
/// answers that export (`status` says which) rather than making the file again. A caller may
/// have 3 exports PROCESSING at once.
#[utoipa::path(post, operation_id = "reporting_export_create", path = "/reporting/export", tag = "reporting",
    request_body = ExportRequest,
    responses(
        (status = 202, description = "The export, started. `Location` names its status route; `Retry-After` says when to ask it.", body = ExportStarted),
        (status = 400, description = "VALIDATION_ERROR: a missing or unknown type, an unknown format, a malformed date, startDate after endDate, a period too long, a malformed or unknown listing id, a malformed currency, status or channel on another type than reservations, ownerId or month on another type than ownerStatement, an owner statement without ownerId or with a period or listings; the message names every bad member"),
        (status = 404, description = "OWNER_NOT_FOUND: an owner statement of no such owner"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 requests a minute per caller; EXPORT_QUOTA_EXCEEDED: the caller has 3 exports being made (PROCESSING) already (`retryAfter` and `Retry-After` say when to ask again)")))]
pub async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<Object>,
) -> Result<Response, AppError> {
    let mut problems = Problems::new();
    let zone = state.core.business_time_zone;
    let parsed = parse_export(
        &body,
        &mut problems,
        zone.today(),
        zone.name(),
        &state.core.reporting.currency,
    );
    let mut spec = problems.finish_with(parsed)?;
    if let Some(owner) = spec.owner_id {
        let mut conn = state.pool.acquire().await?;
        domain::management::owners::get(&mut conn, owner).await?;
    }
    if !spec.listing_ids.is_empty() {
        let mut conn = state.pool.acquire().await?;
        let scope = Scope::resolve(&mut conn, std::mem::take(&mut spec.listing_ids)).await?;
        spec.listing_ids = scope.listing_ids;
    }
    let started = retry_transient(|| async {
        let mut tx = state.pool.begin().await?;
        let started = jobs::exports::start(&mut tx, &spec, &user.subject).await?;
        tx.commit().await?;
        Ok(started)
    })
    .await?;
    let created = match started {
        Started::New(created, enqueued) => {
            state.queues.push_in_background(vec![enqueued]);
            created
        }
        Started::Existing(created) => created,
    };
    let body = json!({"exportId": created.id, "status": created.status});
    Ok(super::accepted(
        format!("/reporting/export/{}", created.id),
        POLL_AFTER_SECS,
        body,
    ))
}

/// Exports, newest first.
#[utoipa::path(get, operation_id = "reporting_export_list", path = "/reporting/export", tag = "reporting",
    params(PageQuery),
    responses(
        (status = 200, body = Page<ReportingExport>),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 requests a minute per caller")))]
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(paging): ApiQuery<PageQuery>,
) -> Result<JsonPageAnswer, AppError> {
    let page = paging.parse()?;
    let mut conn = state.pool.acquire().await?;
    Ok(JsonPageAnswer::new(
        exports::list(&mut conn, page).await?,
        page,
    ))
}

/// One export, read from Postgres: status, progress, and once COMPLETED its row count and
/// download route. `Retry-After` while it is PROCESSING.
#[utoipa::path(get, operation_id = "reporting_export_status", path = "/reporting/export/{exportId}", tag = "reporting",
    params(("exportId" = Uuid, Path)),
    responses(
        (status = 200, description = "The export; `Retry-After` while it is PROCESSING", body = ReportingExport),
        (status = 404, description = "No such export"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 requests a minute per caller")))]
pub async fn status(
    State(state): State<AppState>,
    ApiPath(export_id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    let mut conn = state.pool.acquire().await?;
    let export = exports::status(&mut conn, export_id).await?;
    let processing = export["status"].as_str() == Some("PROCESSING");
    let mut res = Json(export).into_response();
    if processing {
        res.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(POLL_AFTER_SECS));
    }
    Ok(res)
}

/// The file of a COMPLETED export, streamed from the document store, as an attachment named
/// after its type and period.
#[utoipa::path(get, operation_id = "reporting_export_download", path = "/reporting/export/{exportId}/download", tag = "reporting",
    params(("exportId" = Uuid, Path)),
    responses(
        (status = 200, description = "The file: a workbook (excel) or UTF-8 CSV (csv), with `Content-Disposition: attachment` and its file name",
            content(([u8] = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"), ([u8] = "text/csv"))),
        (status = 404, description = "No such export"),
        (status = 409, description = "EXPORT_NOT_READY while the file is being made (`retryAfter` and `Retry-After` say when to ask again); EXPORT_FAILED when it could not be made (the message says why)"),
        (status = 410, description = "EXPORT_EXPIRED: the file was removed after EXPORT_RETENTION_DAYS; ask for a new export"),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: 60 requests a minute per caller"),
        (status = 503, description = "STORAGE_UNAVAILABLE: the document store (S3, SharePoint) failed or is throttling; `Retry-After` says when to try again")))]
pub async fn download(
    State(state): State<AppState>,
    ApiPath(export_id): ApiPath<Uuid>,
) -> Result<Response, AppError> {
    // The connection goes back to the pool before the file is streamed.
    let download = {
        let mut conn = state.pool.acquire().await?;
        exports::download(&mut conn, export_id).await?
    };
    let (storage_path, file_name, format) = match download {
        Download::Ready {
            storage_path,
            file_name,
            format,
            ..
        } => (storage_path, file_name, format),
        Download::Processing => {
            return Err(AppError::ConflictRetry {
                code: "EXPORT_NOT_READY",
                message: "the export is still being made; ask again after retryAfter seconds"
                    .into(),
                retry_after_secs: POLL_AFTER_SECS,
            });
        }
        Download::Failed(error) => {
            return Err(AppError::Conflict {
                code: "EXPORT_FAILED",
                message: format!("the export failed: {error}"),
            });
        }
        Download::Expired => return Err(expired()),
    };
    let path = StoragePath::from_stored(&storage_path).ok_or_else(|| {
        AppError::Internal(anyhow::anyhow!(
            "export {export_id}: malformed storage path {storage_path:?}"
        ))
    })?;
    // A file removed before its time (by hand) is gone all the same.
    let object = state.store.get_stream(&path).await?.ok_or_else(expired)?;
    Ok(bytes_response(
        object,
        format.content_type(),
        None,
        "private, no-store",
        Some(attachment(&file_name)),
    ))
}

fn expired() -> AppError {
    AppError::Gone {
        code: "EXPORT_EXPIRED",
        message: "the export's file has expired (EXPORT_RETENTION_DAYS); ask for a new export"
            .into(),
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(status))
        .routes(routes!(download))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> NaiveDate {
        s.parse().expect("an ISO date")
    }

    fn parse(body: Value) -> Result<ExportSpec, Vec<String>> {
        let Value::Object(body) = body else {
            unreachable!()
        };
        let thb = Currency::new_setting("THB").expect("THB is a currency");
        let mut problems = Problems::new();
        let parsed = parse_export(&body, &mut problems, date("2026-03-31"), "UTC", &thb);
        problems.finish_with(parsed).map_err(|e| match e {
            domain::Error::Validation(fields) => fields.into_iter().map(|f| f.field).collect(),
            other => vec![other.to_string()],
        })
    }

    /// The fields named by the refusal of `body`.
    fn refused(body: Value) -> Vec<String> {
        parse(body).err().unwrap_or_default()
    }

    #[test]
    fn defaults() {
        let spec = parse(json!({"type": "revenue"})).expect("valid");
        assert_eq!(spec.kind, ExportType::Revenue);
        assert_eq!(spec.format, ExportFormat::Excel);
        assert_eq!(spec.start_date, Some(date("2026-03-02")));
        assert_eq!(spec.end_date, Some(date("2026-03-31")));
        assert_eq!(spec.currency.as_str(), "THB");
        assert!(spec.listing_ids.is_empty());

        // Reservations: no period unless asked, as in the list.
        let body = json!({
            "type": "Reservations", "format": "CSV", "status": "confirmed",
            "channel": "airbnb", "currency": "usd",
        });
        let spec = parse(body).expect("valid");
        assert_eq!(spec.kind, ExportType::Reservations);
        assert_eq!(spec.format, ExportFormat::Csv);
        assert_eq!((spec.start_date, spec.end_date), (None, None));
        assert_eq!(spec.status.as_deref(), Some("CONFIRMED"));
        assert_eq!(spec.channel.as_deref(), Some("AIRBNB"));
        assert_eq!(spec.currency.as_str(), "USD");
    }

    #[test]
    fn periods_and_listings() {
        fn two_years(kind: &str) -> Value {
            json!({"type": kind, "startDate": "2024-04-01", "endDate": "2026-03-31"})
        }
        let a = Uuid::from_u128(1);
        let b = Uuid::from_u128(2);
        let body = json!({
            "type": "occupancy", "startDate": "2026-01-01", "endDate": "2026-01-31",
            "listingIds": [b.to_string(), a.to_string(), b.to_string()],
        });
        let spec = parse(body).expect("valid");
        assert_eq!(spec.start_date, Some(date("2026-01-01")));
        assert_eq!(spec.end_date, Some(date("2026-01-31")));
        assert_eq!(spec.listing_ids, vec![b, a]);
        // 366 nights for listings and occupancy; 730 for revenue (by month), no more.
        assert_eq!(refused(two_years("listings")), vec!["endDate".to_owned()]);
        assert_eq!(refused(two_years("occupancy")), vec!["endDate".to_owned()]);
        let spec = parse(two_years("revenue")).expect("two years of months");
        assert_eq!(spec.period().map(Period::nights), Some(730));
        let longer = json!({"type": "revenue", "startDate": "2024-03-31", "endDate": "2026-03-31"});
        assert_eq!(refused(longer), vec!["endDate".to_owned()]);
        // Reservations: any span, but in order.
        assert!(parse(two_years("reservations")).is_ok());
        let body = json!({
            "type": "reservations", "startDate": "2026-03-02", "endDate": "2026-03-01",
        });
        assert_eq!(refused(body), vec!["endDate".to_owned()]);
    }

    #[test]
    fn every_bad_member_is_named() {
        assert_eq!(refused(json!({})), vec!["type".to_owned()]);
        let body = json!({
            "type": "guests", "format": "pdf", "startDate": "2026-13-01",
            "listingIds": ["x", 3, ""], "currency": 12,
        });
        assert_eq!(
            refused(body),
            vec![
                "type".to_owned(),
                "format".to_owned(),
                "startDate".to_owned(),
                "listingIds[1]".to_owned(),
                "listingIds".to_owned(),
                "listingIds".to_owned(),
                "currency".to_owned(),
            ]
        );
        let body = json!({"type": "revenue", "status": "CONFIRMED", "channel": "AIRBNB"});
        assert_eq!(
            refused(body),
            vec!["status".to_owned(), "channel".to_owned()]
        );
        let body = json!({"type": "reservations", "listingId": "x"});
        assert_eq!(refused(body), vec!["listingId".to_owned()]);
        let body = json!({"type": "reservations", "status": "BOOKED", "listingIds": "a,b"});
        assert_eq!(
            refused(body),
            vec!["listingIds".to_owned(), "status".to_owned()]
        );
        assert_eq!(
            refused(json!({"type": 1, "format": true})),
            vec!["type".to_owned(), "format".to_owned()]
        );
        let too_many: Vec<String> = (0..=MAX_LISTING_IDS as u128)
            .map(|i| Uuid::from_u128(i + 1).to_string())
            .collect();
        assert_eq!(
            refused(json!({"type": "listings", "listingIds": too_many})),
            vec!["listingIds".to_owned()]
        );
    }
}
