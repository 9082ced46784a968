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
    /// The caller has used up a quota that frees with time (exports being made at once): a
    /// code, why, and in how many seconds to ask again.
    #[error("{message}")]
    QuotaExceeded {
        code: &'static str,
        message: String,
        retry_after_secs: u64,
    },
    /// A database failure no client data explains (connection lost, a bug in a statement). What
    /// a client's data can cause is mapped to 4xx by `From<sqlx::Error>` ([`refused`]).
    #[error(transparent)]
    Database(sqlx::Error),
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

/// What Postgres refused of the data it was given (SQLSTATE classes 23 and 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// 23505: a unique index already holds the value.
    Unique,
    /// 23503: a referenced record is missing, or records still refer to the one deleted.
    ForeignKey,
    /// 23514: a CHECK constraint.
    Check,
    /// 23502: a NOT NULL column.
    NotNull,
    /// The data exceptions of class 22 a client's value can cause: a value out of the type's
    /// range (a date of year 0, a number too large for its column), text too long or that
    /// Postgres cannot read as the type.
    Data,
}

/// The refusal `err` is, if it is one.
pub fn refusal(err: &sqlx::Error) -> Option<Refusal> {
    let sqlx::Error::Database(db) = err else {
        return None;
    };
    let code = db.code()?;
    Some(match code.as_ref() {
        "23505" => Refusal::Unique,
        "23503" => Refusal::ForeignKey,
        "23514" => Refusal::Check,
        "23502" => Refusal::NotNull,
        // What a client's value can cause: too long, out of the type's range, unreadable as
        // the type, bad encoding. Other data exceptions (division by zero, an unknown time zone)
        // are the server's own bugs and stay 500s.
        "22001" | "22003" | "22007" | "22008" | "22P02" | "22021" | "22P05" => Refusal::Data,
        _ => return None,
    })
}

/// Whether `err` says the database cannot be reached or cannot take the work now (a lost or
/// refused connection, an exhausted pool, a server shutting down, a transaction to try again),
/// rather than anything about the data: a caller that can retry later (a webhook's sender) is
/// told to.
pub fn is_unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            // 08: connection exceptions; 53: insufficient resources; 58: system errors (I/O);
            // 57: the server shutting down or starting, a statement cancelled or timed out;
            // 40001/40P01: a serialization failure or deadlock; 55P03: a lock not available;
            // 25006: a read-only transaction (a replica after a failover).
            ["08", "53", "58", "57"]
                .iter()
                .any(|class| code.starts_with(class))
                || matches!(code.as_ref(), "40001" | "40P01" | "55P03" | "25006")
        }),
        _ => false,
    }
}

/// The one place database errors become answers. A refusal of kind `kind` becomes `to()` (the
/// caller knows the field and the words: "a template of this name exists already"); any other
/// error goes through the safety net of `From<sqlx::Error>`.
pub fn on_refusal(err: sqlx::Error, kind: Refusal, to: impl FnOnce() -> Error) -> Error {
    if refusal(&err) == Some(kind) {
        to()
    } else {
        Error::from(err)
    }
}

/// Maps a unique-constraint violation to a user error on `field`; anything else goes through
/// the safety net.
pub fn on_unique_violation(err: sqlx::Error, field: &str, message: &str) -> Error {
    on_refusal(err, Refusal::Unique, || {
        Error::invalid(field, "duplicate", message)
    })
}

/// The safety net: what a client's data can cause is a 4xx, even on a route that missed a check
/// (a foreign key → 409, a check, not-null or data exception → 400 naming the constraint's field
/// where it can be told), logged as a warning so that the missing check gets written. Everything
/// else stays a database error (500).
impl From<sqlx::Error> for Error {
    fn from(err: sqlx::Error) -> Self {
        let Some(kind) = refusal(&err) else {
            return Error::Database(err);
        };
        let sqlx::Error::Database(db) = &err else {
            return Error::Database(err);
        };
        let field = refused_field(db.as_ref());
        tracing::warn!(
            error = %db,
            constraint = db.constraint().unwrap_or_default(),
            field = field.as_deref().unwrap_or_default(),
            "the database refused a client's data that no check caught"
        );
        let name = field.unwrap_or_else(|| "request".to_owned());
        match kind {
            Refusal::Unique => Error::conflict(
                "DUPLICATE",
                format!("a record with this {name} exists already"),
            ),
            Refusal::ForeignKey => Error::conflict(
                "CONFLICT",
                format!(
                    "{name}: the record it refers to does not exist, or other records still refer to this one"
                ),
            ),
            Refusal::Check => Error::invalid(name, "invalid_value", "is not allowed here"),
            Refusal::NotNull => Error::invalid(name, "required", "is required"),
            Refusal::Data => Error::invalid(name, "out_of_range", "is outside what can be stored"),
        }
    }
}

/// The request field a refusal is about, in the API's camelCase: the column Postgres names
/// (not-null), else the constraint's name less its table and kind (`timesheet_days_hours_check`
/// → `hours`, `work_orders_villa_id_fkey` → `villaId`). `None` when the name says nothing
/// (`work_orders_check1`).
fn refused_field(db: &dyn sqlx::error::DatabaseError) -> Option<String> {
    let pg = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>();
    let column = pg.and_then(|pg| pg.column()).map(str::to_owned);
    let column = column.or_else(|| {
        let constraint = db.constraint()?;
        let table = db.table().unwrap_or_default();
        let rest = constraint
            .strip_prefix(table)
            .and_then(|r| r.strip_prefix('_'))
            .unwrap_or(constraint);
        let rest = ["_check", "_fkey", "_key", "_excl"]
            .iter()
            .find_map(|suffix| rest.strip_suffix(suffix))
            .unwrap_or(rest);
        let is_numbered_check =
            rest.starts_with("check") && rest["check".len()..].chars().all(|c| c.is_ascii_digit());
        (!rest.is_empty() && !is_numbered_check && rest != constraint).then(|| rest.to_owned())
    })?;
    let mut camel = String::with_capacity(column.len());
    let mut upper = false;
    for c in column.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            camel.extend(c.to_uppercase());
            upper = false;
        } else {
            camel.push(c);
        }
    }
    Some(camel)
}

/// The most problems one answer lists. A request can be wrong in far more places than anyone
/// reads (an array of 500,000 bad members): past this many, problems are only counted, and the
/// answer ends with one [`MORE_PROBLEMS`] item saying how many more there were, so that neither
/// the answer nor the memory that builds it grows with the input.
pub const MAX_LISTED_PROBLEMS: usize = 20;

/// The code of the last item of a validation error that lists only the first
/// [`MAX_LISTED_PROBLEMS`]: its message says how many more there were.
pub const MORE_PROBLEMS: &str = "more_problems";

/// Collects every invalid field of a request, so that one answer lists all of them (the first
/// [`MAX_LISTED_PROBLEMS`], and how many more).
#[derive(Debug, Default)]
pub struct Problems {
    listed: Vec<FieldError>,
    unlisted: usize,
}

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
        if self.listed.len() < MAX_LISTED_PROBLEMS {
            self.listed.push(FieldError::new(field, code, message));
        } else {
            self.unlisted += 1;
        }
    }

    fn push_error(&mut self, error: FieldError) {
        if error.code == MORE_PROBLEMS {
            self.unlisted += more_problems_count(&error);
        } else if self.listed.len() < MAX_LISTED_PROBLEMS {
            self.listed.push(error);
        } else {
            self.unlisted += 1;
        }
    }

    /// Keeps the value of a successful parse; records the fields of a failed one.
    pub fn check<T>(&mut self, parsed: Result<T>) -> Option<T> {
        match parsed {
            Ok(v) => Some(v),
            Err(Error::Validation(fields)) => {
                for field in fields {
                    self.push_error(field);
                }
                None
            }
            Err(other) => {
                self.push("request", "invalid_value", other.to_string());
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.unlisted == 0
    }

    /// How many problems were recorded so far (to tell whether a part of the request added any).
    pub fn len(&self) -> usize {
        self.listed.len() + self.unlisted
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

    /// `Ok` when nothing was recorded, else a validation error listing every field (the first
    /// [`MAX_LISTED_PROBLEMS`], then one [`MORE_PROBLEMS`] item counting the rest).
    pub fn finish(self) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let mut fields = self.listed;
        if self.unlisted > 0 {
            fields.push(more_problems(self.unlisted));
        }
        Err(Error::Validation(fields))
    }
}

/// The item that ends a list of problems cut at [`MAX_LISTED_PROBLEMS`].
fn more_problems(count: usize) -> FieldError {
    FieldError::new(
        "request",
        MORE_PROBLEMS,
        format!("{count} more problems are not listed (only the first {MAX_LISTED_PROBLEMS} are)"),
    )
}

/// How many problems a [`MORE_PROBLEMS`] item stands for (its message starts with the count).
pub fn more_problems_count(item: &FieldError) -> usize {
    item.message
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// `fields` as one answer lists them: at most [`MAX_LISTED_PROBLEMS`] problems, then (when
/// there were more) one [`MORE_PROBLEMS`] item counting the rest; and how many there were in
/// all. A list that did not come through [`Problems`] is cut the same way.
pub fn listed_problems(fields: &[FieldError]) -> (Vec<FieldError>, usize) {
    let mut problems = Problems::new();
    for field in fields {
        problems.push_error(field.clone());
    }
    let total = problems.len();
    let mut listed = problems.listed;
    if problems.unlisted > 0 {
        listed.push(more_problems(problems.unlisted));
    }
    (listed, total)
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

#[cfg(test)]
mod tests {
    use super::is_unavailable;

    #[test]
    fn lost_connections_and_pool_exhaustion_are_unavailable_and_data_is_not() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert!(is_unavailable(&sqlx::Error::Io(io)));
        assert!(is_unavailable(&sqlx::Error::PoolTimedOut));
        assert!(is_unavailable(&sqlx::Error::PoolClosed));
        assert!(!is_unavailable(&sqlx::Error::RowNotFound));
        assert!(!is_unavailable(&sqlx::Error::ColumnNotFound("x".into())));
    }
}
