//! The management terms an owner or a villa carries: the approval threshold of repair estimates
//! (`approvalThreshold`, a villa's over its owner's) and the owner's management fee
//! (`managementFeePercent`), read and shown the same way on both.

use serde_json::{Map, Value};

use crate::Problems;
use crate::crypto::FieldCipher;
use crate::record::{FieldSpec, Kind, Patch, field, parse_patch, required};

/// An approval threshold's members (`approvalThreshold` of an owner or a villa).
const THRESHOLD_FIELDS: &[FieldSpec] = &[
    required("amount", "amount", Kind::Amount(2)),
    required("currency", "currency", Kind::Currency),
];

/// The management terms of an owner (`with_fee`) or a villa: `approvalThreshold` (`{amount,
/// currency}`, or null for none) and the owner's `managementFeePercent` (0 to 100, or null),
/// added to `patch` as their columns when sent.
pub fn approval_terms(
    input: &Map<String, Value>,
    patch: &mut Patch,
    cipher: &FieldCipher,
    problems: &mut Problems,
    with_fee: bool,
) {
    match input.get("approvalThreshold") {
        None => {}
        Some(Value::Null) => {
            patch
                .columns
                .insert("approval_threshold_amount".into(), Value::Null);
            patch
                .columns
                .insert("approval_threshold_currency".into(), Value::Null);
            patch.saved_fields.push("approvalThreshold".into());
        }
        Some(Value::Object(obj)) => {
            let before = problems.len();
            let parsed = parse_patch(
                THRESHOLD_FIELDS,
                obj,
                "approvalThreshold.",
                true,
                cipher,
                problems,
            );
            if problems.len() == before {
                for (column, value) in [
                    ("approval_threshold_amount", parsed.columns.get("amount")),
                    (
                        "approval_threshold_currency",
                        parsed.columns.get("currency"),
                    ),
                ] {
                    patch
                        .columns
                        .insert(column.into(), value.cloned().unwrap_or(Value::Null));
                }
                patch.saved_fields.push("approvalThreshold".into());
            }
        }
        Some(_) => problems.push(
            "approvalThreshold",
            "invalid_type",
            "approvalThreshold must be an object {amount, currency} or null",
        ),
    }
    if with_fee {
        let fee = parse_patch(
            &[field(
                "managementFeePercent",
                "management_fee_percent",
                Kind::Decimal { min: 0, max: 100 },
            )],
            input,
            "",
            false,
            cipher,
            problems,
        );
        if let Some(Value::String(d)) = fee.columns.get("management_fee_percent")
            && d.parse::<rust_decimal::Decimal>()
                .is_ok_and(|d| d.scale() > 2)
        {
            problems.push(
                "managementFeePercent",
                "invalid_format",
                "at most 2 decimal places",
            );
        }
        if input.contains_key("managementFeePercent") {
            patch.columns.insert(
                "management_fee_percent".into(),
                fee.columns
                    .get("management_fee_percent")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
            patch.saved_fields.push("managementFeePercent".into());
        }
    }
}

/// The threshold columns of a row (`to_jsonb` of an owner or a villa) as `{amount, currency}`.
pub fn render_threshold(row: &Map<String, Value>) -> Value {
    match (
        row.get("approval_threshold_amount"),
        row.get("approval_threshold_currency"),
    ) {
        (Some(amount), Some(Value::String(currency))) if !amount.is_null() => {
            serde_json::json!({"amount": amount, "currency": currency})
        }
        _ => Value::Null,
    }
}

/// The JSON Schema of the terms members, for the bodies and answers that carry them.
pub fn terms_schema(with_fee: bool) -> Value {
    let mut members = serde_json::json!({
        "approvalThreshold": {
            "type": ["object", "null"],
            "description": "Owner-billed estimates of a work order above this (or in another currency) need the owner's approval; null: none needed.",
            "required": ["amount", "currency"],
            "properties": {
                "amount": {"type": "number", "minimum": 0, "maximum": crate::record::AMOUNT_MAX, "description": "At most 2 decimal places."},
                "currency": {"type": "string", "pattern": "^[A-Za-z]{3}$", "description": "ISO 4217 code."},
            },
        },
    });
    if with_fee {
        members["managementFeePercent"] = serde_json::json!({
            "type": ["number", "null"], "minimum": 0, "maximum": 100,
            "description": "The management fee, in percent of the net revenue of the owner's villas (owner statements); at most 2 decimal places.",
        });
    }
    members
}
