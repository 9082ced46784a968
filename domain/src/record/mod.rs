//! Partial records: the wizard's steps send any subset of a record's fields, and a field left out
//! must keep its stored value. Each record is described once by a table of [`FieldSpec`]s (JSON
//! name, column, kind); [`parse_patch`] checks a request's object against it, reporting every bad
//! field, and turns it into a patch keyed by column, which the record's SQL applies with
//! `jsonb_populate_record(<stored row>, patch)` so that only the columns present change. The same
//! table renders stored rows back to JSON ([`render`]) and lists what was left empty
//! ([`empty_optional_fields`]).
//!
//! Absent means "leave as is"; `null` or an empty string means "clear".
//!
//! By what it does: [`spec`] (the field tables), [`values`] (reading and checking one value of
//! each kind), [`patch`] (a request's patch and the rendering of stored rows), [`schema`] (the
//! OpenAPI schemas derived from the tables), [`members`] (members of objects checked by hand).

pub mod members;
pub mod patch;
pub mod schema;
pub mod spec;
pub mod values;

pub use patch::*;
pub use schema::*;
pub use spec::*;
pub use values::*;

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::*;
    use crate::Problems;
    use crate::crypto::FieldCipher;

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
