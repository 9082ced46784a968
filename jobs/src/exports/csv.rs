//! The CSV file of an export: UTF-8 with a byte-order mark (without it Excel reads the file in
//! the machine's legacy code page), a header row, CRLF line ends (RFC 4180), dates ISO
//! (`2026-03-01`), money and figures with two decimals, and no definitions (those are in the API
//! description). Text that a spreadsheet would take for a formula (it begins with `=`, `+`, `-`,
//! `@`, a tab or a carriage return) is prefixed with `'`, so a guest named `=HYPERLINK(...)`
//! stays text (CSV injection).

use std::{
    fmt::{Display, Write as _},
    fs::File,
    io::{BufWriter, Write as _},
    path::Path,
};

use domain::reporting::exports::{Cell, Column};
use rust_decimal::RoundingStrategy;

/// UTF-8's byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";
/// Bytes gathered before each write to the file.
const BUFFER: usize = 256 * 1024;

/// Writes the CSV file at `path`: `columns`' headers, then `rows`. Answers how many rows were
/// written (the header not counted). Blocking: run it off the async threads.
pub fn write_csv(
    path: &Path,
    columns: &[Column],
    rows: impl Iterator<Item = Vec<Cell>>,
) -> Result<u64, String> {
    write(path, columns, rows).map_err(|e| e.to_string())
}

fn write(
    path: &Path,
    columns: &[Column],
    rows: impl Iterator<Item = Vec<Cell>>,
) -> Result<u64, ::csv::Error> {
    let mut file = BufWriter::with_capacity(BUFFER, File::create(path)?);
    file.write_all(BOM)?;
    let mut out = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::CRLF)
        .from_writer(file);
    out.write_record(columns.iter().map(|c| c.header))?;
    let mut field = String::new();
    let mut written: u64 = 0;
    for row in rows {
        for cell in &row {
            field.clear();
            match cell {
                Cell::Text(text) if reads_as_formula(text) => {
                    field.push('\'');
                    field.push_str(text);
                }
                Cell::Text(text) => {
                    out.write_field(text)?;
                    continue;
                }
                Cell::Int(n) => put(&mut field, n),
                Cell::Date(date) => put(&mut field, date),
                Cell::Money(value) | Cell::Number(value) => {
                    let value =
                        value.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
                    put(&mut field, format_args!("{value:.2}"));
                }
                Cell::Empty => {}
            }
            out.write_field(&field)?;
        }
        // Ends the record.
        out.write_record(None::<&[u8]>)?;
        written += 1;
    }
    let mut file = out.into_inner().map_err(|e| e.into_error())?;
    file.flush()?;
    Ok(written)
}

fn put(field: &mut String, value: impl Display) {
    // Writing to a String cannot fail.
    let _ = write!(field, "{value}");
}

/// Whether a spreadsheet opening the file would read `text` as a formula.
fn reads_as_formula(text: &str) -> bool {
    text.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use domain::reporting::exports::CellKind;
    use rust_decimal::Decimal;

    use super::*;

    #[test]
    fn a_file_has_its_bom_header_typed_cells_and_no_formulas() {
        let columns = [
            Column {
                header: "Guest",
                kind: CellKind::Text,
                width: 20.0,
                definition: "who",
            },
            Column {
                header: "Check-in",
                kind: CellKind::Date,
                width: 12.0,
                definition: "when",
            },
            Column {
                header: "Nights",
                kind: CellKind::Int,
                width: 8.0,
                definition: "how long",
            },
            Column {
                header: "Total amount",
                kind: CellKind::Money,
                width: 14.0,
                definition: "how much",
            },
            Column {
                header: "Note",
                kind: CellKind::Text,
                width: 14.0,
                definition: "anything",
            },
        ];
        let date = NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
        let rows = vec![
            vec![
                Cell::Text("Ann, \"the\" guest".to_owned()),
                Cell::Date(date),
                Cell::Int(3),
                Cell::Money(Decimal::new(1234565, 3)),
                Cell::Empty,
            ],
            vec![
                Cell::Text("=HYPERLINK(\"x\")".to_owned()),
                Cell::Date(date),
                Cell::Int(-1),
                Cell::Money(Decimal::new(-5, 0)),
                Cell::Text("-2".to_owned()),
            ],
        ];
        let path = std::env::temp_dir().join(format!(
            "villa-csv-test-{}.csv",
            uuid::Uuid::new_v4().simple()
        ));
        let written = write_csv(&path, &columns, rows.into_iter()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(written, 2);
        assert!(bytes.starts_with(BOM));
        assert_eq!(
            String::from_utf8(bytes[BOM.len()..].to_vec()).unwrap(),
            "Guest,Check-in,Nights,Total amount,Note\r\n\
             \"Ann, \"\"the\"\" guest\",2026-03-01,3,1234.57,\r\n\
             \"'=HYPERLINK(\"\"x\"\")\",2026-03-01,-1,-5.00,'-2\r\n"
        );
    }
}
