//! Reading members of JSON objects checked by hand: the items of the wizard's lists (OTA
//! credentials, staff, facilities; fields reported as `<list>[i].<field>`) and loose body
//! members (notes, captions).

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::Problems;

/// The items of the list member `name` (already prefixed), at most `max` ([`at_most`]); a
/// missing or non-array member is recorded as a problem.
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
        Some(Value::Array(items)) => at_most(items, name, max, problems),
        Some(_) => {
            problems.push(name, "invalid_type", format!("{name} must be an array"));
            None
        }
    }
}

/// The members of an array that may hold at most `max`; a longer one is refused whole, before
/// any member is read (reading and checking 500,000 members one by one is the work the bound is
/// there to avoid), with one problem on `name`.
pub fn at_most<'a>(
    items: &'a [Value],
    name: &str,
    max: usize,
    problems: &mut Problems,
) -> Option<&'a [Value]> {
    if items.len() > max {
        problems.push(
            name,
            "too_long",
            format!(
                "{name} holds {} items; at most {max} are allowed",
                items.len()
            ),
        );
        return None;
    }
    Some(items)
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
