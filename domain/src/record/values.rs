//! Reading and checking one value of each [`Kind`]: the rules every surface shares (dates Postgres
//! keeps, amounts, e-mail addresses, international phones, IBANs, URLs).

use chrono::{Datelike as _, NaiveDate};
use rust_decimal::Decimal;
use serde_json::Value;

use super::spec::{FieldSpec, Kind};

/// The years every date and timestamp field accepts. Postgres has no year 0 (0000-01-01 is
/// refused as out of range) and a date of year 10000 is past what any record of the company
/// means; one bound for every surface, checked before Postgres sees the value.
pub const DATE_YEARS: std::ops::RangeInclusive<i32> = 1..=9999;
const DATE_RANGE: &str = "must be from 0001-01-01 to 9999-12-31 (UTC)";

/// An ISO date (`YYYY-MM-DD`) in [`DATE_YEARS`]: every date of a body or a query is read here.
/// The error is (code, message) for the field.
pub fn parse_date(s: &str) -> Result<NaiveDate, (&'static str, String)> {
    let date = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|_| s.len() == 10)
        .ok_or((
            "invalid_format",
            "must be an ISO date (YYYY-MM-DD)".to_owned(),
        ))?;
    if !DATE_YEARS.contains(&date.year()) {
        return Err(("out_of_range", DATE_RANGE.to_owned()));
    }
    Ok(date)
}

/// A checked value, before it is written into the patch.
pub(super) enum Checked {
    Json(Value),
    Secret(String),
}

pub(super) fn check(spec: &FieldSpec, raw: &Value) -> Result<Checked, (&'static str, String)> {
    let text = || -> Result<String, (&'static str, String)> {
        match raw {
            Value::String(s) => Ok(s.trim().to_owned()),
            _ => Err(("invalid_type", "must be a string".to_owned())),
        }
    };
    Ok(match spec.kind {
        Kind::Text(max) => {
            let s = text()?;
            if s.chars().count() > max {
                return Err(("too_long", format!("at most {max} characters")));
            }
            Checked::Json(Value::String(s))
        }
        Kind::Email => {
            let s = text()?;
            if !is_email(&s) {
                return Err((
                    "invalid_format",
                    "must be an email address like name@example.com".to_owned(),
                ));
            }
            Checked::Json(Value::String(s))
        }
        Kind::Phone => {
            let s = text()?;
            if !is_international_phone(&s) {
                return Err((
                    "invalid_format",
                    "must be a phone number in international format: + then 7 to 15 digits"
                        .to_owned(),
                ));
            }
            Checked::Json(Value::String(s))
        }
        Kind::Int { min, max } => {
            let n = match raw {
                Value::Number(n) => n.as_i64(),
                Value::String(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            }
            .ok_or(("invalid_type", "must be a whole number".to_owned()))?;
            if !(min..=max).contains(&n) {
                return Err(("out_of_range", format!("must be from {min} to {max}")));
            }
            Checked::Json(Value::from(n))
        }
        Kind::Decimal { min, max } => {
            let d = match raw {
                Value::Number(n) => n.to_string().parse::<Decimal>().ok(),
                Value::String(s) => s.trim().parse::<Decimal>().ok(),
                _ => None,
            }
            .ok_or(("invalid_type", "must be a number".to_owned()))?;
            if d < Decimal::from(min) || d > Decimal::from(max) {
                return Err(("out_of_range", format!("must be from {min} to {max}")));
            }
            Checked::Json(Value::String(d.normalize().to_string()))
        }
        Kind::Amount(places) => {
            Checked::Json(Value::String(parse_amount(raw, places, false)?.to_string()))
        }
        Kind::Date => {
            let s = text()?;
            parse_date(&s)?;
            Checked::Json(Value::String(s))
        }
        Kind::Time => {
            let s = text()?;
            chrono::NaiveTime::parse_from_str(&s, "%H:%M")
                .ok()
                .filter(|_| s.len() == 5)
                .ok_or(("invalid_format", "must be a time as HH:MM".to_owned()))?;
            Checked::Json(Value::String(s))
        }
        Kind::Bool => match raw {
            Value::Bool(b) => Checked::Json(Value::Bool(*b)),
            _ => return Err(("invalid_type", "must be true or false".to_owned())),
        },
        Kind::OneOf(values) => {
            let s = text()?.to_uppercase();
            if !values.contains(&s.as_str()) {
                return Err((
                    "invalid_value",
                    format!("must be one of {}", values.join(", ")),
                ));
            }
            Checked::Json(Value::String(s))
        }
        Kind::Currency => {
            let s = text()?.to_uppercase();
            if s.len() != 3 || !s.chars().all(|c| c.is_ascii_uppercase()) {
                return Err((
                    "invalid_format",
                    "must be a three-letter ISO 4217 currency code".to_owned(),
                ));
            }
            Checked::Json(Value::String(s))
        }
        Kind::Url => {
            let s = text()?;
            if !is_http_url(&s) {
                return Err((
                    "invalid_format",
                    "must be an http:// or https:// address".to_owned(),
                ));
            }
            if s.len() > 2000 {
                return Err(("too_long", "at most 2000 characters".to_owned()));
            }
            Checked::Json(Value::String(s))
        }
        Kind::Secret(max) => {
            let s = text()?;
            if s.chars().count() > max {
                return Err(("too_long", format!("at most {max} characters")));
            }
            Checked::Secret(s)
        }
        Kind::Uuid => {
            let s = text()?;
            let id: uuid::Uuid = s
                .parse()
                .map_err(|_| ("invalid_format", "must be a UUID".to_owned()))?;
            Checked::Json(Value::String(id.to_string()))
        }
        Kind::Timestamp => {
            let s = text()?;
            let at = chrono::DateTime::parse_from_rfc3339(&s).map_err(|_| {
                (
                    "invalid_format",
                    "must be an RFC 3339 date and time, e.g. 2026-11-23T10:00:00Z".to_owned(),
                )
            })?;
            let at = at.with_timezone(&chrono::Utc);
            // Checked in UTC, where it is stored: 9999-12-31T23:00:00-05:00 is year 10000.
            if !DATE_YEARS.contains(&at.year()) {
                return Err(("out_of_range", DATE_RANGE.to_owned()));
            }
            Checked::Json(Value::String(
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ))
        }
        Kind::Tags(values) => {
            let Value::Array(items) = raw else {
                return Err(("invalid_type", "must be an array of strings".to_owned()));
            };
            // Each value at most once: a longer array is refused before its members are read.
            if items.len() > values.len() {
                return Err((
                    "too_long",
                    format!(
                        "at most {} items, each of {} once",
                        values.len(),
                        values.join(", ")
                    ),
                ));
            }
            let mut out: Vec<String> = Vec::new();
            for item in items {
                let tag = item
                    .as_str()
                    .map(|s| s.trim().to_uppercase())
                    .filter(|s| values.contains(&s.as_str()))
                    .ok_or_else(|| {
                        (
                            "invalid_value",
                            format!("each must be one of {}", values.join(", ")),
                        )
                    })?;
                if !out.contains(&tag) {
                    out.push(tag);
                }
            }
            if out.is_empty() {
                return Err(("required", "at least one is required".to_owned()));
            }
            Checked::Json(Value::from(out))
        }
        Kind::Iban => {
            let s: String = text()?
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
                .to_uppercase();
            if !is_valid_iban(&s) {
                return Err((
                    "invalid_checksum",
                    "must be an IBAN with a valid checksum (country code, 2 check digits, account)"
                        .to_owned(),
                ));
            }
            Checked::Secret(s)
        }
    })
}

/// The largest [`Kind::Amount`]: ten billion, which a stock quantity (`numeric(15, 3)`) and a
/// unit cost (`numeric(15, 4)`) both hold with room.
pub const AMOUNT_MAX: i64 = 10_000_000_000;

/// A decimal with at most `places` decimal places, from 0 (or from -[`AMOUNT_MAX`] when
/// `signed`) to [`AMOUNT_MAX`], sent as a JSON number or a numeric string. Read from the JSON
/// text, so `0.1` stays exactly 0.1.
pub fn parse_amount(
    raw: &Value,
    places: u32,
    signed: bool,
) -> Result<Decimal, (&'static str, String)> {
    let d = match raw {
        Value::Number(n) => n.to_string().parse::<Decimal>().ok(),
        Value::String(s) => s.trim().parse::<Decimal>().ok(),
        _ => None,
    }
    .ok_or(("invalid_type", "must be a number".to_owned()))?;
    let min = if signed { -AMOUNT_MAX } else { 0 };
    if d < Decimal::from(min) || d > Decimal::from(AMOUNT_MAX) {
        return Err((
            "out_of_range",
            format!("must be from {min} to {AMOUNT_MAX}"),
        ));
    }
    let d = d.normalize();
    if d.scale() > places {
        return Err(("invalid_format", format!("at most {places} decimal places")));
    }
    Ok(d)
}

pub fn is_email(s: &str) -> bool {
    if s.len() > 254 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
}

pub fn is_international_phone(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('+') else {
        return false;
    };
    if !rest
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, ' ' | '-' | '.' | '(' | ')'))
    {
        return false;
    }
    let digits = rest.chars().filter(char::is_ascii_digit).count();
    (7..=15).contains(&digits) && rest.starts_with(|c: char| c.is_ascii_digit())
}

/// A phone number in E.164 form (`+` and 8 to 15 digits, the first not 0), from a number that
/// may carry spaces, dashes, dots or parentheses between its digits.
pub fn e164(raw: &str) -> Option<String> {
    let rest = raw.trim().strip_prefix('+')?;
    if !rest
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, ' ' | '-' | '.' | '(' | ')'))
    {
        return None;
    }
    let digits: String = rest.chars().filter(char::is_ascii_digit).collect();
    let ok = (8..=15).contains(&digits.len()) && !digits.starts_with('0');
    ok.then(|| format!("+{digits}"))
}

pub fn is_http_url(s: &str) -> bool {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| {
        !r.is_empty()
            && !r.starts_with('/')
            && !r.chars().any(|c| c.is_whitespace() || c.is_control())
    })
}

/// ISO 13616: two letters, two check digits, up to 30 alphanumerics; moved-and-converted
/// number mod 97 is 1.
pub fn is_valid_iban(s: &str) -> bool {
    let b = s.as_bytes();
    if !(15..=34).contains(&b.len())
        || !b[..2].iter().all(u8::is_ascii_uppercase)
        || !b[2..4].iter().all(u8::is_ascii_digit)
        || !b.iter().all(u8::is_ascii_alphanumeric)
    {
        return false;
    }
    let mut rem: u32 = 0;
    for &c in b[4..].iter().chain(&b[..4]) {
        let v = if c.is_ascii_digit() {
            u32::from(c - b'0')
        } else {
            u32::from(c.to_ascii_uppercase() - b'A') + 10
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}
