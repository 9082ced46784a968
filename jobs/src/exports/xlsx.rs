//! The workbook of an export, written by `rust_xlsxwriter` in constant-memory mode: each row goes
//! to a temporary file as soon as the next one starts, so a million rows hold one row in memory.
//! Rows must therefore come in order, and the header row, the frozen pane, the filter and the
//! column widths are settings the library writes around the rows when it saves (all allowed in
//! that mode; only formatting a cell apart from its data is limited to the current row).
//!
//! The data sheet comes first (named after the export's type), then a `Definitions` sheet: the
//! export's label/value lines (period, filters, when it was made, the formulas), a blank row, and
//! a table of every column with its type and definition.

use std::path::Path;

use domain::reporting::exports::{Cell, Column};
use rust_decimal::{Decimal, RoundingStrategy, prelude::ToPrimitive};
use rust_xlsxwriter::{ColNum, Format, FormatAlign, RowNum, Workbook, Worksheet, XlsxError};

/// Rows a worksheet holds below its header row (Excel's limit is 1,048,576 rows in all).
pub const MAX_ROWS: u64 = 1_048_575;
/// The longest text a cell holds, in UTF-16 units (Excel's limit); longer text is cut.
const MAX_TEXT: usize = 32_767;
/// Widths (Excel character units) of the Definitions sheet's columns: label or column name, type,
/// and the definition (a value spans the last two).
const DEFINITION_WIDTHS: [f64; 3] = [26.0, 20.0, 100.0];
/// About how many characters of wrapped text one line holds in a value (the last two columns) and
/// in a definition (the last column), to size the rows: Excel does not grow a merged cell's row to
/// its text.
const VALUE_CHARS_PER_LINE: usize = 110;
const DEFINITION_CHARS_PER_LINE: usize = 92;
/// Excel's default row height, and its highest, in points.
const LINE_HEIGHT: f64 = 15.0;
const MAX_ROW_HEIGHT: f64 = 409.0;

/// The cell formats, made once per workbook.
struct Formats {
    header: Format,
    date: Format,
    /// Money and other figures: two decimals, thousands separated.
    decimal: Format,
    int: Format,
    /// Long text on the Definitions sheet.
    wrapped: Format,
}

impl Formats {
    fn new() -> Self {
        Self {
            header: Format::new().set_bold(),
            date: Format::new().set_num_format("yyyy-mm-dd"),
            decimal: Format::new().set_num_format("#,##0.00"),
            int: Format::new().set_num_format("0"),
            wrapped: Format::new().set_text_wrap().set_align(FormatAlign::Top),
        }
    }
}

/// Writes the workbook at `path`: the data sheet `sheet` with `columns` as its header row and
/// `rows` below it, then the Definitions sheet. Answers how many rows were written (the header
/// not counted). Blocking: run it off the async threads.
pub fn write_xlsx(
    path: &Path,
    sheet: &str,
    columns: &[Column],
    definitions: &[(String, String)],
    rows: impl Iterator<Item = Vec<Cell>>,
) -> Result<u64, String> {
    write(path, sheet, columns, definitions, rows).map_err(|e| e.to_string())
}

fn write(
    path: &Path,
    sheet: &str,
    columns: &[Column],
    definitions: &[(String, String)],
    rows: impl Iterator<Item = Vec<Cell>>,
) -> Result<u64, XlsxError> {
    let formats = Formats::new();
    let mut workbook = Workbook::new();
    // Where the rows wait for the save (an unnamed file, gone with the process), beside the
    // export's own file.
    workbook.set_tempdir(std::env::temp_dir())?;

    let data = workbook.add_worksheet_with_constant_memory()?;
    data.set_name(sheet)?;
    for (col, column) in columns.iter().enumerate() {
        let col = col_num(col)?;
        data.set_column_width(col, column.width)?;
        data.write_string_with_format(0, col, column.header, &formats.header)?;
    }
    let mut written: u64 = 0;
    for row in rows {
        if written >= MAX_ROWS {
            return Err(XlsxError::ParameterError(format!(
                "more than {MAX_ROWS} rows: an Excel worksheet holds no more (choose a shorter \
                 period, fewer listings, or the csv format)"
            )));
        }
        written += 1;
        let at = RowNum::try_from(written).map_err(|_| XlsxError::RowColumnLimitError)?;
        for (col, cell) in row.into_iter().enumerate() {
            write_cell(data, at, col_num(col)?, cell, &formats)?;
        }
    }
    let last_col = col_num(columns.len().saturating_sub(1))?;
    let last_row = RowNum::try_from(written).map_err(|_| XlsxError::RowColumnLimitError)?;
    data.set_freeze_panes(1, 0)?;
    data.autofilter(0, 0, last_row, last_col)?;

    let notes = workbook.add_worksheet();
    notes.set_name("Definitions")?;
    write_definitions(notes, columns, definitions, &formats)?;

    workbook.save(path)?;
    Ok(written)
}

/// One typed cell. Money and figures are written as numbers of two decimals (rounded half away
/// from zero, as every figure is), what the sheet shows and what a sum of the column adds up.
fn write_cell(
    sheet: &mut Worksheet,
    row: RowNum,
    col: ColNum,
    cell: Cell,
    formats: &Formats,
) -> Result<(), XlsxError> {
    match cell {
        // An empty text is no cell, as in Excel.
        Cell::Text(text) => {
            if !text.is_empty() {
                sheet.write_string(row, col, clip(text))?;
            }
        }
        Cell::Int(n) => {
            sheet.write_number_with_format(row, col, n as f64, &formats.int)?;
        }
        Cell::Date(date) => {
            sheet.write_date_with_format(row, col, date, &formats.date)?;
        }
        Cell::Money(value) | Cell::Number(value) => {
            sheet.write_number_with_format(row, col, two_decimals(value), &formats.decimal)?;
        }
        Cell::Empty => {}
    }
    Ok(())
}

fn write_definitions(
    sheet: &mut Worksheet,
    columns: &[Column],
    definitions: &[(String, String)],
    formats: &Formats,
) -> Result<(), XlsxError> {
    for (col, width) in DEFINITION_WIDTHS.into_iter().enumerate() {
        sheet.set_column_width(col_num(col)?, width)?;
    }
    let mut row: RowNum = 0;
    for (label, value) in definitions {
        sheet.write_string_with_format(row, 0, label.as_str(), &formats.header)?;
        // The value spans the type and definition columns: the formulas are a paragraph.
        sheet.merge_range(row, 1, row, 2, &clip(value.clone()), &formats.wrapped)?;
        sheet.set_row_height(row, height_of(value, VALUE_CHARS_PER_LINE))?;
        row += 1;
    }
    // A blank row, then the table of columns.
    row += 1;
    for (col, title) in ["Column", "Type", "Definition"].into_iter().enumerate() {
        sheet.write_string_with_format(row, col_num(col)?, title, &formats.header)?;
    }
    for column in columns {
        row += 1;
        sheet.write_string(row, 0, column.header)?;
        sheet.write_string(row, 1, column.kind.as_str())?;
        sheet.write_string_with_format(row, 2, column.definition, &formats.wrapped)?;
        sheet.set_row_height(row, height_of(column.definition, DEFINITION_CHARS_PER_LINE))?;
    }
    Ok(())
}

/// The height that shows `text` wrapped at about `per_line` characters a line.
fn height_of(text: &str, per_line: usize) -> f64 {
    let lines: usize = text
        .lines()
        .map(|line| line.chars().count().div_ceil(per_line.max(1)).max(1))
        .sum();
    (LINE_HEIGHT * lines.max(1) as f64).min(MAX_ROW_HEIGHT)
}

fn two_decimals(value: Decimal) -> f64 {
    value
        .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
        .to_f64()
        .unwrap_or_default()
}

/// `text` cut to what a cell holds (a UTF-8 byte is at least one UTF-16 unit's worth, so only
/// text longer than the limit in bytes needs counting).
fn clip(mut text: String) -> String {
    if text.len() > MAX_TEXT {
        let mut units = 0;
        let cut = text.char_indices().find_map(|(at, c)| {
            units += c.len_utf16();
            (units > MAX_TEXT).then_some(at)
        });
        if let Some(cut) = cut {
            text.truncate(cut);
        }
    }
    text
}

fn col_num(col: usize) -> Result<ColNum, XlsxError> {
    ColNum::try_from(col).map_err(|_| XlsxError::RowColumnLimitError)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_to_what_a_cell_holds() {
        assert_eq!(clip("short".to_owned()), "short");
        let long = "é".repeat(MAX_TEXT + 10);
        let cut = clip(long);
        assert_eq!(cut.chars().count(), MAX_TEXT);
        let wide = "😀".repeat(MAX_TEXT);
        assert_eq!(clip(wide).encode_utf16().count(), MAX_TEXT - 1);
    }

    #[test]
    fn figures_are_two_decimals_half_away_from_zero() {
        assert_eq!(two_decimals(Decimal::new(12345, 3)), 12.35);
        assert_eq!(two_decimals(Decimal::new(-12345, 3)), -12.35);
        assert_eq!(two_decimals(Decimal::new(7, 0)), 7.0);
    }

    #[test]
    fn rows_of_the_definitions_sheet_fit_their_text() {
        assert_eq!(height_of("", 100), LINE_HEIGHT);
        assert_eq!(height_of(&"x".repeat(100), 100), LINE_HEIGHT);
        assert_eq!(height_of(&"x".repeat(101), 100), 2.0 * LINE_HEIGHT);
        assert_eq!(height_of("a\nb", 100), 2.0 * LINE_HEIGHT);
    }
}
