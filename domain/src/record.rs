//! Partial records: the wizard's steps send any subset of a record's fields, and a field left out
//! must keep its stored value. Each record is described once by a table of [`FieldSpec`]s (JSON
//! name, column, kind); [`parse_patch`] checks a request's object against it, reporting every bad
//! field, and turns it into a patch keyed by column, which the record's SQL applies with
//! `jsonb_populate_record(<stored row>, patch)` so that only the columns present change. The same
//! table renders stored rows back to JSON ([`render`]) and lists what was left empty
//! ([`empty_optional_fields`]).
//!
//! Absent means "leave as is"; `null` or an empty string means "clear".

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::Problems;
use crate::crypto::{FieldCipher, last4, masked};

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Trimmed text of at most this many characters.
    Text(usize),
    Email,
    /// International format: `+`, then 7 to 15 digits (spaces, dashes, dots and parentheses
    /// between them are accepted and kept).
    Phone,
    Int {
        min: i64,
        max: i64,
    },
    Decimal {
        min: i64,
        max: i64,
    },
    /// A decimal from 0 to [`AMOUNT_MAX`] with at most this many decimal places (stock
    /// quantities: 3; money: 4), answered as a JSON number, never rounded through a float.
    Amount(u32),
    /// `YYYY-MM-DD`.
    Date,
    /// `HH:MM`, 24-hour clock.
    Time,
    Bool,
    /// A closed set; accepted in any letter case, stored upper-case.
    OneOf(&'static [&'static str]),
    /// ISO 4217 code: three letters, stored upper-case.
    Currency,
    /// http(s) address.
    Url,
    /// Text of at most this many characters, encrypted at rest into `<column>_encrypted`, with
    /// `<column>_last4` for the masked form; never returned in clear.
    Secret(usize),
    /// Like [`Kind::Secret`], and the value must be an IBAN with a valid checksum.
    Iban,
    /// The id of another record (its existence is the caller's to check).
    Uuid,
    /// An RFC 3339 date and time, stored in UTC.
    Timestamp,
    /// A non-empty list of values of a closed set, each once; accepted in any letter case.
    Tags(&'static [&'static str]),
}

#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    /// The request and response name (camelCase).
    pub json: &'static str,
    pub column: &'static str,
    pub kind: Kind,
    /// Needed to create the record (only the villa has such fields).
    pub required: bool,
}

pub const fn field(json: &'static str, column: &'static str, kind: Kind) -> FieldSpec {
    FieldSpec {
        json,
        column,
        kind,
        required: false,
    }
}

pub const fn required(json: &'static str, column: &'static str, kind: Kind) -> FieldSpec {
    FieldSpec {
        json,
        column,
        kind,
        required: true,
    }
}

/// A checked request: the columns to change, and the JSON names the client sent.
#[derive(Debug, Clone, Default)]
pub struct Patch {
    pub columns: Map<String, Value>,
    pub saved_fields: Vec<String>,
}

impl Patch {
    pub fn is_empty(&self) -> bool {
        self.saved_fields.is_empty()
    }

    pub fn to_value(&self) -> Value {
        Value::Object(self.columns.clone())
    }

    /// The id under `column` (a [`Kind::Uuid`] field the table checked), if present.
    pub fn uuid(&self, column: &str) -> Option<uuid::Uuid> {
        self.columns
            .get(column)
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
    }
}

/// Checks `input` against `specs`. Every bad field is recorded in `problems` under
/// `prefix + json name`. With `creating`, required fields must be present and non-empty.
/// Members that are not fields of the record are ignored (the wizard sends its own UI state
/// along), and are not in `saved_fields`.
pub fn parse_patch(
    specs: &[FieldSpec],
    input: &Map<String, Value>,
    prefix: &str,
    creating: bool,
    cipher: &FieldCipher,
    problems: &mut Problems,
) -> Patch {
    let mut patch = Patch::default();
    for spec in specs {
        let name = format!("{prefix}{}", spec.json);
        let raw = input.get(spec.json);
        let empty = match raw {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.trim().is_empty(),
            _ => false,
        };
        if empty {
            if spec.required && (creating || raw.is_some()) {
                problems.push(name, "required", format!("{} is required", spec.json));
                continue;
            }
            if raw.is_some() {
                clear(spec, &mut patch.columns);
                patch.saved_fields.push(spec.json.to_owned());
            }
            continue;
        }
        let Some(raw) = raw else { continue };
        match check(spec, raw) {
            Ok(value) => {
                set(spec, value, cipher, &mut patch.columns);
                patch.saved_fields.push(spec.json.to_owned());
            }
            Err((code, message)) => problems.push(name, code, message),
        }
    }
    patch
}

/// A checked value, before it is written into the patch.
enum Checked {
    Json(Value),
    Secret(String),
}

fn check(spec: &FieldSpec, raw: &Value) -> Result<Checked, (&'static str, String)> {
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
            NaiveDate::parse_from_str(&s, "%Y-%m-%d")
                .ok()
                .filter(|_| s.len() == 10)
                .ok_or((
                    "invalid_format",
                    "must be an ISO date (YYYY-MM-DD)".to_owned(),
                ))?;
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
            Checked::Json(Value::String(
                at.with_timezone(&chrono::Utc)
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ))
        }
        Kind::Tags(values) => {
            let Value::Array(items) = raw else {
                return Err(("invalid_type", "must be an array of strings".to_owned()));
            };
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

fn is_secret(kind: Kind) -> bool {
    matches!(kind, Kind::Secret(_) | Kind::Iban)
}

fn clear(spec: &FieldSpec, columns: &mut Map<String, Value>) {
    if is_secret(spec.kind) {
        columns.insert(format!("{}_encrypted", spec.column), Value::Null);
        columns.insert(format!("{}_last4", spec.column), Value::Null);
    } else {
        columns.insert(spec.column.to_owned(), Value::Null);
    }
}

fn set(spec: &FieldSpec, value: Checked, cipher: &FieldCipher, columns: &mut Map<String, Value>) {
    match value {
        Checked::Json(v) => {
            columns.insert(spec.column.to_owned(), v);
        }
        Checked::Secret(s) => {
            // bytea's text input form, which jsonb_populate_record reads.
            columns.insert(
                format!("{}_encrypted", spec.column),
                Value::String(bytea_hex(&cipher.encrypt(&s))),
            );
            columns.insert(format!("{}_last4", spec.column), Value::String(last4(&s)));
        }
    }
}

/// bytea's text input form (`\\x` and hex), as `jsonb_populate_record` reads it.
pub fn bytea_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(2 + bytes.len() * 2);
    out.push_str("\\x");
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// A stored row (as `to_jsonb`) in the API's names. Secrets appear masked (`****1234`), never in
/// clear and never as ciphertext.
pub fn render(specs: &[FieldSpec], row: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for spec in specs {
        let value = if is_secret(spec.kind) {
            match row.get(&format!("{}_last4", spec.column)) {
                Some(Value::String(l4)) => Value::String(masked(l4)),
                _ => Value::Null,
            }
        } else {
            row.get(spec.column).cloned().unwrap_or(Value::Null)
        };
        out.insert(spec.json.to_owned(), value);
    }
    out
}

/// The optional fields of a stored row that are empty, as `<prefix>.<json name>`.
pub fn empty_optional_fields(
    specs: &[FieldSpec],
    row: Option<&Map<String, Value>>,
    prefix: &str,
) -> Vec<String> {
    specs
        .iter()
        .filter(|s| !s.required)
        .filter(|s| {
            let column = if is_secret(s.kind) {
                format!("{}_last4", s.column)
            } else {
                s.column.to_owned()
            };
            row.and_then(|r| r.get(&column))
                .is_none_or(|v| v.is_null() || v.as_str().is_some_and(str::is_empty))
        })
        .map(|s| format!("{prefix}.{}", s.json))
        .collect()
}

/// How a record's fields are described in the OpenAPI document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaUse {
    /// A body that creates the record: the required fields are required.
    Create,
    /// A partial save: any subset; `null` or `""` clears an optional field, a required one
    /// cannot be cleared.
    Patch,
    /// The record as [`render`] shows it: every field present, `null` when empty, secrets
    /// masked.
    Answer,
}

/// The JSON Schema of a record described by `specs`, for `usage`: the same table that checks a
/// request ([`parse_patch`]) and renders an answer ([`render`]) describes both in the API
/// document, so the three cannot drift apart.
pub fn json_schema(specs: &[FieldSpec], usage: SchemaUse) -> Value {
    let mut properties = Map::new();
    for spec in specs {
        let mut schema = match usage {
            SchemaUse::Answer => answer_schema(spec.kind),
            SchemaUse::Create | SchemaUse::Patch => input_schema(spec.kind),
        };
        let nullable = match usage {
            SchemaUse::Answer => true,
            SchemaUse::Create | SchemaUse::Patch => !spec.required,
        };
        if nullable && let Some(t) = schema.get("type").cloned() {
            schema["type"] = serde_json::json!([t, "null"]);
            if let Some(Value::Array(values)) = schema.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        properties.insert(spec.json.to_owned(), schema);
    }
    let required: Vec<&str> = match usage {
        SchemaUse::Answer => specs.iter().map(|s| s.json).collect(),
        SchemaUse::Create => specs
            .iter()
            .filter(|s| s.required)
            .map(|s| s.json)
            .collect(),
        SchemaUse::Patch => Vec::new(),
    };
    let mut schema = serde_json::json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = serde_json::json!(required);
    }
    schema
}

/// `schema` (an object schema) with more members, each required: what an answer adds to a
/// record's fields (its id, timestamps, ...).
pub fn with_members(mut schema: Value, members: Value) -> Value {
    let Value::Object(members) = members else {
        return schema;
    };
    let names: Vec<Value> = members.keys().cloned().map(Value::String).collect();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.extend(members);
    }
    match schema.get_mut("required") {
        Some(Value::Array(required)) => required.extend(names),
        _ => schema["required"] = Value::Array(names),
    }
    schema
}

/// A phone number as [`is_international_phone`] and [`e164`] accept it: `+`, then 8 to 15
/// digits, the first not 0, with spaces, dashes, dots or parentheses between them.
pub const PHONE_PATTERN: &str = r"^\+[1-9](?:[ ().-]*[0-9]){7,14}[ ().-]*$";

fn input_schema(kind: Kind) -> Value {
    use serde_json::json;
    match kind {
        Kind::Text(max) => json!({"type": "string", "maxLength": max}),
        Kind::Email => json!({"type": "string", "format": "email", "maxLength": 254}),
        Kind::Phone => json!({"type": "string", "pattern": PHONE_PATTERN}),
        Kind::Int { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
        Kind::Decimal { min, max } => json!({"type": "number", "minimum": min, "maximum": max}),
        Kind::Amount(places) => {
            json!({"type": "number", "minimum": 0, "maximum": AMOUNT_MAX, "description": format!("At most {places} decimal places.")})
        }
        Kind::Date => json!({"type": "string", "format": "date"}),
        Kind::Time => {
            json!({"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$", "description": "HH:MM, 24-hour clock"})
        }
        Kind::Bool => json!({"type": "boolean"}),
        Kind::OneOf(values) => {
            json!({"type": "string", "enum": values, "description": "Accepted in any letter case; stored upper-case."})
        }
        Kind::Currency => {
            json!({"type": "string", "pattern": "^[A-Za-z]{3}$", "description": "ISO 4217 code"})
        }
        Kind::Url => {
            json!({"type": "string", "format": "uri", "pattern": "^https?://[^/\\s]", "maxLength": 2000})
        }
        Kind::Secret(max) => {
            json!({"type": "string", "maxLength": max, "writeOnly": true, "description": "Encrypted at rest; answers show it masked (****1234)."})
        }
        Kind::Uuid => json!({"type": "string", "format": "uuid"}),
        Kind::Timestamp => {
            json!({"type": "string", "format": "date-time", "description": "RFC 3339"})
        }
        Kind::Tags(values) => json!({"type": "array", "minItems": 1, "uniqueItems": true,
            "items": {"type": "string", "enum": values}, "description": "Accepted in any letter case."}),
        Kind::Iban => {
            json!({"type": "string", "writeOnly": true, "pattern": "^[A-Za-z]{2}[0-9]{2}[A-Za-z0-9 ]{11,40}$", "description": "An IBAN with a valid checksum; encrypted at rest, answered masked."})
        }
    }
}

fn answer_schema(kind: Kind) -> Value {
    use serde_json::json;
    match kind {
        Kind::Int { .. } => json!({"type": "integer"}),
        Kind::Decimal { .. } | Kind::Amount(_) => json!({"type": "number"}),
        Kind::Date => json!({"type": "string", "format": "date"}),
        Kind::Bool => json!({"type": "boolean"}),
        Kind::OneOf(values) => json!({"type": "string", "enum": values}),
        Kind::Secret(_) | Kind::Iban => {
            json!({"type": "string", "pattern": "^\\*{4}", "description": "Masked: ****1234"})
        }
        Kind::Email => json!({"type": "string", "format": "email"}),
        Kind::Url => json!({"type": "string", "format": "uri"}),
        Kind::Uuid => json!({"type": "string", "format": "uuid"}),
        Kind::Timestamp => json!({"type": "string", "format": "date-time"}),
        Kind::Tags(values) => json!({"type": "array", "items": {"type": "string", "enum": values}}),
        Kind::Text(_) | Kind::Phone | Kind::Time | Kind::Currency => json!({"type": "string"}),
    }
}

/// Reading members of JSON objects checked by hand: the items of the wizard's lists (OTA
/// credentials, staff, facilities; fields reported as `<list>[i].<field>`) and loose body
/// members (notes, captions).
pub mod members {
    use serde_json::{Map, Value};
    use uuid::Uuid;

    use crate::Problems;

    /// The items of the list member `name` (already prefixed), at most `max`; a missing or
    /// non-array member is recorded as a problem.
    pub fn items<'a>(
        raw: Option<&'a Value>,
        name: &str,
        max: usize,
        problems: &mut Problems,
    ) -> Option<&'a [Value]> {
        match raw {
            None | Some(Value::Null) => {
                problems.push(
                    name,
                    "required",
                    format!("{name} is required (an array, possibly empty)"),
                );
                None
            }
            Some(Value::Array(items)) => {
                if items.len() > max {
                    problems.push(name, "too_long", format!("at most {max} items"));
                }
                Some(items)
            }
            Some(_) => {
                problems.push(name, "invalid_type", format!("{name} must be an array"));
                None
            }
        }
    }

    /// Item `i` as an object, or a problem on `name[i]`.
    pub fn object<'a>(
        item: &'a Value,
        name: &str,
        i: usize,
        problems: &mut Problems,
    ) -> Option<&'a Map<String, Value>> {
        let obj = item.as_object();
        if obj.is_none() {
            problems.push(
                format!("{name}[{i}]"),
                "invalid_type",
                "each item must be an object",
            );
        }
        obj
    }

    /// The optional `id` of an item (a stored record it stands for).
    pub fn id(obj: &Map<String, Value>, prefix: &str, problems: &mut Problems) -> Option<Uuid> {
        match obj.get("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.parse::<Uuid>().is_ok() => s.parse().ok(),
            Some(_) => {
                problems.push(format!("{prefix}id"), "invalid_format", "must be a UUID");
                None
            }
        }
    }

    /// A required id under `key`, reported as `name` when missing or not a UUID.
    pub fn uuid(
        obj: &Map<String, Value>,
        key: &str,
        name: &str,
        problems: &mut Problems,
    ) -> Option<Uuid> {
        match obj.get(key) {
            None | Some(Value::Null) => {
                problems.push(name, "required", format!("{name} is required"));
                None
            }
            Some(Value::String(s)) if s.trim().parse::<Uuid>().is_ok() => s.trim().parse().ok(),
            Some(_) => {
                problems.push(name, "invalid_format", "must be a UUID");
                None
            }
        }
    }

    /// An optional trimmed text of at most `max` characters (empty means absent).
    pub fn text(
        obj: &Map<String, Value>,
        key: &str,
        prefix: &str,
        max: usize,
        problems: &mut Problems,
    ) -> Option<String> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) if s.trim().chars().count() > max => {
                problems.push(
                    format!("{prefix}{key}"),
                    "too_long",
                    format!("at most {max} characters"),
                );
                None
            }
            Some(Value::String(s)) => Some(s.trim().to_owned()),
            Some(_) => {
                problems.push(format!("{prefix}{key}"), "invalid_type", "must be a string");
                None
            }
        }
    }

    /// An optional boolean, `default` when absent.
    pub fn flag(
        obj: &Map<String, Value>,
        key: &str,
        prefix: &str,
        default: bool,
        problems: &mut Problems,
    ) -> bool {
        match obj.get(key) {
            None | Some(Value::Null) => default,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                problems.push(
                    format!("{prefix}{key}"),
                    "invalid_type",
                    "must be true or false",
                );
                default
            }
        }
    }
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

/// Rewrites the patch's phone columns (`(json name, column)`) in E.164 form; one that cannot be
/// is recorded as a problem.
pub fn to_e164(patch: &mut Patch, phones: &[(&str, &str)], problems: &mut Problems) {
    for (name, column) in phones {
        if let Some(Value::String(raw)) = patch.columns.get(*column) {
            match e164(raw) {
                Some(normal) => {
                    patch.columns.insert((*column).into(), Value::String(normal));
                }
                None => problems.push(
                    *name,
                    "invalid_format",
                    "must be an international (E.164) number: + then the country code and number, 8 to 15 digits",
                ),
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phones_are_normalised_to_e164() {
        assert_eq!(e164("+66 81-234.5678").as_deref(), Some("+66812345678"));
        assert_eq!(e164("+1 (415) 555-0100").as_deref(), Some("+14155550100"));
        assert_eq!(e164("0812345678"), None);
        assert_eq!(e164("+0812345678"), None);
        assert_eq!(e164("+1234567"), None);
        assert_eq!(e164("+1234567890123456"), None);
        assert_eq!(e164("+66 81 abc"), None);
    }
    use serde_json::json;

    const SPECS: &[FieldSpec] = &[
        required("name", "name", Kind::Text(5)),
        field("email", "email", Kind::Email),
        field("rate", "rate", Kind::Decimal { min: 0, max: 100 }),
        field("iban", "iban", Kind::Iban),
        field("type", "type", Kind::OneOf(&["A", "B"])),
    ];

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn every_bad_field_is_reported_and_absent_fields_are_left_alone() {
        let cipher = FieldCipher::new(&[1; 32]);
        let mut p = Problems::new();
        let patch = parse_patch(
            SPECS,
            &obj(json!({"name": "toolong", "email": "x", "rate": 101, "type": "c", "other": 1})),
            "",
            false,
            &cipher,
            &mut p,
        );
        let crate::Error::Validation(fields) = p.finish().unwrap_err() else {
            panic!()
        };
        let names: Vec<_> = fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["name", "email", "rate", "type"]);
        assert!(patch.columns.is_empty());
    }

    #[test]
    fn secrets_are_encrypted_and_cleared_fields_are_null() {
        let cipher = FieldCipher::new(&[1; 32]);
        let mut p = Problems::new();
        let patch = parse_patch(
            SPECS,
            &obj(json!({"iban": "GB82 WEST 1234 5698 7654 32", "email": "", "type": "b"})),
            "",
            false,
            &cipher,
            &mut p,
        );
        p.finish().unwrap();
        assert_eq!(patch.columns["iban_last4"], "5432");
        assert!(
            !patch.columns["iban_encrypted"]
                .as_str()
                .unwrap()
                .contains("WEST")
        );
        assert_eq!(patch.columns["email"], Value::Null);
        assert_eq!(patch.columns["type"], "B");
        assert_eq!(patch.saved_fields, ["email", "iban", "type"]);
        let shown = render(SPECS, &patch.columns);
        assert_eq!(shown["iban"], "****5432");
    }

    #[test]
    fn formats() {
        assert!(is_valid_iban("GB82WEST12345698765432"));
        assert!(!is_valid_iban("GB83WEST12345698765432"));
        assert!(is_international_phone("+62 361 123-456"));
        assert!(!is_international_phone("0361 123456"));
        assert!(!is_international_phone("+12"));
        assert!(is_email("a.b@example.co.id"));
        assert!(!is_email("a@b"));
        assert!(is_http_url("https://airbnb.com/rooms/1"));
        assert!(!is_http_url("javascript:alert(1)"));
    }
}
