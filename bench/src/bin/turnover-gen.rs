//! For bench/turnovers.sh: the turnover generation (`domain::maintenance::turnovers::generate`,
//! what the `maintenance.generate_turnovers` job runs) called directly against `DATABASE_URL`,
//! through a pool built as the worker's (`domain::db::connect`: JIT off), so that a run can be
//! timed without the queue, and its statements explained.
//!   turnover-gen [--runs N] [--today YYYY-MM-DD] [--horizon-days D] [--explain MS]
//! Prints one line per run: `seconds created moved cancelled restored flagged`. `--today`
//! defaults to today in UTC, `--horizon-days` to 60 (`TURNOVER_HORIZON_DAYS`' default).
//! `--explain MS`: every statement of a run taking MS ms or more is explained with its actual
//! rows and times (auto_explain with ANALYZE, in this session only; needs a superuser), on
//! stderr. Explaining slows the run: its seconds are not the job's.

use anyhow::{Context, bail};
use chrono::NaiveDate;
use domain::maintenance::turnovers::{Horizon, generate};
use std::time::Instant;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut runs = 1u32;
    let mut today = chrono::Utc::now().date_naive();
    let mut horizon_days = 60u32;
    let mut explain: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--runs" => runs = value()?.parse().context("--runs")?,
            "--today" => {
                today = NaiveDate::parse_from_str(&value()?, "%Y-%m-%d").context("--today")?
            }
            "--horizon-days" => horizon_days = value()?.parse().context("--horizon-days")?,
            "--explain" => explain = Some(value()?.parse().context("--explain")?),
            _ => bail!(
                "usage: turnover-gen [--runs N] [--today YYYY-MM-DD] [--horizon-days D] [--explain MS]"
            ),
        }
    }
    let url = std::env::var("DATABASE_URL").context("DATABASE_URL is not set")?;
    let pool = domain::db::connect(&url, 1).await?;
    let mut conn = pool.acquire().await?;
    if let Some(ms) = explain {
        // auto_explain's output comes back as the session's notices, which sqlx logs.
        tracing_subscriber::fmt()
            .with_env_filter("off,sqlx::postgres::notice=info")
            .with_writer(std::io::stderr)
            .without_time()
            .with_target(false)
            .with_level(false)
            .init();
        sqlx::raw_sql(
            "LOAD 'auto_explain';
             SET auto_explain.log_analyze = on;
             SET auto_explain.log_buffers = on;
             SET auto_explain.log_triggers = on;
             SET auto_explain.log_level = notice;",
        )
        .execute(&mut *conn)
        .await
        .context("loading auto_explain")?;
        sqlx::query("SELECT set_config('auto_explain.log_min_duration', $1, false)")
            .bind(ms.to_string())
            .execute(&mut *conn)
            .await?;
    }
    let horizon = Horizon::new(today, horizon_days);
    for _ in 0..runs {
        let started = Instant::now();
        let generated = generate(&mut conn, horizon).await?;
        println!(
            "{:.3} {} {} {} {} {}",
            started.elapsed().as_secs_f64(),
            generated.created,
            generated.moved,
            generated.cancelled,
            generated.restored,
            generated.flagged
        );
    }
    Ok(())
}
