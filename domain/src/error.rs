use serde::Serialize;

/// One invalid field of a request, as every surface reports it (each in its own shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
    /// A stable machine-readable reason: `required`, `invalid_format`, `out_of_range`,
    /// `invalid_value`, `too_long`, `duplicate`, ...
    pub code: &'static str,
}

impl FieldError {
    pub fn new(field: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
            code,
        }
    }
}

/// What the domain layer can answer besides success. The API maps each variant to a status and
/// renders it in the shape of the surface that was called.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("{0}")]
    Conflict(String),
    #[error("the record was changed by someone else")]
    PreconditionFailed,
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn invalid(
        field: impl Into<String>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Error::Validation(vec![FieldError::new(field, code, message)])
    }
}

/// Maps a unique-constraint violation to a user error on `field`; anything else stays a database
/// error. The one place where constraint names become messages.
pub fn on_unique_violation(err: sqlx::Error, field: &str, message: &str) -> Error {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => {
            Error::invalid(field, "duplicate", message)
        }
        _ => Error::Database(err),
    }
}
