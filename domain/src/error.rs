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
    /// The request is valid but the record's state refuses it: a code the client can act on
    /// (`INVALID_STATUS_TRANSITION`, `ALREADY_RATED`, ...) and a message saying why.
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// A conflict with figures the client needs to act on (`INSUFFICIENT_STOCK` with
    /// `available` and `requested`), which surfaces that carry details show beside the message.
    #[error("{message}")]
    ConflictWith {
        code: &'static str,
        message: String,
        details: serde_json::Value,
    },
    #[error("the record was changed by someone else")]
    PreconditionFailed,
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Error::Conflict {
            code,
            message: message.into(),
        }
    }

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

/// Collects every invalid field of a request, so that one answer lists all of them.
#[derive(Debug, Default)]
pub struct Problems(Vec<FieldError>);

impl Problems {
    pub fn new() -> Self {
        Self::default()
    }

    /// A value of the closed set `set`, accepted in any letter case; an unknown one is recorded
    /// on `field`, naming the accepted values.
    pub fn closed(
        &mut self,
        field: &str,
        raw: &str,
        set: &'static [&'static str],
    ) -> Option<&'static str> {
        let upper = raw.trim().to_uppercase();
        self.check(one_of(field, &upper, set, |v: &'static str| v))
    }

    pub fn push(
        &mut self,
        field: impl Into<String>,
        code: &'static str,
        message: impl Into<String>,
    ) {
        self.0.push(FieldError::new(field, code, message));
    }

    /// Keeps the value of a successful parse; records the fields of a failed one.
    pub fn check<T>(&mut self, parsed: Result<T>) -> Option<T> {
        match parsed {
            Ok(v) => Some(v),
            Err(Error::Validation(fields)) => {
                self.0.extend(fields);
                None
            }
            Err(other) => {
                self.0.push(FieldError::new(
                    "request",
                    "invalid_value",
                    other.to_string(),
                ));
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many problems were recorded so far (to tell whether a part of the request added any).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The parsed request when nothing was recorded, else a validation error listing every
    /// field. Parsers record a problem whenever they give up a value, so `None` without a
    /// problem is a bug of the parser, not of the request.
    pub fn finish_with<T>(self, parsed: Option<T>) -> Result<T> {
        self.finish()?;
        parsed.ok_or_else(|| {
            Error::Internal(anyhow::anyhow!(
                "a request part was refused without a recorded problem"
            ))
        })
    }

    /// `Ok` when nothing was recorded, else a validation error listing every field.
    pub fn finish(self) -> Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(self.0))
        }
    }
}

/// Parses a value of a closed set: `raw` must be the `name` of one of `all`, or the field gets
/// an error listing every accepted value.
pub fn one_of<T: Copy>(
    field: &str,
    raw: &str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<T> {
    all.iter()
        .copied()
        .find(|v| name(*v) == raw)
        .ok_or_else(|| {
            let accepted: Vec<&str> = all.iter().map(|v| name(*v)).collect();
            Error::invalid(
                field,
                "invalid_value",
                format!("must be one of {}", accepted.join(", ")),
            )
        })
}
