//! For bench/forecast.sh: the supplies forecast's statements, so that Postgres can run them
//! alone beside the route and the job that use them.
//!   forecast-sql daily    the expected use per item and day (`GET /inventory/reports/forecast`)
//!   forecast-sql alert    the FORECAST_SHORTAGE causes of a full alert evaluation

use domain::inventory::forecast::{ALERT_CAUSES_QUERY, DAILY_USE};

fn main() -> anyhow::Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("daily") => println!("{DAILY_USE}"),
        Some("alert") => println!("{ALERT_CAUSES_QUERY}"),
        _ => anyhow::bail!("usage: forecast-sql daily|alert"),
    }
    Ok(())
}
