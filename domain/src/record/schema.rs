//! The OpenAPI schemas of records, derived from the same field tables that check requests and
//! render answers, so the three cannot drift apart.

use serde_json::{Map, Value};

use super::spec::{FieldSpec, Kind};
use super::values::AMOUNT_MAX;

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
    match schema.get_mut("properties") {
        Some(Value::Object(props)) => props.extend(members),
        _ => schema["properties"] = Value::Object(members),
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
        Kind::Tags(values) => {
            json!({"type": "array", "minItems": 1, "maxItems": values.len(), "uniqueItems": true,
            "items": {"type": "string", "enum": values}, "description": "Accepted in any letter case."})
        }
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
