//! The platform's own routes: health checks, operators' job views, development sign-in.

pub mod dev;
pub mod health;
pub mod jobs;
