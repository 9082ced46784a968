//! The platform's own routes: health checks, Prometheus metrics, operators' job views,
//! development sign-in, and `/me`.

pub mod dev;
pub mod health;
pub mod jobs;
pub mod me;
pub mod metrics;
