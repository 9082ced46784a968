//! The spreadsheet writer alone, for bench/reporting.sh: writes `--rows` rows of the reservations
//! export's cells (the same columns and cell types, values shaped like bench/reporting_seed.sql's)
//! with the export job's own writer (`jobs::exports::xlsx::write_xlsx`, constant memory) and no
//! database, and prints how long it took. The export's rows per second over this one's is the
//! share of the writer's speed the job keeps while it streams from Postgres.
//!
//! The rows are made as the writer asks for them, on its thread: making them costs a small part
//! of writing them, and holding a million rows first would measure memory instead.
//!
//! Prints `rows`, `seconds`, `rows_per_s`, `bytes` (the workbook's size) and `peak_rss_mb`, one
//! per line, name then value.

use std::{path::PathBuf, time::Instant};

use anyhow::Context as _;
use chrono::{Days, NaiveDate, Utc};
use clap::Parser;
use domain::reporting::{
    exports::{self, Cell, ExportFormat, ExportSpec, ExportType},
    figures::Currency,
};
use rust_decimal::Decimal;
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Rows to write.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// The workbook to write; a temporary file, removed afterwards, when absent.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Listings the rows are spread over, as in the seed.
    #[arg(long, default_value_t = 500)]
    listings: u64,
}

const CHANNELS: [&str; 7] = [
    "AIRBNB",
    "BOOKING_COM",
    "VRBO",
    "EXPEDIA",
    "DIRECT",
    "GOOGLE",
    "OTHER",
];

/// Row `i` of the reservations export, shaped like stay `n` of listing `l` in the seed.
fn row(i: u64, listings: u64) -> Vec<Cell> {
    let l = i % listings + 1;
    let n = i / listings + 1;
    let len = 1 + (n * 7919 + l * 31) % 4;
    let h = (n * 37 + l * 11) % 100;
    let last = NaiveDate::from_ymd_opt(2026, 12, 31).unwrap_or_default();
    let check_out = last.checked_sub_days(Days::new(n * 3)).unwrap_or(last);
    let check_in = check_out
        .checked_sub_days(Days::new(len))
        .unwrap_or(check_out);
    let total = Decimal::from(len * (1500 + (l % 40) * 125));
    let net = (total * Decimal::new(85, 2)).round_dp(2);
    let status = match h {
        0..85 => "CONFIRMED",
        85..89 => "OWNER_STAY",
        89..94 => "CANCELLED",
        94..97 => "INQUIRY",
        _ => "PENDING",
    };
    let pms_id = i64::try_from(l * 100_000 + n).unwrap_or(i64::MAX);
    // Spread like random ids: the text of an id is what the export writes.
    let id = Uuid::from_u128(u128::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835));
    vec![
        Cell::Text(id.to_string()),
        Cell::Int(pms_id),
        Cell::Text(format!("Bench villa {l:04}")),
        Cell::Int(i64::try_from(l).unwrap_or(i64::MAX)),
        Cell::Text(format!("Guest {n}")),
        Cell::Date(check_in),
        Cell::Date(check_out),
        Cell::Int(i64::try_from(len).unwrap_or(i64::MAX)),
        Cell::Text(CHANNELS[usize::try_from((n * 7 + l) % 7).unwrap_or(0)].to_owned()),
        Cell::Empty,
        Cell::Text(status.to_owned()),
        Cell::Money(total),
        Cell::Money(net),
        Cell::Text(if l.is_multiple_of(10) { "USD" } else { "THB" }.to_owned()),
    ]
}

/// The process's peak resident memory in MB (Linux), 0 when unknown.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let listings = args.listings.max(1);
    let spec = ExportSpec {
        kind: ExportType::Reservations,
        format: ExportFormat::Excel,
        start_date: None,
        end_date: None,
        listing_ids: Vec::new(),
        currency: Currency::new_setting("THB").context("THB is a currency")?,
        status: None,
        channel: None,
        owner_id: None,
        time_zone: None,
    };
    let definitions = exports::definitions(&spec, &[], Utc::now());
    let columns = exports::columns(ExportType::Reservations);
    let (out, temporary) = match args.out {
        Some(out) => (out, false),
        None => (
            std::env::temp_dir().join(format!("xlsx-raw-{}.xlsx", Uuid::new_v4().simple())),
            true,
        ),
    };

    let started = Instant::now();
    let rows = (0..args.rows).map(|i| row(i, listings));
    let written =
        jobs::exports::xlsx::write_xlsx(&out, "Reservations", columns, &definitions, rows)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&out)
        .with_context(|| format!("{}", out.display()))?
        .len();
    if temporary {
        std::fs::remove_file(&out).with_context(|| format!("{}", out.display()))?;
    }

    println!("rows {written}");
    println!("seconds {seconds:.3}");
    println!("rows_per_s {:.0}", written as f64 / seconds.max(1e-9));
    println!("bytes {bytes}");
    println!("peak_rss_mb {:.1}", peak_rss_mb());
    Ok(())
}
