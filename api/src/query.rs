//! Query parameters every surface's lists share: ids and closed sets, each checked with a
//! problem naming the parameter, and their OpenAPI schemas.

use domain::Problems;
use uuid::Uuid;

/// The OpenAPI schema of a closed-set query parameter (for `#[param(schema_with = ...)]`).
pub fn one_of(set: &[&'static str]) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(set.iter().copied()))
        .build()
}

/// An optional id filter of a list (`villaId=...`); a malformed one is a problem on `field`.
pub fn id_filter(problems: &mut Problems, field: &str, raw: Option<&str>) -> Option<Uuid> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    match raw.parse() {
        Ok(id) => Some(id),
        Err(_) => {
            problems.push(field, "invalid_format", format!("{field} must be a UUID"));
            None
        }
    }
}

/// An optional closed-set filter of a list; an unknown value is a problem naming the set.
pub fn set_filter(
    problems: &mut Problems,
    field: &str,
    raw: Option<&str>,
    set: &'static [&'static str],
) -> Option<&'static str> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    problems.closed(field, raw, set)
}

/// An optional `true`/`false` filter; anything else is a problem on `field`.
pub fn bool_filter(problems: &mut Problems, field: &str, raw: Option<&str>) -> Option<bool> {
    match raw.map(str::trim).filter(|s| !s.is_empty())? {
        v if v.eq_ignore_ascii_case("true") => Some(true),
        v if v.eq_ignore_ascii_case("false") => Some(false),
        _ => {
            problems.push(
                field,
                "invalid_value",
                format!("{field} must be true or false"),
            );
            None
        }
    }
}

/// An optional ISO date filter (`YYYY-MM-DD`); anything else is a problem on `field`.
pub fn date_filter(
    problems: &mut Problems,
    field: &str,
    raw: Option<&str>,
) -> Option<chrono::NaiveDate> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    match domain::record::parse_date(raw) {
        Ok(date) => Some(date),
        Err((code, message)) => {
            problems.push(field, code, format!("{field} {message}"));
            None
        }
    }
}
