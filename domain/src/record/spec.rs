//! A record's field table: each field's JSON name, column and [`Kind`], the vocabulary the
//! checking of values (`values.rs`), the patch (`patch.rs`) and the JSON schemas (`schema.rs`)
//! are written in.

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
