//! Worker processes: each binary in `src/bin/` runs the job kinds of one queue family through
//! [`runtime::run`]; `scheduler` is the only process that runs cron. Each serves its metrics on
//! `METRICS_PORT` when that is set ([`metrics`]).

pub mod batching;
pub mod metrics;
pub mod runtime;
