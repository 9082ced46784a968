//! One error type for every handler, rendered per surface.
//!
//! A handler returns [`AppError`]; its `IntoResponse` attaches an [`ErrorInfo`] to the response.
//! The [`render_errors`] middleware, which wraps the whole app, then writes the body in the shape
//! of the surface the request was for. Responses the framework or a tower layer made on its own
//! (404 for an unknown route, 405, 413, 408) carry no `ErrorInfo`; the middleware gives them one
//! from their status, so no client ever sees a framework default body. The rendering is in
//! `render`, each surface's body shape in `shapes`.

use axum::{
    body::Body,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use domain::FieldError;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    /// The entity that was not found, in words ("villa", "work order").
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    /// A 400 whose body carries more than the message (onboarding's `missingSteps`).
    #[error("{message}")]
    BadRequestWith {
        code: &'static str,
        message: String,
        extra: Value,
    },
    /// 409 with a code the client can act on (`CONFLICT` when there is nothing more specific).
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 409 with figures beside the message (`details` of the inventory error body).
    #[error("{message}")]
    ConflictWith {
        code: &'static str,
        message: String,
        details: Value,
    },
    /// 409 that passes once the work under way is done (an export still being made): the
    /// reporting body's `retryAfter` and `Retry-After` say when to ask again.
    #[error("{message}")]
    ConflictRetry {
        code: &'static str,
        message: String,
        retry_after_secs: u64,
    },
    /// 410: the record existed and is gone for good (an export past its retention).
    #[error("{message}")]
    Gone { code: &'static str, message: String },
    #[error("the record was changed since it was read")]
    PreconditionFailed,
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 413; the limit in bytes when the route knows it.
    #[error("the request body is larger than allowed")]
    PayloadTooLarge(Option<usize>),
    /// 429 for a limit of the caller's that frees with time: the request rate
    /// (`RATE_LIMIT_EXCEEDED`), the exports being made (`EXPORT_QUOTA_EXCEEDED`); `retryAfter`
    /// and `Retry-After` say when.
    #[error("{message}")]
    TooManyRequests {
        code: &'static str,
        message: String,
        retry_after_secs: u64,
    },
    #[error("{0}")]
    Unavailable(String),
    /// 503 with a code the client can act on (`PMS_NOT_CONFIGURED`).
    #[error("{message}")]
    UnavailableWith { code: &'static str, message: String },
    /// 503 that passes with time (the document store throttling): `Retry-After` says when.
    #[error("{message}")]
    UnavailableRetry {
        code: &'static str,
        message: String,
        retry_after_secs: u64,
    },
    /// Never shown to clients: logged with the request id, answered as a generic 500.
    #[error(transparent)]
    Internal(anyhow::Error),
}

/// What the renderer needs to know of a failure.
#[derive(Debug, Clone)]
pub struct ErrorInfo {
    pub status: StatusCode,
    /// Generic code (NOT_FOUND, VALIDATION_ERROR, ...).
    pub code: &'static str,
    pub message: String,
    pub fields: Vec<FieldError>,
    /// For NOT_FOUND: the entity, which the maintenance surface names in its code.
    pub entity: Option<&'static str>,
    pub retry_after_secs: Option<u64>,
    /// Extra members for the body (for example inventory's `available`/`requested`).
    pub extra: Option<Value>,
}

impl ErrorInfo {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            fields: Vec::new(),
            entity: None,
            retry_after_secs: None,
            extra: None,
        }
    }

    /// For a response the framework made without an `ErrorInfo`.
    fn from_status(status: StatusCode) -> Self {
        let (code, message) = match status {
            StatusCode::NOT_FOUND => ("NOT_FOUND", "no such route"),
            StatusCode::METHOD_NOT_ALLOWED => (
                "METHOD_NOT_ALLOWED",
                "this method is not allowed on this route",
            ),
            StatusCode::PAYLOAD_TOO_LARGE => (
                "PAYLOAD_TOO_LARGE",
                "the request body is larger than allowed",
            ),
            StatusCode::REQUEST_TIMEOUT => ("REQUEST_TIMEOUT", "the request took too long"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                ("UNSUPPORTED_MEDIA_TYPE", "unsupported content type")
            }
            StatusCode::UNAUTHORIZED => ("UNAUTHORIZED", "authentication required"),
            StatusCode::FORBIDDEN => ("FORBIDDEN", "not allowed"),
            StatusCode::UNPROCESSABLE_ENTITY | StatusCode::BAD_REQUEST => {
                ("BAD_REQUEST", "bad request")
            }
            s if s.is_server_error() => ("SERVER_ERROR", "internal server error"),
            _ => ("BAD_REQUEST", "bad request"),
        };
        // 422 is axum's default for bodies that do not fit; the contract says 400.
        let status = if status == StatusCode::UNPROCESSABLE_ENTITY {
            StatusCode::BAD_REQUEST
        } else {
            status
        };
        Self::new(status, code, message)
    }
}

impl From<domain::Error> for AppError {
    fn from(e: domain::Error) -> Self {
        match e {
            domain::Error::NotFound(what) => AppError::NotFound(what),
            domain::Error::Validation(fields) => AppError::Validation(fields),
            domain::Error::Conflict { code, message } => AppError::Conflict { code, message },
            domain::Error::ConflictWith {
                code,
                message,
                details,
            } => AppError::ConflictWith {
                code,
                message,
                details,
            },
            domain::Error::PreconditionFailed => AppError::PreconditionFailed,
            domain::Error::QuotaExceeded {
                code,
                message,
                retry_after_secs,
            } => AppError::TooManyRequests {
                code,
                message,
                retry_after_secs,
            },
            domain::Error::Database(e) => AppError::Internal(e.into()),
            domain::Error::Internal(e) => AppError::Internal(e),
        }
    }
}

/// How long a client is asked to wait when the document store failed without saying.
const STORE_RETRY_SECS: u64 = 30;

impl From<domain::storage::StorageError> for AppError {
    /// A remote store that fails or throttles is a service the route needs being away (503,
    /// with when to come back); the local disk failing is ours (500). The cause is logged, never
    /// shown: it names paths and the store's own words.
    fn from(e: domain::storage::StorageError) -> Self {
        use domain::storage::StorageError;
        match e {
            StorageError::Throttled { retry_after, .. } => {
                tracing::warn!(error = %e, "document store throttled a read");
                AppError::UnavailableRetry {
                    code: "STORAGE_UNAVAILABLE",
                    message: "the document store is busy; try again after Retry-After".to_owned(),
                    retry_after_secs: retry_after.as_secs().clamp(1, 3600),
                }
            }
            StorageError::Backend { .. } => {
                tracing::error!(error = %e, "document store read failed");
                AppError::UnavailableRetry {
                    code: "STORAGE_UNAVAILABLE",
                    message: "the document store is unavailable; try again later".to_owned(),
                    retry_after_secs: STORE_RETRY_SECS,
                }
            }
            StorageError::Io { .. } => AppError::Internal(e.into()),
        }
    }
}

impl From<sqlx::Error> for AppError {
    /// Through the domain's one mapping of database errors (`domain::Error`'s safety net).
    fn from(e: sqlx::Error) -> Self {
        domain::Error::from(e).into()
    }
}

impl AppError {
    pub fn invalid(
        field: impl Into<String>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        AppError::Validation(vec![FieldError::new(field, code, message)])
    }

    /// Postgres refused the transaction only because of a concurrent one (deadlock broken,
    /// serialization failure): running it again succeeds.
    pub fn is_transient_conflict(&self) -> bool {
        match self {
            AppError::Internal(e) => e
                .downcast_ref::<sqlx::Error>()
                .is_some_and(domain::db::is_transient_conflict),
            _ => false,
        }
    }

    pub fn info(&self) -> ErrorInfo {
        match self {
            AppError::Unauthorized(m) => {
                ErrorInfo::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", m)
            }
            AppError::Forbidden(m) => ErrorInfo::new(StatusCode::FORBIDDEN, "FORBIDDEN", m),
            AppError::NotFound(what) => {
                let mut i = ErrorInfo::new(
                    StatusCode::NOT_FOUND,
                    "NOT_FOUND",
                    format!("{what} not found"),
                );
                i.entity = Some(what);
                i
            }
            AppError::Validation(fields) => {
                // At most MAX_LISTED_PROBLEMS are listed, however many the request had.
                let (listed, total) = domain::error::listed_problems(fields);
                let message = match listed.as_slice() {
                    [one] => format!("{}: {}", one.field, one.message),
                    _ if total > domain::error::MAX_LISTED_PROBLEMS => format!(
                        "{total} problems in the request; the first {} are listed",
                        domain::error::MAX_LISTED_PROBLEMS
                    ),
                    _ => format!("{total} fields are invalid"),
                };
                let mut i = ErrorInfo::new(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", message);
                i.fields = listed;
                i
            }
            AppError::BadRequest { code, message } => {
                ErrorInfo::new(StatusCode::BAD_REQUEST, code, message)
            }
            AppError::BadRequestWith {
                code,
                message,
                extra,
            } => {
                let mut i = ErrorInfo::new(StatusCode::BAD_REQUEST, code, message);
                i.extra = Some(extra.clone());
                i
            }
            AppError::Conflict { code, message } => {
                ErrorInfo::new(StatusCode::CONFLICT, code, message)
            }
            AppError::ConflictWith {
                code,
                message,
                details,
            } => {
                let mut i = ErrorInfo::new(StatusCode::CONFLICT, code, message);
                i.extra = Some(details.clone());
                i
            }
            AppError::ConflictRetry {
                code,
                message,
                retry_after_secs,
            } => {
                let mut i = ErrorInfo::new(StatusCode::CONFLICT, code, message);
                i.retry_after_secs = Some(*retry_after_secs);
                i
            }
            AppError::Gone { code, message } => ErrorInfo::new(StatusCode::GONE, code, message),
            AppError::PreconditionFailed => ErrorInfo::new(
                StatusCode::PRECONDITION_FAILED,
                "PRECONDITION_FAILED",
                "the record was changed since it was read (If-Match does not match its ETag); reload it and try again",
            ),
            AppError::UnsupportedMediaType(m) => ErrorInfo::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
                m,
            ),
            AppError::PayloadTooLarge(limit) => ErrorInfo::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PAYLOAD_TOO_LARGE",
                match limit {
                    Some(bytes) => {
                        format!(
                            "the request body is larger than the {bytes} bytes this route takes"
                        )
                    }
                    None => "the request body is larger than allowed".to_owned(),
                },
            ),
            AppError::TooManyRequests {
                code,
                message,
                retry_after_secs,
            } => {
                let mut i = ErrorInfo::new(StatusCode::TOO_MANY_REQUESTS, code, message);
                i.retry_after_secs = Some(*retry_after_secs);
                i
            }
            AppError::Unavailable(m) => {
                ErrorInfo::new(StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE", m)
            }
            AppError::UnavailableWith { code, message } => {
                ErrorInfo::new(StatusCode::SERVICE_UNAVAILABLE, code, message)
            }
            AppError::UnavailableRetry {
                code,
                message,
                retry_after_secs,
            } => {
                let mut i = ErrorInfo::new(StatusCode::SERVICE_UNAVAILABLE, code, message);
                i.retry_after_secs = Some(*retry_after_secs);
                i
            }
            AppError::Internal(_) => ErrorInfo::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "SERVER_ERROR",
                "internal server error",
            ),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        if let AppError::Internal(e) = &self {
            // The request id is on the span of the request (see http::trace).
            tracing::error!(error = format!("{e:#}"), "internal error");
        }
        let info = self.info();
        let mut res = Response::new(Body::empty());
        *res.status_mut() = info.status;
        res.extensions_mut().insert(info);
        res
    }
}

/// Runs `transaction` (a whole transaction, begun and committed inside) again when Postgres
/// refused it for a transient conflict, up to [`domain::db::TRANSACTION_ATTEMPTS`] times, so
/// that a client never sees a 500 for work that merely collided with other work.
pub async fn retry_transient<T, F, Fut>(mut transaction: F) -> Result<T, AppError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, AppError>>,
{
    let mut attempt = 1;
    loop {
        match transaction().await {
            Err(e) if e.is_transient_conflict() && attempt < domain::db::TRANSACTION_ATTEMPTS => {
                attempt += 1;
                tracing::info!(attempt, error = %e, "transaction refused for a concurrent one; running it again");
                tokio::time::sleep(domain::db::retry_pause(attempt)).await;
            }
            other => return other,
        }
    }
}

/// A handler panicked: log it, answer a plain 500 that [`render_errors`] then shapes.
pub fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("non-string panic payload");
    tracing::error!(panic = detail, "handler panicked");
    AppError::Internal(anyhow::anyhow!("handler panicked")).into_response()
}

mod render;
mod shapes;

pub use render::{AUTO_SAVE, OwnBody, auto_save_failure, is_auto_save, render_errors};
pub use shapes::{body_for, schema};
