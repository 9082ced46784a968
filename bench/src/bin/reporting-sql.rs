//! For bench/reporting.sh: the statement behind every reporting figure
//! (`domain::reporting::figures::TOTALS`), so that Postgres can run it alone beside the route
//! that uses it, and the parameters `/reporting/dashboard/metrics` binds for a period.
//!   reporting-sql                                   the statement
//!   reporting-sql --params START END CURRENCY       its parameters for that period, every
//!                                                   ACTIVE listing: `'{}', '{prev,start}', 'end+1', 'CUR'`

use anyhow::{Context, bail};
use chrono::NaiveDate;
use domain::reporting::figures::{Buckets, Period, TOTALS};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => println!("{TOTALS}"),
        [flag, start, end, currency] if flag == "--params" => {
            let date = |s: &str| {
                NaiveDate::parse_from_str(s, "%Y-%m-%d").with_context(|| format!("not a date: {s}"))
            };
            let period = Period {
                start: date(start)?,
                end: date(end)?,
            };
            // The metrics route's buckets: the previous period, then the period.
            let buckets = Buckets::with_previous(period, None);
            let starts: Vec<String> = (0..buckets.len())
                .map(|i| buckets.range(i).0.to_string())
                .collect();
            let (_, to) = buckets.range(buckets.len() - 1);
            println!("'{{}}', '{{{}}}', '{to}', '{currency}'", starts.join(","));
        }
        _ => bail!("usage: reporting-sql [--params START END CURRENCY]"),
    }
    Ok(())
}
