//! Exports of `/reporting` as polled jobs (issue 18): `POST /export` answers 202 at once, a worker
//! of the `exports` queue (in process here) writes the file, `GET /export/{id}` says how far it
//! is, and the download serves it until it expires. Every type is opened with a spreadsheet reader
//! (calamine) and read cell by cell: the header row, the type of every cell, the Definitions
//! sheet, figures that agree with `/dashboard/metrics` and rows that agree with
//! `GET /reservations`. Also CSV, 409/410/404 on download, a failed export, every refused request
//! and a worker killed mid-export. The fixture is the dashboard's (`reporting_dashboard`), whose
//! figures are worked out there; the ones the exports show are worked out again here.

use std::{io::Cursor, time::Duration};

use bytes::Bytes;
use calamine::{Data, Reader, Xlsx, open_workbook_from_rs};
use chrono::{DateTime, NaiveDate, TimeDelta};
use jobs::{
    Job, JobRegistry, Periodic,
    exports::{ExpireExports, ExportJob},
};
use reqwest::{Method, RequestBuilder, header::HeaderMap};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::{Connection as _, PgPool};
use tests::{TestApp, eventually, job_status, json as read_json};
use uuid::Uuid;

use crate::auth::assert_error_shape;
use crate::reporting_dashboard::{d, date, load_fixture, num, refused};

const EXPORT: &str = "/reporting/export";
const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
/// How long an export of the fixture may take, a worker's lease expiring included.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(60);

/// What a column holds, as the workbook types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    /// A whole number, shown without decimals.
    Int,
    Date,
    /// A number with two decimals; the currency is in a column of its own.
    Money,
    /// A number with two decimals (a percentage).
    Number,
}

const RESERVATION_COLUMNS: &[(&str, Kind)] = &[
    ("Reservation ID", Kind::Text),
    ("PMS ID", Kind::Int),
    ("Listing", Kind::Text),
    ("Listing PMS ID", Kind::Int),
    ("Guest", Kind::Text),
    ("Check-in", Kind::Date),
    ("Check-out", Kind::Date),
    ("Nights", Kind::Int),
    ("Channel", Kind::Text),
    ("Channel name", Kind::Text),
    ("Status", Kind::Text),
    ("Total amount", Kind::Money),
    ("Net amount", Kind::Money),
    ("Currency", Kind::Text),
];

const LISTING_COLUMNS: &[(&str, Kind)] = &[
    ("Listing ID", Kind::Text),
    ("PMS ID", Kind::Int),
    ("Listing", Kind::Text),
    ("Status", Kind::Text),
    ("Bedrooms", Kind::Int),
    ("Location", Kind::Text),
    ("Nights", Kind::Int),
    ("Booked nights", Kind::Int),
    ("Available nights", Kind::Int),
    ("Occupancy (%)", Kind::Number),
    ("Bookings", Kind::Int),
    ("Revenue", Kind::Money),
    ("ADR", Kind::Money),
    ("RevPAR", Kind::Money),
    ("Currency", Kind::Text),
];

const OCCUPANCY_COLUMNS: &[(&str, Kind)] = &[
    ("Date", Kind::Date),
    ("Listing ID", Kind::Text),
    ("PMS ID", Kind::Int),
    ("Listing", Kind::Text),
    ("Booked nights", Kind::Int),
    ("Owner-stay night", Kind::Int),
    ("Available nights", Kind::Int),
    ("Occupancy (%)", Kind::Number),
];

const REVENUE_COLUMNS: &[(&str, Kind)] = &[
    ("Month", Kind::Text),
    ("Listing ID", Kind::Text),
    ("PMS ID", Kind::Int),
    ("Listing", Kind::Text),
    ("Nights", Kind::Int),
    ("Booked nights", Kind::Int),
    ("Available nights", Kind::Int),
    ("Revenue", Kind::Money),
    ("Occupancy (%)", Kind::Number),
    ("ADR", Kind::Money),
    ("RevPAR", Kind::Money),
    ("Bookings", Kind::Int),
    ("Currency", Kind::Text),
];

/// The jobs `worker-exports` runs.
pub(crate) fn exports_registry() -> JobRegistry {
    JobRegistry::new()
        .register::<ExportJob>()
        .register::<ExpireExports>()
}

/// A request as a viewer of a subject no other request used: a test polling an export must
/// measure the export, not the rate limit (60 a minute per caller).
fn request(app: &TestApp, method: Method, path: &str) -> RequestBuilder {
    tests::pms::request(app, method, path, "viewer")
}

async fn send(req: RequestBuilder) -> (u16, HeaderMap, Value) {
    let res = req.send().await.unwrap();
    let headers = res.headers().clone();
    let (status, body) = read_json(res).await;
    (status, headers, body)
}

fn header_of<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `POST /reporting/export` with `body`: 202 `{exportId, status: PROCESSING}`, with where to poll
/// (`Location`) and when (`Retry-After`). Answers the export's id.
pub(crate) async fn start(app: &TestApp, body: &Value) -> Uuid {
    let (status, headers, answer) = send(request(app, Method::POST, EXPORT).json(body)).await;
    assert_eq!(status, 202, "{body}: {answer}");
    assert_eq!(answer["status"], "PROCESSING", "{answer}");
    let id: Uuid = answer["exportId"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no exportId in {answer}"));
    assert_eq!(
        header_of(&headers, "location"),
        Some(format!("{EXPORT}/{id}").as_str())
    );
    let retry_after: u64 = header_of(&headers, "retry-after")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no Retry-After in {headers:?}"));
    assert!(retry_after >= 1, "{headers:?}");
    id
}

/// `GET /reporting/export/{id}`.
async fn status_of(app: &TestApp, id: Uuid) -> (u16, HeaderMap, Value) {
    send(request(app, Method::GET, &format!("{EXPORT}/{id}"))).await
}

/// Polls the export until it is COMPLETED or FAILED; answers what it last said.
pub(crate) async fn wait_done(app: &TestApp, id: Uuid) -> Value {
    eventually(EXPORT_TIMEOUT, || async {
        let (status, _, export) = status_of(app, id).await;
        assert_eq!(status, 200, "{export}");
        (export["status"] == "COMPLETED" || export["status"] == "FAILED").then_some(export)
    })
    .await
    .unwrap_or_else(|| panic!("export {id} not done within {EXPORT_TIMEOUT:?}"))
}

/// Asserts what a COMPLETED export says of itself.
fn assert_completed(export: &Value, id: Uuid, kind: &str, format: &str, file_name: &str) {
    assert_eq!(export["status"], "COMPLETED", "{export}");
    assert_eq!(export["exportId"], id.to_string(), "{export}");
    assert_eq!(export["type"], kind, "{export}");
    assert_eq!(export["format"], format, "{export}");
    assert_eq!(export["progress"], 100, "{export}");
    assert_eq!(export["fileName"], file_name, "{export}");
    assert_eq!(
        export["downloadUrl"],
        format!("{EXPORT}/{id}/download"),
        "{export}"
    );
    assert!(export["error"].is_null(), "{export}");
    let at = |key: &str| {
        export[key]
            .as_str()
            .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
            .unwrap_or_else(|| panic!("{key} is not a timestamp: {export}"))
    };
    assert!(at("createdAt") <= at("completedAt"), "{export}");
    // EXPORT_RETENTION_DAYS (7 by default) after it was made.
    let kept = at("expiresAt") - at("completedAt");
    assert!(
        (kept - TimeDelta::days(7)).num_seconds().abs() <= 60,
        "kept {kept}: {export}"
    );
}

/// Downloads a COMPLETED export: its headers and bytes.
pub(crate) async fn download(app: &TestApp, id: Uuid) -> (HeaderMap, Bytes) {
    let res = request(app, Method::GET, &format!("{EXPORT}/{id}/download"))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let body = res.bytes().await.unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        header_of(&headers, "content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(
        header_of(&headers, "cache-control"),
        Some("private, no-store")
    );
    (headers, body)
}

/// Asserts the download is an attachment named `name`.
fn assert_attachment(headers: &HeaderMap, name: &str) {
    let disposition = header_of(headers, "content-disposition").unwrap_or_default();
    assert!(
        disposition.starts_with("attachment")
            && disposition.contains(&format!("filename=\"{name}\"")),
        "Content-Disposition {disposition:?}, not an attachment named {name}"
    );
}

/// Where the export's file is kept (`storage_path` under STORAGE_LOCAL_DIR), and its status column.
async fn stored(app: &TestApp, id: Uuid) -> (Option<std::path::PathBuf>, String) {
    let (path, status): (Option<String>, String) =
        sqlx::query_as("SELECT storage_path, status FROM reporting_exports WHERE id = $1")
            .bind(id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    (path.map(|p| app.core.storage_local_dir.join(p)), status)
}

type Workbook = Xlsx<Cursor<Bytes>>;

fn open(bytes: &Bytes) -> Workbook {
    open_workbook_from_rs(Cursor::new(bytes.clone()))
        .unwrap_or_else(|e| panic!("not a workbook: {e:?}"))
}

fn text(cell: &Data) -> &str {
    match cell {
        Data::String(s) => s.as_str(),
        other => panic!("not text: {other:?}"),
    }
}

/// Text, or nothing (an empty cell).
fn text_or_empty(cell: &Data) -> &str {
    match cell {
        Data::Empty => "",
        other => text(other),
    }
}

fn int(cell: &Data) -> i64 {
    match cell {
        Data::Float(f) if (f.round() - f).abs() < 1e-9 => *f as i64,
        Data::Int(i) => *i,
        other => panic!("not a whole number: {other:?}"),
    }
}

/// A date cell (a date-formatted number with no time).
fn day(cell: &Data) -> NaiveDate {
    match cell {
        Data::DateTime(at) => {
            let (year, month, day, hour, minute, second, milli) = at.to_ymd_hms_milli();
            assert_eq!((hour, minute, second, milli), (0, 0, 0, 0), "{cell:?}");
            NaiveDate::from_ymd_opt(i32::from(year), u32::from(month), u32::from(day))
                .unwrap_or_else(|| panic!("not a date: {cell:?}"))
        }
        other => panic!("not a date: {other:?}"),
    }
}

/// A number of at most 2 decimals, as a decimal.
fn money(cell: &Data) -> Decimal {
    match cell {
        Data::Float(f) => {
            let cents = (f * 100.0).round();
            assert!(
                (f * 100.0 - cents).abs() < 1e-6,
                "more than 2 decimals: {f}"
            );
            Decimal::new(cents as i64, 2)
        }
        other => panic!("not a number: {other:?}"),
    }
}

fn empty(cell: &Data) -> bool {
    matches!(cell, Data::Empty) || matches!(cell, Data::String(s) if s.is_empty())
}

/// The letter of column number `n` (1-based) for n ≤ 26.
fn column_letter(n: usize) -> char {
    char::from(b'A' + u8::try_from(n - 1).expect("a small column number"))
}

/// Reads the data sheet `sheet` and checks its shape: it is the first sheet, "Definitions" the
/// second; its header row is the columns' names, in bold, filtered over every column (the
/// autofilter's defined name); below it every cell is of its column's kind: text as text, dates
/// as dates, counts as whole numbers shown without decimals (`0`), money and percentages as
/// numbers shown with two (`#,##0.00`). Answers the rows below the header.
fn data_sheet(wb: &mut Workbook, sheet: &str, columns: &[(&str, Kind)]) -> Vec<Vec<Data>> {
    assert_eq!(wb.sheet_names(), [sheet, "Definitions"]);
    let range = wb
        .worksheet_range(sheet)
        .unwrap_or_else(|e| panic!("{sheet}: {e:?}"));
    assert_eq!(range.start(), Some((0, 0)), "{sheet} starts at A1");
    let mut rows: Vec<Vec<Data>> = range.rows().map(<[Data]>::to_vec).collect();
    let header: Vec<&str> = rows[0].iter().map(text).collect();
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    assert_eq!(header, names, "the header row of {sheet}");

    let styles = wb
        .worksheet_style(sheet)
        .unwrap_or_else(|e| panic!("{sheet}: {e:?}"));
    let format_at = |row: usize, col: usize| {
        styles
            .get((row as u32, col as u32))
            .and_then(|style| style.number_format.as_ref())
            .map(|format| format.format_code.clone())
            .unwrap_or_default()
    };
    for (col, (name, _)) in columns.iter().enumerate() {
        let bold = styles
            .get((0, col as u32))
            .and_then(|style| style.font.as_ref())
            .is_some_and(|font| font.is_bold());
        assert!(bold, "the header {name} of {sheet} is bold");
    }
    for (r, row) in rows.iter().enumerate().skip(1) {
        for (col, (name, kind)) in columns.iter().enumerate() {
            let cell = row.get(col).unwrap_or(&Data::Empty);
            if empty(cell) {
                continue;
            }
            let at = format!("{sheet} row {r}, {name}: {cell:?}");
            match kind {
                Kind::Text => assert!(matches!(cell, Data::String(_)), "{at}"),
                Kind::Date => assert!(matches!(cell, Data::DateTime(_)), "{at}"),
                Kind::Int => {
                    int(cell);
                    assert_eq!(format_at(r, col), "0", "{at}");
                }
                Kind::Money | Kind::Number => {
                    money(cell);
                    assert_eq!(format_at(r, col), "#,##0.00", "{at}");
                }
            }
        }
    }

    // The header row filters the data: `<sheet>!$A$1:$<last column>$<last row>`.
    let filter = wb
        .defined_names()
        .iter()
        .find(|(name, _)| name == "_xlnm._FilterDatabase")
        .map(|(_, range)| range.clone())
        .unwrap_or_else(|| panic!("{sheet} has no autofilter: {:?}", wb.defined_names()));
    let over = format!("{sheet}!$A$1:${}$", column_letter(columns.len()));
    let last_row: usize = filter
        .strip_prefix(&over)
        .and_then(|row| row.parse().ok())
        .unwrap_or_else(|| panic!("the autofilter is {filter}, not {over}<last row>"));
    assert!(
        last_row + 1 >= rows.len() && last_row <= rows.len(),
        "the autofilter {filter} covers the {} rows",
        rows.len()
    );
    rows.split_off(1)
}

fn first_cell(row: &[String]) -> &str {
    row.first().map_or("", String::as_str)
}

/// Checks the Definitions sheet: label/value lines naming the period (`period`'s dates), the
/// listings (`listings`, when given), when it was made and the formulas, then a table
/// Column | Type | Definition that defines every column of the data sheet, in order.
fn assert_definitions(
    wb: &mut Workbook,
    columns: &[(&str, Kind)],
    period: &[&str],
    listings: &[&str],
) {
    let range = wb
        .worksheet_range("Definitions")
        .unwrap_or_else(|e| panic!("Definitions: {e:?}"));
    let rows: Vec<Vec<String>> = range
        .rows()
        .map(|row| {
            row.iter()
                .map(|cell| match cell {
                    Data::Empty => String::new(),
                    other => other.to_string(),
                })
                .collect()
        })
        .collect();
    let table = rows
        .iter()
        .position(|row| first_cell(row) == "Column")
        .unwrap_or_else(|| panic!("no column table in {rows:?}"));
    assert_eq!(rows[table][..3], ["Column", "Type", "Definition"]);
    let line = |label: &str| {
        rows[..table]
            .iter()
            .find(|row| first_cell(row).starts_with(label))
            .and_then(|row| row.get(1).cloned())
            .unwrap_or_else(|| panic!("no {label} line in {rows:?}"))
    };
    for date in period {
        assert!(line("Period").contains(date), "{date} in {rows:?}");
    }
    for name in listings {
        assert!(line("Listings").contains(name), "{name} in {rows:?}");
    }
    assert!(!line("Generated at").is_empty(), "{rows:?}");
    assert!(line("Formulas").contains("CONFIRMED"), "{rows:?}");
    let defined: Vec<&Vec<String>> = rows[table + 1..]
        .iter()
        .filter(|row| !first_cell(row).is_empty())
        .collect();
    let names: Vec<&str> = defined.iter().map(|row| row[0].as_str()).collect();
    let expected: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected, "the columns defined");
    for row in defined {
        assert!(
            row.len() >= 3 && !row[1].is_empty() && !row[2].is_empty(),
            "{row:?} has a type and a definition"
        );
    }
}

/// The records of a CSV text (RFC 4180: a field in double quotes may hold commas, a quote is
/// doubled).
pub(crate) fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

/// The ids `GET /reporting/reservations?<query>` lists, in its order.
async fn listed_reservations(app: &TestApp, query: &str) -> Vec<String> {
    let (status, _, page) = send(request(
        app,
        Method::GET,
        &format!("/reporting/reservations?{query}&limit=100"),
    ))
    .await;
    assert_eq!(status, 200, "{query}: {page}");
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {page}"))
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_revenue_export_has_a_row_per_listing_and_month_and_totals_as_the_dashboard(
    pool: PgPool,
) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let worker = app.worker(exports_registry());
    let file_name = "revenue_2026-02-15_2026-03-31.xlsx";
    let id = start(
        &app,
        &json!({"type": "revenue", "format": "excel", "startDate": "2026-02-15",
                "endDate": "2026-03-31"}),
    )
    .await;
    let export = wait_done(&app, id).await;
    assert_completed(&export, id, "revenue", "excel", file_name);
    let (headers, bytes) = download(&app, id).await;
    assert_eq!(header_of(&headers, "content-type"), Some(XLSX));
    assert_attachment(&headers, file_name);
    // Kept in the document store under Exports/, as downloaded.
    let (path, _) = stored(&app, id).await;
    let path = path.expect("a stored file");
    assert!(
        path.ends_with(format!("Exports/{id}-{file_name}")),
        "{}",
        path.display()
    );
    assert_eq!(std::fs::read(&path).unwrap(), &bytes[..]);

    let mut wb = open(&bytes);
    let rows = data_sheet(&mut wb, "Revenue", REVENUE_COLUMNS);
    assert_eq!(
        rows.len(),
        7,
        "3 listings × 2 months, then the total: {rows:?}"
    );
    let count = export["rowCount"].as_u64().unwrap_or_default();
    // Every row below the header, the Total row included.
    assert_eq!(count, 7, "rowCount: {export}");
    // By listing (by name: Amber, Magnolia, Zinnia), then month. February is 15–28 (14 nights).
    // (month, listing, PMS id, name, [nights, booked, available],
    //  [revenue, occupancy, ADR, RevPAR], bookings)
    let expected = [
        // B, February: nothing (#12 left on the 15th).
        (
            "2026-02",
            f.b,
            102,
            "Villa Amber",
            [14, 0, 14],
            ["0", "0", "0", "0"],
            0,
        ),
        // B, March: #8 4 nights (4,000) + #6 2 of its 3 (666.666…): 4,666.67; 6 / 31 = 19.35 %;
        // ADR 4,666.666… / 6 = 777.78; RevPAR / 31 = 150.54; check-ins #8 and #6.
        (
            "2026-03",
            f.b,
            102,
            "Villa Amber",
            [31, 6, 31],
            ["4666.67", "19.35", "777.78", "150.54"],
            2,
        ),
        (
            "2026-02",
            f.c,
            103,
            "Villa Magnolia",
            [14, 0, 14],
            ["0", "0", "0", "0"],
            0,
        ),
        // C, March: #9 3 nights (USD) + #10 2 (no currency) = 5 booked and no THB: 16.13 %.
        (
            "2026-03",
            f.c,
            103,
            "Villa Magnolia",
            [31, 5, 31],
            ["0", "16.13", "0", "0"],
            2,
        ),
        // A, February: #1's 26–28, 3 × 1,000; 3 / 14 = 21.43 %; ADR 1,000; RevPAR 3,000 / 14 =
        // 214.29; #1 checks in on the 26th.
        (
            "2026-02",
            f.a,
            101,
            "Villa Zinnia",
            [14, 3, 14],
            ["3000", "21.43", "1000", "214.29"],
            1,
        ),
        // A, March: #1 3 + #2 5 = 8 booked of 31 less 5 blocked = 26: 30.77 %; 3,000 + 7,500 =
        // 10,500; ADR 1,312.50; RevPAR 10,500 / 26 = 403.85; check-in #2.
        (
            "2026-03",
            f.a,
            101,
            "Villa Zinnia",
            [31, 8, 26],
            ["10500", "30.77", "1312.50", "403.85"],
            1,
        ),
    ];
    for (row, (month, listing, pms_id, name, nights, figures, bookings)) in
        rows.iter().zip(expected)
    {
        let at = format!("{name} {month}: {row:?}");
        assert_eq!(text(&row[0]), month, "{at}");
        assert_eq!(text(&row[1]), listing.to_string(), "{at}");
        assert_eq!(int(&row[2]), pms_id, "{at}");
        assert_eq!(text(&row[3]), name, "{at}");
        assert_eq!([int(&row[4]), int(&row[5]), int(&row[6])], nights, "{at}");
        // Revenue, occupancy, ADR, RevPAR.
        let shown = [
            money(&row[7]),
            money(&row[8]),
            money(&row[9]),
            money(&row[10]),
        ];
        assert_eq!(shown, figures.map(d), "{at}");
        assert_eq!(int(&row[11]), bookings, "{at}");
        assert_eq!(text(&row[12]), "THB", "{at}");
    }
    // The total over the whole period, every listing at once: 3 × 45 nights = 135, less A's 5
    // blocked = 130 available; booked 6 + 5 + 3 + 8 = 22: 16.923… → 16.92 %; revenue 4,666.666… +
    // 3,000 + 10,500 = 18,166.666… → 18,166.67; ADR over the 17 THB nights (6 + 3 + 8)
    // 1,068.627… → 1,068.63; RevPAR / 130 = 139.743… → 139.74; check-ins #1, #2, #6, #8, #9,
    // #10 = 6.
    let total = &rows[6];
    assert!(
        text(&total[0]).contains("2026-02-15") && text(&total[0]).contains("2026-03-31"),
        "{total:?}"
    );
    assert!(empty(&total[1]) && empty(&total[2]), "{total:?}");
    assert_eq!(text(&total[3]), "Total");
    assert_eq!(
        [int(&total[4]), int(&total[5]), int(&total[6])],
        [135, 22, 130]
    );
    let shown = [
        money(&total[7]),
        money(&total[8]),
        money(&total[9]),
        money(&total[10]),
    ];
    assert_eq!(shown, ["18166.67", "16.92", "1068.63", "139.74"].map(d));
    assert_eq!(int(&total[11]), 6);
    assert_eq!(text(&total[12]), "THB");

    // The same figures as the dashboard's for the same period.
    let (status, m) = tests::pms::get(
        &app,
        "/reporting/dashboard/metrics?startDate=2026-02-15&endDate=2026-03-31",
        "viewer",
    )
    .await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(
        [
            num(&m["revenue"]["total"]),
            num(&m["occupancy"]["rate"]),
            num(&m["adr"]["value"]),
            num(&m["revpar"]["value"])
        ],
        shown
    );
    assert_eq!(m["bookings"]["count"].as_i64(), Some(int(&total[11])));
    assert_eq!(m["nights"]["booked"].as_i64(), Some(int(&total[5])));
    assert_eq!(m["nights"]["available"].as_i64(), Some(int(&total[6])));

    assert_definitions(&mut wb, REVENUE_COLUMNS, &["2026-02-15", "2026-03-31"], &[]);
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_revenue_export_takes_two_years_of_months_as_its_description_says(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;

    // What the API description says of the period: the request's endDate and the definitions.
    let (status, doc) = read_json(app.get_anonymous("/openapi.json").await).await;
    assert_eq!(status, 200);
    let request = &doc["components"]["schemas"]["ExportRequest"];
    let end_date = request["properties"]["endDate"]["description"]
        .as_str()
        .unwrap_or_else(|| panic!("no endDate description in {request}"));
    assert!(
        end_date.contains("at most 366 nights for listings and occupancy, 730 for revenue"),
        "{end_date}"
    );
    let definitions = request["description"].as_str().unwrap_or_default();
    assert!(
        definitions.contains("730 for monthly charts and the revenue export"),
        "{definitions}"
    );

    // And so it is: 2024-04-01 .. 2026-03-31, 365 + 365 = 730 nights, is made.
    let worker = app.worker(exports_registry());
    let file_name = "revenue_2024-04-01_2026-03-31.xlsx";
    let id = start(
        &app,
        &json!({"type": "revenue", "startDate": "2024-04-01", "endDate": "2026-03-31",
                "listingIds": [f.a]}),
    )
    .await;
    let export = wait_done(&app, id).await;
    assert_completed(&export, id, "revenue", "excel", file_name);
    // A's 24 months, then the Total row.
    assert_eq!(export["rowCount"], 25, "{export}");
    let (_, bytes) = download(&app, id).await;
    let mut wb = open(&bytes);
    let rows = data_sheet(&mut wb, "Revenue", REVENUE_COLUMNS);
    assert_eq!(rows.len(), 25, "{rows:?}");
    let months: Vec<&str> = rows[..24].iter().map(|row| text(&row[0])).collect();
    assert_eq!(months[0], "2024-04");
    assert_eq!(months[23], "2026-03");
    assert!(rows[..24].iter().all(|row| text(&row[3]) == "Villa Zinnia"));
    // A's stays, all inside: #13 4 nights in January 2026 (4,000), #1 3 in February and 3 in
    // March (6,000), #2 5 in March (7,500); the owner stays block 5 nights of March.
    // (month, [nights, booked, available], revenue)
    for (row, expected) in rows[21..24].iter().zip([
        ("2026-01", [31, 4, 31], "4000"),
        ("2026-02", [28, 3, 28], "3000"),
        ("2026-03", [31, 8, 26], "10500"),
    ]) {
        let (month, nights, revenue) = expected;
        assert_eq!(text(&row[0]), month, "{row:?}");
        assert_eq!(
            [int(&row[4]), int(&row[5]), int(&row[6])],
            nights,
            "{row:?}"
        );
        assert_eq!(money(&row[7]), d(revenue), "{row:?}");
    }
    // Total: 730 nights less 5 blocked = 725 available; 15 booked: 2.068… → 2.07 %; 17,500;
    // ADR 17,500 / 15 = 1,166.666… → 1,166.67; RevPAR 17,500 / 725 = 24.137… → 24.14; 3
    // check-ins.
    let total = &rows[24];
    assert_eq!(text(&total[3]), "Total");
    assert_eq!(
        [int(&total[4]), int(&total[5]), int(&total[6])],
        [730, 15, 725]
    );
    assert_eq!(
        [
            money(&total[7]),
            money(&total[8]),
            money(&total[9]),
            money(&total[10])
        ],
        ["17500", "2.07", "1166.67", "24.14"].map(d)
    );
    assert_eq!(int(&total[11]), 3);
    assert_definitions(
        &mut wb,
        REVENUE_COLUMNS,
        &["2024-04-01", "2026-03-31", "730 nights"],
        &["Villa Zinnia"],
    );
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_listings_export_has_a_row_per_listing_in_scope_with_its_figures(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let worker = app.worker(exports_registry());
    let file_name = "listings_2026-03-01_2026-03-31.xlsx";
    // Every ACTIVE listing, and A with the INACTIVE D named.
    let all = start(
        &app,
        &json!({"type": "listings", "startDate": "2026-03-01", "endDate": "2026-03-31"}),
    )
    .await;
    let named = start(
        &app,
        &json!({"type": "listings", "startDate": "2026-03-01", "endDate": "2026-03-31",
                "listingIds": [f.a, f.d], "currency": "thb"}),
    )
    .await;
    // (listing, PMS id, name, status, [nights, booked, available], occupancy, bookings,
    //  [revenue, ADR, RevPAR])
    // B: #8 4 + #6 2 = 6 of 31: 19.35 %; 4,000 + 666.666… = 4,666.67; / 6 = 777.78; / 31 = 150.54.
    let amber = (
        f.b,
        102,
        "Villa Amber",
        "ACTIVE",
        [31, 6, 31],
        "19.35",
        2,
        ["4666.67", "777.78", "150.54"],
    );
    // C: #9 3 (USD) + #10 2 (no currency) = 5 of 31: 16.13 %; no THB money.
    let magnolia = (
        f.c,
        103,
        "Villa Magnolia",
        "ACTIVE",
        [31, 5, 31],
        "16.13",
        2,
        ["0", "0", "0"],
    );
    // A: #1 3 + #2 5 = 8 of 26 (5 blocked): 30.77 %; 10,500; / 8 = 1,312.50; / 26 = 403.85.
    let zinnia = (
        f.a,
        101,
        "Villa Zinnia",
        "ACTIVE",
        [31, 8, 26],
        "30.77",
        1,
        ["10500", "1312.50", "403.85"],
    );
    // D: #11 3 of 31: 9.68 %; 3,000; / 3 = 1,000; / 31 = 96.77.
    let dune = (
        f.d,
        104,
        "Villa Dune",
        "INACTIVE",
        [31, 3, 31],
        "9.68",
        1,
        ["3000", "1000", "96.77"],
    );

    for (id, expected, scope) in [
        (all, vec![amber, magnolia, zinnia], vec![]),
        (
            named,
            vec![dune, zinnia],
            vec!["Villa Dune", "Villa Zinnia"],
        ),
    ] {
        let export = wait_done(&app, id).await;
        assert_completed(&export, id, "listings", "excel", file_name);
        let (headers, bytes) = download(&app, id).await;
        assert_attachment(&headers, file_name);
        let mut wb = open(&bytes);
        let rows = data_sheet(&mut wb, "Listings", LISTING_COLUMNS);
        assert_eq!(rows.len(), expected.len(), "{rows:?}");
        assert_eq!(export["rowCount"].as_u64(), Some(expected.len() as u64));
        for (row, (listing, pms_id, name, status, nights, occupancy, bookings, figures)) in
            rows.iter().zip(expected)
        {
            let at = format!("{name}: {row:?}");
            assert_eq!(text(&row[0]), listing.to_string(), "{at}");
            assert_eq!(int(&row[1]), pms_id, "{at}");
            assert_eq!(text(&row[2]), name, "{at}");
            assert_eq!(text(&row[3]), status, "{at}");
            assert_eq!(int(&row[4]), 3, "{at}");
            assert_eq!(text(&row[5]), "Canggu, Indonesia", "{at}");
            assert_eq!([int(&row[6]), int(&row[7]), int(&row[8])], nights, "{at}");
            assert_eq!(money(&row[9]), d(occupancy), "{at}");
            assert_eq!(int(&row[10]), bookings, "{at}");
            assert_eq!(
                [money(&row[11]), money(&row[12]), money(&row[13])],
                figures.map(d),
                "{at}"
            );
            assert_eq!(text(&row[14]), "THB", "{at}");
        }
        assert_definitions(
            &mut wb,
            LISTING_COLUMNS,
            &["2026-03-01", "2026-03-31"],
            &scope,
        );
    }
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_occupancy_export_has_a_row_per_listing_and_night(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let worker = app.worker(exports_registry());
    let id = start(
        &app,
        &json!({"type": "occupancy", "startDate": "2026-03-01", "endDate": "2026-03-31"}),
    )
    .await;
    let export = wait_done(&app, id).await;
    let file_name = "occupancy_2026-03-01_2026-03-31.xlsx";
    assert_completed(&export, id, "occupancy", "excel", file_name);
    let (headers, bytes) = download(&app, id).await;
    assert_attachment(&headers, file_name);
    let mut wb = open(&bytes);
    let rows = data_sheet(&mut wb, "Occupancy", OCCUPANCY_COLUMNS);

    // 3 ACTIVE listings × 31 nights, by listing (by name), then night.
    assert_eq!(export["rowCount"], 93, "{export}");
    let order: Vec<(String, NaiveDate)> = rows
        .iter()
        .map(|row| (text(&row[3]).to_owned(), day(&row[0])))
        .collect();
    let expected: Vec<(String, NaiveDate)> = ["Villa Amber", "Villa Magnolia", "Villa Zinnia"]
        .into_iter()
        .flat_map(|name| {
            date("2026-03-01")
                .iter_days()
                .take(31)
                .map(move |night| (name.to_owned(), night))
        })
        .collect();
    assert_eq!(order, expected);
    // Summed, the dashboard's March: 19 booked, 88 available, A's 5 blocked nights.
    let sum = |col: usize| rows.iter().map(|row| int(&row[col])).sum::<i64>();
    assert_eq!((sum(4), sum(5), sum(6)), (19, 5, 88));

    // (listing, PMS id, name, night, booked, owner-stay night, available, occupancy)
    for (listing, pms_id, name, night, booked, owner, available, occupancy) in [
        // #2.
        (f.a, 101, "Villa Zinnia", "2026-03-10", 1, 0, 1, "100"),
        // #3 and #4 both: blocked once, nothing available, 0 % (not a division by 0).
        (f.a, 101, "Villa Zinnia", "2026-03-22", 0, 1, 0, "0"),
        // #5 is cancelled.
        (f.a, 101, "Villa Zinnia", "2026-03-16", 0, 0, 1, "0"),
        // #10, without currency: its nights count.
        (f.c, 103, "Villa Magnolia", "2026-03-21", 1, 0, 1, "100"),
        // #8 (and #7, an inquiry, that night too).
        (f.b, 102, "Villa Amber", "2026-03-06", 1, 0, 1, "100"),
        // #6's last night in the period.
        (f.b, 102, "Villa Amber", "2026-03-31", 1, 0, 1, "100"),
        (f.b, 102, "Villa Amber", "2026-03-15", 0, 0, 1, "0"),
    ] {
        let row = rows
            .iter()
            .find(|row| text(&row[3]) == name && day(&row[0]) == date(night))
            .unwrap_or_else(|| panic!("no row of {name} on {night}"));
        let at = format!("{name} on {night}: {row:?}");
        assert_eq!(text(&row[1]), listing.to_string(), "{at}");
        assert_eq!(int(&row[2]), pms_id, "{at}");
        assert_eq!(
            [int(&row[4]), int(&row[5]), int(&row[6])],
            [booked, owner, available],
            "{at}"
        );
        assert_eq!(money(&row[7]), d(occupancy), "{at}");
    }
    assert!(
        rows.iter().all(|row| matches!(int(&row[5]), 0 | 1)),
        "an owner-stay night is 0 or 1"
    );
    assert_definitions(
        &mut wb,
        OCCUPANCY_COLUMNS,
        &["2026-03-01", "2026-03-31"],
        &[],
    );
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_reservations_export_lists_what_the_reservation_list_lists(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    // A guest name a spreadsheet would take for a formula.
    sqlx::query("UPDATE pms_reservations SET guest_name = '=SUM(A1:A9)' WHERE pms_id = 2")
        .execute(&pool)
        .await
        .unwrap();
    let worker = app.worker(exports_registry());

    // A's reservations checking in from 1 February to 31 March, as GET /reservations filters
    // them (listingId ↔ listingIds): newest check-in first, #4 (22 March), #3 (20th), #5
    // (16th), #2 (10th), #1 (26 February); #13 checked in in January.
    let id = start(
        &app,
        &json!({"type": "reservations", "listingIds": [f.a], "startDate": "2026-02-01",
                "endDate": "2026-03-31"}),
    )
    .await;
    let file_name = "reservations_2026-02-01_2026-03-31.xlsx";
    let export = wait_done(&app, id).await;
    assert_completed(&export, id, "reservations", "excel", file_name);
    let (headers, bytes) = download(&app, id).await;
    assert_eq!(header_of(&headers, "content-type"), Some(XLSX));
    assert_attachment(&headers, file_name);
    let mut wb = open(&bytes);
    let rows = data_sheet(&mut wb, "Reservations", RESERVATION_COLUMNS);
    let ids: Vec<String> = rows.iter().map(|row| text(&row[0]).to_owned()).collect();
    let expected: Vec<String> = [4, 3, 5, 2, 1]
        .map(|pms_id| f.reservation(pms_id).to_string())
        .to_vec();
    assert_eq!(ids, expected);
    assert_eq!(
        ids,
        listed_reservations(
            &app,
            &format!("listingId={}&startDate=2026-02-01&endDate=2026-03-31", f.a)
        )
        .await
    );
    assert_eq!(export["rowCount"], 5, "{export}");
    // #1, every cell.
    let first = &rows[4];
    assert_eq!(int(&first[1]), 1);
    assert_eq!(text(&first[2]), "Villa Zinnia");
    assert_eq!(int(&first[3]), 101);
    assert_eq!(text(&first[4]), "Guest 1");
    assert_eq!(day(&first[5]), date("2026-02-26"));
    assert_eq!(day(&first[6]), date("2026-03-04"));
    assert_eq!(int(&first[7]), 6);
    assert_eq!(text(&first[8]), "AIRBNB");
    assert_eq!(text(&first[9]), "airbnb");
    assert_eq!(text(&first[10]), "CONFIRMED");
    // 6,000.00, and 90 % of it net.
    assert_eq!(money(&first[11]), d("6000"));
    assert_eq!(money(&first[12]), d("5400"));
    assert_eq!(text(&first[13]), "THB");
    // #2's guest is text, not a formula.
    assert_eq!(text(&rows[3][4]), "=SUM(A1:A9)");
    let formulas = wb.worksheet_formula("Reservations").unwrap();
    assert!(
        formulas
            .used_cells()
            .all(|(_, _, formula)| formula.is_empty()),
        "no formula in an export"
    );
    assert_definitions(
        &mut wb,
        RESERVATION_COLUMNS,
        &["2026-02-01", "2026-03-31"],
        &["Villa Zinnia"],
    );

    // No filter: every reservation, as the list has them.
    let id = start(&app, &json!({"type": "reservations"})).await;
    let export = wait_done(&app, id).await;
    assert_completed(
        &export,
        id,
        "reservations",
        "excel",
        "reservations_all.xlsx",
    );
    let (_, bytes) = download(&app, id).await;
    let mut wb = open(&bytes);
    let rows = data_sheet(&mut wb, "Reservations", RESERVATION_COLUMNS);
    let ids: Vec<String> = rows.iter().map(|row| text(&row[0]).to_owned()).collect();
    assert_eq!(ids.len(), 13);
    assert_eq!(ids, listed_reservations(&app, "page=1").await);
    // #10 has no currency: an empty cell, not a made-up one.
    let ten = f.reservation(10).to_string();
    let row = rows.iter().find(|row| text(&row[0]) == ten).unwrap();
    assert_eq!(text_or_empty(&row[13]), "", "{row:?}");
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_csv_export_has_a_bom_a_header_two_decimals_and_no_formulas(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    sqlx::query("UPDATE pms_reservations SET guest_name = '=SUM(A1:A9)' WHERE pms_id = 2")
        .execute(&pool)
        .await
        .unwrap();
    let worker = app.worker(exports_registry());

    let id = start(
        &app,
        &json!({"type": "reservations", "format": "csv", "status": "CONFIRMED"}),
    )
    .await;
    let export = wait_done(&app, id).await;
    assert_completed(&export, id, "reservations", "csv", "reservations_all.csv");
    let (headers, bytes) = download(&app, id).await;
    let content_type = header_of(&headers, "content-type").unwrap_or_default();
    assert!(content_type.starts_with("text/csv"), "{content_type}");
    assert_attachment(&headers, "reservations_all.csv");
    // UTF-8 with a byte order mark, for Excel.
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"), "no BOM");
    let content = std::str::from_utf8(&bytes[3..]).expect("UTF-8");
    let records = parse_csv(content);
    let header: Vec<&str> = records[0].iter().map(String::as_str).collect();
    let names: Vec<&str> = RESERVATION_COLUMNS.iter().map(|(name, _)| *name).collect();
    assert_eq!(header, names);
    let rows = &records[1..];
    // The CONFIRMED ones: #1, #2, #6, #8, #9, #10, #11, #12, #13, in the list's order.
    let ids: Vec<String> = rows.iter().map(|row| row[0].clone()).collect();
    assert_eq!(ids.len(), 9, "{records:?}");
    assert_eq!(ids, listed_reservations(&app, "status=CONFIRMED").await);
    let row_of = |pms_id: usize| {
        let id = f.reservation(pms_id).to_string();
        rows.iter()
            .find(|row| row[0] == id)
            .unwrap_or_else(|| panic!("#{pms_id} not in {records:?}"))
    };
    assert_eq!(
        row_of(1)[1..],
        [
            "1",
            "Villa Zinnia",
            "101",
            "Guest 1",
            "2026-02-26",
            "2026-03-04",
            "6",
            "AIRBNB",
            "airbnb",
            "CONFIRMED",
            "6000.00",
            "5400.00",
            "THB"
        ]
    );
    // A text that a spreadsheet would run as a formula is written as text.
    assert_eq!(row_of(2)[4], "'=SUM(A1:A9)");
    // #6: 1,000.00, 900.00 net; #10 without currency: an empty field.
    assert_eq!(row_of(6)[11..], ["1000.00", "900.00", "THB"]);
    assert_eq!(row_of(10)[13], "");

    // Figures with two decimals, a location with a comma quoted.
    let id = start(
        &app,
        &json!({"type": "listings", "format": "csv", "startDate": "2026-03-01",
                "endDate": "2026-03-31"}),
    )
    .await;
    let export = wait_done(&app, id).await;
    assert_completed(
        &export,
        id,
        "listings",
        "csv",
        "listings_2026-03-01_2026-03-31.csv",
    );
    let (_, bytes) = download(&app, id).await;
    let records = parse_csv(std::str::from_utf8(&bytes[3..]).expect("UTF-8"));
    let names: Vec<&str> = LISTING_COLUMNS.iter().map(|(name, _)| *name).collect();
    assert_eq!(records[0], names);
    // B and C as in the listings workbook (4,666.67 in THB; C's money 0).
    assert_eq!(
        records[1],
        [
            f.b.to_string().as_str(),
            "102",
            "Villa Amber",
            "ACTIVE",
            "3",
            "Canggu, Indonesia",
            "31",
            "6",
            "31",
            "19.35",
            "2",
            "4666.67",
            "777.78",
            "150.54",
            "THB"
        ]
    );
    assert_eq!(records[2][11..], ["0.00", "0.00", "0.00", "THB"]);
    assert_eq!(records.len(), 4, "a header and 3 listings: {records:?}");
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_download_is_409_until_done_410_once_expired_and_404_for_no_export(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    load_fixture(&pool).await;
    let file_name = "listings_2026-03-01_2026-03-31.xlsx";
    // No worker yet: the export waits.
    let id = start(
        &app,
        &json!({"type": "listings", "startDate": "2026-03-01", "endDate": "2026-03-31"}),
    )
    .await;
    let (status, headers, export) = status_of(&app, id).await;
    assert_eq!(status, 200, "{export}");
    assert_eq!(export["status"], "PROCESSING", "{export}");
    assert_eq!(export["progress"], 0, "{export}");
    assert_eq!(export["fileName"], file_name, "{export}");
    assert!(export["downloadUrl"].is_null(), "{export}");
    assert!(export["completedAt"].is_null(), "{export}");
    assert_eq!(header_of(&headers, "retry-after"), Some("2"));
    let download_path = format!("{EXPORT}/{id}/download");
    let (status, headers, answer) = send(request(&app, Method::GET, &download_path)).await;
    assert_eq!(status, 409, "{answer}");
    assert_error_shape("reporting", &answer, 409, "EXPORT_NOT_READY");
    assert_eq!(answer["error"]["retryAfter"], 2, "{answer}");
    assert_eq!(header_of(&headers, "retry-after"), Some("2"));

    // The exports are listed newest first.
    let newer = start(
        &app,
        &json!({"type": "occupancy", "startDate": "2026-03-01", "endDate": "2026-03-07"}),
    )
    .await;
    let (status, _, page) = send(request(&app, Method::GET, EXPORT)).await;
    assert_eq!(status, 200, "{page}");
    let listed: Vec<&str> = page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {page}"))
        .iter()
        .map(|e| e["exportId"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [newer.to_string(), id.to_string()]);
    assert_eq!(page["data"][1]["fileName"], file_name, "{page}");

    // A worker makes them.
    let worker = app.worker(exports_registry());
    let export = wait_done(&app, id).await;
    assert_completed(&export, id, "listings", "excel", file_name);
    download(&app, id).await;
    let (file, column) = stored(&app, id).await;
    let file = file.expect("a stored file");
    assert_eq!(column, "COMPLETED");
    assert!(file.exists(), "{}", file.display());

    // Past its expiry (moved back here rather than waited for): EXPIRED and 410 at once, before
    // the expiry pass has removed anything.
    sqlx::query(
        "UPDATE reporting_exports SET expires_at = now() - interval '1 minute' WHERE id = $1",
    )
    .bind(id)
    .execute(&pool)
    .await
    .unwrap();
    let (status, _, export) = status_of(&app, id).await;
    assert_eq!(status, 200, "{export}");
    assert_eq!(export["status"], "EXPIRED", "{export}");
    assert!(export["downloadUrl"].is_null(), "{export}");
    let (status, _, answer) = send(request(&app, Method::GET, &download_path)).await;
    assert_eq!(status, 410, "{answer}");
    assert_error_shape("reporting", &answer, 410, "EXPORT_EXPIRED");
    assert!(file.exists(), "a read removes nothing");

    // The scheduler's expiry pass leaves the file of an export expired for less than an hour (a
    // download that began just before its expiry goes on to its end)...
    let expiry_pass = |tick: &'static str| {
        let (pool, app) = (&pool, &app);
        async move {
            let mut tx = pool.begin().await.unwrap();
            let job = ExpireExports::for_tick(tick.to_owned())
                .enqueue(&mut tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            app.queues.push(&[job]).await;
            let ran = eventually(Duration::from_secs(30), || async {
                (job_status(pool, job.id).await.as_deref() == Some("SUCCEEDED")).then_some(())
            })
            .await;
            assert!(
                ran.is_some(),
                "the expiry pass did not run: {:?}",
                job_status(pool, job.id).await
            );
        }
    };
    expiry_pass("expiry-test-1").await;
    assert!(file.exists(), "removed within the hour after expiry");
    assert_eq!(stored(&app, id).await.1, "COMPLETED");
    // ...and removes it, recording it, an hour on.
    sqlx::query(
        "UPDATE reporting_exports SET expires_at = now() - interval '61 minutes' WHERE id = $1",
    )
    .bind(id)
    .execute(&pool)
    .await
    .unwrap();
    expiry_pass("expiry-test-2").await;
    let (path, column) = stored(&app, id).await;
    assert_eq!((path, column.as_str()), (None, "EXPIRED"));
    assert!(!file.exists(), "{} is still there", file.display());
    let (status, _, export) = status_of(&app, id).await;
    assert_eq!((status, export["status"].as_str()), (200, Some("EXPIRED")));
    let (status, _, answer) = send(request(&app, Method::GET, &download_path)).await;
    assert_eq!(status, 410, "{answer}");
    assert_error_shape("reporting", &answer, 410, "EXPORT_EXPIRED");

    // The newer export has not expired; its file, removed by hand, is gone all the same: 410.
    let export = wait_done(&app, newer).await;
    assert_eq!(export["status"], "COMPLETED", "{export}");
    let (file, _) = stored(&app, newer).await;
    let file = file.expect("a stored file");
    assert!(file.exists(), "the expiry pass kept what had not expired");
    std::fs::remove_file(&file).unwrap();
    let answer = send(request(
        &app,
        Method::GET,
        &format!("{EXPORT}/{newer}/download"),
    ))
    .await;
    assert_eq!(answer.0, 410, "{}", answer.2);
    assert_error_shape("reporting", &answer.2, 410, "EXPORT_EXPIRED");

    // No such export, or not an id.
    let unknown = Uuid::now_v7();
    for path in [
        format!("{EXPORT}/{unknown}"),
        format!("{EXPORT}/{unknown}/download"),
    ] {
        let (status, _, answer) = send(request(&app, Method::GET, &path)).await;
        assert_eq!(status, 404, "{path}: {answer}");
        assert_error_shape("reporting", &answer, 404, "NOT_FOUND");
    }
    for path in [
        format!("{EXPORT}/not-an-id"),
        format!("{EXPORT}/not-an-id/download"),
    ] {
        let (status, _, answer) = send(request(&app, Method::GET, &path)).await;
        assert_eq!(status, 400, "{path}: {answer}");
        assert_error_shape("reporting", &answer, 400, "VALIDATION_ERROR");
    }
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_export_whose_listing_is_gone_fails_and_says_why(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let id = start(
        &app,
        &json!({"type": "listings", "listingIds": [f.d], "startDate": "2026-03-01",
                "endDate": "2026-03-31"}),
    )
    .await;
    // D leaves the PMS (and the database) before a worker takes the export.
    sqlx::query("DELETE FROM pms_listings WHERE id = $1")
        .bind(f.d)
        .execute(&pool)
        .await
        .unwrap();
    let worker = app.worker(exports_registry());
    let export = wait_done(&app, id).await;
    assert_eq!(export["status"], "FAILED", "{export}");
    assert!(export["downloadUrl"].is_null(), "{export}");
    let error = export["error"].as_str().unwrap_or_default().to_owned();
    assert!(!error.is_empty(), "a failed export says why: {export}");
    let download_path = format!("{EXPORT}/{id}/download");
    let (status, _, answer) = send(request(&app, Method::GET, &download_path)).await;
    assert_eq!(status, 409, "{answer}");
    assert_error_shape("reporting", &answer, 409, "EXPORT_FAILED");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&error), "{message} tells {error}");
    worker.shutdown().await;
}

/// An operator's retry of a failed export's job makes the export again: it reads PROCESSING,
/// its error cleared, then COMPLETED with its file (it used to stay FAILED while the retry
/// reported success). A retry of it once COMPLETED is refused, saying to request a new export.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_operators_retry_of_a_failed_export_makes_it_again(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let id = start(
        &app,
        &json!({"type": "listings", "listingIds": [f.d], "startDate": "2026-03-01",
                "endDate": "2026-03-31"}),
    )
    .await;
    // D leaves the database before a worker takes the export, and comes back after it failed.
    let kept: Value = sqlx::query_scalar("SELECT to_jsonb(l) FROM pms_listings l WHERE id = $1")
        .bind(f.d)
        .fetch_one(&pool)
        .await
        .unwrap();
    sqlx::query("DELETE FROM pms_listings WHERE id = $1")
        .bind(f.d)
        .execute(&pool)
        .await
        .unwrap();
    let worker = app.worker(exports_registry());
    assert_eq!(wait_done(&app, id).await["status"], "FAILED");
    worker.shutdown().await;
    sqlx::query(
        "INSERT INTO pms_listings SELECT * FROM jsonb_populate_record(NULL::pms_listings, $1)",
    )
    .bind(&kept)
    .execute(&pool)
    .await
    .unwrap();
    let job: Uuid = sqlx::query_scalar("SELECT job_id FROM reporting_exports WHERE id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();

    let retry = format!("/admin/jobs/{job}/retry");
    let (status, job_answer) = read_json(
        app.request(Method::POST, &retry, Some("admin"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 202, "{job_answer}");
    let (_, _, export) = status_of(&app, id).await;
    assert_eq!(export["status"], "PROCESSING", "{export}");
    assert!(export["error"].is_null(), "{export}");

    let worker = app.worker(exports_registry());
    let export = wait_done(&app, id).await;
    assert_eq!(export["status"], "COMPLETED", "{export}");
    assert_eq!(export["rowCount"], 1, "{export}");
    let download = request(&app, Method::GET, &format!("{EXPORT}/{id}/download"))
        .send()
        .await
        .unwrap();
    assert_eq!(download.status(), 200);
    assert!(!download.bytes().await.unwrap().is_empty());
    worker.shutdown().await;

    // Its job SUCCEEDED now: nothing to retry. And a FAILED job whose export has COMPLETED
    // meanwhile: the retry is refused, saying what to do instead, and changes nothing.
    sqlx::query("UPDATE jobs SET status = 'FAILED' WHERE id = $1")
        .bind(job)
        .execute(&pool)
        .await
        .unwrap();
    let (status, refused) = read_json(
        app.request(Method::POST, &retry, Some("admin"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "NOTHING_TO_RETRY", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("POST /reporting/export")
    );
    assert_eq!(
        tests::job_status(&pool, job).await.as_deref(),
        Some("FAILED"),
        "a refused retry changes nothing"
    );
}

/// A request as the viewer `subject` (the quota is per caller).
fn as_caller(app: &TestApp, subject: &str, body: &Value) -> RequestBuilder {
    let mut claims = app.idp.claims(&["viewer"]);
    claims["sub"] = json!(subject);
    app.http
        .post(app.url(EXPORT))
        .bearer_auth(app.idp.sign("k1", &claims))
        .json(body)
}

fn occupancy_of(day: u32) -> Value {
    json!({"type": "occupancy", "startDate": format!("2026-03-{day:02}"), "endDate": "2026-03-28"})
}

/// An identical request (same type, format, period and filters, whoever asks, the listings in
/// any order) answers the export already being made, then the completed one, until a sync
/// completes after it; five identical requests at once make one export.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_identical_request_answers_the_export_already_made(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let body = json!({"type": "listings", "listingIds": [f.a, f.b], "startDate": "2026-03-01",
        "endDate": "2026-03-31"});
    let first = start(&app, &body).await;
    let same = json!({"type": "listings", "format": "excel", "listingIds": [f.b, f.a, f.a],
        "startDate": "2026-03-01", "endDate": "2026-03-31"});
    assert_eq!(start(&app, &same).await, first, "while PROCESSING");
    let other = json!({"type": "listings", "format": "csv", "listingIds": [f.a, f.b],
        "startDate": "2026-03-01", "endDate": "2026-03-31"});
    assert_ne!(
        start(&app, &other).await,
        first,
        "another format is another export"
    );

    let worker = app.worker(exports_registry());
    assert_eq!(wait_done(&app, first).await["status"], "COMPLETED");
    let (status, _, answer) = send(request(&app, Method::POST, EXPORT).json(&same)).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["exportId"], first.to_string(), "{answer}");
    assert_eq!(answer["status"], "COMPLETED", "{answer}");

    // A sync completed since: the data may have changed, a new file is made.
    sqlx::query(
        "INSERT INTO pms_sync_runs (id, kind, entities, status, started_at, finished_at)
         VALUES ($1, 'full', '{listings,reservations}', 'COMPLETED', now(), now())",
    )
    .bind(Uuid::now_v7())
    .execute(&pool)
    .await
    .unwrap();
    let fresh = start(&app, &same).await;
    assert_ne!(fresh, first);
    worker.shutdown().await;

    // Five identical requests released together: one export.
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(5));
    let racing = json!({"type": "occupancy", "startDate": "2026-02-01", "endDate": "2026-02-14"});
    let answers = futures::future::join_all((0..5).map(|i| {
        let req = as_caller(&app, &format!("racer-{i}"), &racing);
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            send(req).await
        }
    }))
    .await;
    let ids: std::collections::HashSet<String> = answers
        .iter()
        .map(|(status, _, answer)| {
            assert_eq!(*status, 202, "{answer}");
            answer["exportId"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 1, "{answers:?}");
}

/// A caller with 3 exports being made gets 429 EXPORT_QUOTA_EXCEEDED with when to ask again;
/// other callers are not held up; six different requests of one caller at once start exactly 3.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_caller_has_at_most_three_exports_being_made(
    options: sqlx::postgres::PgPoolOptions,
    connect: sqlx::postgres::PgConnectOptions,
) {
    // Room for six requests waiting at once (a test's pool holds five connections).
    let pool = options
        .max_connections(12)
        .connect_with(connect.clone())
        .await
        .unwrap();
    let app = TestApp::spawn(pool.clone()).await;
    load_fixture(&pool).await;
    for day in 1..=3 {
        let (status, _, answer) = send(as_caller(&app, "busy", &occupancy_of(day))).await;
        assert_eq!(status, 202, "{answer}");
    }
    let (status, headers, answer) = send(as_caller(&app, "busy", &occupancy_of(4))).await;
    assert_eq!(status, 429, "{answer}");
    assert_error_shape("reporting", &answer, 429, "EXPORT_QUOTA_EXCEEDED");
    let retry_after = answer["error"]["retryAfter"].as_u64().unwrap();
    assert!(retry_after >= 1, "{answer}");
    assert_eq!(
        header_of(&headers, "retry-after"),
        Some(retry_after.to_string().as_str())
    );
    // An identical request is not a new export: still answered.
    let (status, _, answer) = send(as_caller(&app, "busy", &occupancy_of(2))).await;
    assert_eq!(status, 202, "{answer}");
    let (status, _, answer) = send(as_caller(&app, "someone-else", &occupancy_of(4))).await;
    assert_eq!(status, 202, "{answer}");
    let exports: i64 = sqlx::query_scalar("SELECT count(*) FROM reporting_exports")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(exports, 4);

    // Once they are made, the caller may ask again.
    let worker = app.worker(exports_registry());
    let done = eventually(EXPORT_TIMEOUT, || async {
        let processing: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM reporting_exports WHERE status = 'PROCESSING'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        (processing == 0).then_some(())
    })
    .await;
    assert!(done.is_some());
    worker.shutdown().await;

    // Six different requests of a new caller, all in flight together: the test holds the
    // caller's lock until the six wait for it, then lets them go: 3 started, 3 refused.
    let mut holder = sqlx::PgConnection::connect_with(&connect).await.unwrap();
    sqlx::query("SELECT pg_advisory_lock(hashtextextended('export-caller:' || $1, 0))")
        .bind("eager")
        .execute(&mut holder)
        .await
        .unwrap();
    let requests = futures::future::join_all(
        (10..16).map(|day| send(as_caller(&app, "eager", &occupancy_of(day)))),
    );
    let release = async {
        let waiting = eventually(Duration::from_secs(30), || async {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event = 'advisory'",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            (n == 6).then_some(())
        })
        .await;
        sqlx::query("SELECT pg_advisory_unlock(hashtextextended('export-caller:' || $1, 0))")
            .bind("eager")
            .execute(&mut holder)
            .await
            .unwrap();
        waiting
    };
    let (answers, waited) = tokio::join!(requests, release);
    assert!(
        waited.is_some(),
        "the six requests never all waited together"
    );
    let answers: Vec<u16> = answers.into_iter().map(|(status, _, _)| status).collect();
    let started = answers.iter().filter(|s| **s == 202).count();
    let refused = answers.iter().filter(|s| **s == 429).count();
    assert_eq!((started, refused), (3, 3), "{answers:?}");
}

/// The store's temporary files a killed writer left are swept by the expiry pass once an hour
/// old; a fresh one (a write under way) is left alone.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_expiry_pass_sweeps_the_stores_stale_temporary_files(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let root = match app.store() {
        domain::storage::DocumentStore::Local(local) => {
            local.file_of(&domain::storage::StoragePath::from_stored("Exports").unwrap())
        }
        _ => panic!("the tests' store is local"),
    };
    let deep = root.join("Villas").join("v-1").join("Documents");
    std::fs::create_dir_all(&deep).unwrap();
    let stale = deep.join(".upload-0123abcd.tmp");
    let fresh = root.join(".upload-4567ef01.tmp");
    let kept = deep.join("contract.pdf");
    for file in [&stale, &fresh, &kept] {
        std::fs::write(file, b"partial").unwrap();
    }
    let two_hours_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
    for file in [&stale, &kept] {
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(two_hours_ago)
            .unwrap();
    }
    let _worker = app.worker(exports_registry());
    let mut tx = pool.begin().await.unwrap();
    let job = ExpireExports::for_tick("sweep-test".to_owned())
        .enqueue(&mut tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    app.queues.push(&[job]).await;
    let result = eventually(Duration::from_secs(30), || async {
        sqlx::query_scalar::<_, Value>(
            "SELECT result FROM jobs WHERE id = $1 AND status = 'SUCCEEDED'",
        )
        .bind(job.id)
        .fetch_optional(&pool)
        .await
        .unwrap()
    })
    .await
    .expect("the expiry pass ran");
    assert_eq!(result["storeTempFilesRemoved"], 1, "{result}");
    assert!(!stale.exists());
    assert!(fresh.exists(), "a write under way is left alone");
    assert!(kept.exists(), "only temporary files are swept");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn bad_export_requests_are_400_naming_the_member_and_start_nothing(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let f = load_fixture(&pool).await;
    let unknown = Uuid::now_v7();
    let post = |body: Value| {
        let req = request(&app, Method::POST, EXPORT).json(&body);
        async move {
            let (status, _, answer) = send(req).await;
            (status, answer)
        }
    };
    for (body, field) in [
        (json!({}), "type"),
        (json!({"type": "guests"}), "type"),
        (json!({"type": 5}), "type"),
        (json!({"type": "listings", "format": "pdf"}), "format"),
        (
            json!({"type": "listings", "startDate": "2026-13-01"}),
            "startDate",
        ),
        (
            json!({"type": "listings", "startDate": "2026-03-01", "endDate": "2026-02-30"}),
            "endDate",
        ),
        (
            json!({"type": "listings", "startDate": "2026-03-31", "endDate": "2026-03-01"}),
            "startDate",
        ),
        // 2025-01-01 .. 2026-01-02: 367 nights.
        (
            json!({"type": "listings", "startDate": "2025-01-01", "endDate": "2026-01-02"}),
            "endDate",
        ),
        (
            json!({"type": "occupancy", "startDate": "2025-01-01", "endDate": "2026-01-02"}),
            "endDate",
        ),
        // Revenue by month: up to 730 nights. 2024-03-31 .. 2026-03-31: 731 (2024 is a leap year).
        (
            json!({"type": "revenue", "startDate": "2024-03-31", "endDate": "2026-03-31"}),
            "endDate",
        ),
        (
            json!({"type": "listings", "listingIds": ["not-a-uuid"]}),
            "listingIds",
        ),
        (
            json!({"type": "listings", "listingIds": f.a.to_string()}),
            "listingIds",
        ),
        (json!({"type": "listings", "currency": "US"}), "currency"),
        // Status and channel filter reservations only.
        (json!({"type": "listings", "status": "CONFIRMED"}), "status"),
        (json!({"type": "revenue", "channel": "AIRBNB"}), "channel"),
        (json!({"type": "reservations", "status": "NOPE"}), "status"),
        (
            json!({"type": "reservations", "channel": "MYSPACE"}),
            "channel",
        ),
        (
            json!({"type": "reservations", "startDate": "2026-02-30"}),
            "startDate",
        ),
    ] {
        let answer = post(body).await;
        refused(&answer, field);
    }
    // An id no listing has is named.
    let answer = post(json!({"type": "listings", "listingIds": [f.a, unknown]})).await;
    let message = refused(&answer, "listingIds");
    assert!(message.contains(&unknown.to_string()), "{message}");
    // Not JSON.
    let (status, _, answer) = send(
        request(&app, Method::POST, EXPORT)
            .header("content-type", "application/json")
            .body("{\"type\": "),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    let code = answer["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_error_shape("reporting", &answer, 400, &code);
    let exports = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM reporting_exports")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    assert_eq!(exports().await, 0, "no refused request made an export");
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'exports.build'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(jobs, 0, "nor a job");

    // Accepted: the file is named after the type and the period.
    let today = app.today();
    for (body, name) in [
        // 2025-04-01 .. 2026-03-31: 365 nights, revenue by month.
        (
            json!({"type": "revenue", "startDate": "2025-04-01", "endDate": "2026-03-31"}),
            "revenue_2025-04-01_2026-03-31.xlsx".to_owned(),
        ),
        // No dates: the 30 nights ending today.
        (
            json!({"type": "listings"}),
            format!("listings_{}_{today}.xlsx", today - TimeDelta::days(29)),
        ),
        // Reservations: check-in bounds, either or both or none.
        (
            json!({"type": "reservations", "startDate": "2026-03-01"}),
            "reservations_from_2026-03-01.xlsx".to_owned(),
        ),
        (
            json!({"type": "reservations", "endDate": "2026-03-31", "status": "CONFIRMED",
                   "channel": "AIRBNB"}),
            "reservations_to_2026-03-31.xlsx".to_owned(),
        ),
        (
            json!({"type": "occupancy", "format": "csv", "startDate": "2026-03-01",
                   "endDate": "2026-03-31", "listingIds": [f.d]}),
            "occupancy_2026-03-01_2026-03-31.csv".to_owned(),
        ),
    ] {
        let id = start(&app, &body).await;
        let (status, _, export) = status_of(&app, id).await;
        assert_eq!(status, 200, "{export}");
        assert_eq!(export["fileName"], name.as_str(), "{body}: {export}");
        assert_eq!(export["status"], "PROCESSING", "{export}");
    }
    assert_eq!(exports().await, 5);
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn export_routes_need_a_token_and_exporting_is_a_read(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    load_fixture(&pool).await;
    let body = json!({"type": "listings", "startDate": "2026-03-01", "endDate": "2026-03-31"});
    let id = start(&app, &body).await;
    let status_path = format!("{EXPORT}/{id}");
    let download_path = format!("{EXPORT}/{id}/download");
    let routes = [
        (Method::POST, EXPORT),
        (Method::GET, EXPORT),
        (Method::GET, status_path.as_str()),
        (Method::GET, download_path.as_str()),
    ];
    for (method, path) in &routes {
        for token in [None, Some("not-a-jwt")] {
            let mut req = app.http.request(method.clone(), app.url(path)).json(&body);
            if let Some(token) = token {
                req = req.bearer_auth(token);
            }
            let (status, _, answer) = send(req).await;
            assert_eq!(status, 401, "{method} {path} with {token:?}: {answer}");
            assert_error_shape("reporting", &answer, 401, "UNAUTHORIZED");
        }
        // Exporting reads what every role may read: no role is refused, the download is only
        // not ready (no worker runs).
        for role in ["viewer", "staff", "manager", "admin"] {
            let req = tests::pms::request(&app, method.clone(), path, role).json(&body);
            let (status, _, answer) = send(req).await;
            let expected = match (method.as_str(), *path == download_path) {
                ("POST", _) => 202,
                (_, true) => 409,
                _ => 200,
            };
            assert_eq!(status, expected, "{role} {method} {path}: {answer}");
        }
    }
    // Not cached (a status changes while it is polled) and limited as the default class.
    for _ in 0..2 {
        let (status, headers, _) = status_of(&app, id).await;
        assert_eq!(status, 200);
        assert_ne!(header_of(&headers, "x-cache"), Some("HIT"));
        assert_eq!(header_of(&headers, "ratelimit-limit"), Some("60"));
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_worker_killed_mid_export_leaves_it_to_another_that_completes_it(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    load_fixture(&pool).await;
    // 100,000 reservations more: the rows take seconds to stream, so that the export writes its
    // progress while rows are still flowing (at most once a second).
    sqlx::query(
        "INSERT INTO pms_reservations (id, pms_id, listing_pms_id, guest_name, check_in, check_out,
                                       nights, channel, total_amount, net_amount, currency, status,
                                       raw, synced_at)
         SELECT gen_random_uuid(), 1000 + n, 102, 'Bulk guest ' || n, date '2020-01-01' + n % 2000,
                date '2020-01-03' + n % 2000, 2, 'DIRECT', 200.00, 180.00, 'THB', 'CONFIRMED',
                json_build_object('id', 1000 + n), now()
         FROM generate_series(1, 100000) AS n",
    )
    .execute(&pool)
    .await
    .unwrap();
    // The list's order: newest check-in first.
    let expected: Vec<String> =
        sqlx::query_scalar("SELECT id::text FROM pms_reservations ORDER BY check_in DESC, id DESC")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(expected.len(), 100_013);

    // The export is recorded before a worker runs; the test then holds its row, so that the
    // worker's first progress write waits, mid-stream: rows read and written to its temporary
    // file, others still to come, when it is killed.
    let id = start(&app, &json!({"type": "reservations", "format": "csv"})).await;
    let mut hold = pool.begin().await.unwrap();
    sqlx::query("SELECT 1 FROM reporting_exports WHERE id = $1 FOR UPDATE")
        .bind(id)
        .execute(&mut *hold)
        .await
        .unwrap();
    let doomed = app.worker(exports_registry());
    let caught = eventually(Duration::from_secs(60), || async {
        let waiting: Vec<String> = sqlx::query_scalar(
            "SELECT query FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        (!waiting.is_empty()).then_some(waiting)
    })
    .await
    .expect("the worker never reached the export's row");
    assert!(
        caught.iter().all(|q| q.contains("SET progress")),
        "caught at its progress, not at its end: {caught:?}"
    );
    let job: Uuid = sqlx::query_scalar("SELECT job_id FROM reporting_exports WHERE id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(job_status(&pool, job).await.as_deref(), Some("RUNNING"));
    doomed.kill().await;
    // Postgres notices a dead client only when it next talks to it: the statement the killed
    // worker left waiting would still run once the row is free, as if the worker lived on. The
    // statements of a process that died end with it. Each is waited for until it has ended
    // (without the timeout, the signal may still be on its way when the row is freed, and the
    // statement, granted the row, completes the export as if the worker had lived).
    let ended: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(
        !ended.is_empty() && ended.iter().all(|&ended| ended),
        "the killed worker's statements did not end: {ended:?}"
    );
    hold.rollback().await.unwrap();
    let (_, _, export) = status_of(&app, id).await;
    assert_eq!(export["status"], "PROCESSING", "{export}");

    // Another worker takes the job over once the lease of the first (15 s in tests) expires, and
    // makes the whole export again.
    let rescuer = app.worker(exports_registry());
    let export = wait_done(&app, id).await;
    assert_completed(&export, id, "reservations", "csv", "reservations_all.csv");
    // The job is marked done after its handler returns, so a moment after the export.
    let (status, attempts): (String, i32) = eventually(Duration::from_secs(10), || async {
        let row: (String, i32) = sqlx::query_as("SELECT status, attempts FROM jobs WHERE id = $1")
            .bind(job)
            .fetch_one(&pool)
            .await
            .unwrap();
        (row.0 != "RUNNING").then_some(row)
    })
    .await
    .expect("the job stayed RUNNING after its export completed");
    assert_eq!((status.as_str(), attempts), ("SUCCEEDED", 2));
    let (_, bytes) = download(&app, id).await;
    let records = parse_csv(std::str::from_utf8(&bytes[3..]).expect("UTF-8"));
    let ids: Vec<&String> = records[1..].iter().map(|row| &row[0]).collect();
    assert_eq!(ids.len(), expected.len(), "every row, once");
    assert!(
        ids.iter().zip(&expected).all(|(a, b)| *a == b),
        "every row in the list's order"
    );
    assert_eq!(export["rowCount"], 100_013, "{export}");
    // Neither attempt left a temporary file behind.
    let prefix = format!("villa-export-{id}-");
    let left: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    rescuer.shutdown().await;
}
