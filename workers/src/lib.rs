//! Worker processes: each binary in `src/bin/` runs the job kinds of one queue family through
//! [`runtime::run`]; `scheduler` is the only process that runs cron.

pub mod runtime;
