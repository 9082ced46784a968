//! The patch a request becomes (checked against a record's field table, secrets encrypted), and
//! the rendering of stored rows back to the API's names.

use serde_json::{Map, Value};

use super::spec::{FieldSpec, Kind};
use super::values::{Checked, check, e164};
use crate::Problems;
use crate::crypto::{FieldCipher, last4, masked};

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
